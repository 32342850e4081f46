// Lab 07's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab07 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{"call.post_chain",
            "ibv_post_send(qp, &wr[0])  // {0} {1} WRs of {2} bytes chained by wr.next",
            "ibv_post_send(qp, &wr[0])  // 用 wr.next 串起的 {0} 个 {1} WR，每个 {2} 字节"},
    Message{
        "desc",
        "Lab 07: timeouts and retries. Break the wire on purpose and watch the requester: a "
        "lost packet brings a NAK and go-back-N, a lost ACK or a dead peer brings the local ACK "
        "timeout (4.096 us x 2^timeout) and retry_cnt retransmissions, then "
        "IBV_WC_RETRY_EXC_ERR; a missing receive brings RNR NAKs and rnr_retry.",
        "实验 07：超时与重传。故意破坏线路，观察请求端的行为：丢一个报文会引来 NAK 和 go-back-N "
        "重传；"
        "丢失 ACK 或对端失效会触发本地 ACK 超时（4.096 µs × 2^timeout）和 retry_cnt "
        "次重传，最终得到 "
        "IBV_WC_RETRY_EXC_ERR；没有接收请求则引来 RNR NAK 和 rnr_retry。"},
    Message{
        "opt.scenario",
        "what to break: acks (drop every ACK), psn (drop one request packet, --psn), dead (the "
        "peer vanishes after two messages), loss (random loss, --loss), rnr (no receive posted), "
        "none",
        "破坏方式：acks（丢弃所有 ACK）、psn（丢弃一个请求报文，见 "
        "--psn）、dead（两条消息后对端失效）、"
        "loss（随机丢包，见 --loss）、rnr（不提交接收请求）、none（不破坏）"},
    Message{"opt.timeout", "local ACK timeout exponent: 4.096 us x 2^timeout (0 = wait forever)",
            "本地 ACK 超时指数：4.096 µs × 2^timeout（0 表示永远等待）"},
    Message{"opt.retry_cnt", "retransmissions after a timeout before giving up (0..7)",
            "超时后放弃之前的重传次数（0..7）"},
    Message{"opt.rnr_retry", "retries after an RNR NAK (0..7, 7 = forever)",
            "收到 RNR NAK 后的重试次数（0..7，7 表示无限）"},
    Message{"opt.min_rnr_timer", "RNR timer code the responder advertises (0..31)",
            "响应端通告的 RNR 定时器码（0..31）"},
    Message{"opt.loss", "random loss probability per packet (scenario loss)",
            "每个报文的随机丢包概率（loss 场景）"},
    Message{"opt.psn_off",
            "which request packet to drop, counted from the first PSN (scenario psn)",
            "要丢弃的请求报文，从起始 PSN 开始计数（psn 场景）"},
    Message{"opt.size", "bytes per WRITE", "每次 WRITE 的字节数"},
    Message{"opt.iters", "number of WRITEs", "WRITE 的次数"},
    Message{"opt.rxe", "treat retry_cnt 7 as \"forever\", as Soft-RoCE does (the IBTA does not)",
            "像 Soft-RoCE 一样把 retry_cnt 7 当作“无限重试”（IBTA 规范并非如此）"},
    Message{"requester", "requester", "请求端"},
    Message{"responder", "responder", "响应端"},
    Message{"step.backend", "choose where the RDMA traffic runs", "选择 RDMA 流量在哪里运行"},
    Message{"step.table", "the timers this lab uses", "本实验使用的定时器"},
    Message{"table.timeout",
            "timeout {0}: {1} per try; retry_cnt {2}: up to {3} tries, about {4} before "
            "IBV_WC_RETRY_EXC_ERR",
            "timeout {0}：每次等待 {1}；retry_cnt {2}：最多发送 {3} 次，约 {4} 后得到 "
            "IBV_WC_RETRY_EXC_ERR"},
    Message{"table.infinite", "timeout 0: the requester waits for an ACK forever",
            "timeout 0：请求端永远等待 ACK"},
    Message{"table.nccl",
            "NCCL 2.14-2.22's defaults: timeout 18 = {0} per try, retry_cnt 7 -> about {1} before "
            "an error (from 2.23 timeout 20: four times as long; up to 2.13 timeout 14)",
            "NCCL 2.14–2.22 的默认值：timeout 18 = 每次 {0}，retry_cnt 7 -> 约 {1} 后报错（2.23 起 "
            "timeout 20，时长是它的四倍；2.13 及以前为 timeout 14）"},
    Message{
        "table.perftest",
        "perftest and ibv_rc_pingpong fix timeout 14 ({}), retry_cnt 7, rnr_retry 7; on Soft-RoCE "
        "retry_cnt 7 never gives up, so they cannot show retry exhaustion",
        "perftest 和 ibv_rc_pingpong 固定使用 timeout 14（{}）、retry_cnt 7、rnr_retry 7；在 "
        "Soft-RoCE "
        "上 retry_cnt 7 永不放弃，所以它们无法演示重传耗尽"},
    Message{"table.rnr",
            "min_rnr_timer {0}: the requester waits {1} ms after an RNR NAK; rnr_retry {2}",
            "min_rnr_timer {0}：收到 RNR NAK 后请求端等待 {1} ms；rnr_retry {2}"},
    Message{"step.break", "break the wire", "破坏线路"},
    Message{"break.acks",
            "every ACK from the responder is dropped: the data arrives, but the requester never "
            "hears so",
            "响应端发出的每个 ACK 都被丢弃：数据其实已经到达，但请求端永远得不到确认"},
    Message{"break.psn", "request packet PSN {} is dropped once: the responder sees a gap and NAKs",
            "PSN 为 {} 的请求报文被丢弃一次：响应端发现缺口并回复 NAK"},
    Message{"break.dead",
            "after two messages, every packet to the responder is dropped (a dead peer)",
            "两条消息之后，发往响应端的所有报文都被丢弃（对端失效）"},
    Message{"break.loss", "each packet, both directions, is lost with probability {}",
            "两个方向上的每个报文都以 {} 的概率丢失"},
    Message{"break.rnr", "the responder posts no receive: each SEND gets an RNR NAK",
            "响应端不提交接收请求：每个 SEND 都会收到 RNR NAK"},
    Message{"break.none", "nothing is broken", "不做任何破坏"},
    Message{"break.verbs",
            "on real verbs the wire cannot be broken from here: use nftables or tc netem (see the "
            "docs)",
            "在真实 verbs 上无法从这里破坏线路：请使用 nftables 或 tc netem（见文档）"},
    Message{"step.resources", "open the devices and connect", "打开设备并建立连接"},
    Message{"step.post", "post the work requests", "提交工作请求"},
    Message{"step.poll", "poll: success, or the error the transport gave up with",
            "轮询：成功，或传输层放弃时给出的错误"},
    Message{"step.verify", "check the outcome against what the transport rules predict",
            "按传输规则的预期检查结果"},
    Message{"expected", "expected first completion status: {}", "预期的第一个工作完成状态：{}"},
    Message{"check.status", "the first completion has the predicted status",
            "第一个工作完成的状态符合预期"},
    Message{"check.flush",
            "after the error, the remaining work requests were flushed (IBV_WC_WR_FLUSH_ERR)",
            "出错之后，其余工作请求均被冲刷（IBV_WC_WR_FLUSH_ERR）"},
    Message{"check.bytes", "the responder holds every byte", "响应端收到了全部数据"},
    Message{"check.timeouts", "the capture shows the timeout retransmissions, retry_cnt of them",
            "抓包中出现了超时重传，次数等于 retry_cnt"},
    Message{"check.gap", "the silence before each timeout resend matches 4.096 us x 2^timeout",
            "每次超时重传之前的静默时间与 4.096 µs × 2^timeout 相符"},
    Message{"check.nak", "the capture shows a NAK (PSN sequence error) and the go-back-N resend",
            "抓包中出现了 NAK（PSN 序列错误）以及随后的 go-back-N 重传"},
    Message{"check.rnr_wire",
            "the capture shows an RNR NAK for every try: the first, then one resend after each RNR "
            "timer, rnr_retry times",
            "抓包中每次尝试都得到一个 RNR NAK：第一次发送，以及每次 RNR 定时器到期后的重传，共 "
            "rnr_retry 次"},
    Message{"try.1",
            "--timeout 18: NCCL 2.14-2.22's default, about a second per try (simulated: no wall "
            "time)",
            "--timeout 18：NCCL 2.14–2.22 的默认值，每次约一秒（模拟器中不耗费真实时间）"},
    Message{"try.2",
            "--scenario psn --psn 1 -s 3072 -n 2: the course's example, NAK for PSN 1 then PSNs "
            "1-5 resent",
            "--scenario psn --psn 1 -s 3072 -n 2：课程中的例子，PSN 1 的 NAK，随后重传 PSN 1-5"},
    Message{"try.3", "--scenario dead --retry-cnt 7 --rxe-compat: Soft-RoCE would retry forever",
            "--scenario dead --retry-cnt 7 --rxe-compat：Soft-RoCE 会无限重试"},
    Message{"try.4", "--scenario rnr --rnr-retry 2 --min-rnr-timer 20: longer RNR waits",
            "--scenario rnr --rnr-retry 2 --min-rnr-timer 20：更长的 RNR 等待"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab07

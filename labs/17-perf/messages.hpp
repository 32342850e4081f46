// Lab 17's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab17 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{
        "desc",
        "Lab 17: performance. The knobs that make RDMA fast, each measured as perftest "
        "measures it: message size, inline data (max_inline_data, IBV_SEND_INLINE), "
        "unsignalled batches (one completion in every --cq-mod), post lists (one "
        "ibv_post_send, one doorbell, for a chain of WRs), several QPs and the queue depth; "
        "bandwidth in MB/sec and Mpps, latency in usec, in perftest's columns.",
        "实验 17：性能。让 RDMA 变快的各个参数，逐一按 perftest 的方式测量：消息大小、内联数据"
        "（max_inline_data、IBV_SEND_INLINE）、不带信号的批量发送（每 --cq-mod 个 WR 一个完成）、"
        "提交链表（一次 ibv_post_send、一次门铃提交一串 WR）、多个 QP 以及队列深度；带宽、"
        "消息速率和延迟按 perftest 的列打印。"},
    Message{"opt.test", "what to measure: bw, lat or all (both, and the knob table)",
            "测量什么：bw、lat 或 all（两者都测，外加参数对比表）"},
    Message{"opt.op",
            "the operation of the bandwidth test: write (ib_write_bw) or send (ib_send_bw)",
            "带宽测试使用的操作：write（ib_write_bw）或 send（ib_send_bw）"},
    Message{"opt.size", "message sizes in bytes, comma-separated (2 .. 1048576)",
            "消息大小（字节），用逗号分隔（2 .. 1048576）"},
    Message{"opt.iters", "messages per QP for each measurement (perftest -n)",
            "每次测量中每个 QP 的消息数（perftest -n）"},
    Message{"opt.inline",
            "IBV_SEND_INLINE on every message that fits in max_inline_data (perftest -I)",
            "对能放进 max_inline_data 的每条消息使用 IBV_SEND_INLINE（perftest -I）"},
    Message{"opt.post_list", "WRs chained in one ibv_post_send (perftest -l)",
            "一次 ibv_post_send 提交的 WR 链长度（perftest -l）"},
    Message{"opt.qps", "QPs the bandwidth test spreads its messages over (perftest -q)",
            "带宽测试使用的 QP 数量（perftest -q）"},
    Message{"opt.tx_depth", "WRs in flight per QP, and max_send_wr (perftest -t)",
            "每个 QP 同时在途的 WR 数，也是 max_send_wr（perftest -t）"},
    Message{"opt.cq_mod", "signal one WR in every N (perftest -Q)",
            "每 N 个 WR 中让一个带信号（perftest -Q）"},
    Message{"bad_depth",
            "--tx-depth {0} must be at least --cq-mod {1} and --post-list {2}: otherwise the "
            "send queue fills before a completion frees it",
            "--tx-depth {0} 必须不小于 --cq-mod {1} 和 --post-list {2}：否则发送队列会在有完成"
            "释放它之前被占满"},
    Message{"bad_size", "--size {}: use 2 .. 1048576 bytes", "--size {}：请使用 2 .. 1048576 字节"},
    Message{"wc_failed", "a completion failed: status {} (wr_id {:#x})",
            "一个完成失败：status {}（wr_id {:#x}）"},
    Message{"stalled", "no progress: a message or its completion never came",
            "没有进展：某条消息或它的完成一直没有到来"},
    Message{"step.backend", "choose where the RDMA traffic runs", "选择 RDMA 流量在哪里运行"},
    Message{"step.resources",
            "create the resources: per side a PD, an MR and a CQ, and the QPs; ask what "
            "max_inline_data the device grants",
            "创建资源：每端一个 PD、一个内存区域（MR）和一个 CQ，以及各个 QP；询问设备允许的 "
            "max_inline_data"},
    Message{"step.connect", "connect each sender QP to its receiver QP",
            "把每个发送端 QP 连到各自的接收端 QP"},
    Message{"step.bw", "bandwidth: {} over the message sizes (ib_write_bw / ib_send_bw)",
            "带宽：按消息大小测 {}（ib_write_bw / ib_send_bw）"},
    Message{"step.knobs", "one knob at a time, {}-byte messages",
            "每次只改一个参数，消息大小 {} 字节"},
    Message{"step.lat", "latency: a ping-pong of WRITEs (ib_write_lat)",
            "延迟：WRITE 来回（ib_write_lat）"},
    Message{"step.verify", "check the outcome", "检查结果"},
    Message{"sender", "sender {}", "发送端 {}"},
    Message{"receiver", "receiver {}", "接收端 {}"},
    Message{"why.model",
            "the simulator's NIC cost model is on: a doorbell {} ns and a WQE fetch {} ns of the "
            "QP's send engine, a payload fetch (DMA read) of {} ns before a non-inline WQE's "
            "first packet, a CQE write {} ns; the link is 100 Gb/s with 1 µs of delay. The "
            "times below are virtual: they follow from this model, not from this computer",
            "模拟器的网卡开销模型已打开：QP 发送引擎处理一次门铃 {} ns、取一个 WQE {} ns；非内联 "
            "WQE 的第一个包要等 {} ns 的载荷读取（DMA 读）；写一个 CQE {} ns；链路 100 Gb/s，"
            "时延 1 µs。下面的时间都是虚拟时间：由这个模型决定，与本机快慢无关"},
    Message{"inline_granted",
            "the largest max_inline_data ibv_create_qp accepts is {} (asked up to {})",
            "ibv_create_qp 接受的最大 max_inline_data 是 {}（最多试到 {}）"},
    Message{"why.inline",
            "max_inline_data is what a WQE can carry itself: with IBV_SEND_INLINE the CPU copies "
            "the payload into the WQE at ibv_post_send, so the NIC need not read it from memory "
            "by DMA (and the buffer may be reused at once, without an lkey)",
            "max_inline_data 是一个 WQE 自身能携带的字节数：使用 IBV_SEND_INLINE 时，CPU 在 "
            "ibv_post_send 中就把载荷复制进 WQE，网卡不必再通过 DMA 从内存读取它（缓冲区也可以"
            "立即复用，且不需要 lkey）"},
    Message{"why.bw",
            "each QP keeps {} WRs in flight, one in every {} signalled, {} per ibv_post_send, "
            "over {} QP(s); the time runs from the first post to the last completion; MB/sec is "
            "2^20 bytes per second, as perftest prints it",
            "每个 QP 保持 {} 个 WR 在途，每 {} 个带一次信号，每次 ibv_post_send 提交 {} 个，"
            "共 {} 个 QP；计时从第一次提交到最后一个完成；MB/sec 按每秒 2^20 字节计，与 perftest "
            "一致"},
    Message{"why.knobs",
            "each row turns one knob away from the first one's settings; the message rate shows "
            "what each costs or saves",
            "每一行只把一个参数从第一行的设置改掉；消息速率显示每个参数的代价或收益"},
    Message{"knob.base", "as above (the starting point)", "同上（起点）"},
    Message{"knob.inline_on", "IBV_SEND_INLINE: no payload fetch", "IBV_SEND_INLINE：不再读取载荷"},
    Message{"knob.inline_off", "without IBV_SEND_INLINE: the NIC fetches the payload",
            "不用 IBV_SEND_INLINE：网卡自己读取载荷"},
    Message{"knob.signal_all", "--cq-mod 1: every WR signalled, one CQE each",
            "--cq-mod 1：每个 WR 都带信号，各写一个 CQE"},
    Message{"knob.post_list", "--post-list {0}: one doorbell per {0} WRs",
            "--post-list {0}：每 {0} 个 WR 一次门铃"},
    Message{"knob.qps", "--qps {}: the messages spread over that many QPs",
            "--qps {}：消息分散到这么多个 QP 上"},
    Message{"knob.shallow", "--tx-depth {} --cq-mod {}: few WRs in flight",
            "--tx-depth {} --cq-mod {}：在途的 WR 很少"},
    Message{"knob.all", "all the fast ones: IBV_SEND_INLINE, --post-list {}, --qps {}",
            "所有加速参数一起：IBV_SEND_INLINE、--post-list {}、--qps {}"},
    Message{"why.knobs_read",
            "a small message costs the NIC per WQE, per doorbell and per CQE, not per byte: "
            "chaining WRs shares a doorbell, signalling rarely shares a CQE, more QPs work in "
            "parallel, and a shallow queue leaves the link idle while the ACKs come back",
            "小消息的开销按 WQE、门铃和 CQE 计，而不是按字节计：把 WR 串成链表可以共用一次门铃，"
            "少带信号可以少写 CQE，多个 QP 可以并行工作，而队列太浅时，链路在等待 ACK 回来期间"
            "空闲"},
    Message{"why.lat",
            "one side WRITEs, the other polls the last byte of its buffer and WRITEs back; half "
            "of each round trip is one sample; t_typical is the median",
            "一端 WRITE，另一端轮询自己缓冲区的最后一个字节，看到后再 WRITE 回去；每个来回的一半"
            "是一个样本；t_typical 是中位数"},
    Message{"why.lat_read",
            "latency is one message's path: the doorbell, the WQE fetch, the payload fetch "
            "unless inline, the wire; signalling and batching do not shorten it",
            "延迟是一条消息走过的路径：门铃、取 WQE、（非内联时）读取载荷、线路；带信号与否和"
            "批量提交都不会缩短它"},
    Message{"check.completions",
            "every message of every run completed successfully (and every SEND was received)",
            "每次测量的每条消息都成功完成（每个 SEND 也都被接收）"},
    Message{"try.1", "--test bw --op send -s 64,4096: ib_send_bw's numbers",
            "--test bw --op send -s 64,4096：对应 ib_send_bw 的结果"},
    Message{"try.2", "--test bw -l 32 -q 8 -I: how far the knobs go together",
            "--test bw -l 32 -q 8 -I：几个参数一起能走多远"},
    Message{"try.3", "--test lat -s 2,64,256 -I: inline data and latency",
            "--test lat -s 2,64,256 -I：内联数据与延迟"},
    Message{"try.4", "--json: every number, for a script", "--json：输出全部数字，供脚本使用"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab17

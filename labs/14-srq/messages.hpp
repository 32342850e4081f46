// Lab 14's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab14 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{"desc",
            "Lab 14: a shared receive queue (SRQ). Several RC QPs take their receives from one "
            "pool; wc.qp_num says which QP a completion came from; the SRQ limit raises an async "
            "event when the pool runs low; an empty SRQ gives every sender RNR NAKs.",
            "实验 14：共享接收队列（SRQ）。多个 RC QP 从同一个池中取接收 WQE；wc.qp_num "
            "说明完成来自哪个 QP；池中 WQE 不足时，SRQ 上限触发一个异步事件；SRQ 为空时，"
            "每个发送端都收到 RNR NAK。"},
    Message{"opt.qps", "sender QPs, each connected to its own receiver QP on the SRQ",
            "发送端 QP 的数量，每个都连到 SRQ 上各自的接收端 QP"},
    Message{"opt.msgs", "SENDs per sender QP", "每个发送端 QP 的 SEND 数量"},
    Message{"opt.size", "message size in bytes", "消息大小（字节）"},
    Message{"opt.limit", "srq_limit to arm (default: the number of QPs)",
            "要设置的 srq_limit（默认等于 QP 数量）"},
    Message{"opt.empty_srq",
            "post nothing to the SRQ: every sender's QP gets RNR NAKs and its SEND fails",
            "不向 SRQ 提交任何接收请求：每个发送端 QP 都收到 RNR NAK，SEND 失败"},
    Message{"bad_limit", "--limit {0} must be between 1 and the {1} receives posted",
            "--limit {0} 必须在 1 和已提交的 {1} 个接收请求之间"},
    Message{"step.backend", "choose where the RDMA traffic runs", "选择 RDMA 流量在哪里运行"},
    Message{"step.resources",
            "create the resources: the senders' QPs, and the receivers' QPs on one SRQ",
            "创建资源：发送端的 QP，以及共用一个 SRQ 的接收端 QP"},
    Message{"step.connect", "connect each sender QP to its receiver QP",
            "把每个发送端 QP 连到各自的接收端 QP"},
    Message{"step.recv", "post the receives to the SRQ (ibv_post_srq_recv)",
            "向 SRQ 提交接收请求（ibv_post_srq_recv）"},
    Message{"step.no_recv", "post NOTHING to the SRQ (--empty-srq)",
            "故意不向 SRQ 提交任何接收请求（--empty-srq）"},
    Message{"step.limit", "arm the SRQ limit (ibv_modify_srq, IBV_SRQ_LIMIT)",
            "设置 SRQ 上限（ibv_modify_srq，IBV_SRQ_LIMIT）"},
    Message{"step.send", "every sender QP posts its SENDs, in turn", "各发送端 QP 轮流提交 SEND"},
    Message{"step.poll", "poll the completion queues (one per side)", "轮询完成队列（每端一个）"},
    Message{"step.event", "read the async event queue (ibv_get_async_event)",
            "读取异步事件队列（ibv_get_async_event）"},
    Message{"step.verify", "check the outcome", "检查结果"},
    Message{"sender", "sender {}", "发送端 {}"},
    Message{"receiver", "receiver {}", "接收端 {}"},
    Message{"why.srq",
            "the receiver QPs were created with init_attr.srq: they have no receive queue of their "
            "own (ibv_post_recv on them fails with EINVAL), and all share one CQ",
            "接收端 QP 创建时指定了 init_attr.srq：它们没有自己的接收队列（对它们调用 "
            "ibv_post_recv 会以 EINVAL 失败），并共用一个 CQ"},
    Message{"why.recv",
            "one pool for every QP: a SEND takes the oldest WQE of the SRQ, whichever QP it "
            "arrives on, so the WQE's wr_id no longer tells the QP: wc.qp_num does",
            "所有 QP 共用一个池：无论 SEND 到达哪个 QP，都取走 SRQ 中最早的 WQE，"
            "所以 WQE 的 wr_id 不再说明是哪个 QP，要看 wc.qp_num"},
    Message{"why.no_recv",
            "with nothing in the SRQ, the responder can only answer RNR NAK, on every QP that "
            "uses it: watch one per sender QP on the wire",
            "SRQ 中没有 WQE 时，使用它的每个 QP 上，响应端都只能回复 RNR NAK："
            "请在线路上观察每个发送端 QP 各自收到的 RNR NAK"},
    Message{"why.limit",
            "srq_limit {0}: when taking a WQE leaves fewer than {0} of the {1} posted, the device "
            "raises IBV_EVENT_SRQ_LIMIT_REACHED once and sets the limit back to 0; here with "
            "message {2}",
            "srq_limit {0}：当取走一个 WQE 后，已提交的 {1} 个中剩下不到 {0} 个时，设备触发一次 "
            "IBV_EVENT_SRQ_LIMIT_REACHED，并把上限恢复为 0；这里是第 {2} 条消息"},
    Message{"why.event",
            "the event says the SRQ is running low: the moment to post more receives, before "
            "the senders get RNR NAKs",
            "这个事件说明 SRQ 快用完了：应在发送端收到 RNR NAK 之前补充接收请求"},
    Message{"why.rearm",
            "the limit is 0 again: the event fires once per ibv_modify_srq; a program re-arms it "
            "after posting more receives",
            "上限又变为 0：每次 ibv_modify_srq 只触发一次事件；程序在补充接收请求后重新设置它"},
    Message{"no_event", "no async event arrived", "没有收到异步事件"},
    Message{"table.head",
            "which QP each receive completion came from:", "每个接收完成来自哪个 QP："},
    Message{"table.row", "  wr_id {0}  qp_num {1} ({2})  the WQE's buffer holds \"{3}\"",
            "  wr_id {0}  qp_num {1}（{2}）  该 WQE 的缓冲区中是“{3}”"},
    Message{"check.send_ok", "every SEND, from every sender QP, completed with IBV_WC_SUCCESS",
            "每个发送端 QP 的每个 SEND 都以 IBV_WC_SUCCESS 完成"},
    Message{"check.recv_ok",
            "every receive completed with IBV_WC_RECV, the right length and a receiver QP's "
            "qp_num",
            "每个接收都以 IBV_WC_RECV 完成，长度正确，qp_num 是某个接收端 QP"},
    Message{"check.per_qp", "each receiver QP completed the {} messages of its sender",
            "每个接收端 QP 都完成了其发送端的 {} 条消息"},
    Message{"check.wqes", "the {} SRQ WQEs were each used once", "SRQ 中的 {} 个 WQE 各用了一次"},
    Message{"check.bytes", "each WQE's buffer holds the message of the QP its completion names",
            "每个 WQE 的缓冲区中，正是其完成所指 QP 的消息"},
    Message{"check.limit_event",
            "exactly one IBV_EVENT_SRQ_LIMIT_REACHED for this SRQ, and the limit is 0 again",
            "这个 SRQ 恰好收到一个 IBV_EVENT_SRQ_LIMIT_REACHED，且上限又变为 0"},
    Message{"check.rnr", "every sender QP's SEND failed with IBV_WC_RNR_RETRY_EXC_ERR",
            "每个发送端 QP 的 SEND 都以 IBV_WC_RNR_RETRY_EXC_ERR 失败"},
    Message{"check.wire_send",
            "the wire carried the {} SENDs to every receiver QP, and ACKs to every sender QP",
            "线路上出现了发往各接收端 QP 的 {} 个 SEND，以及发给各发送端 QP 的 ACK"},
    Message{"check.wire_rnr", "the wire carried RNR NAKs to every sender QP, and no ACK",
            "线路上每个发送端 QP 都收到了 RNR NAK，且没有 ACK"},
    Message{"try.1", "--empty-srq: nothing posted, one RNR NAK after another to every sender QP",
            "--empty-srq：不提交接收请求，每个发送端 QP 都接连收到 RNR NAK"},
    Message{"try.2", "--qps 5 -n 4 --limit 2: more QPs, one pool, the event with the 19th message",
            "--qps 5 -n 4 --limit 2：更多 QP 共用一个池，事件在第 19 条消息时触发"},
    Message{"try.3", "--step: one step at a time", "--step：逐步执行"},
    Message{"try.4", "rdmapcap decode {}: every header field of the capture explained",
            "rdmapcap decode {}：逐个解释抓包中每个报文头字段"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab14

// Lab 01's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab01 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{"desc",
            "Lab 01: SEND and RECEIVE over an RC queue pair. The receiver posts a receive work "
            "request first; the sender's SEND consumes it; both sides get a work completion.",
            "实验 01：在 RC 队列对上进行 SEND 与 RECEIVE。接收端先提交接收工作请求，发送端的 SEND "
            "消耗它，两端各自得到一个工作完成。"},
    Message{"opt.size", "message size in bytes", "消息大小（字节）"},
    Message{"opt.iters", "number of messages", "消息数量"},
    Message{"opt.cm",
            "connect in band with the RDMA connection manager (rdma_cm: CM REQ/REP/RTU on the "
            "wire) instead of exchanging QPN, PSN and GID out of band",
            "用 RDMA 连接管理器带内建连（rdma_cm：线路上可见 CM REQ/REP/RTU），而不是在带外交换 "
            "QPN、PSN 和 GID"},
    Message{"step.cm", "connect in band with rdma_cm: listen, resolve, connect, accept, establish",
            "用 rdma_cm 带内建连：监听、解析、连接、接受、确认"},
    Message{"opt.no_recv",
            "do not post the receive: the responder answers RNR NAK and the sender retries",
            "不提交接收请求：响应端回复 RNR NAK，发送端重试"},
    Message{"opt.rnr_retry", "rnr_retry of the sender's QP (7 = retry forever)",
            "发送端 QP 的 rnr_retry（7 表示无限重试）"},
    Message{"step.backend", "choose where the RDMA traffic runs", "选择 RDMA 流量在哪里运行"},
    Message{"step.resources", "open the devices and create the resources: PD, MR, CQ, QP",
            "打开设备并创建资源：PD、MR、CQ、QP"},
    Message{"step.exchange", "exchange what the other side must know", "交换对端需要知道的信息"},
    Message{"step.connect", "move both QPs through RESET -> INIT -> RTR -> RTS",
            "把两个 QP 依次迁移到 RESET -> INIT -> RTR -> RTS"},
    Message{"step.recv", "the receiver posts a receive work request", "接收端提交接收工作请求"},
    Message{"step.no_recv", "the receiver does NOT post a receive (--no-recv)",
            "接收端故意不提交接收请求（--no-recv）"},
    Message{"step.send", "the sender posts a SEND work request", "发送端提交 SEND 工作请求"},
    Message{"step.poll", "poll the completion queues", "轮询完成队列"},
    Message{"step.verify", "check the outcome", "检查结果"},
    Message{"say.exchange",
            "two-sided operations need no VA or rkey: only QPN, first PSN and GID. In one process "
            "they are handed over directly; between hosts each line travels over TCP.",
            "双边操作不需要 VA 和 rkey：只需 QPN、起始 PSN 和 GID。在同一进程中直接传递；"
            "跨主机时，下面每一行通过 TCP 发送。"},
    Message{"why.recv",
            "a SEND is placed into the buffer of the oldest receive WQE; "
            "without one the responder can only answer RNR NAK (receiver not ready)",
            "SEND 的数据会放进最早的接收 WQE 所指的缓冲区；没有接收 WQE，响应端只能回复 RNR NAK"
            "（接收端未就绪）"},
    Message{"why.no_recv",
            "watch the RNR NAK on the wire, the wait of min_rnr_timer, and the retries",
            "请在线路上观察 RNR NAK、按 min_rnr_timer 等待、以及随后的重试"},
    Message{"why.signaled", "IBV_SEND_SIGNALED: we want a completion for this WR",
            "IBV_SEND_SIGNALED：希望这个 WR 产生工作完成"},
    Message{"sender", "sender", "发送端"},
    Message{"receiver", "receiver", "接收端"},
    Message{"check.send_ok", "every SEND completed with IBV_WC_SUCCESS",
            "每个 SEND 都以 IBV_WC_SUCCESS 完成"},
    Message{"check.recv_ok", "every receive completed with IBV_WC_RECV and the right length",
            "每个接收都以 IBV_WC_RECV 完成，且长度正确"},
    Message{"check.bytes", "the receiver's buffer holds the sender's bytes",
            "接收端缓冲区中正是发送端的数据"},
    Message{"check.rnr", "without a receive, the SEND failed with IBV_WC_RNR_RETRY_EXC_ERR",
            "没有接收请求时，SEND 以 IBV_WC_RNR_RETRY_EXC_ERR 失败"},
    Message{"check.wire_send", "the wire carried the SENDs and their ACKs",
            "线路上出现了 SEND 及其 ACK"},
    Message{"check.wire_rnr", "the wire carried RNR NAKs", "线路上出现了 RNR NAK"},
    Message{"try.1", "--no-recv: no receive posted, see the RNR NAK and IBV_WC_RNR_RETRY_EXC_ERR",
            "--no-recv：不提交接收请求，观察 RNR NAK 和 IBV_WC_RNR_RETRY_EXC_ERR"},
    Message{"try.2", "-s 3000 -m 1024: one SEND becomes SEND First, Middle, Last",
            "-s 3000 -m 1024：一个 SEND 被拆成 SEND First、Middle、Last"},
    Message{"try.3", "-n 5 --step: five messages, one step at a time",
            "-n 5 --step：发送五条消息，逐步执行"},
    Message{"try.4", "rdmapcap decode {}: every header field of the capture explained",
            "rdmapcap decode {}：逐个解释抓包中每个报文头字段"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab01

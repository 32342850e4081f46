// Lab 06's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab06 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{"call.post_chain",
            "ibv_post_send(qp, &wr[0])  // {0} WRITE WRs of {1} bytes chained by wr.next",
            "ibv_post_send(qp, &wr[0])  // 用 wr.next 串起的 {0} 个 WRITE WR，每个 {1} 字节"},
    Message{"desc",
            "Lab 06: path MTU and segmentation. A message larger than the path MTU leaves as "
            "First, Middle ... Last packets, each with its own PSN; only the First carries the "
            "RETH, only the Last asks for an ACK.",
            "实验 06：路径 MTU 与分段。大于路径 MTU 的消息会被拆成 First、Middle……Last 多个报文，"
            "每个报文有自己的 PSN；只有 First 携带 RETH，只有 Last 请求 ACK。"},
    Message{"opt.size", "message size in bytes", "消息大小（字节）"},
    Message{"opt.iters", "number of messages", "消息数量"},
    Message{"writer", "writer", "写入端"},
    Message{"target", "target", "目标端"},
    Message{"step.backend", "choose where the RDMA traffic runs", "选择 RDMA 流量在哪里运行"},
    Message{"step.plan", "how many packets a message of this size needs at each MTU",
            "不同 MTU 下，这个大小的消息需要多少个报文"},
    Message{"plan.row", "MTU {0:>4}: {1:>5} packet(s) {2}", "MTU {0:>4}：{1:>5} 个报文 {2}"},
    Message{"plan.chosen", "<- this run", "<- 本次运行"},
    Message{"why.mtu",
            "the path MTU is the payload per packet (256..4096), set at RTR and never larger than "
            "the port's active MTU; the Ethernet MTU must hold it plus about 60 bytes of headers",
            "路径 MTU 指每个报文的载荷大小（256..4096），在 RTR 时设置，且不能超过端口当前 MTU；"
            "以太网 MTU 必须能容纳它再加约 60 字节的各层报文头"},
    Message{"step.resources", "open the devices", "打开设备"},
    Message{"step.connect", "connect with the chosen path MTU", "以选定的路径 MTU 建立连接"},
    Message{"step.write", "post the WRITEs", "提交 WRITE"},
    Message{"step.poll", "poll the writer's CQ", "轮询写入端的 CQ"},
    Message{"step.verify", "check the outcome", "检查结果"},
    Message{"count", "{0}: {1} First, {2} Middle, {3} Last, {4} Only",
            "{0}：First {1} 个、Middle {2} 个、Last {3} 个、Only {4} 个"},
    Message{"check.write_ok", "every WRITE completed with IBV_WC_SUCCESS",
            "每个 WRITE 都以 IBV_WC_SUCCESS 完成"},
    Message{"check.bytes", "the target holds the bytes", "目标端收到了正确的数据"},
    Message{"check.segments",
            "each message went out as ceil(size / MTU) packets: First, Middle..., Last (or Only)",
            "每条消息都被拆成“大小 / MTU 向上取整”个报文：First、若干 Middle、Last（或 Only）"},
    Message{"check.payload",
            "every packet but the last of a message carries exactly one MTU of payload",
            "除每条消息的最后一个报文外，其余报文的载荷都恰好等于一个 MTU"},
    Message{"check.psn", "the PSNs are consecutive, one per packet", "PSN 连续递增，每个报文一个"},
    Message{
        "opt.cm",
        "connect in band with rdma_cm (CM REQ/REP/RTU on the wire; the CM picks the path "
        "MTU); the target then sends its buffer's VA, rkey and length in a SEND",
        "用 rdma_cm 带内建连（线路上可见 CM REQ/REP/RTU；路径 MTU 由 CM 选定）；随后目标端用一个 "
        "SEND 发出其缓冲区的 VA、rkey 和长度"},
    Message{"step.cm", "connect in band with rdma_cm: listen, resolve, connect, accept, establish",
            "用 rdma_cm 带内建连：监听、解析、连接、接受、确认"},
    Message{"cm_mtu",
            "rdma_cm chose the path MTU itself: {0}, the port's active MTU (-m does not apply); "
            "{1} packet(s) per message",
            "rdma_cm 自行选定了路径 MTU：{0}，即端口当前 MTU（-m 不起作用）；每条消息 {1} 个报文"},
    Message{"step.info", "the target tells the writer where its buffer is, in a SEND",
            "目标端用一个 SEND 告诉写入端其缓冲区在哪里"},
    Message{"why.info",
            "without a side channel the VA, rkey and length must travel in band: like rping, the "
            "target sends them (16 bytes, big-endian) in a SEND right after connecting, and the "
            "writer has a receive posted for them. The CM's private data could carry them too "
            "(up to 56 bytes in a REQ, 196 in a REP)",
            "没有旁路通道时，VA、rkey 和长度只能在带内传递：与 rping "
            "一样，目标端在连接建立后立即用一个 "
            "SEND 发出它们（16 字节，大端序），写入端事先为此提交了一个接收工作请求。CM "
            "的私有数据也能携带"
            "它们（REQ 中最多 56 字节，REP 中最多 196 字节）"},
    Message{"too_small",
            "the target's buffer is {0} bytes, these WRITEs need {1}: give both processes the "
            "same -s and -n",
            "目标端缓冲区只有 {0} 字节，而这些 WRITE 需要 {1} 字节：请给两个进程相同的 -s 和 -n"},
    Message{"wait_done",
            "the target cannot see the WRITEs arrive: it looks at its memory once the writer says "
            "it is done (\"done\" over TCP, or with --cm the writer's disconnect)",
            "目标端看不到 WRITE 何时到达：要等写入端表示已完成（通过 TCP 发来“done”，或在 --cm 时"
            "由写入端断开连接）之后，才去检查自己的内存"},
    Message{"try.1", "-m 256 -s 3072: twelve packets; -m 4096: one WRITE Only",
            "-m 256 -s 3072：十二个报文；-m 4096：一个 WRITE Only"},
    Message{"try.2", "-s 1: a 1-byte payload is padded to 4 bytes (BTH PadCnt 3)",
            "-s 1：1 字节载荷被填充到 4 字节（BTH 中 PadCnt 为 3）"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab06

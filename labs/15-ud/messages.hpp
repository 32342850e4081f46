// Lab 15's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab15 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{"desc",
            "Lab 15: Unreliable Datagram (UD). No connection: each SEND names its destination "
            "with an address handle, a QPN and a Q_Key. Shows the 40-byte GRH at the start of "
            "every receive buffer, the DETH on the wire, and what UD does not do: no ACKs, no "
            "retries, no message above the MTU, nothing for a wrong Q_Key.",
            "实验 15：不可靠数据报（UD）。没有连接：每个 SEND 用地址句柄、QPN 和 Q_Key "
            "指明目的地。展示每个接收缓冲区开头的 40 字节 GRH、线路上的 DETH，以及 UD "
            "不做的事：没有 ACK、没有重传、不能超过 MTU、Q_Key 不对就什么也收不到。"},
    Message{"opt.size", "payload bytes of each datagram (at most the port's active MTU)",
            "每个数据报的载荷字节数（不超过端口的当前 MTU）"},
    Message{"opt.qkey", "the receiver's Q_Key (the right one)", "接收端的 Q_Key（正确的那个）"},
    Message{"opt.wrong_qkey", "the Q_Key of datagram 2 (a wrong one)",
            "数据报 2 使用的 Q_Key（错误的那个）"},
    Message{"bad.size",
            "--size {0} is larger than the port's active MTU {1}: a UD message fits "
            "in one packet (try --size {1})",
            "--size {0} 大于端口当前 MTU {1}：UD 消息必须装进一个报文（试试 --size {1}）"},
    Message{
        "bad.qkey",
        "--wrong-qkey must differ from --qkey, and neither may have its high bit set (0x80000000 "
        "and up is a controlled Q_Key: the QP would send its own Q_Key instead)",
        "--wrong-qkey 必须与 --qkey 不同，且两者的最高位都不能为 1（0x80000000 及以上是受控 "
        "Q_Key：QP 会改用自己的 Q_Key 发送）"},
    Message{"step.backend", "choose where the RDMA traffic runs", "选择 RDMA 流量在哪里运行"},
    Message{"step.resources", "open the devices and create PD, MR, CQ and a UD QP on each side",
            "打开设备，在两端各创建 PD、MR、CQ 和一个 UD QP"},
    Message{"step.connect", "move both UD QPs through RESET -> INIT -> RTR -> RTS, with no peer",
            "把两个 UD QP 依次迁移到 RESET -> INIT -> RTR -> RTS，不指定对端"},
    Message{"why.ud_qps",
            "INIT sets the Q_Key this QP accepts; RTR and RTS name no peer, no path MTU and no "
            "retry counts: a UD QP can send to any QP and receive from any QP",
            "INIT 设置这个 QP 接受的 Q_Key；RTR 和 RTS 不指定对端、路径 MTU 或重试次数："
            "UD QP 可以发给任何 QP，也可以从任何 QP 接收"},
    Message{"step.ah", "the sender creates an address handle for the receiver",
            "发送端为接收端创建地址句柄"},
    Message{"say.ah_info",
            "what the sender must know of the receiver: its GID (for the address handle), its QPN "
            "and its Q_Key (for each work request). In one process they are handed over directly.",
            "发送端需要知道接收端的：GID（用于地址句柄）、QPN 和 Q_Key（写进每个工作请求）。"
            "在同一进程中直接传递。"},
    Message{"why.ah",
            "the address handle is the destination of a datagram: destination GID, our source GID "
            "index, hop limit. One handle serves every QP on that host.",
            "地址句柄就是数据报的目的地：目的 GID、本端源 GID 索引、跳数限制。"
            "一个地址句柄可用于该主机上的所有 QP。"},
    Message{"step.recv", "the receiver posts {} receive work requests of 40 + {} bytes each",
            "接收端提交 {} 个接收工作请求，每个 40 + {} 字节"},
    Message{"why.recv",
            "every UD receive buffer starts with 40 bytes for the GRH (the packet's network "
            "header); the payload follows at offset 40. A buffer without those 40 bytes cannot "
            "hold the datagram.",
            "每个 UD 接收缓冲区的开头 40 字节留给 GRH（报文的网络层头部），载荷从偏移 40 开始。"
            "缓冲区少了这 40 字节就装不下数据报。"},
    Message{"step.good", "datagram 1: a SEND with the right Q_Key", "数据报 1：Q_Key 正确的 SEND"},
    Message{"step.wrong_qkey", "datagram 2: a SEND with a wrong Q_Key",
            "数据报 2：Q_Key 错误的 SEND"},
    Message{"step.too_big", "datagram 3: a SEND of {} bytes, one more than the MTU",
            "数据报 3：{} 字节的 SEND，比 MTU 多 1 字节"},
    Message{"step.lost", "datagram 4: a SEND the network loses", "数据报 4：被网络丢掉的 SEND"},
    Message{"step.again", "datagram 5: the right Q_Key again", "数据报 5：再次使用正确的 Q_Key"},
    Message{"step.verify", "check the outcome", "检查结果"},
    Message{"why.ud_wr",
            "wr.ud names the destination of this one message: address handle, remote QPN, Q_Key",
            "wr.ud 指明这一条消息的目的地：地址句柄、远端 QPN、Q_Key"},
    Message{"why.signaled", "IBV_SEND_SIGNALED: we want a completion for this WR",
            "IBV_SEND_SIGNALED：希望这个 WR 产生工作完成"},
    Message{
        "say.sent_ok",
        "the sender's completion says IBV_WC_SUCCESS: for UD that only means the message left "
        "(or was dropped by the sender itself); no one confirms that it arrived",
        "发送端的工作完成是 IBV_WC_SUCCESS：对 UD 来说这只表示消息已发出（或被发送端自己丢弃），"
        "没有谁确认它已到达"},
    Message{"say.nothing", "the receiver's CQ stays empty: {}", "接收端的 CQ 仍为空：{}"},
    Message{"why.wrong_qkey",
            "the receiving QP compares the DETH's Q_Key with its own and silently drops the "
            "packet when they differ: no completion, no NAK, no counter the sender can see",
            "接收端 QP 把 DETH 中的 Q_Key 与自己的比较，不同就静默丢弃报文：没有工作完成、"
            "没有 NAK，发送端看不到任何计数"},
    Message{"why.too_big",
            "a UD message must fit in one packet: the port's active MTU ({} bytes). A longer one "
            "is not sent at all and, as IBTA C10-93.1.1 asks, no error is reported: the send "
            "completes with success and nothing goes on the wire (rxe does exactly this)",
            "UD 消息必须装进一个报文：端口当前 MTU（{} 字节）。更长的消息根本不会被发送，并且按 "
            "IBTA C10-93.1.1 的要求不报告错误：发送以成功完成，线路上什么也没有（rxe 正是如此）"},
    Message{"why.lost",
            "the simulator drops the packet of PSN {} on the link (a drop rule, one of its loss "
            "knobs)",
            "模拟器在链路上丢掉 PSN {} 的报文（一条丢包规则，模拟器的丢包旋钮之一）"},
    Message{"why.lost_after",
            "UD has no ACK, so no one notices the loss; no timer runs, nothing is retransmitted",
            "UD 没有 ACK，所以谁也不会发现丢包；没有定时器，也没有重传"},
    Message{"say.lost_verbs",
            "real verbs: this lab cannot make the network lose a packet, so datagram 4 is not "
            "sent (on the simulator a drop rule loses it; on rxe, tc netem loss on the interface "
            "would)",
            "真实 verbs：本实验无法让网络丢包，因此不发送数据报 4（在模拟器上由一条丢包规则把它"
            "丢掉；在 rxe 上可以用 tc netem 在网卡上制造丢包）"},
    Message{"why.again",
            "the datagrams 2 to 4 consumed no receive work request: this one lands in the second "
            "receive buffer (wr_id {})",
            "数据报 2 到 4 没有消耗任何接收工作请求：这一个落在第二个接收缓冲区（wr_id {}）"},
    Message{"say.grh", "the first 40 bytes of the receive buffer (the GRH):",
            "接收缓冲区的前 40 字节（GRH）："},
    Message{"why.grh_v4",
            "RoCEv2 over IPv4: bytes 0-19 are unused (zero), bytes 20-39 are the packet's IPv4 "
            "header: 0x45 (version 4, 20 bytes), ..., source {} at bytes 32-35, destination {} at "
            "bytes 36-39. ibv_wc.wc_flags has IBV_WC_GRH.",
            "IPv4 上的 RoCEv2：字节 0-19 未用（为零），字节 20-39 是报文的 IPv4 头部：0x45"
            "（版本 4，20 字节）……，字节 32-35 是源地址 {}，字节 36-39 是目的地址 {}。"
            "ibv_wc.wc_flags 带有 IBV_WC_GRH。"},
    Message{"why.grh_v6",
            "RoCEv2 over IPv6: the 40 bytes are the packet's IPv6 header (source and destination "
            "GIDs included). ibv_wc.wc_flags has IBV_WC_GRH.",
            "IPv6 上的 RoCEv2：这 40 字节就是报文的 IPv6 头部（包含源 GID 和目的 GID）。"
            "ibv_wc.wc_flags 带有 IBV_WC_GRH。"},
    Message{"say.src_qp",
            "src_qp {0} is the sender's QPN (from the DETH): the only way a UD receiver learns who "
            "sent a datagram, besides the GRH's source address",
            "src_qp {0} 是发送端的 QPN（取自 DETH）：除了 GRH 中的源地址，UD 接收端只能靠它"
            "知道数据报是谁发的"},
    Message{"sender", "sender", "发送端"},
    Message{"receiver", "receiver", "接收端"},
    Message{"check.sends", "all {} SENDs completed with IBV_WC_SUCCESS",
            "全部 {} 个 SEND 都以 IBV_WC_SUCCESS 完成"},
    Message{"check.good", "datagram 1 arrived: IBV_WC_RECV, byte_len 40 + {}, IBV_WC_GRH, src_qp",
            "数据报 1 已到达：IBV_WC_RECV，byte_len 40 + {}，IBV_WC_GRH，src_qp 正确"},
    Message{"check.grh", "the GRH in the buffer carries the sender's and receiver's addresses",
            "缓冲区中的 GRH 带有发送端和接收端的地址"},
    Message{"check.payload", "the payload starts at offset 40 and holds the sender's bytes",
            "载荷从偏移 40 开始，正是发送端的数据"},
    Message{"check.dropped", "datagrams 2, 3 and 4 produced no receive completion",
            "数据报 2、3、4 没有产生任何接收完成"},
    Message{"check.again", "datagram 5 arrived in the second receive buffer (wr_id {})",
            "数据报 5 到达第二个接收缓冲区（wr_id {}）"},
    Message{"check.wire_deth",
            "on the wire: UD SEND Only packets, each with a DETH carrying its Q_Key and the "
            "sender's QPN",
            "线路上：UD SEND Only 报文，每个都带 DETH，其中有 Q_Key 和发送端 QPN"},
    Message{"check.wire_qkey", "datagram 2 is on the wire with the wrong Q_Key {}",
            "数据报 2 带着错误的 Q_Key {} 出现在线路上"},
    Message{"check.wire_mtu",
            "datagram 3 never reached the wire; its PSN is a gap between datagrams 2 and 4",
            "数据报 3 从未出现在线路上；它的 PSN 在数据报 2 和 4 之间留下空缺"},
    Message{"check.wire_lost", "datagram 4 is on the wire once and never again (no retransmission)",
            "数据报 4 在线路上只出现一次，再也没有出现（没有重传）"},
    Message{"check.wire_no_ack", "no packet went back: UD has no ACK and no NAK",
            "没有报文返回：UD 没有 ACK，也没有 NAK"},
    Message{"try.1", "-s 1024 --port-mtu 1024: the largest datagram, and 1025 bytes for datagram 3",
            "-s 1024 --port-mtu 1024：最大的数据报，数据报 3 则是 1025 字节"},
    Message{"try.2", "--step: one datagram at a time", "--step：逐个数据报执行"},
    Message{"try.3", "rdmapcap decode {}: the DETH of every packet, field by field",
            "rdmapcap decode {}：逐字段查看每个报文的 DETH"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab15

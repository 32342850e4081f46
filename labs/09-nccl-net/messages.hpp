// Lab 09's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab09 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{
        "desc",
        "Lab 09: NCCL's IB data path in miniature. The receiver RDMA WRITEs the address and "
        "rkey of its buffer into a FIFO slot in the sender's memory; the sender, polling that "
        "memory, RDMA WRITEs the data there, split over the QPs of the connection, and "
        "notifies with WRITE with immediate (with adaptive routing above the threshold: a "
        "plain WRITE, then a separate 0-byte WRITE with immediate).",
        "实验 09：微缩版的 NCCL IB 数据通路。接收端用 RDMA WRITE 把自己缓冲区的地址和 rkey "
        "写进发送端内存中的一个 FIFO 槽位；发送端轮询这块内存，随后把数据拆分到连接的各个 QP 上，"
        "用 RDMA WRITE 写到该地址，并用带立即数的 WRITE 发出通知（启用自适应路由且消息超过阈值时："
        "先发普通 WRITE，再单独发一个 0 字节的带立即数 WRITE）。"},
    Message{"opt.n", "number of messages (ncclIbIsend/ncclIbIrecv pairs)",
            "消息个数（ncclIbIsend/ncclIbIrecv 的对数）"},
    Message{"opt.size", "message sizes in bytes, comma-separated, used in turn",
            "消息大小（字节），用逗号分隔，依次轮流使用"},
    Message{"opt.qps", "NCCL_IB_QPS_PER_CONNECTION: QPs per connection, the data split over them",
            "NCCL_IB_QPS_PER_CONNECTION：每个连接的 QP 数，数据被拆分到这些 QP 上"},
    Message{
        "opt.ar",
        "NCCL_IB_ADAPTIVE_ROUTING=1: the AR send pattern, and on the simulator a multipath "
        "fabric that reorders packets (as in lab 08)",
        "NCCL_IB_ADAPTIVE_ROUTING=1：采用自适应路由的发送方式；在模拟器上还会启用一个让报文乱序的"
        "多路径网络（与实验 08 相同）"},
    Message{
        "opt.threshold",
        "NCCL_IB_AR_THRESHOLD: with --ar, messages larger than this go as a plain WRITE and a "
        "separate 0-byte WRITE with immediate",
        "NCCL_IB_AR_THRESHOLD：配合 --ar，大于该值的消息用普通 WRITE 发送数据，再单独发一个 0 字节"
        "的带立即数 WRITE"},
    Message{"opt.timeout", "NCCL_IB_TIMEOUT: the QPs' local ACK timeout exponent",
            "NCCL_IB_TIMEOUT：QP 本地 ACK 超时的指数"},
    Message{"opt.retry", "NCCL_IB_RETRY_CNT: the QPs' retry count",
            "NCCL_IB_RETRY_CNT：QP 的重传次数"},
    Message{"opt.paths", "with --ar on the simulator: spines of the leaf-spine (parallel paths)",
            "配合 --ar（模拟器）：叶脊网络中脊交换机的台数（并行路径数）"},
    Message{"opt.spread",
            "with --ar on the simulator: extra delay between the paths over neighbouring spines, "
            "in ns",
            "配合 --ar（模拟器）：经过相邻两台脊交换机的路径之间的额外时延（ns）"},
    Message{"sender", "sender", "发送端"},
    Message{"receiver", "receiver", "接收端"},
    Message{"step.backend", "choose where the RDMA traffic runs", "选择 RDMA 流量在哪里运行"},
    Message{"step.params", "NCCL's settings for this connection", "本连接使用的 NCCL 参数"},
    Message{"why.qps", "QPs per connection; each message is split over all of them",
            "每个连接的 QP 数；每条消息都被拆分到所有这些 QP 上"},
    Message{"why.ar",
            "1: above the threshold, the data and the notification go as two separate WRITEs",
            "1：超过阈值时，数据和通知分成两个独立的 WRITE 发送"},
    Message{"why.threshold", "bytes; NCCL's default is 8192", "字节；NCCL 默认值为 8192"},
    Message{"why.timeout", "goes into ibv_qp_attr.timeout (RTR -> RTS)",
            "写入 ibv_qp_attr.timeout（RTR -> RTS 时设置）"},
    Message{"why.retry", "goes into ibv_qp_attr.retry_cnt (RTR -> RTS)",
            "写入 ibv_qp_attr.retry_cnt（RTR -> RTS 时设置）"},
    Message{
        "timer",
        "timeout {0}: the local ACK timeout is 4.096 µs x 2^{0} = {1} per try; retry_cnt {2}: "
        "{3} tries, so a dead peer is reported (IBV_WC_RETRY_EXC_ERR) after at least {4}",
        "timeout {0}：本地 ACK 超时为 4.096 µs x 2^{0} = 每次 {1}；retry_cnt {2}：共尝试 {3} 次，"
        "因此对端失联后至少要 {4} 才会报告（IBV_WC_RETRY_EXC_ERR）"},
    Message{"timer.infinite",
            "timeout 0: the QPs wait for an ACK forever (no retransmission timer)",
            "timeout 0：QP 无限期等待 ACK（没有重传定时器）"},
    Message{"step.resources",
            "open the devices; the receiver registers its buffer for REMOTE_WRITE, the sender its "
            "FIFO",
            "打开设备；接收端以 REMOTE_WRITE 权限注册数据缓冲区，发送端注册它的 FIFO"},
    Message{"why.fifo",
            "the FIFO lives in the sender's memory but is written by the receiver: REMOTE_WRITE "
            "on the sender's side too. Its address and rkey are the only addresses exchanged at "
            "set-up",
            "FIFO 位于发送端内存中，却由接收端写入：所以发送端这块内存也要有 REMOTE_WRITE 权限。"
            "它的地址和 rkey 是建立连接时唯一交换的地址"},
    Message{
        "ar.fabric",
        "adaptive routing: a leaf-spine with {0} spines whose leaves send each packet to the "
        "least-loaded spine, the path over spine p p x {1} ns longer (as in lab 08); the QPs "
        "accept out-of-order WRITE packets (the model of lab 08)",
        "自适应路由：一个有 {0} 台脊交换机的叶脊网络，叶交换机把每个报文发往排队最少的脊交换机，"
        "经过第 p 台脊交换机的路径长 p × {1} ns（与实验 08 相同）；QP 接受乱序到达的 WRITE 报文"
        "（实验 08 的模型）"},
    Message{"ar.verbs",
            "on a real device the fabric is what it is: --ar only changes the send pattern",
            "在真实设备上网络不受本实验控制：--ar 只改变发送方式"},
    Message{"step.connect",
            "exchange QPNs and the FIFO's address; connect every QP of the connection",
            "交换 QPN 与 FIFO 地址；连接本连接的每一个 QP"},
    Message{"why.oob",
            "besides the QPNs, PSNs and GIDs, the sender tells the receiver out of band where its "
            "FIFO is (VA, rkey {0}). The receiver's buffers are not exchanged here: each one "
            "travels in a FIFO slot when a receive is posted",
            "除了 QPN、PSN 和 GID，发送端还通过带外方式告诉接收端 FIFO 的位置（VA 和 rkey {0}）。"
            "接收端的缓冲区不在这里交换：每次提交接收时，缓冲区地址才放进一个 FIFO 槽位发过去"},
    Message{"qp.more",
            "QP {0} of the connection: sender {1} <-> receiver {2}, same exchange and attributes",
            "连接中的 QP {0}：发送端 {1} <-> 接收端 {2}，交换的信息与属性同上"},
    Message{"step.irecv", "receiver: ncclIbIrecv for messages {0}..{1}",
            "接收端：为消息 {0}..{1} 调用 ncclIbIrecv"},
    Message{"why.slot", "slot = message number mod 8: the ring of 8 slots is reused in order",
            "槽位 = 消息序号 mod 8：8 个槽位组成的环按顺序循环使用"},
    Message{"why.addr", "where the sender must put the data: this receive's buffer",
            "发送端应把数据写到这里：本次接收的缓冲区"},
    Message{"why.idx", "1, 2, 3, ...: the sender acts only when idx shows the value it waits for",
            "1、2、3……：只有 idx 等于发送端等待的值时，发送端才会处理该槽位"},
    Message{"why.recv",
            "one receive WQE without buffer on each of the {} QPs: each QP's WRITE with "
            "immediate consumes one; the request is complete when all have completed",
            "在 {} 个 QP 上各提交一个不带缓冲区的接收 WQE：每个 QP 上的带立即数 WRITE 各消耗一个；"
            "全部完成时，这个接收请求才算完成"},
    Message{"irecv.short", "message {0}: {1} receive WQE(s), FIFO slot {2} with idx {3}, size {4}",
            "消息 {0}：{1} 个接收 WQE，FIFO 槽位 {2}，idx {3}，大小 {4}"},
    Message{"step.isend", "sender: ncclIbIsend for messages {0}..{1}",
            "发送端：为消息 {0}..{1} 调用 ncclIbIsend"},
    Message{"isend.never",
            "FIFO slot {0} never showed idx {1}: the receiver's write did not arrive",
            "FIFO 槽位 {0} 始终没有出现 idx {1}：接收端的写入没有到达"},
    Message{"isend.slot", "message {0}: FIFO slot {1} shows idx {2}: size {3}, rkey {4}",
            "消息 {0}：FIFO 槽位 {1} 出现 idx {2}：大小 {3}，rkey {4}"},
    Message{"isend.bad", "the slot does not match this send (tag, size, address): not sent",
            "该槽位与本次发送不匹配（tag、大小或地址）：不发送"},
    Message{"isend.imm",
            "  QP {0} ({1}): bytes [{2}, {3}) = {4} bytes as IBV_WR_RDMA_WRITE_WITH_IMM, "
            "imm_data = htonl({5})",
            "  QP {0}（{1}）：字节 [{2}, {3}) 共 {4} 字节，用 IBV_WR_RDMA_WRITE_WITH_IMM 发送，"
            "imm_data = htonl({5})"},
    Message{
        "isend.split",
        "  QP {0} ({1}): bytes [{2}, {3}) = {4} bytes as IBV_WR_RDMA_WRITE, then a 0-byte "
        "IBV_WR_RDMA_WRITE_WITH_IMM, imm_data = htonl({5})",
        "  QP {0}（{1}）：字节 [{2}, {3}) 共 {4} 字节，先用 IBV_WR_RDMA_WRITE 发送，再发一个 0 字节"
        "的 IBV_WR_RDMA_WRITE_WITH_IMM，imm_data = htonl({5})"},
    Message{"step.test", "both sides: ncclIbTest for messages {0}..{1}",
            "双方：为消息 {0}..{1} 调用 ncclIbTest"},
    Message{"test.done", "message {0} ({1} bytes): done on both sides, {2} completion(s) each",
            "消息 {0}（{1} 字节）：双方均已完成，各 {2} 个工作完成"},
    Message{"step.verify", "check the outcome", "检查结果"},
    Message{"ar.result",
            "adaptive routing: {0} out-of-order arrival(s); {1} data packet(s) arrived after the "
            "WRITE with immediate of their message and QP; {2} retransmitted, {3} NAK(s)",
            "自适应路由：乱序到达 {0} 个；有 {1} 个数据报文晚于同一消息、同一 QP 的带立即数 WRITE "
            "到达；"
            "重传 {2} 个，NAK {3} 个"},
    Message{"check.timers",
            "every QP holds timeout {0} and retry_cnt {1} (read back with ibv_query_qp)",
            "每个 QP 的 timeout 为 {0}、retry_cnt 为 {1}（用 ibv_query_qp 读回）"},
    Message{"check.done", "all {} messages completed on both sides",
            "全部 {} 条消息在双方都已完成"},
    Message{"check.fifo_order",
            "the sender found each FIFO slot in order, with the expected idx, tag, size, address "
            "and rkey",
            "发送端按顺序找到每个 FIFO 槽位，其 idx、tag、大小、地址和 rkey 都符合预期"},
    Message{"check.bytes", "the receiver holds every byte of all {} messages",
            "接收端收到了全部 {} 条消息的每一个字节"},
    Message{
        "check.imm",
        "each message raised {} receive completion(s), one per QP, each with the size as "
        "immediate and the byte count of its WRITE",
        "每条消息都产生了 {} 个接收完成（每个 QP 一个），每个都以消息大小为立即数，并带有其 WRITE "
        "的字节数"},
    Message{"check.complete_at_wc",
            "when a receive completion was polled, the bytes of its QP's chunk were already in "
            "place",
            "轮询到接收完成时，该 QP 负责的那一段数据已经全部就位"},
    Message{
        "check.fifo_wire",
        "on the wire: {} FIFO writes from the receiver, each a 32-byte WRITE Only into the next "
        "slot",
        "线路上：接收端发出 {} 个 FIFO 写入，每个都是写入下一个槽位的 32 字节 WRITE Only"},
    Message{
        "check.opcodes",
        "on the wire, on each of the {} QPs in PSN order: exactly the packets of NCCL's "
        "pattern, the immediate (= size) on the last one of each message",
        "线路上，{} 个 QP 中的每一个按 PSN 排序：报文与 NCCL 的发送方式完全一致，每条消息最后一个"
        "报文携带立即数（= 大小）"},
    Message{"check.ar_clean",
            "adaptive routing: reordered packets were placed, nothing was retransmitted or NAKed",
            "自适应路由：乱序报文被直接放置，没有重传，也没有 NAK"},
    Message{"try.1",
            "--ar: above 8192 bytes, WRITE packets then a 0-byte WRITE Only with Immediate; see "
            "which packets arrive after it",
            "--ar：超过 8192 字节时，先是 WRITE 报文，再是 0 字节的 WRITE Only with Immediate；"
            "看看哪些报文比它晚到"},
    Message{"try.2", "--qps-per-conn 1 and --qps-per-conn 4: how each message is cut",
            "--qps-per-conn 1 与 --qps-per-conn 4：观察每条消息如何被切分"},
    Message{"try.3", "-n 10: the ring of 8 FIFO slots wraps, idx keeps counting",
            "-n 10：8 个 FIFO 槽位的环绕回开头，idx 继续递增"},
    Message{"try.4", "rdmapcap decode {}: the 32-byte FIFO slots and the ImmDt",
            "rdmapcap decode {}：查看 32 字节的 FIFO 槽位与 ImmDt"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab09

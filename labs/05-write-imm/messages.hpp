// Lab 05's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab05 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{
        "desc",
        "Lab 05: RDMA WRITE with immediate. The data lands in the target's memory as with a "
        "plain WRITE, and the 32-bit immediate value consumes one receive WQE and raises a "
        "completion there: the target learns that the data is complete.",
        "实验 05：带立即数的 RDMA WRITE。数据像普通 WRITE 一样写入目标端内存，而 32 位立即数会消耗"
        "目标端的一个接收 WQE 并产生工作完成：目标端由此得知数据已经完整到达。"},
    Message{"opt.size", "bytes to write", "写入的字节数"},
    Message{"opt.imm", "the immediate value (32 bits)", "立即数（32 位）"},
    Message{"writer", "writer", "写入端"},
    Message{"target", "target", "目标端"},
    Message{"step.backend", "choose where the RDMA traffic runs", "选择 RDMA 流量在哪里运行"},
    Message{"step.resources", "open the devices; the target registers its buffer for REMOTE_WRITE",
            "打开设备；目标端以 REMOTE_WRITE 权限注册缓冲区"},
    Message{"step.exchange", "exchange QPN, PSN, GID — and the target's VA, rkey and length",
            "交换 QPN、PSN、GID——以及目标端的 VA、rkey 和长度"},
    Message{"step.connect", "move both QPs through RESET -> INIT -> RTR -> RTS",
            "把两个 QP 依次迁移到 RESET -> INIT -> RTR -> RTS"},
    Message{"step.recv", "the target posts a receive WQE (with no buffer)",
            "目标端提交一个接收 WQE（不带缓冲区）"},
    Message{"why.recv",
            "the immediate needs a receive WQE, but no bytes go into its buffer: the data goes "
            "where the RETH says. An empty SGE list is enough",
            "立即数需要消耗一个接收 WQE，但不会向其缓冲区写入任何字节：数据按 RETH 指明的位置写入。"
            "空的 SGE 列表就足够了"},
    Message{"step.write", "the writer posts IBV_WR_RDMA_WRITE_WITH_IMM",
            "写入端提交 IBV_WR_RDMA_WRITE_WITH_IMM"},
    Message{"why.imm", "imm_data is sent in network byte order: use htonl() and ntohl()",
            "imm_data 以网络字节序发送：发送前用 htonl()，接收后用 ntohl()"},
    Message{"step.poll", "poll both CQs: the target gets IBV_WC_RECV_RDMA_WITH_IMM",
            "轮询双方 CQ：目标端得到 IBV_WC_RECV_RDMA_WITH_IMM"},
    Message{"imm_got", "the target received imm_data {} and {} bytes",
            "目标端收到 imm_data {}，以及 {} 字节数据"},
    Message{"step.verify", "check the outcome", "检查结果"},
    Message{"check.write_ok", "the writer's completion is IBV_WC_RDMA_WRITE, success",
            "写入端的工作完成为 IBV_WC_RDMA_WRITE，且成功"},
    Message{
        "check.recv_imm",
        "the target's completion is IBV_WC_RECV_RDMA_WITH_IMM with the immediate and the length",
        "目标端的工作完成为 IBV_WC_RECV_RDMA_WITH_IMM，带有立即数和长度"},
    Message{"check.bytes", "the target's buffer holds the written bytes",
            "目标端缓冲区中正是写入的数据"},
    Message{"check.wire", "the last packet of the message carried ImmDt with the immediate",
            "消息的最后一个报文携带了含立即数的 ImmDt"},
    Message{
        "opt.cm",
        "connect in band with rdma_cm (CM REQ/REP/RTU on the wire); the target then sends "
        "its buffer's VA, rkey and length in a SEND",
        "用 rdma_cm 带内建连（线路上可见 CM REQ/REP/RTU）；随后目标端用一个 SEND 发出其缓冲区的 "
        "VA、rkey 和长度"},
    Message{"step.cm", "connect in band with rdma_cm: listen, resolve, connect, accept, establish",
            "用 rdma_cm 带内建连：监听、解析、连接、接受、确认"},
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
    Message{
        "too_small",
        "the target's buffer is {0} bytes, this WRITE needs {1}: give both processes the same -s",
        "目标端缓冲区只有 {0} 字节，而这次 WRITE 需要 {1} 字节：请给两个进程相同的 -s"},
    Message{"try.1",
            "-s 3000 -m 1024: WRITE First, Middle, then Last with Immediate (the ImmDt rides on "
            "the last packet)",
            "-s 3000 -m 1024：WRITE First、Middle，然后是 Last with Immediate（ImmDt "
            "附在最后一个报文上）"},
    Message{"try.2", "rdmapcap decode {}: the RETH and the ImmDt",
            "rdmapcap decode {}：查看 RETH 与 ImmDt"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab05

// Lab 02's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab02 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{
        "desc",
        "Lab 02: RDMA WRITE. The requester writes straight into the responder's registered "
        "memory, named by its virtual address and rkey; the responder's CPU and CQ see nothing.",
        "实验 02：RDMA WRITE。请求端凭对端内存的虚拟地址和 rkey，直接写入对端已注册的内存；"
        "响应端的 CPU 和 CQ 对此毫无察觉。"},
    Message{"opt.size", "bytes to write", "写入的字节数"},
    Message{"opt.offset", "offset in the remote buffer to write at", "写入远端缓冲区的偏移"},
    Message{"writer", "writer", "写入端"},
    Message{"target", "target", "目标端"},
    Message{"step.backend", "choose where the RDMA traffic runs", "选择 RDMA 流量在哪里运行"},
    Message{"step.resources", "open the devices; the target registers its buffer for REMOTE_WRITE",
            "打开设备；目标端以 REMOTE_WRITE 权限注册缓冲区"},
    Message{"why.access",
            "without IBV_ACCESS_REMOTE_WRITE the rkey is useless for writing: the responder would "
            "answer NAK remote access error",
            "没有 IBV_ACCESS_REMOTE_WRITE，rkey 无法用于写入：响应端会回复 NAK（远端访问错误）"},
    Message{"step.exchange", "exchange QPN, PSN, GID — and the target's VA, rkey and length",
            "交换 QPN、PSN、GID——以及目标端的 VA、rkey 和长度"},
    Message{
        "why.exchange",
        "one-sided operations name remote memory: the writer needs the target buffer's "
        "virtual address and rkey, which travel in every RETH",
        "单边操作要指明远端内存：写入端需要目标缓冲区的虚拟地址和 rkey，它们会出现在每个 RETH 中"},
    Message{"step.connect", "move both QPs through RESET -> INIT -> RTR -> RTS",
            "把两个 QP 依次迁移到 RESET -> INIT -> RTR -> RTS"},
    Message{"step.write", "the writer posts an RDMA WRITE work request",
            "写入端提交 RDMA WRITE 工作请求"},
    Message{"why.remote", "where the bytes go: the target's VA plus the offset, and its rkey",
            "数据的去向：目标端 VA 加上偏移，以及它的 rkey"},
    Message{"step.poll", "poll: only the writer gets a completion",
            "轮询：只有写入端会得到工作完成"},
    Message{
        "why.silent",
        "the target's CQ stays empty: RDMA WRITE consumes no receive WQE and raises no "
        "completion. To learn that data arrived, the target can poll a flag the writer puts "
        "last, or the writer can use WRITE with immediate (lab 05)",
        "目标端的 CQ 始终为空：RDMA WRITE 不消耗接收 WQE，也不产生工作完成。目标端若想知道数据"
        "已到达，可以轮询写入端最后写入的标志字节，或者由写入端改用带立即数的 WRITE（实验 05）"},
    Message{"target_cq", "target CQ: {} completion(s)", "目标端 CQ：{} 个工作完成"},
    Message{"step.verify", "check the outcome", "检查结果"},
    Message{"check.write_ok", "the WRITE completed with IBV_WC_SUCCESS on the writer",
            "写入端的 WRITE 以 IBV_WC_SUCCESS 完成"},
    Message{"check.bytes", "the target's buffer holds the written bytes at the offset",
            "目标端缓冲区在指定偏移处正是写入的数据"},
    Message{"check.untouched", "the bytes around the written range are untouched",
            "写入范围之外的字节没有被改动"},
    Message{"check.target_silent", "the target's CQ received no completion",
            "目标端 CQ 没有收到任何工作完成"},
    Message{"check.wire", "the wire carried RETH with the target's VA and rkey, then an ACK",
            "线路上出现了带目标端 VA 和 rkey 的 RETH，随后是 ACK"},
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
            "的私有数据也能携带它们"
            "（REQ 中最多 56 字节，REP 中最多 196 字节）"},
    Message{
        "too_small",
        "the target's buffer is {0} bytes, this WRITE needs {1}: give both processes the same "
        "-s and --offset",
        "目标端缓冲区只有 {0} 字节，而这次 WRITE 需要 {1} 字节：请给两个进程相同的 -s 和 --offset"},
    Message{"wait_done",
            "the target cannot see the WRITE arrive: it looks at its memory once the writer says "
            "it is done (\"done\" over TCP, or with --cm the writer's disconnect)",
            "目标端看不到 WRITE 何时到达：要等写入端表示已完成（通过 TCP 发来“done”，或在 --cm 时"
            "由写入端断开连接）之后，才去检查自己的内存"},
    Message{"try.1",
            "-s 4096 -m 1024: WRITE First, Middle, Middle, Last; only the First carries RETH",
            "-s 4096 -m 1024：WRITE First、Middle、Middle、Last；只有 First 携带 RETH"},
    Message{"try.2", "rdmapcap decode {}: the RETH fields, and the DMA length against the payload",
            "rdmapcap decode {}：查看 RETH 各字段，以及 DMA 长度与载荷的对照"},
    Message{"try.3", "lab05-write-imm: the same WRITE, but the target is told",
            "lab05-write-imm：同样的 WRITE，但目标端会得到通知"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab02

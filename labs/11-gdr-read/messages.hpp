// Lab 11's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab11 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{
        "desc",
        "Lab 11: TensorFlow GDR. The owner of a tensor answers a request with the tensor's "
        "address, rkey and a tensor key; the receiver pulls the bytes with one RDMA READ, "
        "without the owner's CPU, and releases the buffer with an empty WRITE with immediate "
        "= the tensor key.",
        "实验 11：TensorFlow GDR。张量的持有端用张量的地址、rkey 和张量键回应请求；接收端用一次 "
        "RDMA READ 拉取数据，无需持有端 CPU 参与，再用一个立即数为张量键的空的带立即数 WRITE "
        "释放该缓冲区。"},
    Message{"opt.size", "bytes of the tensor (float32, a multiple of 4)",
            "张量的字节数（float32，须为 4 的倍数）"},
    Message{"opt.requests", "how many training steps request the tensor", "请求该张量的训练步数"},
    Message{"bad_size", "--size {} is not a multiple of 4 (the tensor holds float32 values)",
            "--size {} 不是 4 的倍数（张量中是 float32 数值）"},
    Message{"receiver", "receiver", "接收端"},
    Message{"owner", "owner", "持有端"},
    Message{"step.backend", "choose where the RDMA traffic runs", "选择 RDMA 流量在哪里运行"},
    Message{"step.resources", "open both workers; a small MR holds the control message slots",
            "打开两个 worker；一个小的 MR 存放控制消息槽位"},
    Message{"step.pools", "register the tensor memory once, as GDR's allocator visitors do",
            "像 GDR 的分配器回调那样，一次性注册张量内存"},
    Message{"why.pools",
            "the owner's pool allows REMOTE_READ: the peer's NIC will read the tensor from it. "
            "The receiver's pool needs only LOCAL_WRITE: its own NIC writes the READ's data there",
            "持有端的内存池允许 REMOTE_READ：对端网卡将从这里读取张量。接收端的内存池只需 "
            "LOCAL_WRITE：由它自己的网卡把 READ 的数据写进去"},
    Message{"step.connect", "connect the QPs; post receive WQEs for the control messages",
            "连接 QP；为控制消息提交接收 WQE"},
    Message{"why.control",
            "TF sends the request and the RemoteMemoryRegion over gRPC; in one process they are "
            "SEND/RECV messages on the same RC QP, unsignaled so that they leave no completion "
            "on the sender's CQ",
            "TF 通过 gRPC 发送请求和 RemoteMemoryRegion；在单个进程中，它们是同一个 RC QP 上的 "
            "SEND/RECV 消息，且不产生工作完成，因此不会在发送方的 CQ 上留下记录"},
    Message{"step.request", "training step {0} of {1}: the receiver asks for the tensor",
            "第 {0} 个训练步（共 {1} 步）：接收端请求张量"},
    Message{"act", "[{0} µs] {1} CPU: {2}", "[{0} µs] {1} CPU：{2}"},
    Message{"act.start", "RecvTensor for step {0}: send the request on the control channel",
            "第 {0} 步的 RecvTensor：在控制通道上发送请求"},
    Message{"act.request",
            "request for step {0}: take a reference to the tensor's buffer, tensor key {1}, "
            "answer with the region {2} rkey {3}",
            "第 {0} 步的请求：为张量缓冲区增加一个引用，分配张量键 {1}，并以区域 {2}、rkey {3} "
            "作答"},
    Message{"post.region", "  owner sends the response ({0} bytes); its CPU has nothing more to do",
            "  持有端发出响应（{0} 字节）；它的 CPU 再无事可做"},
    Message{"act.region",
            "the region of tensor key {0}: {1} rkey {2}, {3} bytes; allocate the result tensor "
            "and pull it",
            "张量键 {0} 的区域：{1}，rkey {2}，{3} 字节；分配结果张量并把数据拉过来"},
    Message{"post.read",
            "  receiver posts RDMA READ of {0} bytes from {1} rkey {2} (unsignaled), then WRITE "
            "with immediate {3}, 0 bytes, IBV_SEND_FENCE|IBV_SEND_SIGNALED",
            "  接收端提交 RDMA READ，从 {1}（rkey {2}）读取 {0} "
            "字节（不产生工作完成），随后提交立即数为 "
            "{3} 的带立即数 WRITE，0 字节，IBV_SEND_FENCE|IBV_SEND_SIGNALED"},
    Message{"act.done",
            "the release completed, so the READ before it did: the tensor is here, {0:.3f} µs "
            "after the request",
            "释放操作已完成，因此它之前的 READ 也已完成：张量已到达，距请求 {0:.3f} µs"},
    Message{"act.release",
            "imm {0}: the receiver is done with tensor key {0}: drop the reference (lent for "
            "{1:.3f} µs)",
            "立即数 {0}：接收端已用完张量键 {0}：释放引用（借出了 {1:.3f} µs）"},
    Message{"act.unknown", "an immediate {0} that names no lent buffer",
            "立即数 {0} 不对应任何借出的缓冲区"},
    Message{"act.bad", "an unexpected completion or message", "意外的工作完成或消息"},
    Message{"hung", "nothing more happens: the exchange is stuck", "不再有任何进展：交换卡住了"},
    Message{"owner_idle",
            "while the buffer was lent the owner's CQ saw {0} completion(s) besides the release",
            "在缓冲区借出期间，除释放操作外，持有端的 CQ 上出现了 {0} 个工作完成"},
    Message{"step.verify", "check the outcome", "检查结果"},
    Message{"check.completions", "every work completion on both sides succeeded",
            "双方的每个工作完成都成功"},
    Message{"check.tensor", "every result tensor holds the bytes of the owner's tensor of its step",
            "每个结果张量都与持有端该步的张量逐字节相同"},
    Message{"check.idle", "the owner's CQ stayed empty from the response until the release arrived",
            "从发出响应到释放操作到达，持有端的 CQ 一直为空"},
    Message{"cpu", "CPU work: {0} handled {1} completion(s), {2} handled {3}; tensor copies: 0",
            "CPU 工作量：{0}处理了 {1} 个工作完成，{2}处理了 {3} 个；张量复制：0 次"},
    Message{"step.wire",
            "the control messages, the READ and the release, read back from the capture",
            "从抓包中读回的控制消息、READ 和释放操作"},
    Message{"dir.rx", "receiver -> owner", "接收端 -> 持有端"},
    Message{"dir.ow", "owner -> receiver", "持有端 -> 接收端"},
    Message{"wire.request", "frame {0} {1}: SEND, {2} bytes: RecvTensorRequest, step {3}",
            "帧 {0} {1}：SEND，{2} 字节：RecvTensorRequest，第 {3} 步"},
    Message{"wire.region",
            "frame {0} {1}: SEND, {2} bytes: RemoteMemoryRegion host {3} port {4} addr {5} rkey "
            "{6} tensor_key {7}",
            "帧 {0} {1}：SEND，{2} 字节：RemoteMemoryRegion host {3} port {4} addr {5} rkey {6} "
            "tensor_key {7}"},
    Message{"wire.read",
            "frame {0} {1}: RDMA READ Request PSN {2}, {3} bytes: {4} response packet(s) expected",
            "帧 {0} {1}：RDMA READ Request，PSN {2}，{3} 字节：应有 {4} 个响应报文"},
    Message{"wire.response", "frame {0} {1}: {2} PSN {3}, {4} bytes",
            "帧 {0} {1}：{2}，PSN {3}，{4} 字节"},
    Message{"wire.release",
            "frame {0} {1}: release, WRITE with immediate PSN {2}, imm {3}, {4} bytes",
            "帧 {0} {1}：释放，带立即数的 WRITE，PSN {2}，立即数 {3}，{4} 字节"},
    Message{"wire.window",
            "  the owner's NIC sent the READ data at {0:.3f}..{1:.3f} µs; the buffer was lent at "
            "{2:.3f} µs and released at {3:.3f} µs",
            "  持有端网卡在 {0:.3f}..{1:.3f} µs 发出 READ 数据；缓冲区在 {2:.3f} µs 借出，在 "
            "{3:.3f} µs "
            "释放"},
    Message{"check.control",
            "each request and each RemoteMemoryRegion went as one SEND and decodes back",
            "每个请求和每个 RemoteMemoryRegion 都以一个 SEND 发出，且能解码回来"},
    Message{"check.read",
            "one READ per tensor, its RETH naming the region's address, rkey and length",
            "每个张量一次 READ，其 RETH 指明区域的地址、rkey 和长度"},
    Message{"check.psn",
            "the READ responses carry the request's PSN and the ones after it; the release takes "
            "the next PSN",
            "READ 响应依次使用请求的 PSN 及其后续 PSN；释放操作使用再下一个 PSN"},
    Message{"check.release", "each release is an empty WRITE with immediate = the tensor key",
            "每个释放操作都是立即数为张量键的空的带立即数 WRITE"},
    Message{"check.window", "the owner's NIC served each READ while its CPU waited for the release",
            "持有端 CPU 等待释放期间，由其网卡完成了每次 READ"},
    Message{
        "measure",
        "on the wire: {0} packets, {1} bytes; {2} control messages ({3} bytes); {4} READ "
        "request(s), {5} READ response packet(s)",
        "线路上：{0} 个报文，{1} 字节；{2} 条控制消息（{3} 字节）；{4} 个 READ 请求，{5} 个 READ "
        "响应报文"},
    Message{"try.1", "-n 3: tensor keys 0, 1, 2 in the ImmDt of three releases",
            "-n 3：三个释放操作的 ImmDt 中依次是张量键 0、1、2"},
    Message{"try.2",
            "-s 65536 -m 4096: still one READ request, now 16 response packets; the owner's CPU "
            "still handles two completions per tensor",
            "-s 65536 -m 4096：仍然只有一个 READ 请求，现在有 16 个响应报文；持有端 CPU "
            "每个张量仍只处理"
            "两个工作完成"},
    Message{"try.3", "rdmapcap decode {}: the READ's RETH and the release's ImmDt",
            "rdmapcap decode {}：查看 READ 的 RETH 与释放操作的 ImmDt"},
    Message{"step.compare",
            "the same {0}-byte tensor, {1} step(s), the lab 10 way (meta-data unchanged), on a "
            "fabric of its own",
            "同一个 {0} 字节的张量、{1} 个训练步，按实验 10 "
            "的方式（元数据未变），在另一个独立的网络上运行"},
    Message{"check.verbs_run", "lab 10's exchange, run for comparison, delivered every tensor",
            "用于比较的实验 10 交换送达了每个张量"},
    Message{"cmp.messages",
            "control messages: lab 10 {0} ({1} bytes, each answered by an ACK write), lab 11 {2} "
            "({3} bytes)",
            "控制消息：实验 10 为 {0} 条（{1} 字节，每条都有一个 ACK 写入作答），实验 11 为 {2} "
            "条（{3} "
            "字节）"},
    Message{"cmp.packets",
            "on the wire: lab 10 {0} packets, {1} bytes; lab 11 {2} packets, {3} bytes",
            "线路上：实验 10 为 {0} 个报文、{1} 字节；实验 11 为 {2} 个报文、{3} 字节"},
    Message{"cmp.copies", "tensor copies by a CPU: lab 10 {0}, lab 11 {1}",
            "CPU 复制张量的次数：实验 10 为 {0}，实验 11 为 {1}"},
    Message{
        "cmp.owner",
        "the tensor owner's CPU (lab 10's responder, lab 11's owner) handled {0} and {1} "
        "completion(s), at (µs):",
        "张量持有方的 CPU（实验 10 的响应端、实验 11 的持有端）分别处理了 {0} 个和 {1} 个工作完成，"
        "时刻（µs）为："},
    Message{"cmp.receiver",
            "the receiving CPU (lab 10's requester, lab 11's receiver) handled {0} and {1} "
            "completion(s), at (µs):",
            "接收方的 CPU（实验 10 的请求端、实验 11 的接收端）分别处理了 {0} 个和 {1} 个工作完成，"
            "时刻（µs）为："},
    Message{"cmp.lab10", "lab 10", "实验 10"},
    Message{"cmp.lab11", "lab 11", "实验 11"},
    Message{
        "cmp.time",
        "round trips the receiver waited for, and virtual time until the tensor was usable: "
        "lab 10 {0}, {1:.3f} µs; lab 11 {2}, {3:.3f} µs",
        "接收方等待的往返次数，以及张量可用前的虚拟时间：实验 10 为 {0} 次、{1:.3f} µs；实验 11 为 "
        "{2} 次、{3:.3f} µs"},
    Message{"check.owner_cpu",
            "the GDR owner's CPU handled fewer completions per tensor than lab 10's responder, "
            "and copied nothing",
            "GDR 持有端 CPU 每个张量处理的工作完成比实验 10 的响应端少，且没有复制任何数据"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab11

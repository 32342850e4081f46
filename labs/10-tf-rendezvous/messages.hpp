// Lab 10's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab10 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{
        "desc",
        "Lab 10: TensorFlow's verbs rendezvous. The requester asks for a tensor with a "
        "control message written into the responder's message buffer; the responder compares "
        "the tensor's meta-data with the requester's cached copy and either writes the tensor "
        "straight into the result tensor (WRITE with immediate = request index), or sends a "
        "meta-data update and waits for a re-request, or reports an error.",
        "实验 10：TensorFlow 的 verbs rendezvous。请求端把一条控制消息写入响应端的消息缓冲区来请求"
        "张量；响应端把张量的元数据与请求端缓存的副本比较，然后要么把张量直接写进结果张量（带立即数"
        "的 "
        "WRITE，立即数为请求索引），要么发回元数据更新并等待重新请求，要么报告错误。"},
    Message{
        "opt.scenario",
        "unchanged: the cached meta-data is current; changed: the tensor grew since the "
        "cached step; error: the responder cannot serve the request",
        "unchanged：缓存的元数据就是最新的；changed：张量比缓存中那一步时变大了；error：响应端无法"
        "处理该请求"},
    Message{"opt.size", "bytes of the tensor (float32, a multiple of 4)",
            "张量的字节数（float32，须为 4 的倍数）"},
    Message{"opt.requests", "how many training steps request the tensor", "请求该张量的训练步数"},
    Message{"bad_size", "--size {} is not a multiple of 4 (the tensor holds float32 values)",
            "--size {} 不是 4 的倍数（张量中是 float32 数值）"},
    Message{"requester", "requester", "请求端"},
    Message{"responder", "responder", "响应端"},
    Message{"step.backend", "choose where the RDMA traffic runs", "选择 RDMA 流量在哪里运行"},
    Message{"step.resources",
            "open both workers; each registers its tx and rx message buffers for REMOTE_WRITE",
            "打开两个 worker；各自以 REMOTE_WRITE 权限注册发送和接收消息缓冲区"},
    Message{"why.msgbuf",
            "one buffer is {0} bytes: a {1}-byte message plus up to {2} bytes of error status. "
            "The first half of the MR is the tx buffer, the second half the rx buffer the peer "
            "writes into",
            "每个缓冲区 {0} 字节：{1} 字节的消息，加上最多 {2} 字节的错误状态。MR "
            "的前一半是发送缓冲区，"
            "后一半是供对端写入的接收缓冲区"},
    Message{"step.pools", "register the tensor memory once, as TF's allocators do",
            "像 TF 的分配器那样，一次性注册张量内存"},
    Message{"why.pool",
            "tensors are allocated from these pools: a new tensor gets a new address but keeps "
            "the pool's rkey, so no ibv_reg_mr is needed per tensor",
            "张量从这些内存池中分配：新张量得到新地址，但沿用内存池的 rkey，因此不必为每个张量执行 "
            "ibv_reg_mr"},
    Message{"source", "the responder holds tensor float32 {0} ({1} bytes) under the key {2}",
            "响应端持有 float32 {0} 张量（{1} 字节），键为 {2}"},
    Message{"cache",
            "the requester's meta-data cache, from the previous step: float32 {0} ({1} bytes)",
            "请求端的元数据缓存（来自上一步）：float32 {0}（{1} 字节）"},
    Message{"step.connect", "connect the QPs and tell each other where the rx message buffers are",
            "连接 QP，并互相告知接收消息缓冲区的位置"},
    Message{
        "why.rx_exchange",
        "TF exchanges these over gRPC when the channel is set up: afterwards every message is "
        "an RDMA WRITE into the peer's rx buffer",
        "TF 在建立通道时通过 gRPC 交换这些信息：此后每条消息都是写入对端接收缓冲区的 RDMA WRITE"},
    Message{"rx_of", "rx buffer of the {}", "{}的接收缓冲区"},
    Message{"step.recv", "both post receive WQEs for the immediates", "双方为立即数提交接收 WQE"},
    Message{"why.recv",
            "every WRITE with immediate consumes one receive WQE (with no buffer); the polling "
            "thread posts a new one for each it consumes",
            "每个带立即数的 WRITE 都消耗一个接收 WQE（不带缓冲区）；轮询线程每消耗一个就补交一个"},
    Message{"step.request", "training step {0} of {1}: the requester asks for the tensor",
            "第 {0} 个训练步（共 {1} 步）：请求端请求张量"},
    Message{"act", "[{0} µs] {1} CPU: {2}", "[{0} µs] {1} CPU：{2}"},
    Message{"act.start",
            "request #{0}: allocate the result tensor from the cache, float32 {1} ({2} bytes) at "
            "{3} rkey {4}, and send TENSOR_REQUEST",
            "请求 #{0}：按缓存分配结果张量，float32 {1}（{2} 字节），地址 {3}，rkey {4}，然后发送 "
            "TENSOR_REQUEST"},
    Message{"post.message", "  {0} writes {1} ({2} bytes) into the peer's rx buffer, imm {3}",
            "  {0}把 {1}（{2} 字节）写入对端接收缓冲区，立即数 {3}"},
    Message{"act.ack", "imm {0}: the peer has read our message, the tx buffer is free again",
            "立即数 {0}：对端已读取我们的消息，发送缓冲区再次空闲"},
    Message{
        "act.request",
        "imm 0xffffffff: a message in the rx buffer: TENSOR_REQUEST #{0}, cached meta-data "
        "float32 {1} ({2} bytes); answer with an ACK",
        "立即数 0xffffffff：接收缓冲区中有一条消息：TENSOR_REQUEST #{0}，缓存的元数据为 float32 "
        "{1}（{2} 字节）；回复 ACK"},
    Message{"why.unchanged",
            "the meta-data match (float32 {0}): write the tensor straight into the result tensor",
            "元数据一致（float32 {0}）：把张量直接写入结果张量"},
    Message{"why.changed",
            "the meta-data differ (cached {0}, now {1}): clone the tensor ({2} bytes copied) and "
            "send META_DATA_UPDATE",
            "元数据不一致（缓存为 {0}，现在为 {1}）：克隆张量（复制 {2} 字节），并发送 "
            "META_DATA_UPDATE"},
    Message{"why.error",
            "the key names device incarnation {0}, but this device is incarnation {1} (the "
            "worker was restarted): send ERROR_STATUS",
            "键中的设备 incarnation 为 {0}，而本设备为 {1}（worker 已重启）：发送 ERROR_STATUS"},
    Message{
        "post.tensor",
        "  responder writes the tensor: WRITE with immediate, {0} bytes to {1} rkey {2}, imm "
        "{3} = the request index",
        "  响应端写出张量：带立即数的 WRITE，{0} 字节写到 {1}，rkey {2}，立即数 {3} 即请求索引"},
    Message{
        "act.update",
        "imm 0xffffffff: META_DATA_UPDATE #{0}: float32 {1} ({2} bytes); answer with an ACK, "
        "update the cache, re-allocate, send TENSOR_RE_REQUEST",
        "立即数 0xffffffff：META_DATA_UPDATE #{0}：float32 {1}（{2} 字节）；回复 ACK，更新缓存，"
        "重新分配，发送 TENSOR_RE_REQUEST"},
    Message{"realloc", "  the new result tensor: {0} bytes at {1} (same pool, same rkey)",
            "  新的结果张量：{0} 字节，地址 {1}（同一内存池，同一 rkey）"},
    Message{
        "act.rerequest",
        "imm 0xffffffff: TENSOR_RE_REQUEST #{0} to {1} rkey {2}; answer with an ACK and "
        "write the clone there",
        "立即数 0xffffffff：TENSOR_RE_REQUEST #{0}，目标 {1}，rkey {2}；回复 ACK，并把克隆写过去"},
    Message{"act.tensor",
            "imm {0}: a tensor write of {1} bytes, request #{2}: the result tensor is complete",
            "立即数 {0}：{1} 字节的张量写入，请求 #{2}：结果张量已完整"},
    Message{"act.error", "imm 0xffffffff: ERROR_STATUS #{0}: code {1} \"{2}\"; the request fails",
            "立即数 0xffffffff：ERROR_STATUS #{0}：错误码 {1}“{2}”；请求失败"},
    Message{"act.destroy", "the tensor write of request #{0} completed: release the source",
            "请求 #{0} 的张量写入已完成：释放源张量"},
    Message{"act.unknown", "an immediate {0} that names no pending request",
            "立即数 {0} 不对应任何待处理的请求"},
    Message{"act.bad_message", "the rx buffer holds no valid message",
            "接收缓冲区中没有有效的消息"},
    Message{"hung", "nothing more happens: the exchange is stuck", "不再有任何进展：交换卡住了"},
    Message{"done.tensor",
            "request #{0} done in {1:.3f} µs of virtual time, {2} round trip(s) of the requester",
            "请求 #{0} 完成，用时 {1:.3f} µs 虚拟时间，请求端经历 {2} 个往返"},
    Message{"done.error", "request #{0} failed after {1:.3f} µs of virtual time",
            "请求 #{0} 在 {1:.3f} µs 虚拟时间后失败"},
    Message{"step.verify", "check the outcome", "检查结果"},
    Message{"check.completions", "every work completion on both sides succeeded",
            "双方的每个工作完成都成功"},
    Message{"check.tensor",
            "every result tensor holds the bytes of the responder's tensor of its step",
            "每个结果张量都与响应端该步的张量逐字节相同"},
    Message{"check.error",
            "every request ended with ERROR_STATUS (ABORTED) and no tensor was written",
            "每个请求都以 ERROR_STATUS（ABORTED）结束，且没有写入任何张量"},
    Message{"check.clone", "the changed meta-data cost one clone and updated the requester's cache",
            "元数据变化导致一次克隆，并更新了请求端的缓存"},
    Message{
        "cpu",
        "CPU work: {0} handled {1} completion(s), {2} handled {3}; tensor copies: {4} ({5} bytes)",
        "CPU 工作量：{0}处理了 {1} 个工作完成，{2}处理了 {3} 个；张量复制：{4} 次（{5} 字节）"},
    Message{"step.wire", "the messages, read back from the capture", "从抓包中读回的消息"},
    Message{"dir.rq", "requester -> responder", "请求端 -> 响应端"},
    Message{"dir.rs", "responder -> requester", "响应端 -> 请求端"},
    Message{"wire.noimm", "frame {0} {1}: {2} without an immediate", "帧 {0} {1}：{2}，没有立即数"},
    Message{"wire.ack", "frame {0} {1}: ACK, imm {2}, {3} bytes",
            "帧 {0} {1}：ACK，立即数 {2}，{3} 字节"},
    Message{"wire.bad", "frame {0} {1}: {2} bytes that are not a valid message",
            "帧 {0} {1}：{2} 字节，不是有效的消息"},
    Message{"wire.message", "frame {0} {1}: message, imm {2}, {3} bytes: {4}",
            "帧 {0} {1}：消息，立即数 {2}，{3} 字节：{4}"},
    Message{"dump.head", "type (4 bytes), name_size (2), the name...",
            "type（4 字节）、name_size（2 字节）、name……"},
    Message{"wire.tensor", "frame {0} {1}: tensor ({2}), imm {3}, {4} bytes to {5} rkey {6}",
            "帧 {0} {1}：张量（{2}），立即数 {3}，{4} 字节写到 {5}，rkey {6}"},
    Message{"check.sequence",
            "the messages and tensor writes on the wire follow the protocol for this scenario",
            "线路上的消息与张量写入符合该场景的协议"},
    Message{"check.imm",
            "every WRITE carried an immediate: 0xffffffff message, 0xfffffffe ACK, else a request "
            "index",
            "每个 WRITE 都带有立即数：0xffffffff 为消息，0xfffffffe 为 ACK，其他为请求索引"},
    Message{"check.acks",
            "every message was answered by one empty ACK write in the other direction",
            "每条消息都在反方向得到一个空的 ACK 写入"},
    Message{"check.fields",
            "each tensor write went to the address and rkey of its latest (re-)request, with the "
            "length of the meta-data",
            "每次张量写入的目标都是其最近一次（重新）请求中的地址和 rkey，长度与元数据一致"},
    Message{"measure",
            "on the wire: {0} packets, {1} bytes; {2} control messages and {3} ACK writes; {4} "
            "bytes of messages",
            "线路上：{0} 个报文，{1} 字节；{2} 条控制消息和 {3} 个 ACK 写入；消息共 {4} 字节"},
    Message{"try.1", "--scenario unchanged: one request, one tensor write, nothing else",
            "--scenario unchanged：一个请求、一次张量写入，别无其他"},
    Message{"try.2", "--scenario error: ERROR_STATUS carries a protobuf status after byte 583",
            "--scenario error：ERROR_STATUS 在第 583 字节之后携带 protobuf 格式的状态"},
    Message{"try.3", "-s 65536 -n 4: the meta-data update happens once, the cache serves the rest",
            "-s 65536 -n 4：元数据更新只发生一次，之后都由缓存命中"},
    Message{"try.4",
            "rdmapcap decode {}: the RETH of each tensor write and the ImmDt of each WRITE",
            "rdmapcap decode {}：查看每次张量写入的 RETH 与每个 WRITE 的 ImmDt"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab10

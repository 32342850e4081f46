// Lab 12's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab12 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{"desc",
            "Lab 12: one-sided semantics on top of verbs, as MSCCL++'s port channel builds them: "
            "put (RDMA WRITE), signal (the peer's epoch counter raised by FETCH_AND_ADD or "
            "written), wait (poll the local counter), flush (wait for the sender's completions "
            "before reusing the buffer). --break shows on the wire what goes wrong when the rules "
            "are broken.",
            "实验 12：在 verbs 之上构建单边语义，做法与 MSCCL++ 的 port channel 相同：put（RDMA "
            "WRITE）、signal（用 FETCH_AND_ADD "
            "或写入的方式推进对端的纪元计数器）、wait（轮询本地计数器）、"
            "flush（复用缓冲区之前等待发送端的工作完成）。--break "
            "会在线路上展示违反这些规则时出什么问题。"},
    Message{"opt.size", "bytes per put", "每次 put 的字节数"},
    Message{"opt.rounds", "rounds of put, signal, wait, read", "put、signal、wait、读取的轮数"},
    Message{"opt.signal",
            "how signal raises the peer's semaphore: fadd (RDMA FETCH_AND_ADD of 1, as MSCCL++ "
            "does over InfiniBand) or write (RDMA WRITE of the new value)",
            "signal 推进对端信号量的方式：fadd（RDMA FETCH_AND_ADD 加 1，MSCCL++ 在 InfiniBand "
            "上的做法）"
            "或 write（用 RDMA WRITE 写入新值）"},
    Message{"opt.break",
            "break a rule: none, reuse (overwrite the source before flush), early-read (read the "
            "destination before wait)",
            "违反一条规则：none、reuse（flush 之前就改写源缓冲区）、early-read（wait "
            "之前就读取目标缓冲区）"},
    Message{"sender", "sender", "发送端"},
    Message{"receiver", "receiver", "接收端"},
    Message{"step.backend", "choose where the RDMA traffic runs", "选择 RDMA 流量在哪里运行"},
    Message{
        "step.resources",
        "open the devices; the receiver registers its semaphore and buffer for REMOTE_WRITE and "
        "REMOTE_ATOMIC",
        "打开设备；接收端以 REMOTE_WRITE 和 REMOTE_ATOMIC 权限注册信号量和缓冲区"},
    Message{"why.layout",
            "the receiver's memory holds its inbound semaphore (8 bytes at offset 0) and the data "
            "(at offset {0}); the sender's, its outbound token and the slot where FETCH_AND_ADD "
            "returns the old value, then the data (at offset {0})",
            "接收端内存中是它的入站信号量（偏移 0 处的 8 字节）和数据（偏移 {0} "
            "处）；发送端内存中是它的"
            "出站令牌、FETCH_AND_ADD 返回旧值的位置，然后是数据（偏移 {0} 处）"},
    Message{"step.connect", "exchange QPN, PSN, GID and the receiver's memory; connect the QPs",
            "交换 QPN、PSN、GID 以及接收端的内存信息；连接 QP"},
    Message{
        "why.exchange",
        "the sender now knows the receiver's VA and rkey: where the data goes and where its "
        "semaphore is. From here on the receiver posts nothing: every operation is one-sided",
        "发送端现在知道了接收端的 VA 和 rkey：数据写到哪里，信号量在哪里。从这里开始接收端不再提交"
        "任何操作：所有操作都是单边的"},
    Message{
        "break.reuse",
        "--break reuse: the sender writes its next data into the source buffer right after "
        "posting put and signal, before flush",
        "--break reuse：发送端在提交 put 和 signal 之后、flush 之前，立即把下一份数据写进源缓冲区"},
    Message{"break.early",
            "--break early-read: the receiver reads the destination before wait tells it the data "
            "is there",
            "--break early-read：接收端在 wait 告诉它数据已到之前就读取目标缓冲区"},
    Message{"step.round", "round {0}: the sender puts and signals",
            "第 {0} 轮：发送端执行 put 和 signal"},
    Message{
        "early.read",
        "receiver reads early: semaphore {0} (epoch {1} not reached), {2} of {3} bytes are "
        "not the put's data yet",
        "接收端提前读取：信号量为 {0}（尚未到达纪元 {1}），{3} 字节中有 {2} 字节还不是 put 的数据"},
    Message{
        "why.signal",
        "same QP, posted after the put: RC executes it after every packet of the put, in PSN "
        "order. That orders the signal after the put; it does not by itself make the put's bytes "
        "visible to the receiver (only a completion or a flush READ guarantees that), though on "
        "this simulator they are",
        "在同一个 QP 上、在 put 之后提交：RC 按 PSN 顺序在 put "
        "的全部报文之后执行它。这只保证信号排在 "
        "put 之后，并不单凭这一点保证 put 的数据对接收端可见（只有工作完成或 flush READ "
        "才能保证），"
        "虽然在本模拟器上数据已经可见"},
    Message{"reuse.overwrite",
            "sender overwrites the source buffer with round {} data now, before flush",
            "发送端现在就用第 {} 轮的数据改写源缓冲区，而此时还没有 flush"},
    Message{"step.wait", "receiver, round {0}: wait for epoch {1}, then read",
            "接收端，第 {0} 轮：等待纪元 {1}，然后读取"},
    Message{"step.flush", "sender: flush round {}", "发送端：第 {} 轮的 flush"},
    Message{"flush.fetched", "FETCH_AND_ADD returned the old value {}",
            "FETCH_AND_ADD 返回的旧值为 {}"},
    Message{"flush.done",
            "every operation posted so far has completed: the NIC has read the source buffer, "
            "which may now be reused",
            "到目前为止提交的所有操作都已完成：网卡已经读完源缓冲区，现在可以复用它了"},
    Message{"wait.done", "receiver: wait returns with semaphore {0} (waiting for {1})",
            "接收端：wait 返回，信号量为 {0}（等待的值为 {1}）"},
    Message{"read.result",
            "receiver reads the destination: {0} of {1} bytes are the put's data; {2} byte(s) are "
            "the sender's next data",
            "接收端读取目标缓冲区：{1} 字节中有 {0} 字节是 put 的数据；有 {2} "
            "字节是发送端的下一份数据"},
    Message{"step.verify", "check the outcome", "检查结果"},
    Message{"check.flush", "all {} operations (put and signal) completed successfully at flush",
            "flush 时全部 {} 个操作（put 和 signal）都成功完成"},
    Message{"check.semaphore", "the receiver's semaphore counted {} epochs, and each wait returned",
            "接收端的信号量共计 {} 个纪元，每次 wait 都已返回"},
    Message{"check.fetch",
            "FETCH_AND_ADD returned 0, 1, 2, ...: each signal saw the previous epoch",
            "FETCH_AND_ADD 依次返回 0、1、2……：每次 signal 看到的都是前一个纪元"},
    Message{"check.bytes",
            "in all {} rounds the receiver, reading after wait, found exactly the put's data",
            "在全部 {} 轮中，接收端在 wait 之后读取，得到的正是 put 的数据"},
    Message{"reuse.seen",
            "the receiver, after a correct wait, holds {} byte(s) of the sender's next data: the "
            "signal said the put was done, but what arrived is not what was put",
            "接收端在正确地 wait 之后，缓冲区里有 {} 字节是发送端的下一份数据：signal 表示 put "
            "已经完成，"
            "但到达的并不是 put 时的数据"},
    Message{
        "reuse.lucky",
        "this time the NIC had built every packet before the overwrite (a put this small fits "
        "in what it prepares ahead): the data arrived intact by luck. Try a larger -s",
        "这一次网卡在改写之前就已经构造好了全部报文（这么小的 put 完全落在网卡提前准备的范围内）："
        "数据完好到达只是运气。试试更大的 -s"},
    Message{"check.early_stale",
            "every early read found bytes that were not the put's data yet, with the semaphore "
            "still below the epoch",
            "每次提前读取都看到了尚不是 put 数据的字节，而当时信号量还没到达该纪元"},
    Message{"race.reuse",
            "on a real device this is a race: this run found {0} byte(s) different from the put's "
            "data, {1} of them the sender's next data. Another run may find none, or more",
            "在真实设备上这是一个竞争条件：本次运行发现 {0} 字节与 put 的数据不同，其中 {1} "
            "字节是发送端的"
            "下一份数据。另一次运行可能一个也没有，也可能更多"},
    Message{"race.early",
            "on a real device this is a race: the early reads of this run found {} byte(s) not yet "
            "written. Another run may differ",
            "在真实设备上这是一个竞争条件：本次运行的提前读取发现有 {} "
            "字节尚未写入。另一次运行的结果可能不同"},
    Message{"race.verbs",
            "without the simulator's capture the lab cannot show which packets carried what; "
            "capture on the wire to see it",
            "没有模拟器的抓包，本实验无法展示每个报文携带了什么；请在线路上抓包查看"},
    Message{"check.order",
            "on the wire, each round: the put's packets, then the signal ({}) with the next PSN, "
            "to the semaphore's address",
            "线路上每一轮：先是 put 的报文，然后是 signal（{}），PSN 紧随其后，目标为信号量的地址"},
    Message{"check.atomic_ack",
            "each FetchAdd was answered by an Atomic Acknowledge carrying the old value of the "
            "semaphore",
            "每个 FetchAdd 都得到一个携带信号量旧值的 Atomic Acknowledge"},
    Message{"check.wire_payload",
            "each round, the receiver's buffer holds exactly what the put's packets carried",
            "每一轮中，接收端缓冲区里的正是 put 的报文所携带的内容"},
    Message{"check.wire_original", "every packet of every put carried the data of its round",
            "每次 put 的每个报文携带的都是本轮的数据"},
    Message{
        "wire.reuse",
        "on the wire: {0} of {1} put packet(s) carried the overwritten bytes: the NIC built "
        "them after the sender had changed the buffer",
        "线路上：{1} 个 put 报文中有 {0} 个携带了被改写后的字节：网卡构造这些报文时，发送端已经改了"
        "缓冲区"},
    Message{
        "check.reuse_wire",
        "on the wire, each put's packets carried the original bytes up to the overwrite and "
        "the new bytes after it, and the receiver holds exactly that",
        "线路上，每次 put 的报文在改写之前携带原来的字节，改写之后携带新的字节，而接收端缓冲区里的"
        "正是这些内容"},
    Message{"wire.reuse.round",
            "round {0}: PSN {1}..{2} carried the round's data, PSN {3}..{4} the overwritten bytes",
            "第 {0} 轮：PSN {1}..{2} 携带本轮的数据，PSN {3}..{4} 携带被改写后的字节"},
    Message{"wire.reuse.all", "round {0}: PSN {1}..{2} all carried the overwritten bytes",
            "第 {0} 轮：PSN {1}..{2} 携带的全是被改写后的字节"},
    Message{"wire.reuse.none", "round {0}: PSN {1}..{2} all carried the round's data",
            "第 {0} 轮：PSN {1}..{2} 携带的全是本轮的数据"},
    Message{"wire.early", "on the wire: {} put packet(s) arrived after the receiver's early read",
            "线路上：有 {} 个 put 报文在接收端提前读取之后才到达"},
    Message{"check.early_wire", "on the wire, part of the put arrived after the early read",
            "线路上，put 的一部分在提前读取之后才到达"},
    Message{"try.1", "--break reuse: which packets carried the sender's next data",
            "--break reuse：看看哪些报文携带了发送端的下一份数据"},
    Message{"try.2", "--break early-read: the read catches the put half-way",
            "--break early-read：读取时 put 才进行到一半"},
    Message{"try.3", "--signal write: the epoch as an 8-byte RDMA WRITE instead of a FetchAdd",
            "--signal write：用 8 字节的 RDMA WRITE 代替 FetchAdd 来传递纪元"},
    Message{"try.4", "rdmapcap decode {}: the AtomicETH and the AtomicAckETH",
            "rdmapcap decode {}：查看 AtomicETH 与 AtomicAckETH"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab12

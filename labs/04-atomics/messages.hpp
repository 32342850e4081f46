// Lab 04's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab04 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{
        "desc",
        "Lab 04: atomics. FetchAdd and CmpSwap on an 8-byte aligned word of remote memory: the "
        "responder's NIC reads, modifies and writes it as one operation and returns the "
        "original value. Two QPs race to increment one counter.",
        "实验 04：原子操作。对远端内存中一个 8 字节对齐的字执行 FetchAdd 和 CmpSwap：响应端网卡把"
        "读、改、写作为一个不可分割的操作完成，并返回原值。两个 QP 竞争递增同一个计数器。"},
    Message{"opt.iters", "FetchAdds per QP", "每个 QP 执行的 FetchAdd 次数"},
    Message{"opt.add", "value each FetchAdd adds", "每次 FetchAdd 加上的值"},
    Message{"client", "client {}", "客户端 {}"},
    Message{"server", "counter owner", "计数器所在端"},
    Message{"server_for", "counter owner (QP for client {})",
            "计数器所在端（对应客户端 {} 的 QP）"},
    Message{"step.backend", "choose where the RDMA traffic runs", "选择 RDMA 流量在哪里运行"},
    Message{
        "step.resources",
        "open the devices: two clients, and the counter's owner with one QP per client; the "
        "counter is registered for REMOTE_ATOMIC",
        "打开设备：两个客户端，以及计数器所在端（每个客户端对应一个 QP）；计数器以 REMOTE_ATOMIC "
        "权限注册"},
    Message{"why.align", "atomics work on one 8-byte word at an 8-byte aligned address",
            "原子操作作用于 8 字节对齐地址上的一个 8 字节字"},
    Message{"step.connect", "connect each client to its QP on the owner",
            "把每个客户端连接到所在端上对应的 QP"},
    Message{"step.fetch_add", "both clients FetchAdd the same counter, interleaved",
            "两个客户端交替对同一个计数器执行 FetchAdd"},
    Message{
        "why.fetch_add",
        "FetchAdd returns the value before the addition into the local SGE (8 bytes); no "
        "increment is lost even though two QPs race, because the owner's NIC serialises them",
        "FetchAdd 把加法之前的值写回本地 SGE（8 字节）；尽管两个 QP 在竞争，增量也不会丢失，因为"
        "所在端网卡会把它们串行执行"},
    Message{"step.cmp_swap", "CmpSwap: swap only if the counter still holds the expected value",
            "CmpSwap：仅当计数器仍等于期望值时才交换"},
    Message{
        "why.cmp_swap",
        "the first CmpSwap expects the current value and succeeds; the second expects a stale "
        "value and fails — both return the value they found, which is how the caller knows",
        "第一个 CmpSwap 期望的是当前值，因此成功；第二个期望的是过期的值，因此失败——两者都返回它们"
        "看到的值，调用者据此判断成败"},
    Message{"cas_result", "CmpSwap(compare={0}, swap={1}) found {2}: {3}",
            "CmpSwap（比较值={0}，交换值={1}）看到 {2}：{3}"},
    Message{"swapped", "swapped", "已交换"},
    Message{"not_swapped", "not swapped", "未交换"},
    Message{"counter", "the counter now holds {}", "计数器现在的值为 {}"},
    Message{"step.verify", "check the outcome", "检查结果"},
    Message{"check.fa_ok", "every FetchAdd completed with IBV_WC_SUCCESS",
            "每个 FetchAdd 都以 IBV_WC_SUCCESS 完成"},
    Message{"check.total", "no increment was lost: counter = clients x iterations x add",
            "没有丢失任何增量：计数器 = 客户端数 × 次数 × 增量"},
    Message{"check.unique", "every FetchAdd saw a different original value",
            "每个 FetchAdd 看到的原值各不相同"},
    Message{"check.cas", "the first CmpSwap swapped, the second did not",
            "第一个 CmpSwap 成功交换，第二个没有"},
    Message{"check.wire",
            "the wire carried AtomicETH requests and ATOMIC Acknowledges with the original values",
            "线路上出现了携带 AtomicETH 的请求，以及带原值的 ATOMIC Acknowledge"},
    Message{"step.exchange",
            "exchange QPN, PSN and GID of both QP pairs over one TCP connection, and the "
            "counter's VA, rkey and length",
            "通过同一条 TCP 连接交换两对 QP 的 QPN、PSN 和 GID，以及计数器的 VA、rkey 和长度"},
    Message{"why.two_process",
            "two QP pairs, two connection messages, one after the other on the same TCP "
            "connection; only the first carries the counter's VA and rkey, which the second QP "
            "uses too (both owner QPs share the PD). Connected out of band only: in band "
            "(rdma_cm) it would take two CM connections, one per QP pair, so this lab has no "
            "--cm",
            "两对 QP、两条连接信息，在同一条 TCP 连接上先后发送；只有第一条携带计数器的 VA 和 "
            "rkey，第二个 QP 也使用它（计数器所在端的两个 QP 共用同一个 PD）。本实验只做带外建连："
            "若用 rdma_cm 带内建连，每对 QP 各需一条 CM 连接，因此本实验不提供 --cm"},
    Message{"owner_waits",
            "the owner's CPU takes no part in an atomic: its NIC executes them; the owner only "
            "waits for the clients' word and then reads the counter in its own memory",
            "原子操作不需要计数器所在端的 CPU 参与，由其网卡执行；所在端只是等待客户端的消息，"
            "然后读取自己内存中的计数器"},
    Message{"guess",
            "the clients cannot read the counter; the last original value plus the increment "
            "says it should now hold {}",
            "客户端无法直接读取计数器；最后一个原值加上增量表明它现在应为 {}"},
    Message{"same_options",
            "the counter holds {0}, {1} was expected: give both processes the same -n and --add",
            "计数器的值为 {0}，预期为 {1}：请给两个进程相同的 -n 和 --add"},
    Message{"too_small", "the owner's counter is {} bytes; an atomic needs 8",
            "计数器所在端的计数器只有 {} 字节；原子操作需要 8 字节"},
    Message{"check.final",
            "the owner's counter holds 1000 at the end: the first CmpSwap swapped, the second "
            "did not",
            "计数器所在端的计数器最终为 1000：第一个 CmpSwap 成功交换，第二个没有"},
    Message{"check.owner_silent",
            "the owner's CQs received no completion: an atomic completes at the requester only",
            "计数器所在端的 CQ 没有收到任何工作完成：原子操作只在请求端产生工作完成"},
    Message{"try.3",
            "--connect with -n 3 against a --listen with -n 5: the owner's total check fails and "
            "says why",
            "用 -n 3 的 --connect 对接 -n 5 的 --listen：计数器所在端的总数检查失败，并说明原因"},
    Message{"try.1", "-n 100: a longer race, still no lost increment",
            "-n 100：更长的竞争，依然没有丢失增量"},
    Message{"try.2", "rdmapcap decode {}: AtomicETH (VA, rkey, add/swap, compare) and AtomicAckETH",
            "rdmapcap decode {}：查看 AtomicETH（VA、rkey、加数/交换值、比较值）和 AtomicAckETH"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab04

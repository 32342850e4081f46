// Lab 03's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab03 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{"call.post_chain", "ibv_post_send(qp, &wr[0])  // {0} READ WRs chained by wr.next",
            "ibv_post_send(qp, &wr[0])  // 用 wr.next 串起的 {0} 个 READ WR"},
    Message{"desc",
            "Lab 03: RDMA READ. The reader sends one small READ Request naming remote memory; the "
            "responder's NIC answers with READ Response packets carrying the data.",
            "实验 03：RDMA READ。读取端发送一个很小的 READ Request "
            "指明远端内存；响应端网卡用携带数据的 "
            "READ Response 报文作答。"},
    Message{"opt.size", "bytes to read per READ", "每次 READ 读取的字节数"},
    Message{"opt.iters", "number of READs posted at once", "一次提交的 READ 数量"},
    Message{"opt.rd_atomic",
            "max_rd_atomic = max_dest_rd_atomic: READs in flight at once (responder resources)",
            "max_rd_atomic = max_dest_rd_atomic：同时在途的 READ 数量（响应端资源）"},
    Message{"reader", "reader", "读取端"},
    Message{"source", "source", "数据源端"},
    Message{"step.backend", "choose where the RDMA traffic runs", "选择 RDMA 流量在哪里运行"},
    Message{"step.resources", "open the devices; the source registers its buffer for REMOTE_READ",
            "打开设备；数据源端以 REMOTE_READ 权限注册缓冲区"},
    Message{"step.exchange", "exchange QPN, PSN, GID — and the source's VA, rkey and length",
            "交换 QPN、PSN、GID——以及数据源端的 VA、rkey 和长度"},
    Message{"step.connect", "connect, with the READ resources on both sides",
            "建立连接，并设置双方的 READ 资源"},
    Message{
        "why.resources",
        "max_rd_atomic (requester, at RTS) bounds the READs and atomics it keeps in flight; "
        "max_dest_rd_atomic (responder, at RTR) is how many it can serve at once. The "
        "responder keeps one resource per READ so that a duplicate READ can be answered again",
        "max_rd_atomic（请求端，RTS 时设置）限制其在途的 READ 和原子操作数量；max_dest_rd_atomic"
        "（响应端，RTR 时设置）是它能同时服务的数量。响应端为每个 READ 保留一份资源，以便对重复的 "
        "READ 再次应答"},
    Message{"step.read", "the reader posts RDMA READ work requests",
            "读取端提交 RDMA READ 工作请求"},
    Message{"why.psn",
            "a READ Request takes one PSN per response packet it will get (ceil(length / MTU)): "
            "the responses carry those PSNs, and the next request skips past them",
            "一个 READ Request 按其将收到的响应报文数（长度 / MTU 向上取整）占用 "
            "PSN：响应报文使用这些 PSN，"
            "下一个请求从其后开始"},
    Message{"step.poll", "poll the reader's CQ", "轮询读取端的 CQ"},
    Message{"step.verify", "check the outcome", "检查结果"},
    Message{"check.read_ok", "every READ completed with IBV_WC_SUCCESS and the right length",
            "每个 READ 都以 IBV_WC_SUCCESS 完成，且长度正确"},
    Message{"check.bytes", "the reader's buffer holds the source's bytes",
            "读取端缓冲区中正是数据源端的数据"},
    Message{"check.source_silent", "the source's CQ received no completion",
            "数据源端 CQ 没有收到任何工作完成"},
    Message{"check.psn", "each READ Request's PSN leaves room for its response packets",
            "每个 READ Request 的 PSN 都为其响应报文留出了空间"},
    Message{"check.wire", "the wire carried READ Requests and the expected READ Responses",
            "线路上出现了 READ Request 和预期的 READ Response"},
    Message{
        "opt.cm",
        "connect in band with rdma_cm (CM REQ/REP/RTU on the wire); the source then sends "
        "its buffer's VA, rkey and length in a SEND",
        "用 rdma_cm 带内建连（线路上可见 CM REQ/REP/RTU）；随后数据源端用一个 SEND 发出其缓冲区的 "
        "VA、rkey 和长度"},
    Message{"step.cm", "connect in band with rdma_cm: listen, resolve, connect, accept, establish",
            "用 rdma_cm 带内建连：监听、解析、连接、接受、确认"},
    Message{"step.info", "the source tells the reader where its buffer is, in a SEND",
            "数据源端用一个 SEND 告诉读取端其缓冲区在哪里"},
    Message{"why.info",
            "without a side channel the VA, rkey and length must travel in band: like rping, the "
            "source sends them (16 bytes, big-endian) in a SEND right after connecting, and the "
            "reader has a receive posted for them. The CM's private data could carry them too "
            "(up to 56 bytes in a REQ, 196 in a REP)",
            "没有旁路通道时，VA、rkey 和长度只能在带内传递：与 rping "
            "一样，数据源端在连接建立后立即用一个 "
            "SEND 发出它们（16 字节，大端序），读取端事先为此提交了一个接收工作请求。CM "
            "的私有数据也能携带"
            "它们（REQ 中最多 56 字节，REP 中最多 196 字节）"},
    Message{"too_small",
            "the source's buffer is {0} bytes, these READs need {1}: give both processes the same "
            "-s and -n",
            "数据源端缓冲区只有 {0} 字节，而这些 READ 需要 {1} 字节：请给两个进程相同的 -s 和 -n"},
    Message{"wait_done",
            "the source's CPU takes no part in a READ: it keeps its QP and memory until the reader "
            "says it is done (\"done\" over TCP, or with --cm the reader's disconnect)",
            "READ 不需要数据源端 CPU 参与：数据源端保留其 QP 和内存，直到读取端表示已完成（通过 "
            "TCP 发来 "
            "“done”，或在 --cm 时由读取端断开连接）"},
    Message{"try.1",
            "-s 4096 -m 1024: responses First, Middle, Middle, Last; AETH on First and Last",
            "-s 4096 -m 1024：响应为 First、Middle、Middle、Last；First 和 Last 携带 AETH"},
    Message{"try.2",
            "-n 4 --rd-atomic 1 versus --rd-atomic 4: READs queue behind each other or overlap",
            "-n 4 --rd-atomic 1 与 --rd-atomic 4 对比：READ 是排队还是并行"},
    Message{"try.3", "rdmapcap summary {}: READ responses matched to their requests",
            "rdmapcap summary {}：READ 响应与其请求的对应关系"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab03

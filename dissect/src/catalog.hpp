// The dissect module's message catalog (private): every text the analyser
// and the renderers show, in English and Chinese.
#pragma once

#include <array>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::dissect::detail {

using i18n::Message;

inline constexpr std::array kCatalog{
    // ---- events ----
    Message{"ev.ack",
            "ACK for PSN 0x{0:06x}..0x{1:06x}: {2} message(s) complete, oldest sent in frame {3}",
            "ACK 确认 PSN 0x{0:06x}..0x{1:06x}：{2} 条消息完成，其中最早的报文在第 {3} 帧发出"},
    Message{"ev.ack_rtt", "; round trip {}", "；往返时延 {}"},
    Message{"ev.ack_nothing",
            "ACK for PSN 0x{0:06x}: acknowledges nothing new outstanding in the capture",
            "ACK（PSN 0x{0:06x}）：抓包中没有新的待确认请求"},
    Message{"ev.read",
            "READ response for the READ request in frame {0} ({1} bytes), {2} after the request",
            "对第 {0} 帧 RDMA READ 请求的读响应（{1} 字节），距请求 {2}"},
    Message{
        "ev.atomic",
        "ATOMIC ACK for the {3} in frame {0}: original remote value 0x{1:x}, {2} after the request",
        "对第 {0} 帧 {3} 的原子确认：远端原值 0x{1:x}，距请求 {2}"},
    Message{"ev.gap",
            "PSN 0x{0:06x}..0x{1:06x} ({2} packet(s)) never seen: lost before the capture point, "
            "or reordered",
            "PSN 0x{0:06x}..0x{1:06x}（{2} 个报文）未在抓包中出现：在抓包点之前丢失，或发生了乱序"},
    Message{
        "ev.late",
        "PSN 0x{0:06x} arrives after newer PSNs: out-of-order arrival (reordering in the network)",
        "PSN 0x{0:06x} 到达时，比它大的 PSN 已经先到：乱序到达（网络中发生了重排序）"},
    Message{"ev.late_tolerated",
            "PSN 0x{0:06x} arrives after newer PSNs and no NAK asked for it: out-of-order arrival "
            "tolerated (as with adaptive routing)",
            "PSN 0x{0:06x} 到达时，比它大的 PSN 已经先到，且没有 NAK "
            "要求重传它：乱序到达被容忍（如自适应路由）"},
    Message{"ev.nak_seq",
            "NAK PSN sequence error: the responder expected PSN 0x{0:06x}; it drops later packets "
            "until that PSN is resent (go-back-N)",
            "NAK（PSN 序列错误）：响应端期望 PSN 0x{0:06x}；在该 PSN "
            "重传之前，它丢弃之后到达的报文（回退 N 重传）"},
    Message{"ev.rnr",
            "RNR NAK at PSN 0x{0:06x}: receiver not ready (no receive WR posted); the requester "
            "waits {1} ms (RNR timer code {2})",
            "RNR NAK（PSN 0x{0:06x}）：接收端未就绪（没有已提交的接收 WR）；请求端需等待 {1} "
            "ms（RNR 定时器码 {2}）"},
    Message{"ev.nak_fatal",
            "NAK {1} at PSN 0x{0:06x}: fatal; the WR completes in error and the QP moves to the "
            "error state",
            "NAK：{1}（PSN 0x{0:06x}）：致命错误；该 WR 以错误完成，QP 进入错误状态"},
    Message{"ev.go_back_n",
            "go-back-N: resending from PSN 0x{0:06x}, {1} after the NAK in frame {2}",
            "回退 N 重传：从 PSN 0x{0:06x} 开始重传，距第 {2} 帧的 NAK {1}"},
    Message{"ev.rnr_retry",
            "resend of PSN 0x{0:06x} after the RNR NAK in frame {2}: waited {1} (RNR timer {3} ms)",
            "收到第 {2} 帧的 RNR NAK 后重传 PSN 0x{0:06x}：等待了 {1}（RNR 定时器 {3} ms）"},
    Message{"ev.timeout",
            "timeout retransmission #{3} of PSN 0x{0:06x} after {1} of silence: local ACK timeout "
            "≈ 4.096 µs × 2^{2} (timeout = {2})",
            "第 {3} 次超时重传 PSN 0x{0:06x}，此前静默 {1}：本地 ACK 超时约为 4.096 µs × "
            "2^{2}（timeout = {2}）"},
    Message{"ev.retx", "retransmission of PSN 0x{0:06x} (first sent in frame {1}, {2} earlier)",
            "重传 PSN 0x{0:06x}（首发于第 {1} 帧，相隔 {2}）"},
    Message{
        "ev.retx_reordered",
        "resend of PSN 0x{0:06x} from the go-back-N round of the NAK in frame {1}, overtaken "
        "on the way by later resends: the capture point is after the network (receiver "
        "side), where gaps are arrival gaps, and a local ACK timeout cannot expire within "
        "8.192 µs of the NAK",
        "PSN 0x{0:06x} 的重传属于第 {1} 帧 NAK 引发的回退 N 重传，途中被后发的重传超过：抓包点在"
        "网络之后（接收端一侧），这里的间隔是到达时间之差；而本地 ACK 超时不可能在 NAK 之后 "
        "8.192 µs 内到期"},
    Message{"ev.retx_unknown", "retransmission of PSN 0x{0:06x}", "重传 PSN 0x{0:06x}"},
    Message{"ev.dup_req",
            "duplicate: PSN 0x{0:06x} was already acknowledged; the responder re-ACKs it without "
            "executing it again",
            "重复请求：PSN 0x{0:06x} 已被确认；响应端重新回 ACK，但不会再次执行"},
    Message{"ev.dup_ack", "duplicate ACK: same PSN and MSN as frame {0}",
            "重复的 ACK：PSN 和 MSN 与第 {0} 帧相同"},
    Message{
        "ev.unmatched",
        "response to requests not in the capture (it started late, or holds one direction only)",
        "该响应对应的请求不在抓包中（抓包开始得晚，或只抓到了一个方向）"},
    Message{"ev.retry_exhausted",
            "PSN 0x{0:06x} still unacknowledged after {1} timeout retries and nothing more was "
            "sent: most likely retry_cnt = {1} ran out (IBV_WC_RETRY_EXC_ERR)",
            "PSN 0x{0:06x} 经过 {1} 次超时重传仍未被确认，之后再无发送：很可能 retry_cnt = {1} "
            "已耗尽（WC 的 status 为 IBV_WC_RETRY_EXC_ERR）"},
    Message{"ev.unacked",
            "PSN 0x{0:06x}..0x{1:06x} ({2} packet(s)) never acknowledged in the capture",
            "PSN 0x{0:06x}..0x{1:06x}（{2} 个报文）在抓包中始终未被确认"},
    Message{"ev.cnp",
            "CNP: congestion notification for QP 0x{0:06x}; its sender should slow down (DCQCN)",
            "CNP：发给 QP 0x{0:06x} 的拥塞通知；发送端应当降速（DCQCN）"},
    Message{"ev.ecn", "IP ECN = CE: a switch marked congestion; the receiver answers with a CNP",
            "IP ECN = CE：交换机标记了拥塞；接收端会回复 CNP"},
    Message{"ev.length", "message payload of {0} bytes differs from the RETH DMA length {1}",
            "消息载荷 {0} 字节与 RETH 中的 DMA 长度 {1} 不一致"},
    Message{"ev.icrc", "ICRC mismatch: the packet carries 0x{0:08x}, computed 0x{1:08x}",
            "ICRC 校验失败：报文携带 0x{0:08x}，计算值为 0x{1:08x}"},
    Message{"ev.vcrc",
            "VCRC mismatch: the packet carries 0x{0:04x}, computed 0x{1:04x} (damaged on the last "
            "link: the VCRC is recomputed at every hop)",
            "VCRC 校验失败：报文携带 0x{0:04x}，计算值为 0x{1:04x}（损坏发生在最后一段链路上：VCRC "
            "在每一跳都会重新计算）"},
    Message{"ev.malformed", "malformed RoCE packet: {}", "格式错误的 RoCE 报文：{}"},
    Message{"ev.unknown_opcode",
            "unknown BTH opcode 0x{0:02x}: the bytes after the BTH are shown raw",
            "未知的 BTH 操作码 0x{0:02x}：BTH 之后的字节按原始数据显示"},
    Message{"cm.req",
            "CM REQ: QP 0x{0:06x} asks to connect (service ID 0x{1:x}); it expects the peer's "
            "first PSN to be 0x{2:06x}; retry_cnt {3}",
            "CM REQ：QP 0x{0:06x} 请求建立连接（服务 ID 0x{1:x}）；它期望对端发来的第一个 "
            "PSN 为 0x{2:06x}；retry_cnt 为 {3}"},
    Message{"cm.rep",
            "CM REP to the REQ in frame {0}: QP 0x{1:06x} accepts; it expects the peer's first PSN "
            "to be 0x{2:06x}",
            "CM REP，回应第 {0} 帧的 REQ：QP 0x{1:06x} 接受连接；它期望对端发来的第一个 "
            "PSN 为 "
            "0x{2:06x}"},
    Message{"cm.rej", "CM REJ to the REQ in frame {0}: the connection is refused, reason {1} ({2})",
            "CM REJ，回应第 {0} 帧的 REQ：连接被拒绝，原因 {1}（{2}）"},
    Message{"cm.rej.8", "invalid service ID: nothing listens on that port",
            "无效的服务 ID：对端在该端口上没有监听"},
    Message{"cm.rej.28", "consumer reject: the application refused it",
            "应用拒绝（consumer reject）：对端应用拒绝了该连接"},
    Message{"cm.rej.other", "see IBTA table 103", "见 IBTA 规范表 103"},
    Message{"cm.rtu", "CM RTU: the requester is ready to use the connection",
            "CM RTU：请求端已准备好使用该连接"},
    Message{"cm.other", "CM {}", "CM {} 消息"},
    Message{"cm.linked",
            "first request of the connection set up in frame {0}: PSN 0x{1:06x} as announced",
            "第 {0} 帧建立的连接上的第一个请求：PSN 0x{1:06x}，与通告的一致"},
    Message{"cm.linked_bad",
            "first request of the connection set up in frame {0}: PSN 0x{2:06x}, but the CM "
            "announced 0x{1:06x}",
            "第 {0} 帧建立的连接上的第一个请求：PSN 为 0x{2:06x}，但 CM 通告的是 0x{1:06x}"},
    // ---- expert information summaries (one per expert item: the event table) ----
    Message{"ex.psn_gap", "PSN gap: requests missing on the wire", "PSN 缺口：线路上缺少请求报文"},
    Message{"ex.out_of_order", "Out-of-order arrival", "乱序到达"},
    Message{"ex.nak_psn_sequence", "NAK: PSN sequence error", "NAK：PSN 序列错误"},
    Message{"ex.rnr_nak", "RNR NAK: receiver not ready", "RNR NAK：接收端未就绪"},
    Message{"ex.nak_fatal", "NAK: request refused", "NAK：请求被拒绝"},
    Message{"ex.go_back_n", "Go-back-N resend after a NAK", "收到 NAK 后回退 N 重传"},
    Message{"ex.rnr_retry", "Resend after an RNR NAK", "RNR NAK 之后的重传"},
    Message{"ex.timeout", "Resend after an ACK timeout", "ACK 超时后的重传"},
    Message{"ex.retransmission", "Retransmission", "重传"},
    Message{"ex.duplicate_request", "Duplicate request", "重复的请求"},
    Message{"ex.duplicate_ack", "Duplicate ACK", "重复的 ACK"},
    Message{"ex.unmatched_response", "Response to a request not in the capture",
            "响应所对应的请求不在抓包中"},
    Message{"ex.retry_exhausted", "Retries exhausted (IBV_WC_RETRY_EXC_ERR)",
            "重试耗尽（IBV_WC_RETRY_EXC_ERR）"},
    Message{"ex.unacknowledged", "Requests never acknowledged", "请求始终未被确认"},
    Message{"ex.cnp", "Congestion notification (CNP)", "拥塞通知报文（CNP）"},
    Message{"ex.ecn_ce", "ECN Congestion Experienced", "ECN 标记：发生拥塞（CE）"},
    Message{"ex.length_mismatch", "Message length differs from the RETH DMA length",
            "消息长度与 RETH 中的 DMA 长度不符"},
    Message{"ex.icrc_mismatch", "Bad ICRC", "ICRC 校验错误"},
    Message{"ex.vcrc_mismatch", "Bad VCRC", "VCRC 校验错误"},
    Message{"ex.malformed", "Malformed RoCE packet", "RoCE 报文格式错误"},
    Message{"ex.unknown_opcode", "Unknown BTH opcode", "未知的 BTH 操作码"},
    Message{"sev.info", "info", "信息"},
    Message{"sev.notice", "notice", "提示"},
    Message{"sev.warning", "warning", "警告"},
    Message{"sev.error", "error", "错误"},
    Message{"word.cmpswap", "CmpSwap", "比较并交换（CmpSwap）"},
    Message{"word.fetchadd", "FetchAdd", "取值并相加（FetchAdd）"},
    Message{"word.unknown", "unknown", "未知"},
    // ---- decode text ----
    Message{"dec.frame", "Frame {0}  {1} s  {2} → {3}  {4}  {5} bytes",
            "第 {0} 帧  {1} 秒  {2} → {3}  {4}  {5} 字节"},
    Message{"dec.rocev2", "RoCEv2 (UDP {0} → 4791; the source port is flow entropy)",
            "RoCEv2（UDP {0} → 4791；源端口只是流的熵值）"},
    Message{"dec.rocev1", "RoCEv1 (ethertype 0x8915, GRH)", "RoCEv1（以太类型 0x8915，带 GRH）"},
    Message{"dec.not_roce", "not RoCE: counted and skipped", "不是 RoCE：已计数并跳过"},
    Message{"dec.ib", "InfiniBand (LRH, SL {0}, VL {1})", "InfiniBand（LRH，SL {0}，VL {1}）"},
    Message{"dec.ib_raw",
            "InfiniBand raw packet (LNH {0}: not a transport packet), counted and skipped",
            "InfiniBand 原始报文（LNH {0}：不是传输层报文），已计数并跳过"},
    Message{"dec.ib_link",
            "InfiniBand link packet (ERF type 25: flow control), counted and skipped",
            "InfiniBand 链路报文（ERF 类型 25：流控），已计数并跳过"},
    Message{"dec.lrh", "LRH  Local Route Header (8 bytes)", "LRH  本地路由头（8 字节）"},
    Message{"dec.vl", "virtual lane the packet uses on this link (VL 15: subnet management)",
            "报文在这段链路上使用的虚拟通道（VL 15：子网管理）"},
    Message{"dec.lver", "link version (0)", "链路版本（0）"},
    Message{"dec.sl", "service level: the priority class, mapped to a VL at every hop",
            "服务等级：优先级类别，每一跳都把它映射到一个 VL"},
    Message{"dec.lnh_local", "link next header: BTH follows (local, inside the subnet)",
            "链路下一报头：后面是 BTH（本地，子网内）"},
    Message{"dec.lnh_global", "link next header: GRH, then BTH (global, may cross a router)",
            "链路下一报头：先是 GRH，再是 BTH（全局，可跨越路由器）"},
    Message{"dec.dlid", "destination LID (assigned by the subnet manager)",
            "目的 LID（由子网管理器分配）"},
    Message{"dec.pktlen", "packet length in 4-byte words, LRH through ICRC: {} bytes",
            "报文长度，以 4 字节为单位，从 LRH 到 ICRC：{} 字节"},
    Message{"dec.slid", "source LID", "源 LID"},
    Message{"dec.vcrc_ok", "VCRC  0x{0:04x}  correct", "VCRC  0x{0:04x}  校验正确"},
    Message{"dec.vcrc_bad", "VCRC  0x{0:04x}  WRONG (computed 0x{1:04x})",
            "VCRC  0x{0:04x}  校验错误（计算值 0x{1:04x}）"},
    Message{"dec.vlan", "VLAN {0} (priority {1})", "VLAN {0}（优先级 {1}）"},
    Message{"dec.ip_ecn", "IP: DSCP {0}, ECN {1}", "IP：DSCP {0}，ECN {1}"},
    Message{"dec.bth", "BTH  Base Transport Header (12 bytes)", "BTH  基本传输头（12 字节）"},
    Message{"dec.opcode", "{0}: {1}", "{0}：{1}"},
    Message{"dec.se", "solicited event: {}", "请求事件（SE）：{}"},
    Message{"dec.se_yes", "the receiver's CQ raises a completion event for this message",
            "接收端的 CQ 会为这条消息产生完成事件"},
    Message{"dec.se_no", "no completion event requested", "不请求完成事件"},
    Message{"dec.migreq", "migration state (APM); 1 = migrated",
            "路径迁移状态（APM）；1 表示已迁移"},
    Message{"dec.padcnt", "pad bytes after the payload to reach a multiple of 4",
            "载荷之后的填充字节数，使长度为 4 的倍数"},
    Message{"dec.tver", "transport header version (0)", "传输头版本（0）"},
    Message{"dec.pkey", "partition key{}", "分区键{}"},
    Message{"dec.pkey_default", " (0xffff: the default partition, full member)",
            "（0xffff：默认分区，完全成员）"},
    Message{"dec.ecn_bits", "FECN {0} BECN {1}: congestion bits (RoCEv2 uses IP ECN instead)",
            "FECN {0} BECN {1}：拥塞位（RoCEv2 改用 IP 的 ECN）"},
    Message{"dec.destqp", "destination QP number at {}", "{} 上的目的 QP 号"},
    Message{"dec.ackreq_yes", "AckReq = 1: the responder must acknowledge this packet",
            "AckReq = 1：响应端必须确认这个报文"},
    Message{"dec.ackreq_no", "AckReq = 0: no immediate ACK requested (a later ACK covers it)",
            "AckReq = 0：不要求立即确认（之后的 ACK 会一并确认）"},
    Message{"dec.psn", "packet sequence number ({}), 24 bits, wraps at 2^24",
            "报文序列号（{}），24 位，到 2^24 回绕"},
    Message{"dec.reth", "RETH  RDMA Extended Transport Header (16 bytes)",
            "RETH  RDMA 扩展传输头（16 字节）"},
    Message{"dec.va", "remote virtual address", "远端虚拟地址"},
    Message{"dec.rkey", "remote key of the target memory region (MR)",
            "目标 MR 的 R_Key（远端密钥）"},
    Message{"dec.dmalen_write", "bytes in the whole message: {0} packet(s) at this payload size",
            "整条消息的字节数：按本报文载荷大小需要 {0} 个报文"},
    Message{"dec.dmalen_only", "bytes in the whole message (all in this packet)",
            "整条消息的字节数（全部在本报文中）"},
    Message{"dec.dmalen_only_bad", "bytes announced, but this single packet carries {0}",
            "声明的字节数，但这个单包消息只携带 {0} 字节"},
    Message{"dec.dmalen_read", "bytes to read: the responder sends them back in READ responses",
            "要读取的字节数：响应端用 READ 响应报文送回"},
    Message{"dec.dmalen_flush", "bytes of the range to flush (selectivity 0)",
            "要刷新的范围的字节数（选择级别为 0 时）"},
    Message{"dec.xrceth", "XRCETH  XRC Extended Transport Header (4 bytes)",
            "XRCETH  XRC 扩展传输头（4 字节）"},
    Message{"dec.xrcsrq",
            "XRC SRQ number: the shared receive queue at the target that takes "
            "this message",
            "XRC SRQ 号：目标端接收这条消息的共享接收队列（SRQ）"},
    Message{"dec.feth", "FETH  FLUSH Extended Transport Header (4 bytes)",
            "FETH  FLUSH 扩展传输头（4 字节）"},
    Message{"dec.placement",
            "placement type (bits 3:0): 1 global visibility, 2 persistence, 3 both",
            "放置类型（位 3:0）：1 全局可见，2 持久化，3 两者都要"},
    Message{"dec.selectivity",
            "selectivity level (bits 5:4): 0 the range in the RETH, 1 the whole memory region",
            "选择级别（位 5:4）：0 为 RETH 指定的范围，1 为整个 MR"},
    Message{"dec.aeth", "AETH  ACK Extended Transport Header (4 bytes)",
            "AETH  确认扩展传输头（4 字节）"},
    Message{"dec.msn", "message sequence number: messages the responder has completed",
            "消息序列号：响应端已完成的消息数"},
    Message{"dec.ack_psn", "the ACK acknowledges this PSN and every PSN before it",
            "该 ACK 确认这个 PSN 以及之前的所有 PSN"},
    Message{"dec.nak_psn", "for a PSN sequence error NAK: the PSN the responder expected",
            "对于 PSN 序列错误 NAK：响应端期望的 PSN"},
    Message{"dec.atomiceth", "AtomicETH  Atomic Extended Transport Header (28 bytes)",
            "AtomicETH  原子操作扩展传输头（28 字节）"},
    Message{"dec.swap", "swap (CmpSwap) or add (FetchAdd) operand",
            "交换值（CmpSwap）或加数（FetchAdd）"},
    Message{"dec.compare", "compare operand (CmpSwap only)", "比较值（仅 CmpSwap 使用）"},
    Message{"dec.atomicack", "AtomicAckETH  Atomic ACK Extended Transport Header (8 bytes)",
            "AtomicAckETH  原子确认扩展传输头（8 字节）"},
    Message{"dec.orig", "the remote value before the atomic operation", "原子操作执行前的远端原值"},
    Message{"dec.immdt", "ImmDt  immediate data (4 bytes), delivered in the receiver's WC",
            "ImmDt  立即数（4 字节），出现在接收端的 WC 中"},
    Message{"dec.ieth", "IETH  R_Key to invalidate at the receiver (4 bytes)",
            "IETH  接收端要失效的 R_Key（4 字节）"},
    Message{"dec.deth", "DETH  Datagram Extended Transport Header (8 bytes)",
            "DETH  数据报扩展传输头（8 字节）"},
    Message{"dec.qkey", "queue key the receiving UD QP checks", "接收端 UD QP 校验的 Q_Key"},
    Message{"dec.srcqp", "source QP number", "源 QP 号"},
    Message{"dec.grh", "GRH  Global Route Header (40 bytes): {0} → {1}",
            "GRH  全局路由头（40 字节）：{0} → {1}"},
    Message{"dec.mad", "MAD  management datagram: {}", "MAD  管理数据报：{}"},
    Message{"dec.mad_class",
            "management class: 0x01/0x81 subnet management (SMP), 0x03 subnet administration "
            "(SA), 0x04 performance, 0x07 CM",
            "管理类别：0x01/0x81 子网管理（SMP），0x03 子网管理服务（SA），0x04 性能管理，0x07 CM"},
    Message{"dec.mad_request", "method: a request (bit 7 clear)", "方法：请求（第 7 位为 0）"},
    Message{"dec.mad_response", "method: a response (bit 7 set)", "方法：响应（第 7 位为 1）"},
    Message{"dec.mad_status", "status: 0 on requests and on successful responses",
            "状态：请求和成功的响应中为 0"},
    Message{"dec.mad_tid", "transaction ID: a response carries its request's",
            "事务 ID：响应带着它所响应的请求的事务 ID"},
    Message{"dec.mad_attr", "attribute: what is read or set (SMInfo, PortInfo, PathRecord ...)",
            "属性：读取或设置的对象（SMInfo、PortInfo、PathRecord 等）"},
    Message{"dec.cm", "CM {}  Connection Manager MAD (rdma_cm connection set-up)",
            "CM {}  连接管理 MAD（rdma_cm 建立连接）"},
    Message{"dec.cm_comm", "local communication ID of this connection attempt",
            "本次连接尝试的本地通信 ID"},
    Message{"dec.cm_qpn", "the sender's QP number for the connection", "发送端用于该连接的 QP 号"},
    Message{"dec.cm_psn", "the first PSN the sender will use", "发送端将使用的起始 PSN"},
    Message{"dec.payload_hex", "Payload bytes", "载荷字节"},
    Message{"dec.payload", "Payload  {0} bytes", "载荷  {0} 字节"},
    Message{"dec.payload_snap", "Payload  {0} bytes on the wire, {1} captured",
            "载荷  线上 {0} 字节，抓到 {1} 字节"},
    Message{"dec.icrc_ok", "ICRC  0x{0:08x}  correct", "ICRC  0x{0:08x}  校验正确"},
    Message{"dec.icrc_bad", "ICRC  0x{0:08x}  WRONG (computed 0x{1:08x})",
            "ICRC  0x{0:08x}  校验错误（计算值 0x{1:08x}）"},
    Message{"dec.icrc_none", "ICRC  not checked (not captured completely)",
            "ICRC  未校验（没有完整抓到）"},
    Message{"dec.error", "decode stopped: {}", "解码中止：{}"},
    Message{"dec.sep", "; ", "；"},
    Message{"dec.analysis", "Analysis", "分析"},
    Message{"dec.end", "end of capture, about frame {0}: {1}",
            "抓包结束时的结论（第 {0} 帧）：{1}"},
    // opcode teaching notes, by operation and position
    Message{"op.first", "first packet of a multi-packet message", "多包消息的第一个报文"},
    Message{"op.middle", "middle packet of a multi-packet message (a full path MTU of payload)",
            "多包消息的中间报文（载荷正好一个路径 MTU）"},
    Message{"op.last", "last packet of a multi-packet message", "多包消息的最后一个报文"},
    Message{"op.only", "a whole message in one packet", "单个报文承载整条消息"},
    Message{"op.read_req", "asks the responder to send back the bytes named by the RETH",
            "请求响应端送回 RETH 所指定的数据"},
    Message{"op.read_resp", "carries data of an RDMA READ back to the requester",
            "把 RDMA READ 的数据送回请求端"},
    Message{"op.ack", "acknowledges requests (the AETH says ACK or NAK)",
            "对请求的确认（AETH 区分 ACK 与 NAK）"},
    Message{"op.atomic_ack", "returns the original value of an atomic operation",
            "返回原子操作的原值"},
    Message{"op.atomic", "8-byte atomic operation on remote memory", "对远端内存的 8 字节原子操作"},
    Message{"op.flush",
            "makes earlier RDMA WRITEs visible or persistent at the responder; answered by a "
            "zero-length READ response",
            "让之前的 RDMA WRITE 在响应端全局可见或持久化；响应端回一个零长度的 READ 响应"},
    Message{"op.atomic_write",
            "writes 8 bytes of remote memory as one indivisible unit; answered by a zero-length "
            "READ response",
            "把 8 字节作为不可分割的整体写入远端内存；响应端回一个零长度的 READ 响应"},
    Message{"op.cnp", "congestion notification packet (RoCEv2 annex A17, DCQCN)",
            "拥塞通知报文（RoCEv2 附录 A17，DCQCN）"},
    Message{"op.unknown", "not in the opcode table", "不在操作码表中"},
    // ---- summary ----
    Message{
        "sum.capture",
        "Capture: {0} frames, {1} RoCE ({2} RoCEv1), {3} other (skipped), {4} malformed, {5} cut "
        "by snap length, {6} unknown opcode, {7} ICRC errors, {8} datagram (UD) packets",
        "抓包：共 {0} 帧，RoCE {1} 帧（其中 RoCEv1 {2} 帧），其他 {3} 帧（已跳过），格式错误 {4} "
        "帧，被 snaplen 截断 {5} 帧，未知操作码 {6} 帧，ICRC 错误 {7} 帧，数据报（UD）{8} 帧"},
    Message{"sum.native_ib",
            "InfiniBand: {0} of them native InfiniBand packets (LRH, no Ethernet), {1} VCRC errors",
            "InfiniBand：其中原生 InfiniBand 报文 {0} 个（LRH，没有以太网），VCRC 错误 {1} 个"},
    Message{"sum.untracked",
            "Not followed: {} packets of PSN spaces beyond the limit of the analyser",
            "未跟踪：{} 个报文属于超出分析器上限的 PSN 空间"},
    Message{
        "sum.cnps_unattributed",
        "CNPs not attributed: {} to a QP that no conversation could be matched to (its requests "
        "are not in the capture, or several QPs between the same two hosts had no response "
        "yet)",
        "未归属的 CNP：{} 个，发往的 QP 无法对应到任何会话（它的请求不在抓包中，或同一对主机之间"
        "有多个 QP 尚未出现响应）"},
    Message{"sum.duration", "Duration: {} s", "时长：{} 秒"},
    Message{"sum.conv", "Conversation {0}: {1} ⇄ {2}  ({3} packets, {4} s)",
            "会话 {0}：{1} ⇄ {2}（{3} 个报文，{4} 秒）"},
    Message{"sum.channel", "  Requests {0} → {1}", "  请求：{0} → {1}"},
    Message{"sum.packets", "    packets: {0} requests, {1} responses",
            "    报文：请求 {0} 个，响应 {1} 个"},
    Message{"sum.messages",
            "    messages: {0} SEND, {1} WRITE, {2} READ, {3} CmpSwap, {4} FetchAdd",
            "    消息：SEND {0} 条，WRITE {1} 条，READ {2} 条，CmpSwap {3} 条，FetchAdd {4} 条"},
    Message{"sum.payload", "    payload: {0} bytes on the wire, {1} bytes new",
            "    载荷：线上 {0} 字节，其中新数据 {1} 字节"},
    Message{"sum.mtu_exact", "    path MTU: {} bytes (from multi-packet messages)",
            "    路径 MTU：{} 字节（由多包消息推断）"},
    Message{"sum.mtu_bound", "    path MTU: at least {} bytes (no message needed several packets)",
            "    路径 MTU：至少 {} 字节（没有消息需要分成多个报文）"},
    Message{"sum.mtu_unknown", "    path MTU: unknown", "    路径 MTU：未知"},
    Message{"sum.loss", "    retransmitted packets: {0}; PSN gaps: {1}; out-of-order arrivals: {2}",
            "    重传报文：{0} 个；PSN 缺口：{1} 处；乱序到达：{2} 个"},
    Message{"sum.acks", "    ACKs: {0} ({1} duplicate)", "    ACK：{0} 个（重复 {1} 个）"},
    Message{"sum.naks",
            "    NAKs: PSN sequence error {0}, invalid request {1}, remote access {2}, remote "
            "operational {3}, invalid RD {4}; go-back-N rounds {5}",
            "    NAK：PSN 序列错误 {0}，无效请求 {1}，远端访问错误 {2}，远端操作错误 "
            "{3}，无效 RD 请求 {4}；回退 N 重传 {5} 轮"},
    Message{"sum.rnr", "    RNR NAKs: {0}; median RNR wait {1}",
            "    RNR NAK：{0} 个；RNR 等待时间中位数 {1}"},
    Message{
        "sum.timeouts",
        "    timeouts: {0}; median silence {1} → timeout ≈ {2}; most retries of one PSN: {3}",
        "    超时重传：{0} 次；静默时间中位数 {1} → timeout 约为 {2}；同一 PSN 最多重试 {3} 次"},
    Message{"sum.no_timeouts", "    timeouts: 0", "    超时重传：0 次"},
    Message{"sum.exhausted",
            "    the requester gave up: retry count exhausted (IBV_WC_RETRY_EXC_ERR)",
            "    请求端已放弃：重试次数耗尽（IBV_WC_RETRY_EXC_ERR）"},
    Message{"sum.rtt", "    ACK round trip: min {0}, median {1}, max {2} ({3} samples)",
            "    ACK 往返时延：最小 {0}，中位数 {1}，最大 {2}（{3} 个样本）"},
    Message{"sum.rtt_none", "    ACK round trip: no sample", "    ACK 往返时延：没有样本"},
    Message{"sum.goodput", "    goodput: {}", "    有效吞吐：{}"},
    Message{"sum.cnp", "    CNPs: {0}; ICRC errors: {1}", "    CNP：{0} 个；ICRC 错误：{1} 个"},
    Message{"sum.none", "No RoCE conversation in this capture.", "这个抓包中没有 RoCE 会话。"},
    // ---- ladder ----
    Message{"lad.time", "time", "时间"},
    Message{"lad.truncated", "({} more rows not drawn)", "（还有 {} 行未画出）"},
    // ---- congestion and flow control (CE, CNP, PFC) ----
    Message{"ev.ce_without_cnp",
            "{0} CE-marked request(s) and no CNP back to QP 0x{1:06x}: the receiver's NIC has "
            "ECN notification (DCQCN's notification point) off, or its CNPs take a path this "
            "capture does not see",
            "{0} 个请求带有 CE 标记，却没有 CNP 发回 QP 0x{1:06x}：接收端网卡关闭了 ECN "
            "通知（DCQCN 的通知点），或者它的 CNP 走了本次抓包看不到的路径"},
    Message{"ex.ce_without_cnp", "CE marks but no CNP", "有 CE 标记但没有 CNP"},
    Message{"ev.cnp_paced",
            "CNPs to QP 0x{0:06x} paced at ~{1} (median gap; smallest {2}) while {3} CE-marked "
            "requests arrived: the receiver's NIC sends at most one CNP per QP per interval",
            "发往 QP 0x{0:06x} 的 CNP 间隔约 {1}（中位数；最小 {2}），而期间到达了 {3} 个带 CE "
            "标记的请求：接收端网卡对每个 QP 在一个间隔内最多发送一个 CNP"},
    Message{"ex.cnp_paced", "CNPs paced per QP", "CNP 按 QP 限速发送"},
    Message{"ev.cnp_no_slowdown",
            "after {0} CNP(s) the sender's rate did not fall: {2} in the {1} before a CNP, {3} in "
            "the {1} after (medians): the sender's NIC does not act on CNPs (DCQCN's reaction "
            "point off), or something else held the sender below the rate a CNP cuts to",
            "收到 {0} 个 CNP 后发送端速率没有下降：CNP 之前 {1} 内为 {2}，之后 {1} 内为 {3}"
            "（中位数）：发送端网卡不响应 CNP（DCQCN 的反应点关闭），或者发送端本来就被别的因素"
            "限制在 CNP 所降到的速率以下"},
    Message{"ex.cnp_no_slowdown", "Rate did not fall after CNPs", "收到 CNP 后速率没有下降"},
    Message{"ev.pfc_pause", "PFC pause from {0}: priority {1} for {2} quanta = {3} at {4} Gb/s",
            "来自 {0} 的 PFC 暂停帧：优先级 {1} 暂停 {2} 个时间单位（quanta）= {3}（按 {4} Gb/s "
            "计算）"},
    Message{"ev.pfc_xon", "PFC XON from {0}: priority {1} may send again",
            "来自 {0} 的 PFC XON：优先级 {1} 可以恢复发送"},
    Message{"ev.pause_link",
            "802.3x PAUSE from {0}: the whole link for {1} quanta = {2} at {3} Gb/s",
            "来自 {0} 的 802.3x PAUSE：整条链路暂停 {1} 个时间单位（quanta）= {2}（按 {3} Gb/s "
            "计算）"},
    Message{"ev.pause_xon", "802.3x PAUSE from {0} with time 0: the whole link may send again",
            "来自 {0} 的 802.3x PAUSE，时间为 0：整条链路可以恢复发送"},
    Message{"ex.pfc_pause", "Pause frame", "暂停帧"},
    Message{"ev.pfc_storm",
            "{0} from {1} paused without a break for {2}, longer than --pfc-storm-ms ({3}): a PFC "
            "storm (a receiver that stopped draining its queue keeps pausing its link partner, and "
            "the pause spreads upstream)",
            "来自 {1} 的{0}连续暂停了 {2}，超过 --pfc-storm-ms（{3}）：PFC 风暴（接收端不再排空"
            "队列，持续让对端暂停，暂停会逐跳向上游扩散）"},
    Message{"ev.pfc_storm_end",
            "{0} from {1} paused without a break for {2} and still paused when the capture ended, "
            "longer than --pfc-storm-ms ({3}): a PFC storm (a receiver that stopped draining its "
            "queue keeps pausing its link partner, and the pause spreads upstream)",
            "来自 {1} 的{0}连续暂停了 {2}，抓包结束时仍在暂停，超过 --pfc-storm-ms（{3}）：PFC "
            "风暴（接收端不再排空队列，持续让对端暂停，暂停会逐跳向上游扩散）"},
    Message{"ex.pfc_storm", "PFC storm", "PFC 风暴"},
    // ---- end of capture while retrying ----
    Message{"ev.still_retrying",
            "PSN 0x{0:06x} unacknowledged after {1} timeout retries, and the capture ended before "
            "the next retry was due: still retrying when the capture ended (if retry_cnt = {1}, "
            "the requester gives up one timeout later with IBV_WC_RETRY_EXC_ERR; the capture "
            "cannot tell)",
            "PSN 0x{0:06x} 经过 {1} 次超时重传仍未被确认，且抓包在下一次重传到期之前就结束了："
            "抓包结束时仍在重传（如果 retry_cnt = {1}，请求端会在又一个超时之后以 "
            "IBV_WC_RETRY_EXC_ERR 放弃；抓包无法区分这两种情况）"},
    Message{
        "ev.retry_unlimited",
        "PSN 0x{0:06x} unacknowledged after {1} timeout retries, more than any retry_cnt allows "
        "(at most 7): retrying without a limit (retry_cnt = 7 on Soft-RoCE retries forever), "
        "still retrying when the capture ended",
        "PSN 0x{0:06x} 经过 {1} 次超时重传仍未被确认，超过了 retry_cnt 允许的上限（最大 7）："
        "在无限重传（Soft-RoCE 上 retry_cnt = 7 表示永远重传），抓包结束时仍在重传"},
    Message{
        "ev.retry_stopped",
        "PSN 0x{0:06x} unacknowledged after {1} timeout retries, then nothing more was sent: more "
        "retries than any retry_cnt allows (at most 7), so not a retry count running out; the "
        "QP was more likely reset or destroyed",
        "PSN 0x{0:06x} 经过 {1} 次超时重传仍未被确认，之后再无发送：重传次数超过了 retry_cnt "
        "允许的上限（最大 7），因此不是重试次数耗尽，更可能是 QP 被重置或销毁"},
    Message{"ex.still_retrying", "Still retrying at the end of the capture", "抓包结束时仍在重传"},
    Message{"sum.still_retrying", "    the requester was still retrying when the capture ended",
            "    抓包结束时请求端仍在重传"},
    Message{"word.priority", "priority {}", "优先级 {}"},
    Message{"word.whole_link", "the whole link (802.3x)", "整条链路（802.3x）"},
    Message{"sum.fecn",
            "FECN/BECN: {0} request(s) marked FECN on the way, {1} response(s) carrying BECN back "
            "(InfiniBand's congestion notification in the BTH)",
            "FECN/BECN：途中被标记 FECN 的请求 {0} 个，带回 BECN 的响应 {1} 个（InfiniBand 在 BTH "
            "中的拥塞通知）"},
    Message{"sum.congestion",
            "    congestion: {0} CE-marked data packet(s); {1} CNP(s), gap min {2}, median {3}; CE "
            "→ CNP median {4}",
            "    拥塞：{0} 个带 CE 标记的数据报文；{1} 个 CNP，间隔最小 {2}，中位数 {3}；CE → CNP "
            "延迟中位数 {4}"},
    Message{"sum.rate_cnp",
            "    requester's rate around a CNP ({0} windows, median of {1} CNP(s)): {2} before, "
            "{3} after",
            "    CNP 前后请求端的速率（{0} 窗口，{1} 个 CNP 的中位数）：之前 {2}，之后 {3}"},
    Message{"sum.pfc_head", "\nPause frames: {0} (times at {1} Gb/s, {2})",
            "\n暂停帧：{0} 个（时间按 {1} Gb/s 计算，{2}）"},
    Message{"sum.speed_given", "given by --link-speed", "由 --link-speed 指定"},
    Message{"sum.speed_inferred", "inferred from the closest spacing of two frames",
            "由两帧之间的最小间隔推断"},
    Message{"sum.speed_assumed", "assumed: no two frames to infer it from",
            "假定值：没有可用来推断的相邻两帧"},
    Message{"sum.pfc", "  {0} {1}: {2} frame(s) ({3} XON), paused {4} in total, longest {5}",
            "  {0} {1}：{2} 个帧（{3} 个 XON），共暂停 {4}，最长一次 {5}"},
    Message{"sum.pfc_storms", "; {} storm(s)", "；{} 次风暴"},
    Message{"sum.pfc_at_end", "; still paused when the capture ended", "；抓包结束时仍在暂停"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

}  // namespace rdmalab::dissect::detail

// The Wireshark plugin's message catalog (private): field names, tree labels,
// expert summaries and preference texts, in English and Chinese. Event
// explanations come from the dissect module (dissect::describe).
//
// Every text here is a string literal, so text(m).data() is NUL-terminated
// and lives as long as the program: Wireshark keeps the pointers it is given
// at registration.
#pragma once

#include <array>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::wireshark::detail {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{"proto.name", "rdmalab RoCE analysis", "rdmalab RoCE 分析"},
    // ---- field names (shown in the tree, the filter dialog, column titles) ----
    Message{"hf.event", "Event", "分析事件"},
    Message{"hf.explanation", "Explanation", "解释"},
    Message{"hf.expected_psn", "Expected PSN", "期望的 PSN"},
    Message{"hf.retransmission", "Retransmission", "重传"},
    Message{"hf.retrans_cause", "Retransmission cause", "重传原因"},
    Message{"hf.original_frame", "Original transmission in frame", "首次发送所在帧"},
    Message{"hf.nak", "NAK code", "NAK 错误码"},
    Message{"hf.nak_meaning", "NAK meaning", "NAK 含义"},
    Message{"hf.rnr", "RNR NAK timer code", "RNR NAK 定时器编码"},
    Message{"hf.msg_id", "Message number", "消息编号"},
    Message{"hf.msg_index", "Packet index in message", "报文在消息中的序号"},
    Message{"hf.msg_length", "Message length", "消息长度"},
    Message{"hf.request_frame", "Request in frame", "请求所在帧"},
    Message{"hf.icrc_status", "ICRC status", "ICRC 校验结果"},
    Message{"hf.icrc_computed", "Computed ICRC", "计算得到的 ICRC"},
    Message{"hf.vcrc_status", "VCRC status", "VCRC 校验结果"},
    Message{"hf.vcrc_computed", "Computed VCRC", "计算得到的 VCRC"},
    Message{"hf.timeout", "Inferred ACK timeout exponent", "推断的 ACK 超时指数"},
    Message{"hf.wait", "Wait before the resend", "重传前的等待时间"},
    Message{"hf.retries", "Retries", "重试次数"},
    Message{"hf.ooo", "Out of order, tolerated", "乱序（已容忍）"},
    Message{"hf.missing", "Missing PSNs", "缺失的 PSN 个数"},
    Message{"hf.retry_exhausted", "Retries exhausted", "重试耗尽"},
    Message{"hf.related_frame", "Related frame", "相关帧"},
    Message{"hf.ecn", "IP ECN", "IP ECN 字段"},
    Message{"hf.cnp", "Congestion notification packet", "拥塞通知报文"},
    Message{"hf.pfc_link_speed", "Port speed for pause times (Mb/s)",
            "暂停时间换算所用端口速率（Mb/s）"},
    Message{"hf.pfc_priority", "Paused priority", "被暂停的优先级"},
    Message{"hf.pfc_quanta", "Pause quanta", "暂停时间单位数（quanta）"},
    Message{"hf.pfc_pause_us", "Pause time (µs)", "暂停时间（µs）"},
    Message{"hf.pfc_xon", "XON (resume)", "XON（恢复发送）"},
    // ---- tree texts ----
    Message{"tree.item", "{0}: {1}", "{0}：{1}"},
    Message{"tree.yes", "yes", "是"},
    Message{"tree.frame", "frame {}", "第 {} 帧"},
    Message{"tree.bytes", "{} bytes", "{} 字节"},
    Message{"tree.us", "{:.1f} µs", "{:.1f} µs"},
    Message{"tree.timeout", "{0} (4.096 µs × 2^{0} ≈ {1:.1f} ms)",
            "{0}（4.096 µs × 2^{0} ≈ {1:.1f} ms）"},
    Message{"tree.rnr", "{0} ({1} ms)", "{0}（{1} ms）"},
    Message{"tree.end_of_capture", "{} (end of capture)", "{}（抓包结束时的结论）"},
    Message{"icrc.good", "good (0x{:08x})", "正确（0x{:08x}）"},
    Message{"icrc.bad", "bad: the packet carries 0x{0:08x}, computed 0x{1:08x}",
            "错误：报文携带 0x{0:08x}，计算值为 0x{1:08x}"},
    Message{"vcrc.good", "good (0x{:04x})", "正确（0x{:04x}）"},
    Message{"vcrc.bad",
            "bad: the packet carries 0x{0:04x}, computed 0x{1:04x} (damaged on its last link)",
            "错误：报文携带 0x{0:04x}，计算值为 0x{1:04x}（在最后一段链路上损坏）"},
    Message{"icrc.unchecked", "not checked (cut by the snap length, or malformed)",
            "未校验（被抓包截断长度截断，或报文格式错误）"},
    Message{"tree.ecn", "{0} ({1})", "{0}（{1}）"},
    Message{"ecn.not_ect", "Not-ECT: the sender does not take part in ECN",
            "Not-ECT：发送端不参与 ECN"},
    Message{"ecn.ect1", "ECT(1): ECN-capable", "ECT(1)：支持 ECN"},
    Message{"ecn.ect0", "ECT(0): ECN-capable", "ECT(0)：支持 ECN"},
    Message{"ecn.ce", "CE: a switch marked it, Congestion Experienced",
            "CE：交换机已标记，发生拥塞"},
    Message{"tree.cnp", "yes: BTH opcode 0x81, RoCEv2 CNP (IBTA annex A17)",
            "是：BTH 操作码 0x81，RoCEv2 CNP（IBTA 附录 A17）"},
    Message{"info.cnp", "RoCEv2 CNP (congestion notification) QP=0x{:06x}",
            "RoCEv2 CNP（拥塞通知报文）QP=0x{:06x}"},
    Message{"tree.pfc", "PFC pause frame (802.1Qbb), times at {:g} Gb/s",
            "PFC 暂停帧（802.1Qbb），时间按 {:g} Gb/s 换算"},
    Message{"tree.pause", "PAUSE frame (802.3x, whole link), time at {:g} Gb/s",
            "PAUSE 帧（802.3x，整条链路），时间按 {:g} Gb/s 换算"},
    Message{"tree.xon", "0 (XON: resume now)", "0（XON：立即恢复发送）"},
    Message{"cause.nak", "NAK (go-back-N after a PSN sequence error)",
            "NAK（PSN 序列错误后回退 N 重传）"},
    Message{"cause.rnr", "RNR NAK (receiver not ready)", "RNR NAK（接收端未就绪）"},
    Message{"cause.timeout", "ACK timeout", "ACK 超时"},
    Message{"cause.unknown", "unknown", "未知"},
    // ---- preferences ----
    Message{"pref.language", "Language of the analysis", "分析结果的语言"},
    Message{"pref.language.desc",
            "Language of the rdmalab explanations, tree labels and expert messages. "
            "\"Environment\" follows LANGUAGE, LC_ALL, LC_MESSAGES and LANG. Field names "
            "are chosen when Wireshark starts.",
            "rdmalab 的解释、协议树标签和专家信息所用的语言。“跟随环境”按 LANGUAGE、LC_ALL、"
            "LC_MESSAGES、LANG 环境变量选择。字段名称在 Wireshark 启动时确定。"},
    Message{"pref.link_speed", "Port speed for pause times (Gb/s)",
            "暂停时间换算所用端口速率（Gb/s）"},
    Message{"pref.link_speed.desc",
            "PFC and PAUSE times are counted in quanta of 512 bit times, so their length depends "
            "on the port speed: 100 (the default) converts at 100 Gb/s, 5.12 ns a quantum. 0 "
            "infers it from the closest spacing of two frames, like rdmapcap without "
            "--link-speed.",
            "PFC 与 PAUSE 的暂停时间以 512 比特时间为一个单位（quanta），实际长度取决于端口速率："
            "100（默认）按 100 Gb/s 换算，每个单位 5.12 ns。填 0 则像不带 --link-speed 的 "
            "rdmapcap 一样，由两帧之间的最小间隔推断。"},
    Message{"pref.pfc_storm", "PFC storm threshold (µs)", "PFC 风暴阈值（µs）"},
    Message{"pref.pfc_storm.desc",
            "A priority paused without a break for longer than this is a PFC storm (expert "
            "error). 100000 µs (100 ms), the default, is rdmapcap's --pfc-storm-ms default: the "
            "\"auto\" PFC storm prevention timeout of NVIDIA's mlx5 driver.",
            "某个优先级连续暂停超过这么多 µs 即判为 PFC 风暴（专家信息：错误）。默认 100000 µs"
            "（100 ms），与 rdmapcap 的 --pfc-storm-ms 默认值相同，即 NVIDIA mlx5 驱动 PFC "
            "风暴防护的“auto”超时。"},
    Message{"pref.lang.env", "Environment", "跟随环境"},
    Message{"pref.lang.en", "English", "英文"},
    Message{"pref.lang.zh", "Chinese", "中文"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

}  // namespace rdmalab::wireshark::detail

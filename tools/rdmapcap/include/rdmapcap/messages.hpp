// rdmapcap's own messages: help texts and errors of the command line.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmapcap {

using rdmalab::i18n::Message;

inline constexpr std::array kCatalog{
    Message{"app",
            "rdmapcap: read RoCE captures (pcap, pcapng): decode, follow PSNs, explain losses",
            "rdmapcap：读取 RoCE 抓包（pcap、pcapng）：解码、跟踪 PSN、解释丢包与重传"},
    Message{
        "exit_codes",
        "Exit codes: 0 success; 1 the capture holds protocol errors (malformed packets, ICRC "
        "mismatches, fatal NAKs, exhausted retries); 2 usage error; 3 the input file cannot be "
        "read (missing, not a capture, truncated, unsupported link type).",
        "退出码：0 成功；1 抓包中有协议错误（格式错误的报文、ICRC 错误、致命 NAK、重试耗尽）；2 "
        "用法错误；3 输入文件无法读取（不存在、不是抓包文件、文件被截断、不支持的链路层类型）。"},
    Message{"arg.file", "file", "抓包文件"},  // the positional's name in the usage line
    Message{"opt.file", "capture file (pcap or pcapng)", "抓包文件（pcap 或 pcapng）"},
    Message{"opt.json", "write JSON (decode: one object per RoCE packet, JSON Lines)",
            "输出 JSON（decode：每个 RoCE 报文一个对象，JSON Lines 格式）"},
    Message{"opt.no_icrc", "do not verify ICRCs (faster on large captures)",
            "不校验 ICRC（处理大抓包时更快）"},
    Message{"opt.all", "also show packets that are not RoCE", "同时显示非 RoCE 报文"},
    Message{
        "opt.payload",
        "also show each packet's payload bytes (a hex dump; with --json a \"payload_hex\" field)",
        "同时显示每个报文的载荷字节（十六进制转储；配合 --json 时为 \"payload_hex\" 字段）"},
    Message{"opt.conv", "conversation number, as listed by summary",
            "会话编号（见 summary 的输出）"},
    Message{"opt.svg", "also write the diagram as an SVG picture to this file",
            "同时把时序图以 SVG 图片写入该文件"},
    Message{"opt.rows", "draw at most this many packets", "最多画出这么多个报文"},
    Message{"opt.color", "colour: auto, always or never (NO_COLOR is respected)",
            "颜色：auto、always 或 never（遵循 NO_COLOR 环境变量）"},
    Message{"opt.ascii",
            "draw with ASCII characters only (for terminals that draw box-drawing characters "
            "two columns wide)",
            "只用 ASCII 字符绘制（适用于把制表符显示为两列宽的终端）"},
    Message{"cmd.decode", "every packet, header by header, each field explained, ICRC checked",
            "逐个报文、逐个头部解码，解释每个字段并校验 ICRC"},
    Message{"cmd.summary",
            "per conversation: messages, losses, NAKs, timeouts, round trips, goodput",
            "按会话统计：消息、丢包、NAK、超时、往返时延、有效吞吐"},
    Message{"cmd.ladder", "time-sequence (ladder) diagram of one conversation", "一个会话的时序图"},
    Message{"err.link",
            "{0}: unsupported link type {1} (rdmapcap reads Ethernet, Linux cooked SLL/SLL2 and "
            "raw IP)",
            "{0}：不支持的链路层类型 {1}（rdmapcap 支持以太网、Linux cooked SLL/SLL2 和原始 IP）"},
    Message{"err.no_conv", "no conversation {0}: the capture has {1}",
            "没有会话 {0}：这个抓包只有 {1} 个会话"},
    Message{"err.svg", "cannot write {}", "无法写入 {}"},
    Message{"err.partial", "the output above covers the packets read before the error",
            "以上输出只包含出错之前读到的报文"},
    Message{"progress", "reading", "读取中"},
    // ---- congestion and flow control ----
    Message{
        "opt.link_speed",
        "port speed for PFC pause times, e.g. 100G, 25G, 400G (default: inferred from the "
        "closest spacing of two frames)",
        "PFC 暂停时间换算所用的端口速率，例如 100G、25G、400G（默认：由两帧之间的最小间隔推断）"},
    Message{"opt.pfc_storm",
            "a priority paused longer than this many ms is a PFC storm (default 100, the \"auto\" "
            "PFC storm prevention timeout of NVIDIA's mlx5 driver)",
            "某个优先级连续暂停超过这么多 ms 即判为 PFC 风暴（默认 100，即 NVIDIA mlx5 驱动 PFC "
            "风暴防护的“auto”超时）"},
    Message{"opt.max_channels",
            "PSN spaces (one per requester QP) followed at once; packets of further ones are only "
            "counted (default 262144)",
            "同时跟踪的 PSN 空间数（每个请求端 QP 一个）；超出部分的报文只计数、不分析（默认 "
            "262144）"},
    Message{"err.untracked",
            "warning: {0} packet(s) belong to PSN spaces beyond the limit of {1} and were only "
            "counted, not analysed; raise the limit with --max-channels",
            "警告：有 {0} 个报文属于超出上限 {1} 的 PSN 空间，只计数、未分析；可用 --max-channels "
            "提高上限"},
    Message{
        "err.link_speed",
        "--link-speed {}: not a port speed (write a number and a unit: 100G, 25G, 400G, 100000M)",
        "--link-speed {}：不是有效的端口速率（请写数字加单位：100G、25G、400G、100000M）"},
    Message{"more_rows", "({} more packets of this conversation not drawn; see --rows)",
            "（该会话还有 {} 个报文未画出；见 --rows）"},
    // ---- rdmapcap report ----
    Message{"cmd.report",
            "one self-contained HTML page: summary, findings, ladders, events, rate/CE/CNP/PFC "
            "timelines",
            "生成一个独立的 HTML 页面：概要、结论、时序图、分析事件、速率/CE/CNP/PFC 时间线"},
    Message{"opt.output", "the HTML file to write", "要写入的 HTML 文件"},
    Message{"cmd.plot",
            "the report's overview plot alone, as an SVG picture: every requester's rate on one "
            "scale, its CE marks and CNPs, and the PFC pauses",
            "只输出报告中的总览图（SVG 图片）：所有请求端的速率（同一刻度）、各自的 CE 标记和 CNP，"
            "以及 PFC 暂停"},
    Message{"opt.plot_output", "the SVG file to write", "要写入的 SVG 文件"},
    Message{"opt.plot_lanes", "requester QPs drawn, in conversation order (default 16)",
            "按会话顺序画出的请求端 QP 数（默认 16）"},
    Message{"err.write_plot",
            "cannot write the plot to {}: check that its folder exists and is writable",
            "无法把图写入 {}：请检查其所在目录是否存在、是否可写"},
    Message{"opt.report_rows", "ladder rows drawn per conversation (default 2000)",
            "每个会话的时序图最多画出的行数（默认 2000）"},
    Message{"opt.report_convs", "conversations given a section of their own (default 100)",
            "单独成节的会话数上限（默认 100）"},
    Message{"err.write",
            "cannot write the report to {}: check that its folder exists and is writable",
            "无法把报告写入 {}：请检查其所在目录是否存在、是否可写"},
    Message{"rep.title", "rdmapcap report: {}", "rdmapcap 报告：{}"},
    Message{"rep.generated", "Made by rdmapcap report from {}; opens without a network.",
            "由 rdmapcap report 根据 {} 生成；无需网络即可打开。"},
    Message{"rep.contents", "Contents", "目录"},
    Message{"rep.capture", "Capture", "抓包概况"},
    Message{"rep.frames", "frames", "帧数"},
    Message{"rep.roce", "RoCE packets (RoCEv1 among them)", "RoCE 报文（其中 RoCEv1）"},
    Message{"rep.other", "other frames (not RoCE, skipped)", "其他帧（非 RoCE，已跳过）"},
    Message{"rep.malformed", "malformed / ICRC errors / unknown opcodes",
            "格式错误 / ICRC 错误 / 未知操作码"},
    Message{"rep.pause_frames", "pause frames (802.3x, 802.1Qbb)", "暂停帧（802.3x、802.1Qbb）"},
    Message{"rep.duration", "duration", "时长"},
    Message{"rep.conv_count", "conversations", "会话数"},
    Message{"rep.link_speed", "port speed for pause times", "暂停时间换算所用端口速率"},
    Message{"rep.speed_given", "{} Gb/s, given by --link-speed", "{} Gb/s，由 --link-speed 指定"},
    Message{"rep.speed_inferred", "{} Gb/s, inferred from the closest spacing of two frames",
            "{} Gb/s，由两帧之间的最小间隔推断"},
    Message{"rep.speed_assumed", "{} Gb/s, assumed: no two frames to infer it from",
            "{} Gb/s，假定值：没有可供推断的两帧"},
    Message{"rep.speed_none", "not needed (no pause frame)", "不需要（没有暂停帧）"},
    Message{"rep.findings", "Findings", "分析结论"},
    Message{"rep.no_findings",
            "No end-of-capture finding: every request was answered, and no congestion or pause "
            "pattern stood out.",
            "抓包结束时没有需要指出的结论：每个请求都得到了应答，也没有明显的拥塞或暂停现象。"},
    Message{"rep.finding_conv", "conversation {}", "会话 {}"},
    Message{"rep.conversations", "Conversations", "会话"},
    Message{"rep.no_convs", "The capture holds no RoCE conversation.",
            "这个抓包中没有 RoCE 会话。"},
    Message{"rep.convs_cut",
            "{} more conversation(s) have no section of their own; raise --conversations",
            "另有 {} 个会话未单独成节；可用 --conversations 提高上限"},
    Message{"rep.conv", "Conversation {0}: {1} ⇄ {2}", "会话 {0}：{1} ⇄ {2}"},
    Message{"rep.ladder", "Ladder diagram", "时序图"},
    Message{"rep.page", "page {0} of {1}", "第 {0} 页，共 {1} 页"},
    Message{"rep.prev", "◀ previous", "◀ 上一页"},
    Message{"rep.next", "next ▶", "下一页 ▶"},
    Message{"rep.zoom_in", "zoom in", "放大"},
    Message{"rep.zoom_out", "zoom out", "缩小"},
    Message{"rep.rows_cut", "{} more packet(s) of this conversation are not drawn; raise --rows",
            "该会话还有 {} 个报文未画出；可用 --rows 提高上限"},
    Message{"rep.events", "Events", "分析事件"},
    Message{"rep.no_events", "No event above the info level.", "没有高于“信息”级别的事件。"},
    Message{"rep.events_cut", "{} more event(s) not listed", "另有 {} 个事件未列出"},
    Message{"rep.col.frame", "frame", "帧"},
    Message{"rep.col.time", "time (s)", "时间（s）"},
    Message{"rep.col.severity", "severity", "严重程度"},
    Message{"rep.col.event", "event", "事件"},
    Message{"rep.col.text", "explanation", "解释"},
    Message{"rep.end", "end of capture", "抓包结束时"},
    Message{"rep.timeline",
            "Requests {0} → {1}: rate, CE marks, CNPs, queueing delay and PFC pauses over time",
            "请求 {0} → {1}：速率、CE 标记、CNP、排队时延与 PFC 暂停随时间的变化"},
    Message{"rep.lane.rate", "rate (peak {})", "速率（峰值 {}）"},
    Message{"rep.lane.ce", "CE marks ({})", "CE 标记（{} 个）"},
    Message{"rep.lane.cnp", "CNPs ({})", "CNP（{} 个）"},
    Message{"rep.lane.pfc", "PFC {0} priority {1}", "PFC {0} 优先级 {1}"},
    Message{"rep.lane.pause", "PAUSE {0} (whole link)", "PAUSE {0}（整条链路）"},
    Message{"rep.lane.qdelay", "queueing delay (up to {0} above the lowest RTT, {1}; {2} RTTs)",
            "排队时延（比最小 RTT {1} 最多高 {0}；{2} 个 RTT 样本）"},
    Message{"rep.lane.qdelay_none", "queueing delay (no RTT sample)", "排队时延（没有 RTT 样本）"},
    Message{"rep.overview", "Overview", "总览"},
    Message{"rep.overview_title",
            "Request rate of each requester QP on one scale (peak {}), its CE marks, CNPs and "
            "queueing delay, and the PFC pauses",
            "各请求端 QP 的请求速率（同一刻度，峰值 {}）、各自的 CE 标记、CNP 和排队时延，以及 PFC "
            "暂停"},
    Message{"rep.legend", "rate", "速率"},
    Message{"rep.legend_ce", "CE mark", "CE 标记"},
    Message{"rep.legend_cnp", "CNP", "CNP 报文"},
    Message{"rep.legend_pfc", "paused", "暂停中"},
    Message{"rep.legend_qdelay", "queueing delay", "排队时延"},
    Message{"rep.qdelay_scale", "(RTT above the lowest to that responder; top {})",
            "（RTT 减去到该响应端的最小 RTT；顶端 {}）"},
    Message{"rep.lane.requester_title", "conversation {0}: {1} → {2}; {3} CE marks, {4} CNPs",
            "会话 {0}：{1} → {2}；{3} 个 CE 标记，{4} 个 CNP"},
    Message{"rep.lane.qdelay_title",
            "; {0} RTTs, the lowest towards {1} {2}, the highest queueing delay {3}",
            "；{0} 个 RTT 样本，到 {1} 的最小 RTT 为 {2}，最大排队时延 {3}"},
    Message{"rep.lanes_cut", "{} more requester QP(s) not drawn; raise --lanes",
            "另有 {} 个请求端 QP 未画出；可用 --lanes 提高上限"},
    Message{"rep.pfc", "PFC and pause frames", "PFC 与暂停帧"},
    Message{"rep.no_pfc", "The capture holds no pause frame.", "这个抓包中没有暂停帧。"},
    Message{"rep.col.sender", "sender MAC", "发送端 MAC"},
    Message{"rep.col.priority", "priority", "优先级"},
    Message{"rep.col.pause_frames", "frames (XON)", "帧数（其中 XON）"},
    Message{"rep.col.paused", "paused in total", "累计暂停"},
    Message{"rep.col.longest", "longest pause", "最长暂停"},
    Message{"rep.col.storms", "storms", "风暴次数"},
    Message{"rep.whole_link", "all (802.3x)", "全部（802.3x）"},
};

consteval const Message& M(std::string_view key) {
  return rdmalab::i18n::find(kCatalog, key);
}

/// The messages above, for the catalog parity test.
[[nodiscard]] std::span<const Message> catalog() noexcept;

}  // namespace rdmapcap

// Lab 19's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab19 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{"desc",
            "Lab 19: ECN and PFC misconfigured. Lab 18's incast four times on the same seed, each "
            "with one mistake seen on real clusters: the receiver's NIC sends no CNPs, the "
            "senders' NICs ignore them, the switch's PFC threshold sits below ECN's, and a "
            "receiver that stops draining starts a PFC storm. Each case's capture is read first, "
            "then the cause is revealed. On InfiniBand (--link-layer ib) one case: every SL "
            "mapped to one VL. Simulator only: it needs a switch.",
            "实验 19：配错的 ECN 与 PFC。用同一个种子把实验 18 的多打一流量运行四次，每次带一个"
            "真实集群上出现过的错误：接收端网卡不发 CNP；发送端网卡忽略 CNP；交换机的 PFC 阈值"
            "低于 ECN 的阈值；一个不再排空的接收端引发 PFC 风暴。每种情况先读它的抓包，再揭晓"
            "原因。只在模拟器上运行：它需要交换机。"},
    Message{"opt.senders", "senders writing into the one receiver (2 .. 64)",
            "向同一个接收端写入的发送端个数（2 .. 64）"},
    Message{"opt.size", "bytes of each message (2 .. 4194304)", "每条消息的字节数（2 .. 4194304）"},
    Message{"opt.messages", "messages each sender WRITEs (1 .. 64)",
            "每个发送端执行 WRITE 的消息条数（1 .. 64）"},
    Message{"opt.rate",
            "rate of every host link in Gb/s (the link between the switches: "
            "(senders + 2) x this)",
            "每条主机链路的速率，单位 Gb/s（交换机之间的链路为它的（发送端数 + 2）倍）"},
    Message{"opt.case",
            "which case: no-cnp, cnp-ignored, pfc-first, pfc-storm or all (the four in turn); on "
            "InfiniBand one-vl (all is one-vl there)",
            "运行哪种情况：no-cnp、cnp-ignored、pfc-first、pfc-storm 或 all（四种依次运行）；在 "
            "InfiniBand 上为 one-vl（在那里 all 就是 one-vl）"},
    Message{"ib_cases",
            "--case {}: on InfiniBand the one case is one-vl; the other four are misconfigured "
            "PFC, ECN and DCQCN, which are Ethernet's (the simulator does not model InfiniBand's "
            "own congestion control, FECN/BECN)",
            "--case {}：在 InfiniBand 上只有 one-vl 这一种情况；另外四种是配错的 PFC、ECN 和 "
            "DCQCN，它们属于以太网（模拟器没有模拟 InfiniBand 自己的拥塞控制 FECN/BECN）"},
    Message{"one_vl_ib",
            "--case one-vl misconfigures InfiniBand's SL-to-VL tables: add --link-layer ib",
            "--case one-vl 配错的是 InfiniBand 的 SL 到 VL 映射表：请加上 --link-layer ib"},
    Message{"needs_sim",
            "lab 19 runs on the simulator only: it needs switches and NICs that the lab "
            "misconfigures on purpose (use --backend sim or auto)",
            "实验 19 只能在模拟器上运行：它需要由实验故意配错的交换机和网卡（请使用 --backend "
            "sim 或 auto）"},
    Message{"bad_size", "--size {}: use 2 .. 4194304 bytes", "--size {}：请使用 2 .. 4194304 字节"},
    Message{"step.backend", "build the fabric: lab 18's dumbbell of two switches",
            "搭建网络：实验 18 的哑铃拓扑，两台交换机"},
    Message{"why.fabric",
            "{0} senders, a victim sender and a second victim on the left switch; the receiver "
            "and the two victims' receivers on the right switch ({1} hosts per switch). Every "
            "host link runs at {2} Gb/s, the link between the switches at {3} Gb/s: the one "
            "congested queue is the right switch's egress to the receiver. Each case below is "
            "a fresh fabric with one thing configured wrong; which one, the capture tells first.",
            "左侧交换机上接 {0} 个发送端、一个受害流发送端和第二个受害流发送端；右侧交换机上接"
            "接收端和两个受害流的接收端（每台交换机 {1} 台主机）。每条主机链路 {2} Gb/s，"
            "交换机之间的链路 {3} Gb/s：唯一拥塞的队列是右侧交换机通往接收端的出口。下面每种"
            "情况都是一张新的网络，其中有一处配置错误；错在哪里，先由抓包来说。"},
    Message{"step.derive", "derive what the cases must show, before running them",
            "运行之前，先推导各种情况必须呈现的结果"},
    Message{"why.derive",
            "{0} senders x {1} messages of {2} bytes: the ideal incast completes at {3:.1f} µs. "
            "ECN as lab 18's dcqcn run (hpcc-dcqcn scaled to the link): Kmin {4} KB, Kmax {5} "
            "KB, PFC XOFF {6} KB (2 Kmax). Cases 1 and 2: whatever the NICs do, the switches "
            "are set right, so marks must come (without a slowdown the queue passes Kmax, where "
            "every frame is marked) and so must pauses (it reaches XOFF). Case 3: XOFF {7} KiB "
            "under Kmin: the bottleneck's queue is at most XOFF, the frame that crossed it and "
            "what the fast link delivers in a pause's round trip, {8} bytes, under Kmin: it "
            "cannot mark. Case 4: a pause of 0xFFFF quanta lasts {9:.1f} µs at the host's rate; "
            "renewed every {10:.1f} µs, it never lapses.",
            "{0} 个发送端 × 每个 {1} 条 {2} 字节的消息：理想的 incast 在 {3:.1f} µs 完成。ECN "
            "与实验 18 的 dcqcn 运行相同（hpcc-dcqcn，按链路速率缩放）：Kmin {4} KB、Kmax {5} "
            "KB，PFC XOFF {6} KB（2 Kmax）。情况 1 和 2：不论网卡怎样，交换机是配对的，所以必然"
            "有标记（发送端不降速，队列就会越过 Kmax，在那里每一帧都被标记），也必然有暂停帧（"
            "队列会到达 XOFF）。情况 3：XOFF {7} KiB 低于 Kmin：瓶颈队列至多是 XOFF、越过它的那"
            "一帧，再加上暂停帧一个往返内高速链路送来的数据，共 {8} 字节，低于 Kmin：它无法"
            "标记。情况 4：0xFFFF 个 quanta 的暂停在主机速率下持续 {9:.1f} µs；每 {10:.1f} µs "
            "续发一次，它永不中断。"},
    Message{"why.derive_ib",
            "InfiniBand: credits instead of PFC, and no ECN. {0} senders x {1} messages of {2} "
            "bytes: the ideal incast ends at {3:.1f} µs, and with credits the bottleneck never "
            "idles (chapter 26). The senders and the victim use SL 3, the second victim SL 0. "
            "With the tables right, the SL 3 victim waits in turn with the senders and gets one "
            "sender's share, {4:.2f} Gb/s, and the SL 0 victim, on its own VL, at least {5:.2f} "
            "Gb/s (95% of its rate alone).",
            "InfiniBand：用信用代替 PFC，没有 ECN。{0} 个发送端 × 每个 {1} 条 {2} 字节的消息："
            "理想的 incast 在 {3:.1f} µs 结束，有了信用，瓶颈从不空闲（第 26 章）。各发送端和"
            "受害流使用 SL 3，第二条受害流使用 SL 0。映射表正确时，SL 3 上的受害流与各发送端"
            "轮流发送，得到一个发送端的份额 {4:.2f} Gb/s；SL 0 上的受害流在自己的 VL 上，至少"
            "达到 {5:.2f} Gb/s（它独占网络时速率的 95%）。"},
    Message{"why.tclass",
            "every RoCE QP's address vector sets ah_attr.grh.traffic_class = {0} (DSCP {1}): "
            "the switches map DSCP {1} to traffic class {2}, the priority PFC protects and ECN "
            "marks.",
            "每个 RoCE QP 的地址向量设置 ah_attr.grh.traffic_class = {0}（DSCP {1}）：交换机把 "
            "DSCP {1} 映射到流量类别 {2}，即 PFC 保护、ECN 标记的优先级。"},
    Message{"step.run", "case {}: every sender WRITEs at once",
            "情况 {}：所有发送端同时执行 WRITE"},
    Message{"step.again",
            "case {}: a fresh fabric, the same hosts, QPs and seed; every sender WRITEs at once",
            "情况 {}：一张新的网络，同样的主机、QP 和种子；所有发送端同时执行 WRITE"},
    Message{"why.run_ecn",
            "the senders and the victims post their WRITEs at once; the lab waits for every "
            "completion. The capture sits at the hosts' ports, where frames arrive.",
            "发送端和受害流同时提交 WRITE；实验等待全部完成。抓包位于各主机的端口，记录到达的帧。"},
    Message{"why.run_storm",
            "the senders post their WRITEs; the victims post theirs a little over 1 ms later; "
            "the lab lets 150 ms of virtual time pass, whatever completes. The capture sits at "
            "the hosts' ports, where frames leave (and where the switches' pause frames arrive).",
            "发送端提交 WRITE；受害流在 1 ms 多之后提交；实验让虚拟时间走过 150 ms，不论完成"
            "多少。抓包位于各主机的端口，记录离开的帧（以及交换机发来的暂停帧）。"},
    Message{"every_sender", "every sender", "每个发送端"},
    Message{"step.evidence", "case {}: what the capture shows", "情况 {}：抓包里有什么"},
    Message{"why.capture",
            "the capture, read by the analyser rdmapcap uses (the same findings as `rdmapcap "
            "summary` and `rdmapcap report`):",
            "用 rdmapcap 所用的分析器读取抓包（与 `rdmapcap summary`、`rdmapcap report` 的结论"
            "相同）："},
    Message{"row.cap_ce", "CE-marked packets", "带 CE 标记的包"},
    Message{"row.cap_cnp", "CNPs", "CNP 个数"},
    Message{"row.cap_pause", "PFC pause frames (XOFF)", "PFC 暂停帧（XOFF）"},
    Message{"row.findings", "findings", "结论"},
    Message{"val.findings", "CE without CNP {0}, CNP without slowdown {1}, PFC storm {2}",
            "有 CE 无 CNP {0}，有 CNP 未降速 {1}，PFC 风暴 {2}"},
    Message{"row.vl_not_sl", "packets whose VL is not their SL", "VL 与 SL 不同的报文"},
    Message{"val.vl_not_sl", "{0} (SL {1} in VL {2}, ...)", "{0}（SL {1} 在 VL {2} 中，……）"},
    Message{"row.xmit_wait", "PortXmitWait (all ports)", "PortXmitWait（所有端口合计）"},
    Message{"row.victim_sl3", "victim on SL 3", "SL 3 上的受害流"},
    Message{"row.victim_sl0", "victim on SL 0", "SL 0 上的受害流"},
    Message{"check.vl_in_capture",
            "the capture shows packets in another VL than their SL: a switch's table moved them",
            "抓包里有 VL 与 SL 不同的报文：是交换机的映射表移动了它们"},
    Message{"check.victims_held",
            "both victims got one sender's share, {:.2f} Gb/s within 10%: the SL 0 victim waits "
            "behind the incast as the SL 3 one does",
            "两条受害流都只得到一个发送端的份额 {:.2f} Gb/s（误差 10% 以内）：SL 0 上的受害流和"
            "SL 3 上的一样，排在 incast 后面等待"},
    Message{"row.completion", "last completion", "最后一个完成"},
    Message{"val.completion", "{0:.1f} µs  (ideal {1:.1f})", "{0:.1f} µs（理想值 {1:.1f}）"},
    Message{"row.drops", "drops", "丢包"},
    Message{"val.drops", "{0}  (priority 3: {1})", "{0}（优先级 3：{1}）"},
    Message{"row.pauses", "pause frames XOFF / XON (switches)", "暂停帧 XOFF / XON（交换机）"},
    Message{"row.paused", "paused time (switch ports)", "暂停时间（交换机端口合计）"},
    Message{"row.ecn", "ECN marked: left / right switch", "ECN 标记：左 / 右交换机"},
    Message{"val.ecn", "{0} / {1}  (at the bottleneck: {2})", "{0} / {1}（瓶颈处：{2}）"},
    Message{"row.np_marked", "np_ecn_marked_roce_packets",
            "收到的 CE 请求 np_ecn_marked_roce_packets"},
    Message{"row.cnp", "np_cnp_sent / rp_cnp_handled / rp_cnp_ignored",
            "CNP 计数：np_cnp_sent / rp_cnp_handled / rp_cnp_ignored"},
    Message{"row.queue", "max queue at the bottleneck", "瓶颈处的最大队列"},
    Message{"val.bytes", "{} bytes", "{} 字节"},
    Message{"row.rates", "senders' DCQCN rate, lowest", "发送端 DCQCN 速率的最低值"},
    Message{"val.no_rp", "no reaction point", "没有反应点"},
    Message{"val.lowest_rate", "{0:.2f} Gb/s  (line {1:.0f})", "{0:.2f} Gb/s（线速 {1:.0f}）"},
    Message{"row.first", "first pause / first mark", "第一个暂停 / 第一个标记"},
    Message{"val.first", "{0:.1f} µs / {1:.1f} µs", "{0:.1f} µs / {1:.1f} µs"},
    Message{"val.first_nomark", "{0:.1f} µs / none", "{0:.1f} µs / 无"},
    Message{"row.storm_xoff", "XOFF sent by the receiver's NIC", "接收端网卡发出的 XOFF"},
    Message{"row.storm_paused", "switch port to the receiver paused",
            "通往接收端的交换机端口被暂停"},
    Message{"row.isl_paused", "left switch's port to the right paused",
            "左交换机通往右交换机的端口被暂停"},
    Message{"row.senders_paused", "senders paused by the left switch", "被左交换机暂停的发送端"},
    Message{"row.sender_msgs", "incast messages completed", "完成的 incast 消息"},
    Message{"val.messages", "{0} of {1}", "{1} 条中的 {0} 条"},
    Message{"row.victim", "victim (prio 3, other receiver)", "受害流（优先级 3，另一接收端）"},
    Message{"row.other", "victim on prio 0", "优先级 0 上的受害流"},
    Message{"val.other", "{0} of {1} messages, {2:.2f} Gb/s", "{1} 条中的 {0} 条，{2:.2f} Gb/s"},
    Message{"row.timeouts", "senders' ACK timeouts", "发送端的 ACK 超时"},
    Message{"check.no_drops", "no frame of the lossless priority 3 was dropped anywhere",
            "无损优先级 3 的帧在任何地方都没有被丢弃"},
    Message{"check.complete", "every WRITE completed successfully and every byte is in place",
            "每个 WRITE 都成功完成，每个字节都已就位"},
    Message{"check.ideal", "the last completion is no earlier than the ideal {:.1f} µs",
            "最后一个完成不早于理想的 {:.1f} µs"},
    Message{"check.ce_on_wire",
            "every frame a switch marked CE is in the capture and reached its receiver's NIC "
            "(CE packets = marks at the two switches = np_ecn_marked_roce_packets)",
            "交换机打上 CE 标记的每一帧都在抓包里，并到达了接收端网卡（CE 包数 = 两台交换机的"
            "标记数 = np_ecn_marked_roce_packets）"},
    Message{"check.marks", "the receivers' NICs saw CE-marked requests",
            "接收端网卡收到了带 CE 标记的请求"},
    Message{"check.pauses", "the queue reached XOFF: the switches sent pause frames",
            "队列到达了 XOFF：交换机发送了暂停帧"},
    Message{"check.none_handled", "no sender's NIC acted on a CNP (rp_cnp_handled = 0)",
            "没有任何发送端网卡处理 CNP（rp_cnp_handled = 0）"},
    Message{"check.line_rate",
            "PFC alone keeps the bottleneck busy: the last completion by {:.1f} µs",
            "仅靠 PFC 让瓶颈一直忙碌：最后一个完成不晚于 {:.1f} µs"},
    Message{"check.queue_cap", "the bottleneck queue stayed within XOFF + headroom = {} KB",
            "瓶颈队列始终不超过 XOFF + headroom = {} KB"},
    Message{"check.no_cnp", "no CNP was sent, none is on the wire (np_cnp_sent = 0)",
            "没有发送任何 CNP，线路上也没有（np_cnp_sent = 0）"},
    Message{"check.rate_line", "the senders never slowed: their DCQCN rate stayed at {:.0f} Gb/s",
            "发送端从未降速：它们的 DCQCN 速率一直是 {:.0f} Gb/s"},
    Message{"check.finding_ce", "the capture's analysis finds CE marks without CNPs",
            "抓包分析发现了有 CE 标记却没有 CNP"},
    Message{"check.cnps_sent", "the receivers' NICs sent CNPs", "接收端网卡发送了 CNP"},
    Message{"check.ignored",
            "every CNP reached its sender and was ignored (rp_cnp_ignored = np_cnp_sent = CNPs "
            "in the capture)",
            "每个 CNP 都到达了发送端并被忽略（rp_cnp_ignored = np_cnp_sent = 抓包中的 CNP 数）"},
    Message{"check.no_rp", "the senders' NICs have no DCQCN reaction point",
            "发送端网卡没有 DCQCN 反应点"},
    Message{"check.no_bottleneck_mark",
            "the bottleneck never marked: its queue stayed within {} bytes, under Kmin ({} bytes)",
            "瓶颈从未标记：它的队列始终不超过 {} 字节，低于 Kmin（{} 字节）"},
    Message{"check.pause_first", "the first pause came before the first CE mark, if any",
            "第一个暂停帧早于第一个 CE 标记（如果有标记的话）"},
    Message{"check.storm_source", "the receiver's NIC sent XOFF frames",
            "接收端网卡发送了 XOFF 帧"},
    Message{"check.storm_spread",
            "the pauses spread upstream: the right switch paused the link between the "
            "switches, the left switch paused all {} senders",
            "暂停向上游扩散：右交换机暂停了交换机之间的链路，左交换机暂停了全部 {} 个发送端"},
    Message{"check.storm_victim",
            "the victim on priority 3 (another receiver) stalled: none of its messages completed, "
            "its NIC was paused",
            "优先级 3 上的受害流（另一接收端）停滞：它没有一条消息完成，它的网卡被暂停"},
    Message{"check.other_class",
            "the victim on priority 0 is not paused: at least {:.2f} Gb/s (95% of its rate alone)",
            "优先级 0 上的受害流没有被暂停：至少 {:.2f} Gb/s（它独占网络时速率的 95%）"},
    Message{"check.storm_finding",
            "the capture's analysis finds a PFC storm from the receiver's MAC, longer than "
            "100 ms (rdmapcap's default --pfc-storm-ms)",
            "抓包分析发现来自接收端 MAC 的 PFC 风暴，长于 100 ms（rdmapcap 的默认 "
            "--pfc-storm-ms）"},
    Message{"step.reveal", "case {0} revealed: {1}", "揭晓情况 {0}：{1}"},
    Message{"reveal.no_cnp",
            "what was misconfigured: the receiver's NIC had its notification point off (on mlx5, "
            "/sys/class/net/<if>/ecn/roce_np/enable/3 = 0, or DCQCN never enabled for priority 3 "
            "there). The switch marked CE as configured, the NIC counted the marks "
            "(np_ecn_marked_roce_packets) and answered none of them: np_cnp_sent stayed 0, so "
            "the senders never learnt of the congestion, ran at line rate, and PFC, the last "
            "resort, did all the work. On the wire: CE marks in the requests, no CNP going back.",
            "配错的地方：接收端网卡的通知点（NP）是关闭的（在 mlx5 上，/sys/class/net/<if>/ecn/"
            "roce_np/enable/3 = 0，或者那里从未为优先级 3 启用 DCQCN）。交换机按配置打上 CE 标记"
            "，网卡也数了这些标记（np_ecn_marked_roce_packets），却一个也不回应：np_cnp_sent "
            "始终为 0，发送端从不知道发生了拥塞，一直以线速发送，所有工作都落在最后的防线 PFC "
            "身上。线路上的样子：请求带 CE 标记，却没有 CNP 回来。"},
    Message{"reveal.cnp_ignored",
            "what was misconfigured: the senders' NICs had their reaction point off (on mlx5, "
            "/sys/class/net/<if>/ecn/roce_rp/enable/3 = 0). The receivers sent CNPs as they "
            "should; the senders counted them as ignored (mlx5's rp_cnp_ignored) and kept their "
            "rate: rp_cnp_handled stayed 0, and PFC again did the work. On the wire: CE marks "
            "and CNPs, and senders whose rate the CNPs did not touch.",
            "配错的地方：发送端网卡的反应点（RP）是关闭的（在 mlx5 上，/sys/class/net/<if>/ecn/"
            "roce_rp/enable/3 = 0）。接收端照常发送 CNP；发送端把它们记为被忽略（mlx5 的 "
            "rp_cnp_ignored），速率不变：rp_cnp_handled 始终为 0，工作又落在 PFC 身上。线路上的"
            "样子：有 CE 标记，也有 CNP，而发送端的速率不受 CNP 影响。"},
    Message{"reveal.pfc_first",
            "what was misconfigured: the switches' thresholds were in the wrong order. PFC's "
            "XOFF ({0} KiB) sat below ECN's Kmin ({1} KB): the bottleneck paused its upstream "
            "before its queue could ever reach Kmin, so it never marked, and DCQCN, though right "
            "in every NIC, heard nothing from where the congestion was. The queue moved upstream "
            "with the pauses; marks, where there were any, came from the switch it moved into, "
            "on every flow through that port, the victim's too. ECN must act first: Kmin < Kmax "
            "< XOFF on every switch.",
            "配错的地方：交换机的阈值顺序错了。PFC 的 XOFF（{0} KiB）低于 ECN 的 Kmin（{1} KB）"
            "：瓶颈在队列到达 Kmin 之前就已经暂停了上游，所以它从不标记；各网卡里的 DCQCN 虽然"
            "都配置正确，却听不到拥塞所在之处的任何消息。队列随着暂停帧移到了上游；如果有标记，"
            "也来自队列移入的那台交换机，落在经过那个端口的每一条流上，包括受害流。ECN 必须先"
            "起作用：每台交换机上都要 Kmin < Kmax < XOFF。"},
    Message{"reveal.one_vl",
            "what was misconfigured: the switches' SL-to-VL tables mapped every SL to VL 0. The "
            "victim chose SL 0 to stay out of the incast's way, but at every switch it landed in "
            "the incast's VL, its buffers and its credits: it waited in turn with the senders, "
            "exactly as the SL 3 victim did. The capture shows it: packets sent with SL 3 (the "
            "hosts' tables map SL n to VL n) arrive in VL 0. On a real fabric the subnet manager "
            "writes these tables; OpenSM does so only with its QoS enabled (qos TRUE in "
            "opensm.conf, with qos_sl2vl), and smpquery sl2vl shows a port's table.",
            "配错的地方：交换机的 SL 到 VL 映射表把每个 SL 都映射到 VL 0。受害流选择 SL 0 本是"
            "为了避开 incast，但在每台交换机上它都落进了 incast 的 VL、它的缓冲区和它的信用："
            "它与各发送端轮流等待，和 SL 3 上的受害流完全一样。抓包能看出来：以 SL 3 发出的报文"
            "（主机的映射表把 SL n 映射到 VL n）到达时在 VL 0 中。在真实网络中，这些表由子网"
            "管理器写入；OpenSM 只有启用 QoS 时才写（opensm.conf 中的 qos TRUE，以及 "
            "qos_sl2vl），用 smpquery sl2vl 可以查看某个端口的映射表。"},
    Message{"reveal.pfc_storm",
            "what happened: the receiver's host stopped consuming (a hung driver, a full receive "
            "ring, a host stuck in the kernel), and its NIC paused its switch on priority 3 "
            "without a break (a model of it: sim::PfcStorm). The switch's queue to it filled, "
            "the switch paused the link it came in on, the left switch's queue filled in turn "
            "and it paused every sender on priority 3: pause by pause, hop by hop, the storm "
            "spread upstream. A victim going to another receiver stalled with them, because it "
            "shares the paused priority on the paused link; a flow on priority 0 went on. The "
            "cure on a real cluster is the PFC watchdog (storm prevention): a port paused for "
            "longer than its timeout stops honouring pauses and drops that priority's frames.",
            "发生了什么：接收端的主机不再消费数据（驱动挂死、接收环满、主机卡在内核里），它的"
            "网卡在优先级 3 上不间断地暂停交换机（这里用 sim::PfcStorm 作为它的模型）。交换机"
            "通往它的队列被填满，交换机暂停了数据进来的那条链路，左侧交换机的队列随之填满，它又"
            "在优先级 3 上暂停了每个发送端：一帧接一帧、一跳接一跳，风暴向上游扩散。发往另一个"
            "接收端的受害流也一起停滞，因为它与它们共用被暂停链路上被暂停的优先级；优先级 0 上"
            "的流照常进行。真实集群上的对策是 PFC watchdog（风暴防护）：一个端口被暂停的时间"
            "超过其超时值后，它不再遵从暂停帧，并丢弃该优先级的帧。"},
    Message{"try.1", "--case pfc-first --senders 16: does the bottleneck still never mark?",
            "--case pfc-first --senders 16：瓶颈还会一直不标记吗？"},
    Message{"try.2",
            "rdmapcap report on each capture: where are the CE marks, the CNPs, the paused "
            "intervals?",
            "对每个抓包运行 rdmapcap report：CE 标记、CNP、暂停区间各在哪里？"},
    Message{"try.3", "rdmapcap summary --pfc-storm-ms 50 on case 4's capture: what changes?",
            "对情况 4 的抓包运行 rdmapcap summary --pfc-storm-ms 50：有什么变化？"},
    Message{"try.4", "--json: every number, for a script", "--json：输出全部数字，供脚本使用"},
    Message{"try.ib",
            "lab18 --link-layer ib: the same incast with the tables right, the SL 0 victim at "
            "line rate",
            "lab18 --link-layer ib：映射表正确时同样的 incast，SL 0 上的受害流以线速运行"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab19

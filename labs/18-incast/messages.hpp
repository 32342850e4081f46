// Lab 18's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab18 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{"desc",
            "Lab 18: incast. N senders WRITE into one receiver through a switched fabric, three "
            "times on the same seed: lossy (tail drops, NAKs, go-back-N), with PFC (no drop, "
            "pause frames, a victim flow stalled by head-of-line blocking) and with ECN + DCQCN "
            "(CNPs, rates near the fair share, a short queue). On InfiniBand (--link-layer ib) "
            "one run, credits: IB's credit-based flow control. Simulator only: it needs a switch.",
            "实验 18：incast（多打一）。N 个发送端经过交换网络向同一个接收端执行 WRITE，用同一个"
            "种子运行三次：有损（尾部丢包、NAK、go-back-N 重传）、开启 PFC（不丢包、暂停帧、"
            "一条被队头阻塞拖慢的受害流）、开启 ECN + DCQCN（CNP、速率接近公平份额、队列很短）。"
            "在 InfiniBand 上（--link-layer ib）只有一种运行 credits：InfiniBand 基于信用的流控。"
            "只在模拟器上运行：它需要交换机。"},
    Message{"opt.senders", "senders writing into the one receiver (2 .. 64)",
            "向同一个接收端写入的发送端个数（2 .. 64）"},
    Message{"opt.size", "bytes of each message (2 .. 4194304)", "每条消息的字节数（2 .. 4194304）"},
    Message{"opt.messages", "messages each sender WRITEs (1 .. 1024)",
            "每个发送端执行 WRITE 的消息条数（1 .. 1024）"},
    Message{"opt.rate",
            "rate of every host link in Gb/s (the link between the switches: "
            "(senders + 2) x this)",
            "每条主机链路的速率，单位 Gb/s（交换机之间的链路为它的（发送端数 + 2）倍）"},
    Message{"opt.run",
            "which runs: lossy, pfc, dcqcn or all (the three side by side); on InfiniBand "
            "credits (all is credits there)",
            "运行哪几种：lossy、pfc、dcqcn 或 all（三种并排）；在 InfiniBand 上为 credits"
            "（在那里 all 就是 credits）"},
    Message{"ib_runs",
            "--run {}: on InfiniBand the one run is credits; lossy, pfc and dcqcn are Ethernet's "
            "(an IB link is never lossy, has no PFC or ECN, and the simulator does not model IB's "
            "own congestion control, FECN/BECN)",
            "--run {}：在 InfiniBand 上只有 credits 这一种运行；lossy、pfc 和 dcqcn 属于以太网"
            "（InfiniBand 链路从不丢包，没有 PFC 和 ECN，而模拟器没有模拟 InfiniBand 自己的拥塞"
            "控制 FECN/BECN）"},
    Message{"credits_ib",
            "--run credits is InfiniBand's credit-based flow control: add --link-layer ib",
            "--run credits 是 InfiniBand 基于信用的流控：请加上 --link-layer ib"},
    Message{"opt.dcqcn",
            "the dcqcn run's parameters: hpcc-dcqcn (the reference code's, scaled to --rate), mlx5 "
            "(the NIC firmware's defaults) or dcqcn-paper (Zhu et al., SIGCOMM 2015)",
            "dcqcn 这一轮使用的参数：hpcc-dcqcn（参考代码的参数，按 --rate 缩放）、mlx5（网卡固件"
            "的默认值）或 dcqcn-paper（DCQCN 论文，SIGCOMM 2015）"},
    Message{"needs_sim",
            "lab 18 runs on the simulator only: it needs a switch with PFC and ECN that the lab "
            "configures (use --backend sim or auto)",
            "实验 18 只能在模拟器上运行：它需要一台由实验自己配置 PFC 和 ECN 的交换机（请使用 "
            "--backend sim 或 auto）"},
    Message{"bad_size", "--size {}: use 2 .. 4194304 bytes", "--size {}：请使用 2 .. 4194304 字节"},
    Message{"step.backend", "build the fabric: two switches, a dumbbell",
            "搭建网络：两台交换机组成的哑铃拓扑"},
    Message{"why.fabric",
            "{0} senders, a victim sender and a second victim on the left switch; the receiver "
            "and the two victims' receivers on the right switch ({1} hosts per switch). Every "
            "host link runs at {2} Gb/s, the link between the switches at {3} Gb/s: as fast as "
            "the left hosts together, so the one congested queue is the right switch's egress "
            "to the receiver, and anything that slows a victim comes from a pause.",
            "左侧交换机上接 {0} 个发送端、一个受害流发送端和第二个受害流发送端；右侧交换机上接"
            "接收端和两个受害流的接收端（每台交换机 {1} 台主机）。每条主机链路 {2} Gb/s，"
            "交换机之间的链路 {3} Gb/s：与左侧主机加起来一样快，因此唯一拥塞的队列是右侧交换机"
            "通往接收端的出口；受害流若被拖慢，原因只能是暂停帧。"},
    Message{"why.fabric_ib",
            "{0} senders, a victim sender and a second victim on the left switch; the receiver "
            "and the two victims' receivers on the right switch ({1} hosts per switch), all "
            "InfiniBand. Every host link runs at {2} Gb/s, the link between the switches at {3} "
            "Gb/s: as fast as the left hosts together, so the one congested queue is the right "
            "switch's egress to the receiver, and anything that slows a victim comes from "
            "credits held up behind it.",
            "左侧交换机上接 {0} 个发送端、一个受害流发送端和第二个受害流发送端；右侧交换机上接"
            "接收端和两个受害流的接收端（每台交换机 {1} 台主机），全部是 InfiniBand。每条主机"
            "链路 {2} Gb/s，交换机之间的链路 {3} Gb/s：与左侧主机加起来一样快，因此唯一拥塞的"
            "队列是右侧交换机通往接收端的出口；受害流若被拖慢，原因只能是被它挡住的信用。"},
    Message{"step.derive", "derive what the runs must show, before running them",
            "运行之前，先推导各次运行必须呈现的结果"},
    Message{"why.derive",
            "{0} senders x {1} messages of {2} bytes ({3} packets at path MTU 4096, {4:.3f} µs on "
            "one host link). The ideal incast sends every message's frames back to back through "
            "the bottleneck, plus the first frame's way to it and the last ACK's way back: the "
            "last completion at {5:.1f} µs, a goodput of {6:.2f} Gb/s (a full link carries "
            "{7:.2f} Gb/s of payload: 4096 of every 4174 bytes on the wire). The fair share of "
            "each sender is link / N = {8:.2f} Gb/s. A victim behind pauses gets about the "
            "share of one sender: at most {9:.2f} Gb/s (twice link / N).",
            "{0} 个发送端 × 每个 {1} 条 {2} 字节的消息（路径 MTU 4096 下 {3} 个包，在一条主机"
            "链路上耗时 {4:.3f} µs）。理想的 incast 让所有消息的帧在瓶颈处首尾相接地发出，"
            "再加上第一帧到达瓶颈的路程和最后一个 ACK 返回的路程：最后一个完成在 {5:.1f} µs，"
            "有效吞吐 {6:.2f} Gb/s（满载链路承载 {7:.2f} Gb/s 的载荷：线路上每 4174 字节中有 "
            "4096 字节）。每个发送端的公平份额为链路 / N = {8:.2f} Gb/s。被暂停帧挡住的受害流"
            "大约只能得到一个发送端的份额：至多 {9:.2f} Gb/s（链路 / N 的两倍）。"},
    Message{"why.derive_ib",
            "{0} senders x {1} messages of {2} bytes ({3} packets at path MTU 4096, {4:.3f} µs on "
            "one host link; an IB packet is LRH, BTH, payload, ICRC and VCRC, and 2 byte times of "
            "delimiters). The ideal incast sends every message's packets back to back through "
            "the bottleneck: the last completion at {5:.1f} µs, a goodput of {6:.2f} Gb/s (a "
            "full link carries {7:.2f} Gb/s of payload). With credits the bottleneck never "
            "idles, its queue holds at most the credits of the one port that feeds it, {9} "
            "bytes, and the victim on SL 3 takes one turn in N + 1 with the senders in the left "
            "switch's queue: it sends what one sender sends in the incast's time, {8:.2f} Gb/s.",
            "{0} 个发送端 × 每个 {1} 条 {2} 字节的消息（路径 MTU 4096 下 {3} 个包，在一条主机"
            "链路上耗时 {4:.3f} µs；一个 InfiniBand 报文由 LRH、BTH、载荷、ICRC 和 VCRC 组成，"
            "外加 2 个字节时间的定界符）。理想的 incast 让所有消息的报文在瓶颈处首尾相接地发出："
            "最后一个完成在 {5:.1f} µs，有效吞吐 {6:.2f} Gb/s（满载链路承载 {7:.2f} Gb/s 的"
            "载荷）。有了信用，瓶颈从不空闲，它的队列至多是给它供数据的那一个端口的信用，即 {9} "
            "字节；SL 3 上的受害流在左侧交换机的队列里与各发送端轮流发送，N + 1 次轮到一次："
            "它在 incast 的时间内发送一个发送端的数据量，即 {8:.2f} Gb/s。"},
    Message{"why.tclass",
            "every RoCE QP's address vector also sets ah_attr.grh.traffic_class = {0} (DSCP {1}): "
            "the switches map DSCP {1} to traffic class {2}, the priority PFC protects and ECN "
            "marks. The NIC sets the ECN bits itself (ECT(0) with DCQCN on).",
            "每个 RoCE QP 的地址向量还设置了 ah_attr.grh.traffic_class = {0}（DSCP {1}）：交换机"
            "把 DSCP {1} 映射到流量类别 {2}，即 PFC 保护、ECN 标记的优先级。ECN 位由网卡自己"
            "设置（开启 DCQCN 时为 ECT(0)）。"},
    Message{"step.run", "run {}: every sender WRITEs at once", "运行 {}：所有发送端同时执行 WRITE"},
    Message{"step.again",
            "run {}: a fresh fabric, the same hosts, QPs and seed; every sender WRITEs at once",
            "运行 {}：一张新的网络，同样的主机、QP 和种子；所有发送端同时执行 WRITE"},
    Message{"why.lossy",
            "no PFC, no ECN: the bottleneck queue grows until the shared buffer's dynamic "
            "threshold (alpha x the free buffer) refuses frames; a dropped packet leaves a hole, "
            "the receiver NAKs the next one (PSN sequence error) and the sender goes back N, or "
            "waits for its ACK timeout when the lost packet was a message's last.",
            "没有 PFC，没有 ECN：瓶颈队列一直增长，直到共享缓冲区的动态阈值（alpha × 空闲缓冲）"
            "拒收新帧；一个包被丢掉就留下一个空洞，接收端对随后的包回 NAK（PSN 序列错误），"
            "发送端执行 go-back-N；如果丢的是一条消息的最后一个包，就只能等 ACK 超时。"},
    Message{"why.pfc",
            "PFC on priority 3: an ingress port whose bytes in the buffer cross XOFF ({0} KiB) "
            "sends a pause frame upstream; the headroom ({1} KiB) takes what is already on the "
            "way. The right switch pauses the link between the switches, which carries the "
            "victim's frames too: they wait behind the incast.",
            "在优先级 3 上开启 PFC：某个入端口在缓冲区中的字节数超过 XOFF（{0} KiB）时，它向"
            "上游发送暂停帧；已在路上的帧由 headroom（{1} KiB）接住。右侧交换机暂停了交换机之间"
            "的链路，而受害流的帧也走这条链路：它们只能排在 incast 流量后面等待。"},
    Message{"why.dcqcn",
            "ECN + DCQCN with {6}: Kmin {2} KB, Kmax {3} KB, Pmax {4}. The switch marks CE, the "
            "receiver's NIC sends CNPs, each sender's NIC cuts its rate. PFC stays on, with XOFF "
            "at {5} KB, above Kmax: ECN must act before PFC.",
            "ECN + DCQCN，参数采用{6}：Kmin {2} KB、Kmax {3} KB、Pmax {4}。交换机打上 CE 标记，"
            "接收端网卡发送 CNP，发送端网卡随之降速。PFC 仍然开启，XOFF 设为 {5} KB，高于 "
            "Kmax：ECN 必须先于 PFC 起作用。"},
    Message{"why.credits",
            "credits: every switch port keeps 64 KiB per VL and its upstream sends only into "
            "space it has been granted. The right switch's port from the link between the "
            "switches fills with packets for the receiver, so that link's VL 3 moves only as "
            "the bottleneck frees credits; the left switch's VL 3 queue to it, shared by the "
            "senders and the victim, moves at that pace, and every sender waits for credits in "
            "turn (PortXmitWait).",
            "信用：每个交换机端口为每个 VL 保留 64 KiB，它的上游只向分配给自己的空间发送。"
            "右侧交换机上来自交换机之间链路的端口被发往接收端的报文填满，于是那条链路上的 VL 3 "
            "只能随着瓶颈释放信用而前进；左侧交换机通往它的 VL 3 队列由各发送端和受害流共用，"
            "也按这个节奏前进，每个发送端轮流等待信用（PortXmitWait）。"},
    Message{"preset.hpcc_dcqcn", "the reference code's parameters (hpcc-dcqcn, scaled to the link)",
            "参考代码的取值（hpcc-dcqcn，按链路速率缩放）"},
    Message{"preset.mlx5",
            "the mlx5 firmware's defaults (mlx5; the switch's thresholds are the reference code's "
            "at 25 Gb/s)",
            "网卡 mlx5 固件的默认值（mlx5；交换机的阈值取参考代码在 25 Gb/s 下的值）"},
    Message{"preset.dcqcn_paper", "the paper's parameters (dcqcn-paper, a 40 Gb/s testbed)",
            "论文的取值（dcqcn-paper，来自 40 Gb/s 的实验平台）"},
    Message{"every_sender", "every sender and victim", "每个发送端和受害流"},
    Message{"row.goodput", "goodput", "有效吞吐"},
    Message{"row.completion", "last completion", "最后一个完成"},
    Message{"row.fct", "FCT median / p99", "完成时间 中位数 / p99"},
    Message{"row.drops", "drops", "丢包"},
    Message{"row.pauses", "pause frames XOFF / XON (prio 3)", "暂停帧 XOFF / XON（优先级 3）"},
    Message{"row.paused", "paused time (all ports)", "暂停时间（所有端口合计）"},
    Message{"row.ecn", "ECN marked (switches)", "ECN 标记（交换机）"},
    Message{"row.cnp", "CNPs np_cnp_sent / rp_cnp_handled", "CNP 数 np_cnp_sent / rp_cnp_handled"},
    Message{"row.queue", "max queue at the bottleneck", "瓶颈处的最大队列"},
    Message{"row.xmit_wait", "PortXmitWait, VL 3 (all ports)",
            "PortXmitWait，VL 3（所有端口合计）"},
    Message{"row.sender_wait", "PortXmitWait of a sender (mean)",
            "一个发送端的 PortXmitWait（均值）"},
    Message{"row.victim_sl", "victim (SL 3, other receiver)", "受害流（SL 3，另一接收端）"},
    Message{"row.other_sl", "victim on SL 0", "SL 0 上的受害流"},
    Message{"val.drops_vl", "{0}  (VL 3: {1})", "{0}（VL 3：{1}）"},
    Message{"row.retx", "retransmitted packets", "重传的包"},
    Message{"row.victim", "victim (prio 3, other receiver)", "受害流（优先级 3，另一接收端）"},
    Message{"row.other", "victim on prio 0", "优先级 0 上的受害流"},
    Message{"row.rates", "DCQCN rates (mean per sender)", "DCQCN 速率（每个发送端的均值）"},
    Message{"val.drops", "{0}  (priority 3: {1})", "{0}（优先级 3：{1}）"},
    Message{"val.goodput", "{0:.2f} Gb/s  (ideal {1:.2f})", "{0:.2f} Gb/s（理想值 {1:.2f}）"},
    Message{"val.completion", "{0:.1f} µs  (ideal {1:.1f})", "{0:.1f} µs（理想值 {1:.1f}）"},
    Message{"val.queue", "{0} bytes (at {1:.1f} µs)", "{0} 字节（出现在 {1:.1f} µs）"},
    Message{"val.retx", "{0}  (NAK {1}, timeouts {2})", "{0}（NAK {1}，超时 {2}）"},
    Message{"row.window", "rates over [{0:.0f}, {1:.0f}] ms", "[{0:.0f}, {1:.0f}] ms 内的速率"},
    Message{"val.window", "{0:.2f} .. {1:.2f} Gb/s (link / N {2:.2f})",
            "{0:.2f} .. {1:.2f} Gb/s（链路 / N 为 {2:.2f}）"},
    Message{"val.window_short",
            "not measured: a sender finished at {0:.1f} ms (chapter 26 runs --senders 4 --size "
            "4194304 --messages 288)",
            "未测量：有发送端在 {0:.1f} ms 时已经发完（第 26 章运行的是 --senders 4 --size "
            "4194304 --messages 288）"},
    Message{"check.fair_share",
            "every sender's rate over [{0:.0f}, {1:.0f}] ms within 10% of link / N: {2:.2f} .. "
            "{3:.2f} Gb/s (derived for 4 senders with hpcc-dcqcn)",
            "每个发送端在 [{0:.0f}, {1:.0f}] ms 内的速率都在链路 / N 的 10% 以内：{2:.2f} .. "
            "{3:.2f} Gb/s（针对 4 个发送端、hpcc-dcqcn 推导）"},
    Message{"val.rates", "{0:.2f} .. {1:.2f} Gb/s, mean {2:.2f} (link / N {3:.2f})",
            "{0:.2f} .. {1:.2f} Gb/s，均值 {2:.2f}（链路 / N {3:.2f}）"},
    Message{"check.complete", "every WRITE completed successfully and every byte is in place",
            "每个 WRITE 都成功完成，每个字节都已就位"},
    Message{"check.ideal", "the last completion is no earlier than the ideal {:.1f} µs",
            "最后一个完成不早于理想的 {:.1f} µs"},
    Message{"check.drops",
            "the switch tail-dropped: the incast leaves more queued than the queue's cap, {} bytes",
            "交换机发生了尾部丢包：incast 要排队的数据量超过了队列上限 {} 字节"},
    Message{"check.queue_cap",
            "the bottleneck queue never exceeded (buffer + largest frame) / 2 = {} bytes",
            "瓶颈队列从未超过（缓冲区 + 最大帧）/ 2 = {} 字节"},
    Message{"check.retransmit", "every dropped packet was sent again (retransmitted >= drops)",
            "每个被丢的包都被重新发送（重传数 >= 丢包数）"},
    Message{"check.victim_free",
            "the victim is not slowed: at least {:.2f} Gb/s (95% of its rate alone on the fabric)",
            "受害流没有被拖慢：至少 {:.2f} Gb/s（它独占网络时速率的 95%）"},
    Message{"check.no_drops", "no frame of the lossless priority 3 was dropped anywhere",
            "无损优先级 3 的帧在任何地方都没有被丢弃"},
    Message{"check.no_retx", "nothing was sent twice: no NAK went back, no ACK timer expired",
            "没有报文被发送两次：没有 NAK 返回，也没有 ACK 定时器超时"},
    Message{"check.credit_queue",
            "the bottleneck queue stayed within the credits of the port that feeds it, {} bytes",
            "瓶颈队列始终不超过给它供数据的那个端口的信用，即 {} 字节"},
    Message{"check.hol_credits",
            "head-of-line blocking: the victim on SL 3 got one sender's share, {:.2f} Gb/s, "
            "within 10%",
            "队头阻塞：SL 3 上的受害流只得到一个发送端的份额 {:.2f} Gb/s（误差 10% 以内）"},
    Message{"check.other_vl",
            "the victim on SL 0 is not held up: at least {:.2f} Gb/s (95% of its rate alone)",
            "SL 0 上的受害流没有被挡住：至少 {:.2f} Gb/s（它独占网络时速率的 95%）"},
    Message{"check.pauses", "the switches sent pause frames on priority 3",
            "交换机在优先级 3 上发送了暂停帧"},
    Message{"check.pfc_queue", "the bottleneck queue stayed within XOFF + headroom = {} KiB",
            "瓶颈队列始终不超过 XOFF + headroom = {} KiB"},
    Message{"check.hol", "head-of-line blocking: the victim on priority 3 got at most {:.2f} Gb/s",
            "队头阻塞：优先级 3 上的受害流至多得到 {:.2f} Gb/s"},
    Message{"check.other_class",
            "the victim on priority 0 is not paused: at least {:.2f} Gb/s (95% of its rate alone)",
            "优先级 0 上的受害流没有被暂停：至少 {:.2f} Gb/s（它独占网络时速率的 95%）"},
    Message{"row.recovery", "DCQCN first recovery (every sender)", "DCQCN 首次恢复（每个发送端）"},
    Message{"val.recovery",
            "{0:.2f} .. {1:.2f} -> {2:.2f} .. {3:.2f} Gb/s, at {4:.1f} .. {5:.1f} µs",
            "{0:.2f} .. {1:.2f} -> {2:.2f} .. {3:.2f} Gb/s，在 {4:.1f} .. {5:.1f} µs"},
    Message{"row.recoveries", "recoveries of sender 0", "发送端 0 的各次恢复"},
    Message{
        "check.first_recovery",
        "no target clamp before the first increase: every sender's first recovery goes half way "
        "back to the line rate, Rc = (line + Rc) / 2, at least {:.2f} Gb/s",
        "第一次升速之前不钳定目标速率：每个发送端的首次恢复都回到与线速之间的一半，Rc = "
        "（线速 + Rc）/ 2，至少 {:.2f} Gb/s"},
    Message{"check.cnps", "the receiver's NIC sent CNPs and the senders' NICs handled them",
            "接收端网卡发送了 CNP，发送端网卡处理了它们"},
    Message{"check.line_rate",
            "PFC keeps the bottleneck busy: the last completion by {:.1f} µs (the ideal plus the "
            "host links' jitter)",
            "PFC 让瓶颈一直忙碌：最后一个完成不晚于 {:.1f} µs（理想值加上主机链路的抖动）"},
    Message{"step.report", "look at the captures", "查看抓包"},
    Message{"why.report",
            "each run wrote its capture (frame headers, at every host's port); rdmapcap report "
            "draws each sender's rate, the CE marks, the CNPs and the paused intervals:",
            "每次运行都写下了自己的抓包（帧头，在每台主机的端口上）；rdmapcap report 画出每个"
            "发送端的速率、CE 标记、CNP 和暂停区间："},
    Message{"why.report_ib",
            "the run wrote its capture (packet headers at every host's port, ERF as ibdump "
            "writes it); rdmapcap report draws each sender's rate. The credits themselves travel "
            "in link packets, which this capture does not hold: PortXmitWait above is where "
            "they show.",
            "这次运行写下了自己的抓包（各主机端口上的报文头，ERF 格式，与 ibdump 写出的相同）；"
            "rdmapcap report 画出每个发送端的速率。信用本身由链路层报文传递，这份抓包里没有它们："
            "它们体现在上面的 PortXmitWait 中。"},
    Message{"try.1", "--senders 16: twice the fan-in; which numbers scale with N?",
            "--senders 16：扇入翻倍；哪些数字随 N 变化？"},
    Message{"try.2", "--run pfc --senders 32: how slow does the victim get?",
            "--run pfc --senders 32：受害流会慢到什么程度？"},
    Message{"try.3",
            "--run dcqcn --senders 4 --size 4194304 --messages 288: 393 ms of incast; are the "
            "rates within 10% of link / N from 300 ms on?",
            "--run dcqcn --senders 4 --size 4194304 --messages 288：393 ms 的 incast；从 300 ms "
            "起各速率都在链路 / N 的 10% 以内吗？"},
    Message{"try.4", "--json: every number, for a script", "--json：输出全部数字，供脚本使用"},
    Message{"try.ib",
            "--link-layer roce --run pfc: the same incast with PFC's pauses instead of credits",
            "--link-layer roce --run pfc：同样的 incast，用 PFC 的暂停帧代替信用"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab18

// Lab 20's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab20 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{"desc",
            "Lab 20: ECMP and adaptive routing. Two large flows on a leaf-spine whose UDP source "
            "ports hash onto the same spine (an ECMP collision: half the bandwidth each while "
            "the other spine idles), the same flows with adaptive routing (both spines, packets "
            "out of order, placed right by the NIC), and NCCL's several QPs per connection "
            "spreading over the spines. Simulator only: it needs switches. On InfiniBand "
            "(--link-layer ib) the switches forward by destination LID instead: the static run "
            "shows the forwarding table's choice, and all the QPs of a connection take one path.",
            "实验 20：ECMP 与自适应路由。叶脊网络上两条大流，它们的 UDP 源端口被哈希到同一台"
            "脊交换机（ECMP 冲突：各得一半带宽，另一台脊交换机闲着）；同样的流开启自适应路由"
            "（两台脊交换机都用上，包乱序到达，由网卡放回正确位置）；以及 NCCL 每个连接使用"
            "多个 QP 时如何分散到各台脊交换机。只在模拟器上运行：它需要交换机。在 InfiniBand "
            "上（--link-layer ib），交换机改为按目的 LID 转发：static 运行展示转发表的选择，"
            "一个连接的所有 QP 都走同一条路径。"},
    Message{"opt.size", "bytes of each message (size x messages: at most 4194304)",
            "每条消息的字节数（它与消息条数的乘积至多 4194304）"},
    Message{"opt.messages", "messages each connection WRITEs (1 .. 64)",
            "每个连接执行 WRITE 的消息条数（1 .. 64）"},
    Message{"opt.rate", "rate of every link in Gb/s", "每条链路的速率，单位 Gb/s"},
    Message{"opt.qps",
            "QPs per connection of the qps run (1 .. 16; NCCL_IB_QPS_PER_CONNECTION); "
            "default: the table for 1, 2, 4 and 8",
            "qps 运行中每个连接的 QP 数（1 .. 16；即 NCCL_IB_QPS_PER_CONNECTION）；"
            "默认：1、2、4、8 四行的表"},
    Message{"opt.run",
            "which runs: ecmp (or static: the static-routing run, ECMP's hash on RoCE, the "
            "forwarding table on InfiniBand), ar, qps or all",
            "运行哪几种：ecmp（或 static：静态路由的那次运行，RoCE 上是 ECMP 哈希，InfiniBand "
            "上是转发表）、ar、qps 或 all"},
    Message{"needs_sim",
            "lab 20 runs on the simulator only: it needs a leaf-spine whose switches the lab "
            "configures (use --backend sim or auto)",
            "实验 20 只能在模拟器上运行：它需要一个由实验自己配置交换机的叶脊网络（请使用 "
            "--backend sim 或 auto）"},
    Message{"bad_size",
            "--size {0} x --messages {1}: use 1 .. {2} bytes per connection in all (two "
            "colliding flows queue about one flow at the shared uplink, and the buffer's share "
            "of one queue is about 8 MiB)",
            "--size {0} × --messages {1}：每个连接合计请使用 1 .. {2} 字节（两条冲突的流会在"
            "共用的上行口排起大约一条流的数据量，而一个队列能用的缓冲区份额约为 8 MiB）"},
    Message{"ib_global",
            "on InfiniBand lab 20 connects its QPs with local address vectors (no GRH), as "
            "within one subnet, and derives their packets so: -g does not apply",
            "在 InfiniBand 上，实验 20 像在同一子网内那样用本地地址向量（没有 GRH）连接 QP，"
            "并按此推导包的大小：-g 不适用"},
    Message{"ib_credits",
            "--rate {0}: on InfiniBand, with {1} QP(s) per connection, a packet's credits take "
            "up to {2:.3f} µs to come back, and the packets sent meanwhile and the next one "
            "need up to {3} blocks, more than the {4} a switch port advertises per VL: the "
            "senders would wait for credits, which this lab's derivations leave out (chapter 30: "
            "how many credits a link needs); use a lower --rate",
            "--rate {0}：在 InfiniBand 上，每个连接 {1} 个 QP 时，一个包的信用最多要 {2:.3f} µs "
            "才能归还，这期间发出的包加上下一个包最多需要 {3} 块，超过交换机端口为每个 VL 通告的 "
            "{4} 块：发送端会等待信用，而本实验的推导没有考虑这一点（见第 30 章：一条链路需要多少"
            "信用）；请使用更低的 --rate"},
    Message{"bad_size_ib",
            "--size {0} x --messages {1}: use 1 .. {2} bytes per connection in all (the limit "
            "of the RoCE runs, kept so that the two link layers compare)",
            "--size {0} × --messages {1}：每个连接合计请使用 1 .. {2} 字节（与 RoCE 各次运行的"
            "上限相同，便于比较两种链路层）"},
    Message{"no_collision",
            "no QP of connection B hashed onto connection A's spine in 64 tries: leaf0's hash "
            "does not look uniform",
            "连续 64 次尝试，连接 B 的 QP 都没有被哈希到连接 A 的脊交换机：leaf0 的哈希看起来"
            "并不均匀"},
    Message{"step.backend", "build the fabric: a leaf-spine, 2 leaves x 2 spines",
            "搭建网络：叶脊拓扑，2 台叶交换机 × 2 台脊交换机"},
    Message{"why.fabric",
            "senders sim0 (connection A) and sim1 (B) on leaf0, their receivers sim2 and sim3 on "
            "leaf1; every link, host or uplink, at {0} Gb/s. Traffic from leaf0 to leaf1 has two "
            "equal-cost paths, one per spine: leaf0 is the one switch that chooses. Each sender "
            "alone fills one uplink; two senders need both.",
            "发送端 sim0（连接 A）和 sim1（连接 B）接在 leaf0 上，它们的接收端 sim2 和 sim3 接在 "
            "leaf1 上；每条链路（主机链路或上行链路）都是 {0} Gb/s。从 leaf0 到 leaf1 有两条"
            "等价路径，每台脊交换机一条：只有 leaf0 需要做选择。一个发送端就能占满一条上行链路；"
            "两个发送端需要两条。"},
    Message{"step.derive", "derive what the runs must show, before running them",
            "运行之前，先推导各次运行必须呈现的结果"},
    Message{"why.derive",
            "each connection WRITEs {0} messages of {1} bytes ({2} packets at path MTU 4096, "
            "{3:.3f} µs on one link). Alone on its path a flow completes in {4:.1f} µs: the "
            "first frame to leaf0, every frame through the uplink back to back, the last frame "
            "over the spine and leaf1, and the ACK back over four links: {5:.2f} Gb/s of "
            "goodput. Two flows through one uplink (an ECMP collision) need twice the uplink's "
            "time: {6:.1f} µs, {7:.2f} Gb/s each, about half. A full link carries {8:.2f} Gb/s "
            "of payload (4096 of every 4174 bytes on the wire). The shared uplink's queue grows "
            "to about one flow's frames, under the {9} bytes a lossy queue may hold: no drops.",
            "每个连接执行 {0} 条 {1} 字节的 WRITE（路径 MTU 4096 下 {2} 个包，在一条链路上"
            "耗时 {3:.3f} µs）。独占路径时，一条流在 {4:.1f} µs 完成：第一帧到达 leaf0，所有帧"
            "首尾相接地经过上行链路，最后一帧再经过脊交换机和 leaf1，ACK 经四条链路返回：有效"
            "吞吐 {5:.2f} Gb/s。两条流共用一条上行链路（ECMP 冲突）时，上行链路要花两倍时间："
            "{6:.1f} µs，每条流 {7:.2f} Gb/s，约为一半。满载链路承载 {8:.2f} Gb/s 的载荷（线路上"
            "每 4174 字节中有 4096 字节）。共用上行口的队列最多增长到大约一条流的帧量，低于有损"
            "队列能容纳的 {9} 字节：不会丢包。"},
    Message{"why.derive_ib",
            "each connection WRITEs {0} messages of {1} bytes ({2} packets at path MTU 4096, "
            "{3:.3f} µs on one link: an InfiniBand packet carries an LRH, a BTH, an ICRC and a "
            "VCRC, 26 bytes, and a link adds 2 bytes of delimiters). Alone on its path a flow "
            "completes in {4:.1f} µs: the first packet to leaf0, every packet through the uplink "
            "back to back, the last packet over the spine and leaf1, and the ACK back over four "
            "links: {5:.2f} Gb/s of goodput. Two flows through one uplink would need twice the "
            "uplink's time: {6:.1f} µs, {7:.2f} Gb/s each. A full link carries {8:.2f} Gb/s of "
            "payload (4096 of every {9} bytes on the wire). No drops: credit-based flow control "
            "holds a sender back rather than let a switch's buffer overflow; and with one flow "
            "per link no sender waits: a packet's credits come back within {10:.3f} µs, when "
            "the packets still out and the next need at most {11} of the {12} blocks a port "
            "advertises per VL.",
            "每个连接执行 {0} 条 {1} 字节的 WRITE（路径 MTU 4096 下 {2} 个包，在一条链路上"
            "耗时 {3:.3f} µs：InfiniBand 的包带 LRH、BTH、ICRC 和 VCRC，共 26 字节，链路再加上 "
            "2 字节的定界符）。独占路径时，一条流在 {4:.1f} µs 完成：第一个包到达 leaf0，所有包"
            "首尾相接地经过上行链路，最后一个包再经过脊交换机和 leaf1，ACK 经四条链路返回：有效"
            "吞吐 {5:.2f} Gb/s。两条流若共用一条上行链路，上行链路要花两倍时间：{6:.1f} µs，每条"
            "流 {7:.2f} Gb/s。满载链路承载 {8:.2f} Gb/s 的载荷（线路上每 {9} 字节中有 4096 "
            "字节）。不会丢包：基于信用的流控让发送端等待，而不会让交换机的缓冲区溢出；而每条"
            "链路只有一条流时，发送端也不必等待：一个包的信用在 {10:.3f} µs 内归还，这期间尚未"
            "归还的包加上下一个包至多需要 {11} 块，而端口为每个 VL 通告 {12} 块。"},
    Message{"step.resources",
            "create the resources: on each of the four hosts a PD, an MR and a CQ",
            "创建资源：四台主机上各一个 PD、一个内存区域（MR）和一个 CQ"},
    Message{"why.resources",
            "each sender's MR holds the {0} bytes it WRITEs, each receiver's MR the same size; "
            "connection B's hosts do the same as A's below.",
            "每个发送端的内存区域（MR）装着它要写出的 {0} 字节，每个接收端的 MR 同样大小；"
            "连接 B 的两台主机做的与下面连接 A 的相同。"},
    Message{"sender", "sender {}", "发送端 {}"},
    Message{"receiver", "receiver {}", "接收端 {}"},
    Message{"step.search",
            "find an ECMP collision: QPs of B whose source port leaf0 hashes onto A's spine",
            "寻找 ECMP 冲突：找出连接 B 的一对 QP，使 leaf0 把它的源端口哈希到 A 所在的脊交换机"},
    Message{"why.search",
            "a connected QP's packets carry one UDP source port, chosen from both QP numbers "
            "(wire/udp_port.hpp): connection A's is {0}, and leaf0's hash of A's 5-tuple (its "
            "two addresses, UDP, source port, 4791) picks spine {1}. The lab asks the switch "
            "the same question for each new QP pair of B (Fabric::ecmp_port: which uplink "
            "would this 5-tuple take) until one lands on spine {1}:",
            "一个已连接的 QP 的所有包都带同一个 UDP 源端口，由两端的 QP 号算出"
            "（wire/udp_port.hpp）：连接 A 的是 {0}，leaf0 对 A 的五元组（两个地址、UDP、源端口、"
            "4791）做哈希，选中脊交换机 {1}。实验为连接 B 的每一对新 QP 向交换机问同一个问题"
            "（Fabric::ecmp_port：这个五元组会走哪条上行链路），直到某一对落在脊交换机 {1} 上："},
    Message{"candidate", "candidate {0}: QP {1} -> {2}, UDP source port {3}: spine {4}",
            "候选 {0}：QP {1} -> {2}，UDP 源端口 {3}：脊交换机 {4}"},
    Message{"why.collision",
            "candidate {0} collides: both connections' packets will leave leaf0 on the uplink "
            "to spine {1}. The earlier candidates stay unconnected and are destroyed. On a real "
            "cluster nobody chooses the ports: two big flows collide by chance, one time in "
            "two with two spines.",
            "候选 {0} 发生冲突：两个连接的包都将经由 leaf0 通往脊交换机 {1} 的上行链路离开。"
            "之前的候选不会被连接，随即销毁。真实集群里没有人挑选端口：两条大流是偶然碰撞的，"
            "两台脊交换机时概率为二分之一。"},
    Message{"step.table", "read leaf0's forwarding table: which uplink each receiver's LID takes",
            "读出 leaf0 的转发表：每个接收端的 LID 走哪条上行链路"},
    Message{"why.table",
            "InfiniBand has no UDP source port to hash: a switch forwards each packet by its "
            "destination LID (DLID), through the linear forwarding table the subnet manager "
            "wrote into it, one egress port per LID. LMC is 0, one LID per port: every packet to "
            "one host takes one path. Among equal-cost ports this subnet manager's table gives a "
            "LID the port DLID mod their number (Fabric::lft_port reads the entry); leaf0's "
            "entries for the receivers on leaf1:",
            "InfiniBand 没有可供哈希的 UDP 源端口：交换机按包的目的 LID（DLID）转发，查的是"
            "子网管理器写进它的线性转发表，每个 LID 一个出端口。LMC 为 0，每个端口一个 LID："
            "发往同一台主机的所有包都走同一条路径。在几个等价端口之间，这个子网管理器的转发表"
            "给一个 LID 分配第 DLID mod 端口数 个端口（Fabric::lft_port 读出这一项）；leaf0 上"
            "对应 leaf1 各接收端的表项："},
    Message{"lft_row", "LID {0} ({1}, receiver {2}): the uplink to spine {3}",
            "LID {0}（{1}，接收端 {2}）：通往脊交换机 {3} 的上行链路"},
    Message{"why.lft_apart",
            "connection A (DLID {0}) leaves leaf0 towards spine {1}, connection B (DLID {2}) "
            "towards spine {3}: each flow has an uplink of its own. The table decides, not a hash "
            "of the flow, so no choice of QP or port changes it, and there is no collision to "
            "search for. With two receivers behind leaf1 and two uplinks each receiver gets its "
            "own; with more receivers than uplinks some LIDs must share one, and heavy flows to "
            "them share it in every run.",
            "连接 A（DLID {0}）从 leaf0 通往脊交换机 {1}，连接 B（DLID {2}）通往脊交换机 {3}："
            "每条流各有一条上行链路。决定路径的是转发表，而不是对流的哈希，所以换哪个 QP、哪个"
            "端口都改变不了它，也就没有冲突可找。leaf1 后面有两个接收端、leaf0 有两条上行链路"
            "时，每个接收端各得一条；接收端多于上行链路时，一些 LID 必然共用一条，发往它们的"
            "大流每次运行都会共用它。"},
    Message{"why.lft_shared",
            "connections A (DLID {0}) and B (DLID {2}) both leave leaf0 towards spine {1}: they "
            "share one uplink in every run, and no choice of QP or port changes it; only other "
            "LIDs, the subnet manager's, would.",
            "连接 A（DLID {0}）和连接 B（DLID {2}）都从 leaf0 通往脊交换机 {1}：每次运行它们都"
            "共用一条上行链路，换哪个 QP、哪个端口都改变不了；只有子网管理器分配别的 LID 才行。"},
    Message{"step.qps_ib",
            "{} QPs per connection: create them; all of a connection's QPs send to its "
            "receiver's one LID",
            "每个连接 {} 个 QP：创建它们；一个连接的所有 QP 都发往其接收端唯一的 LID"},
    Message{"why.qps_ib",
            "as NCCL does with NCCL_IB_QPS_PER_CONNECTION={0} and NCCL_IB_SPLIT_DATA_ON_QPS=1, "
            "each message is split over the connection's {0} QPs: QP i WRITEs bytes "
            "[i x c, (i + 1) x c) of it, c = ceil(size / {0}) rounded up to 128 bytes. But every "
            "QP of a connection sends to the same DLID, its receiver's one LID, and leaf0's table "
            "has one entry for it: all of A's QPs leave towards spine {2} (DLID {1}), all of B's "
            "towards spine {4} (DLID {3}). On InfiniBand more QPs do not spread a connection over "
            "the spines; adaptive routing does.",
            "与 NCCL 在 NCCL_IB_QPS_PER_CONNECTION={0}、NCCL_IB_SPLIT_DATA_ON_QPS=1 时的做法"
            "一样，每条消息被拆到连接的 {0} 个 QP 上：QP i 写它的第 [i × c, (i + 1) × c) 字节，"
            "c 为 size / {0} 向上取整再对齐到 128 字节。但一个连接的每个 QP 都发往同一个 DLID，"
            "即其接收端唯一的 LID，而 leaf0 的转发表对它只有一项：A 的所有 QP 都通往脊交换机 "
            "{2}（DLID {1}），B 的所有 QP 都通往脊交换机 {4}（DLID {3}）。在 InfiniBand 上，"
            "更多的 QP 并不能把一个连接分散到各台脊交换机上；能做到这一点的是自适应路由。"},
    Message{"step.qps", "{} QPs per connection: create them, each with its own source port",
            "每个连接 {} 个 QP：创建它们，每个 QP 有自己的源端口"},
    Message{"why.qps",
            "as NCCL does with NCCL_IB_QPS_PER_CONNECTION={0} and NCCL_IB_SPLIT_DATA_ON_QPS=1, "
            "each message is split over the connection's {0} QPs: QP i WRITEs bytes "
            "[i x c, (i + 1) x c) of it, c = ceil(size / {0}) rounded up to 128 bytes. Every QP "
            "pair has its own UDP source port, so leaf0 hashes each apart.",
            "与 NCCL 在 NCCL_IB_QPS_PER_CONNECTION={0}、NCCL_IB_SPLIT_DATA_ON_QPS=1 时的做法"
            "一样，每条消息被拆到连接的 {0} 个 QP 上：QP i 写它的第 [i × c, (i + 1) × c) 字节，"
            "c 为 size / {0} 向上取整再对齐到 128 字节。每对 QP 有自己的 UDP 源端口，因此 leaf0 "
            "对它们分别做哈希。"},
    Message{"step.connect", "connect the QPs and post the receives", "连接各个 QP，并提交接收请求"},
    Message{"why.connect",
            "every QP's address vector sets ah_attr.grh.traffic_class = 104 (DSCP 26, traffic "
            "class 3 at the switches). Each message is a WRITE with immediate: the receiver "
            "posts one receive per message and gets one completion for it, with byte_len the "
            "message's length and the immediate its number, so the lab can see whether every "
            "message arrived once and whole.",
            "每个 QP 的地址向量都设置 ah_attr.grh.traffic_class = 104（DSCP 26，在交换机上为流量"
            "类别 3）。每条消息都是带立即数的 WRITE：接收端为每条消息提交一个接收 WR，并为它"
            "得到一个完成，byte_len 为消息长度，立即数为消息序号，由此实验能判断每条消息是否"
            "恰好完整地到达一次。"},
    Message{"why.connect_ib",
            "every QP's address vector is local (ah_attr.is_global 0, no GRH): the DLID is the "
            "peer's LID and the SL 0, so every packet travels on VL 0, the switches' class 0. "
            "Each message is a WRITE with immediate: the receiver posts one receive per message "
            "and gets one completion for it, with byte_len the message's length and the "
            "immediate its number, so the lab can see whether every message arrived once and "
            "whole.",
            "每个 QP 的地址向量都是本地的（ah_attr.is_global 为 0，没有 GRH）：DLID 为对端的 "
            "LID，SL 为 0，所以每个包都走 VL 0，即交换机上的类别 0。每条消息都是带立即数的 "
            "WRITE：接收端为每条消息提交一个接收 WR，并为它得到一个完成，byte_len 为消息长度，"
            "立即数为消息序号，由此实验能判断每条消息是否恰好完整地到达一次。"},
    Message{"step.run", "run {}: both connections WRITE at once",
            "运行 {}：两个连接同时执行 WRITE"},
    Message{"step.again", "run {}: a fresh fabric, the same hosts and seed; both connections WRITE",
            "运行 {}：一张新的网络，同样的主机和种子；两个连接同时执行 WRITE"},
    Message{"why.ecmp",
            "ECMP at every switch: both flows leave leaf0 on one uplink, which sends their frames "
            "one after the other, while the other uplink carries nothing.",
            "所有交换机都用 ECMP：两条流从 leaf0 的同一条上行链路离开，这条链路轮流发送它们的"
            "帧，另一条上行链路则什么也不传。"},
    Message{"why.static",
            "static routing at every switch: each packet to the port the forwarding table gives "
            "its DLID. Every packet of A goes up to spine {0}, every packet of B up to spine {1}.",
            "所有交换机都用静态路由：每个包发往转发表为其 DLID 指定的端口。A 的每个包都上行到"
            "脊交换机 {0}，B 的每个包都上行到脊交换机 {1}。"},
    Message{"why.ar_ib",
            "the same hosts and LIDs, now with adaptive routing at the switches: leaf0 sends "
            "each packet to the uplink with the fewer bytes queued for its VL, whatever the "
            "table's entry for its DLID. A flow's packets take both spines and may overtake each "
            "other. The receiving NIC's AR mode (a model of what recent NICs do, see chapter 28) "
            "holds a packet that arrives early and executes it in PSN order.",
            "同样的主机和 LID，这次交换机开启自适应路由：leaf0 把每个包发往该 VL 排队字节较少的"
            "那条上行链路，而不管转发表中其 DLID 的表项。一条流的包会走两台脊交换机，后发的包"
            "可能先到。接收端网卡的 AR 模式（对较新网卡行为的一个模型，见第 28 章）把提前到达的"
            "包先存下，按 PSN 顺序执行。"},
    Message{"why.ar",
            "the same QPs (the same search, the same source ports), now with adaptive routing "
            "at the switches: leaf0 sends each packet to the uplink with the fewer bytes "
            "queued. A flow's packets take both spines and may overtake each other. The "
            "receiving NIC's AR mode (a model of what recent NICs do, see chapter 28) holds a "
            "packet that arrives early and executes it in PSN order.",
            "同样的 QP（同样的搜索，同样的源端口），这次交换机开启自适应路由：leaf0 把每个包"
            "发往排队字节较少的那条上行链路。一条流的包会走两台脊交换机，后发的包可能先到。"
            "接收端网卡的 AR 模式（对较新网卡行为的一个模型，见第 28 章）把提前到达的包先存下，"
            "按 PSN 顺序执行。"},
    Message{"why.ar_nic_off",
            "adaptive routing at the switches again, but the receiving NIC without its AR mode, "
            "as the IBTA describes a responder: a packet past the expected PSN is a sequence "
            "error; the responder NAKs it and drops what follows until the missing PSN comes "
            "again, and the requester goes back N.",
            "交换机仍开启自适应路由，但接收端网卡不开 AR 模式，即 IBTA 描述的响应端：PSN 超过"
            "期望值的包是序列错误；响应端回 NAK，并丢弃其后的包，直到缺失的 PSN 再次到达，"
            "请求端执行 go-back-N。"},
    Message{"both_senders", "both senders", "两个发送端"},
    Message{"row.goodput", "goodput A / B", "有效吞吐 A / B"},
    Message{"val.goodput", "{0:.2f} / {1:.2f} Gb/s  (derived {2:.2f} each)",
            "{0:.2f} / {1:.2f} Gb/s（推导值各 {2:.2f}）"},
    Message{"row.completion", "last completion", "最后一个完成"},
    Message{"val.completion", "{0:.1f} µs  (derived {1:.1f})", "{0:.1f} µs（推导值 {1:.1f}）"},
    Message{"row.spine", "leaf0 -> spine {}", "leaf0 -> 脊交换机 {}"},
    Message{"val.spine", "{0} packets, {1:.2f} MB, {2:.1f}% busy, max queue {3} bytes",
            "{0} 个包，{1:.2f} MB，{2:.1f}% 时间忙碌，最大队列 {3} 字节"},
    Message{"row.drops", "drops (all switches)", "丢包（所有交换机）"},
    Message{"row.xmit_wait", "waiting for credits (all ports)", "等待信用（所有端口）"},
    Message{"val.xmit_wait", "{} ns (PortXmitWait, VL 0)", "{} ns（PortXmitWait，VL 0）"},
    Message{"row.ooo", "out of order at the receivers", "接收端的乱序到达"},
    Message{"val.ooo", "{0} held by the NIC's AR mode, {1} dropped as sequence errors",
            "{0} 个由网卡 AR 模式暂存，{1} 个作为序列错误丢弃"},
    Message{"row.retx", "retransmitted packets", "重传的包"},
    Message{"val.retx", "{0}  (NAK {1})", "{0}（NAK {1}）"},
    Message{"step.qps_table", "the qps runs side by side", "qps 各次运行并排对比"},
    Message{"why.qps_table",
            "per Q: how many of the 2Q QPs leaf0's hash put on each spine and the most-loaded "
            "spine's m; the packets each uplink carried; the two connections' throughput "
            "together (Gb/s of payload; both uplinks full would be twice one link); derived: "
            "from this hash outcome, with each sender's NIC serving its QPs one after another, "
            "as this simulated NIC does (the i-th QPs of A and B send at the same time, and an "
            "uplink finishes when the last work queued for it is sent); bound: from the same "
            "outcome with every QP of a host sending side by side, the busiest spine sending "
            "its m QPs' frames back to back; random: the bound's average over random hashing "
            "(balls into bins: each QP on either spine with probability 1/2), and how likely "
            "the spines are balanced.",
            "对每个 Q：leaf0 的哈希把 2Q 个 QP 中的多少个放到每台脊交换机上，以及承载 QP 最多的"
            "脊交换机上的 m；每条上行链路传了多少个包；两个连接合计的吞吐（载荷 Gb/s；两条上行"
            "链路全满时为一条链路的两倍）；推导值：由这次哈希结果，按每个发送端网卡逐个服务"
            "自己的 QP（本模拟网卡就是这样做的：A 和 B 的第 i 个 QP 同时发送，一条上行链路在"
            "排给它的最后一份数据发完时结束）得出；上界：同一哈希结果下，一台主机的所有 QP "
            "并行发送，最忙的脊交换机首尾相接地发送它那 m 个 QP 的帧；随机：上界在随机哈希下的"
            "平均值（球入箱：每个 QP 以 1/2 的概率落在任一台脊交换机上），以及两台脊交换机承载的"
            "QP 数相等的概率。"},
    Message{"why.qps_table_ib",
            "per Q: how many of the 2Q QPs leaf0's table put on each spine and the most-loaded "
            "spine's count; the packets each uplink carried; the two connections' throughput "
            "together (Gb/s of payload; both uplinks full would be twice one link); derived: "
            "from the table's outcome, with each sender's NIC serving its QPs one after another. "
            "Whatever Q, each spine carries all the QPs of one connection: the table decides, "
            "not the number of QPs.",
            "对每个 Q：leaf0 的转发表把 2Q 个 QP 中的多少个放到每台脊交换机上，以及承载 QP 最多"
            "的脊交换机上的个数；每条上行链路传了多少个包；两个连接合计的吞吐（载荷 Gb/s；两条"
            "上行链路全满时为一条链路的两倍）；推导值：由转发表的结果，按每个发送端网卡逐个服务"
            "自己的 QP 得出。无论 Q 是多少，每台脊交换机都承载一个连接的全部 QP：决定结果的是"
            "转发表，而不是 QP 的个数。"},
    Message{"col.qps", "QPs per spine", "每台脊的 QP"},
    Message{"col.max", "max", "最多"},
    Message{"col.packets", "packets per spine", "每台脊的包"},
    Message{"col.derived", "derived", "推导值"},
    Message{"col.bound", "bound", "上界"},
    Message{"col.random", "random", "随机"},
    Message{"col.balanced", "balanced", "均衡"},
    Message{"check.complete",
            "every WRITE completed once, every receive with its message's byte_len and "
            "immediate, in order, and every byte is in place",
            "每个 WRITE 都只完成一次，每个接收完成都带着对应消息的 byte_len 和立即数、顺序正确，"
            "每个字节都已就位"},
    Message{"check.floor",
            "the last completion is no earlier than derived from the busiest link, {:.1f} µs",
            "最后一个完成不早于由最忙链路推导出的 {:.1f} µs"},
    Message{"check.hash",
            "every packet left leaf0 on the uplink its QP's hash names (packets and bytes per "
            "spine as predicted)",
            "每个包都从其 QP 的哈希所指定的上行链路离开 leaf0（每台脊交换机的包数和字节数与"
            "预测一致）"},
    Message{"check.table",
            "every packet left leaf0 on the uplink the forwarding table gives its DLID (packets "
            "and bytes per spine as predicted)",
            "每个包都从转发表为其 DLID 指定的上行链路离开 leaf0（每台脊交换机的包数和字节数与"
            "预测一致）"},
    Message{"check.one_uplink",
            "all of a connection's packets, whatever their QP, left leaf0 on the one uplink its "
            "receiver's LID takes (packets and bytes per spine as predicted)",
            "一个连接的所有包，不论属于哪个 QP，都从其接收端 LID 对应的那一条上行链路离开 "
            "leaf0（每台脊交换机的包数和字节数与预测一致）"},
    Message{"check.no_drops_ib",
            "no drops: credit-based flow control lets no switch buffer overflow",
            "没有丢包：基于信用的流控不让任何交换机的缓冲区溢出"},
    Message{"check.no_wait",
            "no port waited for credits: a packet's blocks come back within {0:.3f} µs (two "
            "propagation delays, twice its time and the jitter), while the packets still out "
            "and the next one need at most {1} of the {2} blocks a port advertises per VL",
            "没有端口等待信用：一个包占用的块在 {0:.3f} µs 内归还（两个传播时延、两倍的包时间"
            "加上抖动），这期间尚未归还的包加上下一个包至多需要 {1} 块，而端口为每个 VL 通告 "
            "{2} 块"},
    Message{"check.no_drops", "no drops: the deepest queue stays under {} bytes",
            "没有丢包：最深的队列也低于 {} 字节"},
    Message{"check.half", "each colliding flow gets about half the link: at most {:.2f} Gb/s",
            "每条冲突的流只得到约一半链路：至多 {:.2f} Gb/s"},
    Message{"check.tight",
            "the busiest uplink never idled with frames to send: the last completion by {:.1f} "
            "µs (the derivation plus the host links' jitter)",
            "最忙的上行链路在有帧可发时从未空闲：最后一个完成不晚于 {:.1f} µs（推导值加上主机"
            "链路的抖动）"},
    Message{"check.both_spines", "adaptive routing used both spines",
            "自适应路由用上了两台脊交换机"},
    Message{"check.beats_collision",
            "adaptive routing completes before any ECMP collision could ({:.1f} µs)",
            "自适应路由的完成早于任何 ECMP 冲突所能达到的时间（{:.1f} µs）"},
    Message{"check.beats_shared",
            "adaptive routing completes before two flows on one uplink could ({:.1f} µs)",
            "自适应路由的完成早于两条流共用一条上行链路时所能达到的时间（{:.1f} µs）"},
    Message{"check.placed",
            "the NIC's AR mode placed every out-of-order packet: no NAK, no retransmission",
            "网卡的 AR 模式放好了每个乱序包：没有 NAK，没有重传"},
    Message{"check.naks",
            "without the NIC's AR mode the out-of-order packets cost NAKs and retransmissions",
            "没有网卡的 AR 模式，乱序包导致了 NAK 和重传"},
    Message{"step.report", "look at the captures", "查看抓包"},
    Message{"why.report",
            "each run wrote its capture (frame headers, at the receiving hosts' ports, in the "
            "order frames arrived); rdmapcap report draws each flow's rate and lists the "
            "out-of-order arrivals, NAKs and resent PSNs:",
            "每次运行都写下了自己的抓包（帧头，在接收主机的端口上，按帧到达的顺序）；"
            "rdmapcap report 画出每条流的速率，并列出乱序到达、NAK 和重传的 PSN："},
    Message{"try.1", "--seed 2: another hash seed; which QP of B collides now?",
            "--seed 2：换一个哈希种子；现在是 B 的哪个 QP 发生冲突？"},
    Message{"try.2", "--run qps --qps-per-conn 16: how close to both links full?",
            "--run qps --qps-per-conn 16：离两条链路全满还有多远？"},
    Message{"try.3",
            "--run ar --size 262144 --messages 16: the same bytes in more messages; how many "
            "arrive out of order?",
            "--run ar --size 262144 --messages 16：同样的字节数分成更多消息；有多少个乱序到达？"},
    Message{"try.ib_1",
            "--link-layer roce: the same fabric with ECMP's hash; there the lab finds a collision",
            "--link-layer roce：同样的网络改用 ECMP 哈希；在那里实验能找到一次冲突"},
    Message{"try.ib_2", "--run qps --qps-per-conn 16: still one uplink per connection?",
            "--run qps --qps-per-conn 16：每个连接是否仍然只用一条上行链路？"},
    Message{"try.4", "--json: every number, for a script", "--json：输出全部数字，供脚本使用"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab20

// Lab 08's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab08 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{
        "desc",
        "Lab 08: adaptive routing. The leaves of a simulated leaf-spine spray every packet over "
        "spines whose paths differ in delay, so packets arrive out of order. Without "
        "adaptive-routing support "
        "the responder NAKs and the requester goes back N; with it (a model of recent NICs) "
        "the responder accepts packets ahead of the expected PSN inside a window and places "
        "them, messages stay whole, and a WRITE with immediate tells the receiver the data is "
        "complete.",
        "实验 08：自适应路由。模拟叶脊网络的叶交换机把每个报文喷洒到路径时延不同的各台脊交换机上，"
        "因此报文会乱序到达。"
        "不支持自适应路由时，响应端回复 NAK，请求端执行 go-back-N 重传；支持时（这是对新一代网卡"
        "行为的模型），响应端在一个窗口内接受领先于期望 PSN 的报文并把它们写入内存，消息保持完整，"
        "最后用一个带立即数的 WRITE 通知接收端数据已完整。"},
    Message{"opt.ar",
            "adaptive-routing model on the QPs: off, on, or both (one run each, compared)",
            "QP 上的自适应路由模型：off、on，或 both（各运行一次并对比）"},
    Message{"opt.paths", "spines of the leaf-spine: parallel paths between the hosts",
            "叶脊网络中脊交换机的台数，即两台主机之间的并行路径数"},
    Message{"opt.spread", "extra delay between the paths over neighbouring spines, in ns",
            "经过相邻两台脊交换机的路径之间的额外时延（ns）"},
    Message{"opt.size", "bytes to transfer", "传输的字节数"},
    Message{
        "opt.threshold",
        "NCCL_IB_AR_THRESHOLD: above it, data goes as plain WRITEs and a separate 0-byte WRITE "
        "with immediate signals completion",
        "NCCL_IB_AR_THRESHOLD：超过该值时，数据用普通 WRITE 发送，再用一个单独的 0 字节带立即数 "
        "WRITE 通知完成"},
    Message{"sender", "sender", "发送端"},
    Message{"receiver", "receiver", "接收端"},
    Message{"run.title", "adaptive routing {}", "自适应路由：{}"},
    Message{"off", "OFF", "关闭"},
    Message{"on", "ON", "开启"},
    Message{"step.fabric",
            "build a leaf-spine: two leaves, {0} spines, one host on each leaf; the leaves send "
            "each packet to the least-loaded spine, so the packets of one message spread over "
            "all of them; the path over spine p is p x {1} ns longer (the queues other traffic "
            "would keep there)",
            "构建一个叶脊网络：两台叶交换机、{0} "
            "台脊交换机，每台叶交换机下挂一台主机；叶交换机把每个报文"
            "发往排队最少的脊交换机，于是同一条消息的报文分散到所有脊交换机上；经过第 p "
            "台脊交换机的路径"
            "长 p × {1} ns（代表其他流量在那里形成的队列）"},
    Message{"step.resources", "open the devices and connect", "打开设备并建立连接"},
    Message{"why.ar_on",
            "both QPs enable the adaptive-routing model: the receiver accepts packets ahead of "
            "the expected PSN inside a window instead of NAKing them, completes them in PSN "
            "order as the holes fill, and NAKs only a hole that stays open; the sender's packets "
            "are unchanged (WRITE First, Middle, Last: one RETH per message)",
            "两个 QP 都启用自适应路由模型：接收端在一个窗口内接受领先于期望 PSN 的报文，不回复 "
            "NAK，待空洞填补后按 PSN 顺序完成它们，只有当空洞一直未被填补时才回复 NAK；发送端的报文"
            "不变（WRITE First、Middle、Last：每个消息一个 RETH）"},
    Message{"why.ar_off",
            "standard RC: the receiver accepts only the expected PSN; anything ahead is a sequence "
            "error",
            "标准 RC：接收端只接受期望的 PSN；任何领先的报文都视为序列错误"},
    Message{"step.post", "post the transfer", "提交传输"},
    Message{"post.split",
            "{0} bytes > threshold {1}: {2} plain WRITE(s) and a 0-byte WRITE with immediate",
            "{0} 字节 > 阈值 {1}：{2} 个普通 WRITE，再加一个 0 字节的带立即数 WRITE"},
    Message{"post.single", "{0} bytes <= threshold {1}: one WRITE with immediate carries the data",
            "{0} 字节 <= 阈值 {1}：由一个带立即数的 WRITE 携带数据"},
    Message{"post.no_ar", "without adaptive routing, one WRITE with immediate carries the data",
            "不启用自适应路由时，由一个带立即数的 WRITE 携带数据"},
    Message{"step.poll", "poll both CQs", "轮询双方 CQ"},
    Message{"result",
            "{0}: {1} packets, {2} retransmitted, {3} NAK(s), {4} out-of-order arrival(s), done at "
            "{5:.1f} us, goodput {6:.1f} Gb/s",
            "{0}：{1} 个报文，重传 {2} 个，NAK {3} 个，乱序到达 {4} 个，于 {5:.1f} "
            " µs 完成，有效吞吐 {6:.1f} Gb/s"},
    Message{"step.compare", "compare the two runs", "对比两次运行"},
    Message{"hardware_ib",
            "On real InfiniBand: the switches route adaptively where the subnet manager has "
            "enabled it, per service level (NVIDIA's subnet manager; vendor documentation), and "
            "NCCL turns its send pattern on by default on InfiniBand (NCCL_IB_ADAPTIVE_ROUTING) "
            "above NCCL_IB_AR_THRESHOLD (8192 bytes).",
            "在真实的 InfiniBand 上：交换机的自适应路由由子网管理器按服务等级启用（NVIDIA "
            "的子网管理器，以厂商文档为准）；NCCL 在 InfiniBand 上默认打开这种发送方式"
            "（NCCL_IB_ADAPTIVE_ROUTING），消息超过 NCCL_IB_AR_THRESHOLD（8192 字节）时使用。"},
    Message{"hardware",
            "On real hardware: NVIDIA/Mellanox NICs enable adaptive routing per port (e.g. `mlxreg "
            "... --reg_name ROCE_ACCL --set adaptive_routing_forced_en=1`, vendor documentation), "
            "and NCCL chooses its send pattern with NCCL_IB_ADAPTIVE_ROUTING (on by default on "
            "InfiniBand) and NCCL_IB_AR_THRESHOLD (8192 bytes).",
            "在真实硬件上：NVIDIA/Mellanox 网卡按端口启用自适应路由（例如 `mlxreg ... --reg_name "
            "ROCE_ACCL "
            "--set adaptive_routing_forced_en=1`，以厂商文档为准），NCCL 则通过 "
            "NCCL_IB_ADAPTIVE_ROUTING"
            "（InfiniBand 上默认开启）和 NCCL_IB_AR_THRESHOLD（8192 字节）决定发送方式。"},
    Message{"verbs_only_sim",
            "this lab needs the simulator's leaf-spine fabric: run it with --backend sim",
            "本实验需要模拟器的叶脊网络：请使用 --backend sim 运行"},
    Message{"check.done",
            "{}: the transfer completed and the receiver was told (IBV_WC_RECV_RDMA_WITH_IMM)",
            "{}：传输完成，接收端收到了通知（IBV_WC_RECV_RDMA_WITH_IMM）"},
    Message{"check.bytes", "{}: the receiver holds every byte", "{}：接收端收到了全部数据"},
    Message{"check.off_naks", "AR off: reordering caused NAKs and go-back-N retransmissions",
            "自适应路由关闭：乱序导致了 NAK 和 go-back-N 重传"},
    Message{"check.on_clean",
            "AR on: out-of-order arrivals were tolerated, nothing was retransmitted",
            "自适应路由开启：乱序到达被容忍，没有任何重传"},
    Message{"check.on_whole",
            "AR on: the messages stayed whole: {} WRITE message(s), each with one RETH on its "
            "first packet and none on the rest",
            "自适应路由开启：消息保持完整：共 {} 个 WRITE 消息，每个只在第一个报文中带 RETH，"
            "其余报文都不带"},
    Message{"check.byte_len",
            "{0}: the receiver's completion has byte_len {1}, what the WRITE with immediate "
            "carried",
            "{0}：接收端完成的 byte_len 为 {1}，即带立即数的 WRITE 携带的字节数"},
    Message{"spines", "the requester's leaf sent {0} packets up the spines: {1}",
            "请求端所在的叶交换机向各脊交换机共发出 {0} 个报文：{1}"},
    Message{"check.in_order",
            "one path, or paths of equal delay: nothing arrived out of order and neither mode "
            "retransmitted",
            "只有一条路径，或各路径时延相同：没有报文乱序到达，两种模式都没有重传"},
    Message{"check.faster", "AR on finished sooner than AR off",
            "自适应路由开启时比关闭时更早完成"},
    Message{"try.1", "--paths 1: no reordering, both modes behave the same",
            "--paths 1：没有乱序，两种模式表现相同"},
    Message{"try.2", "-s 4096 --threshold 8192: below the threshold, a single WRITE with immediate",
            "-s 4096 --threshold 8192：低于阈值时，只用一个带立即数的 WRITE"},
    Message{"try.3", "rdmapcap ladder {}: the out-of-order arrivals, marked",
            "rdmapcap ladder {}：查看被标出的乱序到达"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab08

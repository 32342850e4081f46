#include "rdmalab/lab/incast.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <span>

#include "rdmalab/lab/fabric_host.hpp"

namespace rdmalab::lab::incast {

namespace {

using i18n::Message;
using i18n::tr;

constexpr std::array kCatalog{
    Message{"step.resources",
            "create the resources: on every host a PD, an MR and a CQ; one RC QP per sender, and "
            "one QP per sender on the receiver",
            "创建资源：每台主机一个 PD、一个内存区域（MR）和一个 CQ；每个发送端一个 RC QP，"
            "接收端为每个发送端各建一个 QP"},
    Message{"why.resources",
            "the receiver registers one MR of N x {2} bytes, one slot per sender; its {0} QPs "
            "share its PD and CQ. Each sender (and each victim) does the same as sender 0 below, "
            "on its own host.",
            "接收端注册一个 N × {2} 字节的内存区域（MR），每个发送端一格；它的 {0} 个 QP 共用"
            "它的 PD 和 CQ。每个发送端（以及每条受害流）都在自己的主机上做与下面发送端 0 相同"
            "的事。"},
    Message{"receiver", "receiver", "接收端"},
    Message{"sender", "sender {}", "发送端 {}"},
    Message{"receiver_qp", "receiver (QP of sender {})", "接收端（发送端 {} 的 QP）"},
    Message{"victim", "victim", "受害流发送端"},
    Message{"victim_rx", "victim's receiver", "受害流接收端"},
    Message{"other", "other-class victim", "另一优先级的受害流发送端"},
    Message{"other_rx", "other-class victim's receiver", "另一优先级的受害流接收端"},
    Message{"why.others",
            "the same for senders 1 .. {0}; the victim ({1} -> {2}) and the other-class victim "
            "({3} -> {4}) each open their own device, PD, MR, CQ and one QP.",
            "发送端 1 .. {0} 同样如此；受害流（{1} -> {2}）和另一优先级的受害流（{3} -> {4}）"
            "各自打开自己的设备、PD、内存区域（MR）、CQ 和一个 QP。"},
    Message{"step.connect", "connect each sender's QP to its QP on the receiver",
            "把每个发送端的 QP 连接到接收端上对应的 QP"},
    Message{"why.connect_rest",
            "senders 1 .. {0} and the victim connect the same way; the other-class victim with "
            "traffic_class 0 (DSCP 0, traffic class 0: no PFC).",
            "发送端 1 .. {0} 和受害流以同样方式连接；另一优先级的受害流使用 traffic_class 0"
            "（DSCP 0，流量类别 0：没有 PFC）。"},
    Message{"why.sl",
            "on InfiniBand every QP's address vector sets ah_attr.sl = {0}: the LRH carries SL "
            "{0}, and the hosts' ports send it in VL {0} (their SL-to-VL table is the "
            "identity). Each switch maps the SL to a VL by its own table; a VL has its own "
            "buffer and credits on every link.",
            "在 InfiniBand 上，每个 QP 的地址向量设置 ah_attr.sl = {0}：LRH 携带 SL {0}，主机"
            "的端口用 VL {0} 发送它（主机的 SL 到 VL 映射表是恒等映射）。每台交换机按自己的映射表"
            "把 SL 映射到某个 VL；每个 VL 在每条链路上都有自己的缓冲区和信用。"},
    Message{"check.no_drops_credits", "nothing was dropped anywhere: no credit, no send",
            "任何地方都没有丢包：没有信用就不发送"},
    Message{"check.line_rate_credits",
            "credits keep the bottleneck busy: the last completion by {:.1f} µs (the ideal plus "
            "the host links' jitter)",
            "信用让瓶颈一直忙碌：最后一个完成不晚于 {:.1f} µs（理想值加上主机链路的抖动）"},
    Message{"why.connect_rest_ib",
            "senders 1 .. {0} and the victim connect the same way; the other-class victim with "
            "ah_attr.sl 0 (VL 0: its own buffers and credits).",
            "发送端 1 .. {0} 和受害流以同样方式连接；另一类别的受害流使用 ah_attr.sl 0"
            "（VL 0：自己的缓冲区和信用）。"},
};
consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

/// A sender's data: a pattern that differs per sender, so that a byte
/// written to the wrong place shows.
void fill(Endpoint& e, std::uint32_t seed) {
  std::uint8_t* b = e.buf();
  for (std::size_t i = 0; i < e.size(); ++i)
    b[i] = static_cast<std::uint8_t>(std::size_t{seed} * 31 + i * 13 + (i >> 9));
}

}  // namespace

std::int64_t ser_ns(std::uint64_t bytes, double bps, std::uint64_t overhead) {
  return static_cast<std::int64_t>(static_cast<double>((bytes + overhead) * 8) * 1e9 / bps);
}

Ideal derive_ideal(const Shape& s, double rate_gbps) {
  Ideal d;
  d.rate_bps = rate_gbps * 1e9;
  d.isl_bps = d.rate_bps * (s.senders + 2);
  d.packets_per_message = (s.size + kMtu - 1) / kMtu;
  const std::uint64_t headers = s.infiniband ? kIbHeaders : kHeaders;
  const std::uint64_t overhead = s.infiniband ? kIbWireOverhead : kWireOverhead;
  const auto ser = [overhead](std::uint64_t bytes, double bps) {
    return ser_ns(bytes, bps, overhead);
  };
  for (std::uint64_t p = 0, left = s.size; p < d.packets_per_message; ++p) {
    const std::uint64_t payload = std::min<std::uint64_t>(left, kMtu);
    left -= payload;
    d.message_ser_ns += ser(headers + (p == 0 ? kReth : 0) + (payload + 3) / 4 * 4, d.rate_bps);
  }
  // The first frame: a First (or Only) with its RETH.
  const std::uint64_t first = headers + kReth + (std::min<std::uint64_t>(s.size, kMtu) + 3) / 4 * 4;
  const auto ideal = [&](std::uint64_t messages) {
    return ser(first, d.rate_bps) + kDelayNs + ser(first, d.isl_bps) + kDelayNs +
           static_cast<std::int64_t>(messages) * d.message_ser_ns + kDelayNs +
           2 * ser(headers + kAeth, d.rate_bps) + ser(headers + kAeth, d.isl_bps) + 3 * kDelayNs;
  };
  d.ideal_ns = ideal(std::uint64_t{s.senders} * s.messages);
  d.victim_ideal_ns = ideal(s.messages);
  d.victim_ideal_gbps =
      static_cast<double>(std::uint64_t{s.messages} * s.size * 8) /
      static_cast<double>(d.victim_ideal_ns + 3 * kJitterNs +
                          static_cast<std::int64_t>(s.senders + 1) * ser(first, d.isl_bps));
  d.headroom_bytes =
      2 * (2 * static_cast<std::uint64_t>(static_cast<double>(kDelayNs) * d.isl_bps / 8e9) +
           2 * (kLargestFrame + kWireOverhead));
  return d;
}

std::string device(std::uint32_t i) {
  return fmt::format("sim{}", i);
}

sim::TopologySpec topology(std::uint32_t senders, double rate_bps, double isl_bps) {
  sim::TopologySpec spec;
  spec.kind = sim::TopologyKind::Dumbbell;
  spec.hosts = senders + 2;
  spec.host_link.rate_bps = rate_bps;
  spec.host_link.delay_ns = kDelayNs;
  spec.host_link.jitter_ns = kJitterNs;
  spec.fabric_link.rate_bps = isl_bps;
  spec.fabric_link.delay_ns = kDelayNs;
  spec.switch_config.buffer_bytes = kBufferBytes;
  return spec;
}

Hosts::~Hosts() {
  for (Endpoint* e : {&wrx, &wtx, &vrx, &vtx}) e->qp.reset();
  for (auto it = rx.rbegin(); it != rx.rend(); ++it) it->qp.reset();
  for (auto it = tx.rbegin(); it != tx.rend(); ++it) it->qp.reset();
}

void open_and_connect(Narrator& say, Narrator& quiet, Environment& env, const CommonOptions& co,
                      const Shape& s, const i18n::Message& why_tclass, Hosts& h) {
  const std::uint32_t N = s.senders;
  const std::uint32_t depth = s.messages;
  const int cqe = static_cast<int>(N * s.messages + 16);
  say.step(tr(M("step.resources")));
  say.say(tr(M("why.resources"), N, N + 2, s.size));
  h.rx[0].role = tr(M("receiver"));
  open_host(say, env, h.rx[0], device(N + 2), std::size_t{N} * s.size, cqe, co);
  for (std::uint32_t i = 0; i < N; ++i) {
    Narrator& w = i == 0 ? say : quiet;
    h.tx[i].role = tr(M("sender"), i);
    h.rx[i].role = tr(M("receiver_qp"), i);
    open_host(w, env, h.tx[i], device(i), s.size, cqe, co);
    add_qp(w, h.tx[i], h.tx[i], depth, 1);
    add_qp(w, h.rx[0], h.rx[i], depth, 1);
    fill(h.tx[i], i + 1);
  }
  h.vtx.role = tr(M("victim"));
  h.vrx.role = tr(M("victim_rx"));
  h.wtx.role = tr(M("other"));
  h.wrx.role = tr(M("other_rx"));
  open_host(quiet, env, h.vtx, device(N), s.size, cqe, co);
  open_host(quiet, env, h.vrx, device(N + 3), s.size, cqe, co);
  open_host(quiet, env, h.wtx, device(N + 1), s.size, cqe, co);
  open_host(quiet, env, h.wrx, device(N + 4), s.size, cqe, co);
  for (Endpoint* e : {&h.vtx, &h.vrx, &h.wtx, &h.wrx}) add_qp(quiet, *e, *e, depth, 1);
  fill(h.vtx, 101);
  fill(h.wtx, 102);
  say.say(tr(M("why.others"), N - 1, device(N), device(N + 3), device(N + 1), device(N + 4)));

  say.step(tr(M("step.connect")));
  // On InfiniBand the class is the SL (no IP header, no DSCP).
  const bool ib = h.rx[0].infiniband;
  ConnectSpec cs;
  cs.mtu = kMtu;
  cs.traffic_class = kRoceTclass;
  if (ib) cs.sl = kIbDataSl;
  for (std::uint32_t i = 0; i < N; ++i) {
    h.tx[i].first_psn = kRequesterFirstPsn + 0x1000 * i;
    h.rx[i].first_psn = 0x800000 + 0x1000 * i;
    connect_pair(i == 0 ? say : quiet, h.tx[i], h.rx[i], cs, co, i == 0);
  }
  if (ib)
    say.say(tr(M("why.sl"), kIbDataSl));
  else
    say.say(tr(why_tclass, kRoceTclass, kRoceTclass >> 2, kRoceTc));
  connect_pair(quiet, h.vtx, h.vrx, cs, co, true);
  ConnectSpec other = cs;
  other.traffic_class = kOtherTclass;
  other.sl = 0;
  connect_pair(quiet, h.wtx, h.wrx, other, co, true);
  say.say(tr(ib ? M("why.connect_rest_ib") : M("why.connect_rest"), N - 1));
}

std::string no_drops_credits_text() {
  return tr(M("check.no_drops_credits"));
}

std::string line_rate_credits_text(double by_us) {
  return tr(M("check.line_rate_credits"), by_us);
}

std::span<const i18n::Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab::incast

// The switched fabric: switch ports and their queues, the shared buffer,
// ECN marking, PFC and routing (see include/rdmalab/sim/switch.hpp for the
// model and where it is simpler than a switch ASIC).
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>

#include "engine.hpp"
#include "rdmalab/sim/messages.hpp"
#include "rdmalab/wire/bytes.hpp"
#include "rdmalab/wire/ib_link.hpp"
#include "rdmalab/wire/pause.hpp"

namespace rdmalab::sim {
namespace {

constexpr std::uint16_t kEtherVlan = 0x8100;
constexpr std::uint16_t kEtherIpv4 = 0x0800;
constexpr std::uint16_t kEtherIpv6 = 0x86DD;
constexpr std::uint8_t kProtoUdp = 17;
// ECN codepoints (RFC 3168): the low two bits of the IPv4 TOS / IPv6
// traffic class.
constexpr std::uint8_t kEcnCe = 3;
// A pause sent upstream lasts 0xFFFF quanta and is renewed when half of it
// has passed, as switches do, so that it never lapses while the port is
// still above its XON threshold.
constexpr std::uint16_t kXoffQuanta = 0xFFFF;

/// What a switch needs from a frame's headers.
struct L3View {
  std::size_t ip = 0;  // offset of the IP header
  bool v4 = true;
  std::uint8_t tos = 0;  // DSCP << 2 | ECN
  std::uint16_t sport = 0;
  std::uint16_t dport = 0;
  std::uint8_t proto = 0;
};

bool view_l3(const std::uint8_t* f, std::size_t n, L3View& v) noexcept {
  if (n < 14) return false;
  std::size_t off = 12;
  std::uint16_t type = wire::load_be16(f + off);
  if (type == kEtherVlan) {
    if (n < 18) return false;
    off += 4;
    type = wire::load_be16(f + off);
  }
  v.ip = off + 2;
  std::size_t l4 = 0;
  if (type == kEtherIpv4) {
    if (n < v.ip + 20) return false;
    v.v4 = true;
    v.tos = f[v.ip + 1];
    v.proto = f[v.ip + 9];
    l4 = v.ip + static_cast<std::size_t>(f[v.ip] & 0x0F) * 4;
  } else if (type == kEtherIpv6) {
    if (n < v.ip + 40) return false;
    v.v4 = false;
    v.tos = static_cast<std::uint8_t>(((f[v.ip] & 0x0F) << 4) | (f[v.ip + 1] >> 4));
    v.proto = f[v.ip + 6];
    l4 = v.ip + 40;
  } else {
    return false;
  }
  if (v.proto == kProtoUdp && n >= l4 + 4) {
    v.sport = wire::load_be16(f + l4);
    v.dport = wire::load_be16(f + l4 + 2);
  }
  return true;
}

std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ull;
  return x ^ (x >> 33);
}

// The ECMP hash of a frame's 5-tuple (addresses, protocol, UDP ports), with
// the switch's seed: two switches split the same flows differently, as
// switches seeded apart do to avoid hash polarisation.
// `src` and `dst` are the addresses as the IP header carries them (4 bytes
// each for IPv4, 16 for IPv6).
std::uint64_t tuple_hash(std::uint64_t seed, const std::uint8_t* src, const std::uint8_t* dst,
                         std::size_t addr_len, std::uint8_t proto, std::uint16_t sport,
                         std::uint16_t dport) noexcept {
  std::uint64_t h = seed;
  for (std::size_t i = 0; i < addr_len; i += 4) h = mix64(h ^ wire::load_be32(src + i));
  for (std::size_t i = 0; i < addr_len; i += 4) h = mix64(h ^ wire::load_be32(dst + i));
  return mix64(h ^ (std::uint64_t{proto} << 32) ^ (std::uint64_t{sport} << 16) ^ dport);
}

std::uint64_t flow_hash(const std::uint8_t* f, const L3View& v, std::uint64_t seed) noexcept {
  const std::size_t src = v.v4 ? v.ip + 12 : v.ip + 8;
  const std::size_t len = v.v4 ? 4 : 16;
  return tuple_hash(seed, f + src, f + src + len, len, v.proto, v.sport, v.dport);
}

// The probability RED marks a frame leaving a queue of q bytes.
double mark_probability(const EcnConfig& e, std::uint64_t q) noexcept {
  if (q <= e.kmin_bytes) return 0.0;
  if (q >= e.kmax_bytes) return 1.0;
  return e.pmax * static_cast<double>(q - e.kmin_bytes) /
         static_cast<double>(e.kmax_bytes - e.kmin_bytes);
}

}  // namespace

// InfiniBand's linear forwarding table: of the equal-cost ports towards a
// destination, the DLID picks one (switch.hpp).
std::uint32_t lft_choice(const std::vector<std::uint32_t>& ports, std::uint16_t dlid) noexcept {
  return ports[dlid % ports.size()];
}

namespace {

wire::MacAddress port_mac(std::uint32_t sw, std::uint32_t local) noexcept {
  // Locally administered (02:...), one per switch port.
  return {0x02,
          0x53,
          0x57,
          static_cast<std::uint8_t>(sw),
          static_cast<std::uint8_t>(local >> 8),
          static_cast<std::uint8_t>(local)};
}

}  // namespace

// --- Building the fabric ---------------------------------------------------------

Link& Engine::new_port_link(const LinkConfig& c, std::uint32_t to, std::uint64_t stream) {
  port_links.push_back(std::make_unique<Link>());
  Link& ln = *port_links.back();
  ln.cfg = c;
  Rng mix(cfg.seed ^ ((stream + 1) * 0xD1B54A32D192ED03ull));
  ln.rng = Rng(mix.next());
  ln.to = to;
  ln.index = static_cast<std::uint32_t>(link_list.size());
  link_list.push_back(&ln);
  return ln;
}

std::uint32_t Engine::add_switch_port(std::uint32_t sw, const LinkConfig& c, std::uint32_t peer) {
  const auto id = static_cast<std::uint32_t>(sw_ports.size());
  SwitchPort p;
  p.sw = sw;
  p.local = static_cast<std::uint32_t>(switches[sw].ports.size());
  p.peer = peer;
  // The switch's egress link: a random stream of its own, derived from the
  // port's index (ports are made in a fixed order: deterministic).
  p.out = &new_port_link(c, peer, (std::uint64_t{1} << 40) | id);
  switches[sw].ports.push_back(id);
  sw_ports.push_back(std::move(p));
  routes_ready = false;
  return id;
}

SwitchId Fabric::add_switch(const SwitchConfig& config) {
  Engine& e = *engine_;
  if (e.ib) {
    // Ethernet's: refused rather than ignored (fabric.hpp).
    for (const PfcConfig& p : config.pfc)
      if (p.enabled) throw std::invalid_argument(ib_refused("PFC (SwitchConfig::pfc)"));
    for (const EcnConfig& c : config.ecn)
      if (c.enabled) throw std::invalid_argument(ib_refused("ECN (SwitchConfig::ecn)"));
    for (const std::uint8_t vl : config.sl_to_vl)
      if (vl >= kTrafficClasses)
        throw std::invalid_argument(ib_vl_refused(vl, kTrafficClasses - 1));
    const std::uint32_t largest = Engine::ib_blocks(4096 + Engine::kIbMaxHeaderBytes);
    if (config.ib_vl_buffer_blocks < largest || config.ib_vl_buffer_blocks > kIbMaxCreditBlocks)
      throw std::invalid_argument(
          ib_buffer_refused(config.ib_vl_buffer_blocks, largest, kIbMaxCreditBlocks));
  }
  SwitchImpl s;
  s.cfg = config;
  const auto index = static_cast<std::uint32_t>(e.switches.size());
  if (s.cfg.name.empty()) s.cfg.name = "sw" + std::to_string(index);
  Rng mix(e.cfg.seed ^ ((index + 1) * 0xA24BAED4963EE407ull));
  s.rng = Rng(mix.next());
  s.hash_seed = mix.next();
  e.switches.push_back(std::move(s));
  return SwitchId{index};
}

void Fabric::connect(Device& host, SwitchId sw, const LinkConfig& link) {
  connect(host, 1, sw, link);
}

void Fabric::connect(Device& host, std::uint8_t host_port, SwitchId sw, const LinkConfig& link) {
  Engine& e = *engine_;
  if (!host.has_port(host_port)) throw std::out_of_range("no such port on the host");
  const std::uint32_t node = Engine::node_of(host, host_port);
  if (sw.index >= e.switches.size()) throw std::out_of_range("no such switch");
  if (e.host_uplink.size() < e.host_ports.size()) {
    e.host_uplink.resize(e.host_ports.size(), nullptr);
    e.host_stats.resize(e.host_ports.size());
  }
  if (e.host_uplink[node] != nullptr) throw std::logic_error("host port already connected");
  const std::uint32_t port = e.add_switch_port(sw.index, link, node);
  // A host's port 1 goes by the host's name, its others by name:port.
  e.sw_ports[port].stats.peer =
      host_port == 1 ? host.config().name : host.config().name + ":" + std::to_string(host_port);
  e.host_uplink[node] = &e.new_port_link(link, kSwitchNode | port, node);
  e.sw_ports[port].in = e.host_uplink[node];
  if (e.ib) e.grant_credits(*e.host_uplink[node], e.switches[sw.index].cfg);
  if (const PfcStorm& storm = host.config().pfc_storm; storm.enabled)
    e.schedule(std::max(storm.from, e.now), EventKind::HostPfc, node, 0);
}

void Fabric::connect(SwitchId a, SwitchId b, const LinkConfig& link) {
  Engine& e = *engine_;
  if (a.index >= e.switches.size() || b.index >= e.switches.size() || a.index == b.index)
    throw std::out_of_range("no such pair of switches");
  const std::uint32_t pa = e.add_switch_port(a.index, link, 0);
  const std::uint32_t pb = e.add_switch_port(b.index, link, 0);
  SwitchPort& x = e.sw_ports[pa];
  SwitchPort& y = e.sw_ports[pb];
  x.peer = x.out->to = kSwitchNode | pb;
  y.peer = y.out->to = kSwitchNode | pa;
  x.stats.peer = e.switches[b.index].cfg.name + ":" + std::to_string(y.local);
  y.stats.peer = e.switches[a.index].cfg.name + ":" + std::to_string(x.local);
  x.in = y.out;
  y.in = x.out;
  if (e.ib) {
    e.grant_credits(*x.out, e.switches[b.index].cfg);
    e.grant_credits(*y.out, e.switches[a.index].cfg);
  }
}

void Fabric::on_queue(std::function<void(const QueueSample&)> probe) {
  engine_->queue_probe = std::move(probe);
}

void Fabric::start_port_capture(SwitchId sw, std::size_t port, const std::string& path,
                                std::uint32_t snaplen) {
  Engine& e = *engine_;
  SwitchPort& p = e.sw_ports.at(e.switches.at(sw.index).ports.at(port));
  p.tap.reset();
  p.tap = std::make_unique<capture::PcapWriter>(
      path, e.ib ? wire::LinkType::Erf : wire::LinkType::Ethernet, snaplen == 0 ? 262144 : snaplen);
}

void Fabric::stop_port_capture(SwitchId sw, std::size_t port) {
  Engine& e = *engine_;
  SwitchPort& p = e.sw_ports.at(e.switches.at(sw.index).ports.at(port));
  if (p.tap) p.tap->flush();
  p.tap.reset();
}

LinkConfig& Fabric::switch_link(SwitchId sw, std::size_t port) {
  Engine& e = *engine_;
  return e.sw_ports.at(e.switches.at(sw.index).ports.at(port)).out->cfg;
}

std::size_t Fabric::switch_count() const noexcept {
  return engine_->switches.size();
}
const SwitchConfig& Fabric::switch_config(SwitchId sw) const {
  return engine_->switches.at(sw.index).cfg;
}
std::size_t Fabric::switch_ports(SwitchId sw) const {
  return engine_->switches.at(sw.index).ports.size();
}

namespace {
// The counters with the paused interval, and the wait for credits, still
// open added in.
void add_open_intervals(const Link& ln, Time now, std::array<Time, kTrafficClasses>& duration,
                        std::array<Time, kTrafficClasses>& xmit_wait) {
  for (std::size_t p = 0; p < kTrafficClasses; ++p) {
    if (ln.pause[p].on) duration[p] += std::min(now, ln.pause[p].until) - ln.pause[p].from;
    xmit_wait[p] = ln.credit_wait_ns[p] +
                   (ln.credit_need[p] != 0 ? std::max<Time>(now - ln.credit_wait_from[p], 0) : 0);
  }
}
}  // namespace

SwitchPortStats Fabric::switch_port_stats(SwitchId sw, std::size_t port) const {
  const Engine& e = *engine_;
  const SwitchPort& p = e.sw_ports.at(e.switches.at(sw.index).ports.at(port));
  SwitchPortStats s = p.stats;
  add_open_intervals(*p.out, e.now, s.rx_pause_duration, s.xmit_wait_ns);
  return s;
}

HostPortStats Fabric::host_port_stats(const Device& host, std::uint8_t port) const {
  const Engine& e = *engine_;
  if (!host.has_port(port)) return {};
  const std::uint32_t node = Engine::node_of(host, port);
  if (node >= e.host_uplink.size() || e.host_uplink[node] == nullptr) return {};
  HostPortStats s = e.host_stats[node];
  add_open_intervals(*e.host_uplink[node], e.now, s.rx_pause_duration, s.xmit_wait_ns);
  return s;
}

// Shortest paths from every switch to every host port, by breadth-first
// search from each; a switch's equal-cost ports towards a host port are
// those whose peer is one hop nearer to it.
void Engine::compute_routes() {
  const std::size_t nd = host_ports.size();
  const std::size_t ns = switches.size();
  constexpr std::uint32_t kFar = std::numeric_limits<std::uint32_t>::max();
  for (SwitchImpl& s : switches) s.routes.assign(nd, {});
  std::vector<std::uint32_t> dist(ns);
  std::vector<std::uint32_t> frontier;
  std::vector<std::uint32_t> next;
  for (std::uint32_t d = 0; d < nd; ++d) {
    std::fill(dist.begin(), dist.end(), kFar);
    frontier.clear();
    for (const SwitchPort& p : sw_ports)
      if (p.peer == d) {
        dist[p.sw] = 1;
        frontier.push_back(p.sw);
      }
    for (std::uint32_t hop = 1; !frontier.empty(); ++hop) {
      next.clear();
      for (const std::uint32_t s : frontier)
        for (const std::uint32_t pi : switches[s].ports) {
          const SwitchPort& p = sw_ports[pi];
          if ((p.peer & kSwitchNode) == 0) continue;
          const std::uint32_t t = sw_ports[p.peer & ~kSwitchNode].sw;
          if (dist[t] != kFar) continue;
          dist[t] = hop + 1;
          next.push_back(t);
        }
      frontier.swap(next);
    }
    for (std::uint32_t s = 0; s < ns; ++s) {
      if (dist[s] == kFar) continue;
      for (const std::uint32_t pi : switches[s].ports) {
        const SwitchPort& p = sw_ports[pi];
        const bool to_d = p.peer == d;
        const bool nearer =
            (p.peer & kSwitchNode) != 0 && dist[sw_ports[p.peer & ~kSwitchNode].sw] + 1 == dist[s];
        if ((dist[s] == 1 && to_d) || (dist[s] > 1 && nearer))
          switches[s].routes[d].push_back(p.local);
      }
    }
  }
  dev_by_v4.clear();
  dev_by_v6.clear();
  for (std::uint32_t d = 0; d < nd; ++d) {
    const wire::IpAddress& a = host_ports[d].device->ip(host_ports[d].port);
    // IPv4 addresses are kept IPv4-mapped: the last four bytes.
    if (a.v4)
      dev_by_v4.emplace(wire::load_be32(a.bytes.data() + 12), d);
    else
      dev_by_v6.emplace_back(a.bytes, d);
  }
  routes_ready = true;
}

std::optional<std::size_t> Fabric::ecmp_port(SwitchId sw, const wire::IpAddress& src,
                                             const wire::IpAddress& dst, std::uint16_t sport,
                                             std::uint16_t dport) {
  Engine& e = *engine_;
  const SwitchImpl& s = e.switches.at(sw.index);
  if (e.ib) return std::nullopt;
  if (!e.routes_ready) e.compute_routes();
  const std::size_t off = dst.v4 ? 12 : 0;
  const std::uint32_t dev = e.node_of_ip(dst.bytes.data() + off, dst.v4);
  if (dev >= e.host_ports.size() || s.routes[dev].empty()) return std::nullopt;
  const std::vector<std::uint32_t>& choice = s.routes[dev];
  if (choice.size() == 1) return choice[0];
  const std::size_t len = src.v4 ? 4 : 16;
  const std::uint64_t h = tuple_hash(s.hash_seed, src.bytes.data() + off, dst.bytes.data() + off,
                                     len, kProtoUdp, sport, dport);
  return choice[h % choice.size()];
}

std::optional<std::size_t> Fabric::lft_port(SwitchId sw, std::uint16_t dlid) {
  Engine& e = *engine_;
  const SwitchImpl& s = e.switches.at(sw.index);
  if (!e.routes_ready) e.compute_routes();
  const std::uint32_t node = e.node_by_lid(dlid);
  if (!e.ib || node >= e.host_ports.size() || s.routes[node].empty()) return std::nullopt;
  return lft_choice(s.routes[node], dlid);
}

std::uint32_t Engine::node_of_ip(const std::uint8_t* ip, bool v4) const noexcept {
  if (v4) {
    const auto it = dev_by_v4.find(wire::load_be32(ip));
    return it == dev_by_v4.end() ? std::numeric_limits<std::uint32_t>::max() : it->second;
  }
  for (const auto& [addr, d] : dev_by_v6)
    if (std::memcmp(addr.data(), ip, 16) == 0) return d;
  return std::numeric_limits<std::uint32_t>::max();
}

// --- Forwarding -------------------------------------------------------------------

void Engine::switch_receive(std::uint32_t port, std::uint32_t buffer, std::size_t length) {
  std::uint8_t* f = buffers[buffer];
  SwitchPort& in = sw_ports[port];
  if (in.tap) in.tap->write(now, wire::Bytes(f, length));
  if (ib) {
    switch_receive_ib(port, buffer, length);
    return;
  }
  if (length >= 14 && wire::load_be16(f + 12) == wire::kEthMacControl) {
    apply_pause(*in.out, wire::Bytes(f, length), in.stats.rx_pause, in.stats.rx_pause_duration);
    release_buffer(buffer);
    kick_port(port, now);
    return;
  }
  SwitchImpl& sw = switches[in.sw];
  if (!routes_ready) compute_routes();
  L3View v;
  const std::uint32_t dev =
      view_l3(f, length, v) ? node_of_ip(f + v.ip + (v.v4 ? 16 : 24), v.v4) : ~0U;
  if (dev >= host_ports.size() || sw.routes[dev].empty()) {  // nowhere to go
    ++stats.packets_dropped;
    release_buffer(buffer);
    return;
  }
  const std::vector<std::uint32_t>& choice = sw.routes[dev];
  const std::uint8_t tc = sw.cfg.dscp_to_tc[v.tos >> 2] & 7;
  std::uint32_t local = choice[0];
  if (choice.size() > 1) {
    local = sw.cfg.routing == Routing::Ecmp ? choice[flow_hash(f, v, sw.hash_seed) % choice.size()]
                                            : adaptive_choice(sw, choice, tc);
  }
  const bool ect = (v.tos & 3) != 0 && (v.tos & 3) != kEcnCe;
  switch_enqueue(port, buffer, length, local, tc, ect ? static_cast<std::uint8_t>(v.ip) : 0, v.v4);
}

// An IB packet arrived whole at switch port `port`: its VCRC is checked,
// its DLID looked up in the linear forwarding table, its VL is its class.
void Engine::switch_receive_ib(std::uint32_t port, std::uint32_t buffer, std::size_t length) {
  const wire::Bytes bytes(buffers[buffer], length);
  const SwitchImpl& sw = switches[sw_ports[port].sw];
  if (!routes_ready) compute_routes();
  const auto lrh = wire::ib::parse_lrh(bytes);
  if (lrh && cfg.verify_icrc) {
    // The VCRC covers the packet as its PktLen gives it, LRH through ICRC,
    // and is stored after it, least significant byte first.
    const std::size_t n = lrh->packet_bytes();
    if (n + wire::ib::kVcrcSize > length ||
        wire::ib::vcrc(bytes.first(n)) != (bytes[n] | (bytes[n + 1] << 8))) {
      ++stats.bad_vcrc;
      drop_ib(port, buffer, length);
      return;
    }
  }
  const std::uint32_t node = lrh ? node_by_lid(lrh->dlid) : ~0U;
  if (node >= host_ports.size() || sw.routes[node].empty()) {  // nowhere to go
    ++stats.packets_dropped;
    drop_ib(port, buffer, length);
    return;
  }
  // It arrived on its VL; it leaves on the VL the switch's SL-to-VL table
  // gives its SL, written into the LRH (the VCRC recomputed: it covers the
  // VL; the ICRC masks it).
  const auto in_vl = static_cast<std::uint8_t>(lrh->vl & 7);
  const auto tc = static_cast<std::uint8_t>(sw.cfg.sl_to_vl[lrh->sl & 7] & 7);
  if (tc != in_vl) (void)wire::ib::set_vl({buffers[buffer], length}, tc);
  const std::vector<std::uint32_t>& choice = sw.routes[node];
  const std::uint32_t local = sw.cfg.routing == Routing::Adaptive && choice.size() > 1
                                  ? adaptive_choice(switches[sw_ports[port].sw], choice, tc)
                                  : lft_choice(choice, lrh->dlid);
  switch_enqueue(port, buffer, length, local, tc, 0, true, in_vl);
}

// Adaptive routing: of the equal-cost ports `choice`, the one with the
// fewest bytes queued in class `tc`; a tie is broken at random.
std::uint32_t Engine::adaptive_choice(SwitchImpl& sw, const std::vector<std::uint32_t>& choice,
                                      std::uint8_t tc) {
  std::uint32_t local = choice[0];
  std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
  std::uint32_t ties = 0;
  for (const std::uint32_t c : choice) {
    const std::uint64_t q = sw_ports[sw.ports[c]].stats.tc[tc].queue_bytes;
    if (q < best) {
      best = q;
      local = c;
      ties = 1;
    } else if (q == best && sw.rng.next() % ++ties == 0) {
      local = c;
    }
  }
  return local;
}

// An IB packet that arrived on `port` is dropped there (a bad VCRC, no
// route): its blocks are free again, and the upstream hears of it.
void Engine::drop_ib(std::uint32_t port, std::uint32_t buffer, std::size_t length) {
  return_credits(port, static_cast<std::uint8_t>((buffers[buffer][0] >> 4) & 7), ib_blocks(length),
                 now);
  release_buffer(buffer);
}

// The frame in `buffer`, arrived on `port`, joins the queue of class `tc` at
// the switch's egress port `local` if the buffer admits it.
void Engine::switch_enqueue(std::uint32_t port, std::uint32_t buffer, std::size_t length,
                            std::uint32_t local, std::uint8_t tc, std::uint8_t ect_ip, bool v4,
                            std::uint8_t in_class) {
  // The class it arrived in (its ingress accounting, PFC and credits): the
  // one it leaves in, but where an IB switch's SL-to-VL table moves it.
  const std::uint8_t ic = in_class < kTrafficClasses ? in_class : tc;
  SwitchPort& in = sw_ports[port];
  SwitchImpl& sw = switches[in.sw];
  const std::uint32_t out_id = sw.ports[local];
  SwitchPort& out = sw_ports[out_id];
  SwitchQueueStats& qs = out.stats.tc[tc];
  const PfcConfig& pfc = sw.cfg.pfc[ic];
  bool admit = true;
  if (ib) {
    // Credits: the upstream sent it into space this port had advertised.
  } else if (pfc.enabled) {
    if (in.ingress_bytes[ic] + length > pfc.xoff_bytes + pfc.headroom_bytes) {
      admit = false;
      ++qs.headroom_overflow;
    }
  } else {
    const std::uint64_t free_bytes =
        sw.used < sw.cfg.buffer_bytes ? sw.cfg.buffer_bytes - sw.used : 0;
    admit = static_cast<double>(qs.queue_bytes + length) <=
            sw.cfg.dynamic_alpha * static_cast<double>(free_bytes);
  }
  if (!admit) {
    ++qs.dropped;
    ++stats.packets_dropped;
    if (queue_probe)
      queue_probe(QueueSample{now, out.sw, out.local, tc, QueueSample::Kind::Drop, qs.queue_bytes,
                              static_cast<std::uint32_t>(length), false});
    release_buffer(buffer);
    return;
  }
  out.q[tc].push_back(
      QueuedFrame{buffer, static_cast<std::uint32_t>(length), port, ic, ect_ip, v4});
  out.queued = static_cast<std::uint8_t>(out.queued | (1U << tc));
  qs.queue_bytes += length;
  qs.max_queue_bytes = std::max(qs.max_queue_bytes, qs.queue_bytes);
  sw.used += length;
  in.ingress_bytes[ic] += length;
  in.stats.max_ingress_bytes[ic] = std::max(in.stats.max_ingress_bytes[ic], in.ingress_bytes[ic]);
  if (queue_probe)
    queue_probe(QueueSample{now, out.sw, out.local, tc, QueueSample::Kind::Enqueue, qs.queue_bytes,
                            static_cast<std::uint32_t>(length), false});
  if (pfc.enabled && !in.xoff[ic] && in.ingress_bytes[ic] >= pfc.xoff_bytes) {
    in.xoff[ic] = true;
    send_pfc(port, ic, kXoffQuanta);
  }
  kick_port(out_id, now);
}

void Engine::kick_port(std::uint32_t port, Time at) {
  SwitchPort& p = sw_ports[port];
  // Nothing starts before the link is free: the port wakes then, instead
  // of now to find the link busy and wake again (a frame queued behind
  // another cost two events that way, one of them wasted).
  const Time t = std::max({at, now, p.out->busy_until});
  if (p.tx_pending && p.tx_at <= t) return;
  p.tx_pending = true;
  p.tx_at = t;
  schedule(t, EventKind::SwitchTx, port, ++p.tx_gen);
}

void Engine::switch_tx(std::uint32_t port, std::uint64_t gen) {
  SwitchPort& p = sw_ports[port];
  if (gen != p.tx_gen) return;  // superseded by an earlier kick
  p.tx_pending = false;
  Link& ln = *p.out;
  if (ln.busy_until > now) {
    kick_port(port, ln.busy_until);
    return;
  }
  SwitchImpl& sw = switches[p.sw];
  // The classes that may send now: something queued and not paused.
  int pick = -1;
  Time resume = kForever;
  std::uint32_t ready = 0;
  for (int tc = kTrafficClasses - 1; tc >= 0; --tc) {
    const auto c = static_cast<std::size_t>(tc);
    if ((p.queued & (1U << c)) == 0) continue;
    if (ln.pause[c].until > now) {
      resume = std::min(resume, ln.pause[c].until);
      continue;
    }
    if (ln.credited) {
      // InfiniBand: not without credits for the whole packet; their
      // return kicks the port (credit_return).
      const std::uint32_t need = ib_blocks(p.q[c].front().length);
      if (ln.credits[c] < need) {
        credit_wait(ln, static_cast<std::uint8_t>(c), need);
        continue;
      }
    }
    ready |= 1U << c;
    if (pick < 0) pick = tc;  // strict priority: the highest class
  }
  if (pick < 0) {
    if (resume != kForever) kick_port(port, resume);
    return;
  }
  if (sw.cfg.scheduling == Scheduling::Dwrr) {
    // Deficit round robin over the ready classes, starting after the class
    // served last; a class with too small a deficit gets its quantum and
    // waits for the next round.
    for (;;) {
      const std::size_t c = p.dwrr_next;
      if ((ready & (1U << c)) != 0) {
        const auto need = static_cast<std::int64_t>(p.q[c].front().length);
        if (p.deficit[c] >= need) {
          p.deficit[c] -= need;
          pick = static_cast<int>(c);
          if (p.q[c].size() == 1) p.deficit[c] = 0;  // an emptied class keeps no credit
          break;
        }
        p.deficit[c] += std::max<std::uint32_t>(sw.cfg.dwrr_quantum[c], 1);
      }
      p.dwrr_next = static_cast<std::uint8_t>((c + 1) % kTrafficClasses);
    }
  }
  const auto c = static_cast<std::size_t>(pick);
  const QueuedFrame qf = p.q[c].front();
  p.q[c].pop_front();
  if (p.q[c].empty()) p.queued = static_cast<std::uint8_t>(p.queued & ~(1U << c));
  SwitchQueueStats& qs = p.stats.tc[c];
  qs.queue_bytes -= qf.length;
  sw.used -= qf.length;
  ++qs.tx_packets;
  qs.tx_bytes += qf.length;
  SwitchPort& in = sw_ports[qf.in_port];
  in.ingress_bytes[qf.prio] -= qf.length;
  const PfcConfig& pfc = sw.cfg.pfc[qf.prio];
  if (in.xoff[qf.prio] && in.ingress_bytes[qf.prio] + pfc.resume_offset_bytes < pfc.xoff_bytes) {
    in.xoff[qf.prio] = false;
    send_pfc(qf.in_port, qf.prio, 0);
  }
  const EcnConfig& ecn = sw.cfg.ecn[c];
  std::uint8_t* f = buffers[qf.buffer];
  bool marked = false;
  if (ecn.enabled && qf.ect_ip != 0 && sw.rng.chance(mark_probability(ecn, qs.queue_bytes))) {
    mark_ce(f, qf.ect_ip, qf.v4);
    ++qs.ecn_marked;
    marked = true;
  }
  if (queue_probe)
    queue_probe(QueueSample{now, p.sw, p.local, static_cast<std::uint8_t>(c),
                            QueueSample::Kind::Dequeue, qs.queue_bytes, qf.length, marked});
  ++stats.switch_hops;
  if (p.tap) p.tap->write(std::max(now, ln.busy_until), wire::Bytes(f, qf.length));
  if (ln.credited) ln.credits[c] -= ib_blocks(qf.length);
  launch(ln, qf.buffer, qf.length);
  // InfiniBand: the packet's blocks at its ingress port are free once its
  // last byte has left.
  if (ib) return_credits(qf.in_port, qf.prio, ib_blocks(qf.length), ln.busy_until);
  if (p.queued != 0) kick_port(port, ln.busy_until);
}

// A pause frame goes out on the port's egress link ahead of any queued
// frame: after the frame being serialised, if any.
void Engine::send_pfc(std::uint32_t port, std::uint8_t prio, std::uint16_t quanta) {
  SwitchPort& p = sw_ports[port];
  wire::PauseFrame pf;
  pf.src = port_mac(p.sw, p.local);
  pf.dst = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
  pf.opcode = wire::kPfcOpcode;
  pf.class_enable = static_cast<std::uint16_t>(1U << prio);
  pf.quanta[prio] = quanta;
  const std::uint32_t buf = take_buffer(kSmallBuffer);  // encode_pause writes 60 bytes
  const std::size_t n = wire::encode_pause(pf, {buffers[buf], buffer_size(buf)});
  if (quanta == 0)
    ++p.stats.tx_xon[prio];
  else
    ++p.stats.tx_pause[prio];
  // A capture at the sender's port shows the pause frames a switch sends to
  // a host (the host's port sees them); at the receiver's port deliver()
  // writes them when they arrive.
  if (pcap && cfg.capture_point == CapturePoint::SenderPort && (p.peer & kSwitchNode) == 0)
    capture_frame(std::max(now, p.out->busy_until), wire::Bytes(buffers[buf], n));
  ++stats.switch_hops;
  if (p.tap) p.tap->write(std::max(now, p.out->busy_until), wire::Bytes(buffers[buf], n));
  launch(*p.out, buf, n);
  const std::uint32_t gen = ++p.pfc_gen[prio];
  if (quanta != 0) {
    // Renewed when half of it has passed, while still above XON (an XON
    // or a newer pause makes this renewal stale).
    const Time half =
        wire::pause_quanta_ns(quanta, static_cast<std::uint64_t>(p.out->cfg.rate_bps)) / 2;
    schedule(now + std::max<Time>(half, 1), EventKind::PfcRefresh, port,
             (std::uint64_t{gen} << 8) | prio);
  }
}

void Engine::pfc_refresh(std::uint32_t port, std::uint64_t what) {
  const auto prio = static_cast<std::uint8_t>(what & 7);
  const SwitchPort& p = sw_ports[port];
  if (p.xoff[prio] && p.pfc_gen[prio] == static_cast<std::uint32_t>(what >> 8))
    send_pfc(port, prio, kXoffQuanta);
}

// The storm's source (HostConfig::pfc_storm): the host's port pauses the
// switch on one priority, renewing the pause when half of it has passed (the
// switches' rule, send_pfc), until the storm's end, which sends an XON.
void Engine::host_pfc(std::uint32_t node) {
  const DevicePort& hp = host_ports[node];
  const PfcStorm& storm = hp.device->config().pfc_storm;
  Link& up = *host_uplink[node];
  const std::uint8_t prio = storm.priority & 7;
  const bool over = now >= storm.until;
  wire::PauseFrame pf;
  pf.src = hp.device->mac(hp.port);
  pf.dst = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
  pf.opcode = wire::kPfcOpcode;
  pf.class_enable = static_cast<std::uint16_t>(1U << prio);
  pf.quanta[prio] = over ? 0 : kXoffQuanta;
  const std::uint32_t buf = take_buffer(kSmallBuffer);  // encode_pause writes 60 bytes
  const std::size_t n = wire::encode_pause(pf, {buffers[buf], buffer_size(buf)});
  ++(over ? host_stats[node].tx_xon : host_stats[node].tx_pause)[prio];
  // At the sender's port the capture shows it as it leaves the host, like
  // every frame the host sends (transmit()); ahead of any queued frame,
  // after the one being serialised.
  if (pcap && cfg.capture_point == CapturePoint::SenderPort)
    capture_frame(std::max(now, up.busy_until), wire::Bytes(buffers[buf], n));
  launch(up, buf, n);
  if (over) return;
  const Time half =
      wire::pause_quanta_ns(kXoffQuanta, static_cast<std::uint64_t>(up.cfg.rate_bps)) / 2;
  schedule(std::min(now + std::max<Time>(half, 1), storm.until), EventKind::HostPfc, node, 0);
}

void Engine::apply_pause(Link& ln, wire::Bytes frame,
                         std::array<std::uint64_t, kTrafficClasses>& count,
                         std::array<Time, kTrafficClasses>& duration) {
  const auto pf = wire::decode_pause(frame, wire::LinkType::Ethernet);
  if (!pf) return;
  bool resumed = false;
  for (std::size_t p = 0; p < kTrafficClasses; ++p) {
    if (!pf->enabled(p)) continue;
    PauseTrack& t = ln.pause[p];
    // Close an interval that ran out before this frame.
    if (t.on && t.until <= now) {
      duration[p] += t.until - t.from;
      t.on = false;
    }
    const Time span =
        wire::pause_quanta_ns(pf->quanta[p], static_cast<std::uint64_t>(ln.cfg.rate_bps));
    if (span > 0) {
      ++count[p];
      if (!t.on) {
        t.on = true;
        t.from = now;
      }
      t.until = now + span;
    } else {
      if (t.on) {
        duration[p] += now - t.from;
        t.on = false;
      }
      t.until = now;
      resumed = true;
    }
  }
  if (resumed) wake_waiters(ln);  // QPs that wait for the pause to end go now
}

void Engine::wake_waiters(Link& ln) {
  for (const std::uint32_t id : ln.pause_waiters) {
    QpImpl* qp = id < qps.size() ? qps[id] : nullptr;
    if (qp == nullptr) continue;
    qp->pause_wait = false;
    qp->tx_scheduled = true;
    schedule(now, EventKind::QpTx, id, ++qp->tx_gen);
  }
  ln.pause_waiters.clear();
}

// --- InfiniBand credits -----------------------------------------------------------

void Engine::grant_credits(Link& ln, const SwitchConfig& receiver) {
  ln.credited = true;
  ln.credits.fill(receiver.ib_vl_buffer_blocks);
}

void Engine::credit_wait(Link& ln, std::uint8_t vl, std::uint32_t need) {
  if (ln.credit_need[vl] == 0) {
    // The port is held back once it has sent what it is sending (a NIC
    // builds ahead of the wire): PortXmitWait counts from then.
    ln.credit_wait_from[vl] = std::max(now, ln.busy_until);
    ln.credit_need[vl] = need;
  } else {
    ln.credit_need[vl] = std::min(ln.credit_need[vl], need);
  }
}

void Engine::return_credits(std::uint32_t port, std::uint8_t vl, std::uint32_t blocks, Time at) {
  const SwitchPort& p = sw_ports[port];
  if (p.in == nullptr || !p.in->credited) return;
  // The flow control packet goes back over the port's egress link.
  schedule(std::max(at, now) + p.out->cfg.delay_ns, EventKind::CreditReturn, port,
           (std::uint64_t{vl} << 32) | blocks);
}

void Engine::lost_on_link(const Link& ln, std::uint8_t vl, std::size_t bytes) {
  if (ln.credited) return_credits(ln.to & ~kSwitchNode, vl, ib_blocks(bytes), now);
}

void Engine::credit_return(std::uint32_t port, std::uint64_t what) {
  const SwitchPort& p = sw_ports[port];
  Link& ln = *p.in;
  const auto vl = static_cast<std::size_t>((what >> 32) & 7);
  ln.credits[vl] += static_cast<std::int64_t>(what & 0xFFFFFFFF);
  if (ln.credit_need[vl] == 0 || ln.credits[vl] < ln.credit_need[vl]) return;
  ln.credit_wait_ns[vl] += std::max<Time>(now - ln.credit_wait_from[vl], 0);
  ln.credit_need[vl] = 0;
  if ((p.peer & kSwitchNode) != 0)
    kick_port(p.peer & ~kSwitchNode, now);
  else
    wake_waiters(ln);
}

}  // namespace rdmalab::sim

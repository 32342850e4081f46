// The event loop, the link model and the capture tap.
#include <cstring>

#include "engine.hpp"
#include "rdmalab/wire/icrc.hpp"
#include "rdmalab/wire/opcode.hpp"

namespace rdmalab::sim {
namespace {

// Events are ordered by time, then by the order they were scheduled: two
// events at the same virtual time always run in the same order.
bool later(const Event& x, const Event& y) noexcept {
  return x.time != y.time ? x.time > y.time : x.seq > y.seq;
}

// Ethernet preamble, start delimiter and inter-frame gap occupy the wire too.
constexpr std::size_t kWireOverhead = 20;

std::uint64_t link_key(std::uint32_t from, std::uint32_t to) noexcept {
  return (std::uint64_t{from} << 32) | to;
}

}  // namespace

// --- Fabric -----------------------------------------------------------------

Fabric::Fabric(FabricConfig config) : engine_(std::make_unique<Engine>(std::move(config))) {}
Fabric::~Fabric() {
  if (engine_->pcap) engine_->pcap->flush();
}

Device& Fabric::add_host(const HostConfig& config) {
  auto index = static_cast<std::uint32_t>(engine_->devices.size());
  engine_->devices.push_back(std::make_unique<Device>(*this, config, index));
  return *engine_->devices.back();
}

LinkConfig& Fabric::link(const Device& from, const Device& to) {
  return engine_->link(engine_->device_index(from), engine_->device_index(to)).cfg;
}

void Fabric::start_capture(const std::string& path, std::uint32_t snaplen) {
  engine_->pcap = std::make_unique<capture::PcapWriter>(path, wire::LinkType::Ethernet,
                                                        snaplen == 0 ? 262144 : snaplen);
}

void Fabric::stop_capture() {
  if (engine_->pcap) engine_->pcap->flush();
  engine_->pcap.reset();
}

Time Fabric::now() const noexcept { return engine_->now; }
bool Fabric::step() { return engine_->step(); }

bool Fabric::run(Time deadline) {
  while (!engine_->heap.empty()) {
    if (engine_->heap.front().time > deadline) return false;
    engine_->step();
  }
  return true;
}

void Fabric::run_for(Time duration) {
  const Time end = engine_->now + duration;
  run(end);
  engine_->now = std::max(engine_->now, end);
}

bool Fabric::run_until(const std::function<bool()>& pred, Time deadline) {
  while (!pred()) {
    if (engine_->heap.empty() || engine_->heap.front().time > deadline) return pred();
    engine_->step();
  }
  return true;
}

const FabricStats& Fabric::stats() const noexcept { return engine_->stats; }
const FabricConfig& Fabric::config() const noexcept { return engine_->cfg; }

// --- Engine -----------------------------------------------------------------

void Engine::schedule(Time t, EventKind kind, std::uint32_t a, std::uint64_t b) {
  heap.push_back(Event{t, seq++, kind, a, b});
  std::push_heap(heap.begin(), heap.end(), later);
}

bool Engine::step() {
  if (heap.empty()) return false;
  std::pop_heap(heap.begin(), heap.end(), later);
  const Event e = heap.back();
  heap.pop_back();
  now = std::max(now, e.time);
  ++stats.events;
  if (e.kind == EventKind::Arrival) {
    deliver(e.a, static_cast<std::uint32_t>(e.b >> 32), static_cast<std::size_t>(e.b & 0xFFFFFFFF));
    return true;
  }
  QpImpl* qp = e.a < qps.size() ? qps[e.a] : nullptr;
  if (qp == nullptr) return true;  // destroyed since
  switch (e.kind) {
    case EventKind::QpTx:
      qp->tx_scheduled = false;
      qp->pump();
      break;
    case EventKind::AckTimer: qp->on_ack_timer(e.b); break;
    case EventKind::RnrTimer: qp->on_rnr_timer(e.b); break;
    case EventKind::AckFlush: qp->flush_ack(); break;
    case EventKind::ArTimer: qp->on_ar_timer(e.b); break;
    case EventKind::Arrival: break;
  }
  return true;
}

Link& Engine::link(std::uint32_t from, std::uint32_t to) {
  auto& slot = links[link_key(from, to)];
  if (!slot) {
    slot = std::make_unique<Link>();
    slot->cfg = cfg.default_link;
    // Each direction its own random stream, derived from the seed and the
    // endpoints, so adding a host does not change another link's losses.
    Rng mix(cfg.seed ^ (link_key(from, to) * 0x9E3779B97F4A7C15ull));
    slot->rng = Rng(mix.next());
    slot->to = to;
  }
  return *slot;
}

std::uint32_t Engine::take_buffer(std::size_t size) {
  std::uint32_t index;
  if (!free_buffers.empty()) {
    index = free_buffers.back();
    free_buffers.pop_back();
  } else {
    index = static_cast<std::uint32_t>(buffers.size());
    buffers.emplace_back();
  }
  auto& b = buffers[index];
  if (b.size() < size) b.resize(std::max<std::size_t>(size, 128));
  return index;
}

std::uint32_t Engine::device_index(const Device& d) const noexcept { return d.index_; }

Device* Engine::device_by_gid(const ibv_gid& gid) const noexcept {
  for (const auto& d : devices) {
    const ibv_gid g = d->gid(0);
    if (std::memcmp(g.raw, gid.raw, sizeof g.raw) == 0) return d.get();
  }
  return nullptr;
}

namespace {

bool rule_matches(const DropRule& r, const wire::IbPacket& p, std::uint64_t nth) noexcept {
  const wire::OpcodeInfo* info = wire::find_opcode(p.bth.opcode);
  const bool response = info != nullptr && info->is_response();
  switch (r.kind) {
    case DropRule::Kind::Psn: return !response && p.bth.psn == r.value;
    case DropRule::Kind::Responses: return response;
    case DropRule::Kind::Opcode: return p.bth.opcode == r.value;
    case DropRule::Kind::Nth: return nth == r.value;
    case DropRule::Kind::AfterNth: return nth > r.value;
  }
  return false;
}

// Applies the explicit drop rules; a rule with a count stops matching once
// it has dropped that many packets.
bool dropped_by_rule(std::vector<DropRule>& rules, const wire::IbPacket& p,
                     std::uint64_t nth) noexcept {
  for (auto& r : rules) {
    if (r.times != 0 && r.dropped >= r.times) continue;
    if (!rule_matches(r, p, nth)) continue;
    ++r.dropped;
    return true;
  }
  return false;
}

}  // namespace

void Engine::transmit(Link& ln, wire::FrameSpec& spec) {
  spec.ip_id = ip_id++;
  const std::size_t size = wire::frame_size(spec);
  const std::uint32_t buf = take_buffer(size);
  const std::size_t n = wire::encode_frame(spec, buffers[buf]);
  ++stats.packets_sent;
  stats.payload_bytes_sent += spec.packet.payload.size();

  // Serialisation on the sender's port, one frame at a time.
  const Time start = std::max(now, ln.busy_until);
  const auto ser = static_cast<Time>(static_cast<double>((n + kWireOverhead) * 8) * 1e9 /
                                     ln.cfg.rate_bps);
  ln.busy_until = start + std::max<Time>(ser, 1);

  // The capture tap is the sender's port: a frame the link drops later is
  // still in the capture, as with the nftables drops of the rxe corpus.
  if (pcap) pcap->write(start, wire::Bytes(buffers[buf].data(), n));

  const std::uint64_t nth = ++ln.offered;
  if (dropped_by_rule(ln.cfg.drops, spec.packet, nth) || ln.rng.chance(ln.cfg.loss)) {
    ++stats.packets_dropped;
    release_buffer(buf);
    return;
  }
  Time arrival = ln.busy_until + ln.cfg.delay_ns;
  if (!ln.cfg.path_extra_ns.empty()) {
    const std::size_t paths = ln.cfg.path_extra_ns.size();
    // ECMP: one path per flow (the UDP source port); adaptive routing:
    // a path per packet.
    const std::size_t path = ln.cfg.adaptive_routing
                                 ? static_cast<std::size_t>(ln.rng.next() % paths)
                                 : static_cast<std::size_t>(spec.udp_src_port % paths);
    arrival += ln.cfg.path_extra_ns[path];
  }
  arrival += ln.rng.upto(ln.cfg.jitter_ns);
  if (ln.rng.chance(ln.cfg.reorder)) arrival += ln.cfg.reorder_delay_ns;
  const std::uint64_t meta = (std::uint64_t{ln.to} << 32) | n;
  if (ln.rng.chance(ln.cfg.duplicate)) {
    const std::uint32_t copy = take_buffer(n);
    std::memcpy(buffers[copy].data(), buffers[buf].data(), n);
    schedule(arrival + ln.rng.upto(ln.cfg.jitter_ns) + 1, EventKind::Arrival, copy, meta);
  }
  schedule(arrival, EventKind::Arrival, buf, meta);
}

void Engine::deliver(std::uint32_t buf, std::uint32_t dev, std::size_t length) {
  const wire::Bytes bytes(buffers[buf].data(), length);
  const wire::Frame f = wire::decode_frame(bytes, wire::LinkType::Ethernet, length);
  bool ok = f.is_roce() && !f.error && f.ib.has_value();
  if (ok && cfg.verify_icrc) {
    const auto c = wire::check_icrc(f, bytes);
    if (!c || !c->ok()) {
      ++stats.bad_icrc;
      ok = false;
    }
  }
  if (ok && dev < devices.size()) {
    ++stats.packets_delivered;
    Device& d = *devices[dev];
    auto it = d.qps_.find(f.ib->bth.dest_qp);
    if (it != d.qps_.end()) it->second->receive(f, bytes);
  }
  release_buffer(buf);
}

}  // namespace rdmalab::sim

// The event loop, the link model and the capture tap.
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "engine.hpp"
#include "rdmalab/sim/messages.hpp"
#include "rdmalab/wire/ib_link.hpp"
#include "rdmalab/wire/icrc.hpp"
#include "rdmalab/wire/opcode.hpp"
#include "rdmalab/wire/pause.hpp"

namespace rdmalab::sim {
namespace {

// Events are ordered by time, then by the order they were scheduled: two
// events at the same virtual time always run in the same order.
// A function object, not a function pointer, so that the heap operations
// inline it: they are the innermost loop of the simulator.
struct Later {
  /// Whether an event at (t1, s1) runs after one at (t2, s2).
  /// Computed without a branch: a heap's sift compares events whose order
  /// the processor cannot guess, and each wrong guess costs more than the
  /// comparison.
  static bool after(Time t1, std::uint64_t s1, Time t2, std::uint64_t s2) noexcept {
    return static_cast<bool>(static_cast<unsigned>(t1 > t2) |
                             (static_cast<unsigned>(t1 == t2) & static_cast<unsigned>(s1 > s2)));
  }
  bool operator()(const Event& x, const Event& y) const noexcept {
    return after(x.time, x.seq, y.time, y.seq);
  }
};
constexpr Later later{};

std::uint64_t link_key(std::uint32_t from, std::uint32_t to) noexcept {
  return (std::uint64_t{from} << 32) | to;
}

}  // namespace

// --- Fabric -----------------------------------------------------------------

Fabric::Fabric(FabricConfig config) : engine_(std::make_unique<Engine>(std::move(config))) {
  if (engine_->ib && engine_->cfg.dcqcn) throw std::invalid_argument(ib_refused("DCQCN"));
}
Fabric::~Fabric() {
  // A destructor must not throw: a capture that cannot be finished here (a
  // full disk) is reported, not turned into std::terminate. Programs that
  // care stop the capture themselves and get the exception.
  try {
    stop_capture();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", capture_close_failed(e.what()).c_str());
  }
}

Device& Fabric::add_host(const HostConfig& config) {
  if (engine_->ib && config.pfc_storm.enabled)
    throw std::invalid_argument(ib_refused("PFC (HostConfig::pfc_storm)"));
  if (1 + config.more_ports.size() > kMaxHostPorts)
    throw std::invalid_argument("a host has at most " + std::to_string(kMaxHostPorts) + " ports");
  auto node = static_cast<std::uint32_t>(engine_->host_ports.size());
  engine_->devices.push_back(std::make_unique<Device>(*this, config, node));
  Device& d = *engine_->devices.back();
  for (std::uint8_t p = 1; p <= d.port_count(); ++p) engine_->host_ports.push_back({&d, p});
  engine_->routes_ready = false;  // a switched fabric learns its addresses
  return d;
}

LinkConfig& Fabric::link(const Device& from, const Device& to) {
  return link(from, 1, to, 1);
}

LinkConfig& Fabric::link(const Device& from, std::uint8_t from_port, const Device& to,
                         std::uint8_t to_port) {
  if (!from.has_port(from_port) || !to.has_port(to_port))
    throw std::out_of_range("no such port on the host");
  return engine_->link(Engine::node_of(from, from_port), Engine::node_of(to, to_port)).cfg;
}

void Fabric::start_capture(const std::string& path, std::uint32_t snaplen) {
  stop_capture();
  // InfiniBand: ERF records of type 21, which Wireshark opens (it has no
  // reader for LINKTYPE_INFINIBAND, 247).
  engine_->pcap = std::make_unique<capture::PcapWriter>(
      path, engine_->ib ? wire::LinkType::Erf : wire::LinkType::Ethernet,
      snaplen == 0 ? 262144 : snaplen);
}

void Fabric::stop_capture() {
  engine_->flush_capture(kForever);
  if (engine_->pcap) engine_->pcap->flush();
  engine_->pcap.reset();
}

Time Fabric::now() const noexcept {
  return engine_->now;
}
bool Fabric::step() {
  return engine_->step();
}

bool Fabric::run(Time deadline) {
  while (!engine_->idle()) {
    if (engine_->next_time() > deadline) return false;
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
    if (engine_->idle() || engine_->next_time() > deadline) return pred();
    engine_->step();
  }
  return true;
}

const FabricStats& Fabric::stats() const noexcept {
  return engine_->stats;
}
const FabricConfig& Fabric::config() const noexcept {
  return engine_->cfg;
}

// --- Engine -----------------------------------------------------------------

namespace {

// An event's fields stored one by one where it ends in a heap (see below).
void place(Event& e, Time t, std::uint64_t s, EventKind kind, std::uint32_t a,
           std::uint64_t b) noexcept {
  e.time = t;
  e.seq = s;
  e.kind = kind;
  e.a = a;
  e.b = b;
}

}  // namespace

// std::push_heap, with the new event's fields stored once, at the place it
// ends in. push_heap copies the event into the vector and reads it back
// whole: the read waits until the five narrow stores that made it land,
// which on every packet costs more than the sift itself. Events leave the
// heap in (time, seq) order whatever its layout, seq being unique.
void Engine::push_event(std::vector<Event>& q, Time t, std::uint64_t s, EventKind kind,
                        std::uint32_t a, std::uint64_t b) {
  q.emplace_back();
  std::size_t i = q.size() - 1;
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    const Event& p = q[parent];
    if (!Later::after(p.time, p.seq, t, s)) break;
    q[i] = p;
    i = parent;
  }
  place(q[i], t, s, kind, a, b);
}

// The heap's first event replaced by one at (t, s), sifted down to its
// place, its fields stored once where it ends: one walk down the heap.
// Engine::step uses it both ways it takes the first event: a link's next
// arrival takes the place of the one just taken from its FIFO (where a pop
// and then push_event would take two walks and more moves), and otherwise
// the heap's last event takes it (a pop).
void Engine::replace_top(std::vector<Event>& q, Time t, std::uint64_t s, EventKind kind,
                         std::uint32_t a, std::uint64_t b) {
  const std::size_t n = q.size();
  std::size_t i = 0;
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    // The earlier child.
    if (child + 1 < n) child += static_cast<std::size_t>(later(q[child], q[child + 1]));
    if (!Later::after(t, s, q[child].time, q[child].seq)) break;
    q[i] = q[child];
    i = child;
  }
  place(q[i], t, s, kind, a, b);
}

void Engine::schedule(Time t, EventKind kind, std::uint32_t a, std::uint64_t b) {
  const bool timer = kind == EventKind::AckTimer || kind == EventKind::RnrTimer;
  push_event(timer ? timers : heap, t, seq++, kind, a, b);
}

Time Engine::next_time() const noexcept {
  if (heap.empty()) return timers.front().time;
  if (timers.empty()) return heap.front().time;
  return std::min(heap.front().time, timers.front().time);
}

// Most events are frame arrivals, and on a link without jitter, reordering or
// multiple paths they are scheduled in the order they fall due. Such an
// arrival joins its link's FIFO instead of the heap, and the heap holds one
// LinkHead event per non-empty FIFO with the (time, seq) of the FIFO's
// oldest entry: the heap stays a few events deep, and events still run in
// exactly (time, seq) order. An arrival due before the FIFO's newest one
// goes to the heap itself.
void Engine::schedule_arrival(Link& ln, Time t, std::uint32_t buffer, std::uint64_t meta) {
  // (Constructed in the FIFO, not copied there from a temporary: the copy
  // would read the temporary back before its stores land.)
  const std::uint64_t s = seq++;
  if (ln.arrivals.empty()) {
    ln.arrivals.emplace_back(t, s, EventKind::Arrival, buffer, meta);
    push_event(heap, t, s, EventKind::LinkHead, ln.index, buffer);
  } else if (ln.arrivals.back().time <= t) {
    ln.arrivals.emplace_back(t, s, EventKind::Arrival, buffer, meta);
  } else {
    push_event(heap, t, s, EventKind::Arrival, buffer, meta);
  }
}

bool Engine::step() {
  if (idle()) return false;
  // The earlier of the two queues' first events (seq breaks a tie in time,
  // and is unique).
  std::vector<Event>& q =
      timers.empty() || (!heap.empty() && later(timers.front(), heap.front())) ? heap : timers;
  Event e = q.front();
  bool replaced = false;
  if (e.kind == EventKind::LinkHead) {
    // The link's oldest arrival runs; its next one, if any, takes the
    // LinkHead's place in the heap.
    const std::uint32_t index = e.a;
    std::deque<Event>& fifo = link_list[index]->arrivals;
    e = fifo.front();
    fifo.pop_front();
    if (!fifo.empty()) {
      const Event& next = fifo.front();
      replace_top(q, next.time, next.seq, EventKind::LinkHead, index, next.a);
      replaced = true;
    }
  }
  if (!replaced) {
    // The heap's last event takes the first one's place and sinks to its
    // own (replace_top, whose choice between two children does not branch;
    // std::pop_heap's does).
    const Event last = q.back();
    q.pop_back();
    if (!q.empty()) replace_top(q, last.time, last.seq, last.kind, last.a, last.b);
  }
  // The frame of the heap's next event, when it is an arrival, has sat in a
  // queue since it was sent, and so has its place in its link's FIFO: both
  // are asked for now, while this event runs. Two steps, as each address is
  // read from memory itself: the next event's two children in the heap
  // (slots 1 and 2; one of them runs after it, unless this event schedules
  // an earlier one) have the lines holding their frame's address and their
  // link's FIFO asked for; the next one, whose lines were thus usually asked
  // for an event earlier, has its frame and FIFO entry asked for.
  // (Here, not in a function of its own: GCC takes a function whose only
  // effect is a prefetch for one without effects, and deletes its calls.)
  // An arrival's buffer (a LinkHead's is its link's oldest arrival's), or -1.
  const auto arrival_buffer = [](const Event& ev) noexcept -> std::int64_t {
    if (ev.kind == EventKind::Arrival) return ev.a;
    if (ev.kind == EventKind::LinkHead) return static_cast<std::int64_t>(ev.b);
    return -1;
  };
  for (std::size_t i = 1; i < 3 && i < heap.size(); ++i) {
    const Event& later_one = heap[i];
    const std::int64_t buffer = arrival_buffer(later_one);
    if (buffer < 0) continue;
    __builtin_prefetch(&buffers[static_cast<std::size_t>(buffer)]);
    if (later_one.kind == EventKind::LinkHead)
      __builtin_prefetch(&link_list[later_one.a]->arrivals);
  }
  if (!heap.empty()) {
    const Event& next = heap.front();
    if (const std::int64_t buffer = arrival_buffer(next); buffer >= 0) {
      const std::uint8_t* frame = buffers[static_cast<std::size_t>(buffer)];
      __builtin_prefetch(frame);
      __builtin_prefetch(frame + 64);
      if (next.kind == EventKind::LinkHead) {
        const auto* entry =
            reinterpret_cast<const std::uint8_t*>(&link_list[next.a]->arrivals.front());
        __builtin_prefetch(entry);
        __builtin_prefetch(entry + sizeof(Event));  // the entry after it, if any
      }
    }
  }
  if (!cap_pending.empty()) flush_capture(e.time);
  now = std::max(now, e.time);
  ++stats.events;
  if (e.kind == EventKind::Arrival) {
    deliver(e.a, static_cast<std::uint32_t>(e.b >> 32), static_cast<std::size_t>(e.b & 0xFFFFFFFF));
    return true;
  }
  if (e.kind == EventKind::SwitchTx) {
    switch_tx(e.a, e.b);
    return true;
  }
  if (e.kind == EventKind::PfcRefresh) {
    pfc_refresh(e.a, e.b);
    return true;
  }
  if (e.kind == EventKind::HostPfc) {
    host_pfc(e.a);
    return true;
  }
  if (e.kind == EventKind::CreditReturn) {
    credit_return(e.a, e.b);
    return true;
  }
  QpImpl* qp = e.a < qps.size() ? qps[e.a] : nullptr;
  if (qp == nullptr) return true;  // destroyed since
  switch (e.kind) {
    case EventKind::QpTx:
      if (e.b != qp->tx_gen) break;  // superseded by an earlier wake-up
      qp->tx_scheduled = false;
      qp->pump();
      break;
    case EventKind::AckTimer: qp->on_ack_timer(e.b); break;
    case EventKind::RnrTimer: qp->on_rnr_timer(e.b); break;
    case EventKind::AckFlush: qp->flush_ack(); break;
    case EventKind::ArTimer: qp->on_ar_timer(e.b); break;
    case EventKind::Arrival:
    case EventKind::LinkHead:
    case EventKind::SwitchTx:
    case EventKind::PfcRefresh:
    case EventKind::HostPfc:
    case EventKind::CreditReturn: break;
  }
  return true;
}

Link& Engine::link(std::uint32_t from, std::uint32_t to) {
  // On a switched fabric a host port's frames all leave through its link.
  if (from < host_uplink.size() && host_uplink[from] != nullptr) return *host_uplink[from];
  auto& slot = links[link_key(from, to)];
  if (!slot) {
    slot = std::make_unique<Link>();
    slot->cfg = cfg.default_link;
    // Each direction its own random stream, derived from the seed and the
    // endpoints, so adding a host does not change another link's losses.
    Rng mix(cfg.seed ^ (link_key(from, to) * 0x9E3779B97F4A7C15ull));
    slot->rng = Rng(mix.next());
    slot->to = to;
    slot->index = static_cast<std::uint32_t>(link_list.size());
    link_list.push_back(slot.get());
  }
  return *slot;
}

std::uint32_t Engine::take_buffer(std::size_t bytes) {
  const bool small = bytes <= kSmallBuffer;
  std::vector<std::uint32_t>& free = small ? free_small : free_buffers;
  if (free.empty()) {
    // Ethernet (with a VLAN tag) + IPv6 + UDP + BTH + the largest extension
    // headers + 4096 bytes of payload + ICRC fit in kFrameBuffer.
    const std::size_t size = small ? kSmallBuffer : kFrameBuffer;
    const std::size_t n = small ? 4096 / kSmallBuffer : 1;
    pages.emplace_back(new (kPage) std::uint8_t[small ? 4096 : kFrameBuffer]);
    for (std::size_t i = n; i-- > 0;) {
      free.push_back(static_cast<std::uint32_t>(buffers.size()));
      buffers.push_back(pages.back().get() + i * size);
      small_buffer.push_back(small);
    }
  }
  const std::uint32_t index = free.back();
  free.pop_back();
  return index;
}

std::uint32_t Engine::node_of(const Device& d, std::uint8_t port) noexcept {
  return d.node_ + port - 1U;
}

MemoryRegion* Engine::find_mr(const Device& d, std::uint32_t key) noexcept {
  MrSlot& s = mr_cache[((key >> 8) ^ (d.node_ * 0x9Du)) & (mr_cache.size() - 1)];
  if (s.device == &d && s.key == key) return s.mr;
  const auto it = d.mrs_.find(key);
  if (it == d.mrs_.end()) return nullptr;
  s = MrSlot{&d, key, it->second};
  return it->second;
}

void Engine::forget_mr(const MemoryRegion* mr) noexcept {
  for (MrSlot& s : mr_cache)
    if (s.mr == mr) s = MrSlot{};
}

std::uint32_t Engine::node_by_gid(const ibv_gid& gid) const noexcept {
  for (std::uint32_t n = 0; n < host_ports.size(); ++n) {
    const ibv_gid g = host_ports[n].device->gid(0, host_ports[n].port);
    if (std::memcmp(g.raw, gid.raw, sizeof g.raw) == 0) return n;
  }
  return ~0U;
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

// IPv6 forbids a zero UDP checksum (RFC 8200, 8.1), which encode_frame()
// leaves as rxe does over IPv4; fill it in. The ICRC masks this field, so it
// stays valid.
void fill_udp6_checksum(std::uint8_t* frame, std::size_t n, std::size_t ip_off) noexcept {
  const std::size_t udp = ip_off + 40;
  if (n < udp + 8) return;
  std::uint32_t sum = 0;
  for (std::size_t i = ip_off + 8; i < ip_off + 40; i += 2)  // source and destination
    sum += wire::load_be16(frame + i);
  const std::size_t len = n - udp;
  sum += static_cast<std::uint32_t>(len >> 16) + static_cast<std::uint32_t>(len & 0xFFFF);
  sum += 17;  // next header: UDP
  frame[udp + 6] = 0;
  frame[udp + 7] = 0;
  std::size_t i = udp;
  for (; i + 1 < n; i += 2) sum += wire::load_be16(frame + i);
  if (i < n) sum += static_cast<std::uint32_t>(frame[i]) << 8;
  while ((sum >> 16) != 0) sum = (sum & 0xFFFF) + (sum >> 16);
  std::uint16_t c = static_cast<std::uint16_t>(~sum & 0xFFFF);
  if (c == 0) c = 0xFFFF;
  frame[udp + 6] = static_cast<std::uint8_t>(c >> 8);
  frame[udp + 7] = static_cast<std::uint8_t>(c);
}

}  // namespace

// Sets the ECN field of the frame's IP header to CE (11b). IPv4 covers the
// TOS byte with its header checksum, which is recomputed; the ICRC masks
// both, so it stays valid. Used by LinkConfig::ce_marks and by the switches.
void mark_ce(std::uint8_t* frame, std::size_t ip_off, bool v4) noexcept {
  if (v4) {
    frame[ip_off + 1] |= 0x03;
    frame[ip_off + 10] = 0;
    frame[ip_off + 11] = 0;
    const std::size_t ihl = static_cast<std::size_t>(frame[ip_off] & 0x0F) * 4;
    const std::uint16_t c = wire::ipv4_checksum(wire::Bytes(frame + ip_off, ihl));
    frame[ip_off + 10] = static_cast<std::uint8_t>(c >> 8);
    frame[ip_off + 11] = static_cast<std::uint8_t>(c);
  } else {
    frame[ip_off + 1] |= 0x30;  // traffic class bits 1:0 are byte 1's bits 5:4
  }
}

void Engine::transmit(Link& ln, wire::FrameSpec& spec) {
  // A link's CE-marking rules are set at any time (Fabric::link): refused
  // here, at the first packet they would have seen.
  if (ib && !ln.cfg.ce_marks.empty())
    throw std::invalid_argument(ib_refused("ECN (LinkConfig::ce_marks)"));
  spec.ip_id = ip_id++;
  // Fast path: with no receive-side check, nobody reads the ICRC unless the
  // capture keeps it, so it is not computed (the field stays zero). A capture
  // at the receiving port may change its snap length before the frame
  // arrives: it always gets the ICRC.
  spec.compute_icrc =
      cfg.verify_icrc || (pcap != nullptr && (cfg.capture_point != CapturePoint::SenderPort ||
                                              wire::frame_size(spec) <= pcap->snaplen()));
  const std::uint32_t buf = take_buffer(wire::frame_size(spec));
  const std::size_t n = wire::encode_frame(spec, {buffers[buf], buffer_size(buf)});
  if (n == 0) {  // cannot happen: the QP engine only builds valid packets
    release_buffer(buf);
    ++stats.packets_dropped;
    return;
  }
  // The UDP checksum lies outside the ICRC; it is only needed on the wire
  // for IPv6, and the UDP length now covers the ICRC too (n is the frame).
  if (!ib && !spec.dst_ip.v4) fill_udp6_checksum(buffers[buf], n, spec.vlan_tci ? 18 : 14);
  ++stats.packets_sent;
  stats.payload_bytes_sent += spec.packet.payload.size();

  // Serialisation on the sender's port, one frame at a time; on a switched
  // fabric not while the switch has paused this frame's priority (the QP
  // waits for the pause to end, see QpImpl::pump; this keeps a response
  // queued in the meantime from overtaking the pause).
  Time start = std::max(now, ln.busy_until);
  if (!host_uplink.empty())
    start = std::max(start, ln.pause[nic_dscp_to_prio[spec.traffic_class >> 2] & 7].until);
  if (n != ln.ser_bytes || ln.cfg.rate_bps != ln.ser_rate) {
    // A division in doubles: worth keeping for the next frame of this size.
    ln.ser_bytes = n;
    ln.ser_rate = ln.cfg.rate_bps;
    ln.ser_ns =
        static_cast<Time>(static_cast<double>((n + wire_overhead()) * 8) * 1e9 / ln.cfg.rate_bps);
  }
  ln.busy_until = start + std::max<Time>(ln.ser_ns, 1);

  // At the sender's port a frame the link drops later is still in the
  // capture, as with the nftables drops of the rxe corpus.
  if (pcap && cfg.capture_point == CapturePoint::SenderPort)
    capture_frame(start, wire::Bytes(buffers[buf], n));

  // InfiniBand into a switch: the packet takes its blocks' credits (pump()
  // waited for them).
  const std::uint32_t blocks = ln.credited ? ib_blocks(n) : 0;
  if (ln.credited) ln.credits[spec.vl & 7] -= blocks;
  const std::uint64_t nth = ++ln.offered;
  if (dropped_by_rule(ln.cfg.drops, spec.packet, nth) || ln.rng.chance(ln.cfg.loss)) {
    ++stats.packets_dropped;
    lost_on_link(ln, spec.vl & 7, n);
    release_buffer(buf);
    return;
  }
  // (The random draw only where bit errors are asked for, so that every
  // other simulation keeps its random sequence.)
  if (dropped_by_rule(ln.cfg.corruptions, spec.packet, nth) ||
      (ln.cfg.corrupt > 0 && ln.rng.chance(ln.cfg.corrupt))) {
    // The last byte the ICRC covers (on InfiniBand the VCRC follows it).
    buffers[buf][n - wire::kIcrcSize - (ib ? wire::ib::kVcrcSize : 0) - 1] ^= 0x01;
    ++stats.packets_corrupted;
  }
  // --- DCQCN test tool: CE marks on ECN-capable RoCEv2 packets ---
  if (!ln.cfg.ce_marks.empty() && spec.version == wire::RoceVersion::V2 &&
      (spec.traffic_class & 0x03) != 0 && dropped_by_rule(ln.cfg.ce_marks, spec.packet, nth)) {
    mark_ce(buffers[buf], spec.vlan_tci ? 18 : 14, spec.dst_ip.v4);
    ++stats.packets_ce_marked;
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
    // (A copy takes credits too, though none were waited for.)
    if (ln.credited) ln.credits[spec.vl & 7] -= blocks;
    const std::uint32_t copy = take_buffer(n);
    std::memcpy(buffers[copy], buffers[buf], n);
    schedule_arrival(ln, arrival + ln.rng.upto(ln.cfg.jitter_ns) + 1, copy, meta);
  }
  schedule_arrival(ln, arrival, buf, meta);
}

void Engine::capture_frame(Time time, wire::Bytes frame) {
  // A NIC builds packets a little ahead of the wire (and several QPs share
  // the clock), so frames are not built in timestamp order; they are held
  // until virtual time reaches them. Every frame built later is stamped at
  // or after `now`, so what is flushed is final.
  if (time <= now && (cap_pending.empty() || cap_pending.front().time > now)) {
    // flush_capture(now) would write this frame alone: no need to hold it.
    pcap->write(time, frame);
    return;
  }
  std::uint32_t block;
  if (!cap_free.empty()) {
    block = cap_free.back();
    cap_free.pop_back();
  } else {
    block = static_cast<std::uint32_t>(cap_blocks.size());
    cap_blocks.emplace_back();
  }
  std::vector<std::uint8_t>& b = cap_blocks[block];
  if (b.size() < frame.size()) b.resize(frame.size());
  const std::size_t kept = std::min<std::size_t>(frame.size(), pcap->snaplen());
  std::memcpy(b.data(), frame.data(), kept);
  const PendingFrame pf{time, frame.size(), block};
  if (cap_pending.empty() || cap_pending.back().time <= time) {
    cap_pending.push_back(pf);  // the usual case: built in timestamp order
  } else {
    auto pos = std::upper_bound(cap_pending.begin(), cap_pending.end(), time,
                                [](Time t, const PendingFrame& f) { return t < f.time; });
    cap_pending.insert(pos, pf);
  }
  flush_capture(now);
}

void Engine::flush_capture(Time until) {
  while (!cap_pending.empty() && cap_pending.front().time <= until) {
    const PendingFrame& f = cap_pending.front();
    if (pcap) pcap->write(f.time, wire::Bytes(cap_blocks[f.block].data(), f.length));
    cap_free.push_back(f.block);
    cap_pending.pop_front();
  }
}

void Engine::launch(Link& ln, std::uint32_t buffer, std::size_t length) {
  const Time start = std::max(now, ln.busy_until);
  if (length != ln.ser_bytes || ln.cfg.rate_bps != ln.ser_rate) {
    ln.ser_bytes = length;
    ln.ser_rate = ln.cfg.rate_bps;
    ln.ser_ns = static_cast<Time>(static_cast<double>((length + wire_overhead()) * 8) * 1e9 /
                                  ln.cfg.rate_bps);
  }
  ln.busy_until = start + std::max<Time>(ln.ser_ns, 1);
  ++ln.offered;
  if (ln.rng.chance(ln.cfg.loss)) {
    ++stats.packets_dropped;
    lost_on_link(ln, static_cast<std::uint8_t>((buffers[buffer][0] >> 4) & 7), length);
    release_buffer(buffer);
    return;
  }
  const Time arrival = ln.busy_until + ln.cfg.delay_ns + ln.rng.upto(ln.cfg.jitter_ns);
  schedule_arrival(ln, arrival, buffer, (std::uint64_t{ln.to} << 32) | length);
}

void Engine::deliver(std::uint32_t buf, std::uint32_t dev, std::size_t length) {
  if ((dev & kSwitchNode) != 0) {
    switch_receive(dev & ~kSwitchNode, buf, length);
    return;
  }
  const wire::Bytes bytes(buffers[buf], length);
  // At the receiving port frames are seen as they arrive, reordered or not.
  if (pcap && cfg.capture_point == CapturePoint::ReceiverPort) capture_frame(now, bytes);
  if (ib) {
    deliver_ib(buf, dev, bytes);
    return;
  }
  // A pause frame from the switch stops the host's port (its NIC takes it;
  // the hosts' software never sees one).
  if (length >= 14 && wire::load_be16(bytes.data() + 12) == wire::kEthMacControl) {
    if (dev < host_uplink.size() && host_uplink[dev] != nullptr)
      apply_pause(*host_uplink[dev], bytes, host_stats[dev].rx_pause,
                  host_stats[dev].rx_pause_duration);
    release_buffer(buf);
    return;
  }
  // Decoded into a Frame kept for the purpose: a Frame is a few hundred
  // bytes, and deliver() never runs inside another deliver().
  wire::Frame& f = rx_frame;
  wire::decode_frame(bytes, wire::LinkType::Ethernet, length, f);
  bool ok = f.is_roce() && !f.error && f.ib.has_value();
  if (ok && cfg.verify_icrc && !wire::icrc_ok(f, bytes)) {
    ++stats.bad_icrc;
    ok = false;
  }
  if (ok && dev < host_ports.size()) to_qp(dev, f, bytes);
  release_buffer(buf);
}

// A native IB packet at a host's port: the link layer checks the VCRC, the
// port takes only its own DLID, the transport checks the ICRC, and the
// packet goes to the QP its BTH names.
void Engine::deliver_ib(std::uint32_t buf, std::uint32_t dev, wire::Bytes bytes) {
  wire::Frame& f = rx_frame;
  wire::decode_frame(bytes, wire::LinkType::Infiniband, bytes.size(), f);
  bool ok =
      f.is_roce() && !f.error && f.ib.has_value() && f.lrh.has_value() && dev < host_ports.size();
  if (ok && cfg.verify_icrc) {
    const auto v = wire::check_vcrc(f, bytes);
    if (!v || !v->ok()) {
      ++stats.bad_vcrc;
      ok = false;
    }
  }
  if (ok && f.lrh->dlid != host_ports[dev].device->lid(host_ports[dev].port)) {
    ++stats.wrong_dlid;
    ok = false;
  }
  if (ok && cfg.verify_icrc && !wire::icrc_ok(f, bytes)) {
    ++stats.bad_icrc;
    ok = false;
  }
  if (ok) to_qp(dev, f, bytes);
  release_buffer(buf);
}

}  // namespace rdmalab::sim

// DCQCN in the simulated NIC: ECT on the packets that carry a QP's data
// (requests, and READ responses on the responder's side), pacing them at
// the QP's reaction point's rate, CNPs from the notification point (see
// dcqcn.hpp and FabricConfig::dcqcn). Nothing here runs when
// FabricConfig::dcqcn is empty.
//
// READ responses are a model: the data of a READ flows from the responder,
// so its QP is the one whose rate a congested path must cut, and the
// requester's NIC is the one that sees the marks. NVIDIA documents DCQCN
// per QP without naming the packet kinds it paces; rxe has no DCQCN.
#include "engine.hpp"
#include "rdmalab/wire/opcode.hpp"

namespace rdmalab::sim {
namespace {

// The IP header's ECN field (RFC 3168, section 5): ECT(0) is 10b, CE 11b.
constexpr std::uint8_t kEcnMask = 0x03;
constexpr std::uint8_t kEct0 = 0x02;
constexpr std::uint8_t kCe = 0x03;

std::uint8_t ecn_of(const wire::Frame& f) noexcept {
  if (f.ipv4) return f.ipv4->tos & kEcnMask;
  if (f.ipv6) return f.ipv6->traffic_class & kEcnMask;
  return 0;
}

}  // namespace

DcqcnRp* QpImpl::dcqcn_rp() {
  if (rp) return rp.get();
  if (!engine->cfg.dcqcn || type == IBV_QPT_UD || link == nullptr || !device->config().dcqcn_rp)
    return nullptr;
  rp =
      std::make_unique<DcqcnRp>(*engine->cfg.dcqcn, static_cast<std::uint64_t>(link->cfg.rate_bps));
  return rp.get();
}

bool QpImpl::dcqcn_receive(const wire::Frame& f) {
  const wire::IbPacket& p = *f.ib;
  if (p.bth.opcode == wire::opcode::kCnp) {
    if (DcqcnRp* r = dcqcn_rp(); r != nullptr) {
      r->on_cnp(engine->now);
      ++stats.rp_cnp_handled;
    } else {
      ++stats.rp_cnp_ignored;  // no reaction point: HostConfig::dcqcn_rp off
    }
    return true;
  }
  if (type == IBV_QPT_UD || link == nullptr || ecn_of(f) != kCe) return false;
  const wire::OpcodeInfo* info = wire::find_opcode(p.bth.opcode);
  // Marks count on the packets that carry data: requests and READ
  // responses (the CNP then goes to the responder's QP, which sent them).
  if (info == nullptr || !info->carries_data()) return false;
  ++stats.np_ecn_marked_roce_packets;
  // A NIC with its notification point off counts the mark and stays silent.
  if (!device->config().dcqcn_np) return false;
  if (!np) np.emplace(engine->cfg.dcqcn->np_min_time_between_cnps);
  if (!np->on_marked(engine->now)) return false;
  // The CNP (IBTA annex A17): BTH opcode 0x81 to the sending QP with BECN
  // set, 16 reserved bytes, the ICRC; DSCP np_cnp_dscp, not ECN-capable.
  wire::IbPacket& c = spec.packet;
  c.clear();
  c.bth.opcode = wire::opcode::kCnp;
  c.bth.dest_qp = attr.dest_qp_num;
  c.bth.becn = true;
  const std::uint8_t tc = spec.traffic_class;
  spec.traffic_class = static_cast<std::uint8_t>(engine->cfg.dcqcn->np_cnp_dscp << 2);
  engine->transmit(*link, spec);
  spec.traffic_class = tc;
  ++stats.np_cnp_sent;
  return false;
}

void QpImpl::dcqcn_transmit(Link& ln) {
  const Time start = std::max(engine->now, ln.busy_until);
  const std::uint8_t tc = spec.traffic_class;
  spec.traffic_class = static_cast<std::uint8_t>((tc & ~kEcnMask) | kEct0);
  engine->transmit(ln, spec);
  spec.traffic_class = tc;
  const std::size_t frame_bytes = wire::frame_size(spec);
  DcqcnRp* r = dcqcn_rp();
  if (r == nullptr) return;
  r->on_bytes_sent(frame_bytes, engine->now);
  rp_last_start = start;
  // The Ethernet preamble, start delimiter and gap counted as the link
  // counts them: a QP paced at the line rate keeps the link's spacing.
  // (DCQCN runs on Ethernet only.)
  rp_last_bits = (frame_bytes + kEthernetWireOverhead) * 8;
}

Time QpImpl::dcqcn_next_tx() {
  rp->advance_to(engine->now);
  // At the line rate the link alone spaces packets.
  if (!rp->active()) return rp_last_start;
  // The last packet's bits at the current rate Rc, rounded down to the ns as
  // the link's serialisation time is. Taking the rate now, not when that
  // packet left, re-times a waiting packet on every change of rate, as the
  // reference code does (rdma-hw.cc, ChangeRate): a QP cut to the minimum
  // rate does not sit out a gap of milliseconds after its rate has risen.
  return rp_last_start + static_cast<Time>(rp_last_bits * 1'000'000'000 / rp->rate_bps());
}

DcqcnRp* QueuePair::dcqcn() {
  return impl_->dcqcn_rp();
}

}  // namespace rdmalab::sim

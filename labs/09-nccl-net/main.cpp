// Lab 09: NCCL's InfiniBand/RoCE data path in miniature.
//
// Read this file next to docs/en/16-lab09-nccl-net.md. It follows the design
// of NCCL's net_ib transport (src/transport/net_ib.cc up to NCCL 2.18): the
// receiver does not wait for data to be pushed at it; it tells the sender
// where to write. Per message:
//   ncclIbIrecv  (receiver) posts one receive WQE without buffer on every QP
//                of the connection, then RDMA WRITEs one FIFO slot
//                {addr, size, rkey, nreqs, tag, idx} into the sender's memory;
//   ncclIbIsend  (sender) polls its own FIFO memory until slot idx shows the
//                expected value, then splits the data over the QPs (128-byte
//                aligned chunks) and RDMA WRITEs each chunk to addr/rkey: one
//                WRITE with immediate (imm = size) per QP, or, with adaptive
//                routing above NCCL_IB_AR_THRESHOLD, a plain WRITE followed by
//                a 0-byte WRITE with immediate;
//   ncclIbTest   (both) polls the CQ until every completion the request
//                expects has arrived: one per QP.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <thread>

#include "messages.hpp"
#include "rdmalab/dissect/record.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/lab/spray_fabric.hpp"
#include "rdmalab/lab/wire_view.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/wire/opcode.hpp"
#include "rdmalab/wire/timers.hpp"

using namespace rdmalab;
using i18n::tr;
using lab09::M;

namespace {

// The FIFO: a ring of slots in the sender's memory, written by the receiver.
constexpr std::uint32_t kFifoDepth = 8;
// NCCL cuts a message into chunks that are multiples of 128 bytes (for its
// LL and LL128 protocols), one chunk per QP.
constexpr std::uint32_t kAlign = 128;
// The tag both sides agree on (NCCL: which operation of the connection).
constexpr std::uint32_t kTag = 0x2a;

// One FIFO slot as NCCL up to 2.18 lays it out (struct ncclIbSendFifo): 32 bytes,
// so that one RDMA WRITE carries it whole.
struct alignas(32) FifoSlot {
  std::uint64_t addr = 0;   // where the sender must write (receiver's VA)
  std::int32_t size = 0;    // how many bytes the receiver accepts
  std::uint32_t rkey = 0;   // the receiver buffer's rkey
  std::uint32_t nreqs = 0;  // receives posted together (1 here)
  std::uint32_t tag = 0;
  std::uint64_t idx = 0;  // 1, 2, 3, ...: tells a new slot from a stale one
};
static_assert(sizeof(FifoSlot) == 32);

struct Options {
  lab::CommonOptions common;
  int messages = 4;
  std::vector<std::uint32_t> sizes{4096, 32768};
  int qps = 2;
  bool ar = false;
  std::uint32_t ar_threshold = 8192;
  int ib_timeout = 18;
  int ib_retry_cnt = 7;
  int mtu = 4096;
  int paths = 4;
  std::int64_t spread_ns = 2000;
};

// One side of the connection: the endpoint of QP 0 (PD, MR, CQ) and the
// further QPs of the connection, which share its PD and CQ.
struct Side {
  lab::Endpoint* base = nullptr;
  std::vector<lab::Endpoint*> qps;        // qps[0] == base
  std::map<std::uint32_t, int> index_of;  // QP number -> index in the connection
  std::map<std::uint64_t, int> events;    // request (wr_id) -> completions still expected
};

struct Message {
  std::uint32_t size = 0;
  std::size_t offset = 0;  // in both buffers
  std::uint32_t slot = 0;
  std::uint64_t idx = 0;
  bool split = false;
  std::vector<std::uint32_t> chunks;    // bytes per QP
  std::vector<std::uint32_t> imm;       // immediate seen per QP (receiver)
  std::vector<std::uint32_t> byte_len;  // receiver's wc.byte_len per QP
  bool fifo_ok = false, sent = false, recv_done = false, send_done = false;
  bool complete_at_wc = true;
};

std::string seconds_text(double s) {
  return s >= 1 ? fmt::format("{:.2f} s", s) : fmt::format("{:.1f} ms", s * 1e3);
}

// NCCL's split: DIVUP(DIVUP(size, nqps), 128) * 128 bytes per QP, the last
// QPs getting what is left (possibly nothing).
std::vector<std::uint32_t> chunks_of(std::uint32_t size, std::uint32_t nqps) {
  const std::uint32_t per = (size + nqps - 1) / nqps;
  const std::uint32_t chunk = (per + kAlign - 1) / kAlign * kAlign;
  std::vector<std::uint32_t> out;
  std::uint32_t offset = 0;
  for (std::uint32_t q = 0; q < nqps; ++q) {
    const std::uint32_t len = offset < size ? std::min(size - offset, chunk) : 0;
    out.push_back(len);
    offset += chunk;
  }
  return out;
}

// Reads the FIFO slot's idx as the CPU sees it while the NIC writes it.
std::uint64_t load_idx(const FifoSlot& s) {
  const std::uint64_t v = *static_cast<const volatile std::uint64_t*>(&s.idx);
  std::atomic_thread_fence(std::memory_order_acquire);
  return v;
}

// The sender's proxy waits for slot `slot` to show `idx`. On the simulator
// waiting is what moves virtual time; on a real device the NIC writes the
// memory by itself.
bool wait_for_slot(const lab::Environment& env, const FifoSlot& s, std::uint64_t idx) {
  if (sim::Fabric* f = env.fabric())
    return f->run_until([&] { return load_idx(s) == idx; }) || load_idx(s) == idx;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (load_idx(s) != idx) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// QP 1.. of a connection: created in the PD of QP 0, on the same CQ.
void add_qp(lab::Narrator& n, lab::Endpoint& base, lab::Endpoint& e, std::uint32_t max_wr) {
  e.role = base.role;
  e.same_port_as(base);
  verbs::QpInitAttrs init;
  init.send_cq = base.cq.get();
  init.recv_cq = base.cq.get();
  init.max_send_wr = init.max_recv_wr = max_wr;
  e.qp = base.pd->create_qp(init);
  n.call(base.role, "ibv_create_qp(pd, IBV_QPT_RC, send_cq = recv_cq = cq)",
         fmt::format("qp_num {}", lab::hex(e.qp->qpn(), 6)));
}

// ncclIbTest: polls the side's CQ until request `req` has all its
// completions. Completions of other requests that arrive meanwhile are
// counted for them. Returns false on an error completion or a hang.
template <typename OnWc>
bool test(lab::Narrator& n, Side& s, std::uint64_t req, OnWc&& on_wc) {
  while (s.events[req] > 0) {
    const auto wcs = s.base->cq->wait(1, std::chrono::seconds(10));
    if (wcs.empty()) return false;
    for (const ibv_wc& wc : wcs) {
      lab::show_wc(n, s.base->role, wc);
      if (wc.status != IBV_WC_SUCCESS) return false;
      auto it = s.events.find(wc.wr_id);
      if (it == s.events.end() || it->second <= 0) return false;
      --it->second;
      on_wc(wc);
    }
  }
  return true;
}

// One RoCE packet of the capture, as far as this lab needs it.
struct WirePacket {
  std::uint64_t frame = 0;
  std::string src;
  std::uint32_t dest_qp = 0;
  std::uint8_t opcode = 0;
  std::uint32_t psn = 0;
  std::size_t payload = 0;
  std::optional<std::uint32_t> imm;
  std::optional<std::uint64_t> va;
};

std::vector<WirePacket> read_packets(const lab::WireFacts& facts) {
  std::vector<WirePacket> out;
  for (const dissect::PacketRecord* r : facts.roce()) {
    const dissect::PacketRecord& rec = *r;
    const wire::IbPacket& ib = *rec.decoded.ib;
    WirePacket p;
    p.frame = rec.frame;
    if (const auto a = rec.decoded.src_address()) p.src = a->to_string();
    p.dest_qp = ib.bth.dest_qp;
    p.opcode = ib.bth.opcode;
    p.psn = ib.bth.psn;
    p.payload = ib.payload_length;
    p.imm = ib.immdt;
    if (ib.reth) p.va = ib.reth->va;
    out.push_back(p);
  }
  return out;
}

// The packets one WRITE of `len` bytes becomes at path MTU `mtu`: opcode and
// payload of each (with or without adaptive routing: messages stay whole).
void expect_write(std::vector<std::pair<std::uint8_t, std::size_t>>& out, std::uint32_t len,
                  bool imm, std::uint32_t mtu) {
  namespace op = wire::opcode;
  const std::uint32_t npkts = len == 0 ? 1 : (len + mtu - 1) / mtu;
  for (std::uint32_t k = 0; k < npkts; ++k) {
    const bool last = k + 1 == npkts;
    const std::size_t pay = len == 0 ? 0 : std::min(mtu, len - k * mtu);
    std::uint8_t code;
    if (npkts == 1)
      code = last && imm ? op::kRcWriteOnlyImm : op::kRcWriteOnly;
    else if (k == 0)
      code = op::kRcWriteFirst;
    else if (!last)
      code = op::kRcWriteMiddle;
    else
      code = imm ? op::kRcWriteLastImm : op::kRcWriteLast;
    out.emplace_back(code, pay);
  }
}

// The receiver's wc.byte_len for one QP's part of a message: the length of
// the WRITE with immediate; 0 when split (NCCL takes the size from the
// immediate, never from byte_len).
std::uint32_t expected_byte_len(std::uint32_t len, bool split) {
  return split ? 0 : len;
}

std::string opcode_name(std::uint8_t code) {
  const auto* info = wire::find_opcode(code);
  return info != nullptr ? std::string(info->name) : fmt::format("opcode 0x{:02x}", code);
}

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  const auto nmsg = static_cast<std::uint32_t>(o.messages);
  const auto nqps = static_cast<std::size_t>(o.qps);

  // The messages: sizes cycle through -s; each has its own place in both
  // buffers so that every one can be checked at the end.
  std::vector<Message> msgs(nmsg);
  std::size_t total = 0;
  for (std::uint32_t i = 0; i < nmsg; ++i) {
    Message& m = msgs[i];
    m.size = o.sizes[i % o.sizes.size()];
    m.offset = total;
    m.slot = i % kFifoDepth;
    m.idx = i + 1;
    m.split = o.ar && m.size > o.ar_threshold;
    m.chunks = chunks_of(m.size, static_cast<std::uint32_t>(nqps));
    m.imm.assign(nqps, 0);
    m.byte_len.assign(nqps, 0);
    total += std::size_t{(m.size + 63) / 64} * 64;
  }
  total = std::max<std::size_t>(total, 64);

  n.step(tr(M("step.backend")));
  verbs::SimBackendOptions sim_opts;
  // Captured where the packets arrive: with adaptive routing the reordering shows.
  sim_opts.fabric.capture_point = sim::CapturePoint::ReceiverPort;
  // With adaptive routing, a leaf-spine whose leaves spray every packet over
  // the spines (spray_fabric.hpp); without it, the wire of the other labs.
  if (o.ar) lab::use_spray_fabric(sim_opts, static_cast<std::size_t>(o.paths));
  lab::Environment env = lab::open_environment(n, o.common, sim_opts);

  n.step(tr(M("step.params")));
  n.field("NCCL_IB_QPS_PER_CONNECTION", std::to_string(nqps), tr(M("why.qps")));
  n.field("NCCL_IB_ADAPTIVE_ROUTING", o.ar ? "1" : "0", tr(M("why.ar")));
  n.field("NCCL_IB_AR_THRESHOLD", std::to_string(o.ar_threshold), tr(M("why.threshold")));
  n.field("NCCL_IB_TIMEOUT", std::to_string(o.ib_timeout), tr(M("why.timeout")));
  n.field("NCCL_IB_RETRY_CNT", std::to_string(o.ib_retry_cnt), tr(M("why.retry")));
  const auto ack_timeout = wire::ack_timeout_seconds(static_cast<unsigned>(o.ib_timeout));
  if (ack_timeout) {
    const int tries = o.ib_retry_cnt + 1;
    n.say(tr(M("timer"), o.ib_timeout, seconds_text(*ack_timeout), o.ib_retry_cnt, tries,
             seconds_text(*ack_timeout * tries)));
  } else {
    n.say(tr(M("timer.infinite")));
  }
  n.result()["timers"] = {{"timeout", o.ib_timeout},
                          {"retry_cnt", o.ib_retry_cnt},
                          {"ack_timeout_s", ack_timeout.value_or(0.0)}};

  n.step(tr(M("step.resources")));
  lab::Endpoint tx, rx;
  tx.role = tr(M("sender"));
  rx.role = tr(M("receiver"));
  const auto max_wr = static_cast<std::uint32_t>(2 * kFifoDepth + 4);
  lab::EndpointSpec spec;
  spec.buffer = total;
  spec.max_wr = max_wr;
  spec.cqe = static_cast<int>(kFifoDepth * nqps + 8);
  lab::EndpointSpec responder = spec;
  responder.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  lab::open_pair(n, env, tx, rx, spec, responder, o.common);

  // The sender's FIFO, registered for the receiver to write into.
  std::vector<FifoSlot> fifo(kFifoDepth);
  auto fifo_mr = tx.pd->reg_mr(fifo.data(), fifo.size() * sizeof(FifoSlot),
                               IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  n.call(tx.role,
         fmt::format("ibv_reg_mr(pd, fifo, {} * sizeof(slot) = {}, "
                     "IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_REMOTE_WRITE)",
                     kFifoDepth, kFifoDepth * sizeof(FifoSlot)),
         fmt::format("rkey {}", lab::hex(fifo_mr->rkey(), 8)));
  n.say(tr(M("why.fifo")));

  // The further QPs of the connection (declared after tx and rx: destroyed
  // before the CQ and PD they use).
  std::vector<lab::Endpoint> more(2 * (nqps - 1));
  Side s, r;
  s.base = &tx;
  r.base = &rx;
  s.qps.push_back(&tx);
  r.qps.push_back(&rx);
  for (std::size_t q = 1; q < nqps; ++q) {
    lab::Endpoint& et = more[2 * (q - 1)];
    lab::Endpoint& er = more[2 * (q - 1) + 1];
    add_qp(n, tx, et, max_wr);
    add_qp(n, rx, er, max_wr);
    s.qps.push_back(&et);
    r.qps.push_back(&er);
  }

  // The adaptive-routing model: a fabric of several paths, packets sprayed
  // over them, and QPs that accept out-of-order WRITE packets.
  auto* simb = dynamic_cast<verbs::SimBackend*>(env.backend.get());
  const bool ar_model = o.ar && simb != nullptr;
  if (o.ar) {
    if (lab::spread_spray_paths(env, o.spread_ns)) {
      n.say(tr(M("ar.fabric"), o.paths, o.spread_ns));
    } else {
      n.say(tr(M("ar.verbs")));
    }
    if (ar_model)
      for (Side* side : {&s, &r})
        for (lab::Endpoint* e : side->qps) {
          sim::QueuePair* q = simb->sim_qp(*e->qp);
          sim::QueuePair::Options qo = q->options();
          qo.adaptive_routing = true;
          q->set_options(qo);
        }
  }

  n.step(tr(M("step.connect")));
  n.say(tr(M("why.oob"), lab::hex(fifo_mr->rkey(), 8)));
  lab::ConnectSpec c;
  c.mtu = o.mtu;
  c.timeout = static_cast<std::uint8_t>(o.ib_timeout);
  c.retry_cnt = static_cast<std::uint8_t>(o.ib_retry_cnt);
  for (std::size_t q = 0; q < nqps; ++q) {
    // Each QP of the connection starts 0x010000 further: their PSNs never meet.
    s.qps[q]->first_psn = lab::kRequesterFirstPsn + 0x010000 * static_cast<std::uint32_t>(q);
    r.qps[q]->first_psn = lab::kResponderFirstPsn + 0x010000 * static_cast<std::uint32_t>(q);
    if (q == 0) {
      lab::connect_pair(n, *s.qps[q], *r.qps[q], c, o.common);
    } else {
      // Same exchange and transitions as QP 0, not printed again.
      lab::CommonOptions silent = o.common;
      silent.quiet = true;
      silent.step = false;
      lab::Narrator quiet(silent, "lab09");
      lab::connect_pair(quiet, *s.qps[q], *r.qps[q], c, o.common);
      n.say(
          tr(M("qp.more"), q, lab::hex(s.qps[q]->qp->qpn(), 6), lab::hex(r.qps[q]->qp->qpn(), 6)));
    }
    s.index_of[s.qps[q]->qp->qpn()] = static_cast<int>(q);
    r.index_of[r.qps[q]->qp->qpn()] = static_cast<int>(q);
  }
  // What the NIC really holds: read back on the simulator.
  if (simb != nullptr) {
    bool applied = true;
    for (Side* side : {&s, &r})
      for (lab::Endpoint* e : side->qps) {
        ibv_qp_attr attr{};
        ibv_qp_init_attr init{};
        applied = applied && simb->sim_qp(*e->qp)->query(attr, 0, init) == 0 &&
                  attr.timeout == o.ib_timeout && attr.retry_cnt == o.ib_retry_cnt;
      }
    n.check("timers", tr(M("check.timers"), o.ib_timeout, o.ib_retry_cnt), applied);
  }

  // Fill the sender's buffer: a different pattern for every message.
  for (std::uint32_t i = 0; i < nmsg; ++i)
    for (std::uint32_t k = 0; k < msgs[i].size; ++k)
      tx.buf()[msgs[i].offset + k] = static_cast<std::uint8_t>(i * 37 + k * 13 + k / 251 + 5);

  std::vector<FifoSlot> staging(kFifoDepth);  // what the receiver writes from
  bool hung = false;
  for (std::uint32_t first = 0; first < nmsg && !hung; first += kFifoDepth) {
    const std::uint32_t last = std::min(nmsg, first + kFifoDepth);

    // ncclIbIrecv: one receive WQE per QP, then the FIFO slot.
    n.step(tr(M("step.irecv"), first, last - 1));
    for (std::uint32_t i = first; i < last; ++i) {
      Message& m = msgs[i];
      const std::uint64_t req = i + 1;
      for (std::size_t q = 0; q < nqps; ++q) {
        ibv_recv_wr rwr{};
        rwr.wr_id = req;
        ibv_recv_wr* rbad = nullptr;
        verbs::check_rc(r.qps[q]->qp->post_recv(&rwr, &rbad), "ibv_post_recv");
        if (i == 0)
          n.call(fmt::format("ibv_post_recv(QP {}, wr{{wr_id={}, num_sge=0}})",
                             lab::hex(r.qps[q]->qp->qpn(), 6), req),
                 "0");
      }
      FifoSlot& e = staging[m.slot];
      e = FifoSlot{};
      e.addr = rx.mr->va() + m.offset;
      e.size = static_cast<std::int32_t>(m.size);
      e.rkey = rx.mr->rkey();
      e.nreqs = 1;
      e.tag = kTag;
      e.idx = m.idx;
      // Inline: the NIC copies the 32 bytes at post time, no lkey needed.
      ibv_sge sge{reinterpret_cast<std::uintptr_t>(&e), sizeof(FifoSlot), 0};
      ibv_send_wr wr{};
      wr.wr_id = req;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      wr.opcode = IBV_WR_RDMA_WRITE;
      wr.send_flags = IBV_SEND_INLINE;
      // Now and then one signalled WR, or the send queue never drains
      // (NCCL signals the write of slot 0).
      if (m.slot == 0) wr.send_flags |= IBV_SEND_SIGNALED;
      wr.wr.rdma.remote_addr = fifo_mr->va() + m.slot * sizeof(FifoSlot);
      wr.wr.rdma.rkey = fifo_mr->rkey();
      ibv_send_wr* bad = nullptr;
      verbs::check_rc(rx.qp->post_send(&wr, &bad), "ibv_post_send");
      r.events[req] = static_cast<int>(nqps) + (m.slot == 0 ? 1 : 0);
      if (i == 0) {
        n.call(fmt::format("ibv_post_send(QP {}, IBV_WR_RDMA_WRITE, IBV_SEND_INLINE{})",
                           lab::hex(rx.qp->qpn(), 6), m.slot == 0 ? "|IBV_SEND_SIGNALED" : ""),
               "0");
        n.field("wr.rdma.remote_addr", fmt::format("fifo + {} x 32", m.slot), tr(M("why.slot")));
        n.field("slot.addr", lab::hex(e.addr), tr(M("why.addr")));
        n.field("slot.size", std::to_string(e.size));
        n.field("slot.rkey", lab::hex(e.rkey, 8));
        n.field("slot.nreqs", std::to_string(e.nreqs));
        n.field("slot.tag", lab::hex(e.tag));
        n.field("slot.idx", std::to_string(e.idx), tr(M("why.idx")));
        n.say(tr(M("why.recv"), nqps));
      } else {
        n.say(tr(M("irecv.short"), i, nqps, m.slot, m.idx, m.size));
      }
    }

    // ncclIbIsend: wait for the slot, then write the data over the QPs.
    n.step(tr(M("step.isend"), first, last - 1));
    for (std::uint32_t i = first; i < last && !hung; ++i) {
      Message& m = msgs[i];
      const std::uint64_t req = i + 1;
      FifoSlot& slot = fifo[m.slot];
      if (!wait_for_slot(env, slot, m.idx)) {
        n.say(tr(M("isend.never"), m.slot, m.idx));
        hung = true;
        break;
      }
      // The whole slot is here once idx is (one 32-byte WRITE).
      const FifoSlot got = slot;
      m.fifo_ok = got.idx == m.idx && got.tag == kTag && got.nreqs == 1 &&
                  got.addr == rx.mr->va() + m.offset && got.rkey == rx.mr->rkey() &&
                  got.size >= static_cast<std::int32_t>(m.size);
      n.say(tr(M("isend.slot"), i, m.slot, got.idx, got.size, lab::hex(got.rkey, 8)));
      if (!m.fifo_ok) {
        n.say(tr(M("isend.bad")));
        continue;
      }
      std::uint64_t remote = got.addr;
      std::size_t local = m.offset;
      for (std::size_t q = 0; q < nqps; ++q) {
        const std::uint32_t len = m.chunks[q];
        ibv_sge data = tx.sge(local, len);
        ibv_send_wr write{}, notify{};
        write.wr_id = req;
        write.sg_list = len > 0 ? &data : nullptr;
        write.num_sge = len > 0 ? 1 : 0;
        write.opcode = IBV_WR_RDMA_WRITE;
        write.wr.rdma.remote_addr = remote;
        write.wr.rdma.rkey = got.rkey;
        notify = write;
        notify.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        notify.send_flags = IBV_SEND_SIGNALED;
        notify.imm_data = htonl(m.size);
        ibv_send_wr* head = &notify;
        if (m.split) {
          // Data first, then a 0-byte WRITE with immediate.
          notify.sg_list = nullptr;
          notify.num_sge = 0;
          write.next = &notify;
          head = &write;
        }
        ibv_send_wr* bad = nullptr;
        verbs::check_rc(s.qps[q]->qp->post_send(head, &bad), "ibv_post_send");
        n.say(tr(m.split ? M("isend.split") : M("isend.imm"), q, lab::hex(s.qps[q]->qp->qpn(), 6),
                 local - m.offset, local - m.offset + len, len, m.size));
        remote += len;
        local += len;
      }
      s.events[req] = static_cast<int>(nqps);
      m.sent = true;
      // The slot is consumed: clear it, as NCCL does, so a stale idx is never
      // mistaken for a new one.
      std::memset(static_cast<void*>(&slot), 0, sizeof(FifoSlot));
    }
    if (hung) break;

    // ncclIbTest on both sides.
    n.step(tr(M("step.test"), first, last - 1));
    for (std::uint32_t i = first; i < last && !hung; ++i) {
      Message& m = msgs[i];
      if (!m.sent) continue;
      const std::uint64_t req = i + 1;
      m.send_done = test(n, s, req, [](const ibv_wc&) {});
      m.recv_done = test(n, r, req, [&](const ibv_wc& wc) {
        if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM) return;
        Message& mm = msgs[wc.wr_id - 1];
        const auto it = r.index_of.find(wc.qp_num);
        if (it == r.index_of.end()) return;
        const auto q = static_cast<std::size_t>(it->second);
        mm.imm[q] = (wc.wc_flags & IBV_WC_WITH_IMM) != 0 ? ntohl(wc.imm_data) : 0;
        mm.byte_len[q] = wc.byte_len;
        // The completion says "your data is here": it must be, now.
        std::size_t at = mm.offset;
        for (std::size_t k = 0; k < q; ++k) at += mm.chunks[k];
        mm.complete_at_wc =
            mm.complete_at_wc && std::memcmp(rx.buf() + at, tx.buf() + at, mm.chunks[q]) == 0;
      });
      if (!m.send_done || !m.recv_done) hung = true;
      n.say(tr(M("test.done"), i, m.size, nqps));
    }
  }

  n.step(tr(M("step.verify")));
  const auto mtu = static_cast<std::uint32_t>(o.mtu);
  bool fifo_ok = true, bytes_ok = true, imm_ok = true, at_wc = true, done_ok = true;
  nlohmann::json jm = nlohmann::json::array();
  for (std::uint32_t i = 0; i < nmsg; ++i) {
    const Message& m = msgs[i];
    fifo_ok = fifo_ok && m.fifo_ok;
    const bool bytes = std::memcmp(rx.buf() + m.offset, tx.buf() + m.offset, m.size) == 0;
    bytes_ok = bytes_ok && bytes;
    done_ok = done_ok && m.send_done && m.recv_done;
    for (std::size_t q = 0; q < nqps; ++q) {
      const std::size_t k = q;
      imm_ok =
          imm_ok && m.imm[k] == m.size && m.byte_len[k] == expected_byte_len(m.chunks[k], m.split);
    }
    at_wc = at_wc && m.complete_at_wc && m.recv_done;
    jm.push_back({{"index", i},
                  {"size", m.size},
                  {"slot", m.slot},
                  {"idx", m.idx},
                  {"split", m.split},
                  {"chunks", m.chunks},
                  {"imm", m.imm},
                  {"byte_len", m.byte_len},
                  {"bytes_ok", bytes}});
  }
  n.result()["messages"] = jm;
  n.result()["fifo"] = {{"depth", kFifoDepth}, {"slot_bytes", sizeof(FifoSlot)}};
  n.check("done", tr(M("check.done"), nmsg), done_ok);
  n.check("fifo_order", tr(M("check.fifo_order")), fifo_ok);
  n.check("bytes", tr(M("check.bytes"), nmsg), bytes_ok);
  n.check("imm", tr(M("check.imm"), nqps), imm_ok);
  n.check("complete_at_wc", tr(M("check.complete_at_wc")), at_wc);

  // Staging addresses in the receiver's FIFO writes are not checked: only
  // what arrived in the sender's FIFO memory and on the wire.
  std::vector<std::uint32_t> tx_qpn, rx_qpn;
  for (std::size_t q = 0; q < nqps; ++q) {
    tx_qpn.push_back(s.qps[q]->qp->qpn());
    rx_qpn.push_back(r.qps[q]->qp->qpn());
  }
  // The hosts' addresses as the capture shows them (IP on RoCE, LID on IB).
  const std::string sender_ip = lab::wire_address(*s.qps[0]),
                    receiver_ip = lab::wire_address(*r.qps[0]);
  const std::uint64_t fifo_va = fifo_mr->va();
  if (const auto facts = lab::finish_wire(n, env, o.common.capture)) {
    const auto packets = read_packets(*facts);
    // The FIFO writes: receiver -> sender QP 0, one 32-byte WRITE Only per
    // message, into the slots in order.
    std::vector<const WirePacket*> fifo_writes;
    for (const auto& p : packets)
      if (p.src == receiver_ip && p.dest_qp == tx_qpn[0] &&
          wire::find_opcode(p.opcode) != nullptr &&
          wire::find_opcode(p.opcode)->operation == wire::Operation::Write)
        fifo_writes.push_back(&p);
    bool fifo_wire = fifo_writes.size() == nmsg;
    for (std::size_t i = 0; fifo_wire && i < fifo_writes.size(); ++i)
      fifo_wire = fifo_writes[i]->opcode == wire::opcode::kRcWriteOnly &&
                  fifo_writes[i]->payload == sizeof(FifoSlot) && fifo_writes[i]->va &&
                  *fifo_writes[i]->va == fifo_va + msgs[i].slot * sizeof(FifoSlot);
    n.check("fifo_wire", tr(M("check.fifo_wire"), nmsg), fifo_wire);

    // The data: per QP, in PSN order, exactly the packets NCCL's pattern
    // gives; the immediates carry the size.
    bool opcodes_ok = true;
    std::uint64_t overtaken = 0;
    nlohmann::json jq = nlohmann::json::array();
    for (std::size_t q = 0; q < nqps; ++q) {
      std::vector<const WirePacket*> got;
      for (const auto& p : packets)
        if (p.src == sender_ip && p.dest_qp == rx_qpn[q] &&
            wire::find_opcode(p.opcode) != nullptr &&
            wire::find_opcode(p.opcode)->operation == wire::Operation::Write)
          got.push_back(&p);
      const std::uint32_t base = s.qps[q]->first_psn;
      std::stable_sort(got.begin(), got.end(), [&](const WirePacket* a, const WirePacket* b) {
        return ((a->psn - base) & 0xffffff) < ((b->psn - base) & 0xffffff);
      });
      std::vector<std::pair<std::uint8_t, std::size_t>> want;
      std::vector<std::optional<std::uint32_t>> want_imm;
      for (const Message& m : msgs) {
        if (!m.sent) continue;
        const std::uint32_t len = m.chunks[q];
        const std::size_t before = want.size();
        if (m.split) {
          expect_write(want, len, false, mtu);
          expect_write(want, 0, true, mtu);
        } else {
          expect_write(want, len, true, mtu);
        }
        want_imm.resize(want.size());
        want_imm.back() = m.size;
        // Data packets of this message that arrived after its immediate.
        const std::size_t end = want.size();
        if (got.size() >= end) {
          const std::uint64_t imm_frame = got[end - 1]->frame;
          for (std::size_t k = before; k + 1 < end; ++k)
            if (got[k]->frame > imm_frame) ++overtaken;
        }
      }
      bool ok = got.size() == want.size();
      nlohmann::json names = nlohmann::json::array();
      for (std::size_t k = 0; k < got.size(); ++k) {
        names.push_back(opcode_name(got[k]->opcode));
        if (!ok) continue;
        ok = got[k]->opcode == want[k].first && got[k]->payload == want[k].second &&
             got[k]->imm == want_imm[k];
      }
      opcodes_ok = opcodes_ok && ok;
      jq.push_back({{"qp", q}, {"dest_qp", rx_qpn[q]}, {"opcodes", names}});
    }
    n.result()["wire_qps"] = jq;
    n.check("opcodes", tr(M("check.opcodes"), nqps), opcodes_ok);
    if (o.ar) {
      const auto count = [&](const char* e) {
        const auto it = facts->events.find(e);
        return it == facts->events.end() ? std::uint64_t{0} : it->second;
      };
      const std::uint64_t ooo = count("out_of_order"), rexmit = count("retransmission"),
                          naks = count("nak_psn_sequence");
      n.result()["ar"] = {{"out_of_order", ooo},
                          {"retransmitted", rexmit},
                          {"naks", naks},
                          {"overtaken", overtaken}};
      n.say(tr(M("ar.result"), ooo, overtaken, rexmit, naks));
      n.check("ar_clean", tr(M("check.ar_clean")), rexmit == 0 && naks == 0);
    }
  }
  lab::suggest(n,
               {tr(M("try.1")), tr(M("try.2")), tr(M("try.3")), tr(M("try.4"), o.common.capture)});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("-n,--iters", o.messages, tr(M("opt.n")))
        ->check(lab::Range(1, 32))
        ->capture_default_str();
    app.add_option("-s,--size", o.sizes, tr(M("opt.size")))
        ->delimiter(',')
        ->check(lab::Range(0u, 1u << 20))
        ->capture_default_str();
    app.add_option("--qps-per-conn", o.qps, tr(M("opt.qps")))
        ->check(lab::Range(1, 8))
        ->capture_default_str();
    app.add_flag("--ar", o.ar, tr(M("opt.ar")));
    app.add_option("--ar-threshold", o.ar_threshold, tr(M("opt.threshold")))
        ->check(lab::Range(0u, 1u << 30))
        ->capture_default_str();
    app.add_option("--ib-timeout", o.ib_timeout, tr(M("opt.timeout")))
        ->check(lab::Range(0, 31))
        ->capture_default_str();
    app.add_option("--ib-retry-cnt", o.ib_retry_cnt, tr(M("opt.retry")))
        ->check(lab::Range(0, 7))
        ->capture_default_str();
    app.add_option("--paths", o.paths, tr(M("opt.paths")))
        ->check(lab::Range(1, 16))
        ->capture_default_str();
    app.add_option("--spread", o.spread_ns, tr(M("opt.spread")))
        ->check(lab::Range(std::int64_t{0}, std::int64_t{1'000'000}))
        ->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
  };
  return lab::run(argc, argv, "lab09", "lab09-nccl-net", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}

// Lab 12: one-sided semantics on top of verbs, the way MSCCL++ builds them.
//
// Read this file next to docs/en/19-lab12-one-sided.md. MSCCL++'s port
// channel gives a GPU kernel four operations, which its proxy thread turns
// into verbs on one RC QP:
//   put     an RDMA WRITE from the local buffer to the peer's buffer;
//   signal  the peer's inbound semaphore (a 64-bit epoch counter) goes up by
//           one: an RDMA FETCH_AND_ADD of 1 (or an RDMA WRITE of the new value),
//           posted after the put on the same QP;
//   wait    the peer polls its own semaphore until it reaches the next epoch;
//   flush   the sender polls its CQ until every posted operation completed.
// Two rules follow: do not reuse the source buffer before flush (the NIC
// reads it while it builds the packets), and do not read the destination
// before wait (the data is still on its way). --break shows on the wire what
// happens when either rule is broken.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "messages.hpp"
#include "rdmalab/dissect/record.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/lab/wire_view.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/wire/opcode.hpp"

using namespace rdmalab;
using i18n::tr;
using lab12::M;

namespace {

// The receiver's registered memory: its inbound semaphore, then the data.
// The sender's: its outbound token and the slot where FETCH_AND_ADD returns
// the old value, then the data.
constexpr std::size_t kSemOffset = 0;
constexpr std::size_t kTokenOffset = 0;
constexpr std::size_t kFetchOffset = 8;
constexpr std::size_t kDataOffset = 64;

struct Options {
  lab::CommonOptions common;
  std::uint32_t size = 8192;
  int rounds = 2;
  std::string signal = "fadd";
  std::string brk = "none";
  int mtu = 1024;
};

// The bytes of round r (the sender's "kernel output" for that round).
std::uint8_t pattern(std::uint32_t round, std::size_t k) {
  return static_cast<std::uint8_t>(std::size_t{round} * 71 + k * 7 + k / 253 + 1);
}

std::uint64_t load_u64(const std::uint8_t* p) {
  const std::uint64_t v = *reinterpret_cast<const volatile std::uint64_t*>(p);
  std::atomic_thread_fence(std::memory_order_acquire);
  return v;
}

// Lets the peer's NIC make progress until `pred` holds: on the simulator by
// running virtual time, on a device by spinning (10 s at most).
template <typename Pred>
bool progress_until(const lab::Environment& env, Pred&& pred) {
  if (sim::Fabric* f = env.fabric()) return f->run_until(pred) || pred();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

struct Round {
  std::uint32_t index = 0;
  bool flushed = false;
  std::uint64_t fetched = 0;   // FETCH_AND_ADD's old value
  std::uint64_t sem_seen = 0;  // the semaphore when wait returned
  bool waited = false;
  std::vector<std::uint8_t> read;  // what the receiver read after wait
  std::size_t read_wrong = 0;      // bytes differing from the put's data
  std::size_t read_modified = 0;   // of those, bytes equal to the overwritten data
  // --break early-read: the read before wait.
  std::optional<std::vector<std::uint8_t>> early;
  std::uint64_t early_sem = 0;
  std::int64_t early_time_ns = -1;  // simulator only
  std::size_t early_stale = 0;
};

struct WirePacket {
  std::uint64_t frame = 0;
  std::int64_t time_ns = 0;
  std::string src;
  std::uint8_t opcode = 0;
  std::uint32_t psn = 0;
  std::vector<std::uint8_t> payload;
  std::optional<std::uint64_t> va;
  std::optional<std::uint64_t> orig;  // AtomicAckETH
};

std::vector<WirePacket> read_packets(const lab::WireFacts& facts) {
  std::vector<WirePacket> out;
  for (const dissect::PacketRecord* r : facts.roce()) {
    const dissect::PacketRecord& rec = *r;
    const wire::IbPacket& ib = *rec.decoded.ib;
    WirePacket p;
    p.frame = rec.frame;
    p.time_ns = rec.time_ns;
    if (const auto a = rec.decoded.src_address()) p.src = a->to_string();
    p.opcode = ib.bth.opcode;
    p.psn = ib.bth.psn;
    p.payload.assign(ib.payload.begin(), ib.payload.end());
    if (ib.reth) p.va = ib.reth->va;
    if (ib.atomic_eth) p.va = ib.atomic_eth->va;
    if (ib.atomic_ack_eth) p.orig = ib.atomic_ack_eth->orig;
    out.push_back(std::move(p));
  }
  return out;
}

bool is_write(std::uint8_t op) {
  const auto* info = wire::find_opcode(op);
  return info != nullptr && info->operation == wire::Operation::Write;
}

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  const bool fadd = o.signal == "fadd";
  const bool brk_reuse = o.brk == "reuse";
  const bool brk_early = o.brk == "early-read";
  const auto rounds = static_cast<std::uint32_t>(o.rounds);

  n.step(tr(M("step.backend")));
  verbs::SimBackendOptions sim_opts;
  // Captured where the packets arrive, to compare with when the receiver read.
  sim_opts.fabric.capture_point = sim::CapturePoint::ReceiverPort;
  lab::Environment env = lab::open_environment(n, o.common, sim_opts);
  sim::Fabric* fabric = env.fabric();

  n.step(tr(M("step.resources")));
  lab::Endpoint tx, rx;
  tx.role = tr(M("sender"));
  rx.role = tr(M("receiver"));
  lab::EndpointSpec spec;
  spec.buffer = kDataOffset + o.size;
  spec.cqe = 8;
  spec.max_wr = 8;
  lab::EndpointSpec responder = spec;
  responder.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
  lab::open_pair(n, env, tx, rx, spec, responder, o.common);
  n.say(tr(M("why.layout"), kDataOffset));

  n.step(tr(M("step.connect")));
  tx.first_psn = lab::kRequesterFirstPsn;
  rx.first_psn = lab::kResponderFirstPsn;
  lab::ConnectSpec c;
  c.mtu = o.mtu;
  lab::connect_pair(n, tx, rx, c, o.common, true);
  n.say(tr(M("why.exchange")));

  const std::uint64_t sem_va = rx.mr->va() + kSemOffset;
  const std::uint64_t dst_va = rx.mr->va() + kDataOffset;
  std::uint8_t* src = tx.buf() + kDataOffset;
  std::uint8_t* dst = rx.buf() + kDataOffset;
  std::uint64_t outbound = 0;  // the sender's copy of the epoch it signalled
  std::uint64_t expected = 0;  // the receiver's next epoch to wait for
  std::size_t outstanding = 0;
  bool send_ok = true;
  std::vector<Round> done;
  std::vector<std::uint8_t> want(o.size), next(o.size);

  if (brk_reuse) n.warn(tr(M("break.reuse")));
  if (brk_early) n.warn(tr(M("break.early")));

  // flush: the proxy polls the CQ until every operation it posted completed.
  const auto flush = [&](Round& rd) {
    const auto wcs = lab::poll_and_show(n, tx, outstanding);
    bool ok = wcs.size() == outstanding;
    for (const auto& wc : wcs) ok = ok && wc.status == IBV_WC_SUCCESS;
    outstanding = 0;
    rd.flushed = ok;
    send_ok = send_ok && ok;
    if (fadd && ok) {
      std::memcpy(&rd.fetched, tx.buf() + kFetchOffset, sizeof rd.fetched);
      n.say(tr(M("flush.fetched"), rd.fetched));
    }
    n.say(tr(M("flush.done")));
  };

  for (std::uint32_t r = 0; r < rounds; ++r) {
    Round rd;
    rd.index = r;
    n.step(tr(M("step.round"), r));
    for (std::size_t k = 0; k < o.size; ++k) want[k] = pattern(r, k);
    for (std::size_t k = 0; k < o.size; ++k) next[k] = pattern(r + 1, k);
    std::memcpy(src, want.data(), o.size);

    // put: one RDMA WRITE, signalled so that flush can count it.
    ibv_sge data = tx.sge(kDataOffset, o.size);
    ibv_send_wr put{};
    put.wr_id = 2 * r + 1;
    put.sg_list = &data;
    put.num_sge = 1;
    put.opcode = IBV_WR_RDMA_WRITE;
    put.send_flags = IBV_SEND_SIGNALED;
    put.wr.rdma.remote_addr = dst_va;
    put.wr.rdma.rkey = rx.mr->rkey();
    ibv_send_wr* bad = nullptr;
    verbs::check_rc(tx.qp->post_send(&put, &bad), "ibv_post_send");
    ++outstanding;
    n.call(fmt::format("put(dst + 0, src + 0, {}) = ibv_post_send(IBV_WR_RDMA_WRITE, length={}, "
                       "IBV_SEND_SIGNALED)",
                       o.size, o.size),
           "0");

    if (brk_early) {
      // The receiver does not wait: it reads as soon as the first packet of
      // the put has landed (on a device: right away).
      const std::size_t first = std::min<std::size_t>(o.size, static_cast<std::size_t>(o.mtu));
      if (fabric != nullptr && o.size > static_cast<std::uint32_t>(o.mtu))
        (void)progress_until(env, [&] { return std::memcmp(dst, want.data(), first) == 0; });
      rd.early.emplace(dst, dst + o.size);
      rd.early_sem = load_u64(rx.buf() + kSemOffset);
      if (fabric != nullptr) rd.early_time_ns = fabric->now();
      for (std::size_t k = 0; k < o.size; ++k) rd.early_stale += (*rd.early)[k] != want[k];
      n.say(tr(M("early.read"), rd.early_sem, expected + 1, rd.early_stale, o.size));
    }

    // signal: the peer's inbound semaphore goes to the next epoch.
    ibv_sge sig_sge{};
    ibv_send_wr sig{};
    sig.wr_id = 2 * r + 2;
    sig.send_flags = IBV_SEND_SIGNALED;
    sig.num_sge = 1;
    sig.sg_list = &sig_sge;
    const std::uint64_t old = outbound++;
    if (fadd) {
      sig_sge = tx.sge(kFetchOffset, 8);
      sig.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
      sig.wr.atomic.remote_addr = sem_va;
      sig.wr.atomic.rkey = rx.mr->rkey();
      sig.wr.atomic.compare_add = outbound - old;
    } else {
      std::memcpy(tx.buf() + kTokenOffset, &outbound, sizeof outbound);
      sig_sge = tx.sge(kTokenOffset, 8);
      sig.opcode = IBV_WR_RDMA_WRITE;
      sig.wr.rdma.remote_addr = sem_va;
      sig.wr.rdma.rkey = rx.mr->rkey();
    }
    verbs::check_rc(tx.qp->post_send(&sig, &bad), "ibv_post_send");
    ++outstanding;
    n.call(fadd ? "signal() = ibv_post_send(IBV_WR_ATOMIC_FETCH_AND_ADD, +1, IBV_SEND_SIGNALED)"
                : fmt::format("signal() = ibv_post_send(IBV_WR_RDMA_WRITE, 8 bytes = {}, "
                              "IBV_SEND_SIGNALED)",
                              outbound),
           "0");
    n.say(tr(M("why.signal")));

    if (brk_reuse) {
      // The bug: the sender's next result goes into the buffer the put is
      // still reading from.
      std::memcpy(src, next.data(), o.size);
      n.say(tr(M("reuse.overwrite"), r + 1));
    } else {
      n.step(tr(M("step.flush"), r));
      flush(rd);
    }

    // wait: the receiver polls its own semaphore.
    n.step(tr(M("step.wait"), r, expected + 1));
    ++expected;
    rd.waited = progress_until(env, [&] { return load_u64(rx.buf() + kSemOffset) >= expected; });
    rd.sem_seen = load_u64(rx.buf() + kSemOffset);
    n.say(tr(M("wait.done"), rd.sem_seen, expected));
    rd.read.assign(dst, dst + o.size);
    for (std::size_t k = 0; k < o.size; ++k)
      if (rd.read[k] != want[k]) {
        ++rd.read_wrong;
        rd.read_modified += rd.read[k] == next[k];
      }
    n.say(tr(M("read.result"), o.size - rd.read_wrong, o.size, rd.read_modified));

    if (brk_reuse) {
      n.step(tr(M("step.flush"), r));
      flush(rd);
    }
    done.push_back(std::move(rd));
  }

  n.step(tr(M("step.verify")));
  const bool real = fabric == nullptr;
  nlohmann::json jr = nlohmann::json::array();
  bool flushed = send_ok, waited = true, reads_ok = true, fetch_ok = true;
  for (const Round& rd : done) {
    flushed = flushed && rd.flushed;
    waited = waited && rd.waited;
    reads_ok = reads_ok && rd.read_wrong == 0;
    fetch_ok = fetch_ok && (!fadd || rd.fetched == rd.index);
    nlohmann::json j{{"round", rd.index},
                     {"flushed", rd.flushed},
                     {"sem_seen", rd.sem_seen},
                     {"read_wrong", rd.read_wrong},
                     {"read_modified", rd.read_modified}};
    if (fadd) j["fetched"] = rd.fetched;
    if (rd.early) {
      j["early_stale"] = rd.early_stale;
      j["early_sem"] = rd.early_sem;
      j["early_time_ns"] = rd.early_time_ns;
    }
    jr.push_back(j);
  }
  n.result()["rounds"] = jr;
  n.result()["break"] = o.brk;
  n.result()["signal"] = o.signal;
  const std::uint64_t sem_final = load_u64(rx.buf() + kSemOffset);
  n.check("flush", tr(M("check.flush"), 2 * rounds), flushed);
  n.check("semaphore", tr(M("check.semaphore"), rounds),
          waited && sem_final == rounds && outbound == rounds);
  if (fadd) n.check("fetch", tr(M("check.fetch")), fetch_ok);

  if (brk_reuse) {
    if (real) {
      // A race on a device: report what happened, claim nothing.
      std::size_t wrong = 0, modified = 0;
      for (const Round& rd : done) {
        wrong += rd.read_wrong;
        modified += rd.read_modified;
      }
      n.say(tr(M("race.reuse"), wrong, modified));
    }
  } else {
    // Wait before read: the data is complete, on a device as well.
    n.check("bytes", tr(M("check.bytes"), rounds), reads_ok);
  }
  if (brk_early) {
    if (real) {
      std::size_t stale = 0;
      for (const Round& rd : done) stale += rd.early_stale;
      n.say(tr(M("race.early"), stale));
    } else {
      bool stale = true;
      for (const Round& rd : done)
        stale = stale && rd.early_stale > 0 && rd.early_sem < rd.index + 1;
      n.check("early_stale", tr(M("check.early_stale")), stale);
    }
  }

  if (const auto facts = lab::finish_wire(n, env, o.common.capture)) {
    const auto packets = read_packets(*facts);
    // The hosts' addresses as the capture shows them (IP on RoCE, LID on IB).
    const std::string sender_ip = lab::wire_address(tx), receiver_ip = lab::wire_address(rx);
    // Requests from the sender, in PSN order: per round the put's packets,
    // then the signal's.
    std::vector<const WirePacket*> reqs;
    for (const auto& p : packets)
      if (p.src == sender_ip && wire::find_opcode(p.opcode) != nullptr &&
          wire::find_opcode(p.opcode)->operation != wire::Operation::Acknowledge)
        reqs.push_back(&p);
    std::stable_sort(reqs.begin(), reqs.end(), [&](const WirePacket* a, const WirePacket* b) {
      return ((a->psn - tx.first_psn) & 0xffffff) < ((b->psn - tx.first_psn) & 0xffffff);
    });
    const std::uint32_t per_put =
        (o.size + static_cast<std::uint32_t>(o.mtu) - 1) / static_cast<std::uint32_t>(o.mtu);
    bool layout_ok = reqs.size() == std::size_t{rounds} * (per_put + 1);
    bool order_ok = layout_ok, acks_ok = layout_ok, payload_ok = layout_ok;
    std::size_t modified_packets = 0, after_read = 0;
    bool split_ok = true;  // per put: original packets, then overwritten ones
    nlohmann::json jw = nlohmann::json::array();
    for (std::uint32_t r = 0; layout_ok && r < rounds; ++r) {
      const WirePacket* const* put = &reqs[std::size_t{r} * (per_put + 1)];
      const WirePacket* sig = put[per_put];
      // The signal follows the put's last packet: next PSN, later arrival.
      order_ok = order_ok && sig->psn == ((put[per_put - 1]->psn + 1) & 0xffffff) &&
                 sig->frame > put[per_put - 1]->frame && sig->va == sem_va;
      for (std::uint32_t k = 0; k < per_put; ++k) order_ok = order_ok && is_write(put[k]->opcode);
      if (fadd) {
        order_ok = order_ok && sig->opcode == wire::opcode::kRcFetchAdd;
        bool ack = false;
        for (const auto& p : packets)
          if (p.src == receiver_ip && p.opcode == wire::opcode::kRcAtomicAcknowledge &&
              p.psn == sig->psn)
            ack = p.orig && *p.orig == r && p.frame > sig->frame;
        acks_ok = acks_ok && ack;
      } else {
        std::uint64_t token = 0;
        if (sig->payload.size() == 8) std::memcpy(&token, sig->payload.data(), 8);
        order_ok = order_ok && sig->opcode == wire::opcode::kRcWriteOnly && token == r + 1;
      }
      // What each packet of the put carried: the round's data, or the
      // bytes written over it before the NIC read them.
      nlohmann::json kinds = nlohmann::json::array();
      std::size_t at = 0;
      std::vector<std::uint8_t> carried;
      bool overwritten_seen = false;
      for (std::uint32_t k = 0; k < per_put; ++k) {
        const auto& pl = put[k]->payload;
        bool orig = true, mod = true;
        for (std::size_t b = 0; b < pl.size(); ++b) {
          orig = orig && at + b < o.size && pl[b] == pattern(r, at + b);
          mod = mod && at + b < o.size && pl[b] == pattern(r + 1, at + b);
        }
        kinds.push_back(orig ? "original" : mod ? "overwritten" : "mixed");
        modified_packets += !orig;
        split_ok = split_ok && (orig || mod) && !(orig && overwritten_seen);
        overwritten_seen = overwritten_seen || !orig;
        if (done[r].early_time_ns >= 0 && put[k]->time_ns > done[r].early_time_ns) ++after_read;
        carried.insert(carried.end(), pl.begin(), pl.end());
        at += pl.size();
      }
      if (brk_reuse) {
        std::uint32_t first_new = per_put;
        for (std::uint32_t k = 0; k < per_put; ++k)
          if (kinds[k] != "original") {
            first_new = k;
            break;
          }
        if (first_new == per_put)
          n.say(tr(M("wire.reuse.none"), r, lab::hex(put[0]->psn, 6),
                   lab::hex(put[per_put - 1]->psn, 6)));
        else if (first_new == 0)
          n.say(tr(M("wire.reuse.all"), r, lab::hex(put[0]->psn, 6),
                   lab::hex(put[per_put - 1]->psn, 6)));
        else
          n.say(tr(M("wire.reuse.round"), r, lab::hex(put[0]->psn, 6),
                   lab::hex(put[first_new - 1]->psn, 6), lab::hex(put[first_new]->psn, 6),
                   lab::hex(put[per_put - 1]->psn, 6)));
      }
      // The receiver read exactly what the wire carried.
      payload_ok = payload_ok && carried == done[r].read;
      jw.push_back(
          {{"round", r},
           {"put_psns", fmt::format("{:#08x}..{:#08x}", put[0]->psn, put[per_put - 1]->psn)},
           {"signal_psn", sig->psn},
           {"packets", kinds}});
    }
    n.result()["wire_rounds"] = jw;
    n.result()["modified_packets"] = modified_packets;
    n.check("order", tr(M("check.order"), fadd ? "FetchAdd" : "RDMA WRITE Only"), order_ok);
    if (fadd) n.check("atomic_ack", tr(M("check.atomic_ack")), acks_ok);
    n.check("wire_payload", tr(M("check.wire_payload")), payload_ok);
    if (brk_reuse) {
      std::size_t modified_bytes = 0;
      for (const Round& rd : done) modified_bytes += rd.read_modified;
      n.say(tr(M("wire.reuse"), modified_packets, std::size_t{rounds} * per_put));
      n.say(modified_packets > 0 ? tr(M("reuse.seen"), modified_bytes) : tr(M("reuse.lucky")));
      n.result()["modified_bytes"] = modified_bytes;
      n.check("reuse_wire", tr(M("check.reuse_wire")), split_ok && payload_ok);
    } else {
      n.check("wire_original", tr(M("check.wire_original")), modified_packets == 0);
    }
    if (brk_early) {
      n.result()["packets_after_read"] = after_read;
      n.say(tr(M("wire.early"), after_read));
      n.check("early_wire", tr(M("check.early_wire")), after_read > 0);
    }
  } else if (brk_reuse || brk_early) {
    n.say(tr(M("race.verbs")));
  }
  lab::suggest(n,
               {tr(M("try.1")), tr(M("try.2")), tr(M("try.3")), tr(M("try.4"), o.common.capture)});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(lab::Range(8u, 1u << 20))
        ->capture_default_str();
    app.add_option("-n,--iters", o.rounds, tr(M("opt.rounds")))
        ->check(lab::Range(1, 16))
        ->capture_default_str();
    app.add_option("--signal", o.signal, tr(M("opt.signal")))
        ->check(lab::IsMember({"fadd", "write"}))
        ->capture_default_str();
    app.add_option("--break", o.brk, tr(M("opt.break")))
        ->check(lab::IsMember({"none", "reuse", "early-read"}))
        ->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
  };
  return lab::run(argc, argv, "lab12", "lab12-one-sided", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}

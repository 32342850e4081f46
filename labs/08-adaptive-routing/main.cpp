// Lab 08: adaptive routing.
//
// Read this file next to docs/en/10-lab08-adaptive-routing.md. A fabric with
// adaptive routing sends each packet over whichever path is least loaded, so
// packets of one message overtake each other. Plain RC treats that as loss:
// the responder NAKs the first hole and the requester resends everything
// from there. Recent NICs (modelled here, not specified by the IBTA) accept
// packets ahead of the expected PSN inside a window and place them; only a
// hole that stays open is a loss. Messages stay whole (one RETH per WRITE,
// one completion per message). Above NCCL_IB_AR_THRESHOLD NCCL sends the
// data as a plain WRITE and then a zero-byte WRITE with immediate that tells
// the receiver "all of it is here". The lab runs the same transfer both ways.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "messages.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/lab/spray_fabric.hpp"
#include "rdmalab/lab/wire_view.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/wire/opcode.hpp"

using namespace rdmalab;
using i18n::tr;
using lab08::M;

namespace {

// The receiver's receive (consumed by the immediate), the sender's WRITE and
// the WRITE with immediate that tells the receiver.
constexpr std::uint64_t kRecvWrId = 7;
constexpr std::uint64_t kWriteWrId = 1;
constexpr std::uint64_t kNotifyWrId = 2;

struct Options {
  lab::CommonOptions common;
  std::string ar = "both";
  int paths = 4;
  std::int64_t spread_ns = 2000;
  std::uint32_t size = 32768;
  int mtu = 1024;
  std::uint32_t threshold = 8192;
};

struct Outcome {
  bool done = false, bytes = false;
  std::uint64_t packets = 0, retransmitted = 0, naks = 0, out_of_order = 0;
  std::uint64_t write_messages = 0;  // WRITE First or Only: one per message
  std::uint64_t requests = 0;        // WRITE packets the receiver's port saw
  bool one_reth_each = true;         // a RETH on First/Only, none on Middle/Last
  std::uint32_t byte_len = 0;        // the receiver's completion
  double finish_us = 0, goodput_gbps = 0;
  std::vector<std::uint64_t> spines;  // packets the requester's leaf sent up each spine
};

std::uint64_t event_count(const lab::WireFacts& f, const char* name) {
  const auto it = f.events.find(name);
  return it == f.events.end() ? 0 : it->second;
}

// One transfer of o.size bytes with the adaptive-routing model on or off.
Outcome transfer(lab::Narrator& n, const Options& o, bool ar) {
  const std::string mode = ar ? tr(M("on")) : tr(M("off"));
  n.step(tr(M("run.title"), mode));
  lab::CommonOptions common = o.common;
  const std::string base = common.capture.substr(0, common.capture.rfind(".pcap"));
  common.capture = base + (ar ? "-on.pcap" : "-off.pcap");
  // Capture where the receiver sees the packets: in arrival order, so that
  // the reordering shows.
  verbs::SimBackendOptions sim;
  sim.fabric.capture_point = sim::CapturePoint::ReceiverPort;
  // The network: a leaf-spine whose leaves spray every packet over the
  // spines, the path over spine p p x spread longer (spray_fabric.hpp).
  lab::use_spray_fabric(sim, static_cast<std::size_t>(o.paths));
  lab::Environment env = lab::open_environment(n, common, sim);
  if (lab::spread_spray_paths(env, o.spread_ns)) {
    n.say(tr(M("step.fabric"), o.paths, o.spread_ns));
  } else {
    n.say(tr(M("verbs_only_sim")));
  }

  lab::Endpoint tx, rx;
  tx.role = tr(M("sender"));
  rx.role = tr(M("receiver"));
  lab::EndpointSpec spec;
  spec.buffer = o.size;
  lab::EndpointSpec responder = spec;
  responder.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  lab::open_pair(n, env, tx, rx, spec, responder, common);
  tx.first_psn = lab::kRequesterFirstPsn;
  rx.first_psn = lab::kResponderFirstPsn;
  lab::ConnectSpec c;
  c.mtu = o.mtu;
  lab::connect_pair(n, tx, rx, c, common, true);
  // The adaptive-routing model is a property of both NICs' QPs.
  auto* simb = dynamic_cast<verbs::SimBackend*>(env.backend.get());
  if (ar && simb != nullptr) {
    for (lab::Endpoint* e : {&tx, &rx}) {
      sim::QueuePair* q = simb->sim_qp(*e->qp);
      sim::QueuePair::Options qo = q->options();
      qo.adaptive_routing = true;
      q->set_options(qo);
    }
  }
  n.say(ar ? tr(M("why.ar_on")) : tr(M("why.ar_off")));

  // The receiver's receive WQE, consumed by the immediate.
  ibv_recv_wr rwr{};
  rwr.wr_id = kRecvWrId;
  ibv_recv_wr* rbad = nullptr;
  verbs::check_rc(rx.qp->post_recv(&rwr, &rbad), "ibv_post_recv");

  for (std::uint32_t i = 0; i < o.size; ++i) tx.buf()[i] = static_cast<std::uint8_t>(i * 11 + 3);
  ibv_sge data = tx.sge(0, o.size);
  ibv_send_wr write{}, notify{};
  write.wr_id = kWriteWrId;
  write.sg_list = &data;
  write.num_sge = 1;
  write.opcode = IBV_WR_RDMA_WRITE;  // unsignaled: the notify's completion covers it
  write.wr.rdma.remote_addr = rx.mr->va();
  write.wr.rdma.rkey = rx.mr->rkey();
  write.next = &notify;
  notify.wr_id = kNotifyWrId;
  notify.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  notify.send_flags = IBV_SEND_SIGNALED;
  notify.imm_data = htonl(o.size);  // the size, as NCCL sends it
  notify.wr.rdma.remote_addr = rx.mr->va();
  notify.wr.rdma.rkey = rx.mr->rkey();
  const bool split = ar && o.size > o.threshold;
  ibv_send_wr* first = &write;
  if (split) {
    n.say(tr(M("post.split"), o.size, o.threshold, 1));
  } else {
    // One WRITE with immediate carries the data itself.
    notify.sg_list = &data;
    notify.num_sge = 1;
    first = &notify;
    n.say(ar ? tr(M("post.single"), o.size, o.threshold) : tr(M("post.no_ar")));
  }
  ibv_send_wr* bad = nullptr;
  verbs::check_rc(tx.qp->post_send(first, &bad), "ibv_post_send");

  const auto swcs = lab::poll_and_show(n, tx, 1);
  const auto rwcs = lab::poll_and_show(n, rx, 1);
  Outcome out;
  out.done = swcs.size() == 1 && swcs[0].status == IBV_WC_SUCCESS && rwcs.size() == 1 &&
             rwcs[0].status == IBV_WC_SUCCESS && rwcs[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
             ntohl(rwcs[0].imm_data) == o.size;
  out.bytes = std::memcmp(rx.buf(), tx.buf(), o.size) == 0;
  n.check(ar ? "done_on" : "done_off", tr(M("check.done"), mode), out.done);
  n.check(ar ? "bytes_on" : "bytes_off", tr(M("check.bytes"), mode), out.bytes);
  // byte_len: what the WRITE with immediate itself carried — all the data,
  // or nothing when the data went ahead as a plain WRITE.
  const std::uint32_t want_len = split ? 0 : o.size;
  if (rwcs.size() == 1) out.byte_len = rwcs[0].byte_len;
  n.check(ar ? "byte_len_on" : "byte_len_off", tr(M("check.byte_len"), mode, want_len),
          rwcs.size() == 1 && out.byte_len == want_len);

  // How the leaf spread the requester's packets (data, resends and all).
  out.spines = lab::spray_uplink_packets(env);
  if (!out.spines.empty()) {
    std::string per_spine;
    std::uint64_t sum = 0;
    for (std::size_t p = 0; p < out.spines.size(); ++p) {
      per_spine += fmt::format("{}spine{} {}", p == 0 ? "" : ", ", p, out.spines[p]);
      sum += out.spines[p];
    }
    n.say(tr(M("spines"), sum, per_spine));
  }
  if (const sim::Fabric* fabric = env.fabric()) {
    out.finish_us = static_cast<double>(fabric->now()) / 1e3;
    out.goodput_gbps = out.finish_us > 0 ? o.size * 8.0 / (out.finish_us * 1e3) : 0;
  }
  if (const auto wf = lab::finish_wire(n, env, common.capture)) {
    const lab::WireFacts& facts = *wf;
    out.packets = facts.packets;
    out.retransmitted = event_count(facts, "retransmission");
    out.naks = event_count(facts, "nak_psn_sequence");
    out.out_of_order = event_count(facts, "out_of_order");
    std::set<std::uint32_t> message_psns;  // PSNs of WRITE First/Only (resends once)
    for (const dissect::PacketRecord* rec : facts.roce()) {
      const wire::IbPacket& ib = *rec->decoded.ib;
      const auto* info = wire::find_opcode(ib.bth.opcode);
      if (info == nullptr || info->operation != wire::Operation::Write) continue;
      const bool opens =
          info->position == wire::Position::First || info->position == wire::Position::Only;
      ++out.requests;
      if (opens) message_psns.insert(ib.bth.psn);
      out.one_reth_each = out.one_reth_each && opens == ib.reth.has_value();
    }
    out.write_messages = message_psns.size();
    n.result()[ar ? "wire_on" : "wire_off"] = n.result()["wire"];
    n.result().erase("wire");
    n.say(tr(M("result"), mode, out.packets, out.retransmitted, out.naks, out.out_of_order,
             out.finish_us, out.goodput_gbps));
  }
  n.result()[ar ? "ar_on" : "ar_off"] = {
      {"packets", out.packets},     {"retransmitted", out.retransmitted},
      {"naks", out.naks},           {"out_of_order", out.out_of_order},
      {"finish_us", out.finish_us}, {"goodput_gbps", out.goodput_gbps},
      {"requests", out.requests},   {"spines", out.spines}};
  return out;
}

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  const bool sim_backend = o.common.backend != "verbs";
  std::optional<Outcome> off, on;
  if (o.ar != "on") off = transfer(n, o, false);
  if (o.ar != "off" && sim_backend) on = transfer(n, o, true);

  n.step(tr(M("step.compare")));
  // Packets overtake each other only when the spines' paths differ: with
  // one spine, or all of equal delay, the leaf's spraying keeps the order
  // (every uplink runs at the host's rate, so none has a queue).
  const bool reorders = o.paths > 1 && o.spread_ns > 0;
  if (off && off->packets > 0 && reorders)
    n.check("off_naks", tr(M("check.off_naks")), off->naks > 0 && off->retransmitted > 0);
  if (!reorders && sim_backend) {
    bool in_order = true;
    for (const std::optional<Outcome>* r : {&off, &on})
      if (*r && (*r)->packets > 0)
        in_order =
            in_order && (*r)->out_of_order == 0 && (*r)->naks == 0 && (*r)->retransmitted == 0;
    n.check("in_order", tr(M("check.in_order")), in_order);
  }
  if (on && on->packets > 0) {
    n.check("on_clean", tr(M("check.on_clean")),
            on->retransmitted == 0 && on->naks == 0 && (!reorders || on->out_of_order > 0));
    // One WRITE message with immediate, or above the threshold the data's
    // WRITE and the zero-byte WRITE with immediate.
    const std::uint64_t want = o.size > o.threshold ? 2 : 1;
    n.check("on_whole", tr(M("check.on_whole"), want),
            on->write_messages == want && on->one_reth_each);
  }
  if (off && on && off->packets > 0 && reorders)
    n.check("faster", tr(M("check.faster")), on->finish_us < off->finish_us);
  n.say(o.common.link_layer == "ib" ? tr(M("hardware_ib")) : tr(M("hardware")));
  lab::suggest(n, {tr(M("try.1")), tr(M("try.2")), tr(M("try.3"), o.common.capture)});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("--ar", o.ar, tr(M("opt.ar")))
        ->check(lab::IsMember({"off", "on", "both"}))
        ->capture_default_str();
    app.add_option("--paths", o.paths, tr(M("opt.paths")))
        ->check(lab::Range(1, 16))
        ->capture_default_str();
    app.add_option("--spread", o.spread_ns, tr(M("opt.spread")))
        ->check(lab::Range(std::int64_t{0}, std::int64_t{1'000'000}))
        ->capture_default_str();
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(lab::Range(1u, 1u << 24))
        ->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
    app.add_option("--threshold", o.threshold, tr(M("opt.threshold")))->capture_default_str();
  };
  return lab::run(argc, argv, "lab08", "lab08-adaptive-routing", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}

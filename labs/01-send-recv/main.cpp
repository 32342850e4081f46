// Lab 01: SEND / RECEIVE over an RC queue pair.
//
// Read this file next to docs/en/03-lab01-send-recv.md. It is one linear
// program: open two devices (two simulated hosts, or one real device with two
// QPs), create PD, MR, CQ and QP on each side, connect the QPs, post a
// receive, post a SEND, poll both completion queues, check the bytes, and
// show what went on the wire. The set-up steps (labs/support/src/setup.cpp and
// endpoint.cpp) narrate every verb they call; the data path is spelled out here.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <cstring>

#include "messages.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/lab/setup.hpp"
#include "rdmalab/lab/wire_view.hpp"
#include "rdmalab/verbs/error.hpp"

using namespace rdmalab;
using i18n::tr;
using lab01::M;

namespace {

// The sender's SENDs are wr_id 1, 2, ...; the receiver's receives 1000, 1001, ...
constexpr std::uint64_t kFirstSendWrId = 1;
constexpr std::uint64_t kFirstRecvWrId = 1000;

struct Options {
  lab::CommonOptions common;
  std::uint32_t size = 64;
  int iters = 1;
  int mtu = 1024;
  bool no_recv = false;
  int rnr_retry = -1;  // -1: 7, or 1 with --no-recv (so the lab ends)
  bool cm = false;     // connect in band with rdma_cm instead of out of band
};

void run_lab(lab::Narrator& n, const Options& o) {
  const auto rnr_retry =
      static_cast<std::uint8_t>(o.rnr_retry >= 0 ? o.rnr_retry : (o.no_recv ? 1 : 7));
  // 1-4. The set-up (labs/support/src/setup.cpp, which narrates every verb
  // it calls). Which side(s) this process plays: both (one process), or with
  // --connect the sender and with --listen the receiver, on two hosts.
  //  1. Backend: a real device if there is one, else the simulated fabric,
  //     whose wire is captured to a pcap file. Two processes exchange their
  //     connection data over TCP, unless the CM connects them in band (--cm).
  //  2. Devices and resources: on the simulator two hosts, sim1 sends to
  //     sim0; on real verbs both QPs live on one device (-d) and rxe loops
  //     the packets back, or each host runs one side. Each side gets a PD, a
  //     registered buffer, a CQ and an RC QP.
  //  3. What each side tells the other. Two-sided operations need no VA or
  //     rkey: only QPN, first PSN and GID. Real programs pick random first
  //     PSNs; fixed ones make the capture easy to read.
  //  4. Connect: each QP learns the other's QPN, PSN and GID at RTR; the
  //     sender's rnr_retry says how often it retries after an RNR NAK.
  //  With --cm the connection manager does 3 and 4 in band: see
  //  labs/support/src/cm_connect.cpp.
  lab::SetupSpec spec;
  spec.steps = {tr(M("step.backend")),  tr(M("step.resources")), tr(M("step.cm")), {},
                tr(M("step.exchange")), tr(M("step.connect"))};
  spec.exchange_note = tr(M("say.exchange"));
  spec.active_role = tr(M("sender"));
  spec.passive_role = tr(M("receiver"));
  spec.active.buffer = o.size;
  spec.active.cqe = 2 * o.iters + 2;
  spec.active.max_wr = static_cast<std::uint32_t>(o.iters + 1);
  spec.passive = spec.active;
  spec.connect.mtu = o.mtu;
  spec.connect.rnr_retry = rnr_retry;
  spec.passive_connect = spec.connect;
  spec.passive_connect->rnr_retry = 7;
  spec.cm = o.cm;
  spec.show_pair_in_exchange_step = true;
  // The receives, posted in step 5; with --cm --listen already before the
  // accept, since the peer may send as soon as it has the REP.
  ibv_sge rx_sge{};
  bool posted = false;
  const auto post_receives = [&](lab::Endpoint& rx) {
    for (int i = 0; i < o.iters && !o.no_recv; ++i) {
      ibv_recv_wr wr{};
      wr.wr_id = kFirstRecvWrId + static_cast<std::uint64_t>(i);
      wr.sg_list = &rx_sge;
      wr.num_sge = 1;
      ibv_recv_wr* bad = nullptr;
      verbs::check_rc(rx.qp->post_recv(&wr, &bad), "ibv_post_recv");
      n.call("ibv_post_recv(qp, wr)", "0");
      n.field("wr_id", std::to_string(wr.wr_id));
      n.field("sg_list[0]", fmt::format("addr {} length {} lkey {}", lab::hex(rx_sge.addr),
                                        rx_sge.length, lab::hex(rx_sge.lkey, 8)));
    }
    posted = true;
  };
  spec.after_open = [&](lab::Setup& s) {
    if (s.plays_passive()) rx_sge = s.passive.sge(0, o.size);
  };
  spec.before_accept = [&](lab::Setup& s) { post_receives(s.passive); };
  lab::Setup s(n, o.common, spec);
  lab::Endpoint& tx = s.active;
  lab::Endpoint& rx = s.passive;
  const bool sends = s.plays_active();
  const bool receives = s.plays_passive();

  // 5. The receiver posts its receive work requests BEFORE the sender sends;
  // between two hosts it says "ready" once they are posted.
  n.step(o.no_recv ? tr(M("step.no_recv")) : tr(M("step.recv")));
  n.say(o.no_recv ? tr(M("why.no_recv")) : tr(M("why.recv")));
  if (!posted && receives) post_receives(rx);
  s.say_ready();

  // 6. The sender posts its SENDs. The payload is a pattern both sides know,
  // so that a receiver on another host can check it.
  n.step(tr(M("step.send")));
  std::vector<std::uint8_t> expected(o.size);
  for (std::uint32_t i = 0; i < o.size; ++i) expected[i] = static_cast<std::uint8_t>('A' + i % 26);
  if (sends) std::memcpy(tx.buf(), expected.data(), o.size);
  ibv_sge tx_sge = sends ? tx.sge(0, o.size) : ibv_sge{};
  for (int i = 0; i < o.iters && sends; ++i) {
    ibv_send_wr wr{};
    wr.wr_id = kFirstSendWrId + static_cast<std::uint64_t>(i);
    wr.sg_list = &tx_sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    verbs::check_rc(tx.qp->post_send(&wr, &bad), "ibv_post_send");
    n.call("ibv_post_send(qp, wr)", "0");
    n.field("wr_id", std::to_string(wr.wr_id));
    n.field("opcode", "IBV_WR_SEND");
    n.field("send_flags", "IBV_SEND_SIGNALED", tr(M("why.signaled")));
    n.field("sg_list[0]", fmt::format("addr {} length {} lkey {}", lab::hex(tx_sge.addr),
                                      tx_sge.length, lab::hex(tx_sge.lkey, 8)));
  }

  // 7. Poll. On the simulator, polling an empty CQ advances virtual time.
  n.step(tr(M("step.poll")));
  const auto n_msgs = static_cast<std::size_t>(o.iters);
  const auto tx_wcs = sends ? lab::poll_and_show(n, tx, n_msgs) : std::vector<ibv_wc>{};
  const auto rx_wcs =
      receives && !o.no_recv ? lab::poll_and_show(n, rx, n_msgs) : std::vector<ibv_wc>{};
  // Keep both processes (and their QPs) alive until both are done.
  s.say_done();

  // 8. Verify what happened, from the completions and the memory.
  n.step(tr(M("step.verify")));
  nlohmann::json wcs = nlohmann::json::array();
  for (const auto& wc : tx_wcs) wcs.push_back(lab::wc_json("sender", wc));
  for (const auto& wc : rx_wcs) wcs.push_back(lab::wc_json("receiver", wc));
  n.result()["completions"] = wcs;
  n.result()["size"] = o.size;
  n.result()["iters"] = o.iters;
  n.result()["mtu"] = o.mtu;
  if (o.no_recv && sends) {
    n.check("rnr", tr(M("check.rnr")),
            !tx_wcs.empty() && tx_wcs[0].status == IBV_WC_RNR_RETRY_EXC_ERR);
  } else if (!o.no_recv) {
    bool send_ok = tx_wcs.size() == static_cast<std::size_t>(o.iters);
    for (const auto& wc : tx_wcs)
      send_ok = send_ok && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND;
    bool recv_ok = rx_wcs.size() == static_cast<std::size_t>(o.iters);
    for (const auto& wc : rx_wcs)
      recv_ok = recv_ok && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
                wc.byte_len == o.size;
    if (sends) n.check("send_ok", tr(M("check.send_ok")), send_ok);
    if (receives) {
      n.check("recv_ok", tr(M("check.recv_ok")), recv_ok);
      n.check("bytes", tr(M("check.bytes")), std::memcmp(rx.buf(), expected.data(), o.size) == 0);
    }
  }

  // With --cm the sender disconnects (DREQ) and the receiver answers (DREP).
  s.disconnect();

  // 9. What went on the wire: the simulator captured every frame.
  if (const auto facts = lab::finish_wire(n, s.env, o.common.capture)) {
    const auto count = [&](const char* op) {
      const auto it = facts->opcodes.find(op);
      return it == facts->opcodes.end() ? 0 : it->second;
    };
    if (o.no_recv) {
      n.check("wire_rnr", tr(M("check.wire_rnr")), facts->events.contains("rnr_nak"));
    } else {
      n.check(
          "wire_send", tr(M("check.wire_send")),
          count("RC SEND Only") + count("RC SEND First") >= static_cast<std::uint64_t>(o.iters) &&
              count("RC Acknowledge") >= 1);
    }
  }

  lab::suggest(n,
               {tr(M("try.1")), tr(M("try.2")), tr(M("try.3")), tr(M("try.4"), o.common.capture)});
}
}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(lab::Range(1u, 1u << 24))
        ->capture_default_str();
    app.add_option("-n,--iters", o.iters, tr(M("opt.iters")))
        ->check(lab::Range(1, 1000))
        ->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
    app.add_flag("--no-recv", o.no_recv, tr(M("opt.no_recv")));
    app.add_option("--rnr-retry", o.rnr_retry, tr(M("opt.rnr_retry")))->check(lab::Range(0, 7));
    app.add_flag("--cm", o.cm, tr(M("opt.cm")));
  };
  return lab::run(argc, argv, "lab01", "lab01-send-recv", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}

// Lab 01: SEND / RECEIVE over an RC queue pair.
//
// Read this file next to docs/en/03-lab01-send-recv.md. It is one linear
// program: open two devices (two simulated hosts, or one real device with two
// QPs), create PD, MR, CQ and QP on each side, connect the QPs, post a
// receive, post a SEND, poll both completion queues, check the bytes, and
// show what went on the wire. The set-up steps (lib/lab/src/endpoint.cpp)
// narrate every verb they call; the data path is spelled out here.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <cstring>

#include "messages.hpp"
#include "rdmalab/lab/cm_connect.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/narrator.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/lab/wire_view.hpp"
#include "rdmalab/verbs/error.hpp"

using namespace rdmalab;
using i18n::tr;
using lab01::M;

namespace {

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
  // Which side(s) this process plays: both (one process), or with
  // --connect the sender and with --listen the receiver, on two hosts.
  const lab::Role role = lab::role_of(o.common);
  const bool sends = role != lab::Role::Passive;
  const bool receives = role != lab::Role::Active;

  // 1. Backend: a real device if there is one, else the simulated fabric,
  // whose wire is captured to a pcap file.
  n.step(tr(M("step.backend")));
  lab::Environment env = lab::open_environment(n, o.common);
  // Two processes exchange their connection data over TCP, unless the CM
  // connects them in band (--cm).
  std::optional<verbs::OobChannel> peer =
      o.cm ? std::optional<verbs::OobChannel>{} : lab::open_peer(n, o.common);

  // 2. Devices and resources: on the simulator two hosts, sim1 sends to
  // sim0; on real verbs both QPs live on one device (-d) and rxe loops the
  // packets back, or each host runs one side. Each side gets a PD, a
  // registered buffer, a CQ and an RC QP.
  n.step(tr(M("step.resources")));
  lab::Endpoint tx, rx;
  tx.role = tr(M("sender"));
  rx.role = tr(M("receiver"));
  lab::EndpointSpec spec;
  spec.buffer = o.size;
  spec.cqe = 2 * o.iters + 2;
  spec.max_wr = static_cast<std::uint32_t>(o.iters + 1);
  spec.device = lab::requester_device(env, o.common);
  if (sends) lab::open_endpoint(n, env, tx, spec, o.common);
  spec.device = lab::responder_device(env, o.common);
  if (receives) lab::open_endpoint(n, env, rx, spec, o.common);

  // The receives, posted in step 5; with --cm --listen already before the
  // accept, since the peer may send as soon as it has the REP.
  ibv_sge rx_sge = receives ? rx.sge(0, o.size) : ibv_sge{};
  bool posted = false;
  const auto post_receives = [&] {
    for (int i = 0; i < o.iters && !o.no_recv && receives; ++i) {
      ibv_recv_wr wr{};
      wr.wr_id = 1000 + static_cast<std::uint64_t>(i);
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

  // 3-4. With --cm the connection manager does both in band: see
  // lib/lab/src/cm_connect.cpp.
  if (o.cm) {
    n.step(tr(M("step.cm")));
    lab::ConnectSpec c;
    c.rnr_retry = rnr_retry;
    if (role == lab::Role::Both) {
      lab::connect_pair_cm(n, env, tx, rx, c);
    } else if (role == lab::Role::Passive) {
      lab::accept_cm(n, env, rx, *o.common.listen, post_receives, c);
    } else {
      const auto [host, port] = *verbs::parse_host_port(o.common.connect);
      lab::connect_cm(n, env, tx, host, port, c);
    }
  } else {
    // 3. What each side tells the other. Two-sided operations need no VA or
    // rkey: only QPN, first PSN and GID. Real programs pick random first
    // PSNs; fixed ones make the capture easy to read.
    n.step(tr(M("step.exchange")));
    tx.first_psn = 0x000100;
    rx.first_psn = 0x000200;
    n.say(tr(M("say.exchange")));
    verbs::ConnInfo from_tx, from_rx;
    if (peer) {
      (sends ? from_rx : from_tx) =
          lab::exchange_with_peer(n, *peer, sends ? tx : rx, o.mtu, false);
    } else {
      from_tx = lab::show_exchange(n, tx, o.mtu, false);
      from_rx = lab::show_exchange(n, rx, o.mtu, false);
    }

    // 4. Connect: each QP learns the other's QPN, PSN and GID at RTR; the
    // sender's rnr_retry says how often it retries after an RNR NAK.
    n.step(tr(M("step.connect")));
    lab::ConnectSpec c;
    c.mtu = o.mtu;
    c.rnr_retry = rnr_retry;
    if (sends) lab::connect_rc(n, tx, from_rx, c, o.common);
    c.rnr_retry = 7;
    if (receives) lab::connect_rc(n, rx, from_tx, c, o.common);
  }

  // 5. The receiver posts its receive work requests BEFORE the sender sends;
  // between two hosts it says "ready" once they are posted.
  n.step(o.no_recv ? tr(M("step.no_recv")) : tr(M("step.recv")));
  n.say(o.no_recv ? tr(M("why.no_recv")) : tr(M("why.recv")));
  if (!posted) post_receives();
  if (peer) {
    if (receives) lab::tell_peer(*peer, "ready");
    if (sends) lab::await_peer(*peer, "ready");
  }

  // 6. The sender posts its SENDs. The payload is a pattern both sides know,
  // so that a receiver on another host can check it.
  n.step(tr(M("step.send")));
  std::vector<std::uint8_t> expected(o.size);
  for (std::uint32_t i = 0; i < o.size; ++i) expected[i] = static_cast<std::uint8_t>('A' + i % 26);
  if (sends) std::memcpy(tx.buf(), expected.data(), o.size);
  ibv_sge tx_sge = sends ? tx.sge(0, o.size) : ibv_sge{};
  for (int i = 0; i < o.iters && sends; ++i) {
    ibv_send_wr wr{};
    wr.wr_id = static_cast<std::uint64_t>(i + 1);
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
  if (peer) {
    // Keep both processes (and their QPs) alive until both are done.
    if (sends) lab::tell_peer(*peer, "done");
    if (receives) lab::await_peer(*peer, "done");
  }

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
  if (o.cm && sends) lab::disconnect_cm(n, env, tx);
  if (o.cm && !sends) lab::await_disconnect_cm(n, env, rx);

  // 9. What went on the wire: the simulator captured every frame.
  if (const auto facts = lab::finish_wire(n, env, o.common.capture)) {
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
  const auto options = [&](CLI::App& app) {
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(CLI::Range(1u, 1u << 24))
        ->capture_default_str();
    app.add_option("-n,--iters", o.iters, tr(M("opt.iters")))
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
    app.add_flag("--no-recv", o.no_recv, tr(M("opt.no_recv")));
    app.add_option("--rnr-retry", o.rnr_retry, tr(M("opt.rnr_retry")))->check(CLI::Range(0, 7));
    app.add_flag("--cm", o.cm, tr(M("opt.cm")));
  };
  return lab::run(argc, argv, "lab01", "lab01-send-recv", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}

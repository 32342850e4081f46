// Lab 15: Unreliable Datagram (UD).
//
// Read this file next to docs/en/22-lab15-ud.md. One process, two UD QPs
// (on the simulator host sim1 sends to host sim0; on real verbs both QPs live
// on -d, or the receiver on --peer-dev). There is no connection: the QPs go
// to RTS without a peer, and each SEND names its destination itself (address
// handle, remote QPN, Q_Key). Five datagrams, each showing one rule of UD:
//   1. the right Q_Key: it arrives, 40 bytes of GRH first, then the payload;
//   2. a wrong Q_Key: the receiving QP drops it silently;
//   3. one byte above the MTU: never sent, and yet no error (C10-93.1.1);
//   4. lost on the link (simulator): gone, no ACK, no retransmission;
//   5. the right Q_Key again: it takes the second receive, since 2-4 took none.
// Then the wire: UD SEND Only packets with a DETH, nothing going back.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "messages.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/lab/setup.hpp"
#include "rdmalab/lab/wire_view.hpp"
#include "rdmalab/sim/fabric.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/wire/headers.hpp"

using namespace rdmalab;
using i18n::tr;
using lab15::M;

namespace {

constexpr std::uint64_t kFirstSendWrId = 1;
constexpr std::uint64_t kFirstRecvWrId = 1000;
// Receives posted: two datagrams arrive (1 and 5), the third stays posted.
constexpr int kRecvs = 3;
constexpr int kDatagrams = 5;
// How long real verbs wait for a datagram that must not arrive. rxe loops a
// packet back in microseconds; the simulator stops as soon as it is idle.
constexpr std::chrono::milliseconds kNothingWait{200};
constexpr std::uint32_t kControlledQkey = 0x80000000;

struct Options {
  lab::CommonOptions common;
  std::uint32_t size = 64;
  std::uint32_t qkey = 0x11111111;
  std::uint32_t wrong_qkey = 0x22222222;
};

std::string hex_bytes(const std::uint8_t* p, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += fmt::format("{}{:02x}", i == 0 ? "" : " ", p[i]);
  return s;
}

bool ipv4_mapped(const ibv_gid& g) {
  static constexpr std::uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(g.raw, kPrefix, sizeof kPrefix) == 0;
}

std::string ipv4_text(const std::uint8_t* a) {
  return fmt::format("{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
}

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  if (o.wrong_qkey == o.qkey || (o.qkey & kControlledQkey) != 0 ||
      (o.wrong_qkey & kControlledQkey) != 0)
    throw verbs::UsageError(tr(M("bad.qkey")));
  const auto port_no = static_cast<std::uint8_t>(o.common.ib_port);

  // 1. Backend: a real device if there is one, else the simulated fabric.
  n.step(tr(M("step.backend")));
  lab::Environment env = lab::open_environment(n, o.common);

  // 2. Two UD QPs. A UD message is one packet, so the port's active MTU is
  // the largest message; datagram 3 is one byte more. Every receive buffer
  // holds 40 bytes of GRH plus that many, so that only the MTU, not the
  // buffer, stands in datagram 3's way.
  n.step(tr(M("step.resources")));
  lab::Endpoint tx, rx;
  tx.role = tr(M("sender"));
  rx.role = tr(M("receiver"));
  auto probe = env.backend->open(lab::requester_device(env, o.common));
  const auto mtu =
      static_cast<std::uint32_t>(verbs::mtu_bytes(probe->query_port(port_no).active_mtu));
  probe.reset();
  if (o.size > mtu) throw verbs::UsageError(tr(M("bad.size"), o.size, mtu));
  const std::uint32_t big = mtu + 1;
  const std::size_t slot = wire::kGrhSize + big;
  lab::EndpointSpec tx_spec;
  tx_spec.type = IBV_QPT_UD;
  tx_spec.buffer = big;
  tx_spec.cqe = kDatagrams + 1;
  tx_spec.max_wr = kDatagrams + 1;
  lab::EndpointSpec rx_spec = tx_spec;
  rx_spec.buffer = kRecvs * slot;
  lab::open_pair(n, env, tx, rx, tx_spec, rx_spec, o.common);

  // 3. RESET -> INIT -> RTR -> RTS with no peer: INIT takes the Q_Key, RTS
  // the first PSN; no address vector, no path MTU, no timers.
  n.step(tr(M("step.connect")));
  n.say(tr(M("why.ud_qps")));
  tx.first_psn = lab::kRequesterFirstPsn;
  rx.first_psn = lab::kResponderFirstPsn;
  for (lab::Endpoint* e : {&tx, &rx}) {
    n.say(fmt::format("{}, QP {}:", e->role, lab::hex(e->qp->qpn(), 6)));
    verbs::InitAttrs init;
    init.port = port_no;
    init.qkey = o.qkey;
    n.block(e->qp->to_init(init).to_string());
    n.block(e->qp->to_rtr(verbs::RtrAttrs{}).to_string());
    verbs::RtsAttrs rts;
    rts.sq_psn = e->first_psn;
    n.block(e->qp->to_rts(rts).to_string());
  }

  // 4. The address handle: the receiver's GID as the destination, our GID
  // index as the source. The receiver's QPN and Q_Key go into each WR.
  n.step(tr(M("step.ah")));
  n.say(tr(M("say.ah_info")));
  n.block(fmt::format("GID {}  QPN {}  Q_Key {}", lab::gid_string(rx.gid),
                      lab::hex(rx.qp->qpn(), 6), lab::hex(o.qkey, 8)));
  ibv_ah_attr ah_attr{};
  ah_attr.is_global = 1;
  ah_attr.port_num = port_no;
  ah_attr.grh.dgid = rx.gid;
  ah_attr.grh.sgid_index = static_cast<std::uint8_t>(tx.gid_index);
  ah_attr.grh.hop_limit = 64;
  // On InfiniBand the LRH needs the receiver's LID too; the GRH stays, so
  // that the receiver sees the sender's GID in its buffer as on RoCE.
  ah_attr.dlid = rx.lid;
  const auto ah = tx.pd->create_ah(ah_attr);
  n.call("ibv_create_ah(pd, ah_attr)", tr(M("why.ah")));
  n.field("ah_attr.is_global", "1");
  n.field("ah_attr.grh.dgid", lab::gid_string(ah_attr.grh.dgid));
  n.field("ah_attr.grh.sgid_index", std::to_string(ah_attr.grh.sgid_index));
  n.field("ah_attr.grh.hop_limit", std::to_string(ah_attr.grh.hop_limit));
  if (rx.infiniband) n.field("ah_attr.dlid", std::to_string(ah_attr.dlid));
  n.field("ah_attr.port_num", std::to_string(ah_attr.port_num));

  // 5. The receives, each 40 + big bytes.
  n.step(tr(M("step.recv"), kRecvs, big));
  n.say(tr(M("why.recv")));
  for (int i = 0; i < kRecvs; ++i) {
    ibv_sge sge = rx.sge(static_cast<std::size_t>(i) * slot, static_cast<std::uint32_t>(slot));
    ibv_recv_wr wr{};
    wr.wr_id = kFirstRecvWrId + static_cast<std::uint64_t>(i);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    verbs::check_rc(rx.qp->post_recv(&wr, &bad), "ibv_post_recv");
    n.call("ibv_post_recv(qp, wr)", "0");
    n.field("wr_id", std::to_string(wr.wr_id));
    n.field("sg_list[0]", fmt::format("addr {} length {} lkey {}", lab::hex(sge.addr), sge.length,
                                      lab::hex(sge.lkey, 8)));
  }

  // The payload is a pattern both sides know.
  for (std::uint32_t i = 0; i < big; ++i) tx.buf()[i] = static_cast<std::uint8_t>('A' + i % 26);

  // One datagram: post it, narrate the WR, poll the sender's completion.
  std::vector<ibv_wc> tx_wcs, rx_wcs;
  nlohmann::json datagrams = nlohmann::json::array();
  const auto send = [&](int k, std::uint32_t len, std::uint32_t qkey) {
    ibv_sge sge = tx.sge(0, len);
    ibv_send_wr wr{};
    wr.wr_id = kFirstSendWrId + static_cast<std::uint64_t>(k - 1);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = ah->get();
    wr.wr.ud.remote_qpn = rx.qp->qpn();
    wr.wr.ud.remote_qkey = qkey;
    ibv_send_wr* bad = nullptr;
    verbs::check_rc(tx.qp->post_send(&wr, &bad), "ibv_post_send");
    n.call("ibv_post_send(qp, wr)", "0");
    n.field("wr_id", std::to_string(wr.wr_id));
    n.field("opcode", "IBV_WR_SEND");
    n.field("send_flags", "IBV_SEND_SIGNALED", tr(M("why.signaled")));
    n.field("sg_list[0]", fmt::format("length {} lkey {}", sge.length, lab::hex(sge.lkey, 8)));
    n.field("wr.ud.ah", "ah", tr(M("why.ud_wr")));
    n.field("wr.ud.remote_qpn", lab::hex(wr.wr.ud.remote_qpn, 6));
    n.field("wr.ud.remote_qkey", lab::hex(qkey, 8));
    const auto got = lab::poll_and_show(n, tx, 1);
    tx_wcs.insert(tx_wcs.end(), got.begin(), got.end());
    datagrams.push_back(nlohmann::json{{"datagram", k}, {"length", len}, {"qkey", qkey}});
  };
  // The receiver's side: `expect` completions (0: show that none comes).
  const auto receive = [&](std::size_t expect) {
    auto got = expect == 0 ? lab::poll_and_show(n, rx, 1, kNothingWait)
                           : lab::poll_and_show(n, rx, expect);
    rx_wcs.insert(rx_wcs.end(), got.begin(), got.end());
    return got;
  };

  // 6. Datagram 1: the right Q_Key. The sender's completion means only that
  // the packet left; the receiver's shows the GRH, then the payload.
  n.step(tr(M("step.good")));
  send(1, o.size, o.qkey);
  n.say(tr(M("say.sent_ok")));
  const auto first = receive(1);
  const std::uint8_t* grh = rx.buf();
  n.say(tr(M("say.grh")));
  n.block(fmt::format("[ 0..19] {}\n[20..39] {}", hex_bytes(grh, 20), hex_bytes(grh + 20, 20)));
  const bool v4 = ipv4_mapped(tx.gid) && ipv4_mapped(rx.gid);
  if (v4)
    n.say(tr(M("why.grh_v4"), ipv4_text(grh + 32), ipv4_text(grh + 36)));
  else
    n.say(tr(M("why.grh_v6")));
  n.field(fmt::format("buf[40..{}]", 40 + std::min<std::uint32_t>(o.size, 16) - 1),
          fmt::format("\"{}\"", std::string(reinterpret_cast<const char*>(grh + wire::kGrhSize),
                                            std::min<std::uint32_t>(o.size, 16))));
  if (!first.empty()) n.say(tr(M("say.src_qp"), lab::hex(first[0].src_qp, 6)));

  // 7. Datagram 2: a wrong Q_Key. It goes on the wire; the receiving QP
  // drops it without a word.
  n.step(tr(M("step.wrong_qkey")));
  send(2, o.size, o.wrong_qkey);
  const auto after_wrong = receive(0);
  n.say(tr(M("say.nothing"), tr(M("why.wrong_qkey"))));

  // 8. Datagram 3: one byte above the MTU. Not sent, not an error.
  n.step(tr(M("step.too_big"), big));
  send(3, big, o.qkey);
  const auto after_big = receive(0);
  n.say(tr(M("say.nothing"), tr(M("why.too_big"), mtu)));

  // 9. Datagram 4: lost on the link. On the simulator a drop rule takes the
  // packet of its PSN (datagram 3 took a PSN too, without a packet).
  // Real verbs cannot lose a packet on demand: datagram 4 is not sent there.
  n.step(tr(M("step.lost")));
  const std::uint32_t lost_psn = (tx.first_psn + 3) & 0xFFFFFF;
  std::vector<ibv_wc> after_lost;
  sim::LinkConfig* link = env.link("sim1", "sim0");
  if (link != nullptr) {
    link->drops.push_back(sim::DropRule::psn(lost_psn, 1));
    n.say(tr(M("why.lost"), lab::hex(lost_psn, 6)));
    send(4, o.size, o.qkey);
    after_lost = receive(0);
    n.say(tr(M("say.nothing"), tr(M("why.lost_after"))));
  } else {
    n.say(tr(M("say.lost_verbs")));
  }

  // 10. Datagram 5: it lands in the second receive, not the fourth.
  n.step(tr(M("step.again")));
  n.say(tr(M("why.again"), kFirstRecvWrId + 1));
  send(5, o.size, o.qkey);
  const auto last = receive(1);

  // 11. Verify, from the completions and the memory.
  n.step(tr(M("step.verify")));
  nlohmann::json wcs = nlohmann::json::array();
  for (const auto& wc : tx_wcs) wcs.push_back(lab::wc_json("sender", wc));
  for (const auto& wc : rx_wcs) {
    auto j = lab::wc_json("receiver", wc);
    j["src_qp"] = wc.src_qp;
    j["grh"] = (wc.wc_flags & IBV_WC_GRH) != 0;
    wcs.push_back(j);
  }
  n.result()["completions"] = wcs;
  n.result()["datagrams"] = datagrams;
  n.result()["size"] = o.size;
  n.result()["port_mtu"] = mtu;
  n.result()["grh"] = hex_bytes(grh, wire::kGrhSize);

  const auto sent = static_cast<std::size_t>(link != nullptr ? kDatagrams : kDatagrams - 1);
  bool sends_ok = tx_wcs.size() == sent;
  for (const auto& wc : tx_wcs)
    sends_ok = sends_ok && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND;
  n.check("sends", tr(M("check.sends"), sent), sends_ok);
  const auto arrived = [&](const std::vector<ibv_wc>& w, std::uint64_t wr_id) {
    return w.size() == 1 && w[0].status == IBV_WC_SUCCESS && w[0].opcode == IBV_WC_RECV &&
           w[0].wr_id == wr_id && w[0].byte_len == wire::kGrhSize + o.size &&
           (w[0].wc_flags & IBV_WC_GRH) != 0 && w[0].src_qp == tx.qp->qpn();
  };
  n.check("good", tr(M("check.good"), o.size), arrived(first, kFirstRecvWrId));
  // The GRH: for IPv4 the IPv4 header (version 4, 20 bytes) with both
  // addresses in bytes 20-39; for IPv6 the IPv6 header with both GIDs.
  const bool grh_ok = v4 ? grh[20] == 0x45 && std::memcmp(grh + 32, tx.gid.raw + 12, 4) == 0 &&
                               std::memcmp(grh + 36, rx.gid.raw + 12, 4) == 0
                         : (grh[0] >> 4) == 6 && std::memcmp(grh + 8, tx.gid.raw, 16) == 0 &&
                               std::memcmp(grh + 24, rx.gid.raw, 16) == 0;
  n.check("grh", tr(M("check.grh")), grh_ok);
  n.check("payload", tr(M("check.payload")),
          std::memcmp(rx.buf() + wire::kGrhSize, tx.buf(), o.size) == 0 &&
              std::memcmp(rx.buf() + slot + wire::kGrhSize, tx.buf(), o.size) == 0);
  n.check("dropped", tr(M("check.dropped")),
          after_wrong.empty() && after_big.empty() && after_lost.empty());
  n.check("again", tr(M("check.again"), kFirstRecvWrId + 1), arrived(last, kFirstRecvWrId + 1));

  // 12. The wire: on the simulator the capture shows every packet as it
  // left the sender (the lost one too).
  if (const auto facts = lab::finish_wire(n, env, o.common.capture)) {
    std::vector<const dissect::PacketRecord*> ud;
    bool only_ud = true;
    for (const auto* r : facts->roce()) {
      if (r->op != nullptr && r->op->transport == wire::Transport::UD && r->decoded.ib->deth)
        ud.push_back(r);
      else
        only_ud = false;
    }
    const auto psn = [&](std::size_t i) { return ud[i]->decoded.ib->bth.psn; };
    const auto qkey = [&](std::size_t i) { return ud[i]->decoded.ib->deth->qkey; };
    const std::uint32_t p0 = tx.first_psn;
    // Datagrams 1, 2, 4, 5 on the wire; 3 took PSN p0+2 and no packet.
    bool deth_ok = ud.size() == 4;
    for (std::size_t i = 0; deth_ok && i < ud.size(); ++i)
      deth_ok = ud[i]->decoded.ib->deth->src_qp == tx.qp->qpn() &&
                ud[i]->decoded.ib->bth.dest_qp == rx.qp->qpn() &&
                ud[i]->decoded.ib->payload_length == o.size;
    n.check("wire_deth", tr(M("check.wire_deth")), deth_ok);
    n.check("wire_qkey", tr(M("check.wire_qkey"), lab::hex(o.wrong_qkey, 8)),
            deth_ok && qkey(0) == o.qkey && qkey(1) == o.wrong_qkey && qkey(2) == o.qkey &&
                qkey(3) == o.qkey);
    n.check("wire_mtu", tr(M("check.wire_mtu")),
            deth_ok && psn(0) == p0 && psn(1) == p0 + 1 && psn(2) == p0 + 3);
    n.check("wire_lost", tr(M("check.wire_lost")),
            deth_ok && psn(2) == lost_psn && psn(3) == p0 + 4);
    n.check("wire_no_ack", tr(M("check.wire_no_ack")), only_ud && facts->packets == 4);
  }

  lab::suggest(n, {tr(M("try.1")), tr(M("try.2")), tr(M("try.3"), o.common.capture)});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(lab::Range(1u, 4096u))
        ->capture_default_str();
    app.add_option("--qkey", o.qkey, tr(M("opt.qkey")))->capture_default_str();
    app.add_option("--wrong-qkey", o.wrong_qkey, tr(M("opt.wrong_qkey")))->capture_default_str();
  };
  return lab::run(argc, argv, "lab15", "lab15-ud", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}

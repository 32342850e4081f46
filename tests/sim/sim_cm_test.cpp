// The simulated Communication Manager on the wire: the handshake of an
// in-band connection, captured, must read like the Linux CM's over
// Soft-RoCE (tests/data/rping_cm.pcap): REQ, REP, RTU as UD SEND Only to
// QP 1 with Q_Key 0x80010000, every MAD with the active side's transaction
// ID, and each side's first request at the PSN the other side announced.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/sim/cm.hpp"
#include "rdmalab/wire/cm.hpp"
#include "sim_helpers.hpp"

using namespace rdmalab;

TEST_CASE(
    "sim CM: REQ/REP/RTU on the wire, first PSNs as announced, DREQ/DREP; REJ for no listener") {
  const auto pcap = (std::filesystem::temp_directory_path() / "rdmalab_sim_cm.pcap").string();
  {
    sim::Fabric fabric;
    sim::HostConfig h0{"sim0", {2, 0, 0, 0, 0, 1}, *wire::IpAddress::parse("10.99.0.1")};
    sim::HostConfig h1{"sim1", {2, 0, 0, 0, 0, 2}, *wire::IpAddress::parse("10.99.0.2")};
    sim::Device& d0 = fabric.add_host(h0);
    sim::Device& d1 = fabric.add_host(h1);
    fabric.start_capture(pcap);
    sim::cm::Manager cm(fabric, {&d0, &d1});
    auto* pch = cm.create_event_channel();
    auto* ach = cm.create_event_channel();
    sim::cm::Id* listener = pch->create_id();
    REQUIRE(listener->listen(h0.ip, 7471) == 0);
    CHECK(pch->create_id()->listen(h0.ip, 7471) == EADDRINUSE);

    sim::cm::Id* active = ach->create_id();
    REQUIRE(active->resolve_addr(std::nullopt, h0.ip, 7471) == 0);
    simtest::next_cm_event(*ach, sim::cm::EventType::AddrResolved);
    CHECK(active->device() == &d1);
    REQUIRE(active->resolve_route() == 0);
    simtest::next_cm_event(*ach, sim::cm::EventType::RouteResolved);

    simtest::CmHost a(d1), p(d0);
    // The application's QPs keep their usual numbers: QP 1 is the CM's.
    CHECK(a.qp->qp_num() == 0x11);
    sim::cm::ConnParam offer;
    offer.qp_num = a.qp->qp_num();
    REQUIRE(active->connect(offer) == 0);
    auto req = simtest::next_cm_event(*pch, sim::cm::EventType::ConnectRequest);
    REQUIRE(req->id != nullptr);
    CHECK(req->listen_id == listener);
    p.to_rts(*req->id);
    sim::cm::ConnParam answer;
    answer.qp_num = p.qp->qp_num();
    REQUIRE(req->id->accept(answer) == 0);
    simtest::next_cm_event(*ach, sim::cm::EventType::ConnectResponse);
    a.to_rts(*active);
    REQUIRE(active->establish() == 0);
    simtest::next_cm_event(*pch, sim::cm::EventType::Established);

    // One RDMA WRITE each way.
    for (auto [from, to] : {std::pair{&a, &p}, std::pair{&p, &a}}) {
      ibv_sge sge{reinterpret_cast<std::uintptr_t>(from->buf.data()), 64, from->mr->lkey()};
      ibv_send_wr wr{};
      wr.sg_list = &sge;
      wr.num_sge = 1;
      wr.opcode = IBV_WR_RDMA_WRITE;
      wr.send_flags = IBV_SEND_SIGNALED;
      wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(to->buf.data());
      wr.wr.rdma.rkey = to->mr->rkey();
      ibv_send_wr* bad = nullptr;
      REQUIRE(from->qp->post_send(&wr, &bad) == 0);
      ibv_wc wc{};
      REQUIRE(from->cq->poll(1, &wc) == 1);
      CHECK(wc.status == IBV_WC_SUCCESS);
    }
    REQUIRE(active->disconnect() == 0);
    simtest::next_cm_event(*pch, sim::cm::EventType::Disconnected);
    REQUIRE(req->id->disconnect() == 0);  // the DREP
    simtest::next_cm_event(*ach, sim::cm::EventType::Disconnected);

    // Nobody listens on 7999: REJ, reason 8.
    sim::cm::Id* lost = ach->create_id();
    REQUIRE(lost->resolve_addr(std::nullopt, h0.ip, 7999) == 0);
    simtest::next_cm_event(*ach, sim::cm::EventType::AddrResolved);
    REQUIRE(lost->resolve_route() == 0);
    simtest::next_cm_event(*ach, sim::cm::EventType::RouteResolved);
    offer.qp_num = 0x99;
    REQUIRE(lost->connect(offer) == 0);
    auto rej = simtest::next_cm_event(*ach, sim::cm::EventType::Rejected);
    CHECK(rej->status == wire::cm::kRejInvalidServiceId);
    fabric.stop_capture();
  }

  // The capture, as the analyser reads it.
  capture::PcapReader reader(pcap);
  dissect::Analyzer analyzer;
  dissect::PacketRecord rec;
  capture::Packet pkt;
  std::vector<std::string> cm;
  std::vector<dissect::Event> linked;
  std::uint64_t tid = 0;
  while (reader.next(pkt)) {
    dissect::decode_record(pkt.data, pkt.original_length, *reader.link_type(), pkt.frame,
                           pkt.time_ns, rec);
    analyzer.feed(rec);
    CHECK_FALSE(rec.malformed());
    if (rec.cm) {
      cm.emplace_back(wire::cm::attr_name(wire::cm::attr_of(*rec.cm)));
      REQUIRE(rec.decoded.ib.has_value());
      CHECK(rec.decoded.ib->bth.dest_qp == 1);
      REQUIRE(rec.decoded.ib->deth.has_value());
      CHECK(rec.decoded.ib->deth->qkey == wire::cm::kGsiQkey);
      CHECK(rec.decoded.ib->deth->src_qp == 1);
      if (cm.size() == 1) tid = wire::cm::transaction_id(*rec.cm);
      if (cm.size() <= 5) CHECK(wire::cm::transaction_id(*rec.cm) == tid);
    }
    for (const auto& e : rec.events)
      if (e.type == dissect::EventType::CmLinked) linked.push_back(e);
  }
  CHECK(cm == std::vector<std::string>{"REQ", "REP", "RTU", "DREQ", "DREP", "REQ", "REJ"});
  REQUIRE(linked.size() == 2);
  for (const auto& e : linked) CHECK(e.value == e.psn);  // each first PSN as announced
  if (std::getenv("RDMALAB_KEEP_CAPTURE") == nullptr) std::filesystem::remove(pcap);
}

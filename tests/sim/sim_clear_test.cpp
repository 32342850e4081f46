// SendWqe::clear() and IbPacket::clear() write every member back to its
// default one by one (faster than `x = T{}`, see their comments). Each test
// names every member through a structured binding, so a member added to the
// struct stops this file from compiling until it is listed here, and then
// the test fails until clear() resets it too.
#include <doctest/doctest.h>

#include "engine.hpp"
#include "rdmalab/wire/headers.hpp"

using namespace rdmalab;

namespace {

bool same(wire::Bytes a, wire::Bytes b) {
  return a.data() == b.data() && a.size() == b.size();
}

bool same(const sim::SendWqe::Bind& a, const sim::SendWqe::Bind& b) {
  const auto& [a_mw_rkey, a_rkey, a_mr_lkey, a_addr, a_length, a_access] = a;
  const auto& [b_mw_rkey, b_rkey, b_mr_lkey, b_addr, b_length, b_access] = b;
  return a_mw_rkey == b_mw_rkey && a_rkey == b_rkey && a_mr_lkey == b_mr_lkey && a_addr == b_addr &&
         a_length == b_length && a_access == b_access;
}

}  // namespace

TEST_CASE("SendWqe::clear() gives a value-initialised SendWqe, member by member") {
  sim::SendWqe w;
  std::uint8_t some_byte = 0;
  {
    auto& [wr_id, opcode, flags, imm, remote_addr, rkey, compare_add, swap, ah, remote_qpn,
           remote_qkey, num_sge, is_inline, length, bind, started, done, psn, npkts, received,
           regap, regap_psn, ready_at] = w;
    wr_id = 1;
    opcode = IBV_WR_RDMA_READ;
    flags = IBV_SEND_SIGNALED;
    imm = 2;
    remote_addr = 3;
    rkey = 4;
    compare_add = 5;
    swap = 6;
    ah = reinterpret_cast<sim::AddressHandle*>(&some_byte);
    remote_qpn = 7;
    remote_qkey = 8;
    num_sge = 9;
    is_inline = true;
    length = 10;
    bind = sim::SendWqe::Bind{11, 12, 13, 14, 15, 16};
    started = true;
    done = true;
    psn = 17;
    npkts = 18;
    received = 19;
    regap = true;
    regap_psn = 20;
    ready_at = 21;
  }
  w.clear();
  const sim::SendWqe fresh{};
  const auto& [wr_id, opcode, flags, imm, remote_addr, rkey, compare_add, swap, ah, remote_qpn,
               remote_qkey, num_sge, is_inline, length, bind, started, done, psn, npkts, received,
               regap, regap_psn, ready_at] = w;
  CHECK(wr_id == fresh.wr_id);
  CHECK(opcode == fresh.opcode);
  CHECK(flags == fresh.flags);
  CHECK(imm == fresh.imm);
  CHECK(remote_addr == fresh.remote_addr);
  CHECK(rkey == fresh.rkey);
  CHECK(compare_add == fresh.compare_add);
  CHECK(swap == fresh.swap);
  CHECK(ah == fresh.ah);
  CHECK(remote_qpn == fresh.remote_qpn);
  CHECK(remote_qkey == fresh.remote_qkey);
  CHECK(num_sge == fresh.num_sge);
  CHECK(is_inline == fresh.is_inline);
  CHECK(length == fresh.length);
  CHECK(same(bind, fresh.bind));
  CHECK(started == fresh.started);
  CHECK(done == fresh.done);
  CHECK(psn == fresh.psn);
  CHECK(npkts == fresh.npkts);
  CHECK(received == fresh.received);
  CHECK(regap == fresh.regap);
  CHECK(regap_psn == fresh.regap_psn);
  CHECK(ready_at == fresh.ready_at);
}

TEST_CASE("IbPacket::clear() gives a value-initialised IbPacket, member by member") {
  wire::IbPacket p;
  const std::uint8_t bytes[4] = {1, 2, 3, 4};
  {
    auto& [bth, payload_length, payload, aeth, reth, atomic_eth, atomic_ack_eth, immdt, ieth, deth,
           xrc_srq, feth, icrc] = p;
    bth.opcode = 0x0A;
    bth.psn = 5;
    bth.ack_req = true;
    reth = wire::Reth{1, 2, 3};
    aeth = wire::Aeth{wire::Aeth::ack(), 4};
    atomic_eth = wire::AtomicEth{5, 6, 7, 8};
    atomic_ack_eth = wire::AtomicAckEth{9};
    immdt = 10;
    ieth = 11;
    deth = wire::Deth{12, 0, 13};
    xrc_srq = 0x00ABCD;
    feth = wire::Feth{1, 1, 0};
    payload = wire::Bytes(bytes, sizeof bytes);
    payload_length = sizeof bytes;
    icrc = 14;
  }
  p.clear();
  const wire::IbPacket fresh{};
  const auto& [bth, payload_length, payload, aeth, reth, atomic_eth, atomic_ack_eth, immdt, ieth,
               deth, xrc_srq, feth, icrc] = p;
  CHECK(bth == fresh.bth);
  CHECK(reth == fresh.reth);
  CHECK(aeth == fresh.aeth);
  CHECK(atomic_eth == fresh.atomic_eth);
  CHECK(atomic_ack_eth == fresh.atomic_ack_eth);
  CHECK(immdt == fresh.immdt);
  CHECK(ieth == fresh.ieth);
  CHECK(deth == fresh.deth);
  CHECK(xrc_srq == fresh.xrc_srq);
  CHECK(feth == fresh.feth);
  CHECK(same(payload, fresh.payload));
  CHECK(payload_length == fresh.payload_length);
  CHECK(icrc == fresh.icrc);
}

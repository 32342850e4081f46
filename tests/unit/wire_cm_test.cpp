// The CM MAD codec: every message reads back as it was written, the Linux
// CM's MADs of tests/data/rping_cm.pcap read as rping set them up, and a MAD
// cut short at any length is refused without reading past its end.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/wire/cm.hpp"
#include "rdmalab/wire/frame.hpp"
#include "rdmalab/wire/mtu.hpp"

using namespace rdmalab;
using namespace rdmalab::wire::cm;

namespace {

bool same_bytes(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

/// The private data a decoded message shows: what was given, then zeros to
/// the end of its room.
bool private_data_as_given(std::span<const std::uint8_t> decoded,
                           std::span<const std::uint8_t> given, std::size_t room) {
  if (decoded.size() != room || given.size() > room) return false;
  return same_bytes(decoded.first(given.size()), given) &&
         std::all_of(decoded.begin() + static_cast<std::ptrdiff_t>(given.size()), decoded.end(),
                     [](std::uint8_t b) { return b == 0; });
}

template <class T>
T round_trip(const T& m, Mad& keep) {
  keep = encode(m);
  CHECK(encode(Message{m}) == keep);
  const auto d = decode(keep);
  REQUIRE(d.has_value());
  CHECK(attr_of(*d) == T::kAttr);
  REQUIRE(std::holds_alternative<T>(*d));
  const T out = std::get<T>(*d);
  CHECK(transaction_id(*d) == m.transaction_id);
  CHECK(local_comm_id(*d) == m.local_comm_id);
  return out;
}

const std::vector<std::uint8_t> kPrivate = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};

}  // namespace

TEST_CASE("one row per attribute, found by its ID") {
  for (const AttrInfo& a : kAttrs) {
    CHECK(find_attr(static_cast<std::uint16_t>(a.attr)) == &a);
    CHECK(attr_name(a.attr) == a.name);
  }
  CHECK(attr_name(Attr::Dreq) == "DREQ");
  CHECK(find_attr(0x000F) == nullptr);
  CHECK(find_attr(0x0017) == nullptr);
  CHECK(find_attr(0x0019) == nullptr);  // LAP: not decoded
  CHECK(kReqUserPrivateData == 56);
}

TEST_CASE("MTU codes") {
  CHECK(wire::mtu_bytes(IBV_MTU_256) == 256);
  CHECK(wire::mtu_bytes(IBV_MTU_4096) == 4096);
  CHECK(wire::mtu_bytes(0) == 0);
  CHECK(wire::mtu_bytes(6) == 0);
  for (std::uint8_t code = 1; code <= 5; ++code)
    CHECK(wire::mtu_code_at_most(wire::mtu_bytes(code)) == code);
  CHECK(wire::mtu_code_at_most(1500) == IBV_MTU_1024);
  CHECK(wire::mtu_code_at_most(100) == IBV_MTU_256);
  CHECK(wire::mtu_code_at_most(9000) == IBV_MTU_4096);
}

TEST_CASE("every message reads back as it was written") {
  Mad mad{};

  Req req;
  req.transaction_id = 0x0000000412345678ULL;
  req.local_comm_id = 0x743F56B9;
  req.service_id = kServiceIdTcp | 7174;
  req.ca_guid = 0x020000000A000001ULL;
  req.qpn = 0x000011;
  req.responder_resources = 4;
  req.initiator_depth = 3;
  req.remote_cm_response_timeout = 18;
  req.starting_psn = 0xF88F84;
  req.local_cm_response_timeout = 19;
  req.retry_count = 6;
  req.pkey = 0x8001;
  req.path_mtu = IBV_MTU_4096;
  req.rnr_retry_count = 5;
  req.max_cm_retries = 14;
  req.local_lid = 0x0102;
  req.remote_lid = 0x0304;
  for (std::uint8_t i = 0; i < 16; ++i) {
    req.local_gid.raw[i] = i;
    req.remote_gid.raw[i] = static_cast<std::uint8_t>(0xF0 | i);
  }
  req.hop_limit = 17;
  req.sl = 0xA;
  req.subnet_local = 1;
  req.local_ack_timeout = 14;
  req.ip = {0xC123, 0x0A000002, 0x0A000001};
  req.private_data = kPrivate;
  const Req r = round_trip(req, mad);
  CHECK(r.service_id == req.service_id);
  CHECK(r.ca_guid == req.ca_guid);
  CHECK(r.qpn == req.qpn);
  CHECK(r.responder_resources == req.responder_resources);
  CHECK(r.initiator_depth == req.initiator_depth);
  CHECK(r.remote_cm_response_timeout == req.remote_cm_response_timeout);
  CHECK(r.starting_psn == req.starting_psn);
  CHECK(r.local_cm_response_timeout == req.local_cm_response_timeout);
  CHECK(r.retry_count == req.retry_count);
  CHECK(r.pkey == req.pkey);
  CHECK(r.path_mtu == req.path_mtu);
  CHECK(r.rnr_retry_count == req.rnr_retry_count);
  CHECK(r.max_cm_retries == req.max_cm_retries);
  CHECK(r.local_lid == req.local_lid);
  CHECK(r.remote_lid == req.remote_lid);
  CHECK(std::memcmp(r.local_gid.raw, req.local_gid.raw, 16) == 0);
  CHECK(std::memcmp(r.remote_gid.raw, req.remote_gid.raw, 16) == 0);
  CHECK(r.hop_limit == req.hop_limit);
  CHECK(r.sl == req.sl);
  CHECK(r.subnet_local == req.subnet_local);
  // Byte 94 of the message: SL (7:4), subnet local (3), reserved.
  CHECK(mad[24 + 94] == 0xA8);
  CHECK(r.local_ack_timeout == req.local_ack_timeout);
  CHECK(r.ip.src_port == req.ip.src_port);
  CHECK(r.ip.src_ip == req.ip.src_ip);
  CHECK(r.ip.dst_ip == req.ip.dst_ip);
  CHECK(private_data_as_given(r.private_data, kPrivate, kReqUserPrivateData));
  CHECK(remote_comm_id(Message{r}) == 0);
  CHECK(mad[24 + 140] == 0x00);  // rdma_cm header version
  CHECK(mad[24 + 141] == 0x40);  // IPv4

  Mra mra;
  mra.transaction_id = 9;
  mra.local_comm_id = 1;
  mra.remote_comm_id = 2;
  mra.message_mraed = 1;
  mra.service_timeout = 21;
  mra.private_data = kPrivate;
  const Mra a = round_trip(mra, mad);
  CHECK(a.remote_comm_id == 2);
  CHECK(a.message_mraed == 1);
  CHECK(a.service_timeout == 21);
  CHECK(private_data_as_given(a.private_data, kPrivate, 222));

  Rej rej;
  rej.transaction_id = 9;
  rej.remote_comm_id = 5;
  rej.message_rejected = 1;
  rej.reason = kRejConsumer;
  rej.private_data = kPrivate;
  const Rej j = round_trip(rej, mad);
  CHECK(j.remote_comm_id == 5);
  CHECK(j.message_rejected == 1);
  CHECK(j.reason == kRejConsumer);
  CHECK(private_data_as_given(j.private_data, kPrivate, 148));

  Rep rep;
  rep.transaction_id = 9;
  rep.local_comm_id = 3;
  rep.remote_comm_id = 4;
  rep.qpn = 0xABCDEF;
  rep.starting_psn = 0x14D50A;
  rep.responder_resources = 2;
  rep.initiator_depth = 5;
  rep.target_ack_delay = 9;
  rep.rnr_retry_count = 3;
  rep.ca_guid = 0x0200000011223344ULL;
  rep.private_data = kPrivate;
  const Rep p = round_trip(rep, mad);
  CHECK(p.remote_comm_id == 4);
  CHECK(p.qpn == rep.qpn);
  CHECK(p.starting_psn == rep.starting_psn);
  CHECK(p.responder_resources == 2);
  CHECK(p.initiator_depth == 5);
  CHECK(p.target_ack_delay == 9);
  CHECK(p.rnr_retry_count == 3);
  CHECK(p.ca_guid == rep.ca_guid);
  CHECK(private_data_as_given(p.private_data, kPrivate, 196));
  const auto qp = announced_qp(Message{p});
  REQUIRE(qp.has_value());
  CHECK(qp->qpn == rep.qpn);
  CHECK(qp->starting_psn == rep.starting_psn);

  const Rtu t = round_trip(
      Rtu{.transaction_id = 9, .local_comm_id = 6, .remote_comm_id = 7, .private_data = kPrivate},
      mad);
  CHECK(t.remote_comm_id == 7);
  CHECK(private_data_as_given(t.private_data, kPrivate, 224));
  CHECK_FALSE(announced_qp(Message{t}).has_value());

  const Dreq q = round_trip(Dreq{.transaction_id = 9,
                                 .local_comm_id = 6,
                                 .remote_comm_id = 7,
                                 .remote_qpn = 0x000012,
                                 .private_data = kPrivate},
                            mad);
  CHECK(q.remote_comm_id == 7);
  CHECK(q.remote_qpn == 0x12);
  CHECK(private_data_as_given(q.private_data, kPrivate, 220));

  const Drep e = round_trip(
      Drep{.transaction_id = 9, .local_comm_id = 7, .remote_comm_id = 6, .private_data = kPrivate},
      mad);
  CHECK(e.remote_comm_id == 6);
  CHECK(private_data_as_given(e.private_data, kPrivate, 224));

  // Private data longer than the room is cut, never written past it.
  const std::vector<std::uint8_t> big(300, 0xAB);
  Rtu long_rtu;
  long_rtu.private_data = big;
  const Mad m = encode(long_rtu);
  CHECK(std::all_of(m.begin() + 32, m.end(), [](std::uint8_t b) { return b == 0xAB; }));
}

TEST_CASE("the Linux CM's MADs in rping_cm.pcap") {
  capture::PcapReader reader(std::string(RDMALAB_TEST_DATA) + "/rping_cm.pcap");
  capture::Packet pkt;
  std::vector<Message> mads;
  std::vector<std::vector<std::uint8_t>> raw;
  while (reader.next(pkt)) {
    const auto f = wire::decode_frame(pkt.data, wire::LinkType::Ethernet, pkt.original_length);
    if (!f.ib || f.ib->bth.dest_qp != kGsiQpn) continue;
    raw.emplace_back(f.ib->payload.begin(), f.ib->payload.end());
  }
  for (const auto& r : raw) {
    auto d = decode(r);
    REQUIRE(d.has_value());
    mads.push_back(*d);
  }
  std::vector<std::string_view> names;
  for (const auto& m : mads) names.push_back(attr_name(attr_of(m)));
  CHECK(names == std::vector<std::string_view>{"REQ", "REP", "RTU", "DREQ", "DREP", "REQ", "REJ"});

  const auto& req = std::get<Req>(mads[0]);
  CHECK(req.local_comm_id == 0x743F56B9);
  CHECK((req.service_id & ~0xFFFFULL) == kServiceIdTcp);
  CHECK(req.qpn == 17);
  CHECK(req.starting_psn == 16289924);
  CHECK(req.local_lid == 0xFFFF);
  CHECK(req.remote_lid == 0xFFFF);
  CHECK(wire::mtu_bytes(req.path_mtu) != 0);
  // The GIDs are the IPv4-mapped addresses rdma_cm's header names.
  CHECK(req.local_gid.raw[10] == 0xFF);
  CHECK(req.local_gid.raw[11] == 0xFF);
  std::uint32_t gid_ip = 0;
  for (int i = 12; i < 16; ++i) gid_ip = (gid_ip << 8) | req.local_gid.raw[i];
  CHECK(gid_ip == req.ip.src_ip);
  CHECK(req.private_data.size() == kReqUserPrivateData);

  const auto& rep = std::get<Rep>(mads[1]);
  CHECK(rep.remote_comm_id == req.local_comm_id);
  CHECK(rep.local_comm_id == 0x773F56B9);
  CHECK(rep.qpn == 17);
  CHECK(rep.starting_psn == 1365258);

  // Every MAD of the connection carries the active side's transaction ID.
  for (std::size_t i = 0; i < 5; ++i) CHECK(transaction_id(mads[i]) == req.transaction_id);

  const auto& dreq = std::get<Dreq>(mads[3]);
  CHECK(dreq.remote_qpn == rep.qpn);

  const auto& rej = std::get<Rej>(mads[6]);
  CHECK(rej.reason == kRejInvalidServiceId);
  CHECK(rej.local_comm_id == 0);
  CHECK(rej.remote_comm_id == std::get<Req>(mads[5]).local_comm_id);

  // The messages without more fields than this codec knows are written back
  // byte for byte as the kernel wrote them.
  for (std::size_t i : {2u, 3u, 4u}) {
    CAPTURE(i);
    const Mad again = encode(mads[i]);
    CHECK(same_bytes(std::span<const std::uint8_t>(raw[i]).first(kMadSize), again));
  }
}

TEST_CASE("a MAD cut short at any length is refused, reading none of what is missing") {
  Req req;
  req.qpn = 5;
  const Mad full = encode(req);
  for (std::size_t n = 0; n < kMadSize; ++n) {
    CAPTURE(n);
    // A buffer of exactly n bytes: reading past it is caught by the
    // address sanitizer (the asan preset).
    const auto cut = std::make_unique<std::uint8_t[]>(n == 0 ? 1 : n);
    std::memcpy(cut.get(), full.data(), n);
    CHECK_FALSE(decode(std::span<const std::uint8_t>(cut.get(), n)).has_value());
  }
  CHECK(decode(full).has_value());

  // Not CM: another base version, class or attribute.
  Mad other = full;
  other[0] = 2;
  CHECK_FALSE(decode(other).has_value());
  other = full;
  other[1] = 0x04;
  CHECK_FALSE(decode(other).has_value());
  for (const std::uint16_t id :
       std::array<std::uint16_t, 5>{0x0000, 0x000F, 0x0017, 0x0019, 0xFFFF}) {
    other = full;
    other[16] = static_cast<std::uint8_t>(id >> 8);
    other[17] = static_cast<std::uint8_t>(id);
    CHECK_FALSE(decode(other).has_value());
  }
}

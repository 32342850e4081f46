// CM MAD layouts: IBTA vol. 1, 13.4.2 (the 24-byte MAD common header) and
// 12.6.5 (REQ), 12.6.7 (REJ), 12.6.8 (REP), 12.6.9 (RTU), 12.6.10 (DREQ),
// 12.6.11 (DREP). Offsets in the comments are from the start of the CM
// message, which follows the MAD header.
#include "rdmalab/wire/cm.hpp"

#include <algorithm>
#include <cstring>

#include "rdmalab/wire/bytes.hpp"

namespace rdmalab::wire::cm {

namespace {

constexpr std::size_t kHeader = 24;
constexpr std::uint8_t kClassVersion = 2;
constexpr std::uint8_t kMethodSend = 0x03;

Mad header(Attr attr, std::uint64_t tid) noexcept {
  Mad m{};
  Writer w(m);
  w.u8(1);  // base version
  w.u8(kMgmtClass);
  w.u8(kClassVersion);
  w.u8(kMethodSend);
  w.u16(0);  // status
  w.u16(0);  // class specific
  w.u64(tid);
  w.u16(static_cast<std::uint16_t>(attr));
  w.u16(0);  // reserved
  w.u32(0);  // attribute modifier
  return m;
}

void put(Mad& m, std::size_t at, std::span<const std::uint8_t> data, std::size_t room) noexcept {
  const std::size_t n = std::min(data.size(), room);
  if (n > 0) std::memcpy(m.data() + kHeader + at, data.data(), n);
}

void put_be(Mad& m, std::size_t at, std::uint64_t v, int bytes) noexcept {
  for (int i = 0; i < bytes; ++i)
    m[kHeader + at + static_cast<std::size_t>(i)] =
        static_cast<std::uint8_t>(v >> (8 * (bytes - 1 - i)));
}

std::uint64_t get_be(std::span<const std::uint8_t> m, std::size_t at, int bytes) noexcept {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | m[kHeader + at + static_cast<std::size_t>(i)];
  return v;
}

}  // namespace

Mad encode_req(const Req& r) noexcept {
  Mad m = header(Attr::Req, r.transaction_id);
  put_be(m, 0, r.local_comm_id, 4);
  put_be(m, 8, r.service_id, 8);
  put_be(m, 16, r.ca_guid, 8);
  // 28: Local Q_Key (0 for RC), 32: Local QPN + Responder Resources,
  // 36: Local EECN (0) + Initiator Depth, 40: Remote EECN (0) + Remote CM
  // Response Timeout + Transport Service Type (0 = RC) + End-to-End Flow Control.
  put_be(m, 32, (std::uint64_t{r.qpn & 0xFFFFFF} << 8) | r.responder_resources, 4);
  put_be(m, 36, r.initiator_depth, 4);
  put_be(m, 40, std::uint64_t{r.cm_response_timeout & 0x1Fu} << 3, 4);
  // 44: Starting PSN + Local CM Response Timeout + Retry Count.
  put_be(m, 44,
         (std::uint64_t{r.starting_psn & 0xFFFFFF} << 8) | ((r.cm_response_timeout & 0x1Fu) << 3) |
             (r.retry_count & 7u),
         4);
  put_be(m, 48, 0xFFFF, 2);  // P_Key
  m[kHeader + 50] =
      static_cast<std::uint8_t>(((r.path_mtu & 0xFu) << 4) | (r.rnr_retry_count & 7u));
  m[kHeader + 51] = static_cast<std::uint8_t>((r.max_cm_retries & 0xFu) << 4);
  // 52: primary path. LIDs are 0xffff on RoCE; the GIDs name the ports.
  put_be(m, 52, 0xFFFF, 2);
  put_be(m, 54, 0xFFFF, 2);
  put(m, 56, r.local_gid.raw, 16);
  put(m, 72, r.remote_gid.raw, 16);
  m[kHeader + 93] = r.hop_limit;
  m[kHeader + 95] = static_cast<std::uint8_t>((r.local_ack_timeout & 0x1Fu) << 3);
  // 96..139: no alternate path. 140: private data, rdma_cm's IP header first.
  m[kHeader + 140] = 0x00;  // rdma_cm header version
  m[kHeader + 141] = 0x40;  // IP version 4
  put_be(m, 142, r.ip.src_port, 2);
  put_be(m, 144 + 12, r.ip.src_ip, 4);
  put_be(m, 160 + 12, r.ip.dst_ip, 4);
  put(m, 140 + kIpHeaderSize, r.private_data, kReqPrivateData - kIpHeaderSize);
  return m;
}

Mad encode_rep(const Rep& r) noexcept {
  Mad m = header(Attr::Rep, r.transaction_id);
  put_be(m, 0, r.local_comm_id, 4);
  put_be(m, 4, r.remote_comm_id, 4);
  put_be(m, 12, std::uint64_t{r.qpn & 0xFFFFFF} << 8, 4);
  put_be(m, 20, std::uint64_t{r.starting_psn & 0xFFFFFF} << 8, 4);
  m[kHeader + 24] = r.responder_resources;
  m[kHeader + 25] = r.initiator_depth;
  m[kHeader + 26] = static_cast<std::uint8_t>((r.target_ack_delay & 0x1Fu) << 3);
  m[kHeader + 27] = static_cast<std::uint8_t>((r.rnr_retry_count & 7u) << 5);
  put_be(m, 28, r.ca_guid, 8);
  put(m, 36, r.private_data, kRepPrivateData);
  return m;
}

Mad encode_rtu(std::uint64_t tid, std::uint32_t local_comm_id,
               std::uint32_t remote_comm_id) noexcept {
  Mad m = header(Attr::Rtu, tid);
  put_be(m, 0, local_comm_id, 4);
  put_be(m, 4, remote_comm_id, 4);
  return m;
}

Mad encode_rej(std::uint64_t tid, std::uint32_t local_comm_id, std::uint32_t remote_comm_id,
               std::uint16_t reason) noexcept {
  Mad m = header(Attr::Rej, tid);
  put_be(m, 0, local_comm_id, 4);
  put_be(m, 4, remote_comm_id, 4);
  put_be(m, 10, reason, 2);  // 8: message rejected = 0 (the REQ), 9: no ARI
  return m;
}

Mad encode_dreq(std::uint64_t tid, std::uint32_t local_comm_id, std::uint32_t remote_comm_id,
                std::uint32_t remote_qpn) noexcept {
  Mad m = header(Attr::Dreq, tid);
  put_be(m, 0, local_comm_id, 4);
  put_be(m, 4, remote_comm_id, 4);
  put_be(m, 8, std::uint64_t{remote_qpn & 0xFFFFFF} << 8, 4);
  return m;
}

Mad encode_drep(std::uint64_t tid, std::uint32_t local_comm_id,
                std::uint32_t remote_comm_id) noexcept {
  Mad m = header(Attr::Drep, tid);
  put_be(m, 0, local_comm_id, 4);
  put_be(m, 4, remote_comm_id, 4);
  return m;
}

bool decode(std::span<const std::uint8_t> m, Decoded& d) noexcept {
  if (m.size() < kMadSize || m[0] != 1 || m[1] != kMgmtClass) return false;
  const auto attr = static_cast<std::uint16_t>((m[16] << 8) | m[17]);
  if (attr < 0x0010 || attr > 0x0016) return false;
  d = Decoded{};
  d.attr = static_cast<Attr>(attr);
  for (int i = 0; i < 8; ++i)
    d.transaction_id = (d.transaction_id << 8) | m[8 + static_cast<std::size_t>(i)];
  d.local_comm_id = static_cast<std::uint32_t>(get_be(m, 0, 4));
  d.remote_comm_id = static_cast<std::uint32_t>(get_be(m, 4, 4));
  switch (d.attr) {
    case Attr::Req:
      d.remote_comm_id = 0;
      d.service_id = get_be(m, 8, 8);
      d.qpn = static_cast<std::uint32_t>(get_be(m, 32, 3));
      d.responder_resources = m[kHeader + 35];
      d.initiator_depth = m[kHeader + 39];
      d.starting_psn = static_cast<std::uint32_t>(get_be(m, 44, 3));
      d.retry_count = m[kHeader + 47] & 7u;
      d.path_mtu = m[kHeader + 50] >> 4;
      d.rnr_retry_count = m[kHeader + 50] & 7u;
      d.local_ack_timeout = m[kHeader + 95] >> 3;
      d.ip.src_port = static_cast<std::uint16_t>(get_be(m, 142, 2));
      d.ip.src_ip = static_cast<std::uint32_t>(get_be(m, 156, 4));
      d.ip.dst_ip = static_cast<std::uint32_t>(get_be(m, 172, 4));
      d.private_data = m.subspan(kHeader + 140 + kIpHeaderSize, kReqPrivateData - kIpHeaderSize);
      break;
    case Attr::Rep:
      d.qpn = static_cast<std::uint32_t>(get_be(m, 12, 3));
      d.starting_psn = static_cast<std::uint32_t>(get_be(m, 20, 3));
      d.responder_resources = m[kHeader + 24];
      d.initiator_depth = m[kHeader + 25];
      d.rnr_retry_count = m[kHeader + 27] >> 5;
      d.private_data = m.subspan(kHeader + 36, kRepPrivateData);
      break;
    case Attr::Rej:
      d.reason = static_cast<std::uint16_t>(get_be(m, 10, 2));
      d.private_data = m.subspan(kHeader + 84, kRejPrivateData);
      break;
    case Attr::Dreq: d.remote_qpn = static_cast<std::uint32_t>(get_be(m, 8, 3)); break;
    default: break;
  }
  return true;
}

}  // namespace rdmalab::wire::cm

// Communication Manager MADs as they go on the wire (IBTA vol. 1, 12.6 and
// 13.4.2): the REQ / REP / RTU handshake, REJ, and DREQ / DREP, each one
// 256-byte MAD carried by a UD SEND Only to QP 1 (the GSI QP) with Q_Key
// 0x80010000. rdma_cm (librdmacm and the kernel's CM) speaks exactly this; the
// simulated fabric writes these MADs and rdmapcap/tshark decode them.
//
// What goes in each field follows what the Linux CM sends over Soft-RoCE
// (tests/data/rping_cm.pcap): Starting PSN is the PSN the sender's own receive
// queue expects first, LIDs are 0xffff on RoCE, the GIDs are the IPv4-mapped
// addresses, and rdma_cm's own header (version, IP version, port, source and
// destination address) opens the REQ's private data.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <span>

namespace rdmalab::wire::cm {

inline constexpr std::uint32_t kGsiQpn = 1;
inline constexpr std::uint32_t kGsiQkey = 0x80010000;
inline constexpr std::uint8_t kMgmtClass = 0x07;
inline constexpr std::size_t kMadSize = 256;
/// rdma_cm's service IDs for TCP-like (RC) ports: RDMA_IB_IP_PS_TCP | port.
inline constexpr std::uint64_t kServiceIdTcp = 0x0000000001060000ULL;

enum class Attr : std::uint16_t {
  Req = 0x0010,
  Mra = 0x0011,
  Rej = 0x0012,
  Rep = 0x0013,
  Rtu = 0x0014,
  Dreq = 0x0015,
  Drep = 0x0016,
};

/// REJ reasons used here (IBTA table 103).
inline constexpr std::uint16_t kRejInvalidServiceId = 8;
inline constexpr std::uint16_t kRejConsumer = 28;

using Mad = std::array<std::uint8_t, kMadSize>;

/// rdma_cm's header at the start of a REQ's private data (36 bytes), for
/// IPv4 addresses (host byte order here).
struct IpHeader {
  std::uint16_t src_port = 0;
  std::uint32_t src_ip = 0;
  std::uint32_t dst_ip = 0;
};
inline constexpr std::size_t kIpHeaderSize = 36;
inline constexpr std::size_t kReqPrivateData = 92;
inline constexpr std::size_t kRepPrivateData = 196;
inline constexpr std::size_t kRejPrivateData = 148;

struct Req {
  std::uint64_t transaction_id = 0;
  std::uint32_t local_comm_id = 0;
  std::uint64_t service_id = 0;
  std::uint64_t ca_guid = 0;
  std::uint32_t qpn = 0;
  std::uint8_t responder_resources = 1;
  std::uint8_t initiator_depth = 1;
  std::uint32_t starting_psn = 0;
  std::uint8_t cm_response_timeout = 20;  // 4.096 us * 2^20 = 4.3 s
  std::uint8_t retry_count = 7;
  std::uint8_t rnr_retry_count = 7;
  std::uint8_t max_cm_retries = 15;
  std::uint8_t path_mtu = IBV_MTU_1024;  // ibv_mtu code
  ibv_gid local_gid{};
  ibv_gid remote_gid{};
  std::uint8_t hop_limit = 64;
  std::uint8_t local_ack_timeout = 19;
  IpHeader ip;
  std::span<const std::uint8_t> private_data;  // after the IP header, at most 56 bytes
};

struct Rep {
  std::uint64_t transaction_id = 0;
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  std::uint32_t qpn = 0;
  std::uint32_t starting_psn = 0;
  std::uint8_t responder_resources = 1;
  std::uint8_t initiator_depth = 1;
  std::uint8_t target_ack_delay = 15;
  std::uint8_t rnr_retry_count = 7;
  std::uint64_t ca_guid = 0;
  std::span<const std::uint8_t> private_data;  // at most 196 bytes
};

/// The MAD common header plus the message; every field not named is zero.
[[nodiscard]] Mad encode_req(const Req& m) noexcept;
[[nodiscard]] Mad encode_rep(const Rep& m) noexcept;
[[nodiscard]] Mad encode_rtu(std::uint64_t tid, std::uint32_t local_comm_id,
                             std::uint32_t remote_comm_id) noexcept;
/// REJ of a REQ (message rejected 0) with `reason`.
[[nodiscard]] Mad encode_rej(std::uint64_t tid, std::uint32_t local_comm_id,
                             std::uint32_t remote_comm_id, std::uint16_t reason) noexcept;
[[nodiscard]] Mad encode_dreq(std::uint64_t tid, std::uint32_t local_comm_id,
                              std::uint32_t remote_comm_id, std::uint32_t remote_qpn) noexcept;
[[nodiscard]] Mad encode_drep(std::uint64_t tid, std::uint32_t local_comm_id,
                              std::uint32_t remote_comm_id) noexcept;

/// What the simulated CM needs back from a received MAD (the analyser's own
/// parser, dissect/cm.hpp, reads what it shows).
struct Decoded {
  Attr attr = Attr::Req;
  std::uint64_t transaction_id = 0;
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  // REQ, REP:
  std::uint32_t qpn = 0;
  std::uint32_t starting_psn = 0;
  std::uint8_t responder_resources = 0;
  std::uint8_t initiator_depth = 0;
  std::uint8_t rnr_retry_count = 0;
  // REQ:
  std::uint64_t service_id = 0;
  std::uint8_t retry_count = 0;
  std::uint8_t path_mtu = 0;
  std::uint8_t local_ack_timeout = 0;
  IpHeader ip;
  // DREQ:
  std::uint32_t remote_qpn = 0;
  // REJ:
  std::uint16_t reason = 0;
  // The consumer's private data (after rdma_cm's IP header in a REQ).
  std::span<const std::uint8_t> private_data;
};

/// Reads a CM MAD; false when `mad` is not one (size, class, attribute).
[[nodiscard]] bool decode(std::span<const std::uint8_t> mad, Decoded& out) noexcept;

}  // namespace rdmalab::wire::cm

// Connection Manager MADs (IBTA vol. 1, ch. 12): the REQ / REP / RTU
// handshake rdma_cm uses to connect two RC QPs. On RoCE they travel as UD
// SEND Only packets to QP 1 (the GSI QP), each carrying one 256-byte MAD
// whose management class is 0x07.
//
// Only the fields that tie a handshake to the conversation it opens are
// decoded: the communication IDs, each side's QPN and starting PSN, and the
// retry counts the requester asked for.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "rdmalab/wire/bytes.hpp"

namespace rdmalab::dissect {

/// CM attribute IDs (IBTA table 97).
enum class CmKind : std::uint16_t {
  Req = 0x0010,
  Mra = 0x0011,
  Rej = 0x0012,
  Rep = 0x0013,
  Rtu = 0x0014,
  Dreq = 0x0015,
  Drep = 0x0016,
};

struct CmMad {
  CmKind kind = CmKind::Req;
  std::uint64_t transaction_id = 0;
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;  // 0 in a REQ
  // REQ and REP only:
  std::uint32_t local_qpn = 0;
  std::uint32_t starting_psn = 0;
  // REQ only:
  std::uint64_t service_id = 0;
  std::uint8_t retry_count = 0;  // retry_cnt the requester will use
  std::uint8_t rnr_retry_count = 0;
  std::uint8_t path_mtu_code = 0;  // 1 = 256 ... 5 = 4096
  // REJ only: the reason (IBTA table 103; 8 = invalid service ID).
  std::uint16_t reject_reason = 0;
};

/// "REQ", "REP", "RTU", ...
[[nodiscard]] std::string_view cm_kind_name(CmKind k) noexcept;

/// Parses the payload of a UD packet to QP 1 as a CM MAD; nullopt when it is
/// not one (another management class, an unknown attribute, too short).
[[nodiscard]] std::optional<CmMad> parse_cm_mad(wire::Bytes mad) noexcept;

/// Path MTU in bytes for an IBTA MTU code (1..5), 0 otherwise.
[[nodiscard]] constexpr std::uint32_t mtu_from_code(std::uint8_t code) noexcept {
  return code >= 1 && code <= 5 ? 128u << code : 0u;
}

}  // namespace rdmalab::dissect

// Communication Manager MADs as they go on the wire (IBTA vol. 1, 12.6 and
// 13.4.2): the REQ / REP / RTU handshake, MRA, REJ, and DREQ / DREP, each one
// 256-byte MAD carried by a UD SEND Only to QP 1 (the GSI QP) with Q_Key
// 0x80010000. rdma_cm (librdmacm and the kernel's CM) speaks exactly this.
//
// The one codec of the project: the simulated CM (lib/sim) encodes the MADs
// it sends and decodes those it receives with it, and the analyser (under
// rdmapcap and the Wireshark plugin) decodes the MADs of a capture with it. Each
// message is one struct; encode() writes it, decode() reads it back, both from
// the same field layout (src/cm.cpp).
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
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace rdmalab::wire::cm {

inline constexpr std::uint32_t kGsiQpn = 1;
inline constexpr std::uint32_t kGsiQkey = 0x80010000;
inline constexpr std::uint8_t kMgmtClass = 0x07;
/// Every MAD is this long: the common header, then the CM message.
inline constexpr std::size_t kMadSize = 256;
/// The MAD common header (IBTA 13.4.2).
inline constexpr std::size_t kMadHeaderSize = 24;
/// The CM message after it; every message ends with its private data.
inline constexpr std::size_t kMessageSize = kMadSize - kMadHeaderSize;
/// rdma_cm's service IDs for TCP-like (RC) ports: RDMA_IB_IP_PS_TCP | port.
inline constexpr std::uint64_t kServiceIdTcp = 0x0000000001060000ULL;

/// CM attribute IDs (IBTA table 97 / 12.6.3).
enum class Attr : std::uint16_t {
  Req = 0x0010,
  Mra = 0x0011,
  Rej = 0x0012,
  Rep = 0x0013,
  Rtu = 0x0014,
  Dreq = 0x0015,
  Drep = 0x0016,
};

/// What is known per attribute: its name and where the consumer's private
/// data lies in the message (it always runs to the message's end).
struct AttrInfo {
  Attr attr;
  std::string_view name;  // "REQ", "REP", ...
  std::size_t private_data_offset;
  std::size_t private_data_size;
};

/// One row per attribute, in the order of their IDs (IBTA 12.6.5 - 12.6.11).
inline constexpr std::array<AttrInfo, 7> kAttrs{{
    {Attr::Req, "REQ", 140, 92},
    {Attr::Mra, "MRA", 10, 222},
    {Attr::Rej, "REJ", 84, 148},
    {Attr::Rep, "REP", 36, 196},
    {Attr::Rtu, "RTU", 8, 224},
    {Attr::Dreq, "DREQ", 12, 220},
    {Attr::Drep, "DREP", 8, 224},
}};

namespace detail {
constexpr bool every_attr_has_its_row() noexcept {
  constexpr auto first = static_cast<std::size_t>(Attr::Req);
  if (kAttrs.size() != static_cast<std::size_t>(Attr::Drep) - first + 1) return false;
  for (std::size_t i = 0; i < kAttrs.size(); ++i) {
    const AttrInfo& a = kAttrs[i];
    if (static_cast<std::size_t>(a.attr) != first + i || a.name.empty()) return false;
    if (a.private_data_offset + a.private_data_size != kMessageSize) return false;
  }
  return true;
}
}  // namespace detail
static_assert(detail::every_attr_has_its_row(),
              "kAttrs: one row per Attr enumerator, in ID order, private data to the end");

/// The row of a CM attribute ID; nullptr when the ID is not one.
[[nodiscard]] constexpr const AttrInfo* find_attr(std::uint16_t id) noexcept {
  const auto first = static_cast<std::size_t>(Attr::Req);
  if (std::size_t{id} < first || std::size_t{id} >= first + kAttrs.size()) return nullptr;
  return &kAttrs[std::size_t{id} - first];
}
/// "REQ", "REP", ...; "?" for a value that is not an enumerator.
[[nodiscard]] constexpr std::string_view attr_name(Attr a) noexcept {
  const AttrInfo* info = find_attr(static_cast<std::uint16_t>(a));
  return info != nullptr ? info->name : std::string_view("?");
}

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
/// The private data an rdma_cm consumer may give a REQ: what rdma_cm's
/// header leaves of it (56 bytes).
inline constexpr std::size_t kReqUserPrivateData = kAttrs[0].private_data_size - kIpHeaderSize;

/// rdma_conn_param: what the consumers on either side put in, and read from,
/// a REQ or a REP. The simulated CM and the verbs wrapper share it.
struct ConnParam {
  std::vector<std::uint8_t> private_data;
  std::uint8_t responder_resources = 1;
  std::uint8_t initiator_depth = 1;
  std::uint8_t retry_count = 7;
  std::uint8_t rnr_retry_count = 7;
  std::uint32_t qp_num = 0;
};

// The messages. Fields not named here are written as zero and not read.
// Private data: on encode, at most the room the message has (the rest is
// zero); on decode, the whole room, as a view into the decoded MAD.

/// 12.6.5. The remote communication ID's place is reserved in a REQ.
struct Req {
  static constexpr Attr kAttr = Attr::Req;
  std::uint64_t transaction_id = 0;
  std::uint32_t local_comm_id = 0;
  std::uint64_t service_id = 0;
  std::uint64_t ca_guid = 0;
  std::uint32_t qpn = 0;
  std::uint8_t responder_resources = 1;
  std::uint8_t initiator_depth = 1;
  std::uint8_t remote_cm_response_timeout = 20;  // 4.096 us * 2^20 = 4.3 s
  std::uint32_t starting_psn = 0;
  std::uint8_t local_cm_response_timeout = 20;
  std::uint8_t retry_count = 7;
  std::uint16_t pkey = 0xFFFF;
  std::uint8_t path_mtu = IBV_MTU_1024;  // the IBTA MTU code, as ibv_mtu
  std::uint8_t rnr_retry_count = 7;
  std::uint8_t max_cm_retries = 15;
  std::uint16_t local_lid = 0xFFFF;  // primary path; no LIDs on RoCE
  std::uint16_t remote_lid = 0xFFFF;
  ibv_gid local_gid{};
  ibv_gid remote_gid{};
  std::uint8_t hop_limit = 64;
  std::uint8_t sl = 0;            // the path's service level (4 bits)
  std::uint8_t subnet_local = 0;  // 1: both ends in one IB subnet (no router)
  std::uint8_t local_ack_timeout = 19;
  IpHeader ip;
  std::span<const std::uint8_t> private_data;  // after the IP header: kReqUserPrivateData
};

/// 12.6.6.
struct Mra {
  static constexpr Attr kAttr = Attr::Mra;
  std::uint64_t transaction_id = 0;
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  std::uint8_t message_mraed = 0;  // 0 REQ, 1 REP, 2 LAP
  std::uint8_t service_timeout = 0;
  std::span<const std::uint8_t> private_data;
};

/// 12.6.7.
struct Rej {
  static constexpr Attr kAttr = Attr::Rej;
  std::uint64_t transaction_id = 0;
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  std::uint8_t message_rejected = 0;  // 0 REQ, 1 REP, 2 no message
  std::uint16_t reason = 0;
  std::span<const std::uint8_t> private_data;
};

/// 12.6.8.
struct Rep {
  static constexpr Attr kAttr = Attr::Rep;
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
  std::span<const std::uint8_t> private_data;
};

/// 12.6.9.
struct Rtu {
  static constexpr Attr kAttr = Attr::Rtu;
  std::uint64_t transaction_id = 0;
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  std::span<const std::uint8_t> private_data;
};

/// 12.6.10.
struct Dreq {
  static constexpr Attr kAttr = Attr::Dreq;
  std::uint64_t transaction_id = 0;
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  std::uint32_t remote_qpn = 0;
  std::span<const std::uint8_t> private_data;
};

/// 12.6.11.
struct Drep {
  static constexpr Attr kAttr = Attr::Drep;
  std::uint64_t transaction_id = 0;
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  std::span<const std::uint8_t> private_data;
};

/// Any CM message; the alternatives are in kAttrs' order.
using Message = std::variant<Req, Mra, Rej, Rep, Rtu, Dreq, Drep>;

namespace detail {
template <std::size_t... I>
constexpr bool message_matches_attrs(std::index_sequence<I...>) noexcept {
  return std::variant_size_v<Message> == kAttrs.size() &&
         ((std::variant_alternative_t<I, Message>::kAttr == kAttrs[I].attr) && ...);
}
}  // namespace detail
static_assert(detail::message_matches_attrs(std::make_index_sequence<kAttrs.size()>{}),
              "Message: one alternative per kAttrs row, in the same order");

/// The MAD common header plus the message.
[[nodiscard]] Mad encode(const Req& m) noexcept;
[[nodiscard]] Mad encode(const Mra& m) noexcept;
[[nodiscard]] Mad encode(const Rej& m) noexcept;
[[nodiscard]] Mad encode(const Rep& m) noexcept;
[[nodiscard]] Mad encode(const Rtu& m) noexcept;
[[nodiscard]] Mad encode(const Dreq& m) noexcept;
[[nodiscard]] Mad encode(const Drep& m) noexcept;
[[nodiscard]] Mad encode(const Message& m) noexcept;

/// Reads a CM MAD (a UD payload to QP 1); nullopt when it is not one: shorter
/// than a MAD, another base version or management class, or an attribute
/// that is not CM's. The message's private data points into `mad`.
[[nodiscard]] std::optional<Message> decode(std::span<const std::uint8_t> mad) noexcept;

[[nodiscard]] inline Attr attr_of(const Message& m) noexcept {
  return kAttrs[m.index()].attr;
}
[[nodiscard]] inline std::uint64_t transaction_id(const Message& m) noexcept {
  return std::visit([](const auto& x) { return x.transaction_id; }, m);
}
[[nodiscard]] inline std::uint32_t local_comm_id(const Message& m) noexcept {
  return std::visit([](const auto& x) { return x.local_comm_id; }, m);
}
/// 0 for a REQ (the field is reserved there).
[[nodiscard]] inline std::uint32_t remote_comm_id(const Message& m) noexcept {
  return std::visit(
      [](const auto& x) -> std::uint32_t {
        if constexpr (requires { x.remote_comm_id; })
          return x.remote_comm_id;
        else
          return 0;
      },
      m);
}

/// The QP a REQ or a REP announces: its number and the PSN its receive queue
/// expects first. nullopt for the other messages.
struct AnnouncedQp {
  std::uint32_t qpn = 0;
  std::uint32_t starting_psn = 0;
};
[[nodiscard]] inline std::optional<AnnouncedQp> announced_qp(const Message& m) noexcept {
  if (const auto* req = std::get_if<Req>(&m)) return AnnouncedQp{req->qpn, req->starting_psn};
  if (const auto* rep = std::get_if<Rep>(&m)) return AnnouncedQp{rep->qpn, rep->starting_psn};
  return std::nullopt;
}

}  // namespace rdmalab::wire::cm

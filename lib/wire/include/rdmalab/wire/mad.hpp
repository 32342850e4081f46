// Management datagrams (IBTA vol. 1, 13.4): the common MAD header every
// management packet starts with, and a one-line name for the ones an
// InfiniBand capture is full of — subnet management (SMPs on QP 0), subnet
// administration (SA queries such as PathRecord, on QP 1), performance
// management, and the CM (whose messages wire::cm decodes in full).
//
// The names follow the spec's method and attribute names the way Wireshark's
// infiniband dissector prints them ("SubnGet(SMInfo)",
// "SubnAdmGetResp(PathRecord)"), so a line of ours can be found in tshark's
// output. Attribute IDs: the kernel's include/rdma/ib_smi.h and ib_sa.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rdmalab/wire/bytes.hpp"

namespace rdmalab::wire::mad {

inline constexpr std::size_t kHeaderSize = 24;

/// Management classes (13.4.4).
inline constexpr std::uint8_t kClassSubnLidRouted = 0x01;
inline constexpr std::uint8_t kClassSubnDirectedRoute = 0x81;
inline constexpr std::uint8_t kClassSubnAdm = 0x03;
inline constexpr std::uint8_t kClassPerfMgt = 0x04;
inline constexpr std::uint8_t kClassBoardMgt = 0x05;
inline constexpr std::uint8_t kClassDevMgt = 0x06;
inline constexpr std::uint8_t kClassComMgt = 0x07;  ///< the CM
inline constexpr std::uint8_t kClassSnmp = 0x08;
inline constexpr std::uint8_t kClassCongestionMgt = 0x21;

/// The common MAD header (13.4.2), 24 bytes, big-endian fields.
struct Header {
  std::uint8_t base_version = 0;
  std::uint8_t mgmt_class = 0;
  std::uint8_t class_version = 0;
  std::uint8_t method = 0;  ///< bit 7: a response
  std::uint16_t status = 0;
  std::uint16_t class_specific = 0;
  std::uint64_t transaction_id = 0;
  std::uint16_t attr_id = 0;
  std::uint32_t attr_modifier = 0;

  [[nodiscard]] bool is_response() const noexcept { return (method & 0x80) != 0; }
  [[nodiscard]] bool is_subnet_management() const noexcept {
    return mgmt_class == kClassSubnLidRouted || mgmt_class == kClassSubnDirectedRoute;
  }
};

/// nullopt when fewer than 24 bytes.
[[nodiscard]] std::optional<Header> parse_header(Bytes mad) noexcept;

/// The class's name ("SubnMgt", "SubnAdm", "PerfMgt", "CM", ...), empty when
/// the class is not one named here.
[[nodiscard]] std::string_view class_name(std::uint8_t mgmt_class) noexcept;
/// The method's name without a class prefix ("Get", "GetResp", "Set",
/// "Trap", "GetTable", ...), empty when unknown.
[[nodiscard]] std::string_view method_name(std::uint8_t method) noexcept;
/// The attribute's name in its class ("SMInfo", "PortInfo", "PathRecord",
/// "PortCounters", "ConnectRequest", ...), empty when unknown.
[[nodiscard]] std::string_view attribute_name(std::uint8_t mgmt_class,
                                              std::uint16_t attr_id) noexcept;

/// One line: "SubnGet(SMInfo)", "SubnAdmGetResp(PathRecord)",
/// "PerfGet(PortCounters)", "CM: ConnectRequest"; numbers where a name is
/// unknown ("MAD class 0x0A Get(0x0010)").
[[nodiscard]] std::string summary(const Header& h);

}  // namespace rdmalab::wire::mad

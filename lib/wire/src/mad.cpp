// Management datagram headers and their one-line names (see mad.hpp).
#include "rdmalab/wire/mad.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace rdmalab::wire::mad {

namespace {

struct Named {
  std::uint16_t id;
  std::string_view name;
};

template <std::size_t N>
std::string_view lookup(const std::array<Named, N>& table, std::uint16_t id) noexcept {
  for (const Named& n : table)
    if (n.id == id) return n.name;
  return {};
}

// 13.4.5 (methods).
constexpr std::array<Named, 16> kMethods{{
    {0x01, "Get"},
    {0x02, "Set"},
    {0x81, "GetResp"},
    {0x03, "Send"},
    {0x05, "Trap"},
    {0x06, "Report"},
    {0x86, "ReportResp"},
    {0x07, "TrapRepress"},
    {0x12, "GetTable"},
    {0x92, "GetTableResp"},
    {0x13, "GetTraceTable"},
    {0x93, "GetTraceTableResp"},
    {0x14, "GetMulti"},
    {0x94, "GetMultiResp"},
    {0x15, "Delete"},
    {0x95, "DeleteResp"},
}};

// 14.2.5 (subnet management attributes; ib_smi.h).
constexpr std::array<Named, 16> kSmpAttrs{{
    {0x0001, "ClassPortInfo"},
    {0x0002, "Notice"},
    {0x0010, "NodeDescription"},
    {0x0011, "NodeInfo"},
    {0x0012, "SwitchInfo"},
    {0x0014, "GUIDInfo"},
    {0x0015, "PortInfo"},
    {0x0016, "P_KeyTable"},
    {0x0017, "SLtoVLMappingTable"},
    {0x0018, "VLArbitrationTable"},
    {0x0019, "LinearForwardingTable"},
    {0x001A, "RandomForwardingTable"},
    {0x001B, "MulticastForwardingTable"},
    {0x0020, "SMInfo"},
    {0x0030, "VendorDiag"},
    {0x0031, "LedInfo"},
}};

// 15.2.5 (subnet administration attributes; ib_sa.h).
constexpr std::array<Named, 22> kSaAttrs{{
    {0x0001, "ClassPortInfo"},
    {0x0002, "Notice"},
    {0x0003, "InformInfo"},
    {0x0011, "NodeRecord"},
    {0x0012, "PortInfoRecord"},
    {0x0013, "SLtoVLMappingTableRecord"},
    {0x0014, "SwitchInfoRecord"},
    {0x0015, "LinearForwardingTableRecord"},
    {0x0016, "RandomForwardingTableRecord"},
    {0x0017, "MulticastForwardingTableRecord"},
    {0x0018, "SMInfoRecord"},
    {0x0020, "LinkRecord"},
    {0x0030, "GuidInfoRecord"},
    {0x0031, "ServiceRecord"},
    {0x0033, "P_KeyTableRecord"},
    {0x0035, "PathRecord"},
    {0x0036, "VLArbitrationTableRecord"},
    {0x0038, "MCMemberRecord"},
    {0x0039, "TraceRecord"},
    {0x003A, "MultiPathRecord"},
    {0x003B, "ServiceAssociationRecord"},
    {0x00F3, "InformInfoRecord"},
}};

// 16.1.3 (performance management attributes; infiniband-diags' perfquery).
constexpr std::array<Named, 10> kPerfAttrs{{
    {0x0001, "ClassPortInfo"},
    {0x0010, "PortSamplesControl"},
    {0x0011, "PortSamplesResult"},
    {0x0012, "PortCounters"},
    {0x0015, "PortRcvErrorDetails"},
    {0x0016, "PortXmitDiscardDetails"},
    {0x0017, "PortOpRcvCounters"},
    {0x0018, "PortFlowCtlCounters"},
    {0x001D, "PortCountersExtended"},
    {0x001E, "PortSamplesResultExtended"},
}};

// 16.7.3 (communication management attributes), as Wireshark names them.
constexpr std::array<Named, 12> kCmAttrs{{
    {0x0001, "ClassPortInfo"},
    {0x0010, "ConnectRequest"},
    {0x0011, "MsgRcptAck"},
    {0x0012, "ConnectReject"},
    {0x0013, "ConnectReply"},
    {0x0014, "ReadyToUse"},
    {0x0015, "DisconnectRequest"},
    {0x0016, "DisconnectReply"},
    {0x0017, "ServiceIDResReq"},
    {0x0018, "ServiceIDResReqResp"},
    {0x0019, "LoadAlternatePath"},
    {0x001A, "AlternatePathResponse"},
}};

}  // namespace

std::optional<Header> parse_header(Bytes m) noexcept {
  if (m.size() < kHeaderSize) return std::nullopt;
  Header h;
  h.base_version = m[0];
  h.mgmt_class = m[1];
  h.class_version = m[2];
  h.method = m[3];
  h.status = load_be16(&m[4]);
  h.class_specific = load_be16(&m[6]);
  h.transaction_id = std::uint64_t{load_be32(&m[8])} << 32 | load_be32(&m[12]);
  h.attr_id = load_be16(&m[16]);
  h.attr_modifier = load_be32(&m[20]);
  return h;
}

std::string_view class_name(std::uint8_t c) noexcept {
  switch (c) {
    case kClassSubnLidRouted:
    case kClassSubnDirectedRoute: return "SubnMgt";
    case kClassSubnAdm: return "SubnAdm";
    case kClassPerfMgt: return "PerfMgt";
    case kClassBoardMgt: return "BM";
    case kClassDevMgt: return "DevMgt";
    case kClassComMgt: return "CM";
    case kClassSnmp: return "SNMP";
    case kClassCongestionMgt: return "CC";
    default: return {};
  }
}

std::string_view method_name(std::uint8_t method) noexcept {
  return lookup(kMethods, method);
}

std::string_view attribute_name(std::uint8_t c, std::uint16_t attr) noexcept {
  switch (c) {
    case kClassSubnLidRouted:
    case kClassSubnDirectedRoute: return lookup(kSmpAttrs, attr);
    case kClassSubnAdm: return lookup(kSaAttrs, attr);
    case kClassPerfMgt: return lookup(kPerfAttrs, attr);
    case kClassComMgt: return lookup(kCmAttrs, attr);
    default: return {};
  }
}

std::string summary(const Header& h) {
  const std::string_view attr = attribute_name(h.mgmt_class, h.attr_id);
  const std::string attr_text =
      attr.empty() ? fmt::format("0x{:04X}", h.attr_id) : std::string(attr);
  if (h.mgmt_class == kClassComMgt) return fmt::format("CM: {}", attr_text);
  const std::string_view method = method_name(h.method);
  const std::string method_text =
      method.empty() ? fmt::format("Method0x{:02X}", h.method) : std::string(method);
  std::string_view prefix;
  switch (h.mgmt_class) {
    case kClassSubnLidRouted:
    case kClassSubnDirectedRoute: prefix = "Subn"; break;
    case kClassSubnAdm: prefix = "SubnAdm"; break;
    case kClassPerfMgt: prefix = "Perf"; break;
    default: break;
  }
  if (prefix.empty())
    return fmt::format("MAD class 0x{:02X} {}({})", h.mgmt_class, method_text, attr_text);
  return fmt::format("{}{}({})", prefix, method_text, attr_text);
}

}  // namespace rdmalab::wire::mad

// CM MAD layouts: IBTA vol. 1, 13.4.2 (MAD common header, 24 bytes) and
// 12.6.5 / 12.6.8 / 12.6.9 (REQ, REP, RTU). Offsets below are from the start
// of the MAD; the CM message data starts at byte 24.
#include "rdmalab/dissect/cm.hpp"

namespace rdmalab::dissect {

namespace {
constexpr std::uint8_t kCmClass = 0x07;
constexpr std::size_t kHeader = 24;
}  // namespace

std::string_view cm_kind_name(CmKind k) noexcept {
  switch (k) {
    case CmKind::Req: return "REQ";
    case CmKind::Mra: return "MRA";
    case CmKind::Rej: return "REJ";
    case CmKind::Rep: return "REP";
    case CmKind::Rtu: return "RTU";
    case CmKind::Dreq: return "DREQ";
    case CmKind::Drep: return "DREP";
  }
  return "?";
}

std::optional<CmMad> parse_cm_mad(wire::Bytes mad) noexcept {
  wire::Reader r(mad);
  std::uint8_t base_version = 0, mgmt_class = 0, class_version = 0, method = 0;
  std::uint16_t status = 0, class_specific = 0, attr = 0, reserved = 0;
  CmMad m;
  if (!r.u8(base_version) || !r.u8(mgmt_class) || !r.u8(class_version) || !r.u8(method) ||
      !r.u16(status) || !r.u16(class_specific) || !r.u64(m.transaction_id) || !r.u16(attr) ||
      !r.u16(reserved) || !r.skip(4))
    return std::nullopt;
  if (base_version != 1 || mgmt_class != kCmClass) return std::nullopt;
  if (attr < 0x0010 || attr > 0x0016) return std::nullopt;
  m.kind = static_cast<CmKind>(attr);
  wire::Reader d(mad, kHeader);
  if (!d.u32(m.local_comm_id) || !d.u32(m.remote_comm_id)) return std::nullopt;
  if (m.kind == CmKind::Req) {
    // 8: service ID, 16: local CA GUID, 24: reserved, 28: local Q_Key,
    // 32: local QPN (24) + responder resources, 36: local EECN + initiator
    // depth, 40: remote EECN + flags, 44: starting PSN (24) + local CM
    // response timeout (5) + retry count (3), 48: P_Key, 50: path MTU (4) +
    // RDC exists (1) + RNR retry count (3).
    std::uint64_t guid = 0;
    std::uint32_t qkey = 0, qpn_word = 0, eecn = 0, reecn = 0, psn_word = 0;
    std::uint16_t pkey = 0;
    std::uint8_t mtu_byte = 0;
    if (!d.u64(m.service_id) || !d.u64(guid) || !d.skip(4) || !d.u32(qkey) || !d.u32(qpn_word) ||
        !d.u32(eecn) || !d.u32(reecn) || !d.u32(psn_word) || !d.u16(pkey) || !d.u8(mtu_byte))
      return std::nullopt;
    m.local_qpn = qpn_word >> 8;
    m.starting_psn = psn_word >> 8;
    m.retry_count = static_cast<std::uint8_t>(psn_word & 0x7);
    m.path_mtu_code = static_cast<std::uint8_t>(mtu_byte >> 4);
    m.rnr_retry_count = static_cast<std::uint8_t>(mtu_byte & 0x7);
  } else if (m.kind == CmKind::Rej) {
    // 8: message rejected (2) + reserved, 9: reject info length (7) +
    // reserved, 10: reason (16).
    std::uint8_t which = 0, info_len = 0;
    if (!d.u8(which) || !d.u8(info_len) || !d.u16(m.reject_reason)) return std::nullopt;
  } else if (m.kind == CmKind::Rep) {
    // 8: local Q_Key, 12: local QPN (24), 16: local EE context, 20: starting
    // PSN (24), 24: responder resources, 25: initiator depth, 26: target ACK
    // delay + failover + flow control, 27: RNR retry count (3) + SRQ.
    std::uint32_t qkey = 0, qpn_word = 0, ee = 0, psn_word = 0, misc = 0;
    if (!d.u32(qkey) || !d.u32(qpn_word) || !d.u32(ee) || !d.u32(psn_word) || !d.u32(misc))
      return std::nullopt;
    m.local_qpn = qpn_word >> 8;
    m.starting_psn = psn_word >> 8;
    m.rnr_retry_count = static_cast<std::uint8_t>((misc >> 5) & 0x7);
  }
  return m;
}

}  // namespace rdmalab::dissect

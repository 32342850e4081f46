#include "rdmalab/wire/opcode.hpp"

#include <algorithm>

namespace rdmalab::wire {
namespace {

using enum Transport;
using enum Operation;
using enum Position;

struct Row {
  Operation op;
  Position pos;
  std::string_view name;
  std::array<Ext, 3> exts;
  std::uint8_t n_ext;
  bool payload;
  bool imm;
  bool inv;
};

// IBTA vol. 1 table 38, operation codes 0x00-0x17 of the RC transport. UC
// uses the first twelve (SEND and WRITE) with the same layout.
constexpr std::array<Row, 24> kRcRows{{
    {Send, First, "SEND First", {}, 0, true, false, false},
    {Send, Middle, "SEND Middle", {}, 0, true, false, false},
    {Send, Last, "SEND Last", {}, 0, true, false, false},
    {Send, Last, "SEND Last with Immediate", {Ext::ImmDt}, 1, true, true, false},
    {Send, Only, "SEND Only", {}, 0, true, false, false},
    {Send, Only, "SEND Only with Immediate", {Ext::ImmDt}, 1, true, true, false},
    {Write, First, "RDMA WRITE First", {Ext::RETH}, 1, true, false, false},
    {Write, Middle, "RDMA WRITE Middle", {}, 0, true, false, false},
    {Write, Last, "RDMA WRITE Last", {}, 0, true, false, false},
    {Write, Last, "RDMA WRITE Last with Immediate", {Ext::ImmDt}, 1, true, true, false},
    {Write, Only, "RDMA WRITE Only", {Ext::RETH}, 1, true, false, false},
    {Write, Only, "RDMA WRITE Only with Immediate", {Ext::RETH, Ext::ImmDt}, 2, true, true, false},
    {ReadRequest, Only, "RDMA READ Request", {Ext::RETH}, 1, false, false, false},
    {ReadResponse, First, "RDMA READ response First", {Ext::AETH}, 1, true, false, false},
    {ReadResponse, Middle, "RDMA READ response Middle", {}, 0, true, false, false},
    {ReadResponse, Last, "RDMA READ response Last", {Ext::AETH}, 1, true, false, false},
    {ReadResponse, Only, "RDMA READ response Only", {Ext::AETH}, 1, true, false, false},
    {Acknowledge, Only, "Acknowledge", {Ext::AETH}, 1, false, false, false},
    {AtomicAcknowledge,
     Only,
     "ATOMIC Acknowledge",
     {Ext::AETH, Ext::AtomicAckETH},
     2,
     false,
     false,
     false},
    {CompareSwap, Only, "CmpSwap", {Ext::AtomicETH}, 1, false, false, false},
    {FetchAdd, Only, "FetchAdd", {Ext::AtomicETH}, 1, false, false, false},
    {Send, Only, "", {}, 0, false, false, false},  // 0x15 reserved: skipped below
    {Send, Last, "SEND Last with Invalidate", {Ext::IETH}, 1, true, false, true},
    {Send, Only, "SEND Only with Invalidate", {Ext::IETH}, 1, true, false, true},
}};

// IBTA 1.5 additions to RC, after the reserved 0x18-0x1B. FLUSH carries its
// FETH before the RETH that names the range (rxe_opcode.c: FETH at offset 12,
// RETH at 16); ATOMIC WRITE carries a RETH and the 8 bytes to write as its
// payload. rxe answers both with an RDMA READ response Only of length zero.
constexpr std::array<Row, 2> kRcRows15{{
    {Flush, Only, "FLUSH", {Ext::FETH, Ext::RETH}, 2, false, false, false},
    {AtomicWrite, Only, "ATOMIC WRITE", {Ext::RETH}, 1, true, false, false},
}};

constexpr OpcodeInfo make(std::uint8_t value, Transport t, const Row& r) {
  return OpcodeInfo{value, t, r.op, r.pos, r.name, r.exts, r.n_ext, r.payload, r.imm, r.inv};
}

// The XRC row of an RC row: requests carry the XRCETH first, before any
// RETH, AtomicETH, ImmDt or IETH (IBTA annex A14; rxe_opcode.c puts it at
// offset 12 of every XRC request); responses are laid out as in RC.
constexpr OpcodeInfo make_xrc(std::uint8_t value, const Row& r) {
  OpcodeInfo o = make(value, XRC, r);
  if (o.is_response()) return o;
  o.ext_storage = {Ext::XRCETH, r.exts[0], r.exts[1]};
  o.ext_count = static_cast<std::uint8_t>(r.n_ext + 1);
  return o;
}

constexpr auto build_table() {
  std::array<OpcodeInfo, 23 + 2 + 12 + 2 + 1 + 23> t{};
  std::size_t n = 0;
  for (std::size_t i = 0; i < kRcRows.size(); ++i)
    if (i != 0x15) t[n++] = make(static_cast<std::uint8_t>(i), RC, kRcRows[i]);
  t[n++] = make(opcode::kRcFlush, RC, kRcRows15[0]);
  t[n++] = make(opcode::kRcAtomicWrite, RC, kRcRows15[1]);
  for (std::uint8_t i = 0; i < 12; ++i)
    t[n++] = make(static_cast<std::uint8_t>(0x20 | i), UC, kRcRows[i]);
  // UD carries a DETH after the BTH (IBTA 9.2, table 38: 0x64, 0x65). Wireshark
  // spells these "SEND only"; we follow it so names compare equal.
  t[n++] = OpcodeInfo{0x64, UD, Send, Only, "SEND only", {Ext::DETH}, 1, true, false, false};
  t[n++] = OpcodeInfo{0x65, UD,   Send, Only, "SEND only with Immediate", {Ext::DETH, Ext::ImmDt},
                      2,    true, true, false};
  // Congestion Notification Packet, RoCEv2 annex A17.9.2: BTH, 16 reserved
  // bytes, ICRC.
  t[n++] = OpcodeInfo{0x81, CNP, Cnp, Only, "CNP", {Ext::CnpPad}, 1, false, false, false};
  for (std::size_t i = 0; i < kRcRows.size(); ++i)
    if (i != 0x15) t[n++] = make_xrc(static_cast<std::uint8_t>(0xA0 | i), kRcRows[i]);
  return t;
}

constexpr auto kTable = build_table();

static_assert(std::is_sorted(kTable.begin(), kTable.end(),
                             [](const OpcodeInfo& a, const OpcodeInfo& b) {
                               return a.value < b.value;
                             }),
              "opcode table must be sorted for lookup");

// Direct index for O(1) lookup in the decoder's hot path.
constexpr auto build_index() {
  std::array<std::int16_t, 256> idx{};
  for (auto& i : idx) i = -1;
  for (std::size_t i = 0; i < kTable.size(); ++i)
    idx[kTable[i].value] = static_cast<std::int16_t>(i);
  return idx;
}
constexpr auto kIndex = build_index();

// Rows by (transport, operation, position, immediate, invalidate): an encoder
// asks for every packet it builds. The first matching row of the table wins,
// as a scan of it would find.
constexpr std::size_t kTransports = static_cast<std::size_t>(Transport::Unknown) + 1;
constexpr std::size_t kOperations = static_cast<std::size_t>(Operation::AtomicWrite) + 1;
constexpr std::size_t kPositions = static_cast<std::size_t>(Position::Only) + 1;
constexpr std::size_t kCombinations = kTransports * kOperations * kPositions * 4;
constexpr std::size_t combination(Transport t, Operation op, Position pos, bool immediate,
                                  bool invalidate) {
  return ((static_cast<std::size_t>(t) * kOperations + static_cast<std::size_t>(op)) * kPositions +
          static_cast<std::size_t>(pos)) *
             4 +
         (immediate ? 1 : 0) + (invalidate ? 2 : 0);
}
constexpr auto build_combination_index() {
  std::array<std::int16_t, kCombinations> idx{};
  for (auto& i : idx) i = -1;
  for (std::size_t i = 0; i < kTable.size(); ++i) {
    const OpcodeInfo& row = kTable[i];
    auto& slot = idx[combination(row.transport, row.operation, row.position, row.has_immediate,
                                 row.has_invalidate)];
    if (slot < 0) slot = static_cast<std::int16_t>(i);
  }
  return idx;
}
constexpr auto kCombinationIndex = build_combination_index();

}  // namespace

std::string_view ext_name(Ext e) noexcept {
  switch (e) {
    case Ext::RETH: return "RETH";
    case Ext::AETH: return "AETH";
    case Ext::AtomicETH: return "AtomicETH";
    case Ext::AtomicAckETH: return "AtomicAckETH";
    case Ext::ImmDt: return "ImmDt";
    case Ext::IETH: return "IETH";
    case Ext::DETH: return "DETH";
    case Ext::CnpPad: return "CNP reserved";
    case Ext::XRCETH: return "XRCETH";
    case Ext::FETH: return "FETH";
  }
  return "?";
}

std::span<const OpcodeInfo> opcode_table() noexcept {
  return kTable;
}

const OpcodeInfo* find_opcode(std::uint8_t value) noexcept {
  const auto i = kIndex[value];
  return i < 0 ? nullptr : &kTable[static_cast<std::size_t>(i)];
}

const OpcodeInfo* find_opcode(Transport t, Operation op, Position pos, bool immediate,
                              bool invalidate) noexcept {
  const std::size_t c = combination(t, op, pos, immediate, invalidate);
  if (c >= kCombinations) return nullptr;  // an enum value outside its range
  const auto i = kCombinationIndex[c];
  return i < 0 ? nullptr : &kTable[static_cast<std::size_t>(i)];
}

std::string_view transport_name(Transport t) noexcept {
  switch (t) {
    case RC: return "RC";
    case UC: return "UC";
    case RD: return "RD";
    case UD: return "UD";
    case CNP: return "CNP";
    case XRC: return "XRC";
    case Unknown: break;
  }
  return "?";
}

Transport transport_of(std::uint8_t opcode) noexcept {
  if (opcode == opcode::kCnp) return CNP;
  switch (opcode >> 5) {
    case 0: return RC;
    case 1: return UC;
    case 2: return RD;
    case 3: return UD;
    case 5: return XRC;
    default: return Unknown;
  }
}

}  // namespace rdmalab::wire

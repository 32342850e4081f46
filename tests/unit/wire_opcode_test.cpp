// The opcode table against IBTA vol. 1 table 38, written out independently here.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "rdmalab/wire/headers.hpp"
#include "rdmalab/wire/opcode.hpp"

using namespace rdmalab::wire;

namespace {
struct Expect {
  std::vector<std::string> exts;
  bool payload;
  Position pos;
};

// value -> extension headers after the BTH, payload?, position.
const std::map<int, Expect> kIbta = {
    {0x00, {{}, true, Position::First}},
    {0x01, {{}, true, Position::Middle}},
    {0x02, {{}, true, Position::Last}},
    {0x03, {{"ImmDt"}, true, Position::Last}},
    {0x04, {{}, true, Position::Only}},
    {0x05, {{"ImmDt"}, true, Position::Only}},
    {0x06, {{"RETH"}, true, Position::First}},
    {0x07, {{}, true, Position::Middle}},
    {0x08, {{}, true, Position::Last}},
    {0x09, {{"ImmDt"}, true, Position::Last}},
    {0x0A, {{"RETH"}, true, Position::Only}},
    {0x0B, {{"RETH", "ImmDt"}, true, Position::Only}},
    {0x0C, {{"RETH"}, false, Position::Only}},
    {0x0D, {{"AETH"}, true, Position::First}},
    {0x0E, {{}, true, Position::Middle}},
    {0x0F, {{"AETH"}, true, Position::Last}},
    {0x10, {{"AETH"}, true, Position::Only}},
    {0x11, {{"AETH"}, false, Position::Only}},
    {0x12, {{"AETH", "AtomicAckETH"}, false, Position::Only}},
    {0x13, {{"AtomicETH"}, false, Position::Only}},
    {0x14, {{"AtomicETH"}, false, Position::Only}},
    {0x16, {{"IETH"}, true, Position::Last}},
    {0x17, {{"IETH"}, true, Position::Only}},
    // IBTA 1.5: FLUSH carries FETH then RETH and no payload; ATOMIC WRITE a
    // RETH and its 8 bytes as payload (Linux rxe_opcode.c gives the same
    // offsets: FETH at 12, RETH at 16; RETH at 12, payload at 28).
    {0x1C, {{"FETH", "RETH"}, false, Position::Only}},
    {0x1D, {{"RETH"}, true, Position::Only}},
    {0x64, {{"DETH"}, true, Position::Only}},
    {0x65, {{"DETH", "ImmDt"}, true, Position::Only}},
    {0x81, {{"CNP reserved"}, false, Position::Only}},
};
const std::map<std::string, std::size_t> kSizes = {
    {"RETH", 16}, {"AETH", 4}, {"AtomicETH", 28},    {"AtomicAckETH", 8}, {"ImmDt", 4},
    {"IETH", 4},  {"DETH", 8}, {"CNP reserved", 16}, {"XRCETH", 4},       {"FETH", 4}};
}  // namespace

TEST_CASE(
    "every RC, UD and CNP opcode (FLUSH and ATOMIC WRITE included) has the IBTA header sequence, "
    "sizes and payload flag") {
  for (const auto& entry : kIbta) {
    const auto value = entry.first;
    const auto& e = entry.second;
    CAPTURE(value);
    const OpcodeInfo* info = find_opcode(static_cast<std::uint8_t>(value));
    REQUIRE(info != nullptr);
    std::vector<std::string> got;
    std::size_t bytes = 0;
    for (Ext x : info->exts()) {
      got.emplace_back(ext_name(x));
      bytes += ext_size(x);
      CHECK(ext_size(x) == kSizes.at(std::string(ext_name(x))));
    }
    CHECK(got == e.exts);
    CHECK(info->ext_bytes() == bytes);
    CHECK(info->has_payload == e.payload);
    CHECK(info->position == e.pos);
  }
}

TEST_CASE("UC opcodes mirror RC SEND and WRITE, and UC has no READ, ACK or atomics") {
  for (int op = 0; op < 0x20; ++op) {
    CAPTURE(op);
    const OpcodeInfo* uc = find_opcode(static_cast<std::uint8_t>(0x20 | op));
    if (op < 0x0C) {
      const OpcodeInfo* rc = find_opcode(static_cast<std::uint8_t>(op));
      REQUIRE(uc != nullptr);
      CHECK(uc->transport == Transport::UC);
      CHECK(uc->name == rc->name);
      CHECK(uc->ext_bytes() == rc->ext_bytes());
      CHECK(uc->position == rc->position);
    } else {
      CHECK(uc == nullptr);
    }
  }
}

TEST_CASE("reserved and RD opcodes are not in the table") {
  for (int v : {0x15, 0x18, 0x1B, 0x1E, 0x1F, 0x40, 0x4C, 0x60, 0x66, 0x80, 0xB5, 0xB8, 0xBC, 0xFF})
    CHECK(find_opcode(static_cast<std::uint8_t>(v)) == nullptr);
}

// XRC (IBTA annex A14): opcode 0xA0 + the RC operation code, for 0x00-0x17.
// Every request carries the 4-byte XRCETH right after the BTH, before RETH,
// AtomicETH, ImmDt or IETH; responses (READ responses, ACK, ATOMIC ACK) are
// laid out as in RC (Linux rxe_opcode.c: XRCETH at offset 12 of every XRC
// request, none in the responses).
TEST_CASE("XRC opcodes are the RC ones at 0xA0 with an XRCETH first in every request") {
  for (int op = 0; op < 0x18; ++op) {
    CAPTURE(op);
    const OpcodeInfo* xrc = find_opcode(static_cast<std::uint8_t>(0xA0 | op));
    const OpcodeInfo* rc = find_opcode(static_cast<std::uint8_t>(op));
    if (op == 0x15) {
      CHECK(xrc == nullptr);
      continue;
    }
    REQUIRE(xrc != nullptr);
    REQUIRE(rc != nullptr);
    CHECK(xrc->transport == Transport::XRC);
    CHECK(xrc->name == rc->name);
    CHECK(xrc->position == rc->position);
    CHECK(xrc->has_payload == rc->has_payload);
    const bool response = op >= 0x0D && op <= 0x12;
    CHECK(xrc->is_response() == response);
    std::vector<Ext> want;
    if (!response) want.push_back(Ext::XRCETH);
    for (Ext e : rc->exts()) want.push_back(e);
    CHECK(std::vector<Ext>(xrc->exts().begin(), xrc->exts().end()) == want);
    CHECK(xrc->ext_bytes() == rc->ext_bytes() + (response ? 0 : 4));
  }
  // The longest: XRC RDMA WRITE Only with Immediate, 12 + 4 + 16 + 4 bytes.
  const OpcodeInfo* w = find_opcode(0xAB);
  REQUIRE(w != nullptr);
  CHECK(kBthSize + w->ext_bytes() == 36);
}

TEST_CASE("the table is sorted and complete: 25 RC + 12 UC + 2 UD + CNP + 23 XRC") {
  const auto t = opcode_table();
  CHECK(t.size() == 25 + 12 + 2 + 1 + 23);
  for (const auto& row : t) CHECK(find_opcode(row.value) == &row);
}

TEST_CASE("names follow Wireshark's opcode strings") {
  CHECK(find_opcode(0x06)->name == "RDMA WRITE First");
  CHECK(find_opcode(0x10)->name == "RDMA READ response Only");
  CHECK(find_opcode(0x12)->name == "ATOMIC Acknowledge");
  CHECK(find_opcode(0x64)->name == "SEND only");
  CHECK(find_opcode(0x1C)->name == "FLUSH");
  CHECK(find_opcode(0x1D)->name == "ATOMIC WRITE");
  CHECK(find_opcode(0xA4)->name == "SEND Only");
}

TEST_CASE("encoders find opcodes by operation") {
  CHECK(find_opcode(Transport::RC, Operation::Write, Position::Only, true)->value == 0x0B);
  CHECK(find_opcode(Transport::RC, Operation::Send, Position::Last, false, true)->value == 0x16);
  CHECK(find_opcode(Transport::UC, Operation::Write, Position::First)->value == 0x26);
  CHECK(find_opcode(Transport::UC, Operation::ReadRequest, Position::Only) == nullptr);
  CHECK(find_opcode(Transport::UD, Operation::Send, Position::Only, true)->value == 0x65);
}

TEST_CASE("the lookup by operation answers as a scan of the table would, for every combination") {
  std::size_t found = 0;
  for (int t = 0; t <= static_cast<int>(Transport::Unknown); ++t)
    for (int op = 0; op <= static_cast<int>(Operation::AtomicWrite); ++op)
      for (int pos = 0; pos <= static_cast<int>(Position::Only); ++pos)
        for (const bool imm : {false, true})
          for (const bool inv : {false, true}) {
            const OpcodeInfo* scan = nullptr;
            for (const OpcodeInfo& row : opcode_table())
              if (static_cast<int>(row.transport) == t && static_cast<int>(row.operation) == op &&
                  static_cast<int>(row.position) == pos && row.has_immediate == imm &&
                  row.has_invalidate == inv) {
                scan = &row;
                break;
              }
            CHECK(find_opcode(static_cast<Transport>(t), static_cast<Operation>(op),
                              static_cast<Position>(pos), imm, inv) == scan);
            found += scan != nullptr ? 1 : 0;
          }
  CHECK(found == opcode_table().size());  // every row is reachable
}

TEST_CASE("transport from the opcode's top bits") {
  CHECK(transport_of(0x04) == Transport::RC);
  CHECK(transport_of(0x2A) == Transport::UC);
  CHECK(transport_of(0x44) == Transport::RD);
  CHECK(transport_of(0x64) == Transport::UD);
  CHECK(transport_of(0x81) == Transport::CNP);
  CHECK(transport_of(0xA4) == Transport::XRC);
  CHECK(transport_name(Transport::UD) == "UD");
}

// MAD headers and the one-line names an InfiniBand capture's management
// traffic gets: the same words tshark prints for SMPs, SA queries and CM
// messages (checked against tshark 4.0 on a real ibdump capture), numbers
// where a name is unknown, and a header cut short refused.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>

#include "rdmalab/wire/cm.hpp"
#include "rdmalab/wire/mad.hpp"

using namespace rdmalab::wire;

namespace {
std::array<std::uint8_t, mad::kHeaderSize> header(std::uint8_t cls, std::uint8_t method,
                                                  std::uint16_t attr) {
  std::array<std::uint8_t, mad::kHeaderSize> h{};
  h[0] = 1;  // base version
  h[1] = cls;
  h[2] = 1;
  h[3] = method;
  h[4] = 0x00;
  h[5] = 0x1C;                                                               // status
  for (std::size_t i = 8; i < 16; ++i) h[i] = static_cast<std::uint8_t>(i);  // TID 08..0F
  h[16] = static_cast<std::uint8_t>(attr >> 8);
  h[17] = static_cast<std::uint8_t>(attr);
  h[20] = 0x80;
  h[23] = 0x05;  // attribute modifier 0x80000005
  return h;
}
std::string name(std::uint8_t cls, std::uint8_t method, std::uint16_t attr) {
  const auto h = mad::parse_header(header(cls, method, attr));
  REQUIRE(h);
  return mad::summary(*h);
}
}  // namespace

TEST_CASE("the common MAD header's fields") {
  const auto bytes = header(mad::kClassSubnAdm, 0x92, 0x0035);
  const auto h = mad::parse_header(bytes);
  REQUIRE(h);
  CHECK(h->base_version == 1);
  CHECK(h->mgmt_class == 0x03);
  CHECK(h->method == 0x92);
  CHECK(h->is_response());
  CHECK(h->status == 0x001C);
  CHECK(h->transaction_id == 0x08090A0B0C0D0E0Full);
  CHECK(h->attr_id == 0x0035);
  CHECK(h->attr_modifier == 0x80000005u);
  CHECK_FALSE(h->is_subnet_management());
  for (std::size_t n = 0; n < mad::kHeaderSize; ++n)
    CHECK_FALSE(mad::parse_header(std::span(bytes).first(n)));
}

TEST_CASE("names as tshark prints them") {
  // The directed-route SMInfo poll an SM sends on QP 0, and its answer.
  CHECK(name(mad::kClassSubnDirectedRoute, 0x01, 0x0020) == "SubnGet(SMInfo)");
  CHECK(name(mad::kClassSubnDirectedRoute, 0x81, 0x0020) == "SubnGetResp(SMInfo)");
  CHECK(name(mad::kClassSubnLidRouted, 0x02, 0x0015) == "SubnSet(PortInfo)");
  // The PathRecord query rdma_cm and IPoIB make of the SA on QP 1.
  CHECK(name(mad::kClassSubnAdm, 0x01, 0x0035) == "SubnAdmGet(PathRecord)");
  CHECK(name(mad::kClassSubnAdm, 0x81, 0x0035) == "SubnAdmGetResp(PathRecord)");
  CHECK(name(mad::kClassSubnAdm, 0x12, 0x0038) == "SubnAdmGetTable(MCMemberRecord)");
  // CM messages: tshark's "CM: ConnectRequest".
  CHECK(name(mad::kClassComMgt, 0x03, 0x0010) == "CM: ConnectRequest");
  CHECK(name(mad::kClassComMgt, 0x03, 0x0014) == "CM: ReadyToUse");
  CHECK(name(mad::kClassPerfMgt, 0x01, 0x0012) == "PerfGet(PortCounters)");
}

TEST_CASE("unknown classes, methods and attributes are shown as numbers") {
  CHECK(name(0x0A, 0x01, 0x0010) == "MAD class 0x0A Get(0x0010)");
  CHECK(name(mad::kClassSubnAdm, 0x7E, 0x0035) == "SubnAdmMethod0x7E(PathRecord)");
  CHECK(name(mad::kClassSubnLidRouted, 0x01, 0xFF00) == "SubnGet(0xFF00)");
  CHECK(name(mad::kClassComMgt, 0x03, 0x0099) == "CM: 0x0099");
  CHECK(mad::class_name(0x0A).empty());
  CHECK(mad::method_name(0x7E).empty());
}

TEST_CASE("the CM's attribute IDs here are wire::cm's") {
  // Both tables name IBTA 16.7.3's IDs: REQ 0x10 ... DREP 0x16.
  for (const cm::AttrInfo& a : cm::kAttrs)
    CHECK_FALSE(mad::attribute_name(mad::kClassComMgt, static_cast<std::uint16_t>(a.attr)).empty());
  CHECK(mad::kClassComMgt == cm::kMgmtClass);
}

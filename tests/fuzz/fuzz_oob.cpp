// libFuzzer target: the out-of-band connection message (verbs::parse_conn_info),
// the one line a peer's TCP socket hands us before any RDMA happens.
//
// Beyond "no crash": a line the parser accepts must survive a round trip.
// format_conn_info(parsed) must parse again, to the same values, and format to
// the same text (the format is canonical). A parser that accepts a field it
// then formats differently, or a formatter whose output its own parser
// refuses, stops the fuzzer with the line that shows it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "rdmalab/verbs/oob.hpp"

namespace {

namespace verbs = rdmalab::verbs;

bool same(const verbs::ConnInfo& a, const verbs::ConnInfo& b) {
  return a.lid == b.lid && a.qpn == b.qpn && a.psn == b.psn &&
         std::memcmp(a.gid.raw, b.gid.raw, sizeof a.gid.raw) == 0 && a.mtu == b.mtu &&
         a.va == b.va && a.rkey == b.rkey && a.len == b.len;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  std::string why;
  const std::optional<verbs::ConnInfo> first = verbs::parse_conn_info(line, &why);
  if (!first) {
    if (why.empty()) std::abort();  // a refusal must say why
    return 0;
  }
  const std::string text = verbs::format_conn_info(*first);
  const std::optional<verbs::ConnInfo> second = verbs::parse_conn_info(text, &why);
  if (!second || !same(*first, *second) || verbs::format_conn_info(*second) != text) std::abort();
  // The same for the host:port form the labs' --connect option takes.
  if (const auto hp = verbs::parse_host_port(line)) {
    if (hp->first.empty()) std::abort();
  }
  return 0;
}

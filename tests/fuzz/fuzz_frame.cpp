// libFuzzer target: one frame at a time, fast enough to go deep.
//
// fuzz_dissect reads whole captures and runs every renderer; most of its time
// goes to the pcap framing and the text renderers, so it explores the header
// parsers slowly. This target gives the fuzzer the parsers themselves: the
// input is one frame (at most kMaxFrame bytes, the rest ignored), its first
// byte chooses the link type and how much of the frame the capture kept (the
// snap length), and the frame goes through decode_record, the analyser and the
// JSON renderer, as rdmapcap does with every packet. A second copy of the same
// frame is fed 1 µs later, so the analyser's duplicate and resend paths run.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/dissect/render.hpp"
#include "rdmalab/wire/bytes.hpp"

namespace {

namespace dissect = rdmalab::dissect;
using rdmalab::wire::Bytes;
using rdmalab::wire::LinkType;

/// Frames longer than a 4096-byte MTU packet with its headers teach the
/// parsers nothing more, and short inputs keep the rate high.
constexpr std::size_t kMaxFrame = 4096 + 128;

LinkType link_of(std::uint8_t v) {
  switch (v % 8) {
    case 0: return LinkType::Ethernet;
    case 1: return LinkType::RawIp;
    case 2: return LinkType::LinuxSll;
    case 3: return LinkType::Ipv4;
    case 4: return LinkType::Ipv6;
    case 5: return LinkType::Erf;         // ibdump's ERF records
    case 6: return LinkType::Infiniband;  // a bare IB packet (rdmasniff)
    default: return LinkType::LinuxSll2;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const LinkType link = link_of(data[0]);
  // Bits 3-7 of the first byte: 0 = the capture kept the whole frame, else
  // the frame on the wire was that many bytes longer than what was kept.
  const std::size_t cut = data[0] >> 3;
  const Bytes frame = Bytes(data + 1, size - 1).first(std::min(size - 1, kMaxFrame));

  dissect::Analyzer analyzer{dissect::AnalyzerOptions{16}};
  dissect::PacketRecord rec;
  std::string out;
  for (std::uint64_t n = 1; n <= 2; ++n) {
    dissect::decode_record(frame, frame.size() + cut, link, n, static_cast<std::int64_t>(n) * 1000,
                           rec);
    analyzer.feed(rec);
    out.clear();
    dissect::render_packet_json(rec, out);
  }
  for (const dissect::Event& e : analyzer.finish()) out += dissect::describe(e);
  return 0;
}

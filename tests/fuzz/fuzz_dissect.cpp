// libFuzzer target over the decoder and the analyser.
//
// The input is read as a classic pcap file (so the seed corpus is simply the
// captures in tests/data) with a deliberately small, bounds-checked reader:
// each record's bytes go through decode_record, Analyzer::feed, and every
// renderer, exactly as rdmapcap does. Inputs that are not pcap are split into
// frames by a 2-byte length prefix, with the first byte choosing the link
// type, so the fuzzer also reaches the decoder without the pcap framing.
#include <cstddef>
#include <cstdint>
#include <string>

#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/dissect/render.hpp"
#include "rdmalab/wire/bytes.hpp"

namespace {

using rdmalab::wire::Bytes;
using rdmalab::wire::LinkType;
namespace dissect = rdmalab::dissect;

struct Run {
  dissect::Analyzer analyzer{dissect::AnalyzerOptions{64}};
  dissect::PacketRecord rec;
  std::string out;
  std::uint64_t frame = 0;

  void packet(Bytes bytes, std::size_t original, LinkType link, std::int64_t t) {
    dissect::decode_record(bytes, original, link, ++frame, t, rec);
    analyzer.feed(rec);
    out.clear();
    // The text renderer is the slowest part; a few packets per input reach
    // all of its branches, the JSON one runs on every packet.
    if (frame <= 4 || !rec.events.empty()) dissect::render_packet_text(rec, 0, out);
    dissect::render_packet_json(rec, out);
    (void)dissect::short_label(rec);
  }
  void end() {
    for (const dissect::Event& e : analyzer.finish()) out += dissect::describe(e);
    const auto convs = analyzer.summaries();
    out.clear();
    dissect::render_summary_text(analyzer.stats(), convs, out);
    dissect::render_summary_json(analyzer.stats(), convs, out);
    if (!convs.empty()) {
      dissect::LadderSvg svg(convs[0].a, convs[0].b, 0, 16);
      dissect::LadderText text(convs[0].a, convs[0].b, 0, {});
      text.header(out);
    }
  }
};

LinkType link_of(std::uint32_t v) {
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
  const Bytes in(data, size);
  Run run;
  if (size >= 24 && rdmalab::wire::load_le32(data) == 0xa1b2c3d4u) {
    // Classic little-endian pcap: 24-byte header, 16-byte record headers.
    const std::uint32_t linktype = rdmalab::wire::load_le32(data + 20);
    const LinkType link = linktype == 1 ? LinkType::Ethernet : link_of(linktype);
    std::size_t off = 24;
    while (off + 16 <= size) {
      const std::uint32_t sec = rdmalab::wire::load_le32(data + off);
      const std::uint32_t incl = rdmalab::wire::load_le32(data + off + 8);
      const std::uint32_t orig = rdmalab::wire::load_le32(data + off + 12);
      off += 16;
      if (incl > size - off) break;
      run.packet(in.subspan(off, incl), orig, link, std::int64_t{sec} * 1'000'000'000);
      off += incl;
    }
  } else if (size > 0) {
    const LinkType link = link_of(data[0]);
    std::size_t off = 1;
    std::int64_t t = 0;
    while (off + 2 <= size) {
      const std::size_t len = rdmalab::wire::load_be16(data + off);
      off += 2;
      const std::size_t n = len < size - off ? len : size - off;
      run.packet(in.subspan(off, n), n + (len & 7), link, t += 1000);
      off += n;
    }
  }
  run.end();
  return 0;
}

// Test helper: read a capture from tests/data and run the analyser over it,
// keeping each frame's events (the records' byte spans do not outlive the
// read, the events do).
#pragma once

#include <string>
#include <vector>

#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/dissect/analyzer.hpp"

namespace dissect_test {

struct Analysed {
  std::vector<std::vector<rdmalab::dissect::Event>> events;  // [frame - 1]
  std::vector<std::uint32_t> psn;                            // [frame - 1]
  std::vector<rdmalab::dissect::Event> end_events;
  std::vector<rdmalab::dissect::ConversationSummary> convs;
  rdmalab::dissect::CaptureStats stats;

  /// Every event of a type, in frame order.
  [[nodiscard]] std::vector<rdmalab::dissect::Event> all(rdmalab::dissect::EventType t) const {
    std::vector<rdmalab::dissect::Event> r;
    for (const auto& f : events)
      for (const auto& e : f)
        if (e.type == t) r.push_back(e);
    for (const auto& e : end_events)
      if (e.type == t) r.push_back(e);
    return r;
  }
};

inline Analysed analyse(const std::string& name) {
  namespace dissect = rdmalab::dissect;
  rdmalab::capture::PcapReader reader(std::string(RDMALAB_TEST_DATA) + "/" + name);
  dissect::Analyzer analyzer;
  dissect::PacketRecord rec;
  rdmalab::capture::Packet pkt;
  Analysed a;
  while (reader.next(pkt)) {
    dissect::decode_record(pkt.data, pkt.original_length, *reader.link_type(), pkt.frame,
                           pkt.time_ns, rec);
    analyzer.feed(rec);
    a.events.push_back(rec.events);
    a.psn.push_back(rec.decoded.ib ? rec.decoded.ib->bth.psn : 0);
  }
  a.end_events = analyzer.finish();
  a.convs = analyzer.summaries();
  a.stats = analyzer.stats();
  return a;
}

}  // namespace dissect_test

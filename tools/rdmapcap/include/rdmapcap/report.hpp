// rdmapcap report: one self-contained HTML page about a capture.
//
// The page needs nothing but itself (inline CSS, a few lines of inline
// JavaScript, inline SVG): it opens from a mail attachment or an offline
// machine. It holds the capture's counters, the findings in words, and one
// section per conversation: its summary, its ladder diagram (the dissect
// library's LadderSvg, cut into pages and zoomable), its events with links
// to the frames' rows in the ladder, and per requester QP a timeline of the
// request rate, the CE marks, the CNPs, the queueing delay and the PFC
// pauses. The PFC section lists the pause frames per sender and priority.
//
// Queueing delay, read from the capture: each ACK that answers a request
// packet with AckReq gives one round trip (the summary's RTT samples). What
// a round trip has above the lowest one seen towards the same responder
// address is time spent in queues, since the rest of it (serialisation,
// propagation, the responder's turnaround) is the same for every packet of
// that path: the measure TIMELY's senders use. It is a lower bound: when no
// packet in the capture crossed empty queues, the lowest round trip holds
// some queueing too.
//
// The report is built in two steps, like `rdmapcap ladder`: the first pass
// over the capture gives the summaries and each conversation's endpoints
// (a ladder needs both lifelines before its first row); the second feeds
// every record to packet(), then the end-of-capture events to finish().
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/dissect/render.hpp"

namespace rdmapcap {

struct ReportOptions {
  std::string title;                   // the capture's file name, shown in the heading
  std::size_t rows = 2000;             // ladder rows per conversation (--rows)
  std::size_t rows_per_page = 100;     // ladder rows per page
  std::size_t conversations = 100;     // conversations given a section (--conversations)
  std::size_t events_per_conv = 1000;  // event rows listed per conversation
  std::size_t lanes = 16;              // requester QPs in the overview plot (--lanes)
};

class Report {
 public:
  /// `first`: the analyser of the first pass, finished.
  Report(const rdmalab::dissect::Analyzer& first, std::int64_t start_ns, ReportOptions options);

  /// Second pass: every record, in frame order, after Analyzer::feed.
  void packet(const rdmalab::dissect::PacketRecord& rec);
  /// Second pass: the end-of-capture events (Analyzer::finish).
  void finish(std::span<const rdmalab::dissect::Event> end_events);

  /// The whole page, in the current language.
  [[nodiscard]] std::string html() const;
  /// The overview plot alone, a standalone SVG document (`rdmapcap plot`):
  /// one lane per requester QP with its request rate, every lane on the
  /// same scale so that shares compare at a glance, its CE marks and CNPs
  /// as ticks, its queueing delay (one scale too), then the PFC pauses per
  /// sender and priority.
  [[nodiscard]] std::string overview_svg() const;

 private:
  struct EventRow {
    rdmalab::dissect::Event event;
    std::int64_t time_ns = 0;  // of the frame; -1 for end-of-capture events
    bool end_of_capture = false;
  };
  struct Channel {
    std::vector<std::int64_t> ce_ns, cnp_ns;
    /// (time of the ACK, its round trip) for every RTT sample.
    std::vector<std::pair<std::int64_t, std::int64_t>> rtt;
    /// The lowest round trip towards the responder's address, over every
    /// channel of the capture; -1 when none has a sample.
    std::int64_t base_rtt_ns = -1;
  };
  struct Conversation {
    rdmalab::dissect::ConversationSummary summary;
    std::vector<rdmalab::dissect::LadderSvg> pages;
    std::size_t drawn = 0, not_drawn = 0;
    std::vector<std::uint64_t> drawn_frames;  // frames with a row (anchors), in order
    std::vector<EventRow> events;
    std::size_t events_not_listed = 0;
    std::vector<Channel> channels;  // parallel to summary.channels
  };
  /// Paused intervals of one sender and priority (8: 802.3x, the whole link).
  struct PauseTrack {
    rdmalab::wire::MacAddress src{};
    std::uint8_t priority = 0;
    std::int64_t until_ns = -1;  // end of the current pause; -1 not paused
    std::vector<std::pair<std::int64_t, std::int64_t>> intervals;
  };

  Conversation* conversation(std::uint32_t id);
  void pause_frame(const rdmalab::dissect::PacketRecord& rec);
  void section_capture(std::string& out) const;
  void section_findings(std::string& out) const;
  void section_pfc(std::string& out) const;
  void section_conversation(const Conversation& c, std::string& out) const;
  void ladder(const Conversation& c, std::string& out) const;
  void events_table(const Conversation& c, std::string& out) const;
  void overview(std::string& out) const;
  /// x of time `t` in a plot spanning the whole capture.
  [[nodiscard]] double x_of(std::int64_t t) const;
  /// One lane per PFC sender and priority, from `y` down (advanced).
  void pause_lanes(int& y, std::string& out) const;
  /// Five ticks in seconds since the first frame, at `y`.
  void time_axis(int y, std::string& out) const;
  /// The request rate bars of `s`, scaled to `peak`, in a band of `height`.
  void rate_bars(const rdmalab::dissect::ChannelSummary& s, double peak, int y, int height,
                 std::string& out) const;
  /// The queueing delay of `ch`'s RTT samples as stems scaled to `top`
  /// (ns), in a band of `height` from `y`.
  void delay_stems(const Channel& ch, std::int64_t top, int y, int height, std::string& out) const;
  void timeline(const rdmalab::dissect::ChannelSummary& s, const Channel& ch, std::string& out,
                const std::string& id) const;
  [[nodiscard]] bool drawn(const Conversation& c, std::uint64_t frame) const;

  ReportOptions opt_;
  rdmalab::dissect::CaptureStats stats_;
  std::vector<rdmalab::dissect::PfcSummary> pfc_;
  std::int64_t start_ns_;
  std::vector<Conversation> convs_;  // the first opt_.conversations, by id
  std::size_t total_convs_ = 0;
  std::size_t total_channels_ = 0;  // requester QPs of every conversation
  std::vector<PauseTrack> pauses_;
  std::vector<EventRow> pfc_events_;
  std::vector<rdmalab::dissect::Event> findings_;
};

}  // namespace rdmapcap

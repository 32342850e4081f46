// Turning records, events and summaries into text for people and JSON for
// programs. Everything appends to a caller-owned std::string (no I/O), so
// the CLI reuses one buffer and the tests compare strings.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/dissect/record.hpp"

namespace rdmalab::dissect {

/// "10.99.0.2 QP 0x000011" (or "10.99.0.2 QP ?" when the QPN is unknown).
[[nodiscard]] std::string endpoint_string(const Endpoint& e);

/// The full, explained decode of one packet: one block, header by header,
/// each field named and explained, ICRC verdict, then the events.
/// `start_ns` is the time of the first frame (times are shown relative).
void render_packet_text(const PacketRecord& rec, std::int64_t start_ns, std::string& out);

/// One JSON object (one line, '\n'-terminated) for a RoCE packet: frame,
/// time, src, dst, opcode, opname, dqpn, psn, ackreq, se, pkey, payload_len,
/// the extension headers present, icrc{value,ok} and events.
void render_packet_json(const PacketRecord& rec, std::string& out);

/// One event as a JSON object (no newline): type, severity, frame,
/// related_frame, psn and the fields of its type, delta_ns, text. The same
/// object appears in a packet's "events" and in end-of-capture lines.
void render_event_json(const Event& e, std::string& out);

/// An end-of-capture conclusion (Analyzer::finish) as one JSON line:
/// {"end_of_capture":true,"event":{...}}.
void render_end_of_capture_json(const Event& e, std::string& out);

/// The payload bytes the capture holds for a RoCE packet as a hex dump,
/// 16 bytes a line with offsets and printable ASCII ("    0000  41 42 ...  |AB..|"),
/// or as one lowercase hex string when `compact`. Nothing when it has none.
void render_payload_hex(const PacketRecord& rec, bool compact, std::string& out);

/// The summary of every conversation, as text.
/// `pfc`: Analyzer::pfc(), the pause frames per sender and priority.
void render_summary_text(const CaptureStats& stats, std::span<const ConversationSummary> convs,
                         std::string& out, std::span<const PfcSummary> pfc = {});
/// The same as one JSON document.
void render_summary_json(const CaptureStats& stats, std::span<const ConversationSummary> convs,
                         std::string& out, std::span<const PfcSummary> pfc = {});

/// The same summary (text or JSON, byte for byte), written one conversation
/// at a time: a capture of a whole cluster has too many conversations to
/// hold all their summaries at once. The head is written on construction,
/// then conversation() for each conversation in order (the caller may move
/// `out` elsewhere between calls), then end(). The static conversation()
/// writes one conversation's part anywhere (it touches no writer), so that
/// parts may be made on several threads and joined in order.
class SummaryWriter {
 public:
  enum class Format : std::uint8_t { Text, Json };
  /// `conversations`: how many conversation() calls will follow.
  SummaryWriter(Format format, const CaptureStats& stats, std::size_t conversations,
                std::string& out);
  void conversation(const ConversationSummary& v);
  /// The part of conversation `index` (0 for the first written) in `format`.
  static void conversation(Format format, const ConversationSummary& v, std::size_t index,
                           std::string& out);
  void end(std::span<const PfcSummary> pfc);

 private:
  Format format_;
  const CaptureStats& stats_;
  std::string& out_;
  std::size_t written_ = 0;
};

/// One JSON object (one line) for an 802.3x / 802.1Qbb pause frame (a
/// record whose `pause` is set): frame, time, src and dst MAC, opcode, the
/// priority-enable vector, the quanta and their times, events.
void render_pause_json(const PacketRecord& rec, std::string& out);

/// Writes a JSON string literal (quotes and escapes included).
void append_json_string(std::string_view s, std::string& out);

/// The ladder (time-sequence) diagram of one conversation.
struct LadderOptions {
  bool color = false;     // ANSI colours for the terminal
  std::size_t width = 0;  // columns between the two lifelines (0: default 44)
  /// Draw with ASCII only (| - > < and letters for the marks): the box-drawing
  /// characters and arrows are East-Asian "ambiguous width", drawn two
  /// columns wide by many CJK terminals, which breaks the alignment.
  bool ascii = false;
};

class LadderText {
 public:
  LadderText(const Endpoint& left, const Endpoint& right, std::int64_t start_ns,
             LadderOptions options);
  /// The header lines (endpoint names, lifelines).
  void header(std::string& out) const;
  /// One row per packet of the conversation, with its events beside it.
  void row(const PacketRecord& rec, std::string& out) const;
  /// A row for an end-of-capture event.
  void note(const Event& e, std::string& out) const;

 private:
  Endpoint left_, right_;
  std::int64_t start_ns_;
  LadderOptions opt_;
};

/// The same diagram as an SVG picture. Rows are kept (at most `max_rows`),
/// then written by svg().
class LadderSvg {
 public:
  LadderSvg(const Endpoint& left, const Endpoint& right, std::int64_t start_ns,
            std::size_t max_rows = 2000);
  void row(const PacketRecord& rec);
  void note(const Event& e);
  /// Wrap each packet's row in <g id="fN"> (N its frame number), so a page
  /// that embeds the picture can link to a frame (rdmapcap report).
  void set_anchors(bool on) noexcept { anchors_ = on; }
  [[nodiscard]] std::string svg() const;
  [[nodiscard]] std::size_t dropped() const noexcept { return dropped_; }

 private:
  struct Row {
    std::uint64_t frame;
    std::int64_t time_ns;
    bool left_to_right;
    bool is_note;
    std::string label;
    std::string notes;
    Severity sev;
  };
  Endpoint left_, right_;
  std::int64_t start_ns_;
  std::size_t max_rows_;
  std::size_t dropped_ = 0;
  bool anchors_ = false;
  std::vector<Row> rows_;
};

/// Short label of a packet for diagrams: "WRITE First PSN 0x000100",
/// "ACK PSN 0x000103 MSN 1", "NAK seq PSN 0x000109".
[[nodiscard]] std::string short_label(const PacketRecord& rec);

}  // namespace rdmalab::dissect

// What the rdmalab Wireshark plugin knows about each frame, kept apart from
// Wireshark so that it can be tested without it.
//
// Wireshark dissects a frame many times and in any order: once in frame order
// when the file is read (the "first pass"), then again whenever the user
// clicks a packet, applies a filter or scrolls (random access), and tshark -2
// runs a whole second pass. The analyser, on the other hand, must see every
// packet once and in capture order. FrameStore bridges the two:
//
//   * feed() is called on the first pass only; it decodes the frame with
//     rdmalab's own decoder, runs the Analyzer and the message tracker, and
//     stores the findings under the frame number;
//   * find() is all a later dissection of the same frame does: it reads what
//     was stored, so the result never depends on the order of the clicks;
//   * finish() closes the first pass: the analyser's end-of-capture
//     conclusions (retries exhausted, requests never acknowledged) are
//     attached to the earlier frames they concern;
//   * reset() forgets everything, for a new capture file or a redissection.
//
// Memory: a fixed-size entry per RoCE or pause frame plus its events, about 100 bytes
// per frame on a WRITE/ACK capture, on top of Wireshark's own per-frame data;
// the analyser itself is bounded by its options (see analyzer.hpp).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/dissect/event.hpp"
#include "rdmalab/wire/bytes.hpp"
#include "rdmalab/wire/frame.hpp"
#include "rdmalab/wire/pause.hpp"

namespace rdmalab::wireshark {

/// The ICRC verdict of a frame.
enum class IcrcStatus : std::uint8_t {
  NotChecked = 0,  // snap-length cut, malformed, or not RoCE
  Good = 1,
  Bad = 2,
};

/// Where a packet sits in its message, as far as the capture shows.
struct MessageInfo {
  /// 1-based number of the message on its channel (requester QP -> responder
  /// QP), in order of first appearance; READ responses carry the number of
  /// their READ request. 0 when the packet is not part of a tracked message
  /// (an ACK, or a packet that arrived before its message's First packet).
  std::uint32_t id = 0;
  /// 1-based packet index within the message (PSN - first PSN + 1).
  std::uint32_t index = 0;
  /// Message length in bytes, when known here: the RETH DMA length of a
  /// WRITE or READ; for a SEND, on its Last or Only packet.
  std::optional<std::uint64_t> length;
  /// For READ response packets: the frame of the READ request; 0 unknown.
  std::uint64_t request_frame = 0;
};

/// Everything stored for one frame. The event spans stay valid until the
/// next feed(), finish() or reset().
struct FrameFindings {
  std::uint64_t frame = 0;
  /// The IP ECN field of a RoCEv2 packet (0 Not-ECT, 1 ECT(1), 2 ECT(0),
  /// 3 CE); empty for RoCEv1 and pause frames.
  std::optional<std::uint8_t> ecn;
  /// A RoCEv2 congestion notification packet (BTH opcode 0x81), and the
  /// requester QP it is addressed to.
  bool cnp = false;
  std::uint32_t cnp_qp = 0;
  /// An 802.3x / 802.1Qbb pause frame, and the port speed (bits per second)
  /// its quanta are converted at: the analyser's, as rdmapcap reports it.
  std::optional<wire::PauseFrame> pause;
  std::uint64_t link_speed_bps = 0;
  IcrcStatus icrc = IcrcStatus::NotChecked;
  std::uint32_t icrc_expected = 0;  // computed over the packet
  std::uint32_t icrc_actual = 0;    // carried by the packet
  /// A native InfiniBand packet (LRH first) carries a VCRC as well: the CRC
  /// of its last link, recomputed by every switch on the way.
  bool native_ib = false;
  IcrcStatus vcrc = IcrcStatus::NotChecked;
  std::uint16_t vcrc_expected = 0;
  std::uint16_t vcrc_actual = 0;
  MessageInfo message;
  /// Events found when the frame was fed, in the analyser's order.
  std::span<const dissect::Event> events;
  /// End-of-capture events attached to this frame by finish().
  std::span<const dissect::Event> end_events;
};

/// Follows messages (First/Middle/Last) per request channel so each packet
/// can show its message number, index and length. The analyser tracks PSNs,
/// not messages; this is the small part it does not provide. Memory is
/// bounded: each channel remembers its last kHistory messages, and at most
/// kMaxChannels channels are followed.
class MessageTracker {
 public:
  static constexpr std::size_t kHistory = 1024;
  static constexpr std::size_t kMaxChannels = 65536;

  /// The message information of one decoded RoCE packet.
  [[nodiscard]] MessageInfo track(const dissect::PacketRecord& rec);
  void reset();

 private:
  struct Message {
    std::uint32_t first_psn = 0;
    std::uint32_t id = 0;
    std::uint32_t first_payload = 0;  // payload of the First packet = path MTU
    std::optional<std::uint64_t> dma_length;
    std::uint64_t frame = 0;  // first appearance
    bool read = false;
  };
  struct Channel {
    std::uint32_t next_id = 1;
    std::deque<Message> recent;  // newest at the back
  };
  // (source address, destination address, destination QP)
  using Key = std::tuple<wire::IpAddress, wire::IpAddress, std::uint32_t>;
  // READ requests by (requester address, responder address): responses are
  // addressed to the requester's QP, which the request does not name.
  using PairKey = std::pair<wire::IpAddress, wire::IpAddress>;

  Channel* channel(const Key& key);
  const Message* start_message(Channel& c, const dissect::PacketRecord& rec,
                               const wire::IpAddress& src, const wire::IpAddress& dst);
  static const Message* containing(const std::deque<Message>& recent, std::uint32_t psn);

  std::map<Key, Channel> channels_;
  std::map<PairKey, std::deque<Message>> reads_;
};

class FrameStore {
 public:
  /// `options`: the analyser's (the plugin's preferences set the port speed
  /// and the PFC storm threshold).
  explicit FrameStore(dissect::AnalyzerOptions options = {})
      : analyzer_(options), options_(options) {}

  /// First pass: decodes and analyses a frame. Frames must come in capture
  /// order; a frame at or before the last one fed is ignored (returns false),
  /// so a repeated first-pass call cannot feed the analyser twice. Frames may
  /// still be fed after finish() (a file still loading, a live capture).
  bool feed(wire::Bytes captured, std::size_t original_length, wire::LinkType link,
            std::uint64_t frame, std::int64_t time_ns);

  /// Ends the first pass as far as it has gone: draws the end-of-capture
  /// conclusions with Analyzer::finish(). Wireshark has no "first pass over"
  /// callback, so the plugin calls this whenever it dissects a frame again;
  /// it does nothing unless frames were fed since the last call. When they
  /// were (Wireshark's GUI repaints rows while a file is still loading; a
  /// live capture never ends) the conclusions are drawn again from the
  /// analyser's current state, which Analyzer::finish() only reads.
  void finish();
  [[nodiscard]] bool finished() const noexcept { return finished_; }

  /// The last frame number fed; 0 before the first.
  [[nodiscard]] std::uint64_t last_fed() const noexcept { return last_fed_; }

  /// The findings of a frame; nullopt when it was not fed or was neither
  /// RoCE nor a pause frame.
  [[nodiscard]] std::optional<FrameFindings> find(std::uint64_t frame) const;

  /// Forgets everything (new capture file, redissection); the next capture
  /// is analysed with `options`.
  void reset(const dissect::AnalyzerOptions& options);
  /// The same with the options in use.
  void reset() { reset(options_); }
  [[nodiscard]] const dissect::AnalyzerOptions& options() const noexcept { return options_; }

 private:
  static constexpr std::uint8_t kNoEcn = 0xFF;
  struct Entry {
    std::uint64_t frame = 0;
    IcrcStatus icrc = IcrcStatus::NotChecked;
    IcrcStatus vcrc = IcrcStatus::NotChecked;
    std::uint8_t ecn = kNoEcn;
    bool cnp = false;
    bool pause = false;  // its PauseFrame is in pauses_
    bool native_ib = false;
    std::uint16_t vcrc_expected = 0;
    std::uint16_t vcrc_actual = 0;
    std::uint32_t cnp_qp = 0;
    std::uint32_t icrc_expected = 0;
    std::uint32_t icrc_actual = 0;
    MessageInfo message;
    std::uint32_t first_event = 0;  // into events_
    std::uint32_t event_count = 0;
  };

  dissect::Analyzer analyzer_;
  dissect::AnalyzerOptions options_;
  MessageTracker messages_;
  dissect::PacketRecord rec_;   // reused for every frame
  std::vector<Entry> entries_;  // sorted by frame (fed in order)
  std::vector<dissect::Event> events_;
  std::vector<dissect::Event> end_events_;  // sorted by frame
  /// Pause frames (few in any capture), sorted by frame.
  std::vector<std::pair<std::uint64_t, wire::PauseFrame>> pauses_;
  std::uint64_t last_fed_ = 0;
  std::uint64_t finished_at_ = 0;  // last_fed_ when finish() last ran
  bool finished_ = false;
};

}  // namespace rdmalab::wireshark

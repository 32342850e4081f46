// The per-conversation analyser: requester and responder state machines
// rebuilt from what a capture saw on the wire (IBTA vol. 1, 9.7).
//
// Feed it PacketRecords in frame order; it appends Events to each record and
// keeps, per conversation, counters for the summary. finish() adds the
// end-of-capture conclusions (requests never acknowledged, retries exhausted).
// Events are attached to the frame they concern, so a consumer that needs
// them later (a Wireshark plugin dissecting frame N again) can store
// record.events keyed by record.frame.
//
// Vocabulary. A *channel* is one PSN space: a requester QP sending requests
// to a responder QP, and the responses (ACK, NAK, READ responses, atomic
// ACKs) coming back. A *conversation* is a pair of QPs, (address, QPN) at
// each end; it holds one channel per direction that carries requests.
//
// Pairing rule. RC requests name only the destination QP, so a request seen
// as S -> D to QP X belongs to the channel "(S, ?) -> (D, X)"; a response
// seen as D -> S to QP Y belongs to the channel "(S, Y) -> (D, ?)". The two
// halves are joined when the first response of a half arrives: among the
// request halves from S to D not yet joined, the one whose outstanding PSN
// window holds the response PSN (responses carry request PSNs); with one QP
// pair between two addresses there is one candidate. Requests and responses
// travelling in the same direction (rc_pingpong: SENDs of one QP, ACKs for
// the other) are different halves and never share a PSN space. The UDP
// source port is flow entropy and is never used.
//
// Memory is bounded by the number of live conversations: each channel keeps
// at most Options::max_outstanding unacknowledged packets and a few dozen
// missing-PSN ranges, whatever the capture length.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "rdmalab/dissect/record.hpp"
#include "rdmalab/wire/frame.hpp"

namespace rdmalab::dissect {

/// One end of a conversation: an address and a QP number (unknown until a
/// packet addressed to that QP is seen).
struct Endpoint {
  wire::IpAddress addr;
  std::uint32_t qpn = 0;
  bool qpn_known = false;
};

/// Statistics of one PSN space (requester -> responder).
struct ChannelSummary {
  Endpoint requester;
  Endpoint responder;
  std::uint64_t request_packets = 0;
  std::uint64_t response_packets = 0;
  /// Completed request messages (first transmissions) by operation.
  std::uint64_t sends = 0, writes = 0, reads = 0, compare_swaps = 0, fetch_adds = 0;
  /// Payload bytes on the wire (requests and READ responses, resends included)
  /// and the part carried by first transmissions.
  std::uint64_t payload_bytes = 0;
  std::uint64_t unique_payload_bytes = 0;
  /// Largest payload of a First/Middle packet = the path MTU; when no
  /// message spanned several packets, only a lower bound (largest payload).
  std::uint32_t path_mtu = 0;
  bool path_mtu_exact = false;
  std::uint64_t retransmitted_packets = 0;
  std::uint64_t psn_gaps = 0;
  std::uint64_t out_of_order = 0;
  std::array<std::uint64_t, 5> naks{};  // by NAK code 0..4 (wire::NakCode)
  std::uint64_t rnr_naks = 0;
  std::uint64_t acks = 0;
  std::uint64_t duplicate_acks = 0;
  std::uint64_t go_back_n = 0;
  std::uint64_t timeouts = 0;
  /// Largest number of consecutive timeout retries of one PSN.
  std::uint32_t max_retries = 0;
  bool retry_exhausted = false;
  /// The capture ended before the next timeout retry was due.
  bool still_retrying = false;
  /// Median silence before a timeout resend, and the `timeout` it suggests.
  std::int64_t timeout_gap_ns = -1;
  std::optional<unsigned> timeout_exponent;
  /// Measured RNR waits (median) and the last advertised timer code.
  std::int64_t rnr_wait_ns = -1;
  std::uint64_t cnps = 0;
  std::uint64_t icrc_errors = 0;
  /// Congestion, as the capture point saw it. Packets of the channel's data
  /// whose IP ECN field is CE (11: a switch marked them): its requests and
  /// its READ responses; the gaps between two CNPs to the QP that sent
  /// them (the smallest one is the receiving NIC's pacing), and the delay
  /// from the first CE mark after a CNP to the next CNP.
  std::uint64_t ecn_ce = 0;
  /// InfiniBand's congestion notification, in the BTH: request packets with
  /// FECN set (a switch met congestion on the way) and responses with BECN
  /// set (the destination telling the source). CNPs are counted in `cnps`.
  std::uint64_t fecn = 0, becn = 0;
  std::int64_t cnp_interval_min_ns = -1, cnp_interval_median_ns = -1;
  std::int64_t ce_to_cnp_median_ns = -1;
  /// The requester's rate (request frame bits per second) in the
  /// AnalyzerOptions::rate_window_ns before and after each CNP: medians over
  /// the CNPs whose two windows the capture holds (`rate_cnps` of them).
  std::int64_t rate_window_ns = 0;
  std::uint64_t rate_cnps = 0;
  double rate_before_cnp_bps = -1, rate_after_cnp_bps = -1;
  /// The requester's rate over time: request frame bytes per `rate_bin_ns`,
  /// from first_ns (at most 64 bins; the bin widens as the channel lasts).
  std::int64_t rate_bin_ns = 0;
  std::vector<std::uint64_t> rate_bytes;
  /// ACK round trip (request packet -> its ACK, first transmissions only).
  std::uint64_t rtt_samples = 0;
  std::int64_t rtt_min_ns = -1, rtt_median_ns = -1, rtt_max_ns = -1;
  std::int64_t first_ns = 0, last_ns = 0;
  /// Unique payload bytes per second between the first and last packet.
  double goodput_bps = 0;
};

struct ConversationSummary {
  std::uint32_t id = 0;  // 1-based, in order of first packet
  Endpoint a, b;         // a sent the first packet
  std::uint64_t packets = 0;
  std::int64_t first_ns = 0, last_ns = 0;
  std::vector<ChannelSummary> channels;
};

/// Whole-capture counters.
struct CaptureStats {
  std::uint64_t frames = 0;
  std::uint64_t roce = 0;  // transport packets: RoCE and native InfiniBand
  std::uint64_t roce_v1 = 0;
  std::uint64_t native_ib = 0;    // of `roce`: on an InfiniBand link (LRH)
  std::uint64_t vcrc_errors = 0;  // native IB packets whose VCRC is wrong
  std::uint64_t other = 0;        // not RoCE: counted and skipped
  std::uint64_t malformed = 0;
  std::uint64_t snap_truncated = 0;
  std::uint64_t unknown_opcode = 0;
  std::uint64_t icrc_errors = 0;
  std::uint64_t datagrams = 0;  // UD packets (not followed)
  std::uint64_t untracked = 0;  // packets of PSN spaces beyond max_channels
  /// CNPs to a QP no channel could be found for: no request from its host to
  /// the CNP's sender was seen, or several QPs there are still unknown.
  std::uint64_t cnps_unattributed = 0;
  std::uint64_t bytes = 0;  // captured bytes
  std::int64_t first_ns = 0, last_ns = 0;
  std::uint64_t pause_frames = 0;  // 802.3x PAUSE and 802.1Qbb PFC frames
  /// The port speed pause quanta were converted at (bits per second; 0 when
  /// the capture holds no pause frame) and where it came from.
  std::uint64_t link_speed_bps = 0;
  enum class SpeedSource : std::uint8_t { None, Given, Inferred, Assumed };
  SpeedSource link_speed_source = SpeedSource::None;
};

/// Pause frames of one sender MAC for one priority (802.1Qbb), or for the
/// whole link (802.3x: `priority` empty). A paused interval runs from a
/// pause frame to an XON or to the expiry of the last pause time; a pause
/// frame that arrives while paused extends (or shortens) it.
struct PfcSummary {
  wire::MacAddress src{};
  std::optional<std::uint8_t> priority;
  std::uint64_t frames = 0;      // pause frames naming this priority, XON included
  std::uint64_t xon_frames = 0;  // of which XON (time 0)
  std::int64_t paused_ns = 0;    // total paused time inside the capture
  std::int64_t longest_pause_ns = 0;
  std::uint64_t storms = 0;    // intervals longer than AnalyzerOptions::pfc_storm_ns
  bool paused_at_end = false;  // still paused when the capture ended
};

struct AnalyzerOptions {
  /// Unacknowledged packets remembered per channel (oldest forgotten first).
  std::size_t max_outstanding = 4096;
  /// PSN spaces followed at once; packets of further ones are only counted
  /// (CaptureStats::untracked), so random QP numbers cannot exhaust memory.
  /// rdmapcap's --max-channels; 262144 covers a 100,000-QP capture.
  std::size_t max_channels = 262144;
  /// The port speed for pause quanta (bits per second); 0: inferred from the
  /// closest spacing of two frames before the first pause frame.
  std::uint64_t link_speed_bps = 0;
  /// A priority paused for longer than this is a PFC storm (default 100 ms,
  /// the "auto" PFC storm prevention timeout of NVIDIA's mlx5 driver).
  std::int64_t pfc_storm_ns = 100'000'000;
  /// The windows a sender's rate is measured in before and after a CNP:
  /// 100 µs, twice the 50 µs CNP interval of DCQCN (Zhu et al., 2015).
  std::int64_t rate_window_ns = 100'000;
};

class Analyzer {
 public:
  explicit Analyzer(AnalyzerOptions options = {});
  ~Analyzer();
  Analyzer(Analyzer&&) noexcept;
  Analyzer& operator=(Analyzer&&) noexcept;
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  /// Analyses one packet (frames must come in capture order): sets
  /// rec.conversation and appends events to rec.events.
  void feed(PacketRecord& rec);
  /// feed() on each record in order, with the same results, faster on
  /// captures of many QPs: the state of each packet's channel is fetched
  /// from memory while the packets before it are analysed.
  void feed(std::span<PacketRecord> recs);
  /// End-of-capture events (each names the frame it concerns). Call once.
  [[nodiscard]] std::vector<Event> finish();

  [[nodiscard]] const CaptureStats& stats() const noexcept;
  [[nodiscard]] const AnalyzerOptions& options() const noexcept;
  [[nodiscard]] std::vector<ConversationSummary> summaries() const;
  /// The conversations found so far (their ids are 1 to this number).
  [[nodiscard]] std::size_t conversation_count() const noexcept;
  /// What a conversation's summary holds: everything, or everything but
  /// each channel's rate over time (rate_bin_ns 0, rate_bytes empty), which
  /// the text summary does not show and which takes a vector per channel.
  enum class SummaryParts : std::uint8_t { All, WithoutRateSeries };
  /// The summary of one conversation (1-based id, at most
  /// conversation_count()): summaries()[id - 1], built alone, so that a
  /// caller writing them out one by one holds one at a time.
  [[nodiscard]] ConversationSummary summary(std::uint32_t id,
                                            SummaryParts parts = SummaryParts::All) const;
  /// Pause frames per sender MAC and priority, in order of first frame.
  [[nodiscard]] std::vector<PfcSummary> pfc() const;
  /// The endpoints of a conversation (1-based id); nullopt when unknown.
  [[nodiscard]] std::optional<std::pair<Endpoint, Endpoint>> endpoints(std::uint32_t id) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rdmalab::dissect

// The analyser's state machines. References are to IBTA vol. 1, 9.7
// (Reliable Service), the same as the simulator's (lib/sim/src/requester.cpp,
// responder.cpp; the simulator chapter of the docs has the table of which
// rule lives where):
//   9.7.1     PSNs: 24-bit wrap, the half-space rule, a READ's PSNs
//   9.7.5.1   the responder's side of the ACK/NAK protocol: expected PSN,
//             duplicates re-ACKed, one NAK on a PSN gap, ACK coalescing
//             (9.7.5.1.2: an ACK acknowledges every older PSN)
//   9.7.5.2   the requester's side: NAK and RNR NAK handling (9.7.5.2.8),
//             go-back-N from the NAKed PSN
//   9.7.6     the local ACK timeout and retry counter (9.7.6.1.3)
// The analyser sees the wire from a capture point, not the QPs' memory: it
// rebuilds "what the requester has sent" and "what the responder has
// acknowledged" from packets, and infers losses from PSN gaps.
#include "rdmalab/dissect/analyzer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <span>

#include "flat_map.hpp"
#include "prefetch.hpp"
#include "rdmalab/wire/bytes.hpp"
#include "rdmalab/wire/cm.hpp"
#include "rdmalab/wire/psn.hpp"
#include "rdmalab/wire/timers.hpp"
#include "ring.hpp"

namespace rdmalab::dissect {
namespace {

using wire::IpAddress;
using wire::Operation;
using wire::Position;
using wire::psn_add;
using wire::psn_before;
using wire::psn_before_eq;
using wire::psn_diff;

constexpr std::size_t kMaxMissing = 64;     // missing-PSN ranges remembered per channel
constexpr std::size_t kMaxSamples = 65536;  // RTT samples kept (reservoir beyond)
constexpr std::size_t kMaxGaps = 1024;      // timeout / RNR waits kept

/// Addresses are numbered in order of first sight (a capture of a whole
/// cluster has many QPs but far fewer hosts): the keys below hold the
/// numbers, 4 bytes instead of a 17-byte wire::IpAddress.
using HostId = std::uint32_t;

/// Mixes a 64-bit key into a hash (the finaliser of splitmix64).
std::uint64_t mix64(std::uint64_t x) noexcept {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

struct IpHash {
  std::size_t operator()(const IpAddress& a) const noexcept {
    std::uint64_t lo = 0, hi = 0;
    for (std::size_t i = 0; i < 8; ++i) {
      lo = (lo << 8) | a.bytes[i];
      hi = (hi << 8) | a.bytes[8 + i];
    }
    return static_cast<std::size_t>(mix64(lo ^ mix64(hi ^ (a.v4 ? 1 : 0))));
  }
};

/// An IPv4 address as IpAddress::from_v4 makes it (::ffff:a.b.c.d).
bool is_plain_v4(const IpAddress& a) noexcept {
  static constexpr std::array<std::uint8_t, 12> kPrefix{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  return a.v4 && !a.lid && std::equal(kPrefix.begin(), kPrefix.end(), a.bytes.begin());
}

/// An IPv4 address's four bytes as one number.
std::uint32_t v4_key(const std::array<std::uint8_t, 4>& a) noexcept {
  return wire::load_be32(a.data());
}
std::uint32_t v4_key(const IpAddress& a) noexcept {
  return wire::load_be32(a.bytes.data() + 12);
}

/// Two hosts in order, or one end (host, QPN) of a conversation: one integer.
std::uint64_t pack(std::uint32_t hi, std::uint32_t lo) noexcept {
  return (std::uint64_t{hi} << 32) | lo;
}

/// A half-channel: its source and destination, the BTH's destination QP and
/// its role. The ends are the two IPv4 addresses themselves when both are
/// plain IPv4 (all of a RoCEv2 capture's, usually), so that following a
/// packet needs no lookup of its hosts; else the hosts' numbers.
struct HalfKey {
  std::uint32_t src = 0, dst = 0;
  std::uint32_t qpn = 0;
  bool response = false;
  bool by_address = false;
  friend bool operator==(const HalfKey&, const HalfKey&) = default;
};

struct HalfKeyHash {
  std::size_t operator()(const HalfKey& k) const noexcept {
    return static_cast<std::size_t>(
        mix64(pack(k.src, k.dst) ^
              mix64((std::uint64_t{k.qpn} << 2) | (k.response ? 1 : 0) | (k.by_address ? 2 : 0))));
  }
};

struct Mix64Hash {
  std::size_t operator()(std::uint64_t k) const noexcept {
    return static_cast<std::size_t>(mix64(k));
  }
};

/// A request packet not yet acknowledged.
struct Outstanding {
  std::uint32_t psn = 0;
  std::uint32_t npsn = 1;  // PSNs it uses (a READ: one per response packet; 0 = not yet known)
  std::uint64_t frame = 0;
  std::int64_t time_ns = 0;
  Operation op = Operation::Send;
  Position pos = Position::Only;
  bool retransmitted = false;
  std::uint32_t read_len = 0;

  [[nodiscard]] std::uint32_t last_psn() const noexcept {
    return psn_add(psn, static_cast<std::int64_t>(std::max<std::uint32_t>(npsn, 1)) - 1);
  }
  [[nodiscard]] bool holds(std::uint32_t p) const noexcept {
    return psn_before_eq(psn, p) && psn_before_eq(p, last_psn());
  }
};

struct Range {
  std::uint32_t begin = 0, end = 0;  // [begin, end)
  bool naked = false;                // a NAK asked for a PSN in it
};

struct PendingNak {
  std::uint32_t psn = 0;
  bool rnr = false;
  std::uint8_t code = 0;
  std::uint64_t frame = 0;
  std::int64_t time_ns = 0;
};

/// Keeps at most kMax samples; beyond that a reservoir (uniform sample).
/// `kFirst`: the room made at the first sample. The samples of congestion
/// and of waits exist only on channels that have some, and then usually
/// several: room for eight at once saves three reallocations.
template <std::size_t kMax, std::size_t kFirst = 1>
struct Samples {
  std::vector<std::int64_t> v;
  std::uint64_t seen = 0;
  std::uint64_t rng = 0x9E3779B97F4A7C15ULL;
  void add(std::int64_t x) {
    if (seen++ == 0) v.reserve(kFirst);
    if (v.size() < kMax) {
      v.push_back(x);
      return;
    }
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::uint64_t j = (rng >> 11) % seen;
    if (j < kMax) v[static_cast<std::size_t>(j)] = x;
  }
  [[nodiscard]] std::int64_t median() const {
    if (v.empty()) return -1;
    if (v.size() == 1) return v.front();
    // One work buffer for all the medians a thread takes: summarising a
    // capture of 100,000 channels takes half a million.
    thread_local std::vector<std::int64_t> c;
    c.assign(v.begin(), v.end());
    const auto mid = c.begin() + static_cast<std::ptrdiff_t>(c.size() / 2);
    std::nth_element(c.begin(), mid, c.end());
    return *mid;
  }
};

/// What a CM handshake announced for one direction of a connection.
struct CmPlan {
  std::uint64_t frame = 0;  // the REQ or REP that announced it
  std::uint32_t requester_qpn = 0;
  std::uint32_t starting_psn = 0;
};

/// Bytes per bin over a channel's life, in at most kRateBins bins: when a
/// packet falls past the last bin, neighbouring bins merge and the bin
/// doubles, so a long channel costs no more than a short one.
///
/// A channel's first kRateBins requests are kept as they came instead, one
/// word each (the time since the first, and the frame's length), and binned
/// when one more comes or a summary asks. The result is the same: the bins
/// end as wide as the latest request needs and each request's bytes fall in
/// the bin its time gives, whichever order the merges came in. It is
/// cheaper for the quiet QPs of a large capture: a request that comes after
/// a long silence falls past the last bin, and the merge reads and writes
/// all of them (eight cache lines, cold); a word is one.
constexpr std::size_t kRateBins = 64;
struct RateSeries {
  std::int64_t origin = 0;
  // The bins' width; while the requests are kept as they came, minus the
  // first bin's width (0: no request yet).
  std::int64_t bin_ns = 0;
  // Bytes per bin; while kept as they came, the requests:
  // (time - origin) << kLengthBits | frame length.
  std::vector<std::uint64_t> bytes;

  static constexpr unsigned kLengthBits = 20;
  static constexpr std::uint64_t kLengthMask = (std::uint64_t{1} << kLengthBits) - 1;
  static constexpr std::uint64_t kMaxOffset = std::uint64_t{1} << (64 - kLengthBits);

  void add(std::int64_t t, std::uint64_t n, std::int64_t first_bin_ns) {
    if (bin_ns == 0) {
      origin = t;
      bin_ns = -std::max<std::int64_t>(first_bin_ns, 1);
    }
    if (t < origin) t = origin;  // timestamps that go backwards count in the first bin
    if (bin_ns < 0) {
      const auto offset = static_cast<std::uint64_t>(t - origin);
      if (bytes.size() < kRateBins && offset < kMaxOffset && n <= kLengthMask) {
        // Room for one, then eight (past one request a channel usually
        // sends several), then twice as much each time.
        if (bytes.size() == 1) bytes.reserve(8);
        bytes.push_back(offset << kLengthBits | n);
        return;
      }
      std::vector<std::uint64_t> bins;
      bins.reserve(kRateBins);
      bin_ns = binned(bins);
      bytes.swap(bins);
    }
    auto idx = static_cast<std::size_t>((t - origin) / bin_ns);
    while (idx >= kRateBins) {
      for (std::size_t i = 0; i < bytes.size(); ++i)
        bytes[i / 2] = (i % 2 == 0 ? 0 : bytes[i / 2]) + bytes[i];
      bytes.resize((bytes.size() + 1) / 2);
      bin_ns *= 2;
      idx = static_cast<std::size_t>((t - origin) / bin_ns);
    }
    if (bytes.size() <= idx) {
      if (idx >= 8 && bytes.capacity() < kRateBins) bytes.reserve(kRateBins);
      bytes.resize(idx + 1, 0);
    }
    bytes[idx] += n;
  }

  /// The bins into `out`; returns their width (0: no request).
  std::int64_t binned(std::vector<std::uint64_t>& out) const {
    if (bin_ns >= 0) {
      out.assign(bytes.begin(), bytes.end());
      return bin_ns;
    }
    // The narrowest doubling of the first width that holds the latest
    // request in the last bin: the width the merges would have reached.
    std::uint64_t latest = 0;
    for (const std::uint64_t w : bytes) latest = std::max(latest, w >> kLengthBits);
    auto width = static_cast<std::uint64_t>(-bin_ns);
    while (latest / width >= kRateBins) width *= 2;
    out.assign(static_cast<std::size_t>(latest / width) + 1, 0);
    for (const std::uint64_t w : bytes)
      out[static_cast<std::size_t>((w >> kLengthBits) / width)] += w & kLengthMask;
    return static_cast<std::int64_t>(width);
  }
};

/// A CNP whose "after" window is still open.
struct CnpWindow {
  std::int64_t start_ns = 0;
  std::uint64_t before_bytes = 0;
  std::uint64_t after_bytes = 0;
};

/// A first transmission remembered after its acknowledgement: what a later
/// resend of one of its PSNs is traced back to.
struct Sent {
  std::uint32_t psn = 0;
  std::uint32_t npsn = 1;
  std::uint64_t frame = 0;
  std::int64_t time_ns = 0;

  [[nodiscard]] bool holds(std::uint32_t p) const noexcept {
    return Outstanding{psn, npsn}.holds(p);
  }
};

/// A counter of what is rare on one channel (losses, NAKs, marks, CNPs):
/// 32 bits, stopping at the largest value instead of wrapping round.
class Count32 {
 public:
  Count32& operator++() noexcept {
    if (n_ != std::numeric_limits<std::uint32_t>::max()) ++n_;
    return *this;
  }
  std::uint32_t operator++(int) noexcept {
    const std::uint32_t old = n_;
    ++*this;
    return old;
  }
  // NOLINTNEXTLINE(google-explicit-constructor): reads as the number it counts
  operator std::uint64_t() const noexcept { return n_; }

 private:
  std::uint32_t n_ = 0;
};

/// The counters of a ChannelSummary that the analyser keeps up to date
/// packet by packet, under the same names; summarize() works out the rest.
struct Counters {
  std::uint64_t request_packets = 0;
  std::uint64_t response_packets = 0;
  std::uint64_t sends = 0, writes = 0, reads = 0, compare_swaps = 0, fetch_adds = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t unique_payload_bytes = 0;
  std::uint64_t acks = 0;
  std::uint64_t rtt_samples = 0;
  std::int64_t rtt_min_ns = -1, rtt_max_ns = -1;
  std::int64_t first_ns = 0, last_ns = 0;
  std::uint32_t path_mtu = 0;
  std::uint32_t max_retries = 0;
  Count32 retransmitted_packets;
  Count32 psn_gaps;
  Count32 out_of_order;
  std::array<Count32, 5> naks{};
  Count32 rnr_naks;
  Count32 duplicate_acks;
  Count32 go_back_n;
  Count32 timeouts;
  Count32 cnps;
  Count32 icrc_errors;
  Count32 ecn_ce;
  Count32 fecn, becn;
  bool path_mtu_exact = false;
  bool retry_exhausted = false;
  bool still_retrying = false;
};

/// A channel's congestion state, allocated at its first CE mark or CNP
/// (most channels of a capture never see either).
struct Congestion {
  std::int64_t last_cnp_ns = -1;
  std::int64_t pending_ce_ns = -1;  // the first CE-marked request since the last CNP
  std::uint64_t first_ce_frame = 0, first_cnp_frame = 0;
  Ring<CnpWindow> cnp_windows;
  Samples<kMaxGaps, 8> cnp_gaps;
  Samples<kMaxGaps, 8> ce_to_cnp;
  Samples<kMaxGaps, 8> rate_before, rate_after;  // bytes per window
};

/// The waits a channel's requester was seen to make, allocated at its first
/// timeout or RNR retry.
struct Waits {
  Samples<kMaxGaps, 8> timeout_gaps;
  Samples<kMaxGaps, 8> rnr_waits;
};

// The members are ordered by size, so that they pack without holes: a
// capture of a whole cluster holds hundreds of thousands of channels, and
// each byte here is a byte per conversation (the memory test in
// tests/dissect counts them).
struct Channel {
  // Requester, as seen on the wire.
  Ring<Outstanding> out;
  Ring<Sent> sent;  // recent first transmissions, acknowledged or not
  std::vector<Range> missing;
  // Requests in the last rate window (time, frame bytes), for the rate
  // before a CNP.
  Ring<std::pair<std::int64_t, std::uint32_t>> recent;
  std::uint64_t recent_bytes = 0;
  RateSeries rate;
  Samples<kMaxSamples> rtt;
  std::unique_ptr<Congestion> cong;
  std::unique_ptr<Waits> waits;
  std::optional<PendingNak> pending;
  std::unique_ptr<CmPlan> cm;  // what a CM handshake announced, if one did
  Counters s;

  std::int64_t last_req_ns = 0;
  std::uint64_t last_req_frame = 0;
  std::uint64_t msg_bytes = 0;  // message reassembly of first transmissions
  // The newest NAK-sequence-error: time and frame (frame 0: none yet).
  std::int64_t nak_ns = 0;
  std::uint64_t nak_frame = 0;
  std::uint64_t last_ack_frame = 0;
  std::int64_t last_rsp_ns = 0;

  std::uint32_t conv = 0;
  std::uint32_t next_in_conv = 0;  // the next channel of its conversation (index + 1)
  std::uint32_t pos_in_conv = 0;   // its place in that list: ConversationSummary::channels
  std::uint32_t index_psn = 0;     // its key among the request halves waiting for responses
  HostId req_host = 0, rsp_host = 0;
  std::optional<std::uint32_t> req_qpn, rsp_qpn;
  std::optional<std::uint32_t> msg_dma;
  std::uint32_t next_psn = 0;    // one past the newest PSN sent
  std::uint32_t lowest_psn = 0;  // the oldest PSN the capture holds
  // The current retransmission round and the chain of timeout retries.
  std::uint32_t round_last_psn = 0;
  std::uint32_t chain_psn = 0;
  std::uint32_t chain_count = 0;
  // Responder, as seen on the wire.
  std::uint32_t last_ack_psn = 0, last_ack_msn = 0;
  std::uint32_t acked_psn = 0;

  Cause round_cause = Cause::Unknown;
  bool has_req_half = false, has_rsp_half = false;
  bool unreliable = false;  // UC: no ACKs, nothing is ever acknowledged
  bool started = false;
  bool last_read_unknown = false;
  bool last_req_was_timeout_retry = false;
  bool in_msg = false;
  bool msg_clean = true;
  bool round_active = false;
  bool chain_active = false;
  bool ack_seen = false;
  bool acked_valid = false;
  bool unmatched_reported = false;

  Congestion& congestion() {
    if (!cong) cong = std::make_unique<Congestion>();
    return *cong;
  }
  Waits& waited() {
    if (!waits) waits = std::make_unique<Waits>();
    return *waits;
  }
};

/// A REQ waiting for its REP.
struct CmRequest {
  std::uint64_t frame = 0;
  IpAddress from, to;
  std::uint32_t comm_id = 0;
  std::uint32_t qpn = 0;
  std::uint32_t psn = 0;
};

struct Conversation {
  std::uint32_t id = 0;
  Endpoint a, b;
  std::uint64_t packets = 0;
  std::int64_t first_ns = 0, last_ns = 0;
  // Its channels, a list through Channel::next_in_conv (index + 1; 0 ends it).
  std::uint32_t first_channel = 0, last_channel = 0;
  std::uint32_t channel_count = 0;
};

bool endpoint_matches(const Endpoint& e, const IpAddress& addr, std::optional<std::uint32_t> qpn) {
  if (!(e.addr == addr)) return false;
  return !e.qpn_known || !qpn || e.qpn == *qpn;
}

bool exact(const Endpoint& e, const IpAddress& addr, std::optional<std::uint32_t> qpn) {
  return e.addr == addr && e.qpn_known && qpn && e.qpn == *qpn;
}

void learn(Endpoint& e, std::optional<std::uint32_t> qpn) {
  if (!e.qpn_known && qpn) {
    e.qpn = *qpn;
    e.qpn_known = true;
  }
}

Endpoint make_endpoint(const IpAddress& a, std::optional<std::uint32_t> qpn) {
  return Endpoint{a, qpn.value_or(0), qpn.has_value()};
}

bool is_message_end(Position p) {
  return p == Position::Last || p == Position::Only;
}

/// Whether a packet belongs to a half-channel, and to which: the packets of
/// a reliable or unreliable connection (RC, UC, XRC), and CNPs, which go back
/// along the responses of the channel whose data was marked. The half is
/// then its source and destination hosts, the BTH's destination QP and this
/// role: true for a response or a CNP. nullopt for other packets. feed()
/// follows packets by it and feed_all() looks it up ahead, so both take the
/// role from here.
std::optional<bool> half_role(const PacketRecord& rec) noexcept {
  if (rec.op == nullptr || !rec.decoded.ib) return std::nullopt;
  const wire::Transport tr = rec.op->transport;
  if (tr == wire::Transport::CNP) return true;
  if (tr != wire::Transport::RC && tr != wire::Transport::UC && tr != wire::Transport::XRC)
    return std::nullopt;
  return rec.op->is_response();
}

}  // namespace

/// The channels, numbered in order of creation, in chunks of 256 allocated
/// whole: no allocation per channel, and a channel found from its number
/// without first reading a pointer of its own (the list of chunks, a few
/// kilobytes for hundreds of thousands of channels, stays in the cache).
class ChannelStore {
 public:
  Channel& operator[](std::size_t i) noexcept { return chunks_[i / kChunk][i % kChunk]; }
  const Channel& operator[](std::size_t i) const noexcept {
    return chunks_[i / kChunk][i % kChunk];
  }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// A new channel, numbered size() - 1.
  Channel& emplace_back() {
    if (size_ % kChunk == 0) chunks_.push_back(std::make_unique<Channel[]>(kChunk));
    return (*this)[size_++];
  }

 private:
  static constexpr std::size_t kChunk = 256;
  std::vector<std::unique_ptr<Channel[]>> chunks_;
  std::size_t size_ = 0;
};

struct Analyzer::Impl {
  AnalyzerOptions opt;
  CaptureStats stats;
  ChannelStore channels;
  FlatMap<HalfKey, std::uint32_t, HalfKeyHash> halves;
  struct Cached {
    bool valid = false;
    HalfKey key;
    std::size_t idx = 0;
  };
  std::array<Cached, 2> last;
  // The hosts seen, numbered (HostId) in order of first sight.
  std::vector<IpAddress> hosts;
  FlatMap<IpAddress, HostId, IpHash> host_ids;
  // IPv4 addresses (all of a RoCEv2 capture's, usually) by their four bytes:
  // 8-byte slots instead of 24, and one multiplication to hash. The host of
  // both ends of every packet is looked up here.
  FlatMap<std::uint32_t, HostId, Mix64Hash> v4_host_ids;
  std::vector<Conversation> convs;
  // Conversations by each end whose QPN is known (pack(host, qpn)): a new
  // channel finds its conversation among the few that share one of its ends.
  FlatMultiMap<std::uint64_t, std::uint32_t, Mix64Hash> convs_by_end;
  // Half channels waiting for their other half, by host pair (pack(requester,
  // responder)): request halves ordered by the PSN they started at, response
  // halves newest last. A new half looks only at these, so its cost does not
  // grow with the number of QPs in the capture.
  // The lists are found through open-addressed tables of their indexes (a
  // list, once made, stays, empty when nothing waits): a node-based map's
  // bucket and node were two more cache misses for each new half.
  using ReqList = std::multimap<std::uint32_t, std::size_t>;
  using RspList = std::vector<std::size_t>;
  FlatMap<std::uint64_t, std::uint32_t, Mix64Hash> req_index, rsp_index;
  std::vector<ReqList> req_lists;
  std::vector<RspList> rsp_lists;
  /// The request halves between a requester's host and a responder's
  /// waiting for their responses; nullptr when none do.
  ReqList* req_waiting(HostId requester, HostId responder) {
    const std::uint32_t* i = req_index.find(pack(requester, responder));
    return i == nullptr || req_lists[*i].empty() ? nullptr : &req_lists[*i];
  }
  /// The response halves between the two waiting for their requests.
  RspList* rsp_waiting(HostId requester, HostId responder) {
    const std::uint32_t* i = rsp_index.find(pack(requester, responder));
    return i == nullptr || rsp_lists[*i].empty() ? nullptr : &rsp_lists[*i];
  }
  /// The list of `lists` for the two hosts, made when there is none.
  template <class List>
  static List& list_of(FlatMap<std::uint64_t, std::uint32_t, Mix64Hash>& index,
                       std::vector<List>& lists, HostId requester, HostId responder) {
    const auto [i, added] =
        index.try_emplace(pack(requester, responder), static_cast<std::uint32_t>(lists.size()));
    if (added) lists.emplace_back();
    return lists[i];
  }
  // Request halves between one address pair looked at for a response's
  // PSN, nearest start first.
  static constexpr std::size_t kPairScan = 64;
  // REQs without a REP yet, oldest first (at most 256; a vector, which
  // unlike a deque allocates nothing while empty).
  std::vector<CmRequest> cm_requests;
  // The latest time in the capture (files merged without sorting are not in
  // time order): how long the capture went on after a packet.
  std::int64_t latest_ns = std::numeric_limits<std::int64_t>::min();

  // Pause frames: one state per (sender MAC, priority; 8 = 802.3x, the link).
  struct PauseState {
    PfcSummary s;
    bool paused = false;
    std::int64_t start_ns = 0, expiry_ns = 0;
    std::uint64_t start_frame = 0;
  };
  std::map<std::pair<std::uint64_t, std::uint8_t>, std::size_t> pause_index;
  std::vector<PauseState> pauses;
  std::vector<Event> pause_events;  // storms, reported by finish()
  static constexpr std::size_t kMaxPauseEvents = 1024;
  // The port speed: the fastest spacing of two consecutive frames seen
  // before the first pause frame fixes it (when no --link-speed is given).
  std::int64_t prev_frame_ns = -1;
  std::size_t prev_frame_len = 0;
  double fastest_bps = 0;

  // ---- channels and conversations -------------------------------------

  // How far behind the next new PSN a request still counts as one seen
  // before (a resend), not as a new one after a wrap: a quarter of the 24-bit
  // PSN space, inside the half the spec gives the responder's duplicate
  // region, with room to spare.
  static constexpr std::int32_t kResendWindow = 1 << 22;
  // A READ whose response count is unknown (no path MTU seen yet) may own up
  // to this many PSNs: a smaller jump after it is taken as its responses, not
  // as requests missing on the wire.
  static constexpr std::int32_t kUnknownReadSpan = 1 << 16;

  static bool in_window(const Channel& c, std::uint32_t psn) {
    if (!c.started) return false;
    const std::int32_t d = psn_diff(c.next_psn, psn);  // how far next is ahead of psn
    return d > 0 && d <= kResendWindow;
  }

  static constexpr std::size_t kNone = ~std::size_t{0};

  HostId host_id(const IpAddress& a) {
    const auto next = static_cast<HostId>(hosts.size());
    const auto [id, added] =
        is_plain_v4(a) ? v4_host_ids.try_emplace(v4_key(a), next) : host_ids.try_emplace(a, next);
    if (added) hosts.push_back(a);
    return id;
  }

  /// The key of the half (src -> dst, QP qpn, role) when both ends are
  /// plain IPv4: their addresses. nullopt otherwise: the hosts' numbers make
  /// the key then.
  static std::optional<HalfKey> address_key(const IpAddress& src, const IpAddress& dst,
                                            std::uint32_t qpn, bool response) noexcept {
    if (!is_plain_v4(src) || !is_plain_v4(dst)) return std::nullopt;
    return v4_half_key(v4_key(src), v4_key(dst), qpn, response);
  }

  /// The key of a half between two plain IPv4 hosts (address_key's): their
  /// four-byte addresses.
  static HalfKey v4_half_key(std::uint32_t src, std::uint32_t dst, std::uint32_t qpn,
                             bool response) noexcept {
    return HalfKey{src, dst, qpn, response, true};
  }

  /// The key of the half, numbering its hosts unless both are plain IPv4.
  HalfKey half_key(const IpAddress& src, const IpAddress& dst, std::uint32_t qpn, bool response) {
    if (const std::optional<HalfKey> k = address_key(src, dst, qpn, response)) return *k;
    return HalfKey{host_id(src), host_id(dst), qpn, response, false};
  }

  /// The channel a packet belongs to (created if new), or kNone beyond
  /// max_channels.
  std::size_t channel_for(const IpAddress& src_addr, const IpAddress& dst_addr, std::uint32_t qpn,
                          bool response, std::uint32_t psn) {
    const HalfKey key = half_key(src_addr, dst_addr, qpn, response);
    // Packets come in runs of the same half: a one-entry cache per role
    // saves most hash lookups.
    Cached& cache = last[response ? 1 : 0];
    if (cache.valid && cache.key == key) return cache.idx;
    if (const std::uint32_t* idx = halves.find(key)) {
      cache = Cached{true, key, *idx};
      return *idx;
    }
    // A new half. Its hosts were numbered at its key unless both are IPv4.
    const HostId src = host_id(src_addr), dst = host_id(dst_addr);

    std::size_t found = channels.size();
    if (!response) {
      // A request half (src -> dst, QP qpn at dst): join a channel that so
      // far only has responses from dst to src (the newest such).
      if (RspList* list = rsp_waiting(src, dst)) {
        found = list->back();
        list->pop_back();
      }
    } else if (ReqList* list = req_waiting(dst, src)) {
      // A response half (src = responder -> dst = requester, QP qpn at the
      // requester): join the request half that has this PSN outstanding; if
      // none does, the one whose next PSN is closest above it. Several QP
      // pairs between the same two hosts use separate PSN spaces, so the
      // nearest window is the right one, not merely any window holding it.
      // The candidates are visited from the one that started nearest below
      // the PSN, downwards (and round past PSN 0), at most kPairScan.
      //
      // Two QPs of one host whose starting PSNs lie a few apart can both
      // hold the PSN. An ACK usually answers the newest request its
      // requester sent, so a holder whose newest outstanding request ends
      // at the PSN is taken first; else the first holder visited.
      ReqList& waiting = *list;
      const std::size_t none = channels.size();
      std::size_t any = none, holder = none, window = none;
      std::int32_t best_d = 0;
      auto pos = waiting.upper_bound(psn);
      for (std::size_t n = 0; n < std::min(waiting.size(), kPairScan); ++n) {
        if (pos == waiting.begin()) pos = waiting.end();
        --pos;
        const std::size_t i = pos->second;
        const Channel& c = channels[i];
        if (any == none || i > any) any = i;
        if (std::any_of(c.out.begin(), c.out.end(),
                        [&](const Outstanding& o) { return o.holds(psn); })) {
          if (c.out.back().last_psn() == psn) {
            found = i;
            break;
          }
          if (holder == none) holder = i;
          continue;
        }
        if (in_window(c, psn)) {
          const std::int32_t d = psn_diff(c.next_psn, psn);
          if (window == none || d < best_d) {
            window = i;
            best_d = d;
          }
        }
      }
      if (found == none) found = holder != none ? holder : window != none ? window : any;
      auto [lo, hi] = waiting.equal_range(channels[found].index_psn);
      for (auto w = lo; w != hi; ++w)
        if (w->second == found) {
          waiting.erase(w);
          break;
        }
    }
    if (found == channels.size()) {
      if (channels.size() >= opt.max_channels) return kNone;
      Channel& c = channels.emplace_back();
      c.req_host = response ? dst : src;
      c.rsp_host = response ? src : dst;
      c.index_psn = psn;
      if (response)
        list_of(rsp_index, rsp_lists, dst, src).push_back(found);
      else
        list_of(req_index, req_lists, src, dst).emplace(psn, found);
    }
    Channel& c = channels[found];
    if (response) {
      c.has_rsp_half = true;
      c.req_qpn = qpn;
    } else {
      c.has_req_half = true;
      c.rsp_qpn = qpn;
    }
    halves.try_emplace(key, static_cast<std::uint32_t>(found));
    attach(found);
    return found;
  }

  /// The channel of a CNP from src to dst's QP qpn (`response`: its half
  /// role): the half it goes back along, else the request half of that QP,
  /// else cnp_channel's guess; kNone when there is none.
  std::size_t cnp_channel_for(const IpAddress& src, const IpAddress& dst, std::uint32_t qpn,
                              bool response) {
    const HostId src_host = host_id(src), dst_host = host_id(dst);
    const HalfKey key = address_key(src, dst, qpn, response)
                            .value_or(HalfKey{src_host, dst_host, qpn, response, false});
    if (const std::uint32_t* idx = halves.find(key)) return *idx;
    HalfKey as_request = key;
    as_request.response = false;
    if (const std::uint32_t* idx = halves.find(as_request)) return *idx;
    return cnp_channel(key, src_host, dst_host);
  }

  /// The channel of a CNP (`key`: its half; `responder`, its source host;
  /// `requester`, its destination host, whose QP `key.qpn` is) when none of
  /// that channel's responses has been seen yet, so its
  /// requester QP is not known from them: a NIC sends CNPs for the marked
  /// packets of a message long before that message's ACK. Among the request
  /// halves from the requester's host to the responder's that wait for their
  /// responses, the one that knows this requester QP (from a CM handshake),
  /// or else the only one that knows none. The CNP then teaches it its
  /// requester QP, and later CNPs and ACKs to that QP join it directly.
  /// kNone when no request half qualifies, or several do (more QPs between
  /// the two hosts than one CNP can tell apart).
  std::size_t cnp_channel(const HalfKey& key, HostId responder, HostId requester) {
    ReqList* const waiting = req_waiting(requester, responder);
    if (waiting == nullptr || waiting->size() > kPairScan) return kNone;
    const auto none = waiting->end();
    auto pick = none, unknown_at = none;
    std::size_t unknown = 0;
    for (auto w = waiting->begin(); w != none && pick == none; ++w) {
      const Channel& c = channels[w->second];
      if (!c.req_qpn) {
        ++unknown;
        unknown_at = w;
      } else if (*c.req_qpn == key.qpn) {
        pick = w;
      }
    }
    if (pick == none) {
      if (unknown != 1) return kNone;
      pick = unknown_at;
    }
    const std::size_t found = pick->second;
    Channel& c = channels[found];
    if (!c.req_qpn) {
      c.req_qpn = key.qpn;
      attach_known(c);
    }
    waiting->erase(pick);
    halves.try_emplace(key, static_cast<std::uint32_t>(found));
    return found;
  }

  /// Puts a channel into its conversation (creating it) and teaches the
  /// conversation the QPNs the channel has learnt.
  void attach(std::size_t idx) {
    Channel& c = channels[idx];
    const IpAddress req_addr = hosts[c.req_host];
    const IpAddress rsp_addr = hosts[c.rsp_host];
    if (c.conv != 0) {
      Conversation& v = convs[c.conv - 1];
      for (Endpoint* e : {&v.a, &v.b}) {
        if (e->addr == req_addr && !(e->addr == rsp_addr && e->qpn_known))
          learn_end(v.id, *e, c.req_qpn);
        if (e->addr == rsp_addr && !(e->addr == req_addr && e->qpn_known))
          learn_end(v.id, *e, c.rsp_qpn);
      }
      return;
    }
    // Candidates: the conversations that know one of the channel's ends
    // exactly, in order of creation.
    std::vector<std::uint32_t> list;
    for (const auto& [host, qpn] :
         {std::pair{c.req_host, c.req_qpn}, std::pair{c.rsp_host, c.rsp_qpn}}) {
      if (!qpn) continue;
      convs_by_end.for_each(pack(host, *qpn), [&](std::uint32_t id) { list.push_back(id); });
    }
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    for (std::uint32_t id : list) {
      Conversation& v = convs[id - 1];
      for (int swap = 0; swap < 2; ++swap) {
        Endpoint& r = swap ? v.b : v.a;  // the requester's end
        Endpoint& d = swap ? v.a : v.b;  // the responder's end
        const bool one_exact = exact(r, req_addr, c.req_qpn) || exact(d, rsp_addr, c.rsp_qpn);
        if (one_exact && endpoint_matches(r, req_addr, c.req_qpn) &&
            endpoint_matches(d, rsp_addr, c.rsp_qpn)) {
          learn_end(id, r, c.req_qpn);
          learn_end(id, d, c.rsp_qpn);
          c.conv = id;
          add_channel(v, idx);
          return;
        }
      }
    }
    Conversation v;
    v.id = static_cast<std::uint32_t>(convs.size() + 1);
    // a = the end that sent the first packet.
    const bool first_is_request = c.has_req_half;
    const Endpoint req = make_endpoint(req_addr, c.req_qpn);
    const Endpoint rsp = make_endpoint(rsp_addr, c.rsp_qpn);
    v.a = first_is_request ? req : rsp;
    v.b = first_is_request ? rsp : req;
    add_channel(v, idx);
    c.conv = v.id;
    for (const Endpoint* e : {&v.a, &v.b})
      if (e->qpn_known) convs_by_end.insert(pack(host_id(e->addr), e->qpn), v.id);
    convs.push_back(v);
  }

  void add_channel(Conversation& v, std::size_t idx) {
    const auto n = static_cast<std::uint32_t>(idx + 1);
    channels[idx].pos_in_conv = v.channel_count++;
    if (v.last_channel == 0)
      v.first_channel = n;
    else
      channels[v.last_channel - 1].next_in_conv = n;
    v.last_channel = n;
  }

  /// learn() for a conversation's end, keeping convs_by_end up to date.
  void learn_end(std::uint32_t id, Endpoint& e, std::optional<std::uint32_t> qpn) {
    if (e.qpn_known || !qpn) return;
    learn(e, qpn);
    convs_by_end.insert(pack(host_id(e.addr), e.qpn), id);
  }

  // ---- requester side ---------------------------------------------------

  /// Whether a request holding psn was ever sent on the channel.
  static bool ever_sent(const Channel& c, std::uint32_t psn) {
    return std::any_of(c.sent.begin(), c.sent.end(), [&](const Sent& o) { return o.holds(psn); });
  }

  /// Removes psn from the missing ranges; returns whether it was missing and
  /// whether a NAK had asked for it (`naked`).
  bool take_missing(Channel& c, std::uint32_t psn, bool& naked) {
    for (std::size_t i = 0; i < c.missing.size(); ++i) {
      Range& r = c.missing[i];
      if (!(psn_before_eq(r.begin, psn) && psn_before(psn, r.end))) continue;
      naked = r.naked;
      const Range right{psn_add(psn, 1), r.end, r.naked};
      r.end = psn;
      if (r.begin == r.end) c.missing.erase(c.missing.begin() + static_cast<std::ptrdiff_t>(i));
      if (right.begin != right.end && c.missing.size() < kMaxMissing) c.missing.push_back(right);
      return true;
    }
    return false;
  }

  void add_missing(Channel& c, std::uint32_t begin, std::uint32_t end) {
    if (begin == end) return;
    if (c.missing.size() >= kMaxMissing) c.missing.erase(c.missing.begin());
    c.missing.push_back(Range{begin, end, false});
  }

  void push_outstanding(Channel& c, const Outstanding& o) {
    if (c.out.size() >= opt.max_outstanding) c.out.pop_front();
    c.out.push_back(o);
    // The history of first transmissions outlives acknowledgement: a resend
    // of an acknowledged PSN (lost ACK) still names its original frame.
    if (c.sent.size() >= opt.max_outstanding) c.sent.pop_front();
    c.sent.push_back(Sent{o.psn, o.npsn, o.frame, o.time_ns});
  }

  void count_message(Channel& c, Operation op) {
    switch (op) {
      case Operation::Send: ++c.s.sends; break;
      case Operation::Write: ++c.s.writes; break;
      case Operation::ReadRequest: ++c.s.reads; break;
      case Operation::CompareSwap: ++c.s.compare_swaps; break;
      case Operation::FetchAdd: ++c.s.fetch_adds; break;
      default: break;
    }
  }

  /// Adds a first transmission to the message being reassembled. `late`: it
  /// arrived after newer PSNs (reordering before the capture point). The
  /// packets of a message are summed in arrival order, so a message any of
  /// whose First, Middle or Last packets came late is not checked: its
  /// packets may have been summed into the wrong message, or not at all (a
  /// Middle that overtook its First).
  void reassemble(Channel& c, PacketRecord& rec, const wire::IbPacket& ib, bool late) {
    const wire::OpcodeInfo& op = *rec.op;
    const std::uint64_t len = ib.payload_length;
    switch (op.position) {
      case Position::First:
        c.in_msg = true;
        c.msg_clean = !late;
        c.msg_bytes = len;
        c.msg_dma = ib.reth ? std::optional(ib.reth->dma_len) : std::nullopt;
        return;
      case Position::Middle:
        if (c.in_msg && !late)
          c.msg_bytes += len;
        else
          c.msg_clean = false;
        return;
      case Position::Last:
        if (!c.in_msg || late) c.msg_clean = false;
        c.msg_bytes += len;
        break;
      case Position::Only:
        c.msg_clean = true;
        c.msg_bytes = len;
        c.msg_dma = (ib.reth && op.operation == Operation::Write) ? std::optional(ib.reth->dma_len)
                                                                  : std::nullopt;
        break;
    }
    // A complete message: check the RETH DMA length against what was carried
    // (IBTA 9.4.3: the payloads of a WRITE must add up to the DMA length).
    count_message(c, op.operation);
    if (op.operation == Operation::Write && c.msg_clean && c.msg_dma && *c.msg_dma != c.msg_bytes) {
      Event e{EventType::LengthMismatch, rec.frame};
      e.psn = ib.bth.psn;
      e.value = c.msg_bytes;
      e.count = *c.msg_dma;
      rec.events.push_back(e);
    }
    c.in_msg = false;
    c.msg_dma.reset();
  }

  void on_request(Channel& c, PacketRecord& rec) {
    const wire::IbPacket& ib = *rec.decoded.ib;
    const wire::OpcodeInfo& op = *rec.op;
    const std::uint32_t psn = ib.bth.psn;
    const std::int64_t t = rec.time_ns;
    ++c.s.request_packets;
    c.s.payload_bytes += ib.payload_length;
    track_mtu(c, op.position, ib.payload_length);

    std::uint32_t npsn = 1;
    std::uint32_t read_len = 0;
    if (op.operation == Operation::ReadRequest && ib.reth) {
      // A READ request uses one PSN per response packet it will receive
      // (9.7.1.1): ceil(length / path MTU), at least one.
      read_len = ib.reth->dma_len;
      if (read_len == 0)
        npsn = 1;
      else if (c.s.path_mtu_exact && c.s.path_mtu > 0)
        npsn =
            static_cast<std::uint32_t>((std::uint64_t{read_len} + c.s.path_mtu - 1) / c.s.path_mtu);
      else if (read_len <= 256)
        npsn = 1;  // below the smallest path MTU
      else
        npsn = 0;  // known once its responses are seen
    }

    enum class Kind { New, Late, Resend } kind = Kind::New;
    if (!c.started) {
      c.started = true;
      c.lowest_psn = psn;
      if (c.cm) {
        Event e{EventType::CmLinked, rec.frame, c.cm->frame, c.cm->starting_psn};
        e.value = psn;
        rec.events.push_back(e);
      }
    } else {
      const std::int32_t d = psn_diff(psn, c.next_psn);
      if (d > 0 && !(c.last_read_unknown && d < kUnknownReadSpan)) {
        Event e{EventType::PsnGap, rec.frame};
        e.psn_begin = c.next_psn;
        e.psn = psn_add(psn, -1);
        e.count = static_cast<std::uint32_t>(d);
        rec.events.push_back(e);
        ++c.s.psn_gaps;
        add_missing(c, c.next_psn, psn);
        c.msg_clean = false;
      } else if (d < 0) {
        bool naked = false;
        if (take_missing(c, psn, naked)) {
          kind = Kind::Late;
          Event e{EventType::OutOfOrder, rec.frame};
          e.psn = psn;
          // No NAK asked for it and the requester is not recovering from
          // one: the responder accepted the reordering (a NIC that tolerates
          // out-of-order arrival, e.g. with adaptive routing).
          e.code = (naked || c.pending || c.round_active) ? 0 : 1;
          rec.events.push_back(e);
          ++c.s.out_of_order;
        } else if (psn_before(psn, c.lowest_psn) && !ever_sent(c, psn) &&
                   !(c.acked_valid && psn_before_eq(psn, c.acked_psn))) {
          // Older than anything seen and never seen itself: it was overtaken
          // before the capture's first packet of this stream (reordering at
          // the start), not sent again. The PSNs between it and the oldest
          // seen so far are still on their way.
          kind = Kind::Late;
          add_missing(c, psn_add(psn, 1), c.lowest_psn);
          Event e{EventType::OutOfOrder, rec.frame};
          e.psn = psn;
          e.code = (c.pending || c.round_active) ? 0 : 1;
          rec.events.push_back(e);
          ++c.s.out_of_order;
        } else {
          kind = Kind::Resend;
        }
      }
    }

    if (kind == Kind::Resend) {
      resend(c, rec, psn);
    } else {
      if (kind == Kind::New) {
        c.next_psn = psn_add(psn, std::max<std::uint32_t>(npsn, 1));
        c.last_read_unknown = npsn == 0;
        c.round_active = false;
      }
      if (psn_before(psn, c.lowest_psn)) c.lowest_psn = psn;
      push_outstanding(
          c, Outstanding{psn, npsn, rec.frame, t, op.operation, op.position, false, read_len});
      c.s.unique_payload_bytes += ib.payload_length;
      reassemble(c, rec, ib, kind == Kind::Late);
      c.last_req_was_timeout_retry = false;
    }
    c.last_req_ns = t;
    c.last_req_frame = rec.frame;
  }

  // Where is the capture point? A requester sends its new PSNs in order, so
  // first transmissions seen out of order (OutOfOrder events) mean the tap
  // is after the reordering: on the network's receiver side. There the gap
  // before a resend is a difference of arrival times, not the requester's
  // silence. A resend that goes back behind the current go-back-N round
  // without a new NAK could then be (a) a local ACK timeout or (b) a resend
  // of that round overtaken on the way by later resends of the same round.
  // The requester cannot time out sooner than the shortest local ACK timeout
  // after the NAK made it resend (IBTA 9.7.6.1.3: 4.096 µs × 2^timeout,
  // timeout 1..31; 0 means no timeout): 8.192 µs. Inside that bound, (b) it
  // is, and the event says where the tap is.
  static constexpr std::int64_t kMinAckTimeoutNs = 8192;

  [[nodiscard]] static bool reordered_go_back_n(const Channel& c, std::int64_t t) {
    // (New PSNs may have been sent in between: the NAK still bounds it.)
    if (c.pending) return false;
    if (c.s.out_of_order == 0 || c.nak_frame == 0) return false;  // tap not after the reordering
    return t - c.nak_ns < kMinAckTimeoutNs;
  }

  void resend(Channel& c, PacketRecord& rec, std::uint32_t psn) {
    const std::int64_t t = rec.time_ns;
    ++c.s.retransmitted_packets;
    Event rx{EventType::Retransmission, rec.frame};
    rx.psn = psn;
    for (Outstanding& o : c.out)
      if (o.holds(psn)) o.retransmitted = true;  // Karn: no RTT sample from it any more
    for (std::size_t i = c.sent.size(); i-- > 0;) {
      if (c.sent[i].holds(psn)) {
        rx.related_frame = c.sent[i].frame;
        rx.delta_ns = t - c.sent[i].time_ns;
        break;
      }
    }
    // A new round starts on the first resend, after a new NAK, or when the
    // requester goes back again to a PSN it has already resent in this round.
    bool new_round =
        !c.round_active || c.pending.has_value() || psn_before_eq(psn, c.round_last_psn);
    if (new_round && reordered_go_back_n(c, t)) {
      // Part of the go-back-N round already under way, overtaken on the way
      // by later resends of the same round: not a new round, not a timeout.
      new_round = false;
      c.round_cause = Cause::Nak;
      rx.code = 1;
      rx.value = c.nak_frame;  // the NAK whose round it belongs to
    }
    bool timeout_retry = false;
    if (new_round) {
      if (c.pending && !c.pending->rnr) {
        // 9.7.5.2.4: after a NAK-sequence-error the requester resends from
        // the NAKed PSN (go-back-N).
        Event e{EventType::GoBackN, rec.frame, c.pending->frame, psn};
        e.delta_ns = t - c.pending->time_ns;
        rec.events.push_back(e);
        ++c.s.go_back_n;
        c.round_cause = Cause::Nak;
        c.chain_active = false;
      } else if (c.pending) {
        // 9.7.5.2.8: after an RNR NAK the requester waits the RNR timer.
        Event e{EventType::RnrRetry, rec.frame, c.pending->frame, psn};
        e.delta_ns = t - c.pending->time_ns;
        e.code = c.pending->code;
        rec.events.push_back(e);
        c.waited().rnr_waits.add(e.delta_ns);
        c.round_cause = Cause::Rnr;
        c.chain_active = false;
      } else {
        // No NAK: the local ACK timer expired (9.7.6.1.3). The silence since
        // the requester's previous transmission measures the timer.
        const std::int64_t gap = t - c.last_req_ns;
        if (c.chain_active && c.chain_psn == psn) {
          ++c.chain_count;
        } else {
          c.chain_active = true;
          c.chain_psn = psn;
          c.chain_count = 1;
        }
        Event e{EventType::Timeout, rec.frame, c.last_req_frame, psn};
        e.delta_ns = gap;
        e.count = c.chain_count;
        e.code = static_cast<std::uint8_t>(
            wire::ack_timeout_exponent(static_cast<double>(gap) * 1e-9).value_or(0));
        rec.events.push_back(e);
        ++c.s.timeouts;
        c.s.max_retries = std::max(c.s.max_retries, c.chain_count);
        c.waited().timeout_gaps.add(gap);
        c.round_cause = Cause::Timeout;
        timeout_retry = true;
      }
      c.pending.reset();
      c.round_active = true;
    }
    c.round_last_psn = psn;
    rx.cause = c.round_cause;
    rec.events.push_back(rx);
    if (c.acked_valid && psn_before_eq(psn, c.acked_psn)) {
      Event e{EventType::DuplicateRequest, rec.frame, 0, psn};
      rec.events.push_back(e);
    }
    c.last_req_was_timeout_retry = timeout_retry || (c.last_req_was_timeout_retry && !new_round);
  }

  void track_mtu(Channel& c, Position pos, std::size_t len) {
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(len, 1u << 16));
    if (pos == Position::First || pos == Position::Middle) {
      if (!c.s.path_mtu_exact || n > c.s.path_mtu) c.s.path_mtu = n;
      c.s.path_mtu_exact = true;
    } else if (!c.s.path_mtu_exact) {
      c.s.path_mtu = std::max(c.s.path_mtu, n);
    }
  }

  // ---- responder side -----------------------------------------------------

  /// Everything up to `psn` is acknowledged (an ACK acknowledges all older
  /// PSNs: ACK coalescing, 9.7.5.1.2). Returns the AckMatched event.
  Event ack_through(Channel& c, PacketRecord& rec, std::uint32_t psn, bool sample = true) {
    Event e{EventType::AckMatched, rec.frame, 0, psn};
    e.psn_begin = psn;
    bool first = true;
    c.out.erase_if([&](const Outstanding& o) {
      if (!psn_before_eq(o.last_psn(), psn)) return false;
      if (first || psn_before(o.psn, e.psn_begin)) {
        e.psn_begin = o.psn;
        e.related_frame = o.frame;
        first = false;
      }
      if (is_message_end(o.pos)) ++e.count;
      // Karn's rule: no sample while the requester is resending, since the
      // ACK may answer a resend rather than the packet it names.
      if (sample && !c.round_active && o.last_psn() == psn && !o.retransmitted) {
        e.delta_ns = rec.time_ns - o.time_ns;
      }
      return true;
    });
    if (e.delta_ns >= 0) {
      rec.rtt_ns = e.delta_ns;
      c.rtt.add(e.delta_ns);
      ++c.s.rtt_samples;
      if (c.s.rtt_min_ns < 0 || e.delta_ns < c.s.rtt_min_ns) c.s.rtt_min_ns = e.delta_ns;
      c.s.rtt_max_ns = std::max(c.s.rtt_max_ns, e.delta_ns);
    }
    if (!c.acked_valid || psn_before(c.acked_psn, psn)) {
      c.acked_psn = psn;
      c.acked_valid = true;
      c.chain_active = false;  // progress: the retry counter starts again
      if (c.pending && psn_before_eq(c.pending->psn, psn)) c.pending.reset();
    }
    return e;
  }

  void unmatched(Channel& c, PacketRecord& rec) {
    if (c.unmatched_reported) return;
    c.unmatched_reported = true;
    rec.events.push_back(
        Event{EventType::UnmatchedResponse, rec.frame, 0, rec.decoded.ib->bth.psn});
  }

  void on_response(Channel& c, PacketRecord& rec) {
    c.has_rsp_half = true;  // also when a CNP made the half (cnp_channel)
    const wire::IbPacket& ib = *rec.decoded.ib;
    const wire::OpcodeInfo& op = *rec.op;
    const std::uint32_t psn = ib.bth.psn;
    const std::int64_t t = rec.time_ns;
    ++c.s.response_packets;
    c.last_rsp_ns = t;
    if (!c.started) unmatched(c, rec);

    if (op.operation == Operation::ReadResponse) {
      c.s.payload_bytes += ib.payload_length;
      c.s.unique_payload_bytes += ib.payload_length;
      track_mtu(c, op.position, ib.payload_length);
      // The READ this packet answers: the newest READ at or before its PSN.
      Outstanding* req = nullptr;
      for (Outstanding& o : c.out)
        if ((o.op == Operation::ReadRequest || o.op == Operation::Flush ||
             o.op == Operation::AtomicWrite) &&
            psn_before_eq(o.psn, psn) && (o.npsn == 0 || o.holds(psn)))
          req = &o;
      if (req == nullptr) {
        if (c.started) unmatched(c, rec);
        return;
      }
      if (req->op != Operation::ReadRequest) {
        // FLUSH and ATOMIC WRITE are answered by a READ response Only of
        // length zero (rxe_resp.c): an acknowledgement, not READ data.
        Event ack = ack_through(c, rec, psn);
        if (ack.count > 0) rec.events.push_back(ack);
        return;
      }
      if (is_message_end(op.position)) {
        if (req->npsn == 0) req->npsn = static_cast<std::uint32_t>(psn_diff(psn, req->psn) + 1);
        Event e{EventType::ReadMatched, rec.frame, req->frame, psn};
        e.psn_begin = req->psn;
        e.delta_ns = t - req->time_ns;
        e.value = req->read_len;
        rec.events.push_back(e);
        // A READ response also acknowledges every older request (9.7.5.1.3).
        Event ack = ack_through(c, rec, psn);
        (void)ack;
      }
      return;
    }
    if (!ib.aeth) return;
    const wire::Aeth& aeth = *ib.aeth;

    if (op.operation == Operation::AtomicAcknowledge) {
      Outstanding* req = nullptr;
      for (Outstanding& o : c.out)
        if (o.psn == psn && (o.op == Operation::FetchAdd || o.op == Operation::CompareSwap))
          req = &o;
      if (req == nullptr) {
        if (c.started) unmatched(c, rec);
      } else {
        Event e{EventType::AtomicMatched, rec.frame, req->frame, psn};
        e.delta_ns = t - req->time_ns;
        e.value = ib.atomic_ack_eth ? ib.atomic_ack_eth->orig : 0;
        e.code = req->op == Operation::CompareSwap ? 1 : 0;
        rec.events.push_back(e);
      }
      ++c.s.acks;
      (void)ack_through(c, rec, psn);
      return;
    }

    switch (aeth.kind()) {
      case wire::AckKind::Ack: {
        ++c.s.acks;
        if (c.ack_seen && psn == c.last_ack_psn && aeth.msn == c.last_ack_msn) {
          rec.events.push_back(Event{EventType::DuplicateAck, rec.frame, c.last_ack_frame, psn});
          ++c.s.duplicate_acks;
          (void)ack_through(c, rec, psn);
        } else {
          rec.events.push_back(ack_through(c, rec, psn));
        }
        c.ack_seen = true;
        c.last_ack_psn = psn;
        c.last_ack_msn = aeth.msn;
        c.last_ack_frame = rec.frame;
        return;
      }
      case wire::AckKind::RnrNak: {
        ++c.s.rnr_naks;
        Event e{EventType::RnrNak, rec.frame, 0, psn};
        e.code = aeth.value();
        rec.events.push_back(e);
        // An RNR NAK acknowledges everything before its PSN (9.7.5.2.8).
        (void)ack_through(c, rec, psn_add(psn, -1), false);
        c.pending = PendingNak{psn, true, aeth.value(), rec.frame, t};
        return;
      }
      case wire::AckKind::Nak: {
        const std::uint8_t code = aeth.value();
        // Codes 5-31 are reserved; a NAK with one counts with the last
        // defined code (invalid RD request) rather than out of the array.
        constexpr auto kLastNak = static_cast<std::size_t>(wire::NakCode::InvalidRdRequest);
        ++c.s.naks[std::min<std::size_t>(code, kLastNak)];
        if (code == 0) {
          Event e{EventType::NakSequence, rec.frame, 0, psn};
          // The packet that revealed the gap: the newest request sent.
          e.related_frame = c.last_req_frame;
          rec.events.push_back(e);
          // The NAK's PSN is the one the responder expected; everything
          // before it is acknowledged (9.7.5.2.4). If the capture has not
          // seen that PSN yet, the requester sent it before the capture
          // point saw it: its arrival later is a late arrival, not a resend.
          if (c.started && psn_before(psn, c.lowest_psn)) {
            add_missing(c, psn, c.lowest_psn);
            c.lowest_psn = psn;
          }
          // The responder is NAKing: nothing missing now is "tolerated".
          for (Range& r : c.missing) r.naked = true;
          (void)ack_through(c, rec, psn_add(psn, -1), false);
          c.pending = PendingNak{psn, false, 0, rec.frame, t};
          c.nak_ns = t;
          c.nak_frame = rec.frame;
        } else {
          Event e{EventType::NakFatal, rec.frame, c.last_req_frame, psn};
          e.code = code;
          rec.events.push_back(e);
        }
        return;
      }
      case wire::AckKind::Reserved: return;
    }
  }

  // ---- connection set-up ---------------------------------------------------

  /// A CM MAD: a REQ announces the requester's QPN, the REP the responder's,
  /// and each the PSN its own QP's receive queue expects first (rq_psn): the
  /// REQ's Starting PSN is the first PSN the REP's side will send, the REP's
  /// the first the REQ's side will send. That is how the Linux CM fills them
  /// (rdma_cm over Soft-RoCE, tests/data/rping_cm.pcap); together they name
  /// both PSN spaces of the connection before its first packet.
  void on_cm(PacketRecord& rec, const IpAddress& src, const IpAddress& dst) {
    const wire::cm::Message& m = *rec.cm;
    const auto qp = wire::cm::announced_qp(m).value_or(wire::cm::AnnouncedQp{});
    Event e{EventType::CmHandshake, rec.frame};
    e.code = static_cast<std::uint8_t>(static_cast<std::uint16_t>(wire::cm::attr_of(m)) & 0xFF);
    e.psn = qp.starting_psn;
    e.psn_begin = qp.qpn;
    if (const auto* req = std::get_if<wire::cm::Req>(&m)) {
      e.value = req->service_id;
      e.count = req->retry_count;
      if (cm_requests.size() >= 256) cm_requests.erase(cm_requests.begin());
      cm_requests.push_back(
          CmRequest{rec.frame, src, dst, req->local_comm_id, req->qpn, req->starting_psn});
    } else if (const auto* rej = std::get_if<wire::cm::Rej>(&m)) {
      e.value = rej->reason;
      for (auto it = cm_requests.begin(); it != cm_requests.end(); ++it)
        if (it->from == dst && it->to == src && it->comm_id == rej->remote_comm_id) {
          e.related_frame = it->frame;
          cm_requests.erase(it);
          break;
        }
    } else if (const auto* rep = std::get_if<wire::cm::Rep>(&m)) {
      for (auto it = cm_requests.begin(); it != cm_requests.end(); ++it) {
        if (!(it->from == dst) || !(it->to == src) || it->comm_id != rep->remote_comm_id) continue;
        e.related_frame = it->frame;
        // Requests from the REQ's side go to the REP's QP and start at the
        // REP's PSN; requests from the REP's side start at the REQ's. The
        // first channel learns both QPNs before the second one is created,
        // so both land in the same conversation.
        const std::size_t iab = channel_for(dst, src, rep->qpn, false, rep->starting_psn);
        if (iab == kNone) break;
        channels[iab].req_qpn = it->qpn;
        channels[iab].cm = std::make_unique<CmPlan>(CmPlan{rec.frame, it->qpn, rep->starting_psn});
        attach_known(channels[iab]);
        const std::size_t iba = channel_for(src, dst, it->qpn, false, it->psn);
        if (iba == kNone) break;
        Channel& ab = channels[iab];
        Channel& ba = channels[iba];
        ba.req_qpn = rep->qpn;
        ba.cm = std::make_unique<CmPlan>(CmPlan{it->frame, rep->qpn, it->psn});
        attach_known(ba);
        rec.conversation = ab.conv;
        cm_requests.erase(it);
        break;
      }
    }
    rec.events.push_back(e);
  }

  /// Teaches a channel's conversation the QPNs a CM handshake revealed.
  void attach_known(Channel& c) {
    if (c.conv == 0) return;
    Conversation& v = convs[c.conv - 1];
    for (Endpoint* ep : {&v.a, &v.b}) {
      if (ep->addr == hosts[c.req_host] && !ep->qpn_known) learn_end(v.id, *ep, c.req_qpn);
    }
  }

  // ---- per packet ---------------------------------------------------------

  // ---- looking ahead ------------------------------------------------------
  //
  // In a capture of a whole cluster consecutive packets belong to different
  // channels, whose state lies far apart in memory: each packet would wait
  // for its half-channel slot, its channel, its conversation and its rings
  // to come from memory, one after the other. feed_all() looks a few
  // packets ahead, in stages (the key, then the channel, then what the
  // channel points to), each asking the processor to fetch what the next
  // stage reads, so that by the time a packet is analysed its state is in
  // the cache. The stages only read; the one result feed() uses, the
  // channel of a known half-channel key, cannot change meanwhile (a key,
  // once in `halves`, keeps its channel, and host numbers never change).

  static constexpr std::uint32_t kNoChannel = ~std::uint32_t{0};
  struct Ahead {
    HalfKey key;
    std::uint32_t idx = kNoChannel;  // the key's channel, when it had one
    bool keyed = false;
  };
  std::vector<Ahead> ahead;

  /// The number of an address already seen (nullptr: not seen yet).
  [[nodiscard]] const HostId* find_host(const IpAddress& a) const {
    return is_plain_v4(a) ? v4_host_ids.find(v4_key(a)) : host_ids.find(a);
  }

  /// The lines of a record the analysis of a RoCE packet reads: its first
  /// 320 bytes (record.hpp orders the members so) and the line where
  /// `decoded.ib` says whether it holds a packet.
  static void prefetch_record(const PacketRecord& rec) {
    prefetch_lines(&rec, 320);
    prefetch_line(reinterpret_cast<const char*>(&rec.decoded.ib + 1) - 1);
  }

  /// Stage 1: the packet's half-channel key, as feed() makes it.
  void ahead_key(const PacketRecord& rec, Ahead& a) const {
    a = Ahead{};
    if (!rec.is_roce()) return;  // pause frames included
    const std::optional<bool> response = half_role(rec);
    if (!response) return;
    const std::uint32_t qpn = rec.decoded.ib->bth.dest_qp;
    if (const auto& ip = rec.decoded.ipv4) {
      // RoCEv2 over IPv4, the usual case: address_key's key, from the
      // header's addresses without making IpAddress values of them.
      a.key = v4_half_key(v4_key(ip->src), v4_key(ip->dst), qpn, *response);
    } else {
      const auto src = rec.decoded.src_address();
      const auto dst = rec.decoded.dst_address();
      if (!src || !dst) return;
      if (const std::optional<HalfKey> k = address_key(*src, *dst, qpn, *response)) {
        a.key = *k;
      } else {
        const HostId* s = find_host(*src);
        const HostId* d = find_host(*dst);
        if (s == nullptr || d == nullptr) return;
        a.key = HalfKey{*s, *d, qpn, *response, false};
      }
    }
    a.keyed = true;
    halves.prefetch(a.key);
  }

  /// Stage 2: the key's channel, when the key is known, and its first line.
  void ahead_find(Ahead& a) const {
    if (!a.keyed) return;
    if (const std::uint32_t* idx = halves.find(a.key)) {
      a.idx = *idx;
      prefetch_line(&channels[*idx]);
    }
  }

  /// Stage 3: the channel itself.
  void ahead_channel(const Ahead& a) const {
    if (a.idx == kNoChannel) return;
    prefetch_lines(&channels[a.idx], sizeof(Channel));
  }

  /// Stage 4: what the channel points to.
  void ahead_state(const Ahead& a) const {
    if (a.idx == kNoChannel) return;
    const Channel& c = channels[a.idx];
    // The whole conversation: feed() writes its packet count and times,
    // which lie past its first line.
    if (c.conv != 0) prefetch_lines(&convs[c.conv - 1], sizeof(Conversation));
    c.out.prefetch();
    c.sent.prefetch();
    c.recent.prefetch();
    if (!c.rate.bytes.empty()) prefetch_line(&c.rate.bytes.back());
    if (!c.rtt.v.empty()) prefetch_line(&c.rtt.v.back());
    if (c.cong) prefetch_line(c.cong.get());
  }

  void feed_all(std::span<PacketRecord> recs) {
    constexpr std::size_t kStep = 2;  // packets between two stages
    constexpr std::size_t kStages = 4;
    const std::size_t n = recs.size();
    if (ahead.size() < n) ahead.resize(n);
    // The records themselves were decoded on another core: fetched too.
    constexpr std::size_t kRecordAhead = 8;
    for (std::size_t i = 0; i < std::min(n, kRecordAhead); ++i) prefetch_record(recs[i]);
    for (std::size_t i = 0; i < n + kStages * kStep; ++i) {
      if (i + kRecordAhead < n) prefetch_record(recs[i + kRecordAhead]);
      if (i < n) ahead_key(recs[i], ahead[i]);
      if (i >= kStep && i - kStep < n) ahead_find(ahead[i - kStep]);
      if (i >= 2 * kStep && i - 2 * kStep < n) ahead_channel(ahead[i - 2 * kStep]);
      if (i >= 3 * kStep && i - 3 * kStep < n) ahead_state(ahead[i - 3 * kStep]);
      if (i >= kStages * kStep && i - kStages * kStep < n)
        feed(recs[i - kStages * kStep], &ahead[i - kStages * kStep]);
    }
  }

  /// `hint`: what feed_all() found out ahead about this packet, if anything.
  void feed(PacketRecord& rec, const Ahead* hint = nullptr) {
    ++stats.frames;
    stats.bytes += rec.captured_length;
    if (stats.frames == 1) stats.first_ns = rec.time_ns;
    stats.last_ns = rec.time_ns;
    latest_ns = std::max(latest_ns, rec.time_ns);
    note_spacing(rec);
    // (A pause frame is never RoCE: asked only of the others, the record's
    // rarely used tail stays unread for RoCE packets. Likewise a VCRC is
    // only native InfiniBand's.)
    if (!rec.is_roce()) {
      if (rec.pause) {
        on_pause(rec);
        return;
      }
      if (rec.malformed())
        ++stats.malformed;
      else
        ++stats.other;
      return;
    }
    ++stats.roce;
    if (rec.decoded.roce == wire::RoceVersion::V1) ++stats.roce_v1;
    if (rec.decoded.roce == wire::RoceVersion::NativeIb) ++stats.native_ib;
    if (rec.icrc && !rec.icrc->ok()) ++stats.icrc_errors;
    if (rec.decoded.roce == wire::RoceVersion::NativeIb && rec.vcrc && !rec.vcrc->ok())
      ++stats.vcrc_errors;
    if (rec.decoded.error) {
      const wire::DecodeError& err = *rec.decoded.error;
      if (err.kind == wire::ErrorKind::UnknownOpcode) {
        ++stats.unknown_opcode;
        return;
      }
      if (err.kind != wire::ErrorKind::SnapTruncated) {
        ++stats.malformed;
        return;
      }
      ++stats.snap_truncated;
      // Snap-length truncation inside the headers: nothing reliable to follow.
      if (err.layer != wire::Layer::Payload && err.layer != wire::Layer::Icrc) return;
    }
    if (rec.op == nullptr || !rec.decoded.ib) return;
    // A packet whose channel feed_all() found ahead had both addresses and a
    // half-channel role then: they are not read again.
    const bool hinted = hint != nullptr && hint->idx != kNoChannel;
    std::optional<IpAddress> src, dst;
    if (!hinted) {
      src = rec.decoded.src_address();
      dst = rec.decoded.dst_address();
      if (!src || !dst) return;
    }
    const wire::Bth& bth = rec.decoded.ib->bth;

    // IP ECN "Congestion Experienced" (RFC 3168): a switch marked the packet.
    const bool ce = rec.decoded.ipv4
                        ? (rec.decoded.ipv4->tos & 3) == 3
                        : rec.decoded.ipv6 && (rec.decoded.ipv6->traffic_class & 3) == 3;
    if (ce) rec.events.push_back(Event{EventType::EcnMarked, rec.frame, 0, bth.psn});

    const std::optional<bool> role = hinted ? hint->key.response : half_role(rec);
    if (!role) {
      ++stats.datagrams;
      if (rec.cm) on_cm(rec, *src, *dst);
      return;
    }
    const bool response = *role;
    const wire::Transport tr = rec.op->transport;
    if (tr == wire::Transport::CNP) {
      // A CNP goes from the receiver of marked traffic to the QP that sent
      // it: usually a requester, along the responses of its channel; or a
      // responder whose READ responses were marked, along the requests.
      // An RC QP is both, so a QP known as a requester is taken as one.
      Event e{EventType::Cnp, rec.frame, 0, bth.psn};
      e.value = bth.dest_qp;
      rec.events.push_back(e);
      const std::size_t i = hinted ? hint->idx : cnp_channel_for(*src, *dst, bth.dest_qp, response);
      if (i == kNone) {
        ++stats.cnps_unattributed;
        return;
      }
      Channel& c = channels[i];
      mark_record(c, rec);
      note_packet(c, rec);
      on_cnp(c, rec);
      return;
    }
    // XRC is followed as RC is: a reliable channel from the initiator QP to
    // the target QP named in the BTH, acknowledged the same way.
    const std::size_t idx =
        hinted ? hint->idx : channel_for(*src, *dst, bth.dest_qp, response, bth.psn);
    if (idx == kNone) {
      ++stats.untracked;
      return;
    }
    Channel& c = channels[idx];
    if (tr == wire::Transport::UC) c.unreliable = true;
    mark_record(c, rec);
    note_packet(c, rec);
    if (rec.icrc && !rec.icrc->ok()) ++c.s.icrc_errors;
    // The BTH's congestion bits, InfiniBand's ECN: a switch sets FECN on a
    // packet that met congestion, and the destination echoes it to the
    // source with BECN (on an ACK or a response).
    if (response) {
      if (bth.becn) ++c.s.becn;
      // A READ response carries the channel's data the other way: a CE
      // mark on it is congestion on the channel's data path, answered by a
      // CNP to the responder's QP.
      if (ce && rec.op->carries_data()) note_ce(c, rec);
      on_response(c, rec);
    } else {
      if (bth.fecn) ++c.s.fecn;
      on_request(c, rec);
      note_rate(c, rec, ce);
    }
  }

  // ---- congestion -----------------------------------------------------------

  /// A request: its bytes go into the rate series, the window before the
  /// next CNP and the windows after the recent ones; a CE mark waits for the
  /// CNP that answers it.
  void note_rate(Channel& c, const PacketRecord& rec, bool ce) {
    const std::int64_t t = rec.time_ns;
    const std::int64_t w = opt.rate_window_ns;
    const auto n = static_cast<std::uint32_t>(rec.original_length);
    if (ce) note_ce(c, rec);
    c.rate.add(t, n, w);
    if (c.cong) {
      close_cnp_windows(c, t);
      for (CnpWindow& cw : c.cong->cnp_windows) cw.after_bytes += n;
    }
    c.recent.emplace_back(t, n);
    c.recent_bytes += n;
    forget_before(c, t - w);
  }

  /// A CE-marked packet of the channel's data (a request, a READ
  /// response): it waits for the CNP that answers it.
  static void note_ce(Channel& c, const PacketRecord& rec) {
    Congestion& g = c.congestion();
    if (c.s.ecn_ce++ == 0) g.first_ce_frame = rec.frame;
    if (g.pending_ce_ns < 0) g.pending_ce_ns = rec.time_ns;
  }

  /// The record belongs to channel `c`: its conversation and its place
  /// among the conversation's channels.
  static void mark_record(const Channel& c, PacketRecord& rec) {
    rec.conversation = c.conv;
    rec.channel = c.conv != 0 ? static_cast<std::int32_t>(c.pos_in_conv) : -1;
  }

  static void forget_before(Channel& c, std::int64_t t) {
    while (!c.recent.empty() && c.recent.front().first < t) {
      c.recent_bytes -= c.recent.front().second;
      c.recent.pop_front();
    }
  }

  /// Ends the "after" windows that closed by time t.
  void close_cnp_windows(Channel& c, std::int64_t t) const {
    if (!c.cong) return;
    Congestion& g = *c.cong;
    while (!g.cnp_windows.empty() && g.cnp_windows.front().start_ns + opt.rate_window_ns <= t) {
      const CnpWindow& cw = g.cnp_windows.front();
      g.rate_before.add(static_cast<std::int64_t>(cw.before_bytes));
      g.rate_after.add(static_cast<std::int64_t>(cw.after_bytes));
      g.cnp_windows.pop_front();
    }
  }

  void on_cnp(Channel& c, const PacketRecord& rec) {
    const std::int64_t t = rec.time_ns;
    Congestion& g = c.congestion();
    if (c.s.cnps++ == 0) g.first_cnp_frame = rec.frame;
    if (g.last_cnp_ns >= 0) g.cnp_gaps.add(t - g.last_cnp_ns);
    g.last_cnp_ns = t;
    if (g.pending_ce_ns >= 0) {
      g.ce_to_cnp.add(t - g.pending_ce_ns);
      g.pending_ce_ns = -1;
    }
    // The rate before: only when the capture holds the whole window.
    close_cnp_windows(c, t);
    const std::int64_t w = opt.rate_window_ns;
    if (c.s.request_packets > 0 && c.s.first_ns <= t - w) {
      forget_before(c, t - w);
      constexpr std::size_t kMaxOpenWindows = 64;
      if (g.cnp_windows.size() < kMaxOpenWindows)
        g.cnp_windows.push_back(CnpWindow{t, c.recent_bytes, 0});
    }
  }

  // ---- pause frames ---------------------------------------------------------

  /// The closest spacing of two consecutive frames gives the line rate when
  /// they were sent back to back: (bytes + 24) * 8 bits in the gap, 24 for
  /// the FCS (not captured), preamble, start delimiter and inter-frame gap.
  void note_spacing(const PacketRecord& rec) {
    if (stats.link_speed_source != CaptureStats::SpeedSource::None) return;
    if (prev_frame_ns >= 0 && rec.time_ns > prev_frame_ns) {
      const std::size_t len = std::min(prev_frame_len, rec.original_length);
      const double bps = static_cast<double>((len + 24) * 8) * 1e9 /
                         static_cast<double>(rec.time_ns - prev_frame_ns);
      fastest_bps = std::max(fastest_bps, bps);
    }
    prev_frame_ns = rec.time_ns;
    prev_frame_len = rec.original_length;
  }

  /// The speed pause quanta are converted at, fixed at the first pause frame.
  std::uint64_t link_speed() {
    if (stats.link_speed_source != CaptureStats::SpeedSource::None) return stats.link_speed_bps;
    if (opt.link_speed_bps != 0) {
      stats.link_speed_bps = opt.link_speed_bps;
      stats.link_speed_source = CaptureStats::SpeedSource::Given;
    } else if (fastest_bps > 0) {
      // The Ethernet speed nearest (by ratio) to the fastest spacing seen.
      constexpr std::array<std::uint64_t, 9> kSpeedsG{1, 10, 25, 40, 50, 100, 200, 400, 800};
      std::uint64_t best = kSpeedsG[0];
      for (std::uint64_t g : kSpeedsG) {
        const double r = fastest_bps / (static_cast<double>(g) * 1e9);
        const double rb = fastest_bps / (static_cast<double>(best) * 1e9);
        if (std::abs(std::log(r)) < std::abs(std::log(rb))) best = g;
      }
      stats.link_speed_bps = best * 1'000'000'000ULL;
      stats.link_speed_source = CaptureStats::SpeedSource::Inferred;
    } else {
      stats.link_speed_bps = 100'000'000'000ULL;
      stats.link_speed_source = CaptureStats::SpeedSource::Assumed;
    }
    return stats.link_speed_bps;
  }

  PauseState& pause_state(const wire::MacAddress& mac, std::uint8_t prio) {
    std::uint64_t key = 0;
    for (std::uint8_t b : mac) key = (key << 8) | b;
    auto [it, added] = pause_index.try_emplace({key, prio}, pauses.size());
    if (added) {
      PauseState st;
      st.s.src = mac;
      if (prio < wire::kPriorities) st.s.priority = prio;
      pauses.push_back(st);
    }
    return pauses[it->second];
  }

  /// Ends a paused interval at `end`; a long one is a storm.
  void end_pause(PauseState& st, std::int64_t end, bool at_capture_end) {
    const std::int64_t len = std::max<std::int64_t>(end - st.start_ns, 0);
    st.s.paused_ns += len;
    st.s.longest_pause_ns = std::max(st.s.longest_pause_ns, len);
    st.paused = false;
    if (len <= opt.pfc_storm_ns) return;
    ++st.s.storms;
    if (pause_events.size() >= kMaxPauseEvents) return;
    Event e{EventType::PfcStorm, st.start_frame};
    e.value = mac_value(st.s.src);
    e.code = st.s.priority.value_or(static_cast<std::uint8_t>(wire::kPriorities));
    e.delta_ns = len;
    e.count = at_capture_end ? 1 : 0;
    e.psn = static_cast<std::uint32_t>(
        std::min<std::int64_t>(opt.pfc_storm_ns / 1000, std::numeric_limits<std::uint32_t>::max()));
    pause_events.push_back(e);
  }

  static std::uint64_t mac_value(const wire::MacAddress& mac) {
    std::uint64_t v = 0;
    for (std::uint8_t b : mac) v = (v << 8) | b;
    return v;
  }

  void on_pause(PacketRecord& rec) {
    ++stats.other;
    ++stats.pause_frames;
    const wire::PauseFrame& f = *rec.pause;
    const std::int64_t t = rec.time_ns;
    const std::uint64_t speed = link_speed();
    std::uint16_t longest = 0;
    for (std::size_t p = 0; p < wire::kPriorities; ++p) {
      if (!f.enabled(p)) continue;
      const std::uint16_t q = f.quanta[p];
      longest = std::max(longest, q);
      PauseState& st = pause_state(f.src, f.pfc() ? static_cast<std::uint8_t>(p)
                                                  : static_cast<std::uint8_t>(wire::kPriorities));
      ++st.s.frames;
      if (st.paused && st.expiry_ns <= t) end_pause(st, st.expiry_ns, false);
      if (q == 0) {
        ++st.s.xon_frames;
        if (st.paused) end_pause(st, t, false);
      } else {
        if (!st.paused) {
          st.paused = true;
          st.start_ns = t;
          st.start_frame = rec.frame;
        }
        st.expiry_ns = t + wire::pause_quanta_ns(q, speed);
      }
      if (!f.pfc()) break;  // 802.3x: one state for the whole link
    }
    Event e{EventType::PfcPause, rec.frame};
    e.value = mac_value(f.src);
    e.code = static_cast<std::uint8_t>(f.class_enable & 0xFF);
    e.count = longest;
    e.delta_ns = wire::pause_quanta_ns(longest, speed);
    e.psn = static_cast<std::uint32_t>(speed / 1'000'000);  // Mb/s
    e.psn_begin = f.opcode;
    rec.events.push_back(e);
  }

  void note_packet(Channel& c, const PacketRecord& rec) {
    Conversation& v = convs[c.conv - 1];
    if (v.packets++ == 0) v.first_ns = rec.time_ns;
    v.last_ns = rec.time_ns;
    if (c.s.request_packets + c.s.response_packets + c.s.cnps == 0) c.s.first_ns = rec.time_ns;
    c.s.last_ns = rec.time_ns;
  }

  std::vector<Event> finish() {
    std::vector<Event> events;
    for (PauseState& st : pauses) {
      if (!st.paused) continue;
      st.s.paused_at_end = st.expiry_ns > latest_ns;
      end_pause(st, std::min(st.expiry_ns, latest_ns), st.s.paused_at_end);
    }
    events.insert(events.end(), pause_events.begin(), pause_events.end());
    // The congestion findings of every channel, then what each channel's
    // end says: gathered apart in one pass over the channels (a capture of
    // a whole cluster has hundreds of thousands, each a few cache lines
    // away from the last), then joined in that order.
    std::vector<Event> ends;
    constexpr std::size_t kAhead = 4;  // channels whose rings are fetched ahead
    for (std::size_t i = 0; i < channels.size(); ++i) {
      if (i + kAhead < channels.size()) channels[i + kAhead].out.prefetch();
      Channel& c = channels[i];
      congestion_findings(c, events);
      channel_end(c, ends);
    }
    events.insert(events.end(), ends.begin(), ends.end());
    return events;
  }

  /// What the end of the capture says about a channel: a requester still
  /// retrying or done retrying, or requests never acknowledged.
  void channel_end(Channel& c, std::vector<Event>& events) {
    if (!c.started || c.out.empty()) return;
    if (c.last_req_was_timeout_retry && c.chain_active && c.last_rsp_ns <= c.last_req_ns) {
      // The last thing the requester did was a timeout retry, and nothing
      // answered. With retry_cnt = N the requester sends 1 + N times and
      // then completes the WR with IBV_WC_RETRY_EXC_ERR (9.7.6.1.3) -- but
      // only a capture that goes on for a whole timeout after the last
      // retry shows that no further retry came. One that ends sooner shows
      // a requester still retrying, and more than 7 retries (retry_cnt's
      // largest value) is one retrying without a limit.
      const std::int64_t timeout = c.waits ? c.waits->timeout_gaps.median() : -1;
      const bool ended_early = timeout < 0 || latest_ns - c.last_req_ns < timeout;
      Event e{ended_early ? EventType::StillRetrying : EventType::RetryExhausted, c.last_req_frame,
              0, c.chain_psn};
      e.count = c.chain_count;
      e.conversation = c.conv;
      events.push_back(e);
      (ended_early ? c.s.still_retrying : c.s.retry_exhausted) = true;
      return;
    }
    // Without any response in the capture (UC, or one direction captured)
    // "never acknowledged" would say nothing about the connection.
    if (c.unreliable || !c.has_rsp_half) return;
    const Outstanding& oldest = c.out.front();
    Event e{EventType::Unacknowledged, oldest.frame, 0, c.out.back().last_psn()};
    e.psn_begin = oldest.psn;
    e.count = static_cast<std::uint32_t>(c.out.size());
    e.conversation = c.conv;
    events.push_back(e);
  }

  /// What the CE marks, CNPs and rates of a channel say, in words.
  void congestion_findings(Channel& c, std::vector<Event>& events) {
    if (!c.cong) return;  // no CE mark, no CNP
    const Congestion& g = *c.cong;
    // "After" windows the capture holds to their end count; later ones not.
    close_cnp_windows(c, latest_ns);
    if (c.s.ecn_ce > 0 && c.s.cnps == 0 && c.has_rsp_half) {
      Event e{EventType::CeWithoutCnp, g.first_ce_frame};
      e.count = static_cast<std::uint32_t>(std::min<std::uint64_t>(c.s.ecn_ce, UINT32_MAX));
      e.value = c.req_qpn.value_or(0);
      e.conversation = c.conv;
      events.push_back(e);
    }
    const std::int64_t gap_median = g.cnp_gaps.median();
    if (c.s.cnps >= 3 && c.s.ecn_ce > c.s.cnps && gap_median > 0) {
      Event e{EventType::CnpPaced, g.first_cnp_frame};
      e.delta_ns = gap_median;
      e.value = static_cast<std::uint64_t>(min_of(g.cnp_gaps));
      e.count = static_cast<std::uint32_t>(std::min<std::uint64_t>(c.s.ecn_ce, UINT32_MAX));
      e.psn = c.req_qpn.value_or(0);
      e.conversation = c.conv;
      events.push_back(e);
    }
    const std::int64_t before = g.rate_before.median(), after = g.rate_after.median();
    if (before > 0 && after >= before) {
      Event e{EventType::CnpNoSlowdown, g.first_cnp_frame};
      e.count = static_cast<std::uint32_t>(g.rate_before.seen);
      e.value = (static_cast<std::uint64_t>(rate_of(before)) << 32) |
                static_cast<std::uint32_t>(rate_of(after));
      e.delta_ns = opt.rate_window_ns;
      e.conversation = c.conv;
      events.push_back(e);
    }
  }

  /// Bytes in one rate window as Mb/s (what the finding's text shows).
  [[nodiscard]] std::uint32_t rate_of(std::int64_t bytes) const {
    const double mbps = static_cast<double>(bytes) * 8.0 * 1e3 /
                        static_cast<double>(std::max<std::int64_t>(opt.rate_window_ns, 1));
    return static_cast<std::uint32_t>(std::min(std::round(mbps), 4.0e9));
  }

  template <std::size_t kMax, std::size_t kFirst>
  static std::int64_t min_of(const Samples<kMax, kFirst>& s) {
    return s.v.empty() ? -1 : *std::min_element(s.v.begin(), s.v.end());
  }

  ChannelSummary summarize(const Channel& c, Analyzer::SummaryParts parts) const {
    ChannelSummary s;
    const Counters& n = c.s;
    s.request_packets = n.request_packets;
    s.response_packets = n.response_packets;
    s.sends = n.sends;
    s.writes = n.writes;
    s.reads = n.reads;
    s.compare_swaps = n.compare_swaps;
    s.fetch_adds = n.fetch_adds;
    s.payload_bytes = n.payload_bytes;
    s.unique_payload_bytes = n.unique_payload_bytes;
    s.path_mtu = n.path_mtu;
    s.path_mtu_exact = n.path_mtu_exact;
    s.retransmitted_packets = n.retransmitted_packets;
    s.psn_gaps = n.psn_gaps;
    s.out_of_order = n.out_of_order;
    for (std::size_t i = 0; i < s.naks.size(); ++i) s.naks[i] = n.naks[i];
    s.rnr_naks = n.rnr_naks;
    s.acks = n.acks;
    s.duplicate_acks = n.duplicate_acks;
    s.go_back_n = n.go_back_n;
    s.timeouts = n.timeouts;
    s.max_retries = n.max_retries;
    s.retry_exhausted = n.retry_exhausted;
    s.still_retrying = n.still_retrying;
    s.cnps = n.cnps;
    s.icrc_errors = n.icrc_errors;
    s.ecn_ce = n.ecn_ce;
    s.fecn = n.fecn;
    s.becn = n.becn;
    s.rtt_samples = n.rtt_samples;
    s.rtt_min_ns = n.rtt_min_ns;
    s.rtt_max_ns = n.rtt_max_ns;
    s.first_ns = n.first_ns;
    s.last_ns = n.last_ns;
    s.requester = make_endpoint(hosts[c.req_host], c.req_qpn);
    s.responder = make_endpoint(hosts[c.rsp_host], c.rsp_qpn);
    s.rtt_median_ns = c.rtt.median();
    if (c.waits) {
      s.timeout_gap_ns = c.waits->timeout_gaps.median();
      if (s.timeout_gap_ns > 0)
        s.timeout_exponent =
            wire::ack_timeout_exponent(static_cast<double>(s.timeout_gap_ns) * 1e-9);
      s.rnr_wait_ns = c.waits->rnr_waits.median();
    }
    s.rate_window_ns = opt.rate_window_ns;
    if (c.cong) {
      const Congestion& g = *c.cong;
      s.cnp_interval_min_ns = min_of(g.cnp_gaps);
      s.cnp_interval_median_ns = g.cnp_gaps.median();
      s.ce_to_cnp_median_ns = g.ce_to_cnp.median();
      s.rate_cnps = g.rate_before.seen;
      if (s.rate_cnps > 0) {
        const double per_s = 1e9 / static_cast<double>(opt.rate_window_ns);
        s.rate_before_cnp_bps = static_cast<double>(g.rate_before.median()) * 8.0 * per_s;
        s.rate_after_cnp_bps = static_cast<double>(g.rate_after.median()) * 8.0 * per_s;
      }
    }
    if (parts == Analyzer::SummaryParts::All) s.rate_bin_ns = c.rate.binned(s.rate_bytes);
    const std::int64_t span = s.last_ns - s.first_ns;
    if (span > 0)
      s.goodput_bps = static_cast<double>(s.unique_payload_bytes) * 1e9 / static_cast<double>(span);
    return s;
  }
};

Analyzer::Analyzer(AnalyzerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->opt = options;
  if (impl_->opt.max_outstanding == 0) impl_->opt.max_outstanding = 1;
  if (impl_->opt.max_channels == 0) impl_->opt.max_channels = 1;
  // Channels are numbered in 32 bits, the largest number meaning none (a
  // limit no memory could reach anyway: each channel takes hundreds of bytes).
  impl_->opt.max_channels =
      std::min<std::size_t>(impl_->opt.max_channels, std::numeric_limits<std::uint32_t>::max() - 1);
}
Analyzer::~Analyzer() = default;
Analyzer::Analyzer(Analyzer&&) noexcept = default;
Analyzer& Analyzer::operator=(Analyzer&&) noexcept = default;

void Analyzer::feed(PacketRecord& rec) {
  impl_->feed(rec);
}
void Analyzer::feed(std::span<PacketRecord> recs) {
  impl_->feed_all(recs);
}
std::vector<Event> Analyzer::finish() {
  return impl_->finish();
}
const CaptureStats& Analyzer::stats() const noexcept {
  return impl_->stats;
}
const AnalyzerOptions& Analyzer::options() const noexcept {
  return impl_->opt;
}

std::vector<ConversationSummary> Analyzer::summaries() const {
  std::vector<ConversationSummary> out;
  out.reserve(impl_->convs.size());
  for (const Conversation& v : impl_->convs) out.push_back(summary(v.id));
  return out;
}

std::size_t Analyzer::conversation_count() const noexcept {
  return impl_->convs.size();
}

ConversationSummary Analyzer::summary(std::uint32_t id, SummaryParts parts) const {
  const Conversation& v = impl_->convs.at(id - 1);
  ConversationSummary s;
  s.id = v.id;
  s.a = v.a;
  s.b = v.b;
  s.packets = v.packets;
  s.first_ns = v.first_ns;
  s.last_ns = v.last_ns;
  s.channels.reserve(v.channel_count);
  for (std::uint32_t n = v.first_channel; n != 0; n = impl_->channels[n - 1].next_in_conv)
    s.channels.push_back(impl_->summarize(impl_->channels[n - 1], parts));
  return s;
}

std::vector<PfcSummary> Analyzer::pfc() const {
  std::vector<PfcSummary> out;
  out.reserve(impl_->pauses.size());
  for (const auto& st : impl_->pauses) out.push_back(st.s);
  return out;
}

std::optional<std::pair<Endpoint, Endpoint>> Analyzer::endpoints(std::uint32_t id) const {
  if (id == 0 || id > impl_->convs.size()) return std::nullopt;
  const Conversation& v = impl_->convs[id - 1];
  return std::pair{v.a, v.b};
}

}  // namespace rdmalab::dissect

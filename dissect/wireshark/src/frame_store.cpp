#include "rdmalab/wireshark/frame_store.hpp"

#include <algorithm>

#include "rdmalab/wire/psn.hpp"

namespace rdmalab::wireshark {
namespace {

using wire::Operation;
using wire::Position;

// The payload an atomic operation moves: one 64-bit word (IBTA vol. 1, ch. 9: AtomicETH).
constexpr std::uint64_t kAtomicBytes = 8;

bool is_request(Operation op) {
  switch (op) {
    case Operation::Send:
    case Operation::Write:
    case Operation::ReadRequest:
    case Operation::CompareSwap:
    case Operation::FetchAdd:
    case Operation::Flush:
    case Operation::AtomicWrite: return true;
    default: return false;
  }
}

}  // namespace

// ---- MessageTracker ----

MessageTracker::Channel* MessageTracker::channel(const Key& key) {
  auto it = channels_.find(key);
  if (it != channels_.end()) return &it->second;
  if (channels_.size() >= kMaxChannels) return nullptr;
  return &channels_.emplace(key, Channel{}).first->second;
}

// The newest remembered message whose first PSN is at or before `psn`.
// Messages use consecutive PSN ranges, so that is the one `psn` belongs to.
const MessageTracker::Message* MessageTracker::containing(const std::deque<Message>& recent,
                                                          std::uint32_t psn) {
  for (auto it = recent.rbegin(); it != recent.rend(); ++it)
    if (wire::psn_before_eq(it->first_psn, psn)) return &*it;
  return nullptr;
}

// `recent` is kept in PSN order (what containing() relies on). A First or
// Only packet at or before the newest message start is either that message
// sent again (go-back-N, timeout) or a late arrival; otherwise it starts a
// new message, the common case, found without a search.
const MessageTracker::Message* MessageTracker::start_message(Channel& c,
                                                             const dissect::PacketRecord& rec,
                                                             const wire::IpAddress& src,
                                                             const wire::IpAddress& dst) {
  const wire::IbPacket& ib = *rec.decoded.ib;
  const std::uint32_t psn = ib.bth.psn;
  auto pos = c.recent.end();
  if (!c.recent.empty() && wire::psn_before_eq(psn, c.recent.back().first_psn)) {
    for (auto it = c.recent.rbegin(); it != c.recent.rend(); ++it) {
      if (it->first_psn == psn) return &*it;  // sent again
      if (wire::psn_before(it->first_psn, psn)) {
        pos = it.base();  // a late First: keep the PSN order
        break;
      }
      pos = std::prev(it.base());
    }
  }
  // The history is full: drop the oldest, unless the late packet is older
  // than everything kept (then it is not tracked).
  if (c.recent.size() == kHistory) {
    if (pos == c.recent.begin()) return nullptr;
    c.recent.pop_front();  // `pos` is past the front, so it stays valid
  }
  Message n;
  n.first_psn = psn;
  n.id = c.next_id++;
  n.first_payload = static_cast<std::uint32_t>(ib.payload_length);
  if (ib.reth) n.dma_length = ib.reth->dma_len;
  const Operation op = rec.op->operation;
  if (op == Operation::CompareSwap || op == Operation::FetchAdd) n.dma_length = kAtomicBytes;
  n.frame = rec.frame;
  n.read = op == Operation::ReadRequest;
  if (n.read) {
    // READ requests are rarely reordered; a late one lands at the back.
    auto& reads = reads_[PairKey{src, dst}];
    reads.push_back(n);
    if (reads.size() > kHistory) reads.pop_front();
  }
  return &*c.recent.insert(pos, n);
}

MessageInfo MessageTracker::track(const dissect::PacketRecord& rec) {
  MessageInfo info;
  if (rec.op == nullptr || !rec.has_bth() || rec.malformed()) return info;
  const auto src = rec.decoded.src_address();
  const auto dst = rec.decoded.dst_address();
  if (!src || !dst) return info;
  const wire::IbPacket& ib = *rec.decoded.ib;
  const std::uint32_t psn = ib.bth.psn;
  const wire::OpcodeInfo& op = *rec.op;
  const auto payload = static_cast<std::uint32_t>(ib.payload_length);

  if (op.operation == Operation::ReadResponse) {
    // Responses travel responder -> requester and carry the request's PSNs:
    // response k of a READ has PSN request + k (IBTA vol. 1, ch. 9: RDMA READ).
    auto it = reads_.find(PairKey{*dst, *src});
    if (it == reads_.end()) return info;
    const Message* m = containing(it->second, psn);
    if (m == nullptr) return info;
    info.id = m->id;
    info.index = static_cast<std::uint32_t>(wire::psn_diff(psn, m->first_psn)) + 1;
    info.length = m->dma_length;
    info.request_frame = m->frame;
    return info;
  }
  if (!is_request(op.operation)) return info;  // ACKs, atomic ACKs, CNPs

  Channel* c = channel(Key{*src, *dst, ib.bth.dest_qp});
  if (c == nullptr) return info;
  const Message* m = nullptr;
  if (op.position == Position::First || op.position == Position::Only) {
    m = start_message(*c, rec, *src, *dst);
    if (m == nullptr) return info;  // a late First older than the history
  } else {
    m = containing(c->recent, psn);
    if (m == nullptr) return info;  // its First packet is not in the capture
    // A WRITE's length says how many packets it has. A PSN beyond them
    // belongs to a message whose First has not arrived yet (reordering).
    if (m->dma_length && m->first_payload > 0) {
      const std::uint64_t packets = (*m->dma_length + m->first_payload - 1) / m->first_payload;
      if (static_cast<std::uint64_t>(wire::psn_diff(psn, m->first_psn)) >= packets) return info;
    }
  }
  info.id = m->id;
  info.index = static_cast<std::uint32_t>(wire::psn_diff(psn, m->first_psn)) + 1;
  info.length = m->dma_length;
  if (!info.length && op.operation == Operation::Send) {
    // Every packet but the last of a multi-packet message carries exactly
    // the path MTU (IBTA vol. 1, ch. 9: packet segmentation), so the length is known at the end.
    if (op.position == Position::Only)
      info.length = payload;
    else if (op.position == Position::Last)
      info.length = std::uint64_t{info.index - 1} * m->first_payload + payload;
  }
  return info;
}

void MessageTracker::reset() {
  channels_.clear();
  reads_.clear();
}

// ---- FrameStore ----

bool FrameStore::feed(wire::Bytes captured, std::size_t original_length, wire::LinkType link,
                      std::uint64_t frame, std::int64_t time_ns) {
  if (frame <= last_fed_) return false;
  last_fed_ = frame;
  dissect::decode_record(captured, original_length, link, frame, time_ns, rec_);
  analyzer_.feed(rec_);
  if (!rec_.is_roce() && !rec_.pause) return true;
  Entry e;
  e.frame = frame;
  if (rec_.pause) {
    e.pause = true;
    pauses_.emplace_back(frame, *rec_.pause);
  }
  if (rec_.decoded.roce == wire::RoceVersion::V2) {
    if (rec_.decoded.ipv4) e.ecn = rec_.decoded.ipv4->tos & 3U;
    if (rec_.decoded.ipv6) e.ecn = rec_.decoded.ipv6->traffic_class & 3U;
  }
  e.cnp = rec_.op != nullptr && rec_.op->operation == Operation::Cnp;
  if (e.cnp && rec_.has_bth()) e.cnp_qp = rec_.decoded.ib->bth.dest_qp;
  if (rec_.icrc) {
    e.icrc = rec_.icrc->ok() ? IcrcStatus::Good : IcrcStatus::Bad;
    e.icrc_expected = rec_.icrc->expected;
    e.icrc_actual = rec_.icrc->actual;
  }
  e.native_ib = rec_.decoded.roce == wire::RoceVersion::NativeIb;
  if (rec_.vcrc) {
    e.vcrc = rec_.vcrc->ok() ? IcrcStatus::Good : IcrcStatus::Bad;
    e.vcrc_expected = rec_.vcrc->expected;
    e.vcrc_actual = rec_.vcrc->actual;
  }
  e.message = messages_.track(rec_);
  e.first_event = static_cast<std::uint32_t>(events_.size());
  e.event_count = static_cast<std::uint32_t>(rec_.events.size());
  events_.insert(events_.end(), rec_.events.begin(), rec_.events.end());
  entries_.push_back(e);
  return true;
}

void FrameStore::finish() {
  if (finished_ && finished_at_ == last_fed_) return;
  finished_ = true;
  finished_at_ = last_fed_;
  end_events_ = analyzer_.finish();
  std::stable_sort(
      end_events_.begin(), end_events_.end(),
      [](const dissect::Event& a, const dissect::Event& b) { return a.frame < b.frame; });
}

std::optional<FrameFindings> FrameStore::find(std::uint64_t frame) const {
  // Frames were fed in increasing order, so both vectors are sorted.
  const auto it = std::lower_bound(entries_.begin(), entries_.end(), frame,
                                   [](const Entry& e, std::uint64_t f) { return e.frame < f; });
  if (it == entries_.end() || it->frame != frame) return std::nullopt;
  FrameFindings f;
  f.frame = frame;
  f.icrc = it->icrc;
  f.icrc_expected = it->icrc_expected;
  f.icrc_actual = it->icrc_actual;
  f.native_ib = it->native_ib;
  f.vcrc = it->vcrc;
  f.vcrc_expected = it->vcrc_expected;
  f.vcrc_actual = it->vcrc_actual;
  f.message = it->message;
  if (it->ecn != kNoEcn) f.ecn = it->ecn;
  f.cnp = it->cnp;
  f.cnp_qp = it->cnp_qp;
  if (it->pause) {
    const auto p = std::lower_bound(pauses_.begin(), pauses_.end(), frame,
                                    [](const std::pair<std::uint64_t, wire::PauseFrame>& x,
                                       std::uint64_t n) { return x.first < n; });
    if (p != pauses_.end() && p->first == frame) f.pause = p->second;
    f.link_speed_bps = analyzer_.stats().link_speed_bps;
  }
  f.events = std::span<const dissect::Event>(events_).subspan(it->first_event, it->event_count);
  const auto [lo, hi] = std::equal_range(
      end_events_.begin(), end_events_.end(), dissect::Event{dissect::EventType::AckMatched, frame},
      [](const dissect::Event& a, const dissect::Event& b) { return a.frame < b.frame; });
  f.end_events = std::span<const dissect::Event>(lo, hi);
  return f;
}

void FrameStore::reset(const dissect::AnalyzerOptions& options) {
  options_ = options;
  analyzer_ = dissect::Analyzer{options_};
  messages_.reset();
  std::vector<std::pair<std::uint64_t, wire::PauseFrame>>().swap(pauses_);
  // Give the memory back: a closed capture file may have been large.
  std::vector<Entry>().swap(entries_);
  std::vector<dissect::Event>().swap(events_);
  std::vector<dissect::Event>().swap(end_events_);
  last_fed_ = 0;
  finished_at_ = 0;
  finished_ = false;
}

}  // namespace rdmalab::wireshark

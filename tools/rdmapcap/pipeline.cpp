#include "rdmapcap/pipeline.hpp"

#include <cstring>
#include <system_error>

namespace rdmapcap {
namespace {

namespace capture = rdmalab::capture;
namespace dissect = rdmalab::dissect;

// A batch ends at this many frames (about 3 MiB of records), or, for frames
// libpcap read, when its buffer of copies is full: few enough batches that
// the threads seldom wait for each other, little enough memory.
constexpr std::size_t kBatchFrames = 4096;
constexpr std::size_t kBatchBytes = std::size_t{1} << 20;
// One being filled, one being analysed, one ready for whichever is faster.
constexpr std::size_t kBatches = 3;

}  // namespace

std::vector<std::unique_ptr<Pipeline::Batch>> Pipeline::make_batches() {
  std::vector<std::unique_ptr<Batch>> batches;
  for (std::size_t i = 0; i < kBatches; ++i) {
    batches.push_back(std::make_unique<Batch>());
    // Room only: a record is made where it is first filled, on the reading
    // thread (three batches of records are some 9 MiB, whose first touch
    // would otherwise keep the caller waiting before the first frame).
    batches.back()->records.reserve(kBatchFrames);
    batches.back()->bytes.resize(kBatchFrames);
  }
  return batches;
}

Pipeline::Pipeline(capture::PcapReader& reader, rdmalab::wire::LinkType link, bool check_icrc)
    : reader_(reader), link_(link), check_icrc_(check_icrc), batches_(make_batches()) {
  for (const auto& b : batches_) free_.push_back(b.get());
  // The mapped file's pages are given back as batches come back done
  // (done_before), not as the reader passes them.
  reader_.done_before(0);
  try {
    thread_ = std::thread([this] { read_loop(); });
  } catch (const std::system_error&) {
    // No thread to be had (a process or memory limit): read on the
    // caller's thread instead, with the same frames and errors, only slower.
    inline_ = true;
  }
}

Pipeline::~Pipeline() {
  {
    const std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Pipeline::Batch* Pipeline::take(std::deque<Batch*>& from, bool* full_was_empty, bool* waited) {
  std::unique_lock lock(mu_);
  if (waited != nullptr) *waited = from.empty();
  cv_.wait(lock, [&] { return stop_ || !from.empty(); });
  if (stop_) return nullptr;
  if (full_was_empty != nullptr) *full_was_empty = full_.empty();
  Batch* b = from.front();
  from.pop_front();
  return b;
}

void Pipeline::give(std::deque<Batch*>& to, Batch* b) {
  {
    const std::lock_guard lock(mu_);
    to.push_back(b);
  }
  cv_.notify_all();
}

void Pipeline::fill(Batch& b) {
  b.count = 0;
  b.used = 0;
  b.last = false;
  b.error = nullptr;
  try {
    capture::Packet pkt;
    while (b.count < kBatchFrames) {
      bool from_map = false;
      if (has_pending_) {
        pkt = pending_;
        has_pending_ = false;
      } else {
        if (!reader_.next(pkt)) {
          b.last = true;
          break;
        }
        from_map = reader_.mapped();
      }
      rdmalab::wire::Bytes data = pkt.data;
      if (!from_map) {
        // libpcap's bytes stay valid until its next read: copied into the
        // batch. A frame that does not fit waits, copied into pending_'s
        // own storage, for the next batch.
        const std::size_t n = pkt.data.size();
        if (b.arena.empty()) b.arena.resize(kBatchBytes);
        if (n > b.arena.size() - b.used) {
          if (b.count > 0) {
            pending_store_.assign(pkt.data.begin(), pkt.data.end());
            pending_ = pkt;
            pending_.data = rdmalab::wire::Bytes(pending_store_.data(), n);
            has_pending_ = true;
            break;
          }
          // One frame larger than the buffer, first in its batch: nothing
          // points into the buffer yet, so it may move.
          b.arena.resize(b.used + n);
        }
        std::uint8_t* at = b.arena.data() + b.used;
        if (n > 0) std::memcpy(at, pkt.data.data(), n);
        b.used += n;
        data = rdmalab::wire::Bytes(at, n);
      }
      b.bytes[b.count] = data;
      if (b.count == b.records.size()) b.records.emplace_back();  // within the room reserved
      dissect::decode_record(data, pkt.original_length, link_, pkt.frame, pkt.time_ns,
                             b.records[b.count++], check_icrc_ && !b.crc_left);
    }
  } catch (...) {
    b.error = std::current_exception();
    b.last = true;
  }
  b.end = reader_.position();
  position_.store(b.end, std::memory_order_relaxed);
}

bool Pipeline::nothing_free() {
  const std::lock_guard lock(mu_);
  return free_.empty() && !stop_;
}

void Pipeline::read_loop() {
  for (;;) {
    // No batch to fill: the analysing thread is the slower one, and its
    // first touches of new memory are page faults. This thread makes some of
    // that memory resident in the meantime (heap_warm.hpp).
    while (warmer_.enabled() && nothing_free() && warmer_.warm()) {
    }
    bool starved = false;  // the analysing thread had taken every filled batch
    Batch* b = take(free_, &starved);
    if (b == nullptr) return;
    // Batches come back in the order they were filled: every frame up to
    // this one's last is done with. Its pages are given back from here,
    // unless the analysing thread is starved: then it waits for this one,
    // and gives them back itself (next()), as it checks the ICRCs.
    if (!starved) reader_.done_before(b->end);
    b->crc_left = check_icrc_ && starved;
    fill(*b);
    const bool last = b->last;
    give(full_, b);
    if (last) return;
  }
}

std::span<dissect::PacketRecord> Pipeline::next() {
  for (;;) {
    if (current_ != nullptr) {
      Batch* done = current_;
      current_ = nullptr;
      done_ = done->last;
      const std::exception_ptr error = done->error;
      if (!inline_) {
        given_back_ = done->end;
        give(free_, done);
      }
      if (error) std::rethrow_exception(error);
    }
    if (done_) return {};
    if (inline_) {
      current_ = batches_.front().get();
      reader_.done_before(current_->end);
      current_->crc_left = false;
      fill(*current_);
    } else {
      bool waited = false;
      current_ = take(full_, nullptr, &waited);
      if (current_ == nullptr) return {};
      const std::uint64_t span = current_->end - last_end_;
      last_end_ = current_->end;
      if (waited) {
        // This thread had to wait: the reading thread is the slower one,
        // and is now filling the batch after this one. The kernel's work
        // on the mapping is done from here: the pages of the batches given
        // back are given back, and those of the batch after the one being
        // filled (as long as this one) are mapped.
        reader_.done_before(given_back_);
        const std::uint64_t to = current_->end + 2 * span;
        if (to > mapped_to_) reader_.map_ahead(std::max(mapped_to_, current_->end + span), to);
        mapped_to_ = std::max(mapped_to_, to);
      }
    }
    if (current_->crc_left)
      for (std::size_t i = 0; i < current_->count; ++i)
        dissect::check_record_crc(current_->bytes[i], current_->records[i]);
    if (current_->count > 0) return {current_->records.data(), current_->count};
    // An empty batch: the end of the file, or its error, at once.
  }
}

}  // namespace rdmapcap

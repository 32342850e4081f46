#include "rdmapcap/pipeline.hpp"

#include <cstring>
#include <system_error>

namespace rdmapcap {
namespace {

namespace capture = rdmalab::capture;

// A batch ends at about a megabyte of frames, or at this many small frames:
// large enough that handing one over costs nothing per frame, small enough
// that the three stay in the caches the two threads share.
constexpr std::size_t kBatchBytes = std::size_t{1} << 20;
constexpr std::size_t kBatchFrames = 8192;
// One being filled, one being analysed, one ready for whichever is faster.
constexpr std::size_t kBatches = 3;

}  // namespace

Pipeline::Pipeline(capture::PcapReader& reader) : reader_(reader) {
  if (reader.mapped()) {
    // Reading a mapped file is a cursor moving through memory: a thread
    // would cost more in hand-overs than it saves.
    inline_ = true;
    return;
  }
  for (std::size_t i = 0; i < kBatches; ++i) {
    batches_.push_back(std::make_unique<Batch>());
    batches_.back()->arena.resize(kBatchBytes);
    batches_.back()->packets.reserve(kBatchFrames);
    free_.push_back(batches_.back().get());
  }
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

Pipeline::Batch* Pipeline::take(std::deque<Batch*>& from) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return stop_ || !from.empty(); });
  if (stop_) return nullptr;
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

void Pipeline::read_loop() {
  capture::Packet pkt;
  bool pending = false;  // pkt was read but did not fit in the previous batch
  for (;;) {
    Batch* b = take(free_);
    if (b == nullptr) return;
    b->used = 0;
    b->packets.clear();
    b->last = false;
    b->error = nullptr;
    try {
      while (b->packets.size() < kBatchFrames) {
        // libpcap's bytes stay valid until its next read, so a frame that
        // did not fit is copied from there into the next batch.
        if (!pending && !reader_.next(pkt)) {
          b->last = true;
          break;
        }
        pending = false;
        const std::size_t n = pkt.data.size();
        if (n > b->arena.size() - b->used) {
          if (!b->packets.empty()) {
            pending = true;
            break;
          }
          b->arena.resize(n);  // one frame larger than a batch; nothing points into it yet
        }
        std::uint8_t* at = b->arena.data() + b->used;
        if (n > 0) std::memcpy(at, pkt.data.data(), n);
        b->used += n;
        b->packets.push_back(pkt);
        b->packets.back().data = rdmalab::wire::Bytes(at, n);
      }
    } catch (...) {
      b->error = std::current_exception();
      b->last = true;
    }
    position_.store(reader_.position(), std::memory_order_relaxed);
    const bool last = b->last;
    give(full_, b);
    if (last) return;
  }
}

const capture::Packet* Pipeline::next() {
  if (inline_) {
    if (!reader_.next(inline_packet_)) return nullptr;
    position_.store(reader_.position(), std::memory_order_relaxed);
    return &inline_packet_;
  }
  for (;;) {
    if (current_ != nullptr && index_ < current_->packets.size())
      return &current_->packets[index_++];
    if (current_ != nullptr) {
      Batch* done = current_;
      current_ = nullptr;
      done_ = done->last;
      const std::exception_ptr error = done->error;
      give(free_, done);
      if (error) std::rethrow_exception(error);
    }
    if (done_) return nullptr;
    current_ = take(full_);
    index_ = 0;
    if (current_ == nullptr) return nullptr;
  }
}

}  // namespace rdmapcap

// Reading a capture on one thread while the caller analyses it on another.
//
// libpcap is most of the cost of a full-payload capture: a read system call
// copies the file into stdio's buffer, then libpcap copies each record into
// its own. A reader thread does that and copies each frame once more into a
// batch of about a megabyte; the caller's thread takes the batches in file
// order and does everything else (decoding, the ICRC, the analyser, the
// output). Three batches exist, so memory stays bounded whatever the
// capture's size, and the caller sees exactly the frames, in the order and
// with the error, that reading on one thread would give.
//
// A classic pcap file is read from a memory mapping (PcapReader::mapped()),
// with no copy and no system call per record: then there is nothing to
// hand to a thread, and every frame is read on the caller's. On a machine
// whose cores are shared, a thread woken a thousand times per gigabyte
// waited for a core each time: with the reading thread, a 1 KiB-frame
// capture took twice its CPU time in wall time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "rdmalab/capture/pcap_file.hpp"

namespace rdmapcap {

class Pipeline {
 public:
  /// Starts reading `reader` on a thread. The reader must outlive the
  /// pipeline, and the caller must not use it meanwhile except for its
  /// constant properties (path, file size).
  explicit Pipeline(rdmalab::capture::PcapReader& reader);
  /// Stops the reader thread, even in the middle of the file.
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  /// The next frame in file order (its bytes are valid until the next call),
  /// or nullptr at the end of the file. Rethrows what the reader threw (a
  /// CaptureError where the file is damaged) once every frame before it has
  /// been returned.
  const rdmalab::capture::Packet* next();
  /// Bytes of the file the reader thread has consumed (for progress).
  [[nodiscard]] std::uint64_t position() const noexcept {
    return position_.load(std::memory_order_relaxed);
  }

 private:
  struct Batch {
    std::vector<std::uint8_t> arena;
    std::size_t used = 0;
    std::vector<rdmalab::capture::Packet> packets;  // data points into arena
    bool last = false;                              // the end of the file or an error follows
    std::exception_ptr error;                       // what the reader threw
  };

  void read_loop();
  /// Blocks until `from` has a batch; nullptr once the pipeline stops.
  Batch* take(std::deque<Batch*>& from);
  void give(std::deque<Batch*>& to, Batch* b);

  rdmalab::capture::PcapReader& reader_;
  std::vector<std::unique_ptr<Batch>> batches_;
  // Batches move between the threads only through these queues, under mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch*> free_, full_;
  bool stop_ = false;
  std::atomic<std::uint64_t> position_{0};
  // The caller's side.
  Batch* current_ = nullptr;
  std::size_t index_ = 0;
  bool done_ = false;
  // No reader thread could be started: next() reads on the caller's thread.
  bool inline_ = false;
  rdmalab::capture::Packet inline_packet_;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace rdmapcap

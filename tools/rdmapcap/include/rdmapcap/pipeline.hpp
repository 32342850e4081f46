// Reading and decoding a capture on one thread while the caller analyses it
// on another.
//
// A second thread reads the frames and decodes them (decode_record: the
// headers, the ICRC, a CRC-32 over every byte): most of the cost of a
// full-payload capture. It fills batches of up to 4096 decoded records; the
// caller's thread takes the batches in file order and does everything else
// (the analyser, which looks ahead within a batch, and the output). Three
// batches exist, so memory stays bounded whatever the capture's size, and
// the caller sees exactly the frames, in the order and with the error, that
// reading on one thread would give.
//
// A record's payload spans point into the captured bytes, which must outlive
// the batch. A classic pcap file is read from a memory mapping
// (PcapReader::mapped()): its bytes stay valid and nothing is copied. Frames
// libpcap reads (pcapng, a pipe) last only until its next read, so they are
// copied into the batch's own buffer (about a megabyte; a batch ends when it
// is full).
//
// Checking the ICRC, a CRC-32 over each whole frame, is most of the reading
// thread's work on a full-payload capture. When the analysing thread was
// found waiting for a batch, the reading thread leaves the next batch's
// ICRCs to it (dissect::check_record_crc, the same result): the check goes to
// whichever thread has time.
//
// A mapped file costs the kernel work too: entering each page into the
// mapping as the reader first touches it, and taking the pages out again
// once their batch is done (about a quarter of the reading thread's time
// on the same capture). Whichever thread waits for the other does it: when
// the analysing thread finds no batch ready, it gives back the pages of
// the batches it is done with and maps the pages of the batch after the
// one being filled (PcapReader::map_ahead), and the reading thread, having
// found it starved as with the ICRCs, leaves the pages to it; otherwise
// the reading thread gives pages back as batches come back to it, and
// faults pages in as it reads them.
//
// The analysing thread's first touches of new memory are page faults too:
// on a capture of a whole cluster its state grows to hundreds of megabytes.
// When the reading thread finds no batch to fill, it makes some of that
// memory resident for it instead of waiting (HeapWarmer, heap_warm.hpp).
//
// Batches are large so that the threads rarely wait for each other: on a
// machine whose cores are shared with other work, each wake-up of a waiting
// thread can cost as much as analysing a thousand packets. (With batches of
// about a megabyte, a 1 KiB-frame capture took twice its CPU time in wall
// time there.)
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/dissect/record.hpp"
#include "rdmapcap/heap_warm.hpp"

namespace rdmapcap {

class Pipeline {
 public:
  /// Starts reading and decoding `reader` on a thread (on the caller's own
  /// when no thread can be started). The reader must outlive the pipeline,
  /// and the caller must not use it meanwhile except for its constant
  /// properties (path, file size).
  Pipeline(rdmalab::capture::PcapReader& reader, rdmalab::wire::LinkType link, bool check_icrc);
  /// Stops the reader thread, even in the middle of the file.
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  /// The next decoded frames in file order (valid, and the caller's to
  /// change, until the next call), empty at the end of the file. Rethrows
  /// what the reader threw (a CaptureError where the file is damaged) once
  /// every frame before it has been returned.
  std::span<rdmalab::dissect::PacketRecord> next();
  /// Bytes of the file the reader thread has consumed (for progress).
  [[nodiscard]] std::uint64_t position() const noexcept {
    return position_.load(std::memory_order_relaxed);
  }

 private:
  struct Batch {
    std::vector<rdmalab::dissect::PacketRecord> records;
    std::vector<rdmalab::wire::Bytes> bytes;  // each record's captured bytes
    std::size_t count = 0;                    // records filled
    // The ICRCs of this batch are left to the analysing thread
    // (check_record_crc), which was waiting for the reading thread.
    bool crc_left = false;
    std::vector<std::uint8_t> arena;  // copies of frames libpcap read
    std::size_t used = 0;
    std::uint64_t end = 0;     // the reader's position after the batch's last frame
    bool last = false;         // the end of the file or an error follows
    std::exception_ptr error;  // what the reader threw
  };

  /// The batches, with room for their records.
  static std::vector<std::unique_ptr<Batch>> make_batches();
  void read_loop();
  /// Whether no batch is free for the reading thread to fill, and the
  /// pipeline runs: the analysing thread is the slower one.
  bool nothing_free();
  /// Reads and decodes frames into `b` until it is full or the file ends.
  void fill(Batch& b);
  /// Blocks until `from` has a batch; nullptr once the pipeline stops.
  /// `full_was_empty`: whether no filled batch was waiting at that moment;
  /// `waited`: whether `from` was empty when called.
  Batch* take(std::deque<Batch*>& from, bool* full_was_empty = nullptr, bool* waited = nullptr);
  void give(std::deque<Batch*>& to, Batch* b);

  rdmalab::capture::PcapReader& reader_;
  rdmalab::wire::LinkType link_;
  bool check_icrc_;
  std::vector<std::unique_ptr<Batch>> batches_;
  // Batches move between the threads only through these queues, under mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch*> free_, full_;
  bool stop_ = false;
  std::atomic<std::uint64_t> position_{0};
  // The analysing thread's heap, warmed by the reading thread while it
  // would wait for that thread (heap_warm.hpp). Made on the caller's thread,
  // after batches_: the heap's growth from here on is the analysis's.
  HeapWarmer warmer_;
  // The reading side: a frame libpcap read that did not fit in the
  // previous batch's buffer.
  rdmalab::capture::Packet pending_;
  std::vector<std::uint8_t> pending_store_;
  bool has_pending_ = false;
  // The caller's side.
  Batch* current_ = nullptr;
  bool done_ = false;
  std::uint64_t last_end_ = 0;    // the end of the batch taken before
  std::uint64_t given_back_ = 0;  // the end of the batch given back last
  std::uint64_t mapped_to_ = 0;   // the file is mapped ahead up to here
  // No reader thread could be started: next() reads on the caller's thread.
  bool inline_ = false;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace rdmapcap

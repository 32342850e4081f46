// Reading and writing capture files with libpcap.
//
// This is the only place in rdmalab that includes <pcap.h>: the decoder and
// the analyser take byte spans, and the tools and the simulator reach files
// through these two classes. Both pcap and pcapng are read (libpcap detects
// the format); timestamps are kept in nanoseconds. A classic pcap file's
// records are read in place from a memory mapping, libpcap taking over at
// the first record it must judge (see pcap_file.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "rdmalab/i18n/i18n.hpp"
#include "rdmalab/wire/frame.hpp"

namespace rdmalab::capture {

/// A capture file could not be opened, read or written. what() is already in
/// the user's language and names the file.
class CaptureError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Packet {
  std::uint64_t frame = 0;          // 1-based, as Wireshark numbers frames
  std::int64_t time_ns = 0;         // since the epoch
  wire::Bytes data;                 // the captured bytes (valid until the next read)
  std::size_t original_length = 0;  // length on the wire
};

/// Reads a capture front to back. Used by one thread at a time (it may move
/// between threads, as rdmapcap's reading thread does; it does no locking).
class PcapReader {
 public:
  /// Opens a pcap or pcapng file. Throws CaptureError (missing file, not a
  /// capture, unreadable).
  explicit PcapReader(const std::string& path);
  ~PcapReader();
  PcapReader(PcapReader&&) noexcept;
  PcapReader& operator=(PcapReader&&) noexcept;
  PcapReader(const PcapReader&) = delete;
  PcapReader& operator=(const PcapReader&) = delete;

  /// The pcap link type number of the (first) interface.
  [[nodiscard]] int datalink() const noexcept;
  /// The link type as the decoder knows it, or nullopt when unsupported.
  [[nodiscard]] std::optional<wire::LinkType> link_type() const noexcept;
  /// Reads the next packet. Returns false at the end of the file; throws
  /// CaptureError when the file is damaged (e.g. truncated mid-record).
  [[nodiscard]] bool next(Packet& out);
  /// Whether the file is being read from a memory mapping (a classic pcap
  /// file, up to a record libpcap must judge): next() then costs no system
  /// call and no copy, and the bytes of the packet it returned last stay
  /// valid as long as the reader lives. Otherwise libpcap reads (pcapng, a
  /// pipe, the rest of a damaged file), a copy per record, and a packet's
  /// bytes last until the next read.
  [[nodiscard]] bool mapped() const noexcept;
  /// The caller is done with the frames before `position` (a value of
  /// position()): a mapped file's pages before it are given back to the
  /// system. Without this call the reader gives back the pages a few
  /// megabytes behind its cursor; after the first, only those it is told
  /// about (a caller that holds frames longer, as rdmapcap's batches do,
  /// would otherwise touch pages given back, which then count again).
  /// After the first call, done_before and map_ahead may be called from
  /// another thread while one thread calls next().
  void done_before(std::uint64_t position) noexcept;
  /// Maps the pages of a mapped file's bytes [from, to) now, from the page
  /// cache (or the disk), so that next() does not stop for them: reading
  /// them otherwise costs a page fault per 64 KiB or so, and the kernel's
  /// work of entering each page, on the reading thread. A caller with a
  /// second thread to spare moves that work there. They count in the
  /// process's memory until given back (done_before). False when nothing
  /// was mapped: a file libpcap reads, an empty range, a kernel before
  /// Linux 5.14 (no MADV_POPULATE_READ).
  bool map_ahead(std::uint64_t from, std::uint64_t to) noexcept;
  /// Bytes of the file consumed so far and its total size (for progress).
  [[nodiscard]] std::uint64_t position() const noexcept;
  [[nodiscard]] std::uint64_t file_size() const noexcept { return size_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  struct Handle;
  std::unique_ptr<Handle> h_;
  std::string path_;
  std::uint64_t size_ = 0;
  std::uint64_t frame_ = 0;
};

/// Writes a capture front to back.
///
/// With wire::LinkType::Erf (197, what ibdump writes and tshark reads for
/// native InfiniBand) each frame given is an IB packet, LRH through VCRC,
/// and is written as one ERF record of type 21 (wire/erf.hpp): the 16-byte
/// ERF header, then the packet. The snap length counts the packet's bytes,
/// not the ERF header's; the pcap record's lengths count both (captured:
/// 16 + the bytes kept; original: 16 + the packet's length).
class PcapWriter {
 public:
  /// Creates (truncates) a pcap file with nanosecond timestamps.
  PcapWriter(const std::string& path, wire::LinkType link, std::uint32_t snaplen = 262144);
  ~PcapWriter();
  PcapWriter(PcapWriter&&) noexcept;
  PcapWriter& operator=(PcapWriter&&) noexcept;
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  /// Appends a frame; bytes beyond the snap length are not stored, but the
  /// original length is recorded. ERF: throws CaptureError for a time an
  /// ERF record cannot hold (before 1970, after 2106) or a packet longer
  /// than its wire length field can say (0xFFFF bytes).
  void write(std::int64_t time_ns, wire::Bytes frame);
  /// Appends `record` as the pcap record's data as it is, for a caller that
  /// made the link layer's record itself (ERF: one with the flags or
  /// extension headers of the capture it copies, which write() does not
  /// keep). `original_length` is its length on the wire, at least
  /// record.size(); bytes beyond the file's snap length are not stored.
  void write_record(std::int64_t time_ns, wire::Bytes record, std::size_t original_length);
  /// Flushes buffered records to the file.
  void flush();
  [[nodiscard]] std::uint32_t snaplen() const noexcept { return snaplen_; }

 private:
  struct Handle;
  void write_erf(std::int64_t time_ns, wire::Bytes packet);

  std::unique_ptr<Handle> h_;
  std::string path_;
  std::uint32_t snaplen_;
  wire::LinkType link_;
};

/// This module's messages, for the catalog parity test.
[[nodiscard]] std::span<const i18n::Message> catalog() noexcept;

}  // namespace rdmalab::capture

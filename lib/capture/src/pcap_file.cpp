#include "rdmalab/capture/pcap_file.hpp"

#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdio_ext.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "rdmalab/wire/erf.hpp"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14; older kernels answer EINVAL
#endif

namespace rdmalab::capture {
namespace {

using i18n::Message;
constexpr std::array kCatalog{
    Message{"open_failed", "cannot open capture file {0}: {1}", "无法打开抓包文件 {0}：{1}"},
    Message{"read_failed", "capture file {0} is damaged after frame {1}: {2}",
            "抓包文件 {0} 在第 {1} 帧之后已损坏：{2}"},
    Message{"create_failed", "cannot create capture file {0}: {1}", "无法创建抓包文件 {0}：{1}"},
    Message{"write_failed", "cannot write capture file {0}: {1}", "无法写入抓包文件 {0}：{1}"},
};
consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

}  // namespace

std::span<const i18n::Message> catalog() noexcept {
  return kCatalog;
}

namespace {

/// Gives libpcap's FILE a buffer of `bytes` (kept in `buffer`, which must
/// outlive the FILE) and tells stdio not to lock it: libpcap reads or writes
/// a record in two calls, and in a process with a second thread each would
/// take the FILE's lock; a reader or writer is used by one thread at a time
/// (as a pcap_t must be).
void own_buffer(FILE* f, std::unique_ptr<char[]>& buffer, std::size_t bytes) {
  buffer = std::make_unique_for_overwrite<char[]>(bytes);
  std::setvbuf(f, buffer.get(), _IOFBF, bytes);
  (void)__fsetlocking(f, FSETLOCKING_BYCALLER);
}

}  // namespace

/// A classic pcap file (not pcapng) mapped into memory and read in place.
///
/// libpcap reads a file with stdio: the kernel copies the file into stdio's
/// buffer, then libpcap copies each record into its own. On a capture of
/// 1 KiB frames those two copies were two thirds of libpcap's time, and
/// rdmapcap read on a second thread to hide them. Mapped, a record is its
/// bytes in the page cache: no copy, and the cursor below is all the reading
/// there is. libpcap still opens the file (it checks the header, knows the
/// link type and the snap length) and takes over at the first record that is
/// not plainly whole and within the snap length (a cut, a length to adjust,
/// a damaged header), so every frame and every error is what libpcap gives.
/// The pages behind the cursor are given back every few megabytes (or,
/// once the caller says which frames it is done with, before those): the
/// mapping stays valid, but they no longer count in the process's memory.
/// A page given back and touched again comes back from the page cache and
/// counts until the file is closed. A file cut shorter by another process
/// while it is read ends the reader with SIGBUS.
struct Mapped {
  const std::uint8_t* base = nullptr;
  std::size_t size = 0;
  std::size_t at = 0;  // the next record header
  // Pages before this were given back. Atomic: once told, two threads may
  // give pages back at once (done_before); each gives back its own range.
  std::atomic<std::size_t> released{0};
  bool told = false;  // done_before() was called: only it gives pages back
  std::uint32_t snaplen = 0;
  bool swapped = false;  // written on a machine of the other byte order
  bool nanos = false;    // nanosecond timestamps (else microseconds)
  static constexpr std::size_t kRelease = std::size_t{2} << 20;

  Mapped() = default;
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;
  ~Mapped() {
    if (base != nullptr) ::munmap(const_cast<std::uint8_t*>(base), size);
  }

  /// Gives back the whole pages before `upto`.
  void release(std::size_t upto) noexcept {
    upto = std::min(upto, size) & ~(std::size_t{4095});
    std::size_t from = released.load(std::memory_order_relaxed);
    do {
      if (upto <= from) return;
    } while (!released.compare_exchange_weak(from, upto, std::memory_order_relaxed));
    (void)::madvise(const_cast<std::uint8_t*>(base) + from, upto - from, MADV_DONTNEED);
  }

  static constexpr std::size_t kRecordHeader = 16;
  /// A frame's bytes the reader asks for ahead: the largest RoCE frame (a
  /// 4096-byte payload and its headers).
  static constexpr std::uint32_t kPrefetchBytes = 4096 + 256;

  /// The captured length of the record at `off` when its header and frame
  /// lie whole in the file within the snap length; nullopt otherwise.
  [[nodiscard]] std::optional<std::uint32_t> whole_record(std::size_t off) const noexcept {
    if (size - off < kRecordHeader) return std::nullopt;
    const std::uint32_t caplen = u32(off + 8);
    if (caplen > snaplen || caplen > size - off - kRecordHeader) return std::nullopt;
    return caplen;
  }

  [[nodiscard]] std::uint32_t u32(std::size_t off) const noexcept {
    std::uint32_t v = 0;
    std::memcpy(&v, base + off, 4);
    return swapped ? __builtin_bswap32(v) : v;
  }
};

namespace {

constexpr std::uint32_t kMagicMicros = 0xA1B2C3D4;
constexpr std::uint32_t kMagicNanos = 0xA1B23C4D;
// libpcap's largest snap length for the link types rdmalab reads
// (MAXIMUM_SNAPLEN); a longer record is libpcap's to judge.
constexpr std::uint32_t kMaxSnaplen = 262144;

/// Maps `fd` when it is a classic pcap file, version 2.4, with a header
/// libpcap accepted (`snaplen`: pcap_snapshot). nullptr otherwise: libpcap
/// reads it (pcapng, other versions, a pipe, no memory for the mapping).
std::unique_ptr<Mapped> map_pcap(int fd, std::uint64_t size, std::uint32_t snaplen) {
  constexpr std::size_t kHeader = 24;
  if (size < kHeader || size > SIZE_MAX) return nullptr;
  void* p = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return nullptr;
  auto m = std::make_unique<Mapped>();
  m->base = static_cast<const std::uint8_t*>(p);
  m->size = static_cast<std::size_t>(size);
  (void)::madvise(p, m->size, MADV_SEQUENTIAL);
  std::uint32_t magic = 0;
  std::memcpy(&magic, m->base, 4);
  if (magic == __builtin_bswap32(kMagicMicros) || magic == __builtin_bswap32(kMagicNanos)) {
    m->swapped = true;
    magic = __builtin_bswap32(magic);
  }
  if (magic != kMagicMicros && magic != kMagicNanos) return nullptr;
  m->nanos = magic == kMagicNanos;
  std::uint16_t major = 0, minor = 0;
  std::memcpy(&major, m->base + 4, 2);
  std::memcpy(&minor, m->base + 6, 2);
  if (m->swapped) {
    major = __builtin_bswap16(major);
    minor = __builtin_bswap16(minor);
  }
  if (major != 2 || minor != 4) return nullptr;
  m->snaplen = std::min(snaplen, kMaxSnaplen);
  m->at = kHeader;
  return m;
}

}  // namespace

struct PcapReader::Handle {
  // libpcap reads a file with stdio: one fread per record header and one per
  // record, each copied out of stdio's buffer. With the default buffer (one
  // file-system block) that is a read system call every few packets, or two
  // per packet for jumbo frames; with this one, one per 256 KiB, and the
  // buffer still fits a core's cache. pcap_close closes the FILE, so the
  // buffer is declared first and freed after it.
  static constexpr std::size_t kBufferBytes = std::size_t{256} << 10;
  std::unique_ptr<char[]> buffer;
  pcap_t* p = nullptr;
  // A classic pcap file is read from its mapping until a record libpcap
  // must judge; then (and for any other file) libpcap reads. The mapping
  // stays until the reader is destroyed: frames read from it stay valid.
  std::unique_ptr<Mapped> mapped;
  bool from_map = false;
  ~Handle() {
    if (p != nullptr) pcap_close(p);
  }

  /// The next record from the mapping. False when libpcap must take over
  /// at mapped->at (the end of the file included: libpcap says whether it
  /// ends cleanly).
  bool next_mapped(Packet& out) {
    Mapped& m = *mapped;
    constexpr std::size_t kRecordHeader = Mapped::kRecordHeader;
    const std::optional<std::uint32_t> whole = m.whole_record(m.at);
    if (!whole) return false;
    const std::uint32_t caplen = *whole;
    // Seconds and fraction with the top bit set (before 1970, after 2038, or
    // damage) are left to libpcap too, which reads them as it reads them.
    const std::uint32_t sec = m.u32(m.at), frac = m.u32(m.at + 4);
    if (((sec | frac) & 0x8000'0000U) != 0) return false;
    out.time_ns = std::int64_t{sec} * 1'000'000'000 +
                  (m.nanos ? std::int64_t{frac} : std::int64_t{frac} * 1000);
    out.original_length = m.u32(m.at + 12);
    out.data = wire::Bytes(m.base + m.at + kRecordHeader, caplen);
    m.at += kRecordHeader + caplen;
    // The caller reads a frame's first bytes, then its last (an RDMA
    // frame's ICRC), then all of it (the ICRC check). The jump to the end
    // is a fetch from memory the processor's own prefetchers do not
    // foresee, and they do not cross into the next page either (a 1 KiB
    // frame starts on a new page one time in four). So every line of the
    // next frame is asked for one record ahead: its end (the record header
    // after it shares that line) and, up to the largest RoCE frame, the
    // lines between. Its first line shares one with this frame's end,
    // asked for one record ago.
    if (const std::optional<std::uint32_t> next = m.whole_record(m.at)) {
      const std::uint8_t* first = m.base + m.at + kRecordHeader;
      const std::uint8_t* end = first + *next;
      __builtin_prefetch(end - 4);
      if (end + kRecordHeader <= m.base + m.size) __builtin_prefetch(end + kRecordHeader - 1);
      const std::uint32_t ahead = std::min(*next, Mapped::kPrefetchBytes);
      for (std::uint32_t off = 64; off + 64 < ahead; off += 64) __builtin_prefetch(first + off);
    }
    // Give back what lies a whole step behind: the caller may still hold
    // the frames just before the cursor.
    if (!m.told && m.at - m.released.load(std::memory_order_relaxed) >= 2 * Mapped::kRelease)
      m.release(m.at - Mapped::kRelease);
    return true;
  }
};

PcapReader::PcapReader(const std::string& path) : h_(std::make_unique<Handle>()), path_(path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw CaptureError(i18n::tr(M("open_failed"), path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode))
    throw CaptureError(i18n::tr(M("open_failed"), path, std::strerror(EISDIR)));
  size_ = static_cast<std::uint64_t>(st.st_size);
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr)  // worded as pcap_open_offline words it
    throw CaptureError(i18n::tr(M("open_failed"), path, path + ": " + std::strerror(errno)));
  // Read front to back once: the kernel may read further ahead.
  (void)::posix_fadvise(fileno(f), 0, 0, POSIX_FADV_SEQUENTIAL);
  own_buffer(f, h_->buffer, Handle::kBufferBytes);
  char err[PCAP_ERRBUF_SIZE] = {};
  h_->p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, err);
  if (h_->p == nullptr) {
    std::fclose(f);  // on failure libpcap leaves the FILE to its caller
    throw CaptureError(i18n::tr(M("open_failed"), path, err));
  }
  if (S_ISREG(st.st_mode) && std::ftell(f) == 24)
    h_->mapped = map_pcap(fileno(f), size_, static_cast<std::uint32_t>(pcap_snapshot(h_->p)));
  h_->from_map = h_->mapped != nullptr;
}

PcapReader::~PcapReader() = default;
PcapReader::PcapReader(PcapReader&&) noexcept = default;
PcapReader& PcapReader::operator=(PcapReader&&) noexcept = default;

int PcapReader::datalink() const noexcept {
  return pcap_datalink(h_->p);
}

std::optional<wire::LinkType> PcapReader::link_type() const noexcept {
  return wire::link_type_from_pcap(datalink());
}

bool PcapReader::next(Packet& out) {
  if (h_->from_map) {
    if (h_->next_mapped(out)) {
      out.frame = ++frame_;
      return true;
    }
    // libpcap reads on from this record: it ends the file, adjusts the
    // record or says what is wrong with it.
    const auto at = static_cast<off_t>(h_->mapped->at);
    h_->from_map = false;
    if (::fseeko(pcap_file(h_->p), at, SEEK_SET) != 0)
      throw CaptureError(i18n::tr(M("read_failed"), path_, frame_, std::strerror(errno)));
  }
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  const int rc = pcap_next_ex(h_->p, &hdr, &data);
  if (rc == PCAP_ERROR_BREAK) return false;  // end of file
  if (rc != 1) throw CaptureError(i18n::tr(M("read_failed"), path_, frame_, pcap_geterr(h_->p)));
  out.frame = ++frame_;
  // With nanosecond precision requested, tv_usec holds nanoseconds.
  out.time_ns = static_cast<std::int64_t>(hdr->ts.tv_sec) * 1'000'000'000 + hdr->ts.tv_usec;
  out.data = wire::Bytes(data, hdr->caplen);
  out.original_length = hdr->len;
  return true;
}

void PcapReader::done_before(std::uint64_t position) noexcept {
  if (!h_->mapped) return;
  // Written once, by the first call: later calls may come from another
  // thread than next()'s, which only reads it.
  if (!h_->mapped->told) h_->mapped->told = true;
  h_->mapped->release(static_cast<std::size_t>(std::min<std::uint64_t>(position, SIZE_MAX)));
}

bool PcapReader::map_ahead(std::uint64_t from, std::uint64_t to) noexcept {
  if (!h_->mapped) return false;
  const Mapped& m = *h_->mapped;
  const std::size_t first = static_cast<std::size_t>(std::min<std::uint64_t>(from, m.size));
  const std::size_t end = static_cast<std::size_t>(std::min<std::uint64_t>(to, m.size));
  const std::size_t page = first & ~std::size_t{4095};
  if (end <= first) return false;
  return ::madvise(const_cast<std::uint8_t*>(m.base) + page, end - page, MADV_POPULATE_READ) == 0;
}

bool PcapReader::mapped() const noexcept {
  return h_->from_map;
}

std::uint64_t PcapReader::position() const noexcept {
  if (h_->from_map) return h_->mapped->at;
  FILE* f = pcap_file(h_->p);
  if (f == nullptr) return 0;
  const long pos = std::ftell(f);
  return pos < 0 ? 0 : static_cast<std::uint64_t>(pos);
}

struct PcapWriter::Handle {
  // libpcap writes with stdio, two fwrites a record. With the default
  // buffer (one file-system block) the kernel is handed 4 KiB at a time; a
  // simulator writing two million small frames spent a third of its time
  // in the kernel that way, a seventh with a write every megabyte.
  // pcap_dump_close closes the FILE, so the buffer is declared first and
  // freed after it.
  static constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
  std::unique_ptr<char[]> buffer;
  pcap_t* p = nullptr;
  pcap_dumper_t* d = nullptr;
  /// ERF: a record, header then packet, is put together here (reused) to be
  /// handed to pcap_dump whole.
  std::vector<std::uint8_t> record;
  ~Handle() {
    if (d != nullptr) pcap_dump_close(d);
    if (p != nullptr) pcap_close(p);
  }
};

namespace {

/// The snap length in the file's header, which bounds a pcap record's
/// captured length (a reader cuts a longer record to it). For ERF a record
/// is the ERF header and up to `snaplen` bytes of packet, at most 0xFFFF
/// bytes in all (rlen is 16 bits): the snap length as given when it is
/// already that large, else the largest record it lets through.
std::uint32_t file_snaplen(wire::LinkType link, std::uint32_t snaplen) noexcept {
  if (link != wire::LinkType::Erf || snaplen >= 0xFFFF) return snaplen;
  return static_cast<std::uint32_t>(wire::erf::kHeaderSize +
                                    std::min<std::size_t>(snaplen, wire::erf::kMaxPacket));
}

}  // namespace

PcapWriter::PcapWriter(const std::string& path, wire::LinkType link, std::uint32_t snaplen)
    : h_(std::make_unique<Handle>()), path_(path), snaplen_(snaplen), link_(link) {
  h_->p = pcap_open_dead_with_tstamp_precision(static_cast<int>(link),
                                               static_cast<int>(file_snaplen(link, snaplen)),
                                               PCAP_TSTAMP_PRECISION_NANO);
  if (h_->p == nullptr) throw CaptureError(i18n::tr(M("create_failed"), path, "pcap_open_dead"));
  if (path == "-") {  // standard output, as pcap_dump_open understands it
    h_->d = pcap_dump_open(h_->p, path.c_str());
    if (h_->d == nullptr)
      throw CaptureError(i18n::tr(M("create_failed"), path, pcap_geterr(h_->p)));
    return;
  }
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr)  // worded as pcap_dump_open words it
    throw CaptureError(i18n::tr(M("create_failed"), path, path + ": " + std::strerror(errno)));
  own_buffer(f, h_->buffer, Handle::kBufferBytes);
  h_->d = pcap_dump_fopen(h_->p, f);
  if (h_->d == nullptr) {
    std::fclose(f);  // on failure libpcap leaves the FILE to its caller
    throw CaptureError(i18n::tr(M("create_failed"), path, pcap_geterr(h_->p)));
  }
}

PcapWriter::~PcapWriter() = default;
PcapWriter::PcapWriter(PcapWriter&&) noexcept = default;
PcapWriter& PcapWriter::operator=(PcapWriter&&) noexcept = default;

void PcapWriter::write(std::int64_t time_ns, wire::Bytes frame) {
  if (link_ == wire::LinkType::Erf) return write_erf(time_ns, frame);
  pcap_pkthdr hdr{};
  hdr.ts.tv_sec = static_cast<time_t>(time_ns / 1'000'000'000);
  hdr.ts.tv_usec = static_cast<suseconds_t>(time_ns % 1'000'000'000);
  hdr.len = static_cast<bpf_u_int32>(frame.size());
  hdr.caplen = static_cast<bpf_u_int32>(std::min<std::size_t>(frame.size(), snaplen_));
  pcap_dump(reinterpret_cast<u_char*>(h_->d), &hdr, frame.data());
}

// One ERF record of type 21 per packet: the header erf::write_header
// writes, then as much of the packet as the snap length keeps.
void PcapWriter::write_erf(std::int64_t time_ns, wire::Bytes packet) {
  namespace erf = wire::erf;
  const std::size_t stored = std::min({packet.size(), std::size_t{snaplen_}, erf::kMaxPacket});
  std::vector<std::uint8_t>& rec = h_->record;
  rec.resize(erf::kHeaderSize + stored);
  if (!erf::write_header(erf::kTypeInfiniband, time_ns, packet.size(), stored, rec.data()))
    throw CaptureError(
        i18n::tr(M("write_failed"), path_, std::strerror(time_ns < 0 ? EINVAL : EOVERFLOW)));
  std::copy_n(packet.data(), stored, rec.data() + erf::kHeaderSize);
  pcap_pkthdr hdr{};
  hdr.ts.tv_sec = static_cast<time_t>(time_ns / 1'000'000'000);
  hdr.ts.tv_usec = static_cast<suseconds_t>(time_ns % 1'000'000'000);
  hdr.len = static_cast<bpf_u_int32>(erf::kHeaderSize + packet.size());
  hdr.caplen = static_cast<bpf_u_int32>(rec.size());
  pcap_dump(reinterpret_cast<u_char*>(h_->d), &hdr, rec.data());
}

void PcapWriter::write_record(std::int64_t time_ns, wire::Bytes record,
                              std::size_t original_length) {
  pcap_pkthdr hdr{};
  hdr.ts.tv_sec = static_cast<time_t>(time_ns / 1'000'000'000);
  hdr.ts.tv_usec = static_cast<suseconds_t>(time_ns % 1'000'000'000);
  hdr.len = static_cast<bpf_u_int32>(std::max(original_length, record.size()));
  hdr.caplen =
      static_cast<bpf_u_int32>(std::min<std::size_t>(record.size(), file_snaplen(link_, snaplen_)));
  pcap_dump(reinterpret_cast<u_char*>(h_->d), &hdr, record.data());
}

void PcapWriter::flush() {
  if (pcap_dump_flush(h_->d) != 0)
    throw CaptureError(i18n::tr(M("write_failed"), path_, std::strerror(errno)));
}

}  // namespace rdmalab::capture

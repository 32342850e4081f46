// Endace ERF records (see erf.hpp).
#include "rdmalab/wire/erf.hpp"

#include <algorithm>

namespace rdmalab::wire::erf {

namespace {
constexpr std::uint8_t kTypeMask = 0x7F;
constexpr std::uint8_t kExtensionFollows = 0x80;
constexpr std::int64_t kNsPerSecond = 1'000'000'000;
}  // namespace

std::int64_t Record::time_ns() const noexcept {
  const auto seconds = static_cast<std::int64_t>(timestamp >> 32);
  const std::uint64_t fraction = timestamp & 0xFFFF'FFFFu;
  // fraction / 2^32 of a second, to the nearest ns: below 2^62, no overflow.
  const auto ns = static_cast<std::int64_t>((fraction * kNsPerSecond + (1ull << 31)) >> 32);
  return seconds * kNsPerSecond + ns;
}

std::optional<Error> parse(Bytes bytes, Record& out) noexcept {
  if (bytes.size() < kHeaderSize) return Error::Short;
  out.timestamp = std::uint64_t{load_le32(&bytes[4])} << 32 | load_le32(bytes.data());
  out.type = static_cast<std::uint8_t>(bytes[8] & kTypeMask);
  out.flags = bytes[9];
  out.rlen = load_be16(&bytes[10]);
  out.lctr = load_be16(&bytes[12]);
  out.wlen = load_be16(&bytes[14]);
  std::size_t off = kHeaderSize;
  out.extension_headers = 0;
  bool more = (bytes[8] & kExtensionFollows) != 0;
  while (more) {
    if (bytes.size() < off + kExtensionHeaderSize) return Error::ExtensionsCutOff;
    more = (bytes[off] & kExtensionFollows) != 0;
    off += kExtensionHeaderSize;
    ++out.extension_headers;
  }
  if (out.rlen < off) return Error::BadLength;
  const std::size_t end = std::min<std::size_t>({bytes.size(), out.rlen, off + out.wlen});
  out.packet = bytes.subspan(off, end - off);
  return std::nullopt;
}

bool write_header(std::uint8_t type, std::int64_t time_ns, std::size_t wire_size,
                  std::size_t stored_size, std::uint8_t* out) noexcept {
  if (time_ns < 0 || wire_size > 0xFFFF || stored_size > wire_size || stored_size > kMaxPacket)
    return false;
  const auto t = static_cast<std::uint64_t>(time_ns);
  const std::uint64_t seconds = t / kNsPerSecond;
  const std::uint64_t ns = t % kNsPerSecond;
  if (seconds > 0xFFFF'FFFFu) return false;
  // ns / 1e9 of a second as a 32-bit binary fraction, rounded to nearest:
  // off by at most half a unit (0.12 ns), which time_ns()'s rounding to the
  // nearest ns undoes. 999'999'999 ns gives 2^32 - 4.29 -> 2^32 - 4: the
  // fraction never carries into the seconds.
  const std::uint64_t fraction = ((ns << 32) + kNsPerSecond / 2) / kNsPerSecond;
  const std::uint64_t ts = seconds << 32 | fraction;
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(ts >> (8 * i));
  out[8] = static_cast<std::uint8_t>(type & kTypeMask);
  out[9] = 0;
  const auto rlen = static_cast<std::uint16_t>(kHeaderSize + stored_size);
  const auto wlen = static_cast<std::uint16_t>(wire_size);
  out[10] = static_cast<std::uint8_t>(rlen >> 8);
  out[11] = static_cast<std::uint8_t>(rlen);
  out[12] = 0;
  out[13] = 0;
  out[14] = static_cast<std::uint8_t>(wlen >> 8);
  out[15] = static_cast<std::uint8_t>(wlen);
  return true;
}

}  // namespace rdmalab::wire::erf

// Out-of-band connection set-up over TCP: the way ibv_rc_pingpong and
// perftest connect, made visible.
//
// Before two RC QPs can talk, each side must learn the other's QPN, first
// PSN, GID (or LID on InfiniBand) and path MTU, and for one-sided operations
// the address and rkey of the buffer. rdmalab sends these as one line of
// human-readable text, versioned and length-checked, so a student can read it
// in tcpdump next to the RoCE packets it enables (one line, shown here whole):
//
// clang-format off
//   RDMALAB/1 lid=0000 qpn=000011 psn=7b759b gid=::ffff:10.99.0.1 mtu=1024 va=00007f12a0000000 rkey=00000e2a len=4096
// clang-format on
//
// A peer that sends garbage, a short or over-long message, or vanishes gets a
// clear error (OobError, in the user's language) after a bounded wait.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::verbs {

inline constexpr std::string_view kOobMagic = "RDMALAB/1";
/// The longest line accepted, newline included.
inline constexpr std::size_t kOobMaxLine = 512;

struct ConnInfo {
  std::uint16_t lid = 0;
  std::uint32_t qpn = 0;
  std::uint32_t psn = 0;
  ibv_gid gid{};
  int mtu = 1024;
  std::uint64_t va = 0;
  std::uint32_t rkey = 0;
  std::uint64_t len = 0;
};

/// The one-line text form (no newline).
[[nodiscard]] std::string format_conn_info(const ConnInfo& c);
/// Parses a line; nullopt with `why` filled (in the current language) when
/// the line is not a valid message of this version.
[[nodiscard]] std::optional<ConnInfo> parse_conn_info(std::string_view line, std::string* why);

class OobError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A connected TCP socket, closed on destruction.
class OobChannel {
 public:
  /// Waits for one peer on `port` (all local addresses) for at most `timeout`.
  [[nodiscard]] static OobChannel listen(std::uint16_t port, std::chrono::milliseconds timeout);
  /// Connects to host:port, retrying until `timeout` (the peer may start later).
  [[nodiscard]] static OobChannel connect(const std::string& host, std::uint16_t port,
                                          std::chrono::milliseconds timeout);
  OobChannel(OobChannel&& o) noexcept;
  OobChannel& operator=(OobChannel&& o) noexcept;
  OobChannel(const OobChannel&) = delete;
  OobChannel& operator=(const OobChannel&) = delete;
  ~OobChannel();

  /// Sends ours, then reads theirs (one line), waiting at most `timeout`.
  [[nodiscard]] ConnInfo exchange(const ConnInfo& mine, std::chrono::milliseconds timeout);
  /// Sends one line / reads one line (for a final "done" handshake).
  void send_line(std::string_view line);
  [[nodiscard]] std::string recv_line(std::chrono::milliseconds timeout);
  /// Wraps an already-connected socket (tests).
  explicit OobChannel(int fd) noexcept : fd_(fd) {}

 private:
  int fd_ = -1;
  std::string buffer_;
};

/// Parses "HOST:PORT" ("[v6addr]:PORT" for IPv6).
[[nodiscard]] std::optional<std::pair<std::string, std::uint16_t>> parse_host_port(
    std::string_view s);

/// This module's messages, for the catalog parity test.
[[nodiscard]] std::span<const i18n::Message> oob_catalog() noexcept;

}  // namespace rdmalab::verbs

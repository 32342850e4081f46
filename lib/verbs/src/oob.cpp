#include "rdmalab/verbs/oob.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

namespace rdmalab::verbs {
namespace {

using i18n::Message;
using Clock = std::chrono::steady_clock;

constexpr std::array kCatalog{
    Message{"bad.magic", "it does not start with {}", "消息不是以 {} 开头"},
    Message{"bad.field", "field '{}' is missing or malformed", "字段 '{}' 缺失或格式错误"},
    Message{"bad.unknown", "unknown field '{}'", "未知字段 '{}'"},
    Message{"bad.mtu", "MTU {} is not 256, 512, 1024, 2048 or 4096",
            "MTU {} 不是 256、512、1024、2048 或 4096"},
    Message{"listen_failed", "cannot listen on TCP port {}: {}", "无法在 TCP 端口 {} 上监听：{}"},
    Message{"accept_timeout", "no peer connected to TCP port {} within {} s",
            "{1} 秒内没有对端连接到 TCP 端口 {0}"},
    Message{"resolve_failed", "cannot resolve {}: {}", "无法解析 {}：{}"},
    Message{"connect_timeout", "cannot connect to {}:{} within {} s (last error: {})",
            "{2} 秒内无法连接到 {0}:{1}（最后一次错误：{3}）"},
    Message{"send_failed", "sending to the peer failed: {}", "向对端发送失败：{}"},
    Message{"recv_timeout", "the peer sent nothing for {} s", "对端在 {} 秒内没有发送任何数据"},
    Message{"peer_closed", "the peer closed the connection before sending a complete line",
            "对端在发送完整的一行之前就关闭了连接"},
    Message{"too_long", "the peer's message is longer than {} bytes", "对端的消息超过了 {} 字节"},
    Message{"invalid", "the peer sent an invalid connection message ({}): \"{}\"",
            "对端发来的连接信息无效（{}）：“{}”"},
};
consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

double seconds(std::chrono::milliseconds ms) {
  return static_cast<double>(ms.count()) / 1000.0;
}

template <class T>
bool parse_hex(std::string_view s, T& out, std::size_t max_digits) {
  if (s.empty() || s.size() > max_digits) return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return ec == std::errc() && p == s.data() + s.size();
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(std::min<long>(left.count(), 1 << 30));
}

}  // namespace

std::span<const i18n::Message> oob_catalog() noexcept {
  return kCatalog;
}

std::string format_conn_info(const ConnInfo& c) {
  char gid[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, c.gid.raw, gid, sizeof gid);
  return fmt::format(
      "{} lid={:04x} qpn={:06x} psn={:06x} gid={} mtu={} va={:016x} rkey={:08x} len={}", kOobMagic,
      c.lid, c.qpn, c.psn, gid, c.mtu, c.va, c.rkey, c.len);
}

std::optional<ConnInfo> parse_conn_info(std::string_view line, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<ConnInfo> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (!line.starts_with(kOobMagic) ||
      (line.size() > kOobMagic.size() && line[kOobMagic.size()] != ' '))
    return fail(i18n::tr(M("bad.magic"), kOobMagic));
  line.remove_prefix(kOobMagic.size());
  ConnInfo c;
  unsigned seen = 0;
  enum : unsigned {
    kLid = 1,
    kQpn = 2,
    kPsn = 4,
    kGid = 8,
    kMtu = 16,
    kVa = 32,
    kRkey = 64,
    kLen = 128
  };
  while (!line.empty()) {
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (line.empty()) break;
    const auto end = line.find(' ');
    const std::string_view tok = line.substr(0, end);
    line = end == std::string_view::npos ? std::string_view() : line.substr(end);
    const auto eq = tok.find('=');
    if (eq == std::string_view::npos) return fail(i18n::tr(M("bad.field"), tok));
    const std::string_view key = tok.substr(0, eq), val = tok.substr(eq + 1);
    if (key == "lid") {
      if (!parse_hex(val, c.lid, 4)) return fail(i18n::tr(M("bad.field"), key));
      seen |= kLid;
    } else if (key == "qpn") {
      if (!parse_hex(val, c.qpn, 6)) return fail(i18n::tr(M("bad.field"), key));
      seen |= kQpn;
    } else if (key == "psn") {
      if (!parse_hex(val, c.psn, 6)) return fail(i18n::tr(M("bad.field"), key));
      seen |= kPsn;
    } else if (key == "gid") {
      const std::string s(val);
      if (val.size() > INET6_ADDRSTRLEN || inet_pton(AF_INET6, s.c_str(), c.gid.raw) != 1)
        return fail(i18n::tr(M("bad.field"), key));
      seen |= kGid;
    } else if (key == "mtu") {
      const auto [p, ec] = std::from_chars(val.data(), val.data() + val.size(), c.mtu);
      if (ec != std::errc() || p != val.data() + val.size())
        return fail(i18n::tr(M("bad.field"), key));
      if (c.mtu != 256 && c.mtu != 512 && c.mtu != 1024 && c.mtu != 2048 && c.mtu != 4096)
        return fail(i18n::tr(M("bad.mtu"), c.mtu));
      seen |= kMtu;
    } else if (key == "va") {
      if (!parse_hex(val, c.va, 16)) return fail(i18n::tr(M("bad.field"), key));
      seen |= kVa;
    } else if (key == "rkey") {
      if (!parse_hex(val, c.rkey, 8)) return fail(i18n::tr(M("bad.field"), key));
      seen |= kRkey;
    } else if (key == "len") {
      const auto [p, ec] = std::from_chars(val.data(), val.data() + val.size(), c.len);
      if (ec != std::errc() || p != val.data() + val.size())
        return fail(i18n::tr(M("bad.field"), key));
      seen |= kLen;
    } else {
      return fail(i18n::tr(M("bad.unknown"), key));
    }
  }
  for (auto [bit, name] : {std::pair{kLid, "lid"}, std::pair{kQpn, "qpn"}, std::pair{kPsn, "psn"},
                           std::pair{kGid, "gid"}, std::pair{kMtu, "mtu"}, std::pair{kVa, "va"},
                           std::pair{kRkey, "rkey"}, std::pair{kLen, "len"}})
    if ((seen & bit) == 0) return fail(i18n::tr(M("bad.field"), name));
  return c;
}

OobChannel OobChannel::listen(std::uint16_t port, std::chrono::milliseconds timeout) {
  const int s = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) throw OobError(i18n::tr(M("listen_failed"), port, std::strerror(errno)));
  OobChannel guard(s);
  const int one = 1, zero = 0;
  ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  ::setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // accept IPv4 too
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_port = htons(port);
  addr.sin6_addr = in6addr_any;
  if (::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(s, 1) != 0)
    throw OobError(i18n::tr(M("listen_failed"), port, std::strerror(errno)));
  pollfd pfd{s, POLLIN, 0};
  const int r = ::poll(&pfd, 1, static_cast<int>(timeout.count()));
  if (r <= 0) throw OobError(i18n::tr(M("accept_timeout"), port, seconds(timeout)));
  const int c = ::accept4(s, nullptr, nullptr, SOCK_CLOEXEC);
  if (c < 0) throw OobError(i18n::tr(M("listen_failed"), port, std::strerror(errno)));
  return OobChannel(c);
}

OobChannel OobChannel::connect(const std::string& host, std::uint16_t port,
                               std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0)
    throw OobError(i18n::tr(M("resolve_failed"), host, ::gai_strerror(rc)));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> list(res, ::freeaddrinfo);
  const auto deadline = Clock::now() + timeout;
  int last = ECONNREFUSED;
  do {
    for (addrinfo* a = list.get(); a != nullptr; a = a->ai_next) {
      const int s = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (s < 0) {
        last = errno;
        continue;
      }
      if (::connect(s, a->ai_addr, a->ai_addrlen) == 0) return OobChannel(s);
      last = errno;
      ::close(s);
    }
    // The listener may not be up yet: retry a few times a second.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  } while (Clock::now() < deadline);
  throw OobError(i18n::tr(M("connect_timeout"), host, port, seconds(timeout), std::strerror(last)));
}

OobChannel::OobChannel(OobChannel&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), buffer_(std::move(o.buffer_)) {}
OobChannel& OobChannel::operator=(OobChannel&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    buffer_ = std::move(o.buffer_);
  }
  return *this;
}
OobChannel::~OobChannel() {
  if (fd_ >= 0) ::close(fd_);
}

void OobChannel::send_line(std::string_view line) {
  std::string msg(line);
  msg += '\n';
  std::size_t sent = 0;
  while (sent < msg.size()) {
    const ssize_t n = ::send(fd_, msg.data() + sent, msg.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE || errno == ECONNRESET) throw OobError(i18n::tr(M("peer_closed")));
      throw OobError(i18n::tr(M("send_failed"), std::strerror(errno)));
    }
    sent += static_cast<std::size_t>(n);
  }
}

std::string OobChannel::recv_line(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (buffer_.size() >= kOobMaxLine) throw OobError(i18n::tr(M("too_long"), kOobMaxLine));
    pollfd pfd{fd_, POLLIN, 0};
    const int r = ::poll(&pfd, 1, remaining_ms(deadline));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw OobError(i18n::tr(M("recv_timeout"), seconds(timeout)));
    char buf[256];
    const ssize_t n = ::recv(fd_, buf, std::min(sizeof buf, kOobMaxLine - buffer_.size()), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw OobError(i18n::tr(M("peer_closed")));
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
}

ConnInfo OobChannel::exchange(const ConnInfo& mine, std::chrono::milliseconds timeout) {
  send_line(format_conn_info(mine));
  const std::string line = recv_line(timeout);
  std::string why;
  auto theirs = parse_conn_info(line, &why);
  if (!theirs) {
    std::string shown = line.substr(0, 80);
    for (char& ch : shown)
      if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7F) ch = '?';
    throw OobError(i18n::tr(M("invalid"), why, shown));
  }
  return *theirs;
}

std::optional<std::pair<std::string, std::uint16_t>> parse_host_port(std::string_view s) {
  std::string_view host, port;
  if (s.starts_with('[')) {
    const auto close = s.find("]:");
    if (close == std::string_view::npos) return std::nullopt;
    host = s.substr(1, close - 1);
    port = s.substr(close + 2);
  } else {
    const auto colon = s.rfind(':');
    if (colon == std::string_view::npos || s.find(':') != colon) return std::nullopt;
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
  }
  unsigned p = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (host.empty() || ec != std::errc() || end != port.data() + port.size() || p == 0 || p > 65535)
    return std::nullopt;
  return std::pair{std::string(host), static_cast<std::uint16_t>(p)};
}

}  // namespace rdmalab::verbs

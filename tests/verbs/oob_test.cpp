// The out-of-band exchange against good, malformed, truncated and silent peers.
#include "rdmalab/verbs/oob.hpp"

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

using namespace rdmalab::verbs;
using namespace std::chrono_literals;

namespace {
ConnInfo sample() {
  ConnInfo c;
  c.qpn = 0x11;
  c.psn = 0x7b759b;
  c.gid.raw[10] = 0xff;
  c.gid.raw[11] = 0xff;
  c.gid.raw[12] = 10;
  c.gid.raw[13] = 99;
  c.gid.raw[15] = 1;
  c.mtu = 1024;
  c.va = 0x00007f12a0000000;
  c.rkey = 0xe2a;
  c.len = 4096;
  return c;
}

std::pair<OobChannel, int> socket_pair() {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  return {OobChannel(fds[0]), fds[1]};
}
}  // namespace

TEST_CASE("the connection message is one readable, versioned line that round-trips") {
  const auto line = format_conn_info(sample());
  CHECK(line ==
        "RDMALAB/1 lid=0000 qpn=000011 psn=7b759b gid=::ffff:10.99.0.1 mtu=1024 "
        "va=00007f12a0000000 rkey=00000e2a len=4096");
  std::string why;
  const auto back = parse_conn_info(line + "\n", &why);
  REQUIRE(back.has_value());
  CHECK(back->qpn == 0x11);
  CHECK(back->psn == 0x7b759b);
  CHECK(back->gid.raw[12] == 10);
  CHECK(back->va == 0x00007f12a0000000);
  CHECK(back->rkey == 0xe2a);
  CHECK(back->len == 4096);
}

TEST_CASE("malformed messages are rejected with the reason") {
  const std::string good = format_conn_info(sample());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "does not start"},
      {"RDMALAB/2 lid=0", "does not start"},
      {"HELLO", "does not start"},
      {"RDMALAB/1", "missing"},
      {good.substr(0, good.size() - 9), "'len'"},
      {good + " extra=1", "unknown field 'extra'"},
      {"RDMALAB/1 lid=0000 qpn=1000000 psn=0 gid=::1 mtu=1024 va=0 rkey=0 len=0", "'qpn'"},
      {"RDMALAB/1 lid=0000 qpn=zz psn=0 gid=::1 mtu=1024 va=0 rkey=0 len=0", "'qpn'"},
      {"RDMALAB/1 lid=0000 qpn=1 psn=0 gid=nonsense mtu=1024 va=0 rkey=0 len=0", "'gid'"},
      {"RDMALAB/1 lid=0000 qpn=1 psn=0 gid=::1 mtu=1500 va=0 rkey=0 len=0", "MTU 1500"},
      {"RDMALAB/1 lid=0000 qpn=1 psn=0 gid=::1 mtu=1024 va=0 rkey=0 len=-1", "'len'"},
      {"RDMALAB/1 lid qpn=1", "'lid'"},
  };
  for (const auto& c : cases) {
    const auto& line = c.first;
    const auto& reason = c.second;
    CAPTURE(line);
    std::string why;
    CHECK_FALSE(parse_conn_info(line, &why).has_value());
    CHECK(why.find(reason) != std::string::npos);
  }
}

TEST_CASE("exchange with a well-behaved peer") {
  auto [ch, peer] = socket_pair();
  std::thread t([fd = peer] {
    char buf[600];
    (void)::read(fd, buf, sizeof buf);
    ConnInfo c = sample();
    c.qpn = 0x22;
    const auto line = format_conn_info(c) + "\n";
    (void)::write(fd, line.data(), line.size());
    ::close(fd);
  });
  const ConnInfo theirs = ch.exchange(sample(), 2s);
  t.join();
  CHECK(theirs.qpn == 0x22);
}

TEST_CASE("a peer that sends garbage, a short message, too much, or nothing gets a clear error") {
  SUBCASE("garbage") {
    auto [ch, peer] = socket_pair();
    const std::string junk = "GET / HTTP/1.1\r\n";
    (void)::write(peer, junk.data(), junk.size());
    CHECK_THROWS_WITH_AS((void)ch.exchange(sample(), 1s),
                         doctest::Contains("invalid connection message"), OobError);
    ::close(peer);
  }
  SUBCASE("short message, then the peer vanishes") {
    auto [ch, peer] = socket_pair();
    const std::string part = "RDMALAB/1 lid=0000 qpn=";
    (void)::write(peer, part.data(), part.size());
    ::close(peer);
    CHECK_THROWS_WITH_AS((void)ch.exchange(sample(), 1s),
                         doctest::Contains("closed the connection"), OobError);
  }
  SUBCASE("a line longer than the limit") {
    auto [ch, peer] = socket_pair();
    const std::string flood(kOobMaxLine + 10, 'A');
    (void)::write(peer, flood.data(), flood.size());
    CHECK_THROWS_WITH_AS((void)ch.exchange(sample(), 1s), doctest::Contains("longer than 512"),
                         OobError);
    ::close(peer);
  }
  SUBCASE("a silent peer: bounded wait") {
    auto [ch, peer] = socket_pair();
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH_AS((void)ch.exchange(sample(), 300ms),
                         doctest::Contains("sent nothing for 0.3 s"), OobError);
    CHECK(std::chrono::steady_clock::now() - start < 5s);  // bounded, generously
    ::close(peer);
  }
}

TEST_CASE("listen and connect over TCP on the loopback") {
  const std::uint16_t port = static_cast<std::uint16_t>(20000 + (::getpid() % 20000));
  std::thread server([port] {
    OobChannel ch = OobChannel::listen(port, 5s);
    ConnInfo c = sample();
    c.qpn = 0x33;
    const ConnInfo theirs = ch.exchange(c, 5s);
    CHECK(theirs.qpn == 0x11);
  });
  OobChannel client = OobChannel::connect("127.0.0.1", port, 5s);
  const ConnInfo theirs = client.exchange(sample(), 5s);
  server.join();
  CHECK(theirs.qpn == 0x33);
}

TEST_CASE("nobody listening: connect gives up after the timeout") {
  CHECK_THROWS_WITH_AS((void)OobChannel::connect("127.0.0.1", 1, 300ms),
                       doctest::Contains("cannot connect"), OobError);
  CHECK_THROWS_AS((void)OobChannel::connect("no-such-host.invalid", 1, 300ms), OobError);
}

TEST_CASE("HOST:PORT parsing") {
  CHECK(parse_host_port("10.0.0.1:18515") ==
        std::pair<std::string, std::uint16_t>{"10.0.0.1", 18515});
  CHECK(parse_host_port("[fe80::1]:7") == std::pair<std::string, std::uint16_t>{"fe80::1", 7});
  CHECK_FALSE(parse_host_port("host").has_value());
  CHECK_FALSE(parse_host_port("host:0").has_value());
  CHECK_FALSE(parse_host_port("host:70000").has_value());
  CHECK_FALSE(parse_host_port("fe80::1:7").has_value());
}

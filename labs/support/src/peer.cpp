#include "rdmalab/lab/peer.hpp"

#include <array>
#include <chrono>

#include "rdmalab/verbs/error.hpp"

namespace rdmalab::lab {
namespace {

using i18n::Message;
using i18n::tr;
using namespace std::chrono_literals;

constexpr std::array kCatalog{
    Message{"both",
            "--listen and --connect exclude each other: one side listens, the other connects",
            "--listen 与 --connect 不能同时使用：一端监听，另一端连接"},
    Message{"sim",
            "--listen/--connect join two processes over real verbs; the simulator's hosts live in "
            "one process (use --backend verbs)",
            "--listen/--connect 用于通过真实 verbs "
            "连接两个进程；模拟器的主机都在同一进程中（请使用 --backend verbs）"},
    Message{"bad_connect", "--connect wants HOST:PORT, got '{}'",
            "--connect 需要 HOST:PORT 形式，收到的是 '{}'"},
    Message{"listening", "waiting for the peer on TCP port {} ...", "在 TCP 端口 {} 上等待对端……"},
    Message{"connecting", "connecting to the peer at {}:{} ...", "正在连接对端 {}:{}……"},
    Message{"sent", "sent to the peer:", "发给对端："},
    Message{"received", "received from the peer:", "收到对端："},
    Message{"unexpected", "the peer said '{0}' where '{1}' was expected",
            "对端发来的是 '{0}'，而期望的是 '{1}'"},
    Message{"one_process", "this lab runs in one process only for now: drop --listen/--connect",
            "本实验目前只能在单个进程中运行：请去掉 --listen/--connect"},
};
consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

}  // namespace

std::span<const i18n::Message> peer_catalog() noexcept {
  return kCatalog;
}

Role role_of(const CommonOptions& o) {
  const bool listen = o.listen.has_value();
  const bool connect = !o.connect.empty();
  if (listen && connect) throw verbs::UsageError(tr(M("both")));
  if ((listen || connect) && o.backend == "sim") throw verbs::UsageError(tr(M("sim")));
  if (connect && !verbs::parse_host_port(o.connect))
    throw verbs::UsageError(tr(M("bad_connect"), o.connect));
  return listen ? Role::Passive : connect ? Role::Active : Role::Both;
}

std::optional<verbs::OobChannel> open_peer(Narrator& n, const CommonOptions& o) {
  switch (role_of(o)) {
    case Role::Both: return std::nullopt;
    case Role::Passive:
      n.say(tr(M("listening"), *o.listen));
      return verbs::OobChannel::listen(*o.listen, 60s);
    case Role::Active: {
      const auto [host, port] = *verbs::parse_host_port(o.connect);
      n.say(tr(M("connecting"), host, port));
      return verbs::OobChannel::connect(host, port, 60s);
    }
  }
  return std::nullopt;
}

verbs::ConnInfo exchange_with_peer(Narrator& n, verbs::OobChannel& ch, const Endpoint& me, int mtu,
                                   bool one_sided) {
  const verbs::ConnInfo mine = conn_info(me, mtu, one_sided);
  const verbs::ConnInfo theirs = ch.exchange(mine, 60s);
  n.say(tr(M("sent")));
  n.block(verbs::format_conn_info(mine));
  n.say(tr(M("received")));
  n.block(verbs::format_conn_info(theirs));
  return theirs;
}

void tell_peer(verbs::OobChannel& ch, std::string_view word) {
  ch.send_line(word);
}

void await_peer(verbs::OobChannel& ch, std::string_view word) {
  const std::string line = ch.recv_line(120s);
  if (line != word) throw verbs::OobError(tr(M("unexpected"), line.substr(0, 40), word));
}

void require_one_process(const CommonOptions& o) {
  if (o.listen || !o.connect.empty()) throw verbs::UsageError(tr(M("one_process")));
}

}  // namespace rdmalab::lab

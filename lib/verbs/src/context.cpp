#include "rdmalab/verbs/context.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <chrono>
#include <cstring>

#include "rdmalab/verbs/backend.hpp"
#include "rdmalab/verbs/error.hpp"

namespace rdmalab::verbs {

bool GidEntry::is_ipv4_mapped() const noexcept {
  static constexpr std::uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  return std::memcmp(gid.raw, kPrefix, sizeof kPrefix) == 0;
}

std::string GidEntry::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.raw, buf, sizeof buf);
  return buf;
}

std::string_view gid_type_name(GidType t) noexcept {
  switch (t) {
    case GidType::IB: return "IB";
    case GidType::RoceV1: return "RoCE v1";
    case GidType::RoceV2: return "RoCE v2";
  }
  return "?";
}

std::optional<int> choose_gid(const std::vector<GidEntry>& table, std::optional<int> requested) {
  if (requested) {
    for (const auto& e : table)
      if (e.index == *requested) return e.index;
    return std::nullopt;
  }
  for (const auto& e : table)
    if (e.type == GidType::RoceV2 && e.is_ipv4_mapped()) return e.index;
  for (const auto& e : table)
    if (e.type == GidType::RoceV2) return e.index;
  for (const auto& e : table)
    if (e.type == GidType::RoceV1) return e.index;
  if (!table.empty()) return table.front().index;
  return std::nullopt;
}

std::vector<ibv_wc> CompletionQueue::wait(std::size_t n, std::chrono::milliseconds timeout) {
  std::vector<ibv_wc> out;
  out.reserve(n);
  ibv_wc batch[16];
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out.size() < n) {
    const std::size_t want = std::min<std::size_t>(n - out.size(), 16);
    const int got = poll(std::span<ibv_wc>(batch, want));
    if (got < 0) break;
    out.insert(out.end(), batch, batch + got);
    if (got > 0) continue;
    if (!progress() || std::chrono::steady_clock::now() >= deadline) break;
  }
  return out;
}

CompletionQueue& CompChannel::wait_event(std::chrono::milliseconds timeout) {
  CompletionQueue* cq = get_event(timeout);
  if (cq == nullptr)
    throw VerbsError("ibv_get_cq_event", ETIMEDOUT,
                     ErrorContext{{}, 0, 0, fmt::format("{} ms", timeout.count())},
                     hint_for("ibv_get_cq_event", ETIMEDOUT));
  return *cq;
}

std::optional<BackendChoice> parse_backend_choice(std::string_view s) noexcept {
  if (s == "auto") return BackendChoice::Auto;
  if (s == "verbs") return BackendChoice::Verbs;
  if (s == "sim") return BackendChoice::Sim;
  return std::nullopt;
}

}  // namespace rdmalab::verbs

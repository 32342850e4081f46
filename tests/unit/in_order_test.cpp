// render_in_order: items rendered on two threads come out as one thread
// writes them, in order, a block at a time, and a failure stops both.
#include "rdmapcap/in_order.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string item_text(std::size_t i) {
  return "item " + std::to_string(i) + "\n";
}

/// The items' text as one thread writes it, and the size of each write.
struct Written {
  std::string text;
  std::vector<std::size_t> writes;
};

Written run(std::size_t n, std::size_t block) {
  Written w;
  rdmapcap::render_in_order(
      n, [](std::size_t i, std::string& out) { out += item_text(i); },
      [&](std::string_view s) {
        w.text += s;
        w.writes.push_back(s.size());
      },
      block);
  return w;
}

std::string expected(std::size_t from, std::size_t to) {
  std::string s;
  for (std::size_t i = from; i < to; ++i) s += item_text(i);
  return s;
}

}  // namespace

TEST_CASE("render_in_order writes every item once, in order, a block at a time") {
  // n items in blocks of `block`: ceil(n / block) writes, the last one
  // holding n mod block items (or a whole block).
  for (const auto& c : std::vector<std::pair<std::size_t, std::size_t>>{
           {0, 4}, {1, 4}, {4, 4}, {5, 4}, {9, 4}, {1000, 7}, {1000, 256}, {3, 0}}) {
    const std::size_t n = c.first, block = c.second;
    CAPTURE(n);
    CAPTURE(block);
    const Written w = run(n, block);
    CHECK(w.text == expected(0, n));
    const std::size_t b = block == 0 ? 1 : block;  // a block of 0 items is taken as 1
    REQUIRE(w.writes.size() == (n + b - 1) / b);
    std::size_t at = 0;
    for (std::size_t k = 0; k < w.writes.size(); ++k) {
      CHECK(w.writes[k] == expected(at, std::min(n, at + b)).size());
      at += b;
    }
  }
}

TEST_CASE("render_in_order renders on a second thread when there is a second core") {
  if (std::thread::hardware_concurrency() < 2) return;  // one core: the caller's thread only
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<std::size_t> elsewhere{0};
  std::string text;
  rdmapcap::render_in_order(
      64,
      [&](std::size_t i, std::string& out) {
        if (std::this_thread::get_id() != caller) ++elsewhere;
        out += item_text(i);
      },
      [&](std::string_view s) {
        CHECK(std::this_thread::get_id() == caller);  // writing stays on the caller's thread
        text += s;
      },
      8);
  CHECK(text == expected(0, 64));
  // Blocks 1, 3, 5 and 7 (eight items each) are the second thread's.
  CHECK(elsewhere.load() == 32);
}

TEST_CASE("a failure while rendering reaches the caller after the blocks before it") {
  // Item `bad` throws: the blocks before its block are written, nothing
  // after; whichever thread rendered it. Blocks of 10: item 35 is in block
  // 3 (the second thread's when there is one), item 47 in block 4 (the
  // caller's).
  for (const std::size_t bad : {std::size_t{35}, std::size_t{47}, std::size_t{0}}) {
    CAPTURE(bad);
    std::string text;
    CHECK_THROWS_AS(rdmapcap::render_in_order(
                        100,
                        [&](std::size_t i, std::string& out) {
                          if (i == bad) throw std::runtime_error("no memory");
                          out += item_text(i);
                        },
                        [&](std::string_view s) { text += s; }, 10),
                    std::runtime_error);
    CHECK(text == expected(0, bad / 10 * 10));
  }
}

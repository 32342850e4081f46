// Randomised property: under random loss, duplication and reordering in both
// directions, every message is delivered exactly once, in order, with the
// right bytes; or the QP fails with the status the spec gives.
#include <doctest/doctest.h>

#include "sim_helpers.hpp"

using namespace rdmalab;
using namespace simtest;

namespace {

struct Lcg {  // the test's own deterministic choices
  std::uint64_t s;
  std::uint32_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(s >> 33);
  }
};

}  // namespace

TEST_CASE("random loss, duplication and reordering: exactly once, in order, right bytes") {
  int failed_qps = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    CAPTURE(seed);
    PairConfig c;
    c.fabric.seed = seed;
    c.fabric.default_link.loss = 0.03;
    c.fabric.default_link.duplicate = 0.02;
    c.fabric.default_link.jitter_ns = 3000;
    c.fabric.default_link.reorder = 0.02;
    c.timeout = 8;  // 1 ms
    c.retry_cnt = 7;
    c.min_rnr_timer = 1;
    c.psn_a = 0xFFFFF0 + static_cast<std::uint32_t>(seed % 8);  // cross the wrap too
    c.mtu = IBV_MTU_256;
    c.buffer = 1 << 19;
    Pair p(c);
    Lcg rng{seed};
    p.fill_a(static_cast<std::uint8_t>(seed));
    const int n = 40;
    std::uint64_t adds = 0;
    std::vector<std::uint32_t> send_len;
    // Message i uses source offset i*2048 and, for WRITE and SEND, its own
    // destination area; READ reads B's upper half into A's upper half.
    for (int i = 0; i < n; ++i) {
      const auto off = static_cast<std::uint64_t>(i) * 2048;
      const std::uint32_t len = 1 + rng.next() % 2000;
      switch (rng.next() % 4) {
        case 0:
          REQUIRE(p.post(IBV_WR_RDMA_WRITE, off, len, off, static_cast<std::uint64_t>(i)) == 0);
          break;
        case 1:
          REQUIRE(p.post_recv_b(0x50000 + send_len.size() * 2048, 2048, send_len.size()) == 0);
          send_len.push_back(len);
          REQUIRE(p.post(IBV_WR_SEND, off, len, 0, static_cast<std::uint64_t>(i)) == 0);
          break;
        case 2:
          REQUIRE(p.post(IBV_WR_RDMA_READ, 0x20000 + off, len, 0x30000 + off,
                         static_cast<std::uint64_t>(i)) == 0);
          break;
        default: {
          ibv_sge sge{reinterpret_cast<std::uintptr_t>(p.buf_a.data() + 0x70000 + i * 8), 8,
                      p.mr_a->lkey()};
          ibv_send_wr wr{};
          wr.wr_id = static_cast<std::uint64_t>(i);
          wr.sg_list = &sge;
          wr.num_sge = 1;
          wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
          wr.send_flags = IBV_SEND_SIGNALED;
          wr.wr.atomic.remote_addr = reinterpret_cast<std::uintptr_t>(p.buf_b.data() + 0x70000);
          wr.wr.atomic.rkey = p.mr_b->rkey();
          wr.wr.atomic.compare_add = 3;
          ibv_send_wr* bad = nullptr;
          REQUIRE(p.qa->post_send(&wr, &bad) == 0);
          ++adds;
        }
      }
    }
    // Requester completions: in order; all successful, or a prefix of
    // successes, one RETRY_EXC_ERR and flushes.
    bool failed = false;
    for (int i = 0; i < n; ++i) {
      const ibv_wc wc = Pair::poll_one(*p.cq_a);
      CHECK(wc.wr_id == static_cast<std::uint64_t>(i));
      if (failed) {
        CHECK(wc.status == IBV_WC_WR_FLUSH_ERR);
      } else if (wc.status != IBV_WC_SUCCESS) {
        CHECK(wc.status == IBV_WC_RETRY_EXC_ERR);
        failed = true;
      }
    }
    if (failed) {
      ++failed_qps;
      continue;
    }
    // Memory: every WRITE and READ landed.
    Lcg check{seed};
    std::size_t sends = 0;
    std::uint64_t adds_seen = 0;
    for (int i = 0; i < n; ++i) {
      const auto off = static_cast<std::uint64_t>(i) * 2048;
      const std::uint32_t len = 1 + check.next() % 2000;
      switch (check.next() % 4) {
        case 0: CHECK(std::memcmp(p.buf_a.data() + off, p.buf_b.data() + off, len) == 0); break;
        case 1: ++sends; break;
        case 2:
          CHECK(std::memcmp(p.buf_a.data() + 0x20000 + off, p.buf_b.data() + 0x30000 + off, len) ==
                0);
          break;
        default: {
          std::uint64_t orig = 0;
          std::memcpy(&orig, p.buf_a.data() + 0x70000 + i * 8, 8);
          CHECK(orig == 3 * adds_seen);  // each add executed once, in order
          ++adds_seen;
        }
      }
    }
    std::uint64_t total = 0;
    std::memcpy(&total, p.buf_b.data() + 0x70000, 8);
    CHECK(total == 3 * adds);
    // Receiver: each SEND exactly once, in order, with the right length.
    for (std::size_t k = 0; k < sends; ++k) {
      const ibv_wc wc = Pair::poll_one(*p.cq_b);
      CHECK(wc.status == IBV_WC_SUCCESS);
      CHECK(wc.wr_id == k);
      CHECK(wc.byte_len == send_len[k]);
    }
    ibv_wc extra;
    CHECK(p.cq_b->poll(1, &extra) == 0);
  }
  MESSAGE("QPs that failed with RETRY_EXC_ERR: " << failed_qps);
  CHECK(failed_qps < 10);
}

TEST_CASE("the same seed gives the same capture, byte for byte, another seed does not") {
  auto run = [](std::uint64_t seed) {
    PairConfig c;
    c.fabric.seed = seed;
    c.fabric.default_link.loss = 0.05;
    c.fabric.default_link.jitter_ns = 2000;
    c.timeout = 8;
    c.fixed_iova = true;
    Pair p(c);
    const std::string path = temp_pcap("det" + std::to_string(seed));
    p.fabric.start_capture(path);
    p.fill_a(9);
    for (std::uint64_t i = 0; i < 30; ++i)
      REQUIRE(p.post(IBV_WR_RDMA_WRITE, i * 1000, 3000, i * 1000, i) == 0);
    for (int i = 0; i < 30; ++i) (void)Pair::poll_one(*p.cq_a);
    p.fabric.stop_capture();
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::remove(path.c_str());
    return bytes;
  };
  const auto a = run(11);
  const auto b = run(11);
  const auto c = run(12);
  CHECK(a.size() > 1000);
  CHECK(a == b);
  CHECK(a != c);
}

// Runner of the conformance suite on real verbs: without an RDMA device the
// whole suite is skipped (exit status 77, which ctest reports as skipped).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "rdmalab/i18n/i18n.hpp"
#include "rdmalab/verbs/backend.hpp"

int main(int argc, char** argv) {
  rdmalab::i18n::set_current(rdmalab::i18n::Lang::En);
  if (rdmalab::verbs::count_verbs_devices() == 0) {
    std::puts("no RDMA device: real-verbs conformance tests skipped");
    return 77;
  }
  doctest::Context ctx(argc, argv);
  return ctx.run();
}

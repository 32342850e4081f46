// The doctest runner shared by all unit tests. Messages are checked in
// English unless a test sets another language itself.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "rdmalab/i18n/i18n.hpp"

int main(int argc, char** argv) {
  rdmalab::i18n::set_current(rdmalab::i18n::Lang::En);
  doctest::Context ctx(argc, argv);
  return ctx.run();
}

// libFuzzer target: the CM MAD codec (wire::cm), which the analyser runs on
// every QP 1 payload of a capture and the simulated CM on every MAD it gets.
//
// Beyond "no crash": decoding is a projection. A MAD that decodes to a
// message M must encode to a MAD that decodes to M again, byte for byte the
// same when encoded once more (fields the codec does not name are written as
// zero, so encode(decode(x)) may differ from x, but never from itself).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>

#include "rdmalab/wire/cm.hpp"

namespace cm = rdmalab::wire::cm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::optional<cm::Message> first = cm::decode(std::span<const std::uint8_t>(data, size));
  if (!first) return 0;
  const cm::Mad once = cm::encode(*first);
  const std::optional<cm::Message> second = cm::decode(once);
  if (!second || second->index() != first->index()) std::abort();
  if (cm::encode(*second) != once) std::abort();
  if (cm::transaction_id(*second) != cm::transaction_id(*first) ||
      cm::local_comm_id(*second) != cm::local_comm_id(*first))
    std::abort();
  return 0;
}

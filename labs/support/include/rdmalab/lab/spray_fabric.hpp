// The fabric of labs 08 and 09: adaptive routing done by switches.
//
// A leaf-spine of two leaves and S spines, one host on each leaf (sim0 on
// leaf0, sim1 on leaf1). The leaves route adaptively: each packet goes up to
// the spine whose port has the fewest bytes queued, a tie broken at random.
// On an idle fabric every port is empty, so the packets of one message are
// spread over all spines. The paths' extra delays stand for the queues that
// other traffic keeps on each spine (lab 20 makes such queues with a second
// flow): the path over spine p is p x spread ns longer, on the way from the
// requester (sim1) to the responder; ACKs come back over equal paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/sim/fabric.hpp"
#include "rdmalab/verbs/sim_backend.hpp"

namespace rdmalab::lab {

/// Every link of the spray fabric: host to leaf, leaf to spine and back, so
/// that one way over the fastest path takes 4 x 250 ns = 1 µs, as the
/// back-to-back wire of the other labs.
inline constexpr sim::Time kSprayLinkDelayNs = 250;

/// Sets `sim`'s topology to the spray fabric with `spines` spines
/// (leaf-spine:2x<spines>x1, adaptive routing on every switch).
void use_spray_fabric(verbs::SimBackendOptions& sim, std::size_t spines);

/// After open_environment() with use_spray_fabric(): lengthens the path
/// from the requester's leaf over spine p by p x `spread_ns`. False on real
/// verbs (there is no fabric to shape).
bool spread_spray_paths(const Environment& env, sim::Time spread_ns);

/// The frames the requester's leaf has sent up each spine so far (the
/// switch's per-port tx_packets, every class), in spine order; empty on
/// real verbs.
[[nodiscard]] std::vector<std::uint64_t> spray_uplink_packets(const Environment& env);

}  // namespace rdmalab::lab

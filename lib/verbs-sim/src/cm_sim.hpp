// CmChannel over the simulator's Communication Manager (sim/cm.hpp).
#pragma once

#include <memory>

#include "rdmalab/sim/cm.hpp"
#include "rdmalab/verbs/cm.hpp"

namespace rdmalab::verbs {

/// A channel of `manager` (which outlives it).
[[nodiscard]] std::unique_ptr<CmChannel> make_sim_cm_channel(sim::cm::Manager& manager);

}  // namespace rdmalab::verbs

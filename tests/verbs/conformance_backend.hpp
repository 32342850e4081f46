// The backend a conformance suite runs on: the simulator in the sim build
// of the suites (RDMALAB_CONFORMANCE_SIM), real verbs in the device build.
#pragma once

#include <memory>

#include "rdmalab/verbs/backend.hpp"
#ifdef RDMALAB_CONFORMANCE_SIM
#include "rdmalab/verbs/sim_backend.hpp"
#endif

namespace rdmalab::verbs::conformance {

inline std::unique_ptr<Backend> make_backend() {
#ifdef RDMALAB_CONFORMANCE_SIM
  return make_sim_backend(SimBackendOptions{});
#else
  return make_verbs_backend();
#endif
}

}  // namespace rdmalab::verbs::conformance

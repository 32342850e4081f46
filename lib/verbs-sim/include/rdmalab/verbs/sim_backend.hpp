// The simulator backend: the verbs interface over rdmalab::sim, the embedded
// RoCEv2 fabric. Two simulated hosts by default, "sim0" (10.99.0.1) and
// "sim1" (10.99.0.2), on one simulated Ethernet link, in one process.
//
// Polling an empty CQ lets the fabric advance in virtual time
// (CompletionQueue::progress), so lab code written for real verbs — post,
// then poll until a completion — runs unchanged and a simulated one-second
// timeout costs no wall time.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rdmalab/i18n/i18n.hpp"
#include "rdmalab/sim/device.hpp"
#include "rdmalab/sim/fabric.hpp"
#include "rdmalab/sim/topology.hpp"
#include "rdmalab/verbs/backend.hpp"

namespace rdmalab::verbs {

struct SimBackendOptions {
  sim::FabricConfig fabric;
  /// Empty: the two default hosts.
  std::vector<sim::HostConfig> hosts;
  /// Non-zero: the port MTU of every host (replaces HostConfig::port_mtu).
  std::uint32_t port_mtu = 0;
  /// Not all 0: the NIC cost model of every host (replaces HostConfig's
  /// doorbell_ns, wqe_fetch_ns, payload_fetch_ns and cqe_write_ns).
  struct NicCosts {
    sim::Time doorbell_ns = 0, wqe_fetch_ns = 0, payload_fetch_ns = 0, cqe_write_ns = 0;
  } nic_costs;
  /// When set, every frame on the simulated wire is written to this pcap.
  std::string capture_path;
  std::uint32_t snaplen = 0;  // 0: whole frames
  /// A switched fabric (see sim/topology.hpp): with no `hosts` given, its
  /// hosts are sim0, sim1, ... (10.99.x.y, numbered from 10.99.0.1);
  /// unset: the two default hosts back to back.
  std::optional<sim::TopologySpec> topology;
};

class SimBackend : public Backend {
 public:
  /// The fabric, for the simulator's own knobs (links, drops, loss, time).
  [[nodiscard]] virtual sim::Fabric& fabric() noexcept = 0;
  /// A simulated host's NIC by device name ("sim0"), or nullptr.
  [[nodiscard]] virtual sim::Device* device(std::string_view name) noexcept = 0;
  /// The simulator's QP behind a QP of this backend (for its simulator-only
  /// options, e.g. the adaptive-routing model), or nullptr.
  [[nodiscard]] virtual sim::QueuePair* sim_qp(QueuePair& qp) const noexcept = 0;
  /// The switches and hosts of SimBackendOptions::topology (empty without).
  [[nodiscard]] virtual const sim::Topology& topology() const noexcept = 0;
};

[[nodiscard]] std::unique_ptr<SimBackend> make_sim_backend(SimBackendOptions options);

/// The backend for --backend auto|verbs|sim: auto picks real verbs when a
/// device is present and the simulator otherwise. `said` receives the one
/// line explaining the choice (in the current language).
[[nodiscard]] std::unique_ptr<Backend> choose_backend(BackendChoice choice,
                                                      SimBackendOptions sim_options,
                                                      std::string* said);

/// This module's messages, for the parity test.
[[nodiscard]] std::span<const i18n::Message> sim_backend_catalog() noexcept;

}  // namespace rdmalab::verbs

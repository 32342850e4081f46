#include "rdmalab/lab/spray_fabric.hpp"

#include "rdmalab/sim/topology.hpp"

namespace rdmalab::lab {

void use_spray_fabric(verbs::SimBackendOptions& sim, std::size_t spines) {
  sim::TopologySpec spec;
  spec.kind = sim::TopologyKind::LeafSpine;
  spec.leaves = 2;
  spec.spines = spines;
  spec.hosts_per_leaf = 1;
  spec.host_link.delay_ns = kSprayLinkDelayNs;
  spec.fabric_link.delay_ns = kSprayLinkDelayNs;
  spec.switch_config.routing = sim::Routing::Adaptive;
  sim.topology = spec;
}

bool spread_spray_paths(const Environment& env, sim::Time spread_ns) {
  auto* simb = dynamic_cast<verbs::SimBackend*>(env.backend.get());
  if (simb == nullptr) return false;
  const sim::Topology& t = simb->topology();
  // Switches: the leaves, then the spines; on a leaf, port p goes to spine
  // p (topology.hpp). The requester, sim1, hangs off the second leaf.
  const std::size_t spines = t.switches.size() - 2;
  for (std::size_t p = 0; p < spines; ++p)
    simb->fabric().switch_link(t.switches[1], p).delay_ns =
        kSprayLinkDelayNs + static_cast<sim::Time>(p) * spread_ns;
  return true;
}

std::vector<std::uint64_t> spray_uplink_packets(const Environment& env) {
  std::vector<std::uint64_t> out;
  auto* simb = dynamic_cast<verbs::SimBackend*>(env.backend.get());
  if (simb == nullptr) return out;
  const sim::Topology& t = simb->topology();
  for (std::size_t p = 0; p + 2 < t.switches.size(); ++p) {
    std::uint64_t sent = 0;
    for (const sim::SwitchQueueStats& q : simb->fabric().switch_port_stats(t.switches[1], p).tc)
      sent += q.tx_packets;
    out.push_back(sent);
  }
  return out;
}

}  // namespace rdmalab::lab

// Ready-made fabrics: the presets a lab or a test names in one word.
//
//   back-to-back   two hosts joined by a wire (no switch): the default of
//                  every lab, and today's fabric
//   star:N         N hosts on one switch
//   dumbbell:N     N hosts on each of two switches joined by one link (the
//                  bottleneck)
//   leaf-spine:LxSxH  a two-tier Clos: L leaves, S spines, every leaf joined
//                  to every spine, H hosts on each leaf
//
// Hosts are named h0, h1, ... in the order of the switches they hang off,
// with MAC 02:00:00:00:hi:lo and IPv4 address 10.0.hi.lo+1 (hi, lo: the
// host's number's two bytes).
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "rdmalab/sim/device.hpp"
#include "rdmalab/sim/fabric.hpp"
#include "rdmalab/sim/switch.hpp"

namespace rdmalab::sim {

enum class TopologyKind : std::uint8_t { BackToBack, Star, Dumbbell, LeafSpine };

struct TopologySpec {
  TopologyKind kind = TopologyKind::BackToBack;
  /// star: the hosts; dumbbell: the hosts on each side.
  std::size_t hosts = 2;
  std::size_t leaves = 2;
  std::size_t spines = 2;
  std::size_t hosts_per_leaf = 2;
  /// Host to switch (or, back to back, host to host).
  LinkConfig host_link;
  /// Switch to switch (the dumbbell's bottleneck, leaf to spine).
  LinkConfig fabric_link;
  SwitchConfig switch_config;
  /// Template of every host (name, MAC and IP are filled in; the presets'
  /// hosts have one port, so more_ports is cleared).
  HostConfig host;

  /// "back-to-back", "star:8", "dumbbell:4", "leaf-spine:4x2x8"; nullopt
  /// for anything else (no host count 0, at most 4096 hosts).
  [[nodiscard]] static std::optional<TopologySpec> parse(std::string_view text);
  [[nodiscard]] std::size_t host_count() const noexcept;
};

struct Topology {
  std::vector<Device*> hosts;
  std::vector<SwitchId> switches;  // star: 1; dumbbell: left, right; leaves, then spines
};

/// Builds `spec` on an empty fabric.
Topology build_topology(Fabric& fabric, const TopologySpec& spec);

/// Builds `spec`'s switches and links around hosts already added (the first
/// spec.host_count() of `hosts`, in the order build_topology() would make
/// them); `spec.host` is not used. Back to back, it only sets the two links.
/// Throws std::invalid_argument when there are fewer hosts than the spec has.
Topology connect_topology(Fabric& fabric, const TopologySpec& spec,
                          const std::vector<Device*>& hosts);

/// A topology file that cannot be built: the message names the line and
/// what is wrong with it, in the user's language.
class TopologyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Builds the fabric a topology file describes, one statement per line
/// ('#' starts a comment):
///
///   switch NAME [routing=ecmp|adaptive] [pfc=P,...] [ecn=TC,...] [buffer=BYTES]
///   host NAME [ports=N] [ip=ADDRESS,...]
///   link A B [rate=100G] [delay=1us]
///
/// Names are unique; a link joins a host's port to a switch, or two
/// switches. A host has N ports (1 to kMaxHostPorts, 1 by default), each
/// with at most one link; a link's end NAME:P names port P of a host, NAME
/// alone its port 1. Rates take K, M, G (bits/s); delays ns, us, ms; byte
/// counts K, M (x1024). Unset values come from `defaults`: the switch
/// configuration, the link model (rate, delay) and the host template. ip=
/// gives the ports' addresses in order; a port without one gets
/// 10.(P-1).x.y (and MAC 02:00:00:(P-1):hi:lo), host x.y numbered as the
/// presets number them: one subnet per port number, as the rails of a
/// multi-rail cluster. Hosts come out in the order the file names them,
/// switches likewise.
Topology load_topology(Fabric& fabric, std::string_view text, const TopologySpec& defaults = {});

}  // namespace rdmalab::sim

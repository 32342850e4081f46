// The topology presets (see include/rdmalab/sim/topology.hpp).
#include "rdmalab/sim/topology.hpp"

#include <charconv>
#include <stdexcept>

namespace rdmalab::sim {
namespace {

constexpr std::size_t kMaxHosts = 4096;

bool number(std::string_view s, std::size_t& out) {
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc{} && r.ptr == s.data() + s.size() && out > 0;
}

HostConfig host_config(const HostConfig& base, std::size_t i) {
  HostConfig h = base;
  const auto hi = static_cast<std::uint8_t>(i >> 8);
  const auto lo = static_cast<std::uint8_t>(i);
  h.name = "h" + std::to_string(i);
  h.mac = {0x02, 0, 0, 0, hi, lo};
  // 10.0.hi.(lo + 1): .0 is left out, .256 wraps into the next hi.
  const std::size_t n = i + 1;
  h.ip = wire::IpAddress::from_v4(
      {10, 0, static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)});
  return h;
}

}  // namespace

std::optional<TopologySpec> TopologySpec::parse(std::string_view text) {
  TopologySpec s;
  const auto colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const std::string_view arg = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  if (name == "back-to-back" && colon == std::string_view::npos) return s;
  if (name == "star" || name == "dumbbell") {
    if (!number(arg, s.hosts)) return std::nullopt;
    s.kind = name == "star" ? TopologyKind::Star : TopologyKind::Dumbbell;
  } else if (name == "leaf-spine") {
    const auto x1 = arg.find('x');
    const auto x2 = x1 == std::string_view::npos ? x1 : arg.find('x', x1 + 1);
    if (x2 == std::string_view::npos || !number(arg.substr(0, x1), s.leaves) ||
        !number(arg.substr(x1 + 1, x2 - x1 - 1), s.spines) ||
        !number(arg.substr(x2 + 1), s.hosts_per_leaf))
      return std::nullopt;
    if (s.leaves > 255 || s.spines > 255) return std::nullopt;
    s.kind = TopologyKind::LeafSpine;
  } else {
    return std::nullopt;
  }
  if (s.host_count() > kMaxHosts || (s.kind == TopologyKind::Star && s.hosts < 2))
    return std::nullopt;
  return s;
}

std::size_t TopologySpec::host_count() const noexcept {
  switch (kind) {
    case TopologyKind::BackToBack: return 2;
    case TopologyKind::Star: return hosts;
    case TopologyKind::Dumbbell: return 2 * hosts;
    case TopologyKind::LeafSpine: return leaves * hosts_per_leaf;
  }
  return 0;
}

Topology build_topology(Fabric& fabric, const TopologySpec& spec) {
  Topology t;
  std::size_t next = 0;
  const auto add_host = [&]() -> Device& {
    Device& d = fabric.add_host(host_config(spec.host, next++));
    t.hosts.push_back(&d);
    return d;
  };
  const auto add_switch = [&](const std::string& name) {
    SwitchConfig c = spec.switch_config;
    c.name = name;
    t.switches.push_back(fabric.add_switch(c));
    return t.switches.back();
  };
  switch (spec.kind) {
    case TopologyKind::BackToBack: {
      Device& a = add_host();
      Device& b = add_host();
      fabric.link(a, b) = spec.host_link;
      fabric.link(b, a) = spec.host_link;
      break;
    }
    case TopologyKind::Star: {
      const SwitchId sw = add_switch("sw0");
      for (std::size_t i = 0; i < spec.hosts; ++i) fabric.connect(add_host(), sw, spec.host_link);
      break;
    }
    case TopologyKind::Dumbbell: {
      const SwitchId left = add_switch("left");
      const SwitchId right = add_switch("right");
      fabric.connect(left, right, spec.fabric_link);
      for (std::size_t i = 0; i < spec.hosts; ++i) fabric.connect(add_host(), left, spec.host_link);
      for (std::size_t i = 0; i < spec.hosts; ++i)
        fabric.connect(add_host(), right, spec.host_link);
      break;
    }
    case TopologyKind::LeafSpine: {
      std::vector<SwitchId> leaves;
      for (std::size_t l = 0; l < spec.leaves; ++l)
        leaves.push_back(add_switch("leaf" + std::to_string(l)));
      std::vector<SwitchId> spines;
      for (std::size_t s = 0; s < spec.spines; ++s)
        spines.push_back(add_switch("spine" + std::to_string(s)));
      // Uplinks first: on every leaf, ports 0 .. S-1 go to spines 0 .. S-1,
      // then its hosts; on every spine, port l goes to leaf l.
      for (const SwitchId leaf : leaves)
        for (const SwitchId spine : spines) fabric.connect(leaf, spine, spec.fabric_link);
      for (const SwitchId leaf : leaves)
        for (std::size_t h = 0; h < spec.hosts_per_leaf; ++h)
          fabric.connect(add_host(), leaf, spec.host_link);
      break;
    }
  }
  return t;
}

}  // namespace rdmalab::sim

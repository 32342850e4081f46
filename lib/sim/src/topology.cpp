// The topology presets (see include/rdmalab/sim/topology.hpp).
#include "rdmalab/sim/topology.hpp"

#include <charconv>
#include <cmath>
#include <map>
#include <stdexcept>

#include "rdmalab/sim/messages.hpp"

namespace rdmalab::sim {
namespace {

constexpr std::size_t kMaxHosts = 4096;

bool number(std::string_view s, std::size_t& out) {
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc{} && r.ptr == s.data() + s.size() && out > 0;
}

// Host i's port p (1-based): MAC 02:00:00:(p-1):hi:lo and IPv4 address
// 10.(p-1).hi.(lo+1), one subnet per port number.
HostPortConfig port_address(std::size_t i, std::size_t p) {
  const auto hi = static_cast<std::uint8_t>(i >> 8);
  const auto lo = static_cast<std::uint8_t>(i);
  const auto sub = static_cast<std::uint8_t>(p - 1);
  // .0 is left out, .256 wraps into the next hi.
  const std::size_t n = i + 1;
  return {{0x02, 0, 0, sub, hi, lo},
          wire::IpAddress::from_v4(
              {10, sub, static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)})};
}

HostConfig host_config(const HostConfig& base, std::size_t i, std::size_t ports = 1) {
  HostConfig h = base;
  h.name = "h" + std::to_string(i);
  const HostPortConfig first = port_address(i, 1);
  h.mac = first.mac;
  h.ip = first.ip;
  h.more_ports.clear();
  for (std::size_t p = 2; p <= ports; ++p) h.more_ports.push_back(port_address(i, p));
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
  std::vector<Device*> hosts;
  for (std::size_t i = 0; i < spec.host_count(); ++i)
    hosts.push_back(&fabric.add_host(host_config(spec.host, i)));
  return connect_topology(fabric, spec, hosts);
}

Topology connect_topology(Fabric& fabric, const TopologySpec& spec,
                          const std::vector<Device*>& hosts) {
  if (hosts.size() < spec.host_count())
    throw std::invalid_argument("connect_topology: fewer hosts than the topology has");
  Topology t;
  std::size_t next = 0;
  const auto host = [&]() -> Device& {
    Device& d = *hosts[next++];
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
      Device& a = host();
      Device& b = host();
      fabric.link(a, b) = spec.host_link;
      fabric.link(b, a) = spec.host_link;
      break;
    }
    case TopologyKind::Star: {
      const SwitchId sw = add_switch("sw0");
      for (std::size_t i = 0; i < spec.hosts; ++i) fabric.connect(host(), sw, spec.host_link);
      break;
    }
    case TopologyKind::Dumbbell: {
      const SwitchId left = add_switch("left");
      const SwitchId right = add_switch("right");
      fabric.connect(left, right, spec.fabric_link);
      for (std::size_t i = 0; i < spec.hosts; ++i) fabric.connect(host(), left, spec.host_link);
      for (std::size_t i = 0; i < spec.hosts; ++i) fabric.connect(host(), right, spec.host_link);
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
          fabric.connect(host(), leaf, spec.host_link);
      break;
    }
  }
  return t;
}

// --- Topology files --------------------------------------------------------------

namespace {

[[noreturn]] void fail(std::size_t line, const std::string& what) {
  throw TopologyError(topology_message("topology.line", std::to_string(line), what));
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// "100G", "25G", "400M", "1000000000": bits per second.
std::optional<double> parse_rate(std::string_view v) {
  double scale = 1;
  if (!v.empty() && (v.back() == 'K' || v.back() == 'M' || v.back() == 'G')) {
    scale = v.back() == 'K' ? 1e3 : v.back() == 'M' ? 1e6 : 1e9;
    v.remove_suffix(1);
  }
  std::size_t n = 0;
  if (!number(v, n)) return std::nullopt;
  return static_cast<double>(n) * scale;
}

// "1us", "500ns", "2ms", "0ns": nanoseconds.
std::optional<Time> parse_delay(std::string_view v) {
  Time scale = 0;
  if (v.ends_with("ns")) {
    scale = 1;
  } else if (v.ends_with("us")) {
    scale = kMicrosecond;
  } else if (v.ends_with("ms")) {
    scale = kMillisecond;
  } else {
    return std::nullopt;
  }
  v.remove_suffix(2);
  if (v == "0") return 0;
  std::size_t n = 0;
  if (!number(v, n) || n > 1'000'000'000) return std::nullopt;
  return static_cast<Time>(n) * scale;
}

// "16M", "512K", "100000": bytes.
std::optional<std::uint64_t> parse_bytes(std::string_view v) {
  std::uint64_t scale = 1;
  if (!v.empty() && (v.back() == 'K' || v.back() == 'M')) {
    scale = v.back() == 'K' ? 1024 : 1024 * 1024;
    v.remove_suffix(1);
  }
  std::size_t n = 0;
  if (!number(v, n) || n > (std::uint64_t{1} << 40) / scale) return std::nullopt;
  return n * scale;
}

// "3" or "3,4": a set of classes 0..7.
std::optional<std::vector<std::size_t>> parse_classes(std::string_view v) {
  std::vector<std::size_t> out;
  while (!v.empty()) {
    const auto comma = v.find(',');
    const std::string_view one = v.substr(0, comma);
    if (one.size() != 1 || one[0] < '0' || one[0] > '7') return std::nullopt;
    out.push_back(static_cast<std::size_t>(one[0] - '0'));
    v = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace

Topology load_topology(Fabric& fabric, std::string_view text, const TopologySpec& defaults) {
  struct Entry {
    bool is_switch;
    std::size_t index;         // in Topology::hosts or ::switches
    std::uint32_t linked = 0;  // a host's ports with a link (bit p - 1)
  };
  Topology t;
  std::map<std::string, Entry, std::less<>> names;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (const auto hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    const auto w = words(line);
    if (w.empty()) continue;
    const std::string_view kind = w[0];
    // key=value options after the names.
    const std::size_t first_option = kind == "link" ? 3 : 2;
    std::map<std::string_view, std::string_view> opts;
    for (std::size_t i = first_option; i < w.size(); ++i) {
      const auto eq = w[i].find('=');
      if (eq == std::string_view::npos || eq == 0)
        fail(line_no, topology_message("topology.bad_option", w[i]));
      opts[w[i].substr(0, eq)] = w[i].substr(eq + 1);
    }
    const auto check_options = [&](std::initializer_list<std::string_view> allowed) {
      for (const auto& [k, v] : opts)
        if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
          fail(line_no, topology_message("topology.bad_option", k));
    };
    const auto bad_value = [&](std::string_view key) {
      fail(line_no, topology_message("topology.bad_value", opts[key], key));
    };
    if (kind == "switch" || kind == "host") {
      if (w.size() < 2 || w[1].find('=') != std::string_view::npos)
        fail(line_no, topology_message("topology.missing_name", kind));
      const std::string name(w[1]);
      if (names.contains(name)) fail(line_no, topology_message("topology.duplicate_name", name));
      if (kind == "switch") {
        check_options({"routing", "pfc", "ecn", "buffer"});
        SwitchConfig c = defaults.switch_config;
        c.name = name;
        if (opts.contains("routing")) {
          if (opts["routing"] == "ecmp") {
            c.routing = Routing::Ecmp;
          } else if (opts["routing"] == "adaptive") {
            c.routing = Routing::Adaptive;
          } else {
            bad_value("routing");
          }
        }
        if (opts.contains("pfc")) {
          const auto cls = parse_classes(opts["pfc"]);
          if (!cls) bad_value("pfc");
          for (const std::size_t p : *cls) c.pfc[p].enabled = true;
        }
        if (opts.contains("ecn")) {
          const auto cls = parse_classes(opts["ecn"]);
          if (!cls) bad_value("ecn");
          for (const std::size_t p : *cls) c.ecn[p].enabled = true;
        }
        if (opts.contains("buffer")) {
          const auto b = parse_bytes(opts["buffer"]);
          if (!b) bad_value("buffer");
          c.buffer_bytes = *b;
        }
        names.emplace(name, Entry{true, t.switches.size()});
        t.switches.push_back(fabric.add_switch(c));
      } else {
        check_options({"ip", "ports"});
        std::size_t ports = 1;
        if (opts.contains("ports") &&
            (!number(opts["ports"], ports) || ports < 1 || ports > kMaxHostPorts))
          bad_value("ports");
        HostConfig h = host_config(defaults.host, t.hosts.size(), ports);
        h.name = name;
        if (opts.contains("ip")) {
          // One address per port, in order, separated by commas.
          std::string_view list = opts["ip"];
          for (std::size_t p = 1; !list.empty(); ++p) {
            const auto comma = list.find(',');
            const auto ip = wire::IpAddress::parse(list.substr(0, comma));
            if (!ip || p > ports) bad_value("ip");
            (p == 1 ? h.ip : h.more_ports[p - 2].ip) = *ip;
            list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
          }
        }
        names.emplace(name, Entry{false, t.hosts.size()});
        t.hosts.push_back(&fabric.add_host(h));
      }
    } else if (kind == "link") {
      if (w.size() < 3 || w[1].find('=') != std::string_view::npos ||
          w[2].find('=') != std::string_view::npos)
        fail(line_no, topology_message("topology.link_ends"));
      check_options({"rate", "delay"});
      // A host's end may name its port: NAME:P (port 1 without).
      const auto end = [&](std::string_view word, std::size_t& port) {
        port = 1;
        const auto colon = word.find(':');
        auto it = names.find(word.substr(0, colon));
        if (it == names.end()) fail(line_no, topology_message("topology.unknown_name", word));
        if (colon != std::string_view::npos) {
          if (it->second.is_switch || !number(word.substr(colon + 1), port) ||
              !t.hosts[it->second.index]->has_port(static_cast<std::uint32_t>(port)))
            fail(line_no, topology_message("topology.bad_port", word));
        }
        return it;
      };
      std::size_t port_a = 1;
      std::size_t port_b = 1;
      auto a = end(w[1], port_a);
      auto b = end(w[2], port_b);
      if (!a->second.is_switch) {  // the host, if any, second
        std::swap(a, b);
        std::swap(port_a, port_b);
      }
      if (!a->second.is_switch || (b->second.is_switch && a == b))
        fail(line_no, topology_message("topology.bad_link"));
      LinkConfig link = b->second.is_switch ? defaults.fabric_link : defaults.host_link;
      if (opts.contains("rate")) {
        const auto r = parse_rate(opts["rate"]);
        if (!r || *r <= 0) bad_value("rate");
        link.rate_bps = *r;
      }
      if (opts.contains("delay")) {
        const auto d = parse_delay(opts["delay"]);
        if (!d) bad_value("delay");
        link.delay_ns = *d;
      }
      const SwitchId sa = t.switches[a->second.index];
      if (b->second.is_switch) {
        fabric.connect(sa, t.switches[b->second.index], link);
      } else {
        const std::uint32_t bit = 1U << (port_b - 1);
        if ((b->second.linked & bit) != 0)
          fail(line_no, topology_message("topology.host_linked", b->first, std::to_string(port_b)));
        b->second.linked |= bit;
        fabric.connect(*t.hosts[b->second.index], static_cast<std::uint8_t>(port_b), sa, link);
      }
    } else {
      fail(line_no, topology_message("topology.unknown_statement", kind));
    }
  }
  if (t.hosts.empty()) throw TopologyError(topology_message("topology.empty"));
  return t;
}

}  // namespace rdmalab::sim

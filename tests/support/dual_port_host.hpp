// A simulated host whose NIC has two ports, for the tests of the simulator
// and of the verbs backend over it.
#pragma once

#include "rdmalab/sim/fabric.hpp"
#include "rdmalab/wire/frame.hpp"

namespace testsupport {

/// "sim0": port 1 at 10.99.0.1 (MAC 02:00:00:00:00:01), port 2 at
/// 10.99.1.1 (MAC 02:00:00:01:00:01).
inline rdmalab::sim::HostConfig dual_port_host() {
  rdmalab::sim::HostConfig h;
  h.name = "sim0";
  h.mac = {0x02, 0, 0, 0, 0, 1};
  h.ip = *rdmalab::wire::IpAddress::parse("10.99.0.1");
  h.more_ports.push_back({{0x02, 0, 0, 0x01, 0, 1}, *rdmalab::wire::IpAddress::parse("10.99.1.1")});
  return h;
}

}  // namespace testsupport

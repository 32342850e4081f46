// The doctor's checks against made-up machines.
#include "rdmalab/verbs/doctor.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>

#include "../support/dual_port_host.hpp"
#include "rdmalab/verbs/sim_backend.hpp"

using namespace rdmalab;
using namespace rdmalab::verbs;

namespace {
const CheckResult& find(const std::vector<CheckResult>& v, std::string_view id) {
  for (const auto& c : v)
    if (c.id == id) return c;
  FAIL("no check " << id);
  return v.front();
}

DeviceReport rxe0(ibv_port_state state, bool with_ipv4_gid) {
  DeviceReport d;
  d.info = {"rxe0", "0200:00ff:fe00:0001", "InfiniBand"};
  PortReport p;
  p.info.state = state;
  p.info.active_mtu = IBV_MTU_1024;
  p.info.max_mtu = IBV_MTU_4096;
  GidEntry ll;
  ll.index = 0;
  ll.gid.raw[0] = 0xfe;
  ll.gid.raw[1] = 0x80;
  ll.netdev = "eth0";
  p.gids.push_back(ll);
  if (with_ipv4_gid) {
    GidEntry v4;
    v4.index = 1;
    v4.gid.raw[10] = v4.gid.raw[11] = 0xff;
    v4.gid.raw[12] = 10;
    v4.gid.raw[15] = 1;
    v4.netdev = "eth0";
    p.gids.push_back(v4);
  }
  p.chosen_gid = choose_gid(p.gids, std::nullopt);
  p.netdev = "eth0";
  d.ports.push_back(p);
  return d;
}
}  // namespace

TEST_CASE("no device: auto says the simulator will be used and exits 0; verbs fails with the fix") {
  DoctorInputs in;
  in.memlock = 8ull << 20;
  in.kernel_release = "6.1.0-26-amd64";
  in.rxe_module_available = true;
  auto checks = run_doctor(in, {});
  CHECK(find(checks, "devices").status == CheckStatus::Info);
  CHECK(find(checks, "devices").title.find("simulated RoCEv2 fabric") != std::string::npos);
  CHECK(find(checks, "devices").fix.find("modprobe rdma_rxe") != std::string::npos);
  CHECK(find(checks, "memlock").status == CheckStatus::Info);
  CHECK(find(checks, "rxe").title.find("can be loaded") != std::string::npos);
  CHECK(doctor_exit_code(checks) == 0);

  checks = run_doctor(in, DoctorOptions{BackendChoice::Verbs, std::nullopt});
  CHECK(find(checks, "devices").status == CheckStatus::Fail);
  CHECK(find(checks, "memlock").status == CheckStatus::Fail);
  CHECK(find(checks, "memlock").fix.find("ulimit -l unlimited") != std::string::npos);
  CHECK(doctor_exit_code(checks) == 1);
}

TEST_CASE("a healthy rxe device: ports, the GID table with the chosen index marked") {
  DoctorInputs in;
  in.devices.push_back(rxe0(IBV_PORT_ACTIVE, true));
  in.rxe_module_loaded = true;
  const auto checks = run_doctor(in, {});
  CHECK(find(checks, "devices").status == CheckStatus::Ok);
  CHECK(
      find(checks, "ports").details.at(0).find("rxe0 port 1: ACTIVE, active MTU 1024 (max 4096)") !=
      std::string::npos);
  const auto& gid = find(checks, "gid");
  CHECK(gid.status == CheckStatus::Ok);
  REQUIRE(gid.details.size() == 2);
  CHECK(gid.details[1].starts_with("* [ 1] ::ffff:10.0.0.1"));
  CHECK(gid.details[0].starts_with("  [ 0] fe80::"));
  CHECK(find(checks, "memlock").status == CheckStatus::Ok);  // unlimited
  CHECK(doctor_exit_code(checks) == 0);
}

TEST_CASE("a port that is down, a missing RoCEv2 IPv4 GID and a bad --gid-index are reported") {
  DoctorInputs in;
  in.devices.push_back(rxe0(IBV_PORT_DOWN, false));
  auto checks = run_doctor(in, {});
  CHECK(find(checks, "ports").status == CheckStatus::Fail);
  CHECK(find(checks, "ports").fix.find("ip link set") != std::string::npos);
  CHECK(find(checks, "gid").status == CheckStatus::Warn);
  CHECK(doctor_exit_code(checks) == 1);

  in.devices[0].ports[0].chosen_gid = std::nullopt;
  checks = run_doctor(in, DoctorOptions{BackendChoice::Auto, 7});
  CHECK(find(checks, "gid").status == CheckStatus::Fail);
  CHECK(find(checks, "gid").title.find("GID index 7 does not exist") != std::string::npos);
}

TEST_CASE("the doctor speaks Chinese") {
  i18n::set_current(i18n::Lang::Zh);
  const auto checks = run_doctor(DoctorInputs{}, {});
  CHECK(find(checks, "devices").title.find("模拟") != std::string::npos);
  i18n::set_current(i18n::Lang::En);
}

TEST_CASE("device limits: rxe's, as the doctor shows them") {
  // rxe's limits as the Soft-RoCE job's doctor run showed them (Debian's
  // 6.1 kernel): SRQs, no CQ moderation, and 512 bytes of inline data as the
  // largest max_inline_data ibv_create_qp accepted.
  DoctorInputs in;
  in.devices.push_back(rxe0(IBV_PORT_ACTIVE, true));
  DeviceAttrs a;
  a.max_cq = 1048576;
  a.max_cqe = 32767;
  a.max_qp_wr = 1048576;
  a.max_sge = 32;
  a.max_srq = 917503;
  a.max_srq_wr = 1048576;
  in.devices[0].attrs = a;
  in.devices[0].max_inline_data = 512;
  auto checks = run_doctor(in, {});
  const auto& lim = find(checks, "limits");
  CHECK(lim.status == CheckStatus::Ok);
  CHECK(lim.title == "rxe0: the limits the labs depend on");
  REQUIRE(lim.details.size() == 4);
  CHECK(lim.details[0].starts_with("max_inline_data 512: the largest value ibv_create_qp"));
  CHECK(lim.details[1] == "max_cq 1048576, max_cqe 32767, max_qp_wr 1048576, max_sge 32");
  CHECK(lim.details[2].starts_with("max_srq 917503, max_srq_wr 1048576"));
  CHECK(lim.details[3].starts_with("no CQ moderation"));

  // A device without SRQ warns (lab 14 needs one); one with moderation says
  // how much it can hold back.
  in.devices[0].attrs->max_srq = 0;
  in.devices[0].attrs->max_cq_count = 65535;
  in.devices[0].attrs->max_cq_period = 4095;
  checks = run_doctor(in, {});
  const auto& lim2 = find(checks, "limits");
  CHECK(lim2.status == CheckStatus::Warn);
  CHECK(lim2.details[2].starts_with("max_srq 0"));
  CHECK(lim2.fix.find("max_srq > 0") != std::string::npos);
  CHECK(lim2.details[3] ==
        "CQ moderation: up to 65535 completions or 4095 µs per event (ibv_modify_cq)");
  CHECK(doctor_exit_code(checks) == 0);
}

TEST_CASE("device limits on the simulator, probed through the verbs interface") {
  // What sim::DeviceLimits enforces: create_qp refuses max_inline_data above
  // 256, so the binary search of probe_max_inline_data ends at 256; max_cqe
  // 2^20, max_qp_wr 16384, max_sge 32; no CQ count limit, no SRQ, no
  // moderation.
  auto backend = make_sim_backend({});
  const DoctorInputs in = probe_system(*backend, std::nullopt);
  REQUIRE(in.devices.size() == 2);
  for (const auto& d : in.devices) {
    CAPTURE(d.info.name);
    CHECK(d.error.empty());
    REQUIRE(d.max_inline_data.has_value());
    CHECK(*d.max_inline_data == 256);
    REQUIRE(d.attrs.has_value());
    CHECK(!d.attrs->max_cq.has_value());
    CHECK(d.attrs->max_cqe == 1 << 20);
    CHECK(d.attrs->max_qp_wr == 16384);
    CHECK(d.attrs->max_srq == 1024);  // sim::DeviceLimits
    CHECK(d.attrs->max_srq_wr == 16384);
    CHECK(d.attrs->max_cq_count == 0);
  }
  const auto checks = run_doctor(in, {});
  const auto& lim = find(checks, "limits");
  CHECK(lim.title == "sim0: the limits the labs depend on");
  CHECK(lim.details[1] == "max_cq no limit, max_cqe 1048576, max_qp_wr 16384, max_sge 32");
}

TEST_CASE("probe_max_inline_data with a ceiling below the device's limit returns the ceiling") {
  auto backend = make_sim_backend({});
  auto ctx = backend->open("sim0");
  CHECK(probe_max_inline_data(*ctx, 100) == 100);
  CHECK(probe_max_inline_data(*ctx, 257) == 256);
}

namespace {
/// An InfiniBand HCA's port 1, as ibv_query_port describes it.
DeviceReport mlx5_0(ibv_port_state state, std::uint8_t phys_state) {
  DeviceReport d;
  d.info = {"mlx5_0", "b859:9f03:00a1:b2c3", "InfiniBand"};
  PortReport p;
  p.info.state = state;
  p.info.phys_state = phys_state;
  p.info.link_layer = IBV_LINK_LAYER_INFINIBAND;
  p.info.active_mtu = IBV_MTU_4096;
  p.info.max_mtu = IBV_MTU_4096;
  if (state == IBV_PORT_ACTIVE || state == IBV_PORT_ARMED) {
    p.info.lid = 7;
    p.info.sm_lid = 1;
  }
  p.info.active_width = 2;   // 4X
  p.info.active_speed = 32;  // EDR
  // GID 0: the default subnet prefix fe80::/64 and the port GUID.
  GidEntry g;
  g.type = GidType::IB;
  const std::array<std::uint8_t, 16> raw = {0xfe, 0x80, 0,    0,    0,    0,    0,    0,
                                            0xba, 0x59, 0x9f, 0x03, 0x00, 0xa1, 0xb2, 0xc3};
  std::copy(raw.begin(), raw.end(), g.gid.raw);
  p.gids.push_back(g);
  p.chosen_gid = choose_gid(p.gids, std::nullopt);
  d.ports.push_back(p);
  return d;
}
}  // namespace

TEST_CASE("an InfiniBand port: LIDs and the subnet manager, and what each state asks of whom") {
  DoctorInputs in;
  in.devices.push_back(mlx5_0(IBV_PORT_ACTIVE, 5));
  auto checks = run_doctor(in, {});
  const CheckResult* port = &find(checks, "ports");
  CHECK(port->status == CheckStatus::Ok);
  REQUIRE(port->details.size() == 2);
  CHECK(port->details[0].find("link layer InfiniBand") != std::string::npos);
  CHECK(port->details[1] ==
        "mlx5_0 port 1: LID 7 (LMC 0), subnet manager at LID 1, link 4X EDR (25.0 Gb/s per "
        "lane), physical state LINK_UP");
  // No RoCE GID to look for on an InfiniBand port: its GID table holds the
  // subnet prefix and the port GUID, shown with the index the labs use.
  const CheckResult& gid = find(checks, "gid");
  CHECK(gid.status == CheckStatus::Ok);
  REQUIRE(gid.details.size() == 1);
  CHECK(gid.details[0].starts_with("* [ 0] fe80::ba59:9f03:a1:b2c3"));
  CHECK(gid.details[0].find("IB") != std::string::npos);
  CHECK(doctor_exit_code(checks) == 0);

  // The link is up and nobody configured the port: the subnet manager is missing.
  in.devices = {mlx5_0(IBV_PORT_INIT, 5)};
  checks = run_doctor(in, {});
  port = &find(checks, "ports");
  CHECK(port->status == CheckStatus::Fail);
  CHECK(port->title ==
        "mlx5_0 port 1 is INIT: the link is up, but no subnet manager has "
        "configured the port");
  CHECK(port->fix.find("opensm") != std::string::npos);
  CHECK(port->details[1].find("LID 0 (LMC 0), subnet manager at LID 0") != std::string::npos);
  CHECK(doctor_exit_code(checks) == 1);

  in.devices = {mlx5_0(IBV_PORT_ARMED, 5)};
  checks = run_doctor(in, {});
  port = &find(checks, "ports");
  CHECK(port->title.find("is ARMED") != std::string::npos);
  CHECK(port->fix.find("sweep") != std::string::npos);

  // DOWN: the physical state says why.
  in.devices = {mlx5_0(IBV_PORT_DOWN, 2)};
  checks = run_doctor(in, {});
  CHECK(find(checks, "ports").title ==
        "mlx5_0 port 1 has no link: its physical state is POLLING, "
        "it finds no peer");
  CHECK(find(checks, "ports").fix.find("cable") != std::string::npos);
  in.devices = {mlx5_0(IBV_PORT_DOWN, 3)};
  checks = run_doctor(in, {});
  CHECK(find(checks, "ports").fix.find("ibportstate LID PORT enable") != std::string::npos);

  // Unknown encodings are said to be unknown, not guessed.
  DeviceReport odd = mlx5_0(IBV_PORT_ACTIVE, 5);
  odd.ports[0].info.active_speed = 3;
  in.devices = {odd};
  checks = run_doctor(in, {});
  CHECK(find(checks, "ports").details[1].find("link of unknown width and speed") !=
        std::string::npos);

  // And in Chinese.
  i18n::set_current(i18n::Lang::Zh);
  in.devices = {mlx5_0(IBV_PORT_INIT, 5)};
  checks = run_doctor(in, {});
  CHECK(find(checks, "ports").title.find("还没有子网管理器配置这个端口") != std::string::npos);
  CHECK(find(checks, "ports")
            .details[1]
            .find("链路 4X EDR（每条通道 25.0 Gb/s），物理状态 "
                  "LINK_UP（链路已连通）") != std::string::npos);
  i18n::set_current(i18n::Lang::En);
}

TEST_CASE("a dual-port device: every port is probed, and a second port down only warns") {
  // Two ports on one device, as a ConnectX-3 shows them: port 1 up, port 2
  // without a cable (DOWN, physical state Polling).
  DoctorInputs in;
  DeviceReport d = mlx5_0(IBV_PORT_ACTIVE, 5);
  PortReport p2 = mlx5_0(IBV_PORT_DOWN, 2).ports[0];
  p2.port = 2;
  d.ports.push_back(p2);
  in.devices.push_back(d);
  auto checks = run_doctor(in, {});
  std::vector<const CheckResult*> ports;
  for (const auto& c : checks)
    if (c.id == "ports") ports.push_back(&c);
  REQUIRE(ports.size() == 2);
  CHECK(ports[0]->status == CheckStatus::Ok);
  CHECK(ports[1]->status == CheckStatus::Warn);
  CHECK(ports[1]->title.find("port 2") != std::string::npos);
  CHECK(doctor_exit_code(checks) == 0);
  // Both down: nothing works, a failure.
  in.devices[0].ports[0] = mlx5_0(IBV_PORT_DOWN, 2).ports[0];
  checks = run_doctor(in, {});
  CHECK(find(checks, "ports").status == CheckStatus::Fail);
  CHECK(doctor_exit_code(checks) == 1);

  // The probe asks every port a simulated dual-port NIC has.
  SimBackendOptions o;
  o.hosts.push_back(testsupport::dual_port_host());
  auto backend = make_sim_backend(o);
  const DoctorInputs probed = probe_system(*backend, std::nullopt);
  REQUIRE(probed.devices.size() == 1);
  REQUIRE(probed.devices[0].ports.size() == 2);
  CHECK(probed.devices[0].ports[1].port == 2);
  REQUIRE(probed.devices[0].ports[1].gids.size() == 1);
  CHECK(probed.devices[0].ports[1].gids[0].to_string() == "::ffff:10.99.1.1");
}

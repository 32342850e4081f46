#include "rdmalab/verbs/doctor.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>

#include "rdmalab/verbs/error.hpp"

namespace rdmalab::verbs {
namespace {

using i18n::Message;
namespace fs = std::filesystem;

constexpr std::uint64_t kMemlockWanted = 64ull << 20;

constexpr std::array kCatalog{
    Message{"dev.none_auto",
            "no RDMA device found: the labs will run on the simulated RoCEv2 fabric",
            "没有找到 RDMA 设备：实验将在模拟的 RoCEv2 网络上运行"},
    Message{"dev.none_verbs", "no RDMA device found, and --backend verbs needs one",
            "没有找到 RDMA 设备，而 --backend verbs 需要一个"},
    Message{"dev.sim", "the simulated RoCEv2 fabric is selected (--backend sim)",
            "已选择模拟的 RoCEv2 网络（--backend sim）"},
    Message{"dev.found", "{} RDMA device(s) found", "找到 {} 个 RDMA 设备"},
    Message{"dev.line", "{0}: {1}, node GUID {2}", "{0}：{1}，节点 GUID {2}"},
    Message{"dev.open_failed", "{0}: cannot be opened or queried: {1}", "{0}：无法打开或查询：{1}"},
    Message{
        "dev.fix_rxe",
        "load Soft-RoCE on an Ethernet interface: `modprobe rdma_rxe`, then `rdma link add rxe0 "
        "type rxe netdev IFACE` (IFACE: an interface with an IPv4 address), then run doctor again",
        "在一个以太网口上加载 Soft-RoCE：先 `modprobe rdma_rxe`，再 `rdma link add rxe0 type rxe "
        "netdev IFACE`（IFACE 为一个配有 IPv4 地址的网口），然后重新运行 doctor"},
    Message{"dev.fix_sim",
            "or run the labs on the simulator: --backend sim (the default when no device exists)",
            "或者在模拟器上运行实验：--backend sim（没有设备时默认如此）"},
    Message{"port.line", "{0} port {1}: {2}, active MTU {3} (max {4}), link layer {5}{6}",
            "{0} 端口 {1}：{2}，当前 MTU {3}（最大 {4}），链路层 {5}{6}"},
    Message{"port.netdev", ", netdev {}", "，网口 {}"},
    Message{"port.down", "{0} port {1} is not ACTIVE: the link or its network interface is down",
            "{0} 端口 {1} 不是 ACTIVE 状态：链路或对应网口未启用"},
    Message{"port.fix_down",
            "bring the interface up (`ip link set IFACE up`) and check the cable or the peer",
            "启用网口（`ip link set IFACE up`），并检查线缆或对端"},
    Message{"port.ok", "ports are ACTIVE", "端口均处于 ACTIVE 状态"},
    Message{"port.ib_line",
            "{0} port {1}: LID {2} (LMC {3}), subnet manager at LID {4}, link {5}, physical "
            "state {6}",
            "{0} 端口 {1}：LID {2}（LMC {3}），子网管理器位于 LID {4}，链路 {5}，物理状态 {6}"},
    Message{"port.ib_init",
            "{0} port {1} is INIT: the link is up, but no subnet manager has configured the port",
            "{0} 端口 {1} 处于 INIT 状态：链路已连通，但还没有子网管理器配置这个端口"},
    Message{"port.fix_sm",
            "an InfiniBand fabric needs a subnet manager to assign LIDs and routes: run one on a "
            "host of the fabric (`opensm`, Debian package opensm) or enable the one in a managed "
            "switch; `sminfo` (package infiniband-diags) shows whether one answers",
            "InfiniBand 网络需要子网管理器来分配 LID 和路由：在网络中的一台主机上运行一个"
            "（`opensm`，Debian 软件包 opensm），或者启用带管理功能的交换机中的子网管理器；"
            "`sminfo`（软件包 infiniband-diags）可以查看是否有子网管理器应答"},
    Message{"port.ib_armed",
            "{0} port {1} is ARMED: the subnet manager configured it but has not activated it yet",
            "{0} 端口 {1} 处于 ARMED 状态：子网管理器已配置它，但还没有激活"},
    Message{"port.fix_armed",
            "wait for the subnet manager to finish its sweep; if the port stays ARMED, read the "
            "subnet manager's log",
            "等待子网管理器完成扫描；如果端口一直停在 ARMED，请查看子网管理器的日志"},
    Message{"port.ib_polling",
            "{0} port {1} has no link: its physical state is POLLING, it finds no peer",
            "{0} 端口 {1} 没有链路：物理状态为 POLLING，找不到对端"},
    Message{"port.fix_polling",
            "check the cable, and that the port at the other end (a switch or an HCA) is enabled",
            "检查线缆，并确认另一端（交换机或 HCA）的端口已启用"},
    Message{"port.ib_disabled", "{0} port {1} is disabled: its physical state is DISABLED",
            "{0} 端口 {1} 已被禁用：物理状态为 DISABLED"},
    Message{"port.fix_disabled",
            "enable it: `ibportstate LID PORT enable` (package infiniband-diags) from a host that "
            "may manage the fabric, or in the switch",
            "启用它：在有权管理该网络的主机上运行 `ibportstate LID PORT enable`（软件包 "
            "infiniband-diags），或者在交换机上启用"},
    Message{"phys.sleep", "SLEEP", "SLEEP（休眠）"},
    Message{"phys.polling", "POLLING", "POLLING（寻找对端）"},
    Message{"phys.disabled", "DISABLED", "DISABLED（已禁用）"},
    Message{"phys.training", "TRAINING", "TRAINING（链路训练）"},
    Message{"phys.up", "LINK_UP", "LINK_UP（链路已连通）"},
    Message{"phys.recovery", "LINK_ERROR_RECOVERY", "LINK_ERROR_RECOVERY（链路错误恢复）"},
    Message{"phys.test", "PHY_TEST", "PHY_TEST（物理层测试）"},
    Message{"phys.other", "{}", "{}"},
    Message{"link.unknown", "of unknown width and speed", "宽度和速率未知"},
    Message{"link.rate", "{0} {1} ({2} Gb/s per lane)", "{0} {1}（每条通道 {2} Gb/s）"},
    Message{"gid.title", "GID table of {0} port {1} (* = the index rdmalab uses)",
            "{0} 端口 {1} 的 GID 表（* 标出 rdmalab 使用的索引）"},
    Message{"gid.row", "{0} [{1:>2}] {2:<40} {3}{4}", "{0} [{1:>2}] {2:<40} {3}{4}"},
    Message{"gid.no_v2", "{0} port {1} has no RoCEv2 GID of an IPv4 address",
            "{0} 端口 {1} 没有 IPv4 地址对应的 RoCEv2 GID"},
    Message{"gid.fix_v2",
            "give the device's network interface an IPv4 address, or pass --gid-index explicitly",
            "为设备对应的网口配置 IPv4 地址，或者用 --gid-index 显式指定"},
    Message{"gid.bad_index", "GID index {0} does not exist on {1} port {2}",
            "{1} 端口 {2} 上不存在 GID 索引 {0}"},
    Message{"gid.fix_index", "choose an index from the table above", "请从上表中选择一个索引"},
    Message{"memlock.unlimited", "memlock limit: unlimited", "memlock 限额：无限制"},
    Message{"memlock.value", "memlock limit: {} KiB", "memlock 限额：{} KiB"},
    Message{
        "memlock.low",
        "memlock limit is {} KiB: registering larger buffers (ibv_reg_mr) will fail with ENOMEM",
        "memlock 限额只有 {} KiB：注册较大的缓冲区（ibv_reg_mr）会因 ENOMEM 失败"},
    Message{"memlock.fix",
            "raise it: `ulimit -l unlimited` (as root), a `* - memlock unlimited` line in "
            "/etc/security/limits.conf, or LimitMEMLOCK=infinity for a systemd service",
            "调高限额：以 root 执行 `ulimit -l unlimited`，或在 /etc/security/limits.conf 中加入 "
            "`* - memlock unlimited`，systemd 服务则设置 LimitMEMLOCK=infinity"},
    Message{"memlock.sim_ok",
            "the simulator does not pin memory, so this limit does not matter for it",
            "模拟器不锁定内存，这个限额对它没有影响"},
    Message{"rxe.loaded", "Soft-RoCE (rdma_rxe) is loaded", "Soft-RoCE（rdma_rxe）已加载"},
    Message{"rxe.available", "Soft-RoCE (rdma_rxe) can be loaded on this kernel ({})",
            "当前内核（{}）可以加载 Soft-RoCE（rdma_rxe）"},
    Message{"rxe.fix_load",
            "`modprobe rdma_rxe`, then `rdma link add rxe0 type rxe netdev IFACE`; `rdma link` "
            "shows the result",
            "`modprobe rdma_rxe`，再 `rdma link add rxe0 type rxe netdev IFACE`；用 `rdma link` "
            "查看结果"},
    Message{
        "rxe.missing",
        "this kernel ({}) has no rdma_rxe module (typical of containers and CI runners): Soft-RoCE "
        "needs a kernel built with CONFIG_RDMA_RXE",
        "当前内核（{}）没有 rdma_rxe 模块（容器和 CI 环境常见）：Soft-RoCE 需要启用了 "
        "CONFIG_RDMA_RXE 的内核"},
    Message{"rxe.fix_vm",
            "use the simulator, or run real Soft-RoCE in a VM with a Debian kernel (see the docs, "
            "chapter 2)",
            "使用模拟器，或在运行 Debian 内核的虚拟机中使用真实的 Soft-RoCE（见文档第 2 章）"},
    Message{"fw.mentions",
            "the firewall ruleset mentions UDP port 4791 (RoCEv2): make sure it does not drop it",
            "防火墙规则中出现了 UDP 4791 端口（RoCEv2）：请确认它没有被丢弃"},
    Message{"fw.hint",
            "RoCEv2 runs over UDP port 4791: a firewall between the hosts must let it through",
            "RoCEv2 使用 UDP 4791 端口：两台主机之间的防火墙必须放行它"},
    Message{"fw.fix", "check with `nft list ruleset | grep 4791` (or iptables -S)",
            "用 `nft list ruleset | grep 4791`（或 iptables -S）检查"},
    Message{"limits.title", "{}: the limits the labs depend on", "{}：实验所依赖的设备限制"},
    Message{"limits.inline",
            "max_inline_data {}: the largest value ibv_create_qp accepted (IBV_SEND_INLINE copies "
            "up to this many bytes into the work request)",
            "max_inline_data {}：ibv_create_qp 接受的最大值（IBV_SEND_INLINE 最多把这么多字节"
            "直接复制进工作请求）"},
    Message{"limits.no_inline", "max_inline_data 0: this device has no inline data",
            "max_inline_data 0：该设备不支持内联数据"},
    Message{"limits.cq", "max_cq {0}, max_cqe {1}, max_qp_wr {2}, max_sge {3}",
            "max_cq {0}，max_cqe {1}，max_qp_wr {2}，max_sge {3}"},
    Message{"limits.no_limit", "no limit", "无限制"},
    Message{"limits.srq", "max_srq {0}, max_srq_wr {1}: shared receive queues are supported",
            "max_srq {0}，max_srq_wr {1}：支持共享接收队列（SRQ）"},
    Message{"limits.no_srq", "max_srq 0: this device has no shared receive queue (SRQ)",
            "max_srq 0：该设备没有共享接收队列（SRQ）"},
    Message{"limits.fix_srq", "the SRQ lab needs a device with max_srq > 0 (rxe has it)",
            "SRQ 实验需要 max_srq > 0 的设备（rxe 支持）"},
    Message{"limits.moderation",
            "CQ moderation: up to {0} completions or {1} µs per event (ibv_modify_cq)",
            "CQ 事件合并：每个事件最多 {0} 个工作完成或 {1} µs（ibv_modify_cq）"},
    Message{"limits.no_moderation",
            "no CQ moderation: max_cq_count and max_cq_period are 0, ibv_modify_cq is refused",
            "不支持 CQ 事件合并：max_cq_count 和 max_cq_period 为 0，ibv_modify_cq 会被拒绝"},
    Message{"state.ACTIVE", "ACTIVE", "ACTIVE（活动）"},
    Message{"state.DOWN", "DOWN", "DOWN（断开）"},
    Message{"state.INIT", "INIT", "INIT（初始化）"},
    Message{"state.ARMED", "ARMED", "ARMED（就绪）"},
    Message{"state.other", "state {}", "状态 {}"},
};
consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

std::string phys_state(std::uint8_t s) {
  switch (s) {
    case 1: return i18n::tr(M("phys.sleep"));
    case 2: return i18n::tr(M("phys.polling"));
    case 3: return i18n::tr(M("phys.disabled"));
    case 4: return i18n::tr(M("phys.training"));
    case 5: return i18n::tr(M("phys.up"));
    case 6: return i18n::tr(M("phys.recovery"));
    case 7: return i18n::tr(M("phys.test"));
    default: return i18n::tr(M("phys.other"), static_cast<int>(s));
  }
}

/// "4X EDR (25.0 Gb/s per lane)": the width and speed encodings of
/// ibv_port_attr (IBTA PortInfo LinkWidthActive, LinkSpeedActive and its
/// extensions), the per-lane rates as ibv_devinfo prints them.
std::string ib_link(std::uint8_t width, std::uint8_t speed) {
  const char* w = width == 1    ? "1X"
                  : width == 2  ? "4X"
                  : width == 4  ? "8X"
                  : width == 8  ? "12X"
                  : width == 16 ? "2X"
                                : nullptr;
  const char* s = nullptr;
  const char* rate = nullptr;
  switch (speed) {
    case 1: s = "SDR", rate = "2.5"; break;
    case 2: s = "DDR", rate = "5.0"; break;
    case 4: s = "QDR", rate = "10.0"; break;
    case 8: s = "FDR10", rate = "10.0"; break;
    case 16: s = "FDR", rate = "14.0"; break;
    case 32: s = "EDR", rate = "25.0"; break;
    case 64: s = "HDR", rate = "50.0"; break;
    case 128: s = "NDR", rate = "100.0"; break;
    default: break;
  }
  if (w == nullptr || s == nullptr) return i18n::tr(M("link.unknown"));
  return i18n::tr(M("link.rate"), w, s, rate);
}

std::string port_state(ibv_port_state s) {
  switch (s) {
    case IBV_PORT_ACTIVE: return i18n::tr(M("state.ACTIVE"));
    case IBV_PORT_DOWN: return i18n::tr(M("state.DOWN"));
    case IBV_PORT_INIT: return i18n::tr(M("state.INIT"));
    case IBV_PORT_ARMED: return i18n::tr(M("state.ARMED"));
    default: return i18n::tr(M("state.other"), static_cast<int>(s));
  }
}

}  // namespace

std::span<const i18n::Message> doctor_catalog() noexcept {
  return kCatalog;
}

std::uint32_t probe_max_inline_data(Context& ctx, std::uint32_t ceiling) {
  auto pd = ctx.alloc_pd();
  auto cq = ctx.create_cq(2);
  const auto accepted = [&](std::uint32_t bytes) {
    QpInitAttrs a;
    a.send_cq = a.recv_cq = cq.get();
    a.max_send_wr = a.max_recv_wr = 1;
    a.max_inline_data = bytes;
    try {
      (void)pd->create_qp(a);
      return true;
    } catch (const VerbsError&) {
      return false;
    }
  };
  if (!accepted(0)) check_rc(EINVAL, "ibv_create_qp", ErrorContext{ctx.info().name, 0, 0, {}});
  if (accepted(ceiling)) return ceiling;
  // accepted(lo) and !accepted(hi): the answer lies in [lo, hi).
  std::uint32_t lo = 0;
  std::uint32_t hi = ceiling;
  while (hi - lo > 1) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    (accepted(mid) ? lo : hi) = mid;
  }
  return lo;
}

DoctorInputs probe_system(Backend& backend, std::optional<int> gid_index) {
  DoctorInputs in;
  try {
    for (const DeviceInfo& d : backend.devices()) {
      DeviceReport r;
      r.info = d;
      try {
        auto ctx = backend.open(d.name);
        const DeviceAttrs attrs = ctx->query_device();
        r.attrs = attrs;
        // Every port of the device (a ConnectX-3 has two on one device).
        for (std::uint8_t port = 1; port <= std::max<std::uint8_t>(attrs.phys_port_cnt, 1);
             ++port) {
          PortReport p;
          p.port = port;
          p.info = ctx->query_port(port);
          p.gids = ctx->gid_table(port);
          p.chosen_gid = choose_gid(p.gids, gid_index);
          for (const auto& g : p.gids)
            if (!g.netdev.empty()) p.netdev = g.netdev;
          r.ports.push_back(std::move(p));
        }
        r.max_inline_data = probe_max_inline_data(*ctx);
      } catch (const VerbsError& e) {
        r.error = e.report();
      }
      in.devices.push_back(std::move(r));
    }
  } catch (const std::exception&) {
    // No provider library or no uverbs: the same as no device.
  }
  rlimit rl{};
  if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) in.memlock = rl.rlim_cur;
  utsname u{};
  if (uname(&u) == 0) in.kernel_release = u.release;
  std::error_code ec;
  in.rxe_module_loaded = fs::exists("/sys/module/rdma_rxe", ec);
  const fs::path rxe_dir =
      fs::path("/lib/modules") / in.kernel_release / "kernel/drivers/infiniband/sw/rxe";
  if (fs::is_directory(rxe_dir, ec))
    for (const auto& e : fs::directory_iterator(rxe_dir, ec))
      if (e.path().filename().string().starts_with("rdma_rxe.ko")) in.rxe_module_available = true;
  // The nftables ruleset, when we may read it (root). Read-only.
  if (FILE* f = ::popen("nft list ruleset 2>/dev/null", "r"); f != nullptr) {
    char line[512];
    while (std::fgets(line, sizeof line, f) != nullptr) {
      in.firewall_readable = true;
      if (std::string_view(line).find("4791") != std::string_view::npos)
        in.firewall_mentions_4791 = true;
    }
    ::pclose(f);
  }
  return in;
}

std::vector<CheckResult> run_doctor(const DoctorInputs& in, const DoctorOptions& opt) {
  std::vector<CheckResult> out;
  const bool have_devices = !in.devices.empty();
  const bool wants_verbs =
      opt.backend == BackendChoice::Verbs || (opt.backend == BackendChoice::Auto && have_devices);

  // Devices.
  CheckResult dev{"devices", CheckStatus::Ok, {}, {}, {}};
  if (opt.backend == BackendChoice::Sim) {
    dev.title = i18n::tr(M("dev.sim"));
  } else if (!have_devices) {
    dev.status = opt.backend == BackendChoice::Verbs ? CheckStatus::Fail : CheckStatus::Info;
    dev.title = opt.backend == BackendChoice::Verbs ? i18n::tr(M("dev.none_verbs"))
                                                    : i18n::tr(M("dev.none_auto"));
    dev.fix = in.rxe_module_available || in.rxe_module_loaded ? i18n::tr(M("dev.fix_rxe"))
                                                              : i18n::tr(M("rxe.fix_vm"));
    if (opt.backend == BackendChoice::Verbs) dev.details.push_back(i18n::tr(M("dev.fix_sim")));
  } else {
    dev.title = i18n::tr(M("dev.found"), in.devices.size());
    for (const auto& d : in.devices) {
      dev.details.push_back(
          i18n::tr(M("dev.line"), d.info.name, d.info.transport, d.info.node_guid));
      if (!d.error.empty()) {
        dev.status = CheckStatus::Fail;
        dev.details.push_back(i18n::tr(M("dev.open_failed"), d.info.name, d.error));
      }
    }
  }
  out.push_back(std::move(dev));

  // Ports and GIDs, per device.
  if (opt.backend != BackendChoice::Sim) {
    for (const auto& d : in.devices) {
      // A device with a port up works: its other ports being down (a second
      // port without a cable) is worth a warning, not a failure.
      const bool any_active = std::any_of(d.ports.begin(), d.ports.end(), [](const PortReport& p) {
        return p.info.state == IBV_PORT_ACTIVE;
      });
      for (const auto& p : d.ports) {
        CheckResult port{"ports", CheckStatus::Ok, i18n::tr(M("port.ok")), {}, {}};
        const bool eth = p.info.link_layer == IBV_LINK_LAYER_ETHERNET;
        port.details.push_back(
            i18n::tr(M("port.line"), d.info.name, p.port, port_state(p.info.state),
                     mtu_bytes(p.info.active_mtu), mtu_bytes(p.info.max_mtu),
                     eth ? "Ethernet (RoCE)" : "InfiniBand",
                     p.netdev.empty() ? std::string() : i18n::tr(M("port.netdev"), p.netdev)));
        if (!eth)
          port.details.push_back(i18n::tr(
              M("port.ib_line"), d.info.name, p.port, p.info.lid, p.info.lmc, p.info.sm_lid,
              ib_link(p.info.active_width, p.info.active_speed), phys_state(p.info.phys_state)));
        if (p.info.state != IBV_PORT_ACTIVE) {
          port.status = CheckStatus::Fail;
          // On InfiniBand the logical state says who has not done its part
          // yet: the subnet manager (INIT, ARMED) or the link (DOWN).
          const auto say = [&](const i18n::Message& title, const i18n::Message& fix) {
            port.title = i18n::tr(title, d.info.name, p.port);
            port.fix = i18n::tr(fix);
          };
          if (eth)
            say(M("port.down"), M("port.fix_down"));
          else if (p.info.state == IBV_PORT_INIT)
            say(M("port.ib_init"), M("port.fix_sm"));
          else if (p.info.state == IBV_PORT_ARMED)
            say(M("port.ib_armed"), M("port.fix_armed"));
          else if (p.info.phys_state == 2)
            say(M("port.ib_polling"), M("port.fix_polling"));
          else if (p.info.phys_state == 3)
            say(M("port.ib_disabled"), M("port.fix_disabled"));
          else
            say(M("port.down"), M("port.fix_polling"));
          if (any_active) port.status = CheckStatus::Warn;
        }
        out.push_back(std::move(port));
        if (p.info.state != IBV_PORT_ACTIVE && any_active) continue;

        // An InfiniBand port's GIDs are its subnet prefix and port GUID
        // (type IB): shown, with no RoCE GID to look for.
        if (!eth && p.gids.empty()) continue;
        CheckResult gid{
            "gid", CheckStatus::Ok, i18n::tr(M("gid.title"), d.info.name, p.port), {}, {}};
        bool has_v4_v2 = false;
        for (const auto& g : p.gids) {
          has_v4_v2 |= g.type == GidType::RoceV2 && g.is_ipv4_mapped();
          gid.details.push_back(i18n::tr(M("gid.row"), p.chosen_gid == g.index ? "*" : " ", g.index,
                                         g.to_string(), gid_type_name(g.type),
                                         g.netdev.empty() ? std::string() : "  " + g.netdev));
        }
        if (opt.gid_index && !p.chosen_gid) {
          gid.status = CheckStatus::Fail;
          gid.title = i18n::tr(M("gid.bad_index"), *opt.gid_index, d.info.name, p.port);
          gid.fix = i18n::tr(M("gid.fix_index"));
        } else if (eth && !has_v4_v2) {
          gid.status = CheckStatus::Warn;
          gid.title = i18n::tr(M("gid.no_v2"), d.info.name, p.port);
          gid.fix = i18n::tr(M("gid.fix_v2"));
        }
        out.push_back(std::move(gid));
      }
    }
  }

  // Device limits: what labs 14-17 depend on (SRQ, inline data, CQs, CQ
  // moderation), per device.
  for (const auto& d : in.devices) {
    if (opt.backend == BackendChoice::Sim || (!d.attrs && !d.max_inline_data)) continue;
    CheckResult lim{"limits", CheckStatus::Ok, i18n::tr(M("limits.title"), d.info.name), {}, {}};
    if (d.max_inline_data)
      lim.details.push_back(*d.max_inline_data > 0
                                ? i18n::tr(M("limits.inline"), *d.max_inline_data)
                                : i18n::tr(M("limits.no_inline")));
    if (d.attrs) {
      const DeviceAttrs& a = *d.attrs;
      lim.details.push_back(i18n::tr(
          M("limits.cq"), a.max_cq ? std::to_string(*a.max_cq) : i18n::tr(M("limits.no_limit")),
          a.max_cqe, a.max_qp_wr, a.max_sge));
      if (a.max_srq > 0) {
        lim.details.push_back(i18n::tr(M("limits.srq"), a.max_srq, a.max_srq_wr));
      } else {
        lim.details.push_back(i18n::tr(M("limits.no_srq")));
        lim.status = CheckStatus::Warn;
        lim.fix = i18n::tr(M("limits.fix_srq"));
      }
      lim.details.push_back(a.max_cq_count > 0 || a.max_cq_period > 0
                                ? i18n::tr(M("limits.moderation"), a.max_cq_count, a.max_cq_period)
                                : i18n::tr(M("limits.no_moderation")));
    }
    out.push_back(std::move(lim));
  }

  // Memlock: registration pins memory; the simulator pins nothing.
  CheckResult mem{"memlock", CheckStatus::Ok, {}, {}, {}};
  if (!in.memlock) {
    mem.title = i18n::tr(M("memlock.unlimited"));
  } else if (*in.memlock >= kMemlockWanted) {
    mem.title = i18n::tr(M("memlock.value"), *in.memlock / 1024);
  } else {
    mem.title = i18n::tr(M("memlock.low"), *in.memlock / 1024);
    mem.fix = i18n::tr(M("memlock.fix"));
    mem.status = wants_verbs ? CheckStatus::Fail : CheckStatus::Info;
    if (!wants_verbs) mem.details.push_back(i18n::tr(M("memlock.sim_ok")));
  }
  out.push_back(std::move(mem));

  // Soft-RoCE.
  CheckResult rxe{"rxe", CheckStatus::Info, {}, {}, {}};
  if (in.rxe_module_loaded) {
    rxe.status = CheckStatus::Ok;
    rxe.title = i18n::tr(M("rxe.loaded"));
  } else if (in.rxe_module_available) {
    rxe.title = i18n::tr(M("rxe.available"), in.kernel_release);
    rxe.fix = i18n::tr(M("rxe.fix_load"));
  } else {
    rxe.title = i18n::tr(M("rxe.missing"), in.kernel_release);
    rxe.fix = i18n::tr(M("rxe.fix_vm"));
  }
  out.push_back(std::move(rxe));

  // Firewall.
  CheckResult fw{"firewall", CheckStatus::Info, i18n::tr(M("fw.hint")), {}, i18n::tr(M("fw.fix"))};
  if (in.firewall_mentions_4791) {
    fw.status = CheckStatus::Warn;
    fw.title = i18n::tr(M("fw.mentions"));
  }
  out.push_back(std::move(fw));
  return out;
}

int doctor_exit_code(const std::vector<CheckResult>& checks) noexcept {
  for (const auto& c : checks)
    if (c.status == CheckStatus::Fail) return 1;
  return 0;
}

}  // namespace rdmalab::verbs

#include "rdmalab/lab/narrator.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <iostream>

#include "rdmalab/cli/cli.hpp"
#include "rdmalab/lab/command_line.hpp"

namespace rdmalab::lab {
namespace {

using i18n::Message;
constexpr std::array kCatalog{
    Message{"opt.backend", "auto (a device if one exists, else the simulator), verbs or sim",
            "auto（有设备就用设备，否则用模拟器）、verbs 或 sim"},
    Message{"opt.dev", "RDMA device to use (simulator: sim0 or sim1)",
            "使用的 RDMA 设备（模拟器：sim0 或 sim1）"},
    Message{"opt.port", "port of the device", "设备端口号"},
    Message{"opt.peer_dev",
            "real verbs, one process: put the responder's QP on this device and the "
            "requester's on -d (e.g. -d rxe1 --peer-dev rxe0: two Soft-RoCE devices on the two "
            "ends of a link, so the packets cross it and tcpdump sees them)",
            "真实 verbs、单个进程：把响应端的 QP 放在这个设备上，请求端的 QP 放在 -d 指定的设备上"
            "（例如 -d rxe1 --peer-dev rxe0：两个 Soft-RoCE 设备分别位于一条链路的两端，报文真正"
            "经过这条链路，tcpdump 可以抓到）"},
    Message{"opt.gid", "GID index (default: the RoCEv2 GID of an IPv4 address)",
            "GID 索引（默认：IPv4 地址对应的 RoCEv2 GID）"},
    Message{"opt.step", "pause before each step until Enter is pressed",
            "每一步之前暂停，按回车继续"},
    Message{"opt.quiet", "print only the result", "只输出结果"},
    Message{"opt.json", "print the result as JSON", "以 JSON 格式输出结果"},
    Message{"opt.ascii",
            "draw the wire view's ladder with ASCII characters only (for terminals that draw "
            "box-drawing characters two columns wide)",
            "时序图只用 ASCII 字符绘制（适用于把制表符显示为两列宽的终端）"},
    Message{"opt.capture", "where the simulator writes the capture of the wire",
            "模拟器写入线路抓包文件的路径"},
    Message{"opt.seed", "seed of the simulator's random choices (same seed, same capture)",
            "模拟器随机数种子（相同种子得到相同的抓包）"},
    Message{
        "opt.link_layer",
        "simulator: the fabric's link layer: roce (Ethernet with RoCEv2, the default) or ib "
        "(native InfiniBand: LIDs from a subnet manager, LRH and VCRC on every packet)",
        "模拟器：网络的链路层：roce（以太网上的 RoCEv2，默认）或 ib（原生 InfiniBand：子网管理器"
        "分配 LID，每个报文带 LRH 和 VCRC）"},
    Message{"opt.port_mtu",
            "simulator: the MTU of every host's port, the largest path MTU the CM may choose "
            "(default 4096; Soft-RoCE on a 1500-byte Ethernet has 1024)",
            "模拟器：每台主机端口的 MTU，即 CM 可选的最大路径 MTU（默认 4096；1500 字节以太网上的 "
            "Soft-RoCE 为 1024）"},
    Message{"opt.listen", "two hosts: wait for the peer on this TCP port (the passive side)",
            "两台主机：在此 TCP 端口等待对端（被动的一方）"},
    Message{"opt.connect",
            "two hosts: connect to the peer listening at HOST:PORT (the active side)",
            "两台主机：连接在 HOST:PORT 监听的对端（主动的一方）"},
    Message{"opt.mtu", "path MTU: 256, 512, 1024, 2048 or 4096",
            "路径 MTU：256、512、1024、2048 或 4096"},
    Message{"step", "Step {0}: {1}", "第 {0} 步：{1}"},
    Message{"call.who", "{0}: {1}", "{0}：{1}"},
    Message{"press_enter", "(press Enter to continue)", "（按回车继续）"},
    Message{"ok", "OK", "通过"},
    Message{"failed", "FAILED", "未通过"},
    Message{"verdict.ok", "{}: all checks passed", "{}：全部检查通过"},
    Message{"verdict.failed", "{}: some checks failed", "{}：部分检查未通过"},
    Message{"check.line", "  [{0}] {1}", "  [{0}] {1}"},
};
consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

}  // namespace

std::span<const i18n::Message> catalog() noexcept {
  return kCatalog;
}

void add_common_options(CLI::App& app, CommonOptions& o, std::string_view lab_id) {
  app.add_option("--backend", o.backend, i18n::tr(M("opt.backend")))
      ->check(CLI::IsMember({"auto", "verbs", "sim"}));
  app.add_option("-d,--dev", o.device, i18n::tr(M("opt.dev")));
  auto* peer_dev = app.add_option("--peer-dev", o.peer_device, i18n::tr(M("opt.peer_dev")));
  app.add_option("-i,--ib-port", o.ib_port, i18n::tr(M("opt.port")))->check(CLI::Range(1, 255));
  app.add_option("-x,-g,--gid-index", o.gid_index, i18n::tr(M("opt.gid")))
      ->check(CLI::Range(0, 255));
  app.add_flag("--step", o.step, i18n::tr(M("opt.step")));
  app.add_flag("--quiet", o.quiet, i18n::tr(M("opt.quiet")));
  app.add_flag("--json", o.json, i18n::tr(M("opt.json")));
  app.add_flag("--ascii", o.ascii, i18n::tr(M("opt.ascii")));
  o.capture = fmt::format("captures/{}.pcap", lab_id);
  app.add_option("--capture", o.capture, i18n::tr(M("opt.capture")))->capture_default_str();
  app.add_option("--seed", o.seed, i18n::tr(M("opt.seed")))->capture_default_str();
  app.add_option("--port-mtu", o.port_mtu, i18n::tr(M("opt.port_mtu")))
      ->check(CLI::IsMember({256, 512, 1024, 2048, 4096}));
  app.add_option("--link-layer", o.link_layer, i18n::tr(M("opt.link_layer")))
      ->check(CLI::IsMember({"roce", "ib"}))
      ->capture_default_str();
  auto* listen =
      app.add_option("--listen", o.listen, i18n::tr(M("opt.listen")))->check(CLI::Range(1, 65535));
  auto* connect =
      app.add_option("--connect", o.connect, i18n::tr(M("opt.connect")))->excludes(listen);
  // Two processes each have their own device: -d.
  peer_dev->excludes(listen)->excludes(connect);
}

void add_mtu_option(CommandLine& app, int& mtu) {
  app.cli()
      .add_option("-m,--mtu", mtu, i18n::tr(M("opt.mtu")))
      ->check(CLI::IsMember({256, 512, 1024, 2048, 4096}))
      ->capture_default_str();
}

Narrator::Narrator(const CommonOptions& o, std::string lab_id)
    : quiet_(o.quiet),
      json_(o.json),
      pause_(o.step && !o.json),
      ascii_(o.ascii),
      lab_id_(std::move(lab_id)) {
  result_["lab"] = lab_id_;
}

void Narrator::step(std::string_view title) {
  ++step_no_;
  if (!narrating()) return;
  std::cout << "\n" << i18n::tr(M("step"), step_no_, title) << "\n";
  if (pause_) {
    std::cout << i18n::tr(M("press_enter")) << std::flush;
    std::string line;
    std::getline(std::cin, line);
  }
}

void Narrator::call(std::string_view verb_and_args, std::string_view result) {
  if (!narrating()) return;
  std::cout << "  " << verb_and_args;
  if (!result.empty()) std::cout << "\n    -> " << result;
  std::cout << "\n";
}

void Narrator::call(std::string_view who, std::string_view verb_and_args, std::string_view result) {
  call(i18n::tr(M("call.who"), who, verb_and_args), result);
}

void Narrator::field(std::string_view name, std::string_view value, std::string_view why) {
  if (!narrating()) return;
  std::cout << fmt::format("    {:<22} {}", name, value);
  if (!why.empty()) std::cout << "   # " << why;
  std::cout << "\n";
}

void Narrator::say(std::string_view text) {
  if (narrating()) std::cout << "  " << text << "\n";
}

void Narrator::block(std::string_view text) {
  if (!narrating()) return;
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    std::cout << "    " << rest.substr(0, nl) << "\n";
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
}

void Narrator::warn(std::string_view text) {
  if (!json_) std::cerr << text << "\n";
}

void Narrator::check(std::string_view id, std::string_view what, bool ok, std::string_view detail) {
  ok_ = ok_ && ok;
  checks_.push_back({{"id", id}, {"check", what}, {"ok", ok}, {"detail", detail}});
}

int Narrator::finish() {
  result_["ok"] = ok_;
  result_["checks"] = checks_;
  if (json_) {
    std::cout << result_.dump(2) << "\n";
  } else {
    std::cout << "\n";
    for (const auto& c : checks_)
      std::cout << i18n::tr(M("check.line"),
                            c["ok"].get<bool>() ? i18n::tr(M("ok")) : i18n::tr(M("failed")),
                            c["check"].get<std::string>())
                << (c["detail"].get<std::string>().empty() ? ""
                                                           : ": " + c["detail"].get<std::string>())
                << "\n";
    std::cout << (ok_ ? i18n::tr(M("verdict.ok"), lab_id_) : i18n::tr(M("verdict.failed"), lab_id_))
              << "\n";
  }
  return ok_ ? cli::kExitOk : cli::kExitFailure;
}

std::string hex(std::uint64_t v, int width) {
  return width > 0 ? fmt::format("0x{:0{}x}", v, width) : fmt::format("0x{:x}", v);
}

std::string gid_string(const ibv_gid& g) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, g.raw, buf, sizeof buf);
  return buf;
}

}  // namespace rdmalab::lab

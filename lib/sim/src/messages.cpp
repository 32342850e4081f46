// The simulator's user-facing texts, in English and Chinese (the parity test
// checks that every entry exists in both languages). Work-completion
// statuses are described by the verbs library's table (verbs/error.hpp).
#include "rdmalab/sim/messages.hpp"

namespace rdmalab::sim {
namespace {

using i18n::Message;

constexpr std::array kCatalog{
    Message{"capture.close_failed", "could not finish writing the capture: {}",
            "无法写完抓包文件：{}"},
    Message{"topology.line", "topology file, line {}: {}", "拓扑文件第 {} 行：{}"},
    Message{"topology.unknown_statement", "unknown statement '{}' (expected switch, host or link)",
            "未知语句“{}”（应为 switch、host 或 link）"},
    Message{"topology.missing_name", "'{}' needs a name", "“{}”缺少名称"},
    Message{"topology.duplicate_name", "the name '{}' is already used", "名称“{}”已被使用"},
    Message{"topology.bad_option", "'{}' is not a valid option here", "“{}”在这里不是有效的选项"},
    Message{"topology.bad_value", "'{}' is not a valid value for {}", "“{}”不是 {} 的有效取值"},
    Message{"topology.link_ends", "a link joins two names: link A B [options]",
            "link 需要两个名称：link A B [选项]"},
    Message{"topology.unknown_name", "'{}' is not a host or switch defined above",
            "“{}”不是前面定义过的主机或交换机"},
    Message{"topology.bad_link", "a link joins a host to a switch, or two different switches",
            "link 只能连接主机与交换机，或两台不同的交换机"},
    Message{"topology.host_linked", "port {1} of host '{0}' already has its link",
            "主机“{0}”的端口 {1} 已经有链路了"},
    Message{"topology.bad_port",
            "'{}' names no port: a host's port is NAME:P, P from 1 to its ports= count",
            "“{}”不是有效的端口：主机端口写作“NAME:P”，P 从 1 到该主机 ports= 给出的数目"},
    Message{"topology.empty", "no host is defined", "没有定义任何主机"},
    Message{"ib.refused",
            "{} is an Ethernet/RoCE feature and cannot be configured on an InfiniBand fabric "
            "(FabricConfig::link_layer): InfiniBand links are lossless by credit-based flow "
            "control, which the simulator models, and the simulator does not model InfiniBand's "
            "congestion control (FECN/BECN)",
            "{} 是以太网/RoCE 的功能，不能在 InfiniBand 网络（FabricConfig::link_layer）上配置："
            "InfiniBand 链路靠基于信用的流控做到无损（模拟器模拟了它），而 InfiniBand 的拥塞控制"
            "（FECN/BECN）模拟器没有模拟"},
    Message{"ib.vl_refused",
            "SwitchConfig::sl_to_vl maps an SL to VL {}: the simulator's ports have the data VLs "
            "0 .. {}",
            "SwitchConfig::sl_to_vl 把一个 SL 映射到 VL {}：模拟器的端口只有数据 VL 0 .. {}"},
    Message{"ib.buffer_refused",
            "SwitchConfig::ib_vl_buffer_blocks is {}: an InfiniBand port's buffer per VL must "
            "hold the largest packet ({} blocks of 64 bytes) and cannot be advertised beyond {} "
            "blocks",
            "SwitchConfig::ib_vl_buffer_blocks 为 {}：InfiniBand 端口每个 VL 的缓冲区至少要放得下"
            "最大的报文（{} 个 64 字节的块），通告的信用也不能超过 {} 个块"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

}  // namespace

std::span<const i18n::Message> catalog() noexcept {
  return kCatalog;
}

std::string topology_message(std::string_view key, std::string_view a, std::string_view b) {
  for (const Message& m : kCatalog)
    if (m.key == key) return i18n::tr(m, a, b);
  return std::string(key);
}

std::string ib_refused(std::string_view feature) {
  return i18n::tr(M("ib.refused"), feature);
}

std::string ib_buffer_refused(std::uint32_t blocks, std::uint32_t least, std::uint32_t most) {
  return i18n::tr(M("ib.buffer_refused"), blocks, least, most);
}

std::string ib_vl_refused(std::uint32_t vl, std::uint32_t most) {
  return i18n::tr(M("ib.vl_refused"), vl, most);
}

std::string capture_close_failed(std::string_view reason) {
  return i18n::tr(M("capture.close_failed"), reason);
}

}  // namespace rdmalab::sim

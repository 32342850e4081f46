// The rdmalab program's own messages (header-only so the parity test can
// include it).
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::tool {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{"rdmalab.desc", "rdmalab: RDMA teaching toolkit and RoCE protocol explorer",
            "rdmalab：RDMA 教学工具与 RoCE 协议分析器"},
    Message{"doctor.desc",
            "Check this machine for RDMA: devices, ports, GID table, memlock limit, Soft-RoCE, "
            "firewall. Exit status 0 when everything needed is there, 1 otherwise (with the fix), "
            "2 on a wrong command line.",
            "检查本机的 RDMA 环境：设备、端口、GID 表、memlock 限额、Soft-RoCE、防火墙。"
            "所需条件齐全时退出码为 0，否则为 1（并给出修复方法），命令行错误时为 2。"},
    Message{"opt.backend",
            "Which backend the labs will use: auto (a device if present, else the simulator), "
            "verbs or sim",
            "实验将使用的后端：auto（有设备就用设备，否则用模拟器）、verbs 或 sim"},
    Message{"opt.gid", "GID index to check instead of the automatic choice",
            "要检查的 GID 索引（代替自动选择）"},
    Message{"opt.json", "Print the checks as JSON", "以 JSON 格式输出检查结果"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::tool

// An opened RDMA device (ibv_open_device): its ports, its GID table, and the
// factory for PDs and CQs.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rdmalab/verbs/completion_queue.hpp"
#include "rdmalab/verbs/protection_domain.hpp"
#include "rdmalab/verbs/srq.hpp"

namespace rdmalab::verbs {

enum class BackendKind { Verbs, Sim };

struct PortInfo {
  ibv_port_state state = IBV_PORT_NOP;
  ibv_mtu max_mtu = IBV_MTU_1024;
  ibv_mtu active_mtu = IBV_MTU_1024;
  std::uint8_t link_layer = IBV_LINK_LAYER_ETHERNET;
  std::uint16_t lid = 0;
  int gid_table_len = 0;
  // InfiniBand's subnet, as the subnet manager set it up (zero on RoCE):
  std::uint16_t sm_lid = 0;  // where the subnet manager answers
  std::uint8_t lmc = 0;      // LID mask control: 2^lmc LIDs from `lid`
  /// The link under the logical state (IBTA PortInfo PortPhysicalState):
  /// 1 Sleep, 2 Polling (no peer found), 3 Disabled, 4 training, 5 LinkUp,
  /// 6 LinkErrorRecovery, 7 PhyTest; 0 unknown.
  std::uint8_t phys_state = 0;
  /// ibv_port_attr's encodings: width 1, 2, 4, 8, 16 = 1X, 4X, 8X, 12X, 2X;
  /// speed 1 SDR ... 128 NDR (per lane).
  std::uint8_t active_width = 0;
  std::uint8_t active_speed = 0;
};

enum class GidType { IB, RoceV1, RoceV2 };

struct GidEntry {
  int index = 0;
  ibv_gid gid{};
  GidType type = GidType::RoceV2;
  std::string netdev;  // the Ethernet interface behind a RoCE GID, if known

  /// ::ffff:a.b.c.d — the RoCEv2 GID of an IPv4 address.
  [[nodiscard]] bool is_ipv4_mapped() const noexcept;
  /// "::ffff:10.99.0.1", "fe80::...".
  [[nodiscard]] std::string to_string() const;
};

/// "IB", "RoCE v1", "RoCE v2".
[[nodiscard]] std::string_view gid_type_name(GidType t) noexcept;

/// The GID index to use: `requested` when given (and present in the table),
/// else the RoCEv2 entry of an IPv4 address, else any RoCEv2, else RoCEv1,
/// else the first entry. nullopt when the table is empty or `requested` is
/// not in it.
[[nodiscard]] std::optional<int> choose_gid(const std::vector<GidEntry>& table,
                                            std::optional<int> requested);

struct DeviceInfo {
  std::string name;       // "rxe0", "mlx5_0", "sim0"
  std::string node_guid;  // "0200:00ff:fe00:0001"
  std::string transport;  // "InfiniBand", "iWARP", "simulated RoCEv2"
};

/// The device limits the labs depend on (ibv_query_device_ex).
struct DeviceAttrs {
  /// Completion queues a process may create; nullopt when there is no limit
  /// (the simulator).
  std::optional<int> max_cq;
  int max_cqe = 0;    // entries of one CQ
  int max_qp_wr = 0;  // work requests of one queue
  int max_sge = 0;
  int max_srq = 0;  // shared receive queues; 0: the device has none
  int max_srq_wr = 0;
  /// CQ moderation (ibv_modify_cq): the largest completion count and period
  /// (µs); both 0 when the device cannot moderate (rxe).
  std::uint16_t max_cq_count = 0;
  std::uint16_t max_cq_period = 0;
  /// Ports of the device (phys_port_cnt), numbered from 1.
  std::uint8_t phys_port_cnt = 1;
};

class Context {
 public:
  virtual ~Context() = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  [[nodiscard]] virtual const DeviceInfo& info() const noexcept = 0;
  [[nodiscard]] virtual BackendKind kind() const noexcept = 0;
  /// ibv_query_port. Throws VerbsError.
  [[nodiscard]] virtual PortInfo query_port(std::uint8_t port = 1) const = 0;
  /// The valid GID table entries with their types. Throws VerbsError.
  [[nodiscard]] virtual std::vector<GidEntry> gid_table(std::uint8_t port = 1) const = 0;
  /// ibv_alloc_pd. Throws VerbsError.
  [[nodiscard]] virtual std::unique_ptr<ProtectionDomain> alloc_pd() = 0;
  /// ibv_create_cq. Throws VerbsError.
  [[nodiscard]] virtual std::unique_ptr<CompletionQueue> create_cq(int cqe) = 0;
  /// ibv_create_cq on a completion channel: its events (after
  /// CompletionQueue::req_notify) are read from `channel`, which must
  /// outlive the CQ. Throws VerbsError.
  [[nodiscard]] virtual std::unique_ptr<CompletionQueue> create_cq(int cqe,
                                                                   CompChannel& channel) = 0;
  /// ibv_create_comp_channel. Throws VerbsError.
  [[nodiscard]] virtual std::unique_ptr<CompChannel> create_comp_channel() = 0;
  /// ibv_query_device_ex: the limits above. Throws VerbsError.
  [[nodiscard]] virtual DeviceAttrs query_device() const = 0;

  /// ibv_get_async_event, then ibv_ack_async_event on it: the next
  /// asynchronous event of the device (an SRQ's limit reached, a QP's fatal
  /// error, a port going down), or nullopt when none came within `timeout`.
  /// Real devices wait on the context's async_fd; the simulator answers from
  /// its event queue without waiting (its events happen while a CQ is
  /// polled). Throws VerbsError.
  [[nodiscard]] virtual std::optional<AsyncEvent> get_async_event(
      std::chrono::milliseconds timeout) = 0;

 protected:
  Context() = default;
};

}  // namespace rdmalab::verbs

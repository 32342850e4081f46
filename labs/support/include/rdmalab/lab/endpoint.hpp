// The set-up every lab repeats, narrated call by call: choose the backend,
// open a device, create PD, MR, CQ and QP, tell the peer who we are, and walk
// the QP through RESET -> INIT -> RTR -> RTS. Lab 01 explains each of these
// steps; later labs call them and spend their words on their own topic.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "rdmalab/lab/narrator.hpp"
#include "rdmalab/verbs/backend.hpp"
#include "rdmalab/verbs/oob.hpp"
#include "rdmalab/verbs/sim_backend.hpp"

namespace rdmalab::lab {

/// The first PSNs the labs give the requester and the responder when they
/// choose them (out of band). Real programs pick random ones; fixed ones make
/// a capture easy to read.
inline constexpr std::uint32_t kRequesterFirstPsn = 0x000100;
inline constexpr std::uint32_t kResponderFirstPsn = 0x000200;

/// The byte a one-sided lab fills the passive side's buffer with, so that it
/// can check afterwards which bytes the operation touched.
inline constexpr std::uint8_t kUntouchedFill = 0xEE;

/// One side of a connection. Members are declared in the order they are
/// created, so they are destroyed in reverse: QP before CQ, MR before PD.
struct Endpoint {
  std::string role;  // "sender", "receiver", ... in the user's language
  std::unique_ptr<verbs::Context> ctx;
  std::unique_ptr<verbs::ProtectionDomain> pd;
  std::unique_ptr<verbs::CompletionQueue> cq;
  std::unique_ptr<verbs::QueuePair> qp;
  std::vector<std::uint64_t> storage;  // 8-byte aligned, as atomics need
  std::unique_ptr<verbs::MemoryRegion> mr;
  int gid_index = 0;
  ibv_gid gid{};
  /// The port's link layer is InfiniBand: its packets are addressed by the
  /// LID the subnet manager gave it (a GRH only with -g).
  bool infiniband = false;
  std::uint16_t lid = 0;
  std::uint16_t sm_lid = 0;
  std::uint32_t first_psn = 0;

  /// Takes `base`'s port address (GID, LID): another QP on the same port.
  void same_port_as(const Endpoint& base) noexcept {
    gid_index = base.gid_index;
    gid = base.gid;
    infiniband = base.infiniband;
    lid = base.lid;
    sm_lid = base.sm_lid;
  }

  [[nodiscard]] std::uint8_t* buf() noexcept {
    return reinterpret_cast<std::uint8_t*>(storage.data());
  }
  [[nodiscard]] std::size_t size() const noexcept { return storage.size() * 8; }
  /// An SGE over [offset, offset+len) of this endpoint's buffer.
  [[nodiscard]] ibv_sge sge(std::size_t offset, std::uint32_t len) noexcept;
};

/// The backend for --backend, with the simulator capturing to --capture.
/// Prints the one-line choice. Creates the capture's folder.
struct Environment {
  std::unique_ptr<verbs::Backend> backend;
  bool simulated = false;
  /// An in-band connection's CM channel and ids (cm_connect.hpp), kept as
  /// long as the run: the endpoints' QPs are destroyed before them.
  std::shared_ptr<void> cm;
  /// The simulator's fabric (nullptr on real verbs), for link knobs.
  [[nodiscard]] sim::Fabric* fabric() const noexcept;
  /// The simulated link from one host to another (nullptr on real verbs).
  [[nodiscard]] sim::LinkConfig* link(std::string_view from, std::string_view to) const;
};
[[nodiscard]] Environment open_environment(Narrator& n, const CommonOptions& o,
                                           verbs::SimBackendOptions sim = {});

struct EndpointSpec {
  std::string device;         // "" = first device; on the simulator sim0/sim1
  std::size_t buffer = 4096;  // bytes
  int access = IBV_ACCESS_LOCAL_WRITE;
  int cqe = 16;
  std::uint32_t max_wr = 16;
  ibv_qp_type type = IBV_QPT_RC;
};

/// The address a capture shows for e's port, as rdmapcap prints it: its
/// LID on InfiniBand ("LID 2"), else the IP address its GID holds.
[[nodiscard]] std::string wire_address(const Endpoint& e);

/// Chooses the GID of e's open device (-x, or the RoCEv2 GID of an IPv4
/// address) into e.gid_index and e.gid and says which; a UsageError when
/// there is none. Also reads the port's link layer and LID (e.infiniband,
/// e.lid, e.sm_lid): on InfiniBand it says the LID instead.
void choose_gid(Narrator& n, Endpoint& e, const CommonOptions& o);

/// Opens the device, shows its port and chosen GID, and creates PD, MR, CQ
/// and QP, narrating each verb and what it returned.
void open_endpoint(Narrator& n, Environment& env, Endpoint& e, const EndpointSpec& spec,
                   const CommonOptions& o);

/// What this endpoint tells its peer out of band (with VA/rkey/length of its
/// buffer when `one_sided`).
[[nodiscard]] verbs::ConnInfo conn_info(const Endpoint& e, int mtu, bool one_sided);

/// Where one process puts its requester and its responder: on the simulator
/// hosts sim1 and sim0; on real verbs -d for both (two QPs on one device),
/// or -d and --peer-dev (two devices, e.g. two rxe on the ends of one link).
[[nodiscard]] std::string requester_device(const Environment& env, const CommonOptions& o);
[[nodiscard]] std::string responder_device(const Environment& env, const CommonOptions& o);

/// Opens a requester and a responder endpoint on requester_device() and
/// responder_device(). The specs' device fields are filled in here.
void open_pair(Narrator& n, Environment& env, Endpoint& requester, Endpoint& responder,
               EndpointSpec requester_spec, EndpointSpec responder_spec, const CommonOptions& o);

/// Prints the out-of-band message this endpoint sends its peer and returns it.
verbs::ConnInfo show_exchange(Narrator& n, const Endpoint& e, int mtu, bool one_sided);

struct ConnectSpec {
  int mtu = 1024;
  std::uint8_t timeout = 14;
  std::uint8_t retry_cnt = 7;
  std::uint8_t rnr_retry = 7;
  std::uint8_t min_rnr_timer = 14;  // 1.28 ms
  std::uint8_t max_rd_atomic = 1;
  std::uint8_t max_dest_rd_atomic = 1;
  /// The IP traffic class of the QP's packets (DSCP << 2; the NIC sets the
  /// ECN bits): 0 by default, 26 << 2 for the RoCE class of lab 18's switches.
  std::uint8_t traffic_class = 0;
  /// The service level of the QP's packets (ah_attr.sl): on InfiniBand the
  /// LRH's SL, which the simulator's ports map to the VL of the same number.
  std::uint8_t sl = 0;
};

/// RESET -> INIT -> RTR -> RTS toward the peer described by `peer` (what it
/// sent out of band), printing each transition.
void connect_rc(Narrator& n, Endpoint& me, const verbs::ConnInfo& peer, const ConnectSpec& c,
                const CommonOptions& o);

/// Connects two endpoints of this process to each other: shows the
/// out-of-band message of each (b's buffer VA/rkey too when `b_one_sided`),
/// then walks a's QP and b's QP to RTS. First PSNs must be set beforehand.
void connect_pair(Narrator& n, Endpoint& a, Endpoint& b, const ConnectSpec& c,
                  const CommonOptions& o, bool b_one_sided = false);

/// A chain of `count` RDMA work requests of `size` bytes each: the i-th reads
/// or writes slice i of the local buffer and slice i at `remote_va`. Every
/// WR is signalled; wr_id is i + 1. The SGEs live as long as the chain.
struct WrChain {
  WrChain(Endpoint& local, std::uint32_t count, std::uint32_t size, ibv_wr_opcode op,
          std::uint64_t remote_va, std::uint32_t rkey);
  [[nodiscard]] ibv_send_wr* head() noexcept { return wrs.data(); }
  std::vector<ibv_sge> sges;
  std::vector<ibv_send_wr> wrs;
};

/// Polls until `count` completions (or the timeout), printing each.
[[nodiscard]] std::vector<ibv_wc> poll_and_show(
    Narrator& n, Endpoint& e, std::size_t count,
    std::chrono::milliseconds timeout = std::chrono::seconds(30));

/// One completion in one line (and the full report when it failed).
void show_wc(Narrator& n, const std::string& who, const ibv_wc& wc);

/// A completion as JSON for the --json result.
[[nodiscard]] nlohmann::json wc_json(const std::string& side, const ibv_wc& wc);

/// Prints the "Things to try" list.
void suggest(Narrator& n, const std::vector<std::string>& lines);

/// The messages of this module, for the parity test.
[[nodiscard]] std::span<const i18n::Message> endpoint_catalog() noexcept;

}  // namespace rdmalab::lab

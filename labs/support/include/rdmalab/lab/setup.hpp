// The connection set-up the basic labs share, in one call: open the
// environment, open whichever endpoints this process plays, connect them the
// way the run asks (one process, a TCP peer with --listen/--connect, or
// rdma_cm with --cm, actively or passively) and, for a one-sided lab, learn
// where the passive side's buffer is. Each step is narrated as the labs
// narrate it, under the lab's own step titles; the lab's main.cpp then tells
// the verbs story of its one operation.
//
// The two sides are named by what they do on the wire: the active side
// (requester: sender, writer, reader) and the passive side (responder:
// receiver, target, source). In one process both are opened; with
// --connect only the active side, with --listen only the passive side.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "rdmalab/lab/buffer_info.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/verbs/oob.hpp"

namespace rdmalab::lab {

class Setup;

/// What a lab's set-up needs: its step titles and notes (in the user's
/// language), the two sides' resources, the connection parameters, and a few
/// hooks where a lab says or does something of its own in between.
struct SetupSpec {
  struct Steps {
    std::string backend, resources, cm, info, exchange, connect;
  } steps;
  /// Said right after the step's title, when not empty.
  std::string exchange_note, connect_note, info_note;

  std::string active_role, passive_role;  // "writer", "target", ... (translated)
  EndpointSpec active, passive;           // the devices are filled in by Setup
  ConnectSpec connect;
  /// The passive side's connection parameters, when they differ (out of band only).
  std::optional<ConnectSpec> passive_connect;
  std::uint32_t active_first_psn = kRequesterFirstPsn;
  std::uint32_t passive_first_psn = kResponderFirstPsn;

  /// --cm: connect in band through rdma_cm instead of out of band.
  bool cm = false;
  /// The active side needs the passive side's buffer (VA, rkey, length): in
  /// the out-of-band message, or with --cm in a SEND after connecting.
  bool one_sided = false;
  /// Out of band between two processes: the passive side says "ready" once
  /// its QP is at RTR, and the active side waits for it, before Setup returns.
  /// Without it the lab calls say_ready() itself (after posting receives).
  bool ready_after_connect = false;
  /// One process, out of band: both sides' messages are shown in the exchange
  /// step instead of in the connect step.
  bool show_pair_in_exchange_step = false;
  /// With --cm on the passive side alone, the completion of the buffer SEND is
  /// left on the CQ for the lab to poll with its own.
  bool leave_info_completion = false;

  std::function<void(Setup&)> after_environment;  // before the resources step
  std::function<void(Setup&)> after_open;         // the endpoints are open
  std::function<void(Setup&)> before_accept;      // --cm, passive side alone
  std::function<void(Setup&)> after_cm;           // --cm, connected
};

class Setup {
 public:
  /// Runs the whole set-up (see the top of this file). Throws what the
  /// verbs, the CM or the peer channel throw.
  Setup(Narrator& n, const CommonOptions& o, const SetupSpec& spec);
  Setup(const Setup&) = delete;
  Setup& operator=(const Setup&) = delete;

  [[nodiscard]] bool plays_active() const noexcept { return role != Role::Passive; }
  [[nodiscard]] bool plays_passive() const noexcept { return role != Role::Active; }
  [[nodiscard]] bool one_process() const noexcept { return role == Role::Both; }
  /// The endpoint of this process (the active one in one process).
  [[nodiscard]] Endpoint& mine() noexcept { return plays_active() ? active : passive; }

  /// Between two processes out of band: the passive side says "ready", the
  /// active side waits for it. Does nothing otherwise.
  void say_ready();
  /// Between two processes out of band: the active side says "done", the
  /// passive side waits for it. Does nothing otherwise.
  void say_done();
  /// With --cm: the active side disconnects (DREQ), the passive side alone
  /// waits for it and answers. Does nothing otherwise.
  void disconnect();

  Narrator& n;
  const CommonOptions& o;
  const bool cm;
  const Role role;
  // Declared in the order they are created: destroyed in reverse, the QPs
  // and MRs before the environment.
  Environment env;
  std::optional<verbs::OobChannel> peer;
  Endpoint active, passive;
  BufferInfo info_in, info_out;
  /// What the peer said about itself out of band; for a one-sided lab the
  /// passive side's buffer (VA, rkey, length) as the active side knows it.
  verbs::ConnInfo remote;
};

}  // namespace rdmalab::lab

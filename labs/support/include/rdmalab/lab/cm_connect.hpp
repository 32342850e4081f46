// Connecting two endpoints in band, with the RDMA Communication Manager
// (rdma_cm) instead of an out-of-band exchange: the passive side listens,
// the active side resolves the address and route and connects, and each QP
// goes to RTS with the attributes the CM derived from the handshake
// (rdma_init_qp_attr). On the simulator the REQ, REP and RTU MADs are in the
// capture, before the first data packet.
#pragma once

#include <functional>
#include <span>
#include <string>

#include "rdmalab/lab/endpoint.hpp"

namespace rdmalab::lab {

/// The TCP-like rdma_cm port the labs listen on.
inline constexpr std::uint16_t kCmPort = 7471;

/// Connects `active` (the requester) to `passive` through the CM, narrating
/// every call, event and applied QP transition. Both endpoints must be open
/// (open_pair) on the devices whose IPv4 RoCEv2 GIDs name them. Throws
/// VerbsError, or std::runtime_error when the handshake ends otherwise than
/// ESTABLISHED (rejected, unreachable), with the event named.
/// `c` gives retry_cnt and the active side's rnr_retry (sent in the REQ and
/// the REP); the path MTU, PSNs and timeout are the CM's.
void connect_pair_cm(Narrator& n, Environment& env, Endpoint& active, Endpoint& passive,
                     const ConnectSpec& c);

/// The passive side alone (the active side is another process): listens on
/// the endpoint's IPv4 address and `port`, waits up to two minutes for the
/// request, moves the QP to RTS, calls `before_accept` (post the receives
/// there: the peer may send as soon as it has the REP), accepts and waits
/// for ESTABLISHED.
void accept_cm(Narrator& n, Environment& env, Endpoint& passive, std::uint16_t port,
               const std::function<void()>& before_accept, const ConnectSpec& c);

/// The active side alone: resolves host:port from the endpoint's address,
/// connects, moves the QP to RTS and establishes.
void connect_cm(Narrator& n, Environment& env, Endpoint& active, const std::string& host,
                std::uint16_t port, const ConnectSpec& c);

/// The passive side of a two-process connection waits for the peer's DREQ
/// (DISCONNECTED) and answers with its own rdma_disconnect (the DREP).
void await_disconnect_cm(Narrator& n, Environment& env, const Endpoint& passive);

/// The active side of connect_pair_cm disconnects (DREQ/DREP on the wire);
/// both sides see DISCONNECTED. Does nothing without a CM connection.
void disconnect_cm(Narrator& n, Environment& env, const Endpoint& active);

/// The messages of this module, for the parity test.
[[nodiscard]] std::span<const i18n::Message> cm_connect_catalog() noexcept;

}  // namespace rdmalab::lab

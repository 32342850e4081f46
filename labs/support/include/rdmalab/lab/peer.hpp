// Two processes, two hosts: the lab's roles split with --listen / --connect.
//
// Without them a lab plays both sides in one process (the simulator's two
// hosts, or two QPs on one real device). With --listen PORT the process is the
// passive side (receiver, target, responder) and waits for its peer over TCP;
// with --connect HOST:PORT it is the active side. The peers exchange the
// out-of-band connection message (verbs::ConnInfo) and then a few one-word
// lines ("ready", "done ok") so that each knows when the other is.
#pragma once

#include <optional>
#include <string>

#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/verbs/oob.hpp"

namespace rdmalab::lab {

enum class Role { Both, Active, Passive };

/// The role this process plays. Throws verbs::UsageError (in the user's
/// language) when --listen/--connect are combined with each other or with the
/// simulator, whose two hosts always live in one process.
[[nodiscard]] Role role_of(const CommonOptions& o);

/// Opens the TCP channel to the peer (waits up to a minute for it), or
/// returns nullopt in the one-process mode.
[[nodiscard]] std::optional<verbs::OobChannel> open_peer(Narrator& n, const CommonOptions& o);

/// Sends this endpoint's connection message and receives the peer's, showing
/// both.
[[nodiscard]] verbs::ConnInfo exchange_with_peer(Narrator& n, verbs::OobChannel& ch,
                                                 const Endpoint& me, int mtu, bool one_sided);

/// Sends one word to the peer / waits for it (throws verbs::OobError on
/// anything else, or after the timeout).
void tell_peer(verbs::OobChannel& ch, std::string_view word);
void await_peer(verbs::OobChannel& ch, std::string_view word);

/// For labs that cannot split their roles yet: throws verbs::UsageError when
/// --listen or --connect was given.
void require_one_process(const CommonOptions& o);

/// The messages of this module, for the parity test.
[[nodiscard]] std::span<const i18n::Message> peer_catalog() noexcept;

}  // namespace rdmalab::lab

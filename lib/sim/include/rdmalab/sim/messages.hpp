// The simulator's user-facing texts, in English and Chinese. (A failed work
// completion is explained by rdmalab::verbs::describe_wc and its table.)
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::sim {

/// "could not finish writing the capture: ..." (the fabric's destructor
/// prints it to stderr rather than throwing).
[[nodiscard]] std::string capture_close_failed(std::string_view reason);

/// The message `key` ("topology.*") with its arguments (unused ones are
/// ignored), in the user's language.
[[nodiscard]] std::string topology_message(std::string_view key, std::string_view a = {},
                                           std::string_view b = {});

/// Why `feature` (PFC, ECN marking, DCQCN, ...: a configuration's name)
/// cannot be configured on an InfiniBand fabric, in the user's language.
[[nodiscard]] std::string ib_refused(std::string_view feature);

/// Why SwitchConfig::ib_vl_buffer_blocks = `blocks` is refused: it must be
/// within [least, most].
[[nodiscard]] std::string ib_buffer_refused(std::uint32_t blocks, std::uint32_t least,
                                            std::uint32_t most);

/// Why SwitchConfig::sl_to_vl naming VL `vl` is refused (VLs 0 .. most).
[[nodiscard]] std::string ib_vl_refused(std::uint32_t vl, std::uint32_t most);

/// This module's messages, for the catalog parity test.
[[nodiscard]] std::span<const i18n::Message> catalog() noexcept;

}  // namespace rdmalab::sim

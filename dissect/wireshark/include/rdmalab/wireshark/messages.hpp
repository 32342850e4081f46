// The Wireshark plugin's messages: field names, tree labels, preference texts.
#pragma once

#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::wireshark {

/// The plugin's message catalog, for the parity test.
[[nodiscard]] std::span<const i18n::Message> catalog() noexcept;

}  // namespace rdmalab::wireshark

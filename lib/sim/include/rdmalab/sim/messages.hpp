// The simulator's user-facing texts: work-completion statuses with a hint on
// what usually causes them, in English and Chinese.
#pragma once

#include <infiniband/verbs.h>

#include <span>
#include <string>
#include <string_view>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::sim {

/// "retry counter exceeded: ... Check ..." for a failed completion, in the
/// current language. Every ibv_wc_status has an entry; an unknown value gives
/// a generic text with the number.
[[nodiscard]] std::string describe_status(ibv_wc_status status);

/// "could not finish writing the capture: ..." (the fabric's destructor
/// prints it to stderr rather than throwing).
[[nodiscard]] std::string capture_close_failed(std::string_view reason);

/// This module's messages, for the catalog parity test.
[[nodiscard]] std::span<const i18n::Message> catalog() noexcept;

}  // namespace rdmalab::sim

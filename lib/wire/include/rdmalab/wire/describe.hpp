// Human-readable, bilingual descriptions of wire-level facts: decode errors
// and AETH syndromes. The texts live in this module's message catalog.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "rdmalab/i18n/i18n.hpp"
#include "rdmalab/wire/headers.hpp"

namespace rdmalab::wire {

/// "truncated in RETH at offset 42 (needs 16 bytes, 10 present)", in the
/// current language.
[[nodiscard]] std::string describe(const DecodeError& e);

/// "ACK (credits not in use)", "RNR NAK: retry after 1.28 ms",
/// "NAK: PSN sequence error", ... in the current language.
[[nodiscard]] std::string describe_syndrome(std::uint8_t syndrome);

/// The name of a NAK code: "PSN sequence error", ...
[[nodiscard]] std::string nak_code_name(std::uint8_t code);

/// This module's messages, for the catalog parity test.
[[nodiscard]] std::span<const i18n::Message> catalog() noexcept;

}  // namespace rdmalab::wire

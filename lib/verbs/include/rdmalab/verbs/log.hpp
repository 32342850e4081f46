// Where the wrapper reports what it cannot throw: failures of destroy verbs
// in destructors. The default sink writes one line to stderr.
#pragma once

#include <functional>
#include <string_view>

namespace rdmalab::verbs {

using LogSink = std::function<void(std::string_view line)>;

/// Replaces the sink; returns the previous one. An empty sink restores stderr.
LogSink set_log_sink(LogSink sink);

/// Reports a destroy verb that failed with `rc` (an errno value, or -1 with
/// errno set), with the hint for it, in the current language. Never throws.
void report_destroy_failure(std::string_view verb, int rc) noexcept;

}  // namespace rdmalab::verbs

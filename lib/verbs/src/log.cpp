#include "rdmalab/verbs/log.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

#include "rdmalab/verbs/error.hpp"

namespace rdmalab::verbs {
namespace {
std::mutex g_mutex;
LogSink g_sink;
}  // namespace

LogSink set_log_sink(LogSink sink) {
  std::lock_guard lock(g_mutex);
  return std::exchange(g_sink, std::move(sink));
}

void report_destroy_failure(std::string_view verb, int rc) noexcept {
  try {
    const int err = rc > 0 ? rc : (errno != 0 ? errno : EIO);
    const VerbsError e(std::string(verb), err, {}, hint_for(verb, err));
    const std::string line = e.report();
    std::lock_guard lock(g_mutex);
    if (g_sink)
      g_sink(line);
    else
      std::fprintf(stderr, "%s\n", line.c_str());
  } catch (...) {
    // Reporting must not turn a leak into a crash.
  }
}

}  // namespace rdmalab::verbs

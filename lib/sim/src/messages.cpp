// The simulator's user-facing texts, in English and Chinese (the parity test
// checks that every entry exists in both languages). Work-completion
// statuses are described by the verbs library's table (verbs/error.hpp).
#include "rdmalab/sim/messages.hpp"

namespace rdmalab::sim {
namespace {

using i18n::Message;

constexpr std::array kCatalog{
    Message{"capture.close_failed", "could not finish writing the capture: {}",
            "无法写完抓包文件：{}"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

}  // namespace

std::span<const i18n::Message> catalog() noexcept {
  return kCatalog;
}

std::string capture_close_failed(std::string_view reason) {
  return i18n::tr(M("capture.close_failed"), reason);
}

}  // namespace rdmalab::sim

#include "rdmalab/wireshark/messages.hpp"

#include "catalog.hpp"

namespace rdmalab::wireshark {

std::span<const i18n::Message> catalog() noexcept {
  return detail::kCatalog;
}

}  // namespace rdmalab::wireshark

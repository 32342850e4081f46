#include "rdmapcap/messages.hpp"

namespace rdmapcap {

std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmapcap

// One interface, two backends: real verbs (a NIC or Soft-RoCE) and the
// simulated RoCEv2 fabric. Labs are written once against Backend/Context and
// never ask which one they got, except to print it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rdmalab/verbs/cm.hpp"
#include "rdmalab/verbs/context.hpp"

namespace rdmalab::verbs {

class Backend {
 public:
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  [[nodiscard]] virtual BackendKind kind() const noexcept = 0;
  /// The devices this backend offers (may be empty for real verbs).
  [[nodiscard]] virtual std::vector<DeviceInfo> devices() const = 0;
  /// Opens a device by name; the first device when `name` is empty. Throws
  /// VerbsError (no device: with the Soft-RoCE hint).
  [[nodiscard]] virtual std::unique_ptr<Context> open(const std::string& name) = 0;
  /// A Communication Manager event channel (rdma_cm), for in-band
  /// connection set-up (see cm.hpp). Throws VerbsError.
  [[nodiscard]] virtual std::unique_ptr<CmChannel> create_cm_channel() = 0;

 protected:
  Backend() = default;
};

/// The libibverbs backend.
[[nodiscard]] std::unique_ptr<Backend> make_verbs_backend();

/// How many RDMA devices libibverbs sees (0 when none or no provider).
[[nodiscard]] int count_verbs_devices() noexcept;

enum class BackendChoice { Auto, Verbs, Sim };
[[nodiscard]] std::optional<BackendChoice> parse_backend_choice(std::string_view s) noexcept;

}  // namespace rdmalab::verbs

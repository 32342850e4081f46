// `rdmalab doctor`: checks the machine for what RDMA needs and explains, in
// the user's language, what it found and how to fix what is missing.
//
// The checks read the system through DoctorInputs (a sysfs root, the modules
// folder, the memlock limit, the devices libibverbs sees), so tests can run
// them against a fake tree.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rdmalab/i18n/i18n.hpp"
#include "rdmalab/verbs/backend.hpp"

namespace rdmalab::verbs {

enum class CheckStatus { Ok, Info, Warn, Fail };

struct CheckResult {
  std::string id;  // stable, for --json: "devices", "memlock", ...
  CheckStatus status = CheckStatus::Ok;
  std::string title;                 // one line
  std::vector<std::string> details;  // lines shown under it
  std::string fix;                   // what to do, empty when nothing
};

/// A port as sysfs and libibverbs describe it.
struct PortReport {
  int port = 1;
  PortInfo info;
  std::vector<GidEntry> gids;
  std::optional<int> chosen_gid;
  std::string netdev;
};

struct DeviceReport {
  DeviceInfo info;
  std::vector<PortReport> ports;
  std::string error;  // opening or querying failed
  /// The limits the labs depend on (ibv_query_device_ex), when known.
  std::optional<DeviceAttrs> attrs;
  /// The largest max_inline_data ibv_create_qp accepts, when known.
  std::optional<std::uint32_t> max_inline_data;
};

/// The largest max_inline_data an RC QP of this device can be created with,
/// found by creating QPs (a binary search up to `ceiling` bytes): what
/// IBV_SEND_INLINE may carry. Devices round the value up or refuse it, so
/// asking is the only reliable way. Throws VerbsError when not even 0 works.
[[nodiscard]] std::uint32_t probe_max_inline_data(Context& ctx, std::uint32_t ceiling = 16384);

struct DoctorInputs {
  std::vector<DeviceReport> devices;     // from libibverbs (or a test)
  std::optional<std::uint64_t> memlock;  // bytes; nullopt = unlimited
  std::string kernel_release;            // uname -r
  bool rxe_module_loaded = false;        // /sys/module/rdma_rxe exists
  bool rxe_module_available = false;     // rdma_rxe.ko* under /lib/modules/<release>
  bool firewall_mentions_4791 = false;   // a ruleset line names port 4791
  bool firewall_readable = false;
};

struct DoctorOptions {
  BackendChoice backend = BackendChoice::Auto;
  std::optional<int> gid_index;
};

/// Reads the system: devices through `backend` (libibverbs or the
/// simulator), their limits (query_device, probe_max_inline_data), limits
/// with getrlimit, modules under /sys/module and /lib/modules, and the
/// nftables ruleset when readable. Never throws: failures become reports.
[[nodiscard]] DoctorInputs probe_system(Backend& backend, std::optional<int> gid_index);

/// Turns what was found into checks. Pure: no I/O.
[[nodiscard]] std::vector<CheckResult> run_doctor(const DoctorInputs& in, const DoctorOptions& opt);

/// The exit status for a list of checks: 0 when nothing failed, 1 otherwise.
[[nodiscard]] int doctor_exit_code(const std::vector<CheckResult>& checks) noexcept;

/// The catalog of the doctor's messages, for the parity test.
[[nodiscard]] std::span<const i18n::Message> doctor_catalog() noexcept;

}  // namespace rdmalab::verbs

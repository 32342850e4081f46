// Errors of the verbs wrapper, and the hint tables that explain them.
//
// Three conventions of libibverbs, each checked in exactly one place:
//   - create/alloc/reg/open verbs return NULL and set errno     -> check_ptr()
//   - modify/post/destroy verbs return the error value itself   -> check_rc()
//   - ibv_poll_cq returns a negative count on failure           -> (caller, data path)
// errno is never read after a verb that returns its error.
//
// VerbsError (a std::system_error: code() is the errno in the generic
// category) names the verb, the object it acted on and carries a hint in the
// user's language. UsageError is a caller mistake caught before any verb ran.
// A work completion with a status other than success is described by
// describe_wc(), with the likely cause from a table indexed by status.
#pragma once

#include <infiniband/verbs.h>

#include <cerrno>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::verbs {

/// What a failed verb acted on, printed with the error.
struct ErrorContext {
  std::string device;     // "rxe0", "sim0"
  int port = 0;           // 0: not port-specific
  std::uint32_t qpn = 0;  // 0: not a QP verb
  std::string detail;     // e.g. "RESET -> INIT, mask PKEY_INDEX|PORT|ACCESS_FLAGS"
};

class VerbsError : public std::system_error {
 public:
  VerbsError(std::string verb, int err, ErrorContext ctx, std::string hint);
  [[nodiscard]] const std::string& verb() const noexcept { return verb_; }
  [[nodiscard]] const ErrorContext& context() const noexcept { return ctx_; }
  [[nodiscard]] const std::string& hint() const noexcept { return hint_; }
  /// EOPNOTSUPP / ENOTSUP: the device lacks the feature; not a failure of use.
  [[nodiscard]] bool not_supported() const noexcept;
  /// The full, multi-line report in the current language.
  [[nodiscard]] std::string report() const;

 private:
  std::string verb_;
  ErrorContext ctx_;
  std::string hint_;
};

/// A caller mistake detected before calling into the device.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// The hint for a verb failing with an errno value, in the current language
/// (empty when the table has none).
[[nodiscard]] std::string hint_for(std::string_view verb, int err);

/// Throws VerbsError when `p` is null (NULL-plus-errno convention).
template <class T>
T* check_ptr(T* p, std::string_view verb, const ErrorContext& ctx = {}) {
  if (p == nullptr) {
    const int err = errno != 0 ? errno : EIO;
    throw VerbsError(std::string(verb), err, ctx, hint_for(verb, err));
  }
  return p;
}

/// Throws VerbsError when rc != 0 (returned-error-value convention). A verb
/// that returns -1 and sets errno (some providers do) is handled too.
void check_rc(int rc, std::string_view verb, const ErrorContext& ctx = {});

/// The name of a work completion status ("IBV_WC_RETRY_EXC_ERR").
[[nodiscard]] std::string_view wc_status_name(ibv_wc_status s) noexcept;
/// The likely cause of a failed completion, in the current language.
[[nodiscard]] std::string wc_status_hint(ibv_wc_status s);
/// The name of a completion opcode ("IBV_WC_RDMA_WRITE").
[[nodiscard]] std::string_view wc_opcode_name(ibv_wc_opcode op) noexcept;
/// A one-paragraph report of a failed completion: status (name and number),
/// opcode, wr_id, QPN, vendor_err, and the likely cause.
[[nodiscard]] std::string describe_wc(const ibv_wc& wc, std::string_view device = {});

/// True when a receive completion says a SEND with Invalidate revoked a key
/// (then wc.invalidated_rkey names it). The verbs API sets IBV_WC_WITH_INV
/// (1 << 3); rdma_rxe (Linux 6.1) hands user space the kernel's
/// IB_WC_WITH_INVALIDATE bit (1 << 2) instead, which libibverbs names
/// IBV_WC_IP_CSUM_OK (seen on a real run: wc_flags 0x5). On a real device
/// either bit is taken; on the simulator only the documented one.
[[nodiscard]] bool wc_with_invalidate(const ibv_wc& wc, bool real_device) noexcept;

/// Names of the bits of an ibv_qp_attr_mask: "STATE|PKEY_INDEX|PORT|ACCESS_FLAGS".
[[nodiscard]] std::string qp_attr_mask_names(int mask);
/// Names of IBV_ACCESS_* bits: "LOCAL_WRITE|REMOTE_READ" ("0" when none).
[[nodiscard]] std::string access_flag_names(unsigned access);
/// "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR".
[[nodiscard]] std::string_view qp_state_name(ibv_qp_state s) noexcept;
/// 256..4096 for IBV_MTU_256..IBV_MTU_4096, 0 otherwise.
[[nodiscard]] int mtu_bytes(ibv_mtu m) noexcept;
/// IBV_MTU_x for a byte count; nullopt when not one of 256, 512, 1024, 2048, 4096.
[[nodiscard]] std::optional<ibv_mtu> mtu_from_bytes(int bytes) noexcept;

/// This module's messages, for the catalog parity test.
[[nodiscard]] std::span<const i18n::Message> catalog() noexcept;

}  // namespace rdmalab::verbs

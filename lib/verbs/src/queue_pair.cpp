// QP state transitions with the attribute masks of `man ibv_modify_qp`
// (IBTA vol. 1, 11.2.5.2 "Modify QP", table 91: required and optional
// attributes per transition and service type).
#include "rdmalab/verbs/queue_pair.hpp"

#include <fmt/format.h>

#include "rdmalab/verbs/context.hpp"
#include "rdmalab/verbs/error.hpp"

namespace rdmalab::verbs {
namespace {

std::string gid_text(const ibv_gid& g) {
  GidEntry e;
  e.gid = g;
  return e.to_string();
}

}  // namespace

std::string AppliedTransition::to_string() const {
  std::string out = fmt::format("{} -> {}  mask {}", qp_state_name(from), qp_state_name(to),
                                qp_attr_mask_names(mask));
  for (const auto& [name, value] : fields) out += fmt::format("\n  {:<20} = {}", name, value);
  return out;
}

AppliedTransition QueuePair::apply(ibv_qp_attr& attr, int mask, ibv_qp_state to,
                                   std::vector<std::pair<std::string, std::string>> fields) {
  const ibv_qp_state from = state();
  attr.qp_state = to;
  mask |= IBV_QP_STATE;
  const int rc = modify(attr, mask);
  if (rc != 0) {
    ErrorContext ctx{device_name(), 0, qpn(),
                     fmt::format("{} -> {}, mask {}", qp_state_name(from), qp_state_name(to),
                                 qp_attr_mask_names(mask))};
    check_rc(rc, "ibv_modify_qp", ctx);
  }
  return AppliedTransition{from, to, mask, std::move(fields)};
}

AppliedTransition QueuePair::to_init(const InitAttrs& a) {
  ibv_qp_attr attr{};
  attr.pkey_index = a.pkey_index;
  attr.port_num = a.port;
  std::vector<std::pair<std::string, std::string>> f{{"pkey_index", std::to_string(a.pkey_index)},
                                                     {"port_num", std::to_string(a.port)}};
  int mask = IBV_QP_PKEY_INDEX | IBV_QP_PORT;
  if (type() == IBV_QPT_UD) {
    attr.qkey = a.qkey;
    mask |= IBV_QP_QKEY;
    f.emplace_back("qkey", fmt::format("0x{:08x}", a.qkey));
  } else {
    attr.qp_access_flags = a.access;
    mask |= IBV_QP_ACCESS_FLAGS;
    f.emplace_back("qp_access_flags", access_flag_names(a.access));
  }
  return apply(attr, mask, IBV_QPS_INIT, std::move(f));
}

AppliedTransition QueuePair::to_rtr(const RtrAttrs& a) {
  ibv_qp_attr attr{};
  std::vector<std::pair<std::string, std::string>> f;
  int mask = 0;
  if (type() != IBV_QPT_UD) {
    // The address vector: where our packets go. On RoCE the GRH is always
    // present and dgid is the peer's GID; sgid_index selects ours. A local
    // InfiniBand address vector has no GRH: the LRH's DLID alone.
    attr.ah_attr.is_global = a.global ? 1 : 0;
    if (a.global) {
      attr.ah_attr.grh.dgid = a.remote.gid;
      attr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(a.sgid_index);
      attr.ah_attr.grh.hop_limit = a.hop_limit;
      attr.ah_attr.grh.traffic_class = a.traffic_class;
    }
    attr.ah_attr.dlid = a.remote.lid;
    attr.ah_attr.sl = a.sl;
    attr.ah_attr.port_num = a.port;
    attr.path_mtu = a.path_mtu;
    attr.dest_qp_num = a.remote.qpn;
    attr.rq_psn = a.remote.psn;
    mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
    if (a.global)
      f = {{"ah_attr.grh.dgid", gid_text(a.remote.gid)},
           {"ah_attr.grh.sgid_index", std::to_string(a.sgid_index)},
           {"ah_attr.grh.hop_limit", std::to_string(a.hop_limit)}};
    else
      f = {{"ah_attr.is_global", "0"}};
    if (a.sl != 0) f.emplace_back("ah_attr.sl", std::to_string(a.sl));
    f.insert(f.end(), {{"ah_attr.dlid", std::to_string(a.remote.lid)},
                       {"path_mtu", std::to_string(mtu_bytes(a.path_mtu))},
                       {"dest_qp_num", fmt::format("0x{:06x}", a.remote.qpn)},
                       {"rq_psn", fmt::format("0x{:06x}", a.remote.psn)}});
    if (type() == IBV_QPT_RC) {
      attr.max_dest_rd_atomic = a.max_dest_rd_atomic;
      attr.min_rnr_timer = a.min_rnr_timer;
      mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
      f.emplace_back("max_dest_rd_atomic", std::to_string(a.max_dest_rd_atomic));
      f.emplace_back("min_rnr_timer", std::to_string(a.min_rnr_timer));
    }
  }
  return apply(attr, mask, IBV_QPS_RTR, std::move(f));
}

AppliedTransition QueuePair::to_rts(const RtsAttrs& a) {
  ibv_qp_attr attr{};
  attr.sq_psn = a.sq_psn;
  int mask = IBV_QP_SQ_PSN;
  std::vector<std::pair<std::string, std::string>> f{{"sq_psn", fmt::format("0x{:06x}", a.sq_psn)}};
  if (type() == IBV_QPT_RC) {
    attr.timeout = a.timeout;
    attr.retry_cnt = a.retry_cnt;
    attr.rnr_retry = a.rnr_retry;
    attr.max_rd_atomic = a.max_rd_atomic;
    mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
    f.emplace_back("timeout", std::to_string(a.timeout));
    f.emplace_back("retry_cnt", std::to_string(a.retry_cnt));
    f.emplace_back("rnr_retry", std::to_string(a.rnr_retry));
    f.emplace_back("max_rd_atomic", std::to_string(a.max_rd_atomic));
  }
  return apply(attr, mask, IBV_QPS_RTS, std::move(f));
}

AppliedTransition QueuePair::to_error() {
  ibv_qp_attr attr{};
  return apply(attr, 0, IBV_QPS_ERR, {});
}

AppliedTransition QueuePair::to_reset() {
  ibv_qp_attr attr{};
  return apply(attr, 0, IBV_QPS_RESET, {});
}

}  // namespace rdmalab::verbs

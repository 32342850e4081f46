#include "rdmalab/verbs/error.hpp"

#include <doctest/doctest.h>

#include "rdmalab/verbs/context.hpp"

using namespace rdmalab;
using namespace rdmalab::verbs;

TEST_CASE(
    "every work-completion status has a name and, when it is an error, a hint in both languages") {
  for (int s = IBV_WC_SUCCESS; s <= IBV_WC_TM_RNDV_INCOMPLETE; ++s) {
    const auto st = static_cast<ibv_wc_status>(s);
    CAPTURE(s);
    CHECK(wc_status_name(st).starts_with("IBV_WC_"));
    CHECK(wc_status_name(st) != "IBV_WC_?");
    if (st == IBV_WC_SUCCESS) continue;
    i18n::set_current(i18n::Lang::En);
    const auto en = wc_status_hint(st);
    i18n::set_current(i18n::Lang::Zh);
    const auto zh = wc_status_hint(st);
    i18n::set_current(i18n::Lang::En);
    CHECK_FALSE(en.empty());
    CHECK_FALSE(zh.empty());
    CHECK(en != zh);
  }
}

TEST_CASE("a failed completion is reported with status, opcode, wr_id, QPN and the likely cause") {
  ibv_wc wc{};
  wc.status = IBV_WC_RETRY_EXC_ERR;
  wc.opcode = IBV_WC_RDMA_WRITE;
  wc.wr_id = 42;
  wc.qp_num = 0x25;
  wc.vendor_err = 0x81;
  const auto text = describe_wc(wc, "rxe1");
  CHECK(text.find("IBV_WC_RETRY_EXC_ERR (12)") != std::string::npos);
  CHECK(text.find("IBV_WC_RDMA_WRITE") != std::string::npos);
  CHECK(text.find("wr_id 42") != std::string::npos);
  CHECK(text.find("QP 0x000025") != std::string::npos);
  CHECK(text.find("vendor_err 0x81") != std::string::npos);
  CHECK(text.find("rxe1") != std::string::npos);
  CHECK(text.find("GID index") != std::string::npos);
  i18n::set_current(i18n::Lang::Zh);
  CHECK(describe_wc(wc).find("重传") != std::string::npos);
  i18n::set_current(i18n::Lang::En);
}

TEST_CASE(
    "errno hints: memlock for ibv_reg_mr, transitions for ibv_modify_qp, Soft-RoCE for no device") {
  CHECK(hint_for("ibv_reg_mr", ENOMEM).find("ulimit -l") != std::string::npos);
  CHECK(hint_for("ibv_modify_qp", EINVAL).find("--gid-index") != std::string::npos);
  CHECK(hint_for("ibv_get_device_list", ENODEV).find("rdma link add rxe0 type rxe netdev") !=
        std::string::npos);
  CHECK(hint_for("ibv_alloc_mw", EOPNOTSUPP).find("does not support") != std::string::npos);
  CHECK(hint_for("ibv_destroy_qp", EBUSY).find("destroy") != std::string::npos);
  CHECK(hint_for("ibv_query_port", EIO).empty());
  CHECK(hint_for("ibv_query_port", EINVAL).find("phys_port_cnt") != std::string::npos);
}

TEST_CASE("VerbsError carries errno in the generic category and a readable report") {
  try {
    check_rc(EINVAL, "ibv_modify_qp", ErrorContext{"rxe0", 1, 0x11, "INIT -> RTR, mask STATE|AV"});
    FAIL("check_rc did not throw");
  } catch (const VerbsError& e) {
    CHECK(e.code() == std::errc::invalid_argument);
    CHECK(e.verb() == "ibv_modify_qp");
    CHECK_FALSE(e.not_supported());
    const auto r = e.report();
    CHECK(r.find("ibv_modify_qp failed: Invalid argument (errno 22)") != std::string::npos);
    CHECK(r.find("device: rxe0") != std::string::npos);
    CHECK(r.find("QP number: 0x000011") != std::string::npos);
    CHECK(r.find("INIT -> RTR") != std::string::npos);
  }
  CHECK_NOTHROW(check_rc(0, "ibv_modify_qp"));
  errno = ENOMEM;
  CHECK_THROWS_AS(check_ptr(static_cast<ibv_pd*>(nullptr), "ibv_alloc_pd"), VerbsError);
  try {
    check_rc(EOPNOTSUPP, "ibv_alloc_mw");
  } catch (const VerbsError& e) {
    CHECK(e.not_supported());
  }
}

TEST_CASE("attribute masks and states print as the verbs names") {
  CHECK(qp_attr_mask_names(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ==
        "STATE|ACCESS_FLAGS|PKEY_INDEX|PORT");
  CHECK(qp_attr_mask_names(0) == "0");
  CHECK(qp_state_name(IBV_QPS_RTS) == "RTS");
  CHECK(mtu_bytes(IBV_MTU_4096) == 4096);
  CHECK(mtu_from_bytes(1024) == IBV_MTU_1024);
  CHECK_FALSE(mtu_from_bytes(1500).has_value());
}

TEST_CASE("GID choice: the RoCEv2 IPv4 entry, unless overridden") {
  auto entry = [](int index, GidType t, std::initializer_list<std::uint8_t> tail) {
    GidEntry e;
    e.index = index;
    e.type = t;
    std::size_t i = 16 - tail.size();
    for (auto b : tail) e.gid.raw[i++] = b;
    return e;
  };
  GidEntry link_local = entry(0, GidType::RoceV2, {});
  link_local.gid.raw[0] = 0xfe;
  link_local.gid.raw[1] = 0x80;
  const std::vector<GidEntry> rxe{link_local,
                                  entry(1, GidType::RoceV2, {0xff, 0xff, 10, 99, 0, 1})};
  CHECK(rxe[1].is_ipv4_mapped());
  CHECK(rxe[1].to_string() == "::ffff:10.99.0.1");
  CHECK(choose_gid(rxe, std::nullopt) == 1);
  CHECK(choose_gid(rxe, 0) == 0);
  CHECK_FALSE(choose_gid(rxe, 5).has_value());
  const std::vector<GidEntry> mlx{entry(0, GidType::RoceV1, {1}), entry(1, GidType::RoceV2, {2}),
                                  entry(2, GidType::RoceV1, {0xff, 0xff, 1, 2, 3, 4}),
                                  entry(3, GidType::RoceV2, {0xff, 0xff, 1, 2, 3, 4})};
  CHECK(choose_gid(mlx, std::nullopt) == 3);
  CHECK_FALSE(choose_gid({}, std::nullopt).has_value());
}

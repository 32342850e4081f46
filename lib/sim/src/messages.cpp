// Bilingual texts for work-completion statuses. A table, not a switch: a
// status cannot fall through to another's hint, and the parity test checks
// that every entry exists in both languages.
#include "rdmalab/sim/messages.hpp"

#include <utility>

namespace rdmalab::sim {
namespace {

using i18n::Message;

constexpr std::array kCatalog{
    Message{"wc.success", "success", "成功"},
    Message{"wc.loc_len", "local length error: the message does not fit the receive buffer",
            "本地长度错误：消息装不下接收缓冲区"},
    Message{"wc.loc_qp_op", "local QP operation error: the request is invalid for this QP",
            "本地 QP 操作错误：该请求对此队列对（QP）无效"},
    Message{
        "wc.loc_prot",
        "local protection error: an SGE names an unknown lkey or lies outside its memory "
        "region; check the lkey, address and length against the MR",
        "本地保护错误：某个 SGE 的 lkey 无效或超出其内存注册（MR）范围；请核对 lkey、地址和长度"},
    Message{"wc.flush",
            "work request flushed: the QP is in the error state; look for the first completion "
            "with another status",
            "工作请求被冲刷（flush）：QP 已处于错误状态；请查找第一个状态不同的工作完成（WC）"},
    Message{"wc.rem_inv_req",
            "remote invalid request: the responder rejected the request (opcode not allowed, "
            "message too long, or max_dest_rd_atomic is 0)",
            "远端无效请求：响应端拒绝了该请求（操作不允许、消息过长或 max_dest_rd_atomic 为 0）"},
    Message{"wc.rem_access",
            "remote access error: wrong rkey, an address outside the remote MR, or the MR or QP "
            "lacks the remote access flag",
            "远端访问错误：rkey 错误、地址超出远端 MR，或 MR/QP 没有相应的远端访问权限"},
    Message{"wc.rem_op", "remote operational error: the responder could not complete the request",
            "远端操作错误：响应端无法完成该请求"},
    Message{
        "wc.retry_exc",
        "transport retry counter exceeded: no ACK came back after retry_cnt retransmissions; "
        "check that the peer QP is in RTR/RTS, the destination GID and QPN, the path MTU, "
        "and timeout/retry_cnt",
        "传输重试次数超限：重传 retry_cnt 次后仍未收到确认（ACK）；请检查对端 QP 是否处于 RTR/RTS、"
        "目的 GID 与 QPN、路径 MTU，以及 timeout/retry_cnt 设置"},
    Message{"wc.rnr_retry_exc",
            "RNR retry counter exceeded: the peer had no receive WQE posted (receiver not ready) "
            "after rnr_retry attempts; post receives before the sender sends",
            "RNR 重试次数超限：重试 rnr_retry 次后对端仍没有可用的接收 WQE（接收端未就绪）；"
            "请在发送端发送之前投递接收请求"},
    Message{
        "wc.mw_bind",
        "memory window bind error: the MR lacks IBV_ACCESS_MW_BIND, the window is not free, or "
        "the range or access exceeds the MR's",
        "内存窗口绑定错误：MR 没有 IBV_ACCESS_MW_BIND 权限、窗口不是空闲状态，或范围、权限超出了 "
        "MR 的范围"},
    Message{"wc.other", "completion status {}", "完成状态 {}"},
    Message{"capture.close_failed", "could not finish writing the capture: {}",
            "无法写完抓包文件：{}"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

// Status -> message; statuses the simulator never produces share "other".
constexpr std::pair<ibv_wc_status, const Message*> kStatusTable[] = {
    {IBV_WC_SUCCESS, &M("wc.success")},
    {IBV_WC_LOC_LEN_ERR, &M("wc.loc_len")},
    {IBV_WC_LOC_QP_OP_ERR, &M("wc.loc_qp_op")},
    {IBV_WC_LOC_PROT_ERR, &M("wc.loc_prot")},
    {IBV_WC_WR_FLUSH_ERR, &M("wc.flush")},
    {IBV_WC_REM_INV_REQ_ERR, &M("wc.rem_inv_req")},
    {IBV_WC_REM_ACCESS_ERR, &M("wc.rem_access")},
    {IBV_WC_REM_OP_ERR, &M("wc.rem_op")},
    {IBV_WC_RETRY_EXC_ERR, &M("wc.retry_exc")},
    {IBV_WC_RNR_RETRY_EXC_ERR, &M("wc.rnr_retry_exc")},
    {IBV_WC_MW_BIND_ERR, &M("wc.mw_bind")},
};

}  // namespace

std::span<const i18n::Message> catalog() noexcept {
  return kCatalog;
}

std::string capture_close_failed(std::string_view reason) {
  return i18n::tr(M("capture.close_failed"), reason);
}

std::string describe_status(ibv_wc_status status) {
  for (const auto& [s, m] : kStatusTable)
    if (s == status) return i18n::tr(*m);
  return i18n::tr(M("wc.other"), static_cast<int>(status));
}

}  // namespace rdmalab::sim

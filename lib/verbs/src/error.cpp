#include "rdmalab/verbs/error.hpp"

#include <array>
#include <cstring>
#include <optional>

#include "rdmalab/wire/mtu.hpp"

namespace rdmalab::verbs {
namespace {

using i18n::Message;

constexpr std::array kCatalog{
    Message{"err.headline", "{0} failed: {1} (errno {2})", "{0} 调用失败：{1}（errno {2}）"},
    Message{"err.device", "device: {}", "设备：{}"},
    Message{"err.port", "port: {}", "端口：{}"},
    Message{"err.qpn", "QP number: 0x{:06x}", "QP 号：0x{:06x}"},
    Message{"err.detail", "what was asked: {}", "请求内容：{}"},
    Message{"err.hint", "hint: {}", "提示：{}"},
    // Hints for verbs failing with an errno (table below).
    Message{"hint.cm_channel",
            "the RDMA connection manager is not available: load it with `modprobe rdma_ucm` "
            "(it provides /dev/infiniband/rdma_cm); without an RDMA device, use --backend sim.",
            "RDMA 连接管理器（rdma_cm）不可用：用 `modprobe rdma_ucm` 加载它（它提供 "
            "/dev/infiniband/rdma_cm）；没有 RDMA 设备时，请使用 --backend sim。"},
    Message{"hint.cm_addr",
            "no RDMA device carries this IP address: rdma_cm finds the device through the network "
            "interface that owns the address. Check `ip addr` and `rdma link` (for Soft-RoCE: "
            "`rdma link add rxe0 type rxe netdev IFACE` on the interface with that address).",
            "没有哪个 RDMA 设备承载这个 IP 地址：rdma_cm 通过拥有该地址的网络接口找到 RDMA 设备。"
            "请检查 `ip addr` 和 `rdma link`（Soft-RoCE：在拥有该地址的接口上执行 "
            "`rdma link add rxe0 type rxe netdev IFACE`）。"},
    Message{"hint.cm_port", "another rdma_cm listener already uses this port: choose another one.",
            "该端口已被另一个 rdma_cm 监听者占用：请换一个端口。"},
    Message{"hint.cm_qp_attr",
            "the connection manager has no attributes for this state yet: RTR and RTS need the "
            "peer's connection request (passive side) or response (active side) first.",
            "连接管理器还没有这个状态所需的属性：RTR 和 RTS 需要先收到对端的连接请求（被动端）"
            "或连接响应（主动端）。"},
    Message{"hint.cm_state",
            "the call does not fit the connection's state: connect after ROUTE_RESOLVED, accept "
            "after CONNECT_REQUEST, establish after CONNECT_RESPONSE, each with the QP number set.",
            "该调用与连接当前的状态不符：ROUTE_RESOLVED 之后才能 connect，CONNECT_REQUEST 之后才能 "
            "accept，CONNECT_RESPONSE 之后才能 establish，并且都要填好 QP 号。"},
    Message{"hint.reg_mr_nomem",
            "registering memory pins it, and the memlock limit is too low. Check `ulimit -l`; "
            "raise it with `ulimit -l unlimited` (as root) or a memlock line in "
            "/etc/security/limits.conf, or LimitMEMLOCK=infinity for a systemd service.",
            "内存注册需要锁定（pin）物理页，而 memlock 限额太低。用 `ulimit -l` 查看；以 root 执行 "
            "`ulimit -l unlimited`，或在 /etc/security/limits.conf 中加入 memlock 配置，systemd "
            "服务则设置 LimitMEMLOCK=infinity。"},
    Message{"hint.reg_mr_access",
            "the access flags are not allowed: remote write or remote atomic access also needs "
            "IBV_ACCESS_LOCAL_WRITE, and the buffer must be mapped and writable.",
            "访问标志不被允许：远端写或远端原子访问必须同时带上 IBV_ACCESS_LOCAL_WRITE，"
            "并且缓冲区必须已映射且可写。"},
    Message{"hint.query_port_inval",
            "the device has no port with this number: ports are numbered from 1 up to the "
            "device's phys_port_cnt (`ibv_devinfo` lists them); choose one with -i/--ib-port. "
            "The simulator's hosts have one port unless their configuration gives them more.",
            "设备没有这个编号的端口：端口从 1 编号，最大为设备的 phys_port_cnt"
            "（`ibv_devinfo` 会列出）；用 -i/--ib-port 选择端口。"
            "模拟器中的主机只有一个端口，除非其配置给了它更多端口。"},
    Message{"hint.modify_qp_inval",
            "the QP refused this transition: either the current state does not allow it, or the "
            "attribute mask lacks an attribute the target state requires (or has one it forbids). "
            "RESET->INIT needs PKEY_INDEX, PORT, ACCESS_FLAGS; INIT->RTR needs AV, PATH_MTU, "
            "DEST_QPN, RQ_PSN, MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER; RTR->RTS needs SQ_PSN, TIMEOUT, "
            "RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC (see `man ibv_modify_qp`). On RoCE, a wrong "
            "GID index in the address vector also gives EINVAL at RTR: try --gid-index.",
            "QP 拒绝了这次状态迁移：要么当前状态不允许，要么属性掩码缺少目标状态要求的属性"
            "（或包含了不允许的属性）。RESET->INIT 需要 PKEY_INDEX、PORT、ACCESS_FLAGS；"
            "INIT->RTR 需要 AV、PATH_MTU、DEST_QPN、RQ_PSN、MAX_DEST_RD_ATOMIC、MIN_RNR_TIMER；"
            "RTR->RTS 需要 SQ_PSN、TIMEOUT、RETRY_CNT、RNR_RETRY、MAX_QP_RD_ATOMIC"
            "（见 `man ibv_modify_qp`）。在 RoCE 上，地址向量中的 GID 索引不对也会在 RTR 时报 "
            "EINVAL：请试试 --gid-index。"},
    Message{
        "hint.modify_qp_route",
        "no route to the remote GID: check the GID index (--gid-index, `rdmalab doctor` shows "
        "the table), that the remote address is reachable over the RDMA device's interface, and "
        "its ARP/neighbour entry.",
        "到远端 GID 没有路由：检查 GID 索引（--gid-index，`rdmalab doctor` 会列出 GID 表）、"
        "远端地址是否能经 RDMA 设备对应的网口到达，以及对应的 ARP/邻居表项。"},
    Message{
        "hint.create_qp_inval",
        "the QP capabilities exceed what the device supports (max_send_wr, max_recv_wr, max_sge, "
        "max_inline_data); `ibv_devinfo -v` lists the limits.",
        "QP 的容量参数超出了设备上限（max_send_wr、max_recv_wr、max_sge、max_inline_data）；"
        "`ibv_devinfo -v` 可查看这些上限。"},
    Message{"hint.create_cq_inval", "the CQ size exceeds the device's max_cqe (`ibv_devinfo -v`).",
            "CQ 大小超过了设备的 max_cqe（见 `ibv_devinfo -v`）。"},
    Message{"hint.nomem", "the device or the kernel ran out of resources for this object.",
            "设备或内核已没有足够资源创建该对象。"},
    Message{
        "hint.no_device",
        "no RDMA device found. Without hardware, load Soft-RoCE on an Ethernet interface: "
        "`modprobe rdma_rxe` then `rdma link add rxe0 type rxe netdev IFACE`; or use the "
        "simulator with --backend sim.",
        "没有找到 RDMA 设备。没有硬件时，可以在以太网口上加载 Soft-RoCE：先 "
        "`modprobe rdma_rxe`，再 `rdma link add rxe0 type rxe netdev IFACE`；或用 --backend sim "
        "改用模拟器。"},
    Message{"hint.open_device_perm",
            "no permission to open the device: check /dev/infiniband/uverbs* access.",
            "没有权限打开设备：检查 /dev/infiniband/uverbs* 的访问权限。"},
    Message{"hint.not_supported",
            "this device does not support the operation; continue without it, or use Soft-RoCE "
            "(rxe) or the simulator.",
            "该设备不支持此操作；可以跳过它继续，或改用 Soft-RoCE（rxe）或模拟器。"},
    Message{"hint.post_nomem",
            "the send or receive queue is full: poll completions before posting more, or create "
            "the QP with larger max_send_wr / max_recv_wr.",
            "发送队列或接收队列已满：先轮询完成队列再继续提交，或在创建 QP 时增大 "
            "max_send_wr / max_recv_wr。"},
    Message{"hint.post_inval",
            "the work request is invalid for this QP: its state (posting to a QP in RESET or "
            "INIT), its type (READ or atomics on UC/UD), too many SGEs, or inline data too large.",
            "该工作请求对这个 QP 无效：可能是 QP 状态（在 RESET 或 INIT 状态下提交）、"
            "QP 类型（在 UC/UD 上做 READ 或原子操作）、SGE 过多，或内联数据过大。"},
    Message{"hint.busy",
            "the object still has children: destroy QPs and MRs before their PD, QPs before their "
            "CQs.",
            "该对象仍有子对象：先销毁 QP 和 MR 再销毁 PD，先销毁 QP 再销毁 CQ。"},
    Message{"hint.post_send_nomem",
            "the send queue is full. A WR's slot is free again once its completion has been "
            "polled; an unsignalled WR has none, so only a later signalled WR's completion tells "
            "that it is done (hardware providers such as mlx5 free its slot only then): signal "
            "at least one WR in every max_send_wr, poll before posting more, or create the QP "
            "with a larger max_send_wr.",
            "发送队列已满。WR 的完成被轮询到之后，它的槽位才重新可用；不带信号的 WR 没有完成，"
            "只有之后某个带信号的 WR 的完成才能说明它已结束（mlx5 等硬件的驱动也只在那时释放"
            "它的槽位）：每 max_send_wr 个 WR 中至少让一个带信号，继续提交前先轮询，"
            "或在创建 QP 时增大 max_send_wr。"},
    Message{"hint.destroy_cq_busy",
            "a QP still uses the CQ (destroy QPs before their CQs), or completion events read "
            "with ibv_get_cq_event are not acknowledged: call ibv_ack_cq_events for every one "
            "(libibverbs' ibv_destroy_cq waits for them, forever if they never come).",
            "仍有 QP 在使用该 CQ（先销毁 QP 再销毁 CQ），或用 ibv_get_cq_event 读到的完成事件"
            "尚未确认：对每个事件调用 ibv_ack_cq_events（libibverbs 的 ibv_destroy_cq "
            "会一直等待，若永远不确认就永远等下去）。"},
    Message{"hint.channel_busy",
            "a CQ still uses the completion channel: destroy the CQs created on it first.",
            "仍有 CQ 在使用该完成通道：先销毁在它上面创建的 CQ。"},
    Message{"hint.no_cq_event",
            "no completion event came, and none ever will: was the CQ armed with "
            "ibv_req_notify_cq after its last event? Armed for solicited completions only, it "
            "wakes only for a message sent with IBV_SEND_SOLICITED (the SE bit). A completion "
            "that arrived before the arm fires nothing: poll the CQ after arming, before "
            "waiting.",
            "没有收到完成事件，而且永远不会收到：上一个事件之后是否用 ibv_req_notify_cq "
            "重新启用了 CQ 通知？如果只为请求通知的完成启用，只有带 IBV_SEND_SOLICITED"
            "（SE 位）发送的消息才会唤醒等待者。启用通知之前到达的完成不会触发事件："
            "启用通知之后、等待之前，再轮询一次 CQ。"},
    // Work completion status hints, IBTA 11.6.2 and `man ibv_poll_cq`.
    Message{"wc.headline",
            "work completion failed: {0} ({1}), opcode {2}, wr_id {3}, QP 0x{4:06x}, vendor_err "
            "0x{5:x}",
            "工作完成出错：{0}（{1}），操作码 {2}，wr_id {3}，QP 0x{4:06x}，vendor_err 0x{5:x}"},
    Message{"wc.device", "on device {}", "设备 {}"},
    Message{"wc.loc_len",
            "a receive buffer was too small for the incoming message, or a send was longer than "
            "the port allows.",
            "接收缓冲区装不下到来的消息，或发送的消息超过了端口允许的长度。"},
    Message{"wc.loc_qp_op",
            "the work request is not valid for this QP (type, state, or an inline size too large).",
            "该工作请求与 QP 不符（类型、状态，或内联数据过大）。"},
    Message{
        "wc.loc_prot",
        "an SGE's lkey does not cover its address range, or the MR lacks the local access needed.",
        "某个 SGE 的 lkey 不覆盖其地址范围，或该 MR 没有所需的本地访问权限。"},
    Message{
        "wc.flush",
        "the QP went to the error state; this request was flushed without being executed. Look at "
        "the first failed completion for the cause.",
        "QP 已进入错误状态，这个请求未被执行就被冲刷（flush）了。原因请看第一个出错的工作完成。"},
    Message{"wc.bad_resp", "the responder sent an unexpected response.",
            "响应端返回了不符合预期的响应。"},
    Message{"wc.loc_access",
            "a local protection error on the data of an incoming RDMA READ response or atomic.",
            "处理到来的 RDMA READ 响应或原子操作结果时出现本地保护错误。"},
    Message{"wc.rem_inv_req",
            "the responder rejected the request as invalid (e.g. the message is larger than its "
            "receive buffer, or an operation the QP does not allow).",
            "响应端认为请求无效而拒绝（例如消息大于对方的接收缓冲区，或 QP 不允许该操作）。"},
    Message{"wc.rem_access",
            "the responder refused the access: wrong rkey, an address outside the remote MR, or "
            "the MR or QP lacks remote write/read/atomic permission. An rkey is only valid on QPs "
            "of the PD it was registered in; a type 2 memory window's rkey only on the QP it was "
            "bound on, and not after it was invalidated.",
            "响应端拒绝访问：rkey 错误、地址超出远端 MR 的范围，或者 MR 或 QP "
            "没有远端写/读/原子权限。rkey 只在注册它的 PD 中的 QP 上有效；第二类内存窗口的 rkey "
            "只在绑定它的那个 QP 上有效，被失效（invalidate）之后也不再有效。"},
    Message{"wc.mw_bind",
            "the memory window bind was refused: the MR lacks IBV_ACCESS_MW_BIND, the range is "
            "outside the MR, a writable window needs IBV_ACCESS_LOCAL_WRITE on the MR, a type 2 "
            "window must be free (invalidate it first) and belong to the QP's PD, or the ibv_mw's "
            "rkey is not the window's current key (see `man ibv_bind_mw`).",
            "内存窗口绑定被拒绝：MR 注册时没有 IBV_ACCESS_MW_BIND、范围超出了 MR、可写窗口要求 MR "
            "带 IBV_ACCESS_LOCAL_WRITE、第二类窗口必须处于空闲状态（先使其失效）且与 QP 属于同一个 "
            "PD，或者 ibv_mw 中的 rkey 不是窗口当前的键（见 `man ibv_bind_mw`）。"},
    Message{"hint.mw_unsupported",
            "this device does not support memory windows (`ibv_devinfo -v`: max_mw).",
            "该设备不支持内存窗口（见 `ibv_devinfo -v` 中的 max_mw）。"},
    Message{"hint.dereg_mr_bound",
            "memory windows are still bound to this MR: invalidate or deallocate them first.",
            "仍有内存窗口绑定在这个 MR 上：请先使它们失效或释放它们。"},
    Message{
        "wc.rem_op",
        "the responder could not complete the operation (an internal error on the remote side).",
        "响应端无法完成该操作（远端内部错误）。"},
    Message{"wc.retry_exc",
            "no ACK came back after retry_cnt retransmissions: check the GID index and route, that "
            "the peer QP is in RTR/RTS with the right dest QPN and PSN, and the timeout value "
            "(4.096 us * 2^timeout per try).",
            "重传 retry_cnt 次后仍未收到 ACK：检查 GID 索引和路由、对端 QP 是否处于 RTR/RTS 且目的 "
            "QPN 与 PSN 正确，以及 timeout 取值（每次等待 4.096 µs × 2^timeout）。"},
    Message{"wc.rnr_retry_exc",
            "the peer had no receive WQE posted (RNR NAK) for rnr_retry tries: post receives "
            "before the sender sends, or raise rnr_retry (7 = retry forever).",
            "对端在 rnr_retry 次重试期间都没有可用的接收 WQE（RNR "
            "NAK）：让接收端先于发送端提交接收请求，或调大 rnr_retry（7 表示无限重试）。"},
    Message{
        "wc.rem_inv_rd_req",
        "the responder refused an RDMA READ or atomic: too many outstanding (max_dest_rd_atomic) "
        "or not permitted.",
        "响应端拒绝了 RDMA READ 或原子操作：未完成的请求过多（max_dest_rd_atomic）或不被允许。"},
    Message{"wc.fatal", "a fatal error of the device.", "设备发生致命错误。"},
    Message{"wc.general", "a general error without more detail; see vendor_err.",
            "一般性错误，没有更多细节；请参考 vendor_err。"},
    Message{"wc.other", "see `man ibv_poll_cq` for this status.",
            "该状态的含义请参见 `man ibv_poll_cq`。"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

// (verb, errno) -> hint. A row with err 0 matches any errno of that verb.
struct HintRow {
  std::string_view verb;
  int err;
  const Message* hint;
};
const std::array kHints{
    HintRow{"ibv_reg_mr", ENOMEM, &M("hint.reg_mr_nomem")},
    HintRow{"ibv_reg_mr", EPERM, &M("hint.reg_mr_nomem")},
    HintRow{"ibv_reg_mr", EINVAL, &M("hint.reg_mr_access")},
    HintRow{"ibv_reg_mr", EACCES, &M("hint.reg_mr_access")},
    HintRow{"ibv_reg_mr", EFAULT, &M("hint.reg_mr_access")},
    HintRow{"ibv_query_port", EINVAL, &M("hint.query_port_inval")},
    HintRow{"ibv_modify_qp", EINVAL, &M("hint.modify_qp_inval")},
    HintRow{"ibv_modify_qp", ENETUNREACH, &M("hint.modify_qp_route")},
    HintRow{"ibv_modify_qp", ETIMEDOUT, &M("hint.modify_qp_route")},
    HintRow{"ibv_modify_qp", ENODATA, &M("hint.modify_qp_route")},
    HintRow{"ibv_create_qp", EINVAL, &M("hint.create_qp_inval")},
    HintRow{"ibv_create_qp", ENOMEM, &M("hint.nomem")},
    HintRow{"ibv_create_cq", EINVAL, &M("hint.create_cq_inval")},
    HintRow{"ibv_create_cq", ENOMEM, &M("hint.nomem")},
    HintRow{"ibv_alloc_pd", ENOMEM, &M("hint.nomem")},
    HintRow{"ibv_get_device_list", 0, &M("hint.no_device")},
    HintRow{"ibv_open_device", EACCES, &M("hint.open_device_perm")},
    HintRow{"ibv_open_device", EPERM, &M("hint.open_device_perm")},
    HintRow{"ibv_post_send", ENOMEM, &M("hint.post_send_nomem")},
    HintRow{"ibv_post_send", EINVAL, &M("hint.post_inval")},
    HintRow{"ibv_post_recv", ENOMEM, &M("hint.post_nomem")},
    HintRow{"ibv_post_recv", EINVAL, &M("hint.post_inval")},
    HintRow{"ibv_dealloc_pd", EBUSY, &M("hint.busy")},
    HintRow{"ibv_destroy_cq", EBUSY, &M("hint.destroy_cq_busy")},
    HintRow{"ibv_destroy_comp_channel", EBUSY, &M("hint.channel_busy")},
    HintRow{"ibv_get_cq_event", ETIMEDOUT, &M("hint.no_cq_event")},
    HintRow{"rdma_create_event_channel", 0, &M("hint.cm_channel")},
    HintRow{"rdma_resolve_addr", 0, &M("hint.cm_addr")},
    HintRow{"rdma_bind_addr", EADDRNOTAVAIL, &M("hint.cm_addr")},
    HintRow{"rdma_bind_addr", ENODEV, &M("hint.cm_addr")},
    HintRow{"rdma_bind_addr", EADDRINUSE, &M("hint.cm_port")},
    HintRow{"rdma_init_qp_attr", EINVAL, &M("hint.cm_qp_attr")},
    HintRow{"rdma_connect", EINVAL, &M("hint.cm_state")},
    HintRow{"rdma_accept", EINVAL, &M("hint.cm_state")},
    HintRow{"rdma_establish", EINVAL, &M("hint.cm_state")},
    HintRow{"ibv_alloc_mw", EOPNOTSUPP, &M("hint.mw_unsupported")},
    HintRow{"ibv_alloc_mw", ENOSYS, &M("hint.mw_unsupported")},
    HintRow{"ibv_dereg_mr", EINVAL, &M("hint.dereg_mr_bound")},
};

struct WcRow {
  ibv_wc_status status;
  std::string_view name;
  const Message* hint;
};
constexpr std::array kWc{
    WcRow{IBV_WC_SUCCESS, "IBV_WC_SUCCESS", nullptr},
    WcRow{IBV_WC_LOC_LEN_ERR, "IBV_WC_LOC_LEN_ERR", &M("wc.loc_len")},
    WcRow{IBV_WC_LOC_QP_OP_ERR, "IBV_WC_LOC_QP_OP_ERR", &M("wc.loc_qp_op")},
    WcRow{IBV_WC_LOC_EEC_OP_ERR, "IBV_WC_LOC_EEC_OP_ERR", &M("wc.other")},
    WcRow{IBV_WC_LOC_PROT_ERR, "IBV_WC_LOC_PROT_ERR", &M("wc.loc_prot")},
    WcRow{IBV_WC_WR_FLUSH_ERR, "IBV_WC_WR_FLUSH_ERR", &M("wc.flush")},
    WcRow{IBV_WC_MW_BIND_ERR, "IBV_WC_MW_BIND_ERR", &M("wc.mw_bind")},
    WcRow{IBV_WC_BAD_RESP_ERR, "IBV_WC_BAD_RESP_ERR", &M("wc.bad_resp")},
    WcRow{IBV_WC_LOC_ACCESS_ERR, "IBV_WC_LOC_ACCESS_ERR", &M("wc.loc_access")},
    WcRow{IBV_WC_REM_INV_REQ_ERR, "IBV_WC_REM_INV_REQ_ERR", &M("wc.rem_inv_req")},
    WcRow{IBV_WC_REM_ACCESS_ERR, "IBV_WC_REM_ACCESS_ERR", &M("wc.rem_access")},
    WcRow{IBV_WC_REM_OP_ERR, "IBV_WC_REM_OP_ERR", &M("wc.rem_op")},
    WcRow{IBV_WC_RETRY_EXC_ERR, "IBV_WC_RETRY_EXC_ERR", &M("wc.retry_exc")},
    WcRow{IBV_WC_RNR_RETRY_EXC_ERR, "IBV_WC_RNR_RETRY_EXC_ERR", &M("wc.rnr_retry_exc")},
    WcRow{IBV_WC_LOC_RDD_VIOL_ERR, "IBV_WC_LOC_RDD_VIOL_ERR", &M("wc.other")},
    WcRow{IBV_WC_REM_INV_RD_REQ_ERR, "IBV_WC_REM_INV_RD_REQ_ERR", &M("wc.rem_inv_rd_req")},
    WcRow{IBV_WC_REM_ABORT_ERR, "IBV_WC_REM_ABORT_ERR", &M("wc.other")},
    WcRow{IBV_WC_INV_EECN_ERR, "IBV_WC_INV_EECN_ERR", &M("wc.other")},
    WcRow{IBV_WC_INV_EEC_STATE_ERR, "IBV_WC_INV_EEC_STATE_ERR", &M("wc.other")},
    WcRow{IBV_WC_FATAL_ERR, "IBV_WC_FATAL_ERR", &M("wc.fatal")},
    WcRow{IBV_WC_RESP_TIMEOUT_ERR, "IBV_WC_RESP_TIMEOUT_ERR", &M("wc.retry_exc")},
    WcRow{IBV_WC_GENERAL_ERR, "IBV_WC_GENERAL_ERR", &M("wc.general")},
    WcRow{IBV_WC_TM_ERR, "IBV_WC_TM_ERR", &M("wc.other")},
    WcRow{IBV_WC_TM_RNDV_INCOMPLETE, "IBV_WC_TM_RNDV_INCOMPLETE", &M("wc.other")},
};
constexpr bool wc_rows_in_order() {
  for (std::size_t i = 0; i < kWc.size(); ++i)
    if (static_cast<std::size_t>(kWc[i].status) != i || kWc[i].name.empty()) return false;
  return true;
}
static_assert(kWc.size() == IBV_WC_TM_RNDV_INCOMPLETE + 1 && wc_rows_in_order(),
              "one row per ibv_wc_status, in enumerator order (wc_row indexes by status)");

const WcRow* wc_row(ibv_wc_status s) {
  const auto i = static_cast<std::size_t>(s);
  return i < kWc.size() ? &kWc[i] : nullptr;
}

}  // namespace

std::span<const i18n::Message> catalog() noexcept {
  return kCatalog;
}

VerbsError::VerbsError(std::string verb, int err, ErrorContext ctx, std::string hint)
    : std::system_error(err, std::generic_category(), verb),
      verb_(std::move(verb)),
      ctx_(std::move(ctx)),
      hint_(std::move(hint)) {}

bool VerbsError::not_supported() const noexcept {
  return code().value() == EOPNOTSUPP || code().value() == ENOTSUP;
}

std::string VerbsError::report() const {
  std::string out =
      i18n::tr(M("err.headline"), verb_, std::strerror(code().value()), code().value());
  if (!ctx_.device.empty()) out += "\n  " + i18n::tr(M("err.device"), ctx_.device);
  if (ctx_.port != 0) out += "\n  " + i18n::tr(M("err.port"), ctx_.port);
  if (ctx_.qpn != 0) out += "\n  " + i18n::tr(M("err.qpn"), ctx_.qpn);
  if (!ctx_.detail.empty()) out += "\n  " + i18n::tr(M("err.detail"), ctx_.detail);
  if (!hint_.empty()) out += "\n  " + i18n::tr(M("err.hint"), hint_);
  return out;
}

std::string hint_for(std::string_view verb, int err) {
  if (err == EOPNOTSUPP || err == ENOTSUP) return i18n::tr(M("hint.not_supported"));
  for (const auto& row : kHints)
    if (row.verb == verb && (row.err == err || row.err == 0)) return i18n::tr(*row.hint);
  if (verb.starts_with("ibv_destroy") && err == EBUSY) return i18n::tr(M("hint.busy"));
  return {};
}

void check_rc(int rc, std::string_view verb, const ErrorContext& ctx) {
  if (rc == 0) return;
  const int err = rc > 0 ? rc : (errno != 0 ? errno : EIO);
  throw VerbsError(std::string(verb), err, ctx, hint_for(verb, err));
}

std::string_view wc_status_name(ibv_wc_status s) noexcept {
  const WcRow* r = wc_row(s);
  return r != nullptr ? r->name : "IBV_WC_?";
}

std::string wc_status_hint(ibv_wc_status s) {
  const WcRow* r = wc_row(s);
  if (r == nullptr) return i18n::tr(M("wc.other"));
  return r->hint != nullptr ? i18n::tr(*r->hint) : std::string();
}

std::string_view wc_opcode_name(ibv_wc_opcode op) noexcept {
  switch (op) {
    case IBV_WC_SEND: return "IBV_WC_SEND";
    case IBV_WC_RDMA_WRITE: return "IBV_WC_RDMA_WRITE";
    case IBV_WC_RDMA_READ: return "IBV_WC_RDMA_READ";
    case IBV_WC_COMP_SWAP: return "IBV_WC_COMP_SWAP";
    case IBV_WC_FETCH_ADD: return "IBV_WC_FETCH_ADD";
    case IBV_WC_BIND_MW: return "IBV_WC_BIND_MW";
    case IBV_WC_LOCAL_INV: return "IBV_WC_LOCAL_INV";
    case IBV_WC_TSO: return "IBV_WC_TSO";
    case IBV_WC_ATOMIC_WRITE: return "IBV_WC_ATOMIC_WRITE";
    case IBV_WC_RECV: return "IBV_WC_RECV";
    case IBV_WC_RECV_RDMA_WITH_IMM: return "IBV_WC_RECV_RDMA_WITH_IMM";
    case IBV_WC_TM_ADD: return "IBV_WC_TM_ADD";
    case IBV_WC_TM_DEL: return "IBV_WC_TM_DEL";
    case IBV_WC_TM_SYNC: return "IBV_WC_TM_SYNC";
    case IBV_WC_TM_RECV: return "IBV_WC_TM_RECV";
    case IBV_WC_TM_NO_TAG: return "IBV_WC_TM_NO_TAG";
    case IBV_WC_DRIVER1: return "IBV_WC_DRIVER1";
    case IBV_WC_DRIVER2: return "IBV_WC_DRIVER2";
    case IBV_WC_DRIVER3: return "IBV_WC_DRIVER3";
  }
  return "IBV_WC_?";
}

bool wc_with_invalidate(const ibv_wc& wc, bool real_device) noexcept {
  const unsigned bits = IBV_WC_WITH_INV | (real_device ? unsigned{IBV_WC_IP_CSUM_OK} : 0u);
  return (wc.wc_flags & bits) != 0;
}

std::string describe_wc(const ibv_wc& wc, std::string_view device) {
  std::string out =
      i18n::tr(M("wc.headline"), wc_status_name(wc.status), static_cast<int>(wc.status),
               wc_opcode_name(wc.opcode), wc.wr_id, wc.qp_num, wc.vendor_err);
  if (!device.empty()) out += " " + i18n::tr(M("wc.device"), device);
  const std::string hint = wc_status_hint(wc.status);
  if (!hint.empty()) out += "\n  " + i18n::tr(M("err.hint"), hint);
  return out;
}

std::string qp_attr_mask_names(int mask) {
  static constexpr std::array<std::pair<int, std::string_view>, 21> kBits{{
      {IBV_QP_STATE, "STATE"},
      {IBV_QP_CUR_STATE, "CUR_STATE"},
      {IBV_QP_EN_SQD_ASYNC_NOTIFY, "EN_SQD_ASYNC_NOTIFY"},
      {IBV_QP_ACCESS_FLAGS, "ACCESS_FLAGS"},
      {IBV_QP_PKEY_INDEX, "PKEY_INDEX"},
      {IBV_QP_PORT, "PORT"},
      {IBV_QP_QKEY, "QKEY"},
      {IBV_QP_AV, "AV"},
      {IBV_QP_PATH_MTU, "PATH_MTU"},
      {IBV_QP_TIMEOUT, "TIMEOUT"},
      {IBV_QP_RETRY_CNT, "RETRY_CNT"},
      {IBV_QP_RNR_RETRY, "RNR_RETRY"},
      {IBV_QP_RQ_PSN, "RQ_PSN"},
      {IBV_QP_MAX_QP_RD_ATOMIC, "MAX_QP_RD_ATOMIC"},
      {IBV_QP_ALT_PATH, "ALT_PATH"},
      {IBV_QP_MIN_RNR_TIMER, "MIN_RNR_TIMER"},
      {IBV_QP_SQ_PSN, "SQ_PSN"},
      {IBV_QP_MAX_DEST_RD_ATOMIC, "MAX_DEST_RD_ATOMIC"},
      {IBV_QP_PATH_MIG_STATE, "PATH_MIG_STATE"},
      {IBV_QP_CAP, "CAP"},
      {IBV_QP_DEST_QPN, "DEST_QPN"},
  }};
  std::string out;
  for (const auto& [bit, name] : kBits) {
    if ((mask & bit) == 0) continue;
    if (!out.empty()) out += '|';
    out += name;
  }
  return out.empty() ? "0" : out;
}

std::string access_flag_names(unsigned access) {
  static constexpr std::array<std::pair<unsigned, std::string_view>, 4> kBits{{
      {IBV_ACCESS_LOCAL_WRITE, "LOCAL_WRITE"},
      {IBV_ACCESS_REMOTE_WRITE, "REMOTE_WRITE"},
      {IBV_ACCESS_REMOTE_READ, "REMOTE_READ"},
      {IBV_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC"},
  }};
  std::string out;
  for (const auto& [bit, name] : kBits) {
    if ((access & bit) == 0) continue;
    if (!out.empty()) out += '|';
    out += name;
  }
  return out.empty() ? "0" : out;
}

std::string_view qp_state_name(ibv_qp_state s) noexcept {
  switch (s) {
    case IBV_QPS_RESET: return "RESET";
    case IBV_QPS_INIT: return "INIT";
    case IBV_QPS_RTR: return "RTR";
    case IBV_QPS_RTS: return "RTS";
    case IBV_QPS_SQD: return "SQD";
    case IBV_QPS_SQE: return "SQE";
    case IBV_QPS_ERR: return "ERR";
    case IBV_QPS_UNKNOWN: break;
  }
  return "UNKNOWN";
}

static_assert(IBV_MTU_256 == 1 && IBV_MTU_4096 == 5, "ibv_mtu values are IBTA MTU codes");
int mtu_bytes(ibv_mtu m) noexcept {
  // ibv_mtu's values are IBTA's MTU codes (wire/mtu.hpp).
  return static_cast<int>(wire::mtu_bytes(static_cast<std::uint8_t>(m)));
}

std::optional<ibv_mtu> mtu_from_bytes(int bytes) noexcept {
  switch (bytes) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 1024: return IBV_MTU_1024;
    case 2048: return IBV_MTU_2048;
    case 4096: return IBV_MTU_4096;
    default: return std::nullopt;
  }
}

}  // namespace rdmalab::verbs

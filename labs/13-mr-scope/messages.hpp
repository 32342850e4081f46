// Lab 13's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab13 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{
        "desc",
        "Lab 13: the scope of a memory registration. One MR in one PD shared by a control QP "
        "and a data QP; an MR per endpoint in a PD per endpoint (what libfabric providers with "
        "FI_MR_ENDPOINT ask for); and a type 2 memory window bound to the data QP. Which rkey "
        "each peer sees, which QP accepts it, and what the wire shows when a key is used on "
        "the wrong QP.",
        "实验 13：内存注册的作用范围。同一个 PD 中的一个 MR 由控制 QP 和数据 QP 共用；每个端点一个 "
        "PD、一个 MR（libfabric 中要求 FI_MR_ENDPOINT 的 provider 就是这种模型）；以及绑定到数据 "
        "QP 的第二类内存窗口。每个对端看到的是哪个 rkey、哪个 QP 接受它，以及把键用在错误的 QP "
        "上时线路上会出现什么。"},
    Message{"opt.scenario", "which scenario: shared | per-endpoint | window | all",
            "运行哪个场景：shared | per-endpoint | window | all"},
    Message{"opt.invalidate",
            "how the window is revoked: send (the client's SEND with Invalidate) or local (the "
            "server's LOCAL_INV)",
            "窗口的撤销方式：send（客户端发送带 Invalidate 的 SEND）或 local（服务端自己提交 "
            "LOCAL_INV）"},
    Message{"opt.no_misuse", "skip the uses of a key on the wrong QP",
            "跳过把键用在错误 QP 上的那几步"},
    Message{"opt.size", "bytes per WRITE", "每次 WRITE 的字节数"},
    Message{"bad.scenario", "--scenario must be shared, per-endpoint, window or all, not '{}'",
            "--scenario 只能是 shared、per-endpoint、window 或 all，而不是“{}”"},
    Message{"bad.invalidate", "--invalidate must be send or local, not '{}'",
            "--invalidate 只能是 send 或 local，而不是“{}”"},
    Message{"no_gid", "GID index not found on {}", "{} 上找不到该 GID 索引"},
    Message{"client", "client", "客户端"},
    Message{"server", "server", "服务端"},
    Message{"ctrl", "control", "控制"},
    Message{"data", "data", "数据"},
    Message{"step.backend", "choose where the RDMA traffic runs", "选择 RDMA 流量在哪里运行"},
    Message{"step.shared", "scenario shared: one PD, one MR, a control QP and a data QP per side",
            "场景 shared：每一侧一个 PD、一个 MR，以及一个控制 QP 和一个数据 QP"},
    Message{"step.per_ep",
            "scenario per-endpoint: a PD and an MR per endpoint on the server (the FI_MR_ENDPOINT "
            "model)",
            "场景 per-endpoint：服务端每个端点各有一个 PD 和一个 MR（FI_MR_ENDPOINT 模型）"},
    Message{"step.window",
            "scenario window: one PD and one MR, and a type 2 memory window bound to the data QP",
            "场景 window：一个 PD、一个 MR，外加一个绑定到数据 QP 的第二类内存窗口"},
    Message{"step.wire", "what went on the wire, scenario by scenario", "逐个场景核对线路上的报文"},
    Message{"open", "{0} opens {1}", "{0}打开 {1}"},
    Message{"why.shared",
            "both QPs are created in the same PD, so the MR's rkey is valid for requests arriving "
            "on either of them: the server hands the same rkey to both peers",
            "两个 QP 建在同一个 PD 中，因此这个 MR 的 rkey 对到达其中任意一个 QP 的请求都有效："
            "服务端把同一个 rkey 交给两个对端"},
    Message{"why.per_ep",
            "each endpoint gets its own PD, and its MR is registered there: an rkey is checked "
            "against the PD of the QP a request arrives on, so each key works on its own QP only",
            "每个端点有自己的 PD，它的 MR 也注册在其中：rkey 会与请求所到达的 QP 的 PD 比对，"
            "所以每个键只在自己的 QP 上有效"},
    Message{
        "why.fi_mr_endpoint",
        "libfabric: a provider that sets FI_MR_ENDPOINT in mr_mode associates memory regions "
        "with endpoints instead of domains; an MR is registered disabled and must be bound to "
        "an endpoint (fi_mr_bind) and enabled (fi_mr_enable) before use. Verbs has no such "
        "call: a PD per endpoint gives the same scope",
        "libfabric：在 mr_mode 中设置 FI_MR_ENDPOINT 的 provider 把内存区域与端点（而不是 domain）"
        "关联；MR 注册后处于禁用状态，必须先用 fi_mr_bind 绑定到端点、再用 fi_mr_enable "
        "启用才能使用。"
        "verbs 没有这样的调用：为每个端点建一个 PD 就得到同样的作用范围"},
    Message{
        "why.window",
        "a type 2 window is a second rkey over part of the MR. It is bound with a work request "
        "on one QP and from then on is accepted only for requests arriving on that QP, although "
        "the control QP is in the same PD",
        "第二类内存窗口是覆盖 MR 一部分的第二个 rkey。它通过某个 QP "
        "上的工作请求绑定，此后只接受到达"
        "该 QP 的请求，尽管控制 QP 也在同一个 PD 中"},
    Message{"why.mw_bind",
            "the MR is registered with IBV_ACCESS_MW_BIND, or no window may be bound to it",
            "MR 注册时带上了 IBV_ACCESS_MW_BIND，否则任何窗口都不能绑定到它上面"},
    Message{"why.inc_rkey",
            "the bind chooses a new key byte (the low 8 bits, ibv_inc_rkey): a peer still holding "
            "an older rkey of this window is refused",
            "绑定会选择新的键字节（低 8 位，ibv_inc_rkey）：仍持有该窗口旧 rkey 的对端会被拒绝"},
    Message{"why.set_rkey",
            "the bind succeeded: the program records the new rkey in its ibv_mw (the next bind "
            "names the window by it)",
            "绑定成功：程序把新的 rkey 记录到自己的 ibv_mw 中（下一次绑定要用它来指明窗口）"},
    Message{"why.send_inv",
            "SEND with Invalidate carries the window's rkey in an IETH: the server's NIC revokes "
            "the window when the message arrives, and the receive completion says which key",
            "带 Invalidate 的 SEND 在 IETH 中携带窗口的 "
            "rkey：消息到达时服务端网卡撤销该窗口，接收端的工作完成"
            "会指明是哪个键"},
    Message{"why.local_inv",
            "the server revokes the window itself with IBV_WR_LOCAL_INV: nothing goes on the wire",
            "服务端自己用 IBV_WR_LOCAL_INV 撤销窗口：线路上不出现任何报文"},
    Message{"why.wrong_key",
            "the responder checks the rkey against the QP the request arrived on: it answers with "
            "a NAK (remote access error), the requester's work request completes with "
            "IBV_WC_REM_ACCESS_ERR, and the responder's QP goes to the error state",
            "响应端会针对请求所到达的 QP 检查 rkey：它回复 NAK（远端访问错误），请求端的工作请求以 "
            "IBV_WC_REM_ACCESS_ERR 完成，响应端的 QP 进入错误状态"},
    Message{"why.rxe_range",
            "as rdma_rxe does, the simulator checks a window access against the bounds of the MR "
            "the window is bound to; the IBTA asks for the window's own bounds",
            "与 rdma_rxe 一样，模拟器按窗口所绑定的 MR 的边界检查窗口访问；IBTA "
            "要求的是窗口自身的边界"},
    Message{"sees", "{0} tells the {1}, for its {2} QP {3}: rkey {4}",
            "{0}告诉{1}（对应其{2} QP {3}）：rkey {4}"},
    Message{"connected", "{0} {1} QP {2} -> RTS, connected to {3} {4} QP {5}",
            "{0}{1} QP {2} -> RTS，连接到{3}{4} QP {5}"},
    Message{"write", "{0} WRITEs {1} bytes on its {2} QP with rkey {3}",
            "{0}在其{2} QP 上 WRITE {1} 字节，rkey 为 {3}"},
    Message{"state", "{0} {1} QP {2} is now {3}", "{0}{1} QP {2} 现在处于 {3} 状态"},
    Message{"bound", "window rkey {0} -> {1}: bound to QP {2}, {3} bytes",
            "窗口 rkey {0} -> {1}：绑定到 QP {2}，共 {3} 字节"},
    Message{"check.shared.both", "the WRITEs on the control QP and on the data QP both landed",
            "控制 QP 与数据 QP 上的 WRITE 都已写入"},
    Message{"check.per_ep.distinct", "each peer received a different rkey",
            "每个对端收到的 rkey 都不同"},
    Message{"check.per_ep.own", "the data QP's WRITE with the data MR's rkey landed",
            "数据 QP 上使用数据 MR 的 rkey 的 WRITE 已写入"},
    Message{
        "check.per_ep.wrong",
        "the data MR's rkey on the control QP: IBV_WC_REM_ACCESS_ERR, nothing written, the "
        "server's control QP in ERR, its data QP still in RTS",
        "在控制 QP 上使用数据 MR 的 rkey：IBV_WC_REM_ACCESS_ERR，没有写入任何数据，服务端控制 QP "
        "处于 ERR，其数据 QP 仍处于 RTS"},
    Message{"check.window.bind",
            "the bind completed (IBV_WC_BIND_MW) with the next key byte of the same window",
            "绑定已完成（IBV_WC_BIND_MW），得到同一窗口的下一个键字节"},
    Message{"check.window.data", "the window's rkey on the data QP: the WRITE landed",
            "在数据 QP 上使用窗口 rkey：WRITE 已写入"},
    Message{"check.window.ctrl",
            "the window's rkey on the control QP (same PD): IBV_WC_REM_ACCESS_ERR, nothing "
            "written, the server's control QP in ERR",
            "在控制 QP（同一个 PD）上使用窗口 rkey：IBV_WC_REM_ACCESS_ERR，没有写入任何数据，"
            "服务端控制 QP 处于 ERR"},
    Message{"check.window.invalidated",
            "the window was invalidated (receive with IBV_WC_WITH_INV naming its rkey, or "
            "IBV_WC_LOCAL_INV)",
            "窗口已失效（接收完成带 IBV_WC_WITH_INV 并指明其 rkey，或 IBV_WC_LOCAL_INV）"},
    Message{"check.window.revoked",
            "the next WRITE with the window's rkey: IBV_WC_REM_ACCESS_ERR, nothing written",
            "之后再用窗口 rkey 的 WRITE：IBV_WC_REM_ACCESS_ERR，没有写入任何数据"},
    Message{"check.wire",
            "wire ({0}): each request carried the expected key (RETH rkey, or IETH) toward the "
            "expected QP and got the expected answer: ACK, or NAK remote access error",
            "线路（{0}）：每个请求都带着预期的键（RETH 中的 rkey 或 IETH）发往预期的 QP，"
            "并得到预期的应答：ACK，或 NAK（远端访问错误）"},
    Message{"wire.line", "{0}: to QP {1}, {2} {3} -> {4} (AETH syndrome {5})",
            "{0}：发往 QP {1}，{2} {3} -> {4}（AETH syndrome {5}）"},
    Message{"try.1", "--scenario window --invalidate local: the server revokes the window itself",
            "--scenario window --invalidate local：由服务端自己撤销窗口"},
    Message{"try.2", "--no-misuse: only the legal uses, every QP stays in RTS",
            "--no-misuse：只做合法的访问，所有 QP 都保持 RTS"},
    Message{"try.3", "rdmapcap decode {}: the RETH rkeys, the IETH and the NAK syndromes",
            "rdmapcap decode {}：查看 RETH 中的 rkey、IETH 以及 NAK 的 syndrome"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab13

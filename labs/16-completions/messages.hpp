// Lab 16's words, in English and Chinese.
#pragma once

#include <array>
#include <span>

#include "rdmalab/i18n/i18n.hpp"

namespace rdmalab::lab16 {

using i18n::Message;

inline constexpr std::array kCatalog{
    Message{"desc",
            "Lab 16: completions. Signalled and unsignalled sends (sq_sig_all, IBV_SEND_SIGNALED "
            "every n-th WR, the send queue that fills when nothing is signalled), completion "
            "channels and events (ibv_req_notify_cq, ibv_get_cq_event, ibv_ack_cq_events, the "
            "re-arm race), solicited events (IBV_SEND_SOLICITED, the SE bit), and CQ moderation "
            "(ibv_modify_cq) where the device has it.",
            "实验 16：完成。带信号与不带信号的发送（sq_sig_all、每 n 个 WR 带一次 "
            "IBV_SEND_SIGNALED、都不带信号时被占满的发送队列），完成通道与完成事件"
            "（ibv_req_notify_cq、ibv_get_cq_event、ibv_ack_cq_events、重新请求通知时的竞争），"
            "只由带 SE 位的消息触发的事件（IBV_SEND_SOLICITED），以及设备支持时的 CQ 事件合并"
            "（ibv_modify_cq）。"},
    Message{"opt.depth",
            "max_send_wr of the sender's QPs: 3, 7, 15, 31, 63 or 127 (2^k - 1, which rxe keeps "
            "as asked)",
            "发送端 QP 的 max_send_wr：3、7、15、31、63 或 127（2^k - 1，rxe 会原样保留）"},
    Message{"opt.every", "signal one WRITE in every N", "每 N 个 WRITE 中让一个带信号"},
    Message{"opt.writes", "WRITEs posted with one in every N signalled",
            "提交的 WRITE 数量（每 N 个中有一个带信号）"},
    Message{"opt.size", "message size in bytes", "消息大小（字节）"},
    Message{"bad_depth", "--depth {0}: use 2^k - 1 (3, 7, 15, 31, 63 or 127)",
            "--depth {0}：请使用 2^k - 1（3、7、15、31、63 或 127）"},
    Message{"bad_writes", "--writes {0} must be between --every {1} and --depth {2}",
            "--writes {0} 必须在 --every {1} 和 --depth {2} 之间"},
    Message{"step.backend", "choose where the RDMA traffic runs", "选择 RDMA 流量在哪里运行"},
    Message{"step.resources",
            "create the resources: a completion channel and a CQ on it per side, two QPs per "
            "side",
            "创建资源：每端一个完成通道和建在它上面的 CQ，每端两个 QP"},
    Message{"step.connect", "connect each sender QP to its receiver QP",
            "把每个发送端 QP 连到各自的接收端 QP"},
    Message{"step.sig_all", "sq_sig_all = 1: every WR completes, flags or not",
            "sq_sig_all = 1：每个 WR 都产生完成，不论是否设置标志"},
    Message{"step.every", "sq_sig_all = 0: IBV_SEND_SIGNALED on every {}-th WRITE only",
            "sq_sig_all = 0：只在每第 {} 个 WRITE 上设置 IBV_SEND_SIGNALED"},
    Message{"step.overflow",
            "nothing signalled, nothing completed: post until the send queue is full",
            "都不带信号，也都没有完成：一直提交，直到发送队列占满"},
    Message{"step.event", "a completion channel: arm the CQ, sleep until its event",
            "完成通道：请求通知，然后睡眠等待完成事件"},
    Message{"step.race", "the re-arm race: a completion that arrives before the arm",
            "重新请求通知时的竞争：在请求通知之前到达的完成"},
    Message{"step.solicited", "solicited events: ibv_req_notify_cq(cq, 1) and IBV_SEND_SOLICITED",
            "solicited 事件：ibv_req_notify_cq(cq, 1) 与 IBV_SEND_SOLICITED"},
    Message{"step.moderation", "CQ moderation: ibv_modify_cq", "CQ 事件合并：ibv_modify_cq"},
    Message{"step.ack", "acknowledge every event, then destroy the CQs and the channels",
            "确认每个事件，然后销毁 CQ 和完成通道"},
    Message{"step.verify", "check the outcome", "检查结果"},
    Message{"sender", "sender {}", "发送端 {}"},
    Message{"receiver", "receiver {}", "接收端 {}"},
    Message{"why.channel",
            "a completion channel is a file descriptor: a program that has nothing to do sleeps "
            "on it (ibv_get_cq_event, or poll/epoll on channel->fd) instead of spinning on "
            "ibv_poll_cq; the CQ is tied to it when created",
            "完成通道是一个文件描述符：无事可做的程序在它上面睡眠（ibv_get_cq_event，或对 "
            "channel->fd 调用 poll/epoll），而不是反复调用 ibv_poll_cq 空转；CQ 在创建时与它绑定"},
    Message{"why.depth",
            "max_send_wr {0}: rxe rounds a queue up to 2^k slots and keeps one empty to tell "
            "full from empty, so it holds 2^k - 1 WRs; {0} is of that form, and the simulator "
            "keeps it too: exactly {0} WRs fit in the send queue",
            "max_send_wr {0}：rxe 把队列向上取整到 2^k 个槽位，并留一个空槽来区分满与空，"
            "所以能容纳 2^k - 1 个 WR；{0} 正是这种形式，模拟器也原样保留：发送队列恰好能放下 "
            "{0} 个 WR"},
    Message{"why.sig_all",
            "this QP was created with sq_sig_all = 1: each WRITE below has send_flags 0, yet "
            "each one completes",
            "这个 QP 创建时设置了 sq_sig_all = 1：下面每个 WRITE 的 send_flags 都是 0，"
            "但每个都产生完成"},
    Message{"why.every",
            "{0} WRITEs, IBV_SEND_SIGNALED on wr_id {1}, {2}, ...: {3} completions, each of them "
            "also saying that every WRITE before it on this QP is done (a QP completes in order)",
            "{0} 个 WRITE，只有 wr_id {1}、{2}……带 IBV_SEND_SIGNALED：得到 {3} 个完成，"
            "每个完成同时说明这个 QP 上在它之前的 WRITE 都已结束（QP 按顺序完成）"},
    Message{"no_more", "no further completion: the unsignalled WRITEs have none",
            "没有更多完成：不带信号的 WRITE 没有完成"},
    Message{"why.gate",
            "the receiver posts no receive on {0} yet: its first SEND gets RNR NAKs (rnr_retry "
            "7 retries for ever), so no WR of this send queue can complete while we post",
            "接收端暂时不在 {0} 上提交接收请求：第一个 SEND 会收到 RNR NAK（rnr_retry 7 "
            "表示无限重试），因此在提交期间，这个发送队列中没有任何 WR 能完成"},
    Message{"posted", "ibv_post_send × {0}, unsignalled SENDs",
            "ibv_post_send × {0}，不带信号的 SEND"},
    Message{"post_failed", "ibv_post_send for WR {0} returned {1} ({2})",
            "第 {0} 个 WR 的 ibv_post_send 返回 {1}（{2}）"},
    Message{"post_never_failed", "all {0} posts succeeded: the send queue never filled",
            "{0} 次提交都成功了：发送队列从未占满"},
    Message{"why.overflow",
            "a send queue slot is free again only when its WR is done, and a program may count "
            "it free only when it has seen that: through its completion, or for an unsignalled "
            "WR through a later signalled one's (mlx5 frees the slots only then; rxe and the "
            "simulator free each as it completes, which a portable program cannot see). With "
            "nothing signalled the program never learns it: signal at least one WR in every "
            "max_send_wr",
            "发送队列的槽位只有在其 WR 结束后才重新可用，而程序只有在看到这一点时才能认为它空闲："
            "看到它的完成，或者对于不带信号的 WR，看到之后某个带信号的 WR 的完成（mlx5 只在那时"
            "释放槽位；rxe 和模拟器在每个 WR 完成时就释放，但可移植的程序看不到这一点）。如果"
            "都不带信号，程序永远无法得知：每 max_send_wr 个 WR 中至少让一个带信号"},
    Message{"why.release",
            "now the receiver posts {0} receives: the SENDs go through, but the sender's CQ "
            "stays empty; one signalled SEND after them is the program's proof that all are done",
            "现在接收端提交 {0} 个接收请求：这些 SEND 得以完成，但发送端的 CQ 仍然是空的；"
            "在它们之后提交一个带信号的 SEND，才是程序确认它们全部结束的依据"},
    Message{"cq_empty", "the sender's CQ holds {} completions from the unsignalled SENDs",
            "发送端的 CQ 中，来自不带信号的 SEND 的完成有 {} 个"},
    Message{"event_for", "the event names {}", "事件指向 {}"},
    Message{"cq_of", "the CQ of the {}", "{}的 CQ"},
    Message{"sender_side", "sender", "发送端"},
    Message{"receiver_side", "receiver", "接收端"},
    Message{"why.arm",
            "ibv_req_notify_cq arms the CQ for ONE event: the next completion fires it and "
            "disarms the CQ; the program re-arms after each event",
            "ibv_req_notify_cq 只为一个事件请求通知：下一个完成触发事件，同时取消通知；"
            "程序在每个事件之后重新请求通知"},
    Message{"why.ack",
            "every event read must be acknowledged (ibv_ack_cq_events; one call may acknowledge "
            "many): ibv_destroy_cq waits until they are",
            "读到的每个事件都必须确认（ibv_ack_cq_events；一次调用可以确认多个）："
            "ibv_destroy_cq 会一直等到全部确认"},
    Message{"why.race_wrong",
            "the wrong order: poll until empty, then arm, then sleep. A completion that arrives "
            "between the last poll and the arm fires no event: arming does not look at what the "
            "CQ already holds",
            "错误的顺序：轮询到队列为空，然后请求通知，然后睡眠。在最后一次轮询与请求通知之间"
            "到达的完成不会触发事件：请求通知不会检查 CQ 中已有的内容"},
    Message{"no_event", "no event within {} ms", "{} ms 内没有事件"},
    Message{"why.race_missed",
            "a program that slept now would sleep for ever, with a completion waiting in its CQ",
            "如果程序此时睡眠，就会永远睡下去，而它的 CQ 中还有一个完成在等待"},
    Message{"why.race_right",
            "the right order: arm, then poll once more before sleeping; this poll finds it",
            "正确的顺序：先请求通知，睡眠之前再轮询一次；这次轮询找到了它"},
    Message{"why.solicited_arm",
            "the receiver arms its CQ for solicited completions only: a receive whose message "
            "had the SE bit in its BTH (IBV_SEND_SOLICITED at the sender) wakes it, others do not",
            "接收端只为 solicited 完成请求通知：只有消息的 BTH 中带 SE 位（发送端设置了 "
            "IBV_SEND_SOLICITED）的接收会唤醒它，其他的不会"},
    Message{"why.unsolicited",
            "the unsolicited SEND completed at the receiver (the CQ holds it) without waking it",
            "未设置 solicited 的 SEND 在接收端完成了（CQ 中有它），但没有唤醒接收端"},
    Message{"receiver_cq_holds", "the receiver's CQ holds {} completion(s)",
            "接收端的 CQ 中有 {} 个完成"},
    Message{
        "why.solicited",
        "the solicited SEND woke the receiver: one event, for a CQ that now holds both receives",
        "设置了 solicited 的 SEND 唤醒了接收端：一个事件，而 CQ 中此时有两个接收完成"},
    Message{"device_caps", "{0}: max_cq_count {1}, max_cq_period {2} µs",
            "{0}：max_cq_count {1}，max_cq_period {2} µs"},
    Message{"why.moderation_none",
            "the device cannot moderate (both limits 0; rxe neither, and the simulator answers as "
            "rxe): every armed completion fires its own event",
            "该设备不支持事件合并（两个上限都是 0；rxe 也不支持，模拟器的回答与 rxe 相同）："
            "每个请求了通知的完成都各自触发事件"},
    Message{"why.moderation",
            "the device moderates: one event per {0} completions or {1} µs, whichever comes first",
            "该设备支持事件合并：每 {0} 个完成或每 {1} µs 一个事件，以先到者为准"},
    Message{"tally", "{0}: {1} event(s) read, {2} acknowledged",
            "{0}：读到 {1} 个事件，已确认 {2} 个"},
    Message{"why.destroy",
            "only now may the CQs go (ibv_destroy_cq), then the channels "
            "(ibv_destroy_comp_channel fails with EBUSY while a CQ uses it)",
            "到这时才能销毁 CQ（ibv_destroy_cq），然后销毁完成通道（还有 CQ 使用它时，"
            "ibv_destroy_comp_channel 以 EBUSY 失败）"},
    Message{"check.sig_all", "sq_sig_all = 1: all {} WRITEs completed without IBV_SEND_SIGNALED",
            "sq_sig_all = 1：{} 个 WRITE 都在没有 IBV_SEND_SIGNALED 的情况下产生了完成"},
    Message{"check.every",
            "{0} WRITEs, one in every {1} signalled: exactly {2} completions, the signalled ones",
            "{0} 个 WRITE，每 {1} 个中一个带信号：恰好 {2} 个完成，正是带信号的那些"},
    Message{"check.overflow",
            "with nothing signalled and nothing completed, exactly max_send_wr = {} posts "
            "succeeded and the next one failed with ENOMEM",
            "都不带信号、也都没有完成时，恰好 max_send_wr = {} 次提交成功，下一次以 ENOMEM 失败"},
    Message{"check.release",
            "after the receives: every SEND arrived, the sender's CQ got only the signalled one",
            "提交接收请求之后：每个 SEND 都已到达，发送端的 CQ 只收到带信号的那个完成"},
    Message{"check.event", "the armed CQ's completion woke ibv_get_cq_event, naming that CQ",
            "请求了通知的 CQ 上的完成唤醒了 ibv_get_cq_event，事件指向该 CQ"},
    Message{"check.race",
            "a completion before the arm fired no event, and the poll after arming found it",
            "请求通知之前的完成没有触发事件，请求通知之后的轮询找到了它"},
    Message{
        "check.solicited",
        "armed for solicited completions: the unsolicited SEND fired no event, the solicited "
        "one fired one",
        "只为 solicited 完成请求通知：未设置 solicited 的 SEND 没有触发事件，设置了的触发了一个"},
    Message{"check.moderation",
            "ibv_modify_cq answered as the device's limits say (EOPNOTSUPP when max_cq_count is 0)",
            "ibv_modify_cq 的回答与设备上限一致（max_cq_count 为 0 时返回 EOPNOTSUPP）"},
    Message{"check.acked", "every event read was acknowledged before the CQs were destroyed",
            "销毁 CQ 之前，读到的每个事件都已确认"},
    Message{"check.wire_se", "on the wire the SE bit is set on the solicited SEND only",
            "线路上只有设置了 solicited 的 SEND 带 SE 位"},
    Message{"check.wire_rnr",
            "the wire carried RNR NAKs to the sender QP while its receiver had no receive",
            "在接收端没有接收请求期间，线路上有发给该发送端 QP 的 RNR NAK"},
    Message{"try.1", "--depth 63 --writes 60 --every 10: a deeper queue, fewer completions",
            "--depth 63 --writes 60 --every 10：更深的队列，更少的完成"},
    Message{"try.2", "--every 1: every WRITE signalled, as sq_sig_all = 1",
            "--every 1：每个 WRITE 都带信号，等同于 sq_sig_all = 1"},
    Message{"try.3", "--step: one step at a time", "--step：逐步执行"},
    Message{"try.4", "rdmapcap decode {}: find the SE bit in the BTH of each SEND",
            "rdmapcap decode {}：在每个 SEND 的 BTH 中找到 SE 位"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}
inline std::span<const Message> catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab16

#include "rdmalab/lab/buffer_info.hpp"

#include <endian.h>
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

#include "rdmalab/verbs/error.hpp"

namespace rdmalab::lab {

namespace {

using i18n::Message;
using i18n::tr;

constexpr std::array kCatalog{
    Message{
        "why.early",
        "the {0} posts the receive for the {1}'s message before connecting, as rping does: "
        "the {1} may send as soon as it is connected, and a SEND that finds no receive is "
        "answered with an RNR NAK. A receive needs the QP in INIT, so the {0} moves it there "
        "itself",
        "{0}在建立连接之前就为{1}的消息提交接收工作请求，与 rping 的做法相同：{1}一旦连接建立就"
        "可能发送，而找不到接收工作请求的 SEND 会得到 RNR NAK。提交接收工作请求要求 QP 至少处于 "
        "INIT 状态，因此{0}先自行把 QP 迁移到 INIT"},
    Message{"info_got", "the {0} learned the {1}'s buffer: VA {2}, rkey {3}, length {4}",
            "{0}得知{1}缓冲区：VA {2}，rkey {3}，长度 {4}"},
    Message{"bad_info",
            "the {0}'s buffer message did not arrive as a 16-byte SEND ({1} bytes received)",
            "{0}的缓冲区消息没有以 16 字节 SEND 的形式到达（收到 {1} 字节）"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

void reg(Endpoint& e, BufferInfo& b) {
  b.mr = e.pd->reg_mr(b.bytes.data(), b.bytes.size(), IBV_ACCESS_LOCAL_WRITE);
}

ibv_sge sge_of(const BufferInfo& b) {
  return ibv_sge{reinterpret_cast<std::uintptr_t>(b.bytes.data()),
                 static_cast<std::uint32_t>(b.bytes.size()), b.mr->lkey()};
}

}  // namespace

void expect_buffer_info(Narrator& n, Endpoint& e, BufferInfo& in, const CommonOptions& o,
                        std::string_view peer_role) {
  n.say(tr(M("why.early"), e.role, peer_role));
  verbs::InitAttrs init;
  init.port = static_cast<std::uint8_t>(o.ib_port);
  n.block(e.qp->to_init(init).to_string());
  reg(e, in);
  ibv_sge sge = sge_of(in);
  ibv_recv_wr wr{};
  wr.wr_id = kBufferInfoRecvWrId;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  verbs::check_rc(e.qp->post_recv(&wr, &bad), "ibv_post_recv");
  n.call(fmt::format("ibv_post_recv(qp, wr{{wr_id={}, 16-byte buffer}})", kBufferInfoRecvWrId),
         "0");
}

void send_buffer_info(Narrator& n, Endpoint& e, BufferInfo& out) {
  reg(e, out);
  const std::uint64_t va = htobe64(e.mr->va());
  const std::uint32_t rkey = htobe32(e.mr->rkey());
  const std::uint32_t len = htobe32(static_cast<std::uint32_t>(e.mr->length()));
  std::memcpy(out.bytes.data(), &va, 8);
  std::memcpy(out.bytes.data() + 8, &rkey, 4);
  std::memcpy(out.bytes.data() + 12, &len, 4);
  ibv_sge sge = sge_of(out);
  ibv_send_wr wr{};
  wr.wr_id = kBufferInfoWrId;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  verbs::check_rc(e.qp->post_send(&wr, &bad), "ibv_post_send");
  n.call("ibv_post_send(qp, SEND of 16 bytes)", "0");
  n.field("va", hex(e.mr->va()));
  n.field("rkey", hex(e.mr->rkey(), 8));
  n.field("len", std::to_string(e.mr->length()));
}

verbs::ConnInfo take_buffer_info(Narrator& n, Endpoint& e, const BufferInfo& in,
                                 std::string_view peer_role) {
  const auto wcs = poll_and_show(n, e, 1);
  if (wcs.size() != 1 || wcs[0].status != IBV_WC_SUCCESS || wcs[0].opcode != IBV_WC_RECV ||
      wcs[0].byte_len != in.bytes.size())
    throw std::runtime_error(tr(M("bad_info"), peer_role, wcs.empty() ? 0 : wcs[0].byte_len));
  std::uint64_t va = 0;
  std::uint32_t rkey = 0, len = 0;
  std::memcpy(&va, in.bytes.data(), 8);
  std::memcpy(&rkey, in.bytes.data() + 8, 4);
  std::memcpy(&len, in.bytes.data() + 12, 4);
  verbs::ConnInfo info;
  info.va = be64toh(va);
  info.rkey = be32toh(rkey);
  info.len = be32toh(len);
  n.say(tr(M("info_got"), e.role, peer_role, hex(info.va), hex(info.rkey, 8), info.len));
  return info;
}

std::span<const i18n::Message> buffer_info_catalog() noexcept {
  return kCatalog;
}

}  // namespace rdmalab::lab

#include "rdmalab/tf/exchange.hpp"

#include <arpa/inet.h>

#include <array>
#include <chrono>

#include "rdmalab/verbs/error.hpp"

namespace rdmalab::tf {

void post_write_imm(lab::Endpoint& e, std::uint64_t wr_id, const ibv_sge& sge, std::uint64_t raddr,
                    std::uint32_t rkey, std::uint32_t imm) {
  ibv_sge s = sge;
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = s.length > 0 ? &s : nullptr;
  wr.num_sge = s.length > 0 ? 1 : 0;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(imm);
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  verbs::check_rc(e.qp->post_send(&wr, &bad), "ibv_post_send");
}

void post_imm_recv(lab::Endpoint& e) {
  ibv_recv_wr wr{};
  ibv_recv_wr* bad = nullptr;
  verbs::check_rc(e.qp->post_recv(&wr, &bad), "ibv_post_recv");
}

bool poll_loop(std::span<lab::Endpoint* const> sides,
               const std::function<void(std::size_t side, const ibv_wc& wc)>& on_wc,
               const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    bool any = false;
    for (std::size_t s = 0; s < sides.size(); ++s) {
      std::array<ibv_wc, 8> wcs{};
      const int got = sides[s]->cq->poll(wcs);
      if (got < 0) verbs::check_rc(-got, "ibv_poll_cq");
      for (int i = 0; i < got; ++i) {
        any = true;
        on_wc(s, wcs[static_cast<std::size_t>(i)]);
      }
    }
    if (any) continue;
    if (!sides.front()->cq->progress() || std::chrono::steady_clock::now() > deadline)
      return done();
  }
  return true;
}

}  // namespace rdmalab::tf

#include "rdmalab/lab/fabric_host.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "rdmalab/verbs/error.hpp"

namespace rdmalab::lab {

void open_host(Narrator& n, Environment& env, Endpoint& e, const std::string& device,
               std::size_t buffer, int cqe, const CommonOptions& o) {
  e.ctx = env.backend->open(device);
  n.call(e.role, fmt::format("ibv_open_device({})", e.ctx->info().name), {});
  choose_gid(n, e, o);
  e.pd = e.ctx->alloc_pd();
  n.call(e.role, "ibv_alloc_pd(ctx)", {});
  e.storage.assign((buffer + 7) / 8, 0);
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  e.mr = e.pd->reg_mr(e.buf(), buffer, access);
  n.call(e.role,
         fmt::format("ibv_reg_mr(pd, buf, {}, IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_REMOTE_WRITE)",
                     buffer),
         fmt::format("lkey {}  rkey {}", hex(e.mr->lkey(), 8), hex(e.mr->rkey(), 8)));
  e.cq = e.ctx->create_cq(cqe);
  n.call(e.role, fmt::format("ibv_create_cq(ctx, cqe={})", cqe), {});
}

void add_qp(Narrator& n, Endpoint& base, Endpoint& e, std::uint32_t send_depth,
            std::uint32_t recv_depth) {
  e.same_port_as(base);
  verbs::QpInitAttrs init;
  init.send_cq = base.cq.get();
  init.recv_cq = base.cq.get();
  init.max_send_wr = send_depth;
  init.max_recv_wr = recv_depth;
  e.qp = base.pd->create_qp(init);
  n.call(e.role,
         fmt::format("ibv_create_qp(pd, IBV_QPT_RC, max_send_wr={}, max_recv_wr={})", send_depth,
                     recv_depth),
         fmt::format("qp_num {}", hex(e.qp->qpn(), 6)));
}

void post_write(Endpoint& from, const Endpoint& to, std::uint64_t remote, std::uint32_t size,
                std::uint64_t wr_id) {
  ibv_sge sge = from.sge(0, size);
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(to.mr->addr()) + remote;
  wr.wr.rdma.rkey = to.mr->rkey();
  ibv_send_wr* bad = nullptr;
  verbs::check_rc(from.qp->post_send(&wr, &bad), "ibv_post_send");
}

double to_us(std::int64_t ns) noexcept {
  return static_cast<double>(ns) / 1000.0;
}

double percentile_us(std::vector<std::int64_t> ns, double p) {
  if (ns.empty()) return 0;
  std::sort(ns.begin(), ns.end());
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(ns.size())));
  rank = std::clamp<std::size_t>(rank, 1, ns.size());
  return to_us(ns[rank - 1]);
}

}  // namespace rdmalab::lab

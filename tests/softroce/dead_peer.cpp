// softroce_dead_peer: the "dead peer" case of lab 07 on real Soft-RoCE, across
// the wire. in-vm.sh first makes rxe0's side deaf (an nftables rule drops
// every RoCE packet arriving on vethA); this program then connects a
// requester QP on rxe1 to a responder QP on rxe0 with timeout 12
// (4.096 us * 2^12 = 16.8 ms) and retry_cnt 3, and posts one RDMA WRITE. The
// requester sends it, waits one ACK timeout, resends it three times, and
// completes it with IBV_WC_RETRY_EXC_ERR: 1 + retry_cnt transmissions of one
// PSN, which check.cmake counts in the capture.
//
// retry_cnt 3, not 7: rdma_rxe treats retry_cnt 7 as "retry forever" (the
// IBTA spec makes only rnr_retry 7 infinite), so with 7 it would never end.
//
// Output: the lab JSON result ({"ok", "checks": [{"id": "status", ...}],
// "completions": [...]}),
// exit status 0 when the WRITE failed with exactly that status.
#include <chrono>
#include <exception>
#include <iostream>
#include <string>

#include "rdmalab/i18n/i18n.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/narrator.hpp"
#include "rdmalab/verbs/error.hpp"

using namespace rdmalab;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  i18n::init_from_args(argc, argv);
  lab::CommonOptions o;
  o.backend = "verbs";
  o.json = true;
  lab::Narrator n(o, "softroce-dead-peer");
  try {
    lab::Environment env = lab::open_environment(n, o);
    lab::Endpoint rq, rs;
    lab::EndpointSpec spec;
    spec.device = "rxe1";  // requester, 10.99.0.2
    lab::open_endpoint(n, env, rq, spec, o);
    spec.device = "rxe0";  // responder, 10.99.0.1: the deaf side
    spec.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    lab::open_endpoint(n, env, rs, spec, o);
    rq.first_psn = 0x000100;  // the PSN check.cmake expects to see 4 times
    rs.first_psn = 0x000200;
    lab::ConnectSpec c;
    c.timeout = 12;
    c.retry_cnt = 3;
    lab::connect_pair(n, rq, rs, c, o, true);

    lab::WrChain chain(rq, 1, 1024, IBV_WR_RDMA_WRITE, rs.mr->va(), rs.mr->rkey());
    ibv_send_wr* bad = nullptr;
    verbs::check_rc(rq.qp->post_send(chain.head(), &bad), "ibv_post_send");
    // Four transmissions 16.8 ms apart take well under a second; the limit
    // is generous because an emulated (TCG) guest runs slower.
    const auto wcs = lab::poll_and_show(n, rq, 1, 20s);
    const std::string got =
        wcs.empty() ? "(none)" : std::string(verbs::wc_status_name(wcs.front().status));
    n.check("status", "IBV_WC_RETRY_EXC_ERR", got == "IBV_WC_RETRY_EXC_ERR", got);
    // The completions as lab 07 reports them (side "requester"), for the
    // comparison with the simulator (softroce_compare).
    nlohmann::json j = nlohmann::json::array();
    for (const auto& wc : wcs) j.push_back(lab::wc_json("requester", wc));
    n.result()["completions"] = j;
    return n.finish();
  } catch (const verbs::VerbsError& e) {
    std::cerr << e.report() << "\n";
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
  }
  return 1;
}

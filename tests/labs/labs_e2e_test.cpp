// Each lab on the simulator with a fixed seed: its --json result checked, its
// transcripts in English and Chinese compared with the golden files, --step
// driven through a pseudo-terminal.
//
// Regenerate the golden transcripts after an intended change of a lab's
// output with: scripts/regen-golden.sh
#include <doctest/doctest.h>

#include <tuple>

#include "lab_test.hpp"

using namespace rdmalab_lab_test;

TEST_CASE("lab01: SEND/RECV delivers the bytes, both sides complete, SEND Only + ACK on the wire") {
  const auto j = run_json({LAB_lab01_send_recv, "--json", "--backend", "sim", "--seed", "1",
                           "--capture", tmp_capture("lab01")});
  CHECK(j.at("lab") == "lab01");
  CHECK(j.at("backend") == "sim");
  CHECK(j.at("ok") == true);
  CHECK(check_ok(j, "send_ok"));
  CHECK(check_ok(j, "recv_ok"));
  CHECK(check_ok(j, "bytes"));
  CHECK(check_ok(j, "icrc"));
  const auto& wcs = j.at("completions");
  REQUIRE(wcs.size() == 2);
  CHECK(wcs[0].at("status") == "IBV_WC_SUCCESS");
  CHECK(wcs[0].at("opcode") == "IBV_WC_SEND");
  CHECK(wcs[1].at("opcode") == "IBV_WC_RECV");
  CHECK(wcs[1].at("byte_len") == 64);
  const auto& frames = j.at("wire").at("frames");
  REQUIRE(frames.size() == 2);
  CHECK(frames[0].at("opname") == "RC SEND Only");
  CHECK(frames[0].at("psn") == 0x100);
  CHECK(frames[0].at("ackreq") == true);
  CHECK(frames[1].at("opname") == "RC Acknowledge");
}

TEST_CASE("lab01 -s 3000 -m 1024: one SEND becomes First, Middle, Last") {
  const auto j = run_json({LAB_lab01_send_recv, "--json", "--backend", "sim", "-s", "3000", "-m",
                           "1024", "--capture", tmp_capture("lab01_mtu")});
  CHECK(j.at("ok") == true);
  std::vector<std::string> ops;
  for (const auto& f : j.at("wire").at("frames")) ops.push_back(f.at("opname"));
  CHECK(ops == std::vector<std::string>{"RC SEND First", "RC SEND Middle", "RC SEND Last",
                                        "RC Acknowledge"});
}

TEST_CASE("lab01 --no-recv: RNR NAK on the wire, IBV_WC_RNR_RETRY_EXC_ERR on the sender") {
  const auto j = run_json({LAB_lab01_send_recv, "--json", "--backend", "sim", "--no-recv",
                           "--capture", tmp_capture("lab01_rnr")});
  CHECK(j.at("ok") == true);
  CHECK(check_ok(j, "rnr"));
  CHECK(check_ok(j, "wire_rnr"));
  CHECK(j.at("completions").at(0).at("status") == "IBV_WC_RNR_RETRY_EXC_ERR");
}

TEST_CASE("lab01: wrong option values are usage errors (exit 2), in both languages") {
  for (const char* lang : {"en", "zh"}) {
    const auto r = run({LAB_lab01_send_recv, "--lang", lang, "-m", "1500"});
    CHECK(r.status == 2);
  }
}

TEST_CASE("the labs' option checks (lab::CommandLine) refuse a wrong value, naming it, exit 2") {
  // One option per kind of check the labs add through lab::CommandLine,
  // each passed to CLI11 as a check of the bound's type: CLI11 names the
  // option and the range or the words allowed, integers as written, a
  // double bound with std::to_string's six decimals; in a list option each
  // value is checked.
  struct Case {
    std::vector<std::string> argv;
    const char* says;
  };
  const std::vector<Case> cases = {
      {{LAB_lab09_nccl_net, "--paths", "0"}, "--paths: Value 0 not in range 1 to 16"},  // int
      {{LAB_lab02_write, "-s", "0"}, "--size: Value 0 not in range 1 to 16777216"},     // unsigned
      {{LAB_lab09_nccl_net, "--spread", "-1"},
       "--spread: Value -1 not in range 0 to 1000000"},  // int64
      {{LAB_lab18_incast, "--rate", "0.5"},
       "--rate: Value 0.5 not in range 1.000000 to 400.000000"},                          // double
      {{LAB_lab17_perf, "--test", "foo"}, "--test: foo not in {bw,lat,all}"},             // words
      {{LAB_lab09_nccl_net, "-s", "5,x"}, "--size: Value x not in range 0 to 1048576"}};  // list
  for (const Case& c : cases) {
    for (const char* lang : {"en", "zh"}) {
      std::vector<std::string> argv = c.argv;
      argv.insert(argv.begin() + 1, {"--lang", lang});
      const auto r = run_pty(argv, "\x01never\x01", 20);
      CAPTURE(argv[3]);
      CAPTURE(lang);
      CHECK(r.status == 2);
      CHECK(r.out.find(c.says) != std::string::npos);
      CHECK(r.out.find(std::string(lang) == "en"
                           ? "error: an option has an invalid value"
                           : "错误：某个选项的取值无效") != std::string::npos);
    }
  }
}

TEST_CASE("every lab's transcript matches its golden file in English and Chinese") {
  const std::vector<std::pair<const char*, const char*>> labs = {
      {LAB_lab01_send_recv, "lab01"}, {LAB_lab02_write, "lab02"},
      {LAB_lab03_read, "lab03"},      {LAB_lab04_atomics, "lab04"},
      {LAB_lab05_write_imm, "lab05"}, {LAB_lab06_mtu, "lab06"},
      {LAB_lab07_retry, "lab07"},     {LAB_lab08_adaptive_routing, "lab08"}};
  for (const auto& [bin, lab] : labs) {
    const std::string name = lab;
    CAPTURE(name);
    compare_golden(bin, name, {}, "en");
    compare_golden(bin, name, {}, "zh");
  }
}

TEST_CASE("lab02: the WRITE lands at the offset, the target's CQ stays empty, RETH on the wire") {
  const auto j = run_lab_json(LAB_lab02_write, "lab02");
  CHECK(j.at("ok") == true);
  for (const char* id : {"write_ok", "bytes", "untouched", "target_silent", "wire", "icrc"})
    CHECK(check_ok(j, id));
  const auto& f = j.at("wire").at("frames");
  REQUIRE(f.size() == 4);  // First, Middle, Last, ACK
  CHECK(f[0].at("opname") == "RC RDMA WRITE First");
  CHECK(f[0].at("reth").at("len") == 3072);
  CHECK_FALSE(f[1].contains("reth"));
  CHECK(f[2].at("ackreq") == true);
}

TEST_CASE("lab03: READ Requests take one PSN per response packet") {
  const auto j = run_lab_json(LAB_lab03_read, "lab03", {"-s", "2048", "-n", "2"});
  CHECK(j.at("ok") == true);
  for (const char* id : {"read_ok", "bytes", "source_silent", "psn", "wire"})
    CHECK(check_ok(j, id));
  std::vector<std::pair<std::string, int>> seq;
  for (const auto& f : j.at("wire").at("frames")) seq.emplace_back(f.at("opname"), f.at("psn"));
  CHECK(seq == std::vector<std::pair<std::string, int>>{{"RC RDMA READ Request", 0x100},
                                                        {"RC RDMA READ response First", 0x100},
                                                        {"RC RDMA READ response Last", 0x101},
                                                        {"RC RDMA READ Request", 0x102},
                                                        {"RC RDMA READ response First", 0x102},
                                                        {"RC RDMA READ response Last", 0x103}});
}

TEST_CASE("lab04: no increment lost in the FetchAdd race; CmpSwap swaps once") {
  const auto j = run_lab_json(LAB_lab04_atomics, "lab04", {"-n", "10", "--add", "3"});
  CHECK(j.at("ok") == true);
  CHECK(j.at("counter_after_race") == 60);
  for (const char* id : {"fa_ok", "total", "unique", "cas", "wire"}) CHECK(check_ok(j, id));
  // Every completion names its side: 2 x 10 FetchAdds, then client 1's two
  // CmpSwaps; what each CmpSwap found is reported beside them.
  const auto& wcs = j.at("completions");
  REQUIRE(wcs.size() == 22);
  int fetch_adds = 0;
  for (std::size_t i = 0; i < 20; ++i)
    fetch_adds += wcs.at(i).at("opcode") == "IBV_WC_FETCH_ADD" &&
                  wcs.at(i).at("status") == "IBV_WC_SUCCESS" && wcs.at(i).at("byte_len") == 8;
  CHECK(fetch_adds == 20);
  for (std::size_t i = 20; i < 22; ++i) {
    CHECK(wcs.at(i).at("side") == "client 1");
    CHECK(wcs.at(i).at("opcode") == "IBV_WC_COMP_SWAP");
  }
  const auto& cas = j.at("cmp_swap");
  REQUIRE(cas.size() == 2);
  CHECK(cas.at(0) == nlohmann::json{{"compare", 60}, {"found", 60}, {"swapped", true}});
  CHECK(cas.at(1) == nlohmann::json{{"compare", 60}, {"found", 1000}, {"swapped", false}});
}

TEST_CASE("lab05: the immediate arrives with IBV_WC_RECV_RDMA_WITH_IMM") {
  const auto j = run_lab_json(LAB_lab05_write_imm, "lab05", {"--imm", "305419896"});
  CHECK(j.at("ok") == true);
  CHECK(j.at("completions").at(1).at("opcode") == "IBV_WC_RECV_RDMA_WITH_IMM");
  CHECK(j.at("completions").at(1).at("imm_data") == 305419896);
}

TEST_CASE("lab06: the segment count follows the MTU") {
  for (const auto& c : std::vector<std::tuple<int, int, int>>{
           {1024, 3072, 3}, {256, 3072, 12}, {4096, 3072, 1}, {1024, 1, 1}, {512, 1025, 3}}) {
    const int mtu = std::get<0>(c), size = std::get<1>(c), packets = std::get<2>(c);
    CAPTURE(mtu);
    CAPTURE(size);
    const auto j = run_lab_json(LAB_lab06_mtu, "lab06",
                                {"-m", std::to_string(mtu), "-s", std::to_string(size)});
    CHECK(j.at("ok") == true);
    CHECK(j.at("packets_per_message") == packets);
  }
}

TEST_CASE("lab07: each broken wire ends as the transport rules predict") {
  struct Case {
    std::vector<std::string> args;
    std::string first_error;
  };
  const std::vector<Case> cases = {
      {{"--scenario", "acks"}, "IBV_WC_RETRY_EXC_ERR"},
      {{"--scenario", "dead"}, "IBV_WC_RETRY_EXC_ERR"},
      {{"--scenario", "psn", "--psn", "1", "-s", "3072", "-n", "2"}, ""},
      {{"--scenario", "rnr", "--rnr-retry", "1"}, "IBV_WC_RNR_RETRY_EXC_ERR"},
      {{"--scenario", "none"}, ""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args[1]);
    const auto j = run_lab_json(LAB_lab07_retry, "lab07", c.args);
    CHECK(j.at("ok") == true);
    std::string first_error;
    for (const auto& wc : j.at("completions"))
      if (wc.at("status") != "IBV_WC_SUCCESS") {
        first_error = wc.at("status");
        break;
      }
    CHECK(first_error == c.first_error);
  }
  // The classic example: NAK for PSN 1, then PSNs 1..5 resent.
  const auto j = run_lab_json(LAB_lab07_retry, "lab07",
                              {"--scenario", "psn", "--psn", "1", "-s", "3072", "-n", "2"});
  std::vector<int> psns;
  for (const auto& f : j.at("wire").at("frames")) psns.push_back(f.at("psn"));
  // The capture point is the sender's port: the dropped PSN 1 is in it once.
  CHECK(psns == std::vector<int>{0, 1, 2, 3, 4, 5, 1, 1, 2, 3, 4, 5, 2, 5});
}

TEST_CASE("lab01 --step pauses before every step and goes on at Enter") {
  const auto r = run_pty(
      {LAB_lab01_send_recv, "--step", "--backend", "sim", "--capture", tmp_capture("lab01_step")},
      "(press Enter to continue)", 60);
  CHECK(r.status == 0);
  std::size_t prompts = 0;
  for (std::size_t at = 0; (at = r.out.find("(press Enter to continue)", at)) != std::string::npos;
       ++at)
    ++prompts;
  std::size_t steps = 0;
  for (std::size_t at = 0; (at = r.out.find("\nStep ", at)) != std::string::npos; ++at) ++steps;
  CHECK(steps >= 5);
  CHECK(prompts == steps);  // one pause before every step
  CHECK(r.out.find("lab01: all checks passed") != std::string::npos);
}

TEST_CASE("lab08: reordering costs go-back-N without adaptive routing, nothing with it") {
  const auto j = run_lab_json(LAB_lab08_adaptive_routing, "lab08");
  CHECK(j.at("ok") == true);
  for (const char* id : {"done_off", "bytes_off", "byte_len_off", "done_on", "bytes_on",
                         "byte_len_on", "off_naks", "on_clean", "on_whole", "faster"})
    CHECK(check_ok(j, id));
  CHECK(j.at("ar_off").at("naks").get<int>() > 0);
  CHECK(j.at("ar_on").at("retransmitted") == 0);
  CHECK(j.at("ar_on").at("out_of_order").get<int>() > 0);
  CHECK(j.at("ar_on").at("finish_us").get<double>() < j.at("ar_off").at("finish_us").get<double>());
  // The fabric: the requester's leaf sent every request packet the
  // receiver saw (nothing is dropped on an idle fabric) up one of the four
  // spines. With AR on, the completion means all 33 packets arrived, so the
  // counts add up to exactly them; with AR off, resends of go-back-N may
  // still be on their way when the completion ends the capture. A tie among
  // empty uplinks is broken at random, so each of the 33 packets picks a
  // spine alone: every spine is used (all 33 on three or fewer has
  // probability 4 x (3/4)^33 < 0.001).
  const auto sent_up = [&](const char* run) {
    const auto& spines = j.at(run).at("spines");
    REQUIRE(spines.size() == 4);
    std::uint64_t sum = 0;
    for (const auto& c : spines) sum += c.get<std::uint64_t>();
    return sum;
  };
  CHECK(j.at("ar_on").at("requests") == 33);
  CHECK(sent_up("ar_on") == 33);
  CHECK(sent_up("ar_off") >= j.at("ar_off").at("requests").get<std::uint64_t>());
  for (const auto& c : j.at("ar_on").at("spines")) CHECK(c.get<int>() > 0);
  // With one spine, or spines of equal delay, there is nothing to reorder:
  // spraying alone keeps the order (no uplink has a queue), and both modes
  // deliver in order.
  for (const auto& c : {std::pair{"--paths", "1"}, std::pair{"--spread", "0"}}) {
    const char* const option = c.first;
    const char* const value = c.second;
    CAPTURE(option);
    const auto one = run_lab_json(LAB_lab08_adaptive_routing, "lab08_one", {option, value});
    CHECK(one.at("ok") == true);
    CHECK(check_ok(one, "in_order"));
    for (const char* run : {"ar_off", "ar_on"}) {
      CHECK(one.at(run).at("naks") == 0);
      CHECK(one.at(run).at("out_of_order") == 0);
      CHECK(one.at(run).at("retransmitted") == 0);
    }
  }
  // Below the threshold one WRITE with immediate carries all 32768 bytes,
  // sprayed over the four paths: it still completes once, with byte_len
  // 32768 (the model keeps the message whole).
  const auto whole =
      run_lab_json(LAB_lab08_adaptive_routing, "lab08_whole", {"--threshold", "65536"});
  CHECK(whole.at("ok") == true);
  CHECK(check_ok(whole, "byte_len_on"));
  CHECK(check_ok(whole, "on_whole"));
  CHECK(whole.at("ar_on").at("out_of_order").get<int>() > 0);
}

TEST_CASE("--peer-dev: a real responder device for one process, refused where it cannot apply") {
  // The simulator always has its two hosts; two processes each have their
  // own -d. Each refusal is a usage error (status 2) that says why (the
  // pseudo-terminal shows standard error too; nothing is prompted).
  const auto sim = run_pty({LAB_lab02_write, "--backend", "sim", "--peer-dev", "rxe0"}, "\x01", 30);
  CHECK(sim.status == 2);
  CHECK(sim.out.find("--peer-dev names a real device") != std::string::npos);
  const auto zh = run_pty(
      {LAB_lab02_write, "--backend", "sim", "--peer-dev", "rxe0", "--lang", "zh"}, "\x01", 30);
  CHECK(zh.status == 2);
  CHECK(zh.out.find("在模拟器上请求端总是主机 sim1") != std::string::npos);
  for (const char* lab : {LAB_lab01_send_recv, LAB_lab04_atomics, LAB_lab13_mr_scope}) {
    INFO(lab);
    CHECK(run({lab, "--backend", "sim", "--peer-dev", "sim0"}).status == 2);
    CHECK(run({lab, "--peer-dev", "rxe0", "--listen", "18515"}).status == 2);
    CHECK(run({lab, "--peer-dev", "rxe0", "--connect", "h:1"}).status == 2);
  }
}

TEST_CASE("two-process options: clear usage errors when they cannot apply") {
  // The simulator's hosts live in one process.
  CHECK(run({LAB_lab01_send_recv, "--listen", "18515", "--backend", "sim"}).status == 2);
  CHECK(run({LAB_lab01_send_recv, "--connect", "no-port-here", "--backend", "verbs"}).status == 2);
  CHECK(run({LAB_lab01_send_recv, "--listen", "18515", "--connect", "h:1"}).status == 2);
  // Labs 02, 03, 05 and 06 split their roles the same way, with the same
  // usage errors.
  for (const char* lab : {LAB_lab02_write, LAB_lab03_read, LAB_lab05_write_imm, LAB_lab06_mtu}) {
    INFO(lab);
    CHECK(run({lab, "--listen", "18515", "--backend", "sim"}).status == 2);
    CHECK(run({lab, "--cm", "--listen", "7471", "--backend", "sim"}).status == 2);
    CHECK(run({lab, "--connect", "no-port-here", "--backend", "verbs"}).status == 2);
    CHECK(run({lab, "--listen", "18515", "--connect", "h:1"}).status == 2);
  }
  // Lab 04 splits them too: the counter's owner listens, the two clients
  // connect (out of band only: it has no --cm).
  CHECK(run({LAB_lab04_atomics, "--listen", "18515", "--backend", "sim"}).status == 2);
  CHECK(run({LAB_lab04_atomics, "--connect", "no-port-here", "--backend", "verbs"}).status == 2);
  CHECK(run({LAB_lab04_atomics, "--listen", "18515", "--connect", "h:1"}).status == 2);
  CHECK(run({LAB_lab04_atomics, "--cm", "--listen", "18515"}).status == 2);
}

TEST_CASE("labs 02, 03, 05, 06 --cm: connected in band, the buffer's VA/rkey/length in a SEND") {
  struct Case {
    const char* bin;
    const char* name;
    std::vector<std::string> checks;
    const char* operation;  // the first RC frame after the buffer's SEND and its ACK
  };
  const std::vector<Case> cases{
      {LAB_lab02_write,
       "lab02_cm",
       {"write_ok", "bytes", "untouched", "target_silent", "wire"},
       "RC RDMA WRITE Only"},
      {LAB_lab03_read,
       "lab03_cm",
       {"read_ok", "bytes", "source_silent", "psn", "wire"},
       "RC RDMA READ Request"},
      {LAB_lab05_write_imm,
       "lab05_cm",
       {"write_ok", "recv_imm", "bytes", "wire"},
       "RC RDMA WRITE Only with Immediate"},
      {LAB_lab06_mtu,
       "lab06_cm",
       {"write_ok", "bytes", "segments", "payload", "psn"},
       "RC RDMA WRITE Only"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const auto j = run_lab_json(c.bin, c.name, {"--cm"});
    CHECK(j.at("ok") == true);
    for (const auto& id : c.checks) CHECK(check_ok(j, id));
    std::vector<std::string> ops;
    for (const auto& f : j.at("wire").at("frames")) ops.push_back(f.at("opname"));
    // CM REQ, REP, RTU; the 16-byte SEND from the passive side and its ACK;
    // the operation; at the end CM DREQ and DREP.
    REQUIRE(ops.size() >= 8);
    CHECK(std::vector<std::string>(ops.begin(), ops.begin() + 5) ==
          std::vector<std::string>{"UD SEND only", "UD SEND only", "UD SEND only", "RC SEND Only",
                                   "RC Acknowledge"});
    CHECK(ops[5] == c.operation);
    CHECK(j.at("wire").at("frames").at(3).at("payload_len") == 16);
    CHECK(std::vector<std::string>(ops.end() - 2, ops.end()) ==
          std::vector<std::string>{"UD SEND only", "UD SEND only"});
  }
  // The CM picks the path MTU (the port's, 4096 on the simulator): lab06's
  // 3072-byte WRITEs go out as one packet each, whatever -m says.
  const auto j = run_lab_json(LAB_lab06_mtu, "lab06_cm_mtu", {"--cm", "-m", "256"});
  CHECK(j.at("mtu") == 4096);
  CHECK(j.at("packets_per_message") == 1);
  CHECK(check_ok(j, "segments"));
}

TEST_CASE("labs 03 and 06: the largest -n fits the send queue and the CQ") {
  for (const char* bin : {LAB_lab03_read, LAB_lab06_mtu}) {
    INFO(bin);
    const auto j = run_lab_json(bin, "n64", {"-n", "64", "-s", "256"});
    CHECK(j.at("ok") == true);
    CHECK(j.at("completions").size() == 64);
  }
}

TEST_CASE("lab01 --cm: connected in band; CM REQ/REP/RTU before the SEND, DREQ/DREP after") {
  const auto j = run_lab_json(LAB_lab01_send_recv, "lab01_cm", {"--cm"});
  CHECK(j.at("ok") == true);
  for (const char* id : {"send_ok", "recv_ok", "bytes", "wire_send"}) CHECK(check_ok(j, id));
  std::vector<std::string> ops;
  for (const auto& f : j.at("wire").at("frames")) ops.push_back(f.at("opname"));
  REQUIRE(ops.size() == 7);
  CHECK(ops == std::vector<std::string>{"UD SEND only", "UD SEND only", "UD SEND only",
                                        "RC SEND Only", "RC Acknowledge", "UD SEND only",
                                        "UD SEND only"});
  std::vector<std::string> cm;
  int linked = 0;
  for (const auto& e : wire_events(j)) {
    if (e.at("type") == "cm") cm.push_back(e.at("text").get<std::string>().substr(0, 7));
    if (e.at("type") == "cm_linked") {
      ++linked;
      // The SEND starts at the PSN the receiver announced in its REP.
      CHECK(e.at("related_frame") == 2);
      CHECK(e.at("text").get<std::string>().find("as announced") != std::string::npos);
    }
  }
  CHECK(cm == std::vector<std::string>{"CM REQ:", "CM REP ", "CM RTU:", "CM DREQ", "CM DREP"});
  CHECK(linked == 1);
  // The simulator's hosts live in one process, in band too.
  CHECK(run({LAB_lab01_send_recv, "--cm", "--listen", "7471", "--backend", "sim"}).status == 2);
}

TEST_CASE(
    "--link-layer ib: every lab that runs on InfiniBand passes its checks on native IB frames") {
  // Chapter 14's InfiniBand link layer: a trivial subnet manager numbers the
  // hosts' ports in the order they join (sim0 LID 1, sim1 LID 2, ...), every
  // frame is LRH [GRH] BTH ... ICRC VCRC, and a lab's RC QPs use a local
  // address vector, so LNH 2 (no GRH) unless -g asks for one. Every frame a
  // lab's wire view shows must then be IB, addressed by LID, with both CRCs
  // good, and each lab's own checks must hold as on RoCE. Lab 15's UD address
  // handle is global (LNH 3): the receiver finds the sender's GID in its
  // buffer, as on RoCE.
  const std::vector<std::pair<const char*, const char*>> labs = {
      {LAB_lab01_send_recv, "lab01"}, {LAB_lab02_write, "lab02"},
      {LAB_lab03_read, "lab03"},      {LAB_lab04_atomics, "lab04"},
      {LAB_lab05_write_imm, "lab05"}, {LAB_lab06_mtu, "lab06"},
      {LAB_lab07_retry, "lab07"},     {LAB_lab08_adaptive_routing, "lab08"},
      {LAB_lab09_nccl_net, "lab09"},  {LAB_lab10_tf_rendezvous, "lab10"},
      {LAB_lab11_gdr_read, "lab11"},  {LAB_lab12_one_sided, "lab12"},
      {LAB_lab13_mr_scope, "lab13"},  {LAB_lab14_srq, "lab14"},
      {LAB_lab15_ud, "lab15"},        {LAB_lab16_completions, "lab16"},
      {LAB_lab17_perf, "lab17"}};
  for (const auto& [bin, lab] : labs) {
    const std::string name = lab;
    CAPTURE(name);
    const std::string cap = tmp_capture("ib_" + name);
    const auto j =
        run_json({bin, "--backend", "sim", "--json", "--link-layer", "ib", "--capture", cap});
    CHECK(j.at("ok").get<bool>());
    const bool ud = name == "lab15";
    std::size_t frames = 0;
    // Lab 08 runs twice, AR off and on: a wire view of each.
    for (const char* view : {"wire", "wire_off", "wire_on"}) {
      if (!j.contains(view)) continue;
      for (const auto& f : j.at(view).at("frames")) {
        CAPTURE(f.at("frame").get<int>());
        ++frames;
        CHECK(f.at("roce") == "ib");
        CHECK(f.at("vcrc").at("ok").get<bool>());
        CHECK(f.at("icrc").at("ok").get<bool>());
        // Without a GRH the ends are LIDs; with one (UD), the ports' fe80:: GIDs.
        const std::string prefix = ud ? "fe80::" : "LID ";
        CHECK(f.at("src").get<std::string>().starts_with(prefix));
        CHECK(f.at("dst").get<std::string>().starts_with(prefix));
        CHECK(f.at("lrh").at("lnh").get<int>() == (ud ? 3 : 2));
      }
    }
    // The capture is ERF (LINKTYPE_ERF 197, bytes 20-23 of the pcap header);
    // lab 08 writes one per run, named -off and -on.
    std::vector<std::string> caps = {cap};
    if (name == "lab08") {
      const std::string base = cap.substr(0, cap.rfind(".pcap"));
      caps = {base + "-off.pcap", base + "-on.pcap"};
    }
    for (const std::string& c : caps) {
      CAPTURE(c);
      std::ifstream in(c, std::ios::binary);
      std::array<unsigned char, 24> hdr{};
      in.read(reinterpret_cast<char*>(hdr.data()), hdr.size());
      CHECK(hdr[20] + 256 * hdr[21] == 197);
      fs::remove(c);
    }
    // Lab 17 measures throughput and prints no frame-by-frame view.
    if (name != "lab17") CHECK(frames > 0);
  }
}

TEST_CASE("--link-layer ib -g 0: a global address vector puts a GRH in every frame (LNH 3)") {
  const std::string cap = tmp_capture("ib_global");
  const auto j = run_json({LAB_lab02_write, "--backend", "sim", "--json", "--link-layer", "ib",
                           "-g", "0", "--capture", cap});
  CHECK(j.at("ok").get<bool>());
  std::size_t frames = 0;
  for (const auto& f : j.at("wire").at("frames")) {
    ++frames;
    CHECK(f.at("lrh").at("lnh").get<int>() == 3);
  }
  CHECK(frames == 4);  // WRITE First, Middle, Last and the ACK
  fs::remove(cap);
}

TEST_CASE(
    "lab20 --link-layer ib: the forwarding table picks the uplinks, adaptive routing sprays, "
    "every QP of a connection takes one path") {
  // Derived first (docs/en/28-lab20-ecmp-ar.md, "On InfiniBand"). A packet
  // of a 1 MiB WRITE with immediate is LRH 8 + BTH 12 + [RETH 16 | ImmDt 4]
  // + 4096 + ICRC 4 + VCRC 2: First 4138 bytes, 254 Middles 4122, Last 4126;
  // an ACK (AETH 4) 30. A link of 100 Gb/s serialises b bytes plus 2 of
  // delimiters in floor((b + 2) x 8 / 100) ns: 331, 329, 330 and 2. One
  // connection's 4 messages take 4 x (331 + 254 x 329 + 330) = 336,908 ns
  // on a link; alone on its path (the first packet to leaf0, the uplink back
  // to back, the last packet over the spine and leaf1, the ACK back over
  // four links, d = 1 us each) T1 = 345,907 ns. The subnet manager numbers
  // sim0..sim3 LID 1..4 in joining order; leaf0's table gives DLID 3
  // (receiver A) the uplink 3 mod 2 = 1 and DLID 4 (receiver B) 4 mod 2 = 0:
  // each connection an uplink of its own, whatever its QPs.
  const std::string cap = tmp_capture("lab20_ib");
  const auto j = run_json({LAB_lab20_ecmp_ar, "--backend", "sim", "--json", "--link-layer", "ib",
                           "--seed", "1", "--capture", cap});
  CHECK(j.at("ok").get<bool>());
  CHECK(j.at("config").at("link_layer") == "ib");
  const json& dv = j.at("derived");
  const json& fb = dv.at("frame_bytes");
  CHECK(fb.at("first").get<int>() == 4138);
  CHECK(fb.at("middle").get<int>() == 4122);
  CHECK(fb.at("last").get<int>() == 4126);
  CHECK(fb.at("ack").get<int>() == 30);
  CHECK(fb.at("wire_overhead").get<int>() == 2);
  CHECK_FALSE(dv.contains("queue_cap_bytes"));  // a lossy Ethernet queue's
  const auto ser = [](std::int64_t b) { return (b + 2) * 8 / 100; };
  const std::int64_t flow = 4 * (ser(4138) + 254 * ser(4122) + ser(4126));
  REQUIRE(flow == 336908);
  const auto completion = [&](std::int64_t busy) {
    return ser(4138) + 1000 + busy + 1000 + 2 * (ser(4126) + 1000) + 4 * (ser(30) + 1000);
  };
  const std::int64_t t1 = completion(flow);
  CHECK(t1 == 345907);
  CHECK(dv.at("alone_ns").get<std::int64_t>() == t1);
  CHECK(dv.at("collision_ns").get<std::int64_t>() == completion(2 * flow));
  const std::uint64_t flow_packets = 1024;
  const std::uint64_t flow_bytes = 4 * (4138 + 254 * 4122 + 4126);
  CHECK(dv.at("flow_frame_bytes").get<std::uint64_t>() == flow_bytes);
  // Credits: a packet's 65 blocks (4138 bytes in 64-byte blocks) come back
  // at most 2 x 1000 + 2 x 331 + 100 (jitter) + (331 - 329) = 2,764 ns
  // after it started; the 8 packets started in the 2,764 ns before (8 x
  // 329 = 2,632) and the next need 9 x 65 = 585 of the 1024 blocks a port
  // advertises per VL: no port waits.
  CHECK(dv.at("credits").at("loop_ns").get<std::int64_t>() == 2764);
  CHECK(dv.at("credits").at("blocks").get<std::uint64_t>() == 585);
  CHECK(dv.at("credits").at("vl_blocks").get<std::uint64_t>() == 1024);

  std::vector<std::string> names;
  for (const auto& r : j.at("runs")) {
    const std::string name = r.at("run").get<std::string>();
    CAPTURE(name);
    names.push_back(name);
    CHECK(r.at("complete").get<bool>());
    CHECK(r.at("drops").get<std::uint64_t>() == 0);
    CHECK(r.at("completion_ns").get<std::int64_t>() >= t1);
    if (name == "static" || name.starts_with("qps-")) CHECK(r.at("xmit_wait_ns") == 0);
    for (const auto& q : r.at("qps")) {
      CHECK_FALSE(q.contains("udp_source_port"));  // no UDP on InfiniBand
      // The table's entry for the receiver's LID, whatever the QP.
      const bool a = q.at("connection") == "A";
      CHECK(q.at("dlid").get<int>() == (a ? 3 : 4));
      CHECK(q.at("lft_spine").get<int>() == (a ? 1 : 0));
    }
    const json& sp = r.at("spines");
    const std::uint64_t up =
        sp.at(0).at("packets").get<std::uint64_t>() + sp.at(1).at("packets").get<std::uint64_t>();
    if (name == "ar-nic-off") {
      CHECK(up >= 2 * flow_packets);  // and go-back-N's resends
    } else {
      CHECK(up == 2 * flow_packets);
    }
    if (name == "static" || name.starts_with("qps-")) {
      // Static routing: each uplink carried exactly one connection's
      // packets, every QP's of it; and, each flow alone on its path, the
      // completion is T1 within the jitter of four host-link crossings.
      // With Q QPs each of the 4 messages is Q WRITEs, each with its First
      // (RETH) and Last (ImmDt): 4 x 20 more bytes and 4 x (331 + 330 -
      // 2 x 329) = 12 more ns per QP after the first.
      const std::int64_t q = r.at("qps_per_connection").get<std::int64_t>();
      for (const auto& s : sp) {
        CHECK(s.at("packets").get<std::uint64_t>() == flow_packets);
        CHECK(s.at("bytes").get<std::int64_t>() ==
              static_cast<std::int64_t>(flow_bytes) + 80 * (q - 1));
      }
      CHECK(r.at("max_qps_per_spine").get<std::int64_t>() == q);
      const std::int64_t derived = completion(flow + 12 * (q - 1));
      CHECK(r.at("derived_ns").get<std::int64_t>() == derived);
      CHECK(r.at("completion_ns").get<std::int64_t>() <= derived + 400);
    }
  }
  CHECK(names ==
        std::vector<std::string>{"static", "ar", "ar-nic-off", "qps-1", "qps-2", "qps-4", "qps-8"});
  CHECK(j.at("runs").at(0).at("shared_uplink") == false);
  // Adaptive routing: both uplinks, faster than two flows on one; with the
  // NIC's AR mode nothing resent, without it NAKs and go-back-N.
  const json& ar = j.at("runs").at(1);
  CHECK(ar.at("spines").at(0).at("packets").get<std::uint64_t>() > 0);
  CHECK(ar.at("spines").at(1).at("packets").get<std::uint64_t>() > 0);
  CHECK(ar.at("completion_ns").get<std::int64_t>() < completion(2 * flow));
  CHECK(ar.at("naks") == 0);
  CHECK(ar.at("retransmitted_packets") == 0);
  const json& off = j.at("runs").at(2);
  CHECK(off.at("out_of_order_held") == 0);
  if (off.at("out_of_sequence").get<std::uint64_t>() > 0) {
    CHECK(off.at("naks").get<std::uint64_t>() > 0);
    CHECK(off.at("retransmitted_packets").get<std::uint64_t>() > 0);
  }
  for (const auto& c : j.at("checks")) {
    CAPTURE(c.at("id").get<std::string>());
    CHECK(c.at("ok").get<bool>());
  }
  // Every capture is ERF (LINKTYPE_ERF 197, bytes 20-23 of the pcap header).
  for (const auto& c : j.at("captures")) {
    const std::string path = c.get<std::string>();
    CAPTURE(path);
    std::ifstream in(path, std::ios::binary);
    std::array<unsigned char, 24> hdr{};
    in.read(reinterpret_cast<char*>(hdr.data()), hdr.size());
    CHECK(hdr[20] + 256 * hdr[21] == 197);
    in.close();
    fs::remove(path);
  }
  // "static" and "ecmp" name the same run; a global address vector (-g)
  // would put a GRH in the packets derived without one: refused.
  const auto one = run_json({LAB_lab20_ecmp_ar, "--backend", "sim", "--json", "--link-layer", "ib",
                             "--run", "ecmp", "--capture", cap});
  CHECK(one.at("ok").get<bool>());
  REQUIRE(one.at("runs").size() == 1);
  CHECK(one.at("runs").at(0).at("run") == "static");
  for (const auto& c : one.at("captures")) fs::remove(c.get<std::string>());
  CHECK(run({LAB_lab20_ecmp_ar, "--backend", "sim", "--link-layer", "ib", "-g", "0"}).status == 2);
  // At 300 Gb/s a packet takes 109 ns: 21 packets start within a credit
  // loop, and 22 x 65 blocks are more than a port's 1024: the senders
  // would wait for credits, which the lab does not derive: refused.
  CHECK(
      run({LAB_lab20_ecmp_ar, "--backend", "sim", "--link-layer", "ib", "--rate", "300"}).status ==
      2);
}

TEST_CASE("--link-layer: a value other than roce or ib is a usage error") {
  CHECK(run({LAB_lab02_write, "--backend", "sim", "--link-layer", "opa"}).status == 2);
}

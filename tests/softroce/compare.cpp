// softroce_compare: one lab scenario on real Soft-RoCE against the same
// scenario on the simulator.
//
//   softroce_compare REAL.pcap SIM.pcap [--real-json A.json]... [--sim-json S.json]...
//
// From each capture it keeps the RC data conversations (CM MADs on QP 1 are UD
// datagrams and are left out) and builds, for every side that sends requests,
// its "requester sequence": one row per request packet with the opcode, the
// PSN minus the first PSN that side sent, the payload length and the AckReq
// bit. Next to it, the packets that answered those requests with data or a
// result: READ responses, Atomic ACKs and NAKs (opcode, PSN offset from the
// same first PSN, payload length, NAK syndrome). Plain ACKs are left out: a
// responder may coalesce them (IBTA 9.7.5.1.1), so how many there are is not
// part of the behaviour compared here. A side is one QP sending requests to
// another: the analyser (rdmalab::dissect) puts each packet in its QP pair,
// so several QP pairs between the same two hosts (lab 04's two clients) are
// separate sides. Sides are numbered in the order in which they sent their
// first request.
//
// From the JSON results (the real run has one per process, the simulator one
// with both sides) it takes the "completions" arrays: per side name, in order,
// (opcode, status, byte_len, wr_id); a completion with an error status is
// compared by status and wr_id only, the fields the verbs API defines for it.
// Nothing else is forgiven: a difference the simulator chapter lists as a
// known rxe deviation from the spec does not occur in these scenarios.
//
// Exit status: 0 everything equal, 1 a
// difference (both sequences are printed side by side, the first differing
// row marked), 2 bad input (missing file, not a capture, bad JSON, usage).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/dissect/record.hpp"
#include "rdmalab/wire/opcode.hpp"
#include "rdmalab/wire/psn.hpp"

using namespace rdmalab;

namespace {

constexpr int kEqual = 0;
constexpr int kDiffer = 1;
constexpr int kBadInput = 2;

/// Bad input: the message names the file and what is wrong with it.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Row {
  std::uint8_t opcode = 0;
  std::int32_t psn_offset = 0;  // from the first PSN the requester sent
  std::size_t payload = 0;
  bool ack_req = false;
  std::optional<std::uint8_t> syndrome;  // NAKs only
  friend bool operator==(const Row&, const Row&) = default;
};

std::string show(const Row& r) {
  const wire::OpcodeInfo* info = wire::find_opcode(r.opcode);
  std::string name = info != nullptr ? std::string(info->name) : fmt::format("0x{:02x}", r.opcode);
  std::string s = fmt::format("{:<24} {:<+5} len {:<5}{}", name, r.psn_offset, r.payload,
                              r.ack_req ? " A" : "");
  if (r.syndrome) s += fmt::format(" syn 0x{:02x}", *r.syndrome);
  return s;
}

/// One side that sent requests: its request packets, and the data or
/// result packets the other side answered them with.
struct Side {
  std::uint32_t conversation = 0;  // the analyser's QP pair
  wire::IpAddress from;
  wire::IpAddress to;
  std::uint32_t first_psn = 0;
  std::vector<Row> requests;
  std::vector<Row> answers;
};

struct Trace {
  std::vector<Side> sides;  // in the order of their first request
  std::size_t plain_acks = 0;
};

Trace read_trace(const std::string& path) {
  std::optional<capture::PcapReader> reader;
  try {
    reader.emplace(path);
  } catch (const capture::CaptureError& e) {
    throw InputError(e.what());
  }
  const auto link = reader->link_type();
  if (!link)
    throw InputError(fmt::format("{}: unsupported link type {}", path, reader->datalink()));
  struct Pkt {
    std::uint32_t conversation;
    wire::IpAddress src, dst;
    const wire::OpcodeInfo* op;
    std::uint32_t psn;
    std::size_t payload;
    bool ack_req;
    std::optional<wire::Aeth> aeth;
  };
  std::vector<Pkt> pkts;
  capture::Packet pk;
  dissect::PacketRecord rec;
  dissect::Analyzer analyzer;
  try {
    while (reader->next(pk)) {
      dissect::decode_record(pk.data, pk.original_length, *link, pk.frame, pk.time_ns, rec, false);
      analyzer.feed(rec);
      if (!rec.is_roce() || !rec.has_bth()) continue;
      if (rec.malformed())
        throw InputError(fmt::format("{}: frame {} is malformed", path, pk.frame));
      // RC only: CM MADs (UD to QP 1), CNPs and the rest are not compared.
      if (rec.op == nullptr || rec.op->transport != wire::Transport::RC) continue;
      const auto src = rec.decoded.src_address();
      const auto dst = rec.decoded.dst_address();
      if (!src || !dst) continue;
      const wire::IbPacket& ib = *rec.decoded.ib;
      pkts.push_back(Pkt{rec.conversation, *src, *dst, rec.op, ib.bth.psn, ib.payload_length,
                         ib.bth.ack_req, ib.aeth});
    }
  } catch (const capture::CaptureError& e) {
    throw InputError(e.what());
  }

  Trace t;
  auto side_from = [&](std::uint32_t conversation, const wire::IpAddress& a) -> Side* {
    for (Side& s : t.sides)
      if (s.conversation == conversation && s.from == a) return &s;
    return nullptr;
  };
  for (const Pkt& p : pkts) {
    if (p.op->is_response()) continue;
    Side* s = side_from(p.conversation, p.src);
    if (s == nullptr) {
      t.sides.push_back(Side{p.conversation, p.src, p.dst, p.psn, {}, {}});
      s = &t.sides.back();
    }
    s->requests.push_back(
        Row{p.op->value, wire::psn_diff(p.psn, s->first_psn), p.payload, p.ack_req, {}});
  }
  for (const Pkt& p : pkts) {
    if (!p.op->is_response()) continue;
    const bool plain_ack =
        p.op->operation == wire::Operation::Acknowledge && !(p.aeth && p.aeth->is_nak());
    if (plain_ack) {
      ++t.plain_acks;
      continue;
    }
    // An answer goes to the side that sent the requests.
    Side* s = side_from(p.conversation, p.dst);
    if (s == nullptr) {
      t.sides.push_back(Side{p.conversation, p.dst, p.src, p.psn, {}, {}});
      s = &t.sides.back();
    }
    Row r{p.op->value, wire::psn_diff(p.psn, s->first_psn), p.payload, p.ack_req, {}};
    if (p.op->operation == wire::Operation::Acknowledge) r.syndrome = p.aeth->syndrome;
    s->answers.push_back(r);
  }
  return t;
}

/// Prints two row lists side by side, the first differing row marked with
/// ">>"; returns true when they are equal.
template <typename T, typename Show>
bool side_by_side(const std::string& title, const std::vector<T>& real, const std::vector<T>& sim,
                  Show show_row, bool print_always) {
  const std::size_t n = std::max(real.size(), sim.size());
  std::optional<std::size_t> first_diff;
  for (std::size_t i = 0; i < n && !first_diff; ++i)
    if (i >= real.size() || i >= sim.size() || !(real[i] == sim[i])) first_diff = i;
  if (!first_diff && !print_always) return true;
  std::cout << fmt::format("{} (real {} rows, simulator {} rows)\n", title, real.size(),
                           sim.size());
  std::cout << fmt::format("     {:<4} {:<50} {}\n", "#", "real (Soft-RoCE)", "simulator");
  for (std::size_t i = 0; i < n; ++i) {
    const std::string a = i < real.size() ? show_row(real[i]) : "(none)";
    const std::string b = i < sim.size() ? show_row(sim[i]) : "(none)";
    std::cout << fmt::format("  {} {:<4} {:<50} {}\n", first_diff == i ? ">>" : "  ", i, a, b);
  }
  return !first_diff;
}

std::string side_title(const Side* s, std::size_t i) {
  if (s == nullptr) return fmt::format("side {}", i + 1);
  return fmt::format("side {} ({} -> {})", i + 1, s->from.to_string(), s->to.to_string());
}

struct Completion {
  std::string opcode;
  std::string status;
  std::uint64_t byte_len = 0;
  std::uint64_t wr_id = 0;
  // For a completion with an error, the verbs API defines only wr_id and
  // status (man ibv_poll_cq): opcode and byte_len are not compared then.
  friend bool operator==(const Completion& a, const Completion& b) {
    if (a.status != "IBV_WC_SUCCESS" || b.status != "IBV_WC_SUCCESS")
      return a.status == b.status && a.wr_id == b.wr_id;
    return a.opcode == b.opcode && a.byte_len == b.byte_len && a.wr_id == b.wr_id;
  }
};

std::string show_wc(const Completion& c) {
  return fmt::format("{} {} len {} wr_id {}", c.opcode, c.status, c.byte_len, c.wr_id);
}

using Completions = std::map<std::string, std::vector<Completion>>;  // side name -> in order

void read_completions(const std::string& path, Completions& out) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open the JSON result", path));
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not a JSON result: {}", path, e.what()));
  }
  if (!j.is_object() || !j.contains("completions") || !j["completions"].is_array())
    throw InputError(fmt::format("{}: no \"completions\" array", path));
  try {
    for (const auto& wc : j["completions"])
      out[wc.at("side").get<std::string>()].push_back(
          Completion{wc.at("opcode").get<std::string>(), wc.at("status").get<std::string>(),
                     wc.at("byte_len").get<std::uint64_t>(), wc.at("wr_id").get<std::uint64_t>()});
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: a completion lacks a field: {}", path, e.what()));
  }
}

struct Args {
  std::string real_pcap, sim_pcap;
  std::vector<std::string> real_json, sim_json;
};

Args parse_args(int argc, char** argv) {
  Args a;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw InputError(fmt::format("{} needs a file name", s));
      return argv[++i];
    };
    if (s == "--real-json") {
      a.real_json.push_back(value());
    } else if (s == "--sim-json") {
      a.sim_json.push_back(value());
    } else if (s.starts_with("-")) {
      throw InputError(fmt::format("unknown option {}", s));
    } else {
      positional.push_back(s);
    }
  }
  if (positional.size() != 2) throw InputError("expected two captures: REAL.pcap SIM.pcap");
  if (a.real_json.empty() != a.sim_json.empty())
    throw InputError("--real-json and --sim-json go together");
  a.real_pcap = positional[0];
  a.sim_pcap = positional[1];
  return a;
}

int run(const Args& a) {
  const Trace real = read_trace(a.real_pcap);
  const Trace sim = read_trace(a.sim_pcap);
  if (real.sides.empty())
    throw InputError(fmt::format("{}: no RC request packet in the capture", a.real_pcap));
  if (sim.sides.empty())
    throw InputError(fmt::format("{}: no RC request packet in the capture", a.sim_pcap));

  bool equal = true;
  std::size_t req_rows = 0, ans_rows = 0;
  if (real.sides.size() != sim.sides.size()) {
    std::cout << fmt::format("sides that send requests: real {}, simulator {}\n", real.sides.size(),
                             sim.sides.size());
    equal = false;
  }
  const std::size_t nsides = std::max(real.sides.size(), sim.sides.size());
  static const std::vector<Row> none;
  for (std::size_t i = 0; i < nsides; ++i) {
    const Side* r = i < real.sides.size() ? &real.sides[i] : nullptr;
    const Side* s = i < sim.sides.size() ? &sim.sides[i] : nullptr;
    const std::string title = side_title(r != nullptr ? r : s, i);
    equal &= side_by_side(title + ": requests", r ? r->requests : none, s ? s->requests : none,
                          show, false);
    equal &= side_by_side(title + ": READ responses, Atomic ACKs and NAKs it received",
                          r ? r->answers : none, s ? s->answers : none, show, false);
    req_rows += r ? r->requests.size() : 0;
    ans_rows += r ? r->answers.size() : 0;
  }

  std::size_t wc_rows = 0;
  if (!a.real_json.empty()) {
    Completions rc, sc;
    for (const auto& f : a.real_json) read_completions(f, rc);
    for (const auto& f : a.sim_json) read_completions(f, sc);
    std::vector<std::string> names;
    for (const auto& [k, v] : rc) names.push_back(k);
    for (const auto& [k, v] : sc)
      if (!rc.contains(k)) names.push_back(k);
    for (const auto& side : names) {
      const std::vector<Completion>& rv = rc[side];
      const std::vector<Completion>& sv = sc[side];
      equal &= side_by_side(fmt::format("completions of \"{}\"", side), rv, sv, show_wc, false);
      wc_rows += rv.size();
    }
  }

  if (!equal) {
    std::cout << "DIFFERENT: the simulator does not reproduce the Soft-RoCE run\n";
    return kDiffer;
  }
  std::cout << fmt::format("requester: {} packets equal; responder: {}; ", req_rows, ans_rows);
  if (a.real_json.empty())
    std::cout << "completions: not compared (no JSON results given)";
  else
    std::cout << fmt::format("completions: {} equal", wc_rows);
  std::cout << fmt::format("; plain ACKs not compared (real {}, simulator {})\n", real.plain_acks,
                           sim.plain_acks);
  return kEqual;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_args(argc, argv));
  } catch (const InputError& e) {
    std::cerr << "softroce_compare: " << e.what() << "\n"
              << "usage: softroce_compare REAL.pcap SIM.pcap [--real-json A.json]... "
                 "[--sim-json S.json]...\n";
    return kBadInput;
  } catch (const std::exception& e) {
    std::cerr << "softroce_compare: " << e.what() << "\n";
    return kBadInput;
  }
}

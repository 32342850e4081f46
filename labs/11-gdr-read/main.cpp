// Lab 11: TensorFlow GDR: one RDMA READ per tensor.
//
// Read this file next to docs/en/18-lab11-gdr-read.md. TensorFlow 1.x's
// contrib/gdr transport keeps gRPC as its control plane and uses RDMA for
// the tensor bytes only:
//   - the receiver asks for a tensor (gRPC RecvTensor);
//   - the owner pins the tensor's buffer (a reference), gives it a tensor
//     key and answers with a RemoteMemoryRegion {host, port, addr, rkey,
//     tensor_key} in the response's transport options;
//   - the receiver pulls the bytes with one RDMA READ, the owner's CPU
//     takes no part in it;
//   - the receiver then posts an empty WRITE with immediate = tensor key,
//     fenced behind the READ: the owner, polling for these, drops its
//     reference to the buffer.
// In one process there is no gRPC: the control messages are SEND/RECV on
// the same RC QP, with the request and response encoded as protobuf.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "messages.hpp"
#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/peer.hpp"
#include "rdmalab/lab/run.hpp"
#include "rdmalab/lab/wire_view.hpp"
#include "rdmalab/tf/exchange.hpp"
#include "rdmalab/tf/message.hpp"
#include "rdmalab/tf/protobuf.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/wire/opcode.hpp"
#include "rdmalab/wire/psn.hpp"

using namespace rdmalab;
using i18n::tr;
using lab11::M;

namespace {

// ---------------------------------------------------------------------------
// The control messages, in protobuf's wire format (tf::pb; field numbers as
// in TF's worker.proto and gdr.proto).
using tf::kDtFloat;
using tf::pb::put_bytes;
using tf::pb::put_string;
using tf::pb::put_uint;
constexpr std::size_t kSlot = 256;  // one control message buffer

// The work requests the receiver posts: the control SEND (unsignaled), and
// per tensor the READ and the fenced release behind it.
constexpr std::uint64_t kControlWrId = 1;
constexpr std::uint64_t kReadWrId = 10;
constexpr std::uint64_t kReleaseWrId = 11;

// RecvTensorRequest {step_id = 1, rendezvous_key = 2, dma_ok = 3}.
struct TensorRequest {
  std::int64_t step_id = 0;
  std::string key;
};
std::vector<std::uint8_t> encode(const TensorRequest& r) {
  std::vector<std::uint8_t> out;
  put_uint(out, 1, static_cast<std::uint64_t>(r.step_id));
  put_string(out, 2, r.key);
  put_uint(out, 3, 1);
  return out;
}
std::optional<TensorRequest> decode_request(std::span<const std::uint8_t> b) {
  const auto f = tf::pb::parse(b);
  if (!f || !f->contains(1) || !f->contains(2)) return std::nullopt;
  return TensorRequest{static_cast<std::int64_t>(f->at(1).value), f->at(2).text()};
}

// RemoteMemoryRegion {host = 1, port = 2, addr = 3, rkey = 4, tensor_key = 5}
// (gdr.proto), with the tensor's meta-data as RecvTensorResponse carries it:
// tensor = 1 (TensorProto {dtype = 1, tensor_shape = 2 {dim = 2 {size = 1}}}),
// transport_options = 4 (TF wraps the region in a google.protobuf.Any; here
// its bytes go in directly).
struct Region {
  std::string host, port;
  std::uint64_t addr = 0;
  std::uint32_t rkey = 0, tensor_key = 0;
  std::uint32_t dtype = 0;
  std::uint64_t elements = 0;
};
std::vector<std::uint8_t> encode(const Region& r) {
  std::vector<std::uint8_t> dim, shape, tensor, region, out;
  put_uint(dim, 1, r.elements);
  put_bytes(shape, 2, dim);
  put_uint(tensor, 1, r.dtype);
  put_bytes(tensor, 2, shape);
  put_string(region, 1, r.host);
  put_string(region, 2, r.port);
  put_uint(region, 3, r.addr);
  put_uint(region, 4, r.rkey);
  put_uint(region, 5, r.tensor_key);
  put_bytes(out, 1, tensor);
  put_bytes(out, 4, region);
  return out;
}
std::optional<Region> decode_region(std::span<const std::uint8_t> b) {
  const auto f = tf::pb::parse(b);
  if (!f || !f->contains(1) || !f->contains(4)) return std::nullopt;
  const auto t = tf::pb::parse(f->at(1).bytes);
  const auto g = tf::pb::parse(f->at(4).bytes);
  if (!t || !g || !t->contains(1) || !t->contains(2)) return std::nullopt;
  const auto s = tf::pb::parse(t->at(2).bytes);
  if (!s || !s->contains(2)) return std::nullopt;
  const auto d = tf::pb::parse(s->at(2).bytes);
  if (!d || !d->contains(1)) return std::nullopt;
  for (std::uint32_t k : {1u, 2u, 3u, 4u, 5u})
    if (!g->contains(k)) return std::nullopt;
  Region r;
  r.host = g->at(1).text();
  r.port = g->at(2).text();
  r.addr = g->at(3).value;
  r.rkey = static_cast<std::uint32_t>(g->at(4).value);
  r.tensor_key = static_cast<std::uint32_t>(g->at(5).value);
  r.dtype = static_cast<std::uint32_t>(t->at(1).value);
  r.elements = d->at(1).value;
  return r;
}

// The tensor's rendezvous key, as lab 10 builds it.
const std::string kKey = tf::rendezvous_key(tf::kIncarnation);

struct Options {
  lab::CommonOptions common;
  std::uint32_t size = 4096;
  int requests = 1;
  int mtu = 1024;
};

struct Side {
  lab::Endpoint ep;
  std::vector<std::uint64_t> pool;  // tensor memory, registered once
  std::unique_ptr<verbs::MemoryRegion> pool_mr;
  std::uint64_t completions = 0;
  std::vector<double> completion_us;  // when the CPU saw each completion
  std::uint8_t* base() { return reinterpret_cast<std::uint8_t*>(pool.data()); }
  std::uint8_t* send_slot() { return ep.buf(); }
  std::uint8_t* recv_slot() { return ep.buf() + kSlot; }
};

// A tensor the owner has handed out: referenced until its release arrives.
struct Lent {
  std::uint32_t tensor_key = 0;
  bool released = false;
  double lent_us = 0, released_us = 0;
  std::uint64_t completions_between = 0;  // owner completions while it was lent
};

struct Step {
  std::int64_t step_id = 0;
  bool got_region = false, read_done = false;
  Region region;
  double start_us = 0, end_us = 0;
  bool bytes_ok = false;
  std::uint32_t read_psn = 0;
  int round_trips = 0;  // exchanges with the owner's side the receiver waited for
};

// What the chapter compares, measured the same way for both designs.
struct Measure {
  bool ok = false;
  std::uint64_t messages = 0, message_bytes = 0, packets = 0, wire_bytes = 0, copies = 0;
  std::vector<double> owner_cpu_us, receiver_cpu_us;  // when each CPU saw a completion
  double latency_us = 0;                              // the last step's
  int round_trips = 0;                                // the last step's
};

nlohmann::json measure_json(const Measure& m) {
  return {{"ok", m.ok},
          {"messages", m.messages},
          {"message_bytes", m.message_bytes},
          {"packets", m.packets},
          {"wire_bytes", m.wire_bytes},
          {"copies", m.copies},
          {"owner_cpu", m.owner_cpu_us.size()},
          {"receiver_cpu", m.receiver_cpu_us.size()},
          {"owner_cpu_us", m.owner_cpu_us},
          {"receiver_cpu_us", m.receiver_cpu_us},
          {"latency_us", m.latency_us},
          {"round_trips", m.round_trips}};
}

// RoCE packets and their bytes in a capture.
std::pair<std::uint64_t, std::uint64_t> count_wire(const lab::WireFacts& facts) {
  std::uint64_t bytes = 0;
  for (const auto* rec : facts.roce()) bytes += rec->original_length;
  return {facts.packets, bytes};
}

// Lab 10's exchange for the same tensor with an up-to-date meta-data cache
// (lab10-tf-rendezvous --scenario unchanged): TENSOR_REQUEST written into the
// responder's rx buffer, the empty ACK write, the tensor written with the
// request index as immediate. Run without narration on a fabric of its own,
// capturing to <capture>-verbs.pcap, and measured like the GDR run.
Measure verbs_run(const Options& o) {
  lab::CommonOptions c = o.common;
  c.quiet = true;
  c.json = false;
  c.step = false;
  c.capture = c.capture.substr(0, c.capture.rfind(".pcap")) + "-verbs.pcap";
  lab::Narrator q(c, "lab11");
  lab::Environment env = lab::open_environment(q, c);
  Measure m;
  const sim::Fabric* fabric = env.fabric();
  if (fabric == nullptr) return m;
  lab::Endpoint rq, rs;
  constexpr std::size_t kTensorAt = (tf::kRxAt + tf::kBufferBytes + 63) / 64 * 64;
  lab::EndpointSpec spec;
  spec.buffer = kTensorAt + o.size;
  spec.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  spec.cqe = 32;
  spec.max_wr = 32;
  lab::open_pair(q, env, rq, rs, spec, spec, c);
  rq.first_psn = lab::kRequesterFirstPsn;
  rs.first_psn = lab::kResponderFirstPsn;
  lab::ConnectSpec cs;
  cs.mtu = o.mtu;
  lab::connect_pair(q, rq, rs, cs, c, false);
  for (lab::Endpoint* e : {&rq, &rs})
    for (int i = 0; i < 4; ++i) tf::post_imm_recv(*e);
  const tf::Meta meta{tf::kDtFloat, {o.size / 4}, false, o.size};
  m.ok = true;
  for (int step = 0; step < o.requests; ++step) {
    const auto index = static_cast<std::uint32_t>(step);
    auto* src = reinterpret_cast<float*>(rs.buf() + kTensorAt);
    for (std::uint32_t k = 0; k < o.size / 4; ++k)
      src[k] = static_cast<float>(k) * 0.25f + static_cast<float>(step + 1);
    const double start = static_cast<double>(fabric->now()) / 1e3;
    tf::Message req;
    req.type = tf::MsgType::TensorRequest;
    req.name = tf::rendezvous_key(tf::kIncarnation);
    req.step_id = 7001 + step;
    req.request_index = index;
    req.remote_addr = rq.mr->va() + kTensorAt;
    req.rkey = rq.mr->rkey();
    req.meta = meta;
    const auto bytes = tf::encode(req);
    std::memcpy(rq.buf(), bytes.data(), bytes.size());
    tf::post_write_imm(rq, tf::wr_id(tf::WrKind::Message, 0),
                       rq.sge(0, static_cast<std::uint32_t>(bytes.size())), rs.mr->va() + tf::kRxAt,
                       rs.mr->rkey(), tf::kImmMessage);
    ++m.messages;
    m.message_bytes += bytes.size();
    bool arrived = false;
    // Until the fabric is idle: the step is over.
    std::array<lab::Endpoint*, 2> sides{&rq, &rs};
    (void)tf::poll_loop(
        sides,
        [&](std::size_t side, const ibv_wc& wc) {
          lab::Endpoint& e = *sides[side];
          const double now = static_cast<double>(fabric->now()) / 1e3;
          (&e == &rs ? m.owner_cpu_us : m.receiver_cpu_us).push_back(now);
          if (wc.status != IBV_WC_SUCCESS) {
            m.ok = false;
            return;
          }
          if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM) return;
          tf::post_imm_recv(e);
          const std::uint32_t imm = ntohl(wc.imm_data);
          if (&e == &rq && imm == index) {
            arrived = true;
            m.latency_us = now - start;
            m.ok = m.ok && std::memcmp(rq.buf() + kTensorAt, src, o.size) == 0;
          } else if (&e == &rs && imm == tf::kImmMessage) {
            // RdmaTensorResponse: ACK, compare, write the tensor.
            const auto got_req = tf::decode({rs.buf() + tf::kRxAt, tf::kBufferBytes});
            tf::post_write_imm(rs, tf::wr_id(tf::WrKind::Ack, 0), ibv_sge{},
                               rq.mr->va() + tf::kRxAt, rq.mr->rkey(), tf::kImmAck);
            if (!got_req || !(got_req->meta == meta)) {
              m.ok = false;
              return;
            }
            tf::post_write_imm(rs, tf::wr_id(tf::WrKind::Tensor, got_req->request_index),
                               rs.sge(kTensorAt, o.size), got_req->remote_addr, got_req->rkey,
                               static_cast<std::uint32_t>(got_req->request_index));
          }
        },
        [] { return false; });
    m.ok = m.ok && arrived;
    m.round_trips = 1;
  }
  // Its own capture, not the lab's: read once, here.
  env.fabric()->stop_capture();
  const auto [packets, wire_bytes] = count_wire(lab::read_wire(c.capture));
  m.packets = packets;
  m.wire_bytes = wire_bytes;
  return m;
}

class Lab {
 public:
  Lab(lab::Narrator& n, const Options& o, lab::Environment& env) : n_(n), o_(o), env_(env) {}
  void run();

 private:
  double now_us() const {
    if (const sim::Fabric* f = env_.fabric()) return static_cast<double>(f->now()) / 1e3;
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0_)
        .count();
  }
  void act(Side& s, const std::string& text) {
    n_.say(tr(M("act"), fmt::format("{:9.3f}", now_us()), s.ep.role, text));
  }
  void post_recv(Side& s) {
    ibv_sge sge = s.ep.sge(kSlot, kSlot);
    ibv_recv_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    verbs::check_rc(s.ep.qp->post_recv(&wr, &bad), "ibv_post_recv");
  }
  // The control channel (gRPC in TF): an unsignaled SEND, so that it leaves
  // no completion of its own on the sender's CQ.
  void send_control(Side& s, const std::vector<std::uint8_t>& msg) {
    std::memcpy(s.send_slot(), msg.data(), msg.size());
    ibv_sge sge = s.ep.sge(0, static_cast<std::uint32_t>(msg.size()));
    ibv_send_wr wr{};
    wr.wr_id = kControlWrId;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    ibv_send_wr* bad = nullptr;
    verbs::check_rc(s.ep.qp->post_send(&wr, &bad), "ibv_post_send");
    control_bytes_ += msg.size();
    ++control_messages_;
  }
  void on_receiver(const ibv_wc& wc);
  void on_owner(const ibv_wc& wc);
  bool loop(const std::function<bool()>& done);
  void verify_wire(const lab::WireFacts& facts);
  void compare();

  lab::Narrator& n_;
  const Options& o_;
  lab::Environment& env_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  Side rx_, ow_;  // the receiver pulls, the owner holds the tensor
  std::uint32_t next_key_ = 0;
  std::map<std::uint32_t, Lent> lent_;
  std::vector<Step> steps_;
  std::size_t current_ = 0;
  std::vector<std::vector<std::uint8_t>> sources_;
  std::uint64_t control_messages_ = 0, control_bytes_ = 0;
  bool wc_ok_ = true;
  Measure gdr_;
};

void Lab::on_owner(const ibv_wc& wc) {
  if (wc.opcode == IBV_WC_RECV) {
    // RecvTensor: TransportOptionsFromTensor.
    post_recv(ow_);
    const auto req = decode_request({ow_.recv_slot(), wc.byte_len});
    if (!req || req->key != kKey) {
      act(ow_, tr(M("act.bad")));
      wc_ok_ = false;
      return;
    }
    Region r;
    r.host = "10.99.0.1";
    r.port = "5001";
    r.addr = reinterpret_cast<std::uintptr_t>(ow_.base());
    r.rkey = ow_.pool_mr->rkey();
    r.tensor_key = next_key_++;
    r.dtype = kDtFloat;
    r.elements = o_.size / 4;
    Lent& l = lent_[r.tensor_key];
    l.tensor_key = r.tensor_key;
    l.lent_us = now_us();
    act(ow_,
        tr(M("act.request"), req->step_id, r.tensor_key, lab::hex(r.addr), lab::hex(r.rkey, 8)));
    const auto msg = encode(r);
    send_control(ow_, msg);
    n_.say(tr(M("post.region"), msg.size()));
    return;
  }
  if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
    // GdrMemoryManager::Run: the key names the buffer to Unref.
    post_recv(ow_);
    const std::uint32_t key = ntohl(wc.imm_data);
    auto it = lent_.find(key);
    if (it == lent_.end() || it->second.released) {
      act(ow_, tr(M("act.unknown"), key));
      wc_ok_ = false;
      return;
    }
    it->second.released = true;
    it->second.released_us = now_us();
    act(ow_, tr(M("act.release"), key, it->second.released_us - it->second.lent_us));
    return;
  }
  act(ow_, tr(M("act.bad")));
  wc_ok_ = false;
}

void Lab::on_receiver(const ibv_wc& wc) {
  Step& s = steps_[current_];
  if (wc.opcode == IBV_WC_RECV) {
    post_recv(rx_);
    const auto r = decode_region({rx_.recv_slot(), wc.byte_len});
    if (!r || r->dtype != kDtFloat || r->elements * 4 != o_.size) {
      act(rx_, tr(M("act.bad")));
      wc_ok_ = false;
      return;
    }
    s.region = *r;
    s.got_region = true;
    act(rx_, tr(M("act.region"), r->tensor_key, lab::hex(r->addr), lab::hex(r->rkey, 8),
                r->elements * 4));
    // TensorFromTransportOptions: one READ into the result tensor, then the
    // release, fenced so that it leaves only after the READ's data is back.
    ibv_sge dst{reinterpret_cast<std::uintptr_t>(rx_.base()), o_.size, rx_.pool_mr->lkey()};
    ibv_send_wr read{}, release{};
    read.wr_id = kReadWrId;
    read.sg_list = &dst;
    read.num_sge = 1;
    read.opcode = IBV_WR_RDMA_READ;  // unsignaled, as rdma_post_read(..., flags 0, ...)
    read.wr.rdma.remote_addr = r->addr;
    read.wr.rdma.rkey = r->rkey;
    read.next = &release;
    release.wr_id = kReleaseWrId;
    release.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    release.send_flags = IBV_SEND_FENCE | IBV_SEND_SIGNALED;
    release.imm_data = htonl(r->tensor_key);
    // TF names no buffer (VA 0, rkey 0; a zero-length RDMA operation needs
    // no valid R_Key, IBTA C9-88); naming the region is equally valid.
    release.wr.rdma.remote_addr = r->addr;
    release.wr.rdma.rkey = r->rkey;
    ibv_send_wr* bad = nullptr;
    verbs::check_rc(rx_.ep.qp->post_send(&read, &bad), "ibv_post_send");
    s.round_trips += 2;  // the READ's responses, then the release's ACK after the fence
    n_.say(tr(M("post.read"), o_.size, lab::hex(r->addr), lab::hex(r->rkey, 8),
              lab::hex(r->tensor_key, 8)));
    return;
  }
  if (wc.opcode == IBV_WC_RDMA_WRITE && wc.wr_id == kReleaseWrId) {
    // rdma_get_send_comp: the release is acknowledged, so the READ before it
    // is complete too.
    s.read_done = true;
    s.end_us = now_us();
    s.bytes_ok = current_ < sources_.size() &&
                 std::memcmp(rx_.base(), sources_[current_].data(), o_.size) == 0;
    act(rx_, tr(M("act.done"), s.end_us - s.start_us));
    return;
  }
  act(rx_, tr(M("act.bad")));
  wc_ok_ = false;
}

// The receiver's and the owner's polling threads, interleaved (tf::poll_loop,
// as in lab 10): each completion is counted and timed for the comparison.
bool Lab::loop(const std::function<bool()>& done) {
  std::array<lab::Endpoint*, 2> sides{&rx_.ep, &ow_.ep};
  return tf::poll_loop(
      sides,
      [&](std::size_t i, const ibv_wc& wc) {
        Side& side = i == 0 ? rx_ : ow_;
        ++side.completions;
        side.completion_us.push_back(now_us());
        if (&side == &ow_)
          for (auto& [key, l] : lent_)
            if (!l.released) ++l.completions_between;
        if (wc.status != IBV_WC_SUCCESS) {
          lab::show_wc(n_, side.ep.role, wc);
          wc_ok_ = false;
          return;
        }
        if (&side == &rx_)
          on_receiver(wc);
        else
          on_owner(wc);
      },
      done);
}

void Lab::run() {
  n_.step(tr(M("step.resources")));
  rx_.ep.role = tr(M("receiver"));
  ow_.ep.role = tr(M("owner"));
  lab::EndpointSpec spec;
  spec.buffer = 2 * kSlot;  // a send slot and a receive slot for control messages
  spec.cqe = 32;
  // The owner's control SENDs are unsignaled and it never posts a signaled
  // WR: each keeps its send queue entry, so the queue must hold them all.
  spec.max_wr = 32;
  lab::open_pair(n_, env_, rx_.ep, ow_.ep, spec, spec, o_.common);

  n_.step(tr(M("step.pools")));
  for (Side* s : {&rx_, &ow_}) {
    const int access =
        s == &ow_ ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE
                  : IBV_ACCESS_LOCAL_WRITE;
    s->pool.assign((o_.size + 7) / 8, 0);
    s->pool_mr = s->ep.pd->reg_mr(s->base(), o_.size, access);
    n_.call(s->ep.role,
            fmt::format("ibv_reg_mr(pd, pool, {}, IBV_ACCESS_{})", o_.size,
                        verbs::access_flag_names(static_cast<unsigned>(access))),
            fmt::format("lkey {}  rkey {}", lab::hex(s->pool_mr->lkey(), 8),
                        lab::hex(s->pool_mr->rkey(), 8)));
  }
  n_.say(tr(M("why.pools")));

  n_.step(tr(M("step.connect")));
  rx_.ep.first_psn = lab::kRequesterFirstPsn;
  ow_.ep.first_psn = lab::kResponderFirstPsn;
  lab::ConnectSpec c;
  c.mtu = o_.mtu;
  lab::connect_pair(n_, rx_.ep, ow_.ep, c, o_.common, false);
  for (Side* s : {&rx_, &ow_})
    for (int i = 0; i < 4; ++i) post_recv(*s);
  n_.call("ibv_post_recv(qp, wr{sge=recv slot}) x 4", "0");
  n_.say(tr(M("why.control")));

  const std::uint32_t elems = o_.size / 4;
  for (int i = 0; i < o_.requests; ++i) {
    n_.step(tr(M("step.request"), i + 1, o_.requests));
    auto* src = reinterpret_cast<float*>(ow_.base());
    for (std::uint32_t k = 0; k < elems; ++k)
      src[k] = static_cast<float>(k) * 0.25f + static_cast<float>(i + 1);
    sources_.emplace_back(ow_.base(), ow_.base() + o_.size);
    std::memset(rx_.base(), 0, o_.size);
    current_ = steps_.size();
    steps_.push_back(Step{});
    Step& s = steps_.back();
    s.step_id = 7001 + i;
    s.start_us = now_us();
    act(rx_, tr(M("act.start"), s.step_id));
    send_control(rx_, encode(TensorRequest{s.step_id, kKey}));
    s.round_trips = 1;  // the control request and its response
    const std::uint32_t key = next_key_;
    if (!loop([&] { return s.read_done && lent_.contains(key) && lent_[key].released; })) {
      n_.warn(tr(M("hung")));
      break;
    }
    n_.say(tr(M("owner_idle"), lent_[key].completions_between - 1));
  }

  n_.step(tr(M("step.verify")));
  n_.check("completions", tr(M("check.completions")), wc_ok_);
  bool bytes = steps_.size() == static_cast<std::size_t>(o_.requests);
  bool idle = bytes;
  for (const Step& s : steps_) bytes = bytes && s.read_done && s.bytes_ok;
  // Between lending the buffer and its release the owner's CQ saw exactly
  // one completion: the release itself.
  for (const auto& [key, l] : lent_) idle = idle && l.released && l.completions_between == 1;
  n_.check("tensor", tr(M("check.tensor")), bytes);
  n_.check("owner_idle", tr(M("check.idle")), idle);

  nlohmann::json reqs = nlohmann::json::array();
  for (const Step& s : steps_)
    reqs.push_back({{"step_id", s.step_id},
                    {"tensor_key", s.region.tensor_key},
                    {"latency_us", s.end_us - s.start_us},
                    {"round_trips", s.round_trips}});
  n_.result()["requests"] = reqs;
  n_.result()["cpu_actions"] = {{"receiver", rx_.completions}, {"owner", ow_.completions}};
  n_.result()["copies"] = 0;
  n_.say(tr(M("cpu"), rx_.ep.role, rx_.completions, ow_.ep.role, ow_.completions));
  gdr_.ok = wc_ok_ && bytes && idle;
  gdr_.messages = control_messages_;
  gdr_.message_bytes = control_bytes_;
  gdr_.owner_cpu_us = ow_.completion_us;
  gdr_.receiver_cpu_us = rx_.completion_us;
  if (!steps_.empty()) {
    gdr_.latency_us = steps_.back().end_us - steps_.back().start_us;
    gdr_.round_trips = steps_.back().round_trips;
  }
  if (const auto facts = lab::finish_wire(n_, env_, o_.common.capture)) {
    verify_wire(*facts);
    compare();
  }
  lab::suggest(n_, {tr(M("try.1")), tr(M("try.2")), tr(M("try.3"), o_.common.capture)});
}

// The capture's records: the control SENDs decoded, the READ's request and
// responses matched by PSN, the release's immediate.
void Lab::verify_wire(const lab::WireFacts& facts) {
  const std::string ip = lab::wire_address(rx_.ep);
  n_.step(tr(M("step.wire")));
  std::uint64_t packets = 0, bytes = 0, read_requests = 0, read_responses = 0, sends = 0;
  bool psn_ok = true, imm_ok = true, control_ok = true, reth_ok = true;
  std::optional<std::uint32_t> read_psn;
  std::uint32_t expect_resp = 0, resp_left = 0;
  std::size_t step = 0;
  std::vector<std::uint32_t> release_imms;
  std::int64_t read_first_ns = -1, read_last_ns = -1;
  bool window_ok = true;  // every READ response left while its buffer was lent
  if (!facts.readable) psn_ok = false;
  for (const dissect::PacketRecord* p : facts.roce()) {
    const dissect::PacketRecord& rec = *p;
    if (rec.op == nullptr) continue;
    ++packets;
    bytes += rec.original_length;
    const wire::IbPacket& ib = *rec.decoded.ib;
    const auto src = rec.decoded.src_address();
    const bool from_rx = src && src->to_string() == ip;
    const std::string dir = from_rx ? tr(M("dir.rx")) : tr(M("dir.ow"));
    switch (rec.op->operation) {
      case wire::Operation::Send: {
        ++sends;
        if (from_rx) {
          const auto r = decode_request(ib.payload);
          control_ok = control_ok && r && r->key == kKey;
          if (r) n_.say(tr(M("wire.request"), rec.frame, dir, ib.payload_length, r->step_id));
        } else {
          const auto r = decode_region(ib.payload);
          control_ok = control_ok && r && r->addr == reinterpret_cast<std::uintptr_t>(ow_.base());
          if (r)
            n_.say(tr(M("wire.region"), rec.frame, dir, ib.payload_length, r->host, r->port,
                      lab::hex(r->addr), lab::hex(r->rkey, 8), r->tensor_key));
        }
        break;
      }
      case wire::Operation::ReadRequest: {
        ++read_requests;
        read_psn = ib.bth.psn;
        const std::uint32_t len = ib.reth ? ib.reth->dma_len : 0;
        resp_left =
            (len + static_cast<std::uint32_t>(o_.mtu) - 1) / static_cast<std::uint32_t>(o_.mtu);
        expect_resp = ib.bth.psn;
        reth_ok = reth_ok && ib.reth &&
                  ib.reth->va == reinterpret_cast<std::uintptr_t>(ow_.base()) &&
                  ib.reth->rkey == ow_.pool_mr->rkey() && len == o_.size;
        read_first_ns = -1;
        n_.say(tr(M("wire.read"), rec.frame, dir, lab::hex(ib.bth.psn, 6), len, resp_left));
        if (step < steps_.size()) steps_[step].read_psn = ib.bth.psn;
        break;
      }
      case wire::Operation::ReadResponse: {
        ++read_responses;
        psn_ok = psn_ok && read_psn && resp_left > 0 && ib.bth.psn == expect_resp;
        expect_resp = wire::psn_add(expect_resp, 1);
        if (resp_left > 0) --resp_left;
        if (read_first_ns < 0) read_first_ns = rec.time_ns;
        read_last_ns = rec.time_ns;
        n_.say(tr(M("wire.response"), rec.frame, dir, rec.op->name, lab::hex(ib.bth.psn, 6),
                  ib.payload_length));
        break;
      }
      case wire::Operation::Write: {
        // The release: the PSN right after the READ's last response PSN.
        const std::uint32_t imm = ib.immdt.value_or(0xFFFFFFFF);
        release_imms.push_back(imm);
        psn_ok = psn_ok && read_psn && resp_left == 0 && ib.bth.psn == expect_resp;
        imm_ok = imm_ok && ib.immdt && ib.payload_length == 0 && from_rx && step < steps_.size() &&
                 imm == steps_[step].region.tensor_key;
        n_.say(tr(M("wire.release"), rec.frame, dir, lab::hex(ib.bth.psn, 6), lab::hex(imm, 8),
                  ib.payload_length));
        if (step < steps_.size()) {
          const Lent& l = lent_[steps_[step].region.tensor_key];
          window_ok = window_ok && read_first_ns >= 0 &&
                      static_cast<double>(read_first_ns) >= l.lent_us * 1e3 - 1 &&
                      static_cast<double>(read_last_ns) <= l.released_us * 1e3 + 1;
          n_.say(tr(M("wire.window"), static_cast<double>(read_first_ns) / 1e3,
                    static_cast<double>(read_last_ns) / 1e3, l.lent_us, l.released_us));
        }
        ++step;
        read_psn.reset();
        break;
      }
      default: break;
    }
  }
  const auto n = static_cast<std::uint64_t>(o_.requests);
  const std::uint64_t per_read =
      (o_.size + static_cast<std::uint32_t>(o_.mtu) - 1) / static_cast<std::uint32_t>(o_.mtu);
  n_.check("control", tr(M("check.control")), control_ok && sends == 2 * n);
  n_.check("read", tr(M("check.read")),
           reth_ok && read_requests == n && read_responses == n * per_read);
  n_.check("psn", tr(M("check.psn")), psn_ok && release_imms.size() == n);
  n_.check("release", tr(M("check.release")), imm_ok && release_imms.size() == n);
  n_.check("window", tr(M("check.window")), window_ok && step == n);
  n_.result()["measure"] = {{"packets", packets},
                            {"wire_bytes", bytes},
                            {"messages", control_messages_},
                            {"message_bytes", control_bytes_},
                            {"read_requests", read_requests},
                            {"read_responses", read_responses}};
  n_.result()["release_imms"] = release_imms;
  gdr_.packets = packets;
  gdr_.wire_bytes = bytes;
  n_.say(tr(M("measure"), packets, bytes, control_messages_, control_bytes_, read_requests,
            read_responses));
}

std::string times(const std::vector<double>& us) {
  std::string out;
  for (double t : us) out += fmt::format("{}{:.3f}", out.empty() ? "" : ", ", t);
  return out;
}

// The same tensor, the lab 10 way, measured on a fabric of its own.
void Lab::compare() {
  n_.step(tr(M("step.compare"), o_.size, o_.requests));
  const Measure v = verbs_run(o_);
  const Measure& g = gdr_;
  n_.check("verbs_run", tr(M("check.verbs_run")), v.ok);
  n_.say(tr(M("cmp.messages"), v.messages, v.message_bytes, g.messages, g.message_bytes));
  n_.say(tr(M("cmp.packets"), v.packets, v.wire_bytes, g.packets, g.wire_bytes));
  n_.say(tr(M("cmp.copies"), v.copies, g.copies));
  n_.say(tr(M("cmp.owner"), v.owner_cpu_us.size(), g.owner_cpu_us.size()));
  n_.field(tr(M("cmp.lab10")), times(v.owner_cpu_us));
  n_.field(tr(M("cmp.lab11")), times(g.owner_cpu_us));
  n_.say(tr(M("cmp.receiver"), v.receiver_cpu_us.size(), g.receiver_cpu_us.size()));
  n_.field(tr(M("cmp.lab10")), times(v.receiver_cpu_us));
  n_.field(tr(M("cmp.lab11")), times(g.receiver_cpu_us));
  n_.say(tr(M("cmp.time"), v.round_trips, v.latency_us, g.round_trips, g.latency_us));
  n_.result()["compare"] = {{"lab10", measure_json(v)}, {"lab11", measure_json(g)}};
  // What GDR is for: the tensor's owner does less per tensor.
  n_.check("owner_cpu", tr(M("check.owner_cpu")),
           v.ok && g.ok && g.owner_cpu_us.size() < v.owner_cpu_us.size() && g.copies == 0);
}

void run_lab(lab::Narrator& n, const Options& o) {
  lab::require_one_process(o.common);
  if (o.size % 4 != 0) throw verbs::UsageError(tr(M("bad_size"), o.size));
  n.step(tr(M("step.backend")));
  lab::Environment env = lab::open_environment(n, o.common);
  Lab lab(n, o, env);
  lab.run();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const auto options = [&](lab::CommandLine& app) {
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(lab::Range(4u, 1u << 24))
        ->capture_default_str();
    app.add_option("-n,--requests", o.requests, tr(M("opt.requests")))
        ->check(lab::Range(1, 16))
        ->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
  };
  return lab::run(argc, argv, "lab11", "lab11-gdr-read", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}

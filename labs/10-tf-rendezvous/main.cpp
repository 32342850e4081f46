// Lab 10: TensorFlow's verbs rendezvous.
//
// Read this file next to docs/en/17-lab10-tf-rendezvous.md. TensorFlow 1.x's
// contrib/verbs transport (the "verbs with 0 copies" design) moves a tensor
// from the worker that produced it (the responder, TF's "sender") to the
// worker that asked for it (the requester, TF's "receiver"):
//   - every control message is one RDMA WRITE with immediate 0xFFFFFFFF from
//     the local tx message buffer into the peer's rx message buffer, and the
//     peer answers each one with an empty WRITE with immediate 0xFFFFFFFE
//     (the ACK) before the next message may be written;
//   - the requester sends TENSOR_REQUEST with the address and rkey of the
//     result tensor and the tensor's meta-data as its cache knows it;
//   - the responder compares: unchanged -> it writes the tensor straight
//     into the result tensor with WRITE with immediate = the request index;
//     changed -> it clones the tensor, sends META_DATA_UPDATE, the requester
//     re-allocates and sends TENSOR_RE_REQUEST, then the write follows;
//     failure -> ERROR_STATUS.
// Both sides are plain event loops over one CQ, as TF's polling thread is.
// The message layout and its codec, the writes and the polling loop are in
// labs/support/tf (lab 11 uses them too, to run this exchange next to its own).
#include <arpa/inet.h>
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <deque>
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
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/wire/opcode.hpp"

using namespace rdmalab;
using i18n::tr;
using lab10::M;
using namespace rdmalab::tf;

namespace {

// ---------------------------------------------------------------------------
// The two workers.

// A bump allocator over one registered pool: TF allocates tensors from
// memory its allocators registered once, so a tensor's address changes with
// each allocation but its rkey does not.
struct Pool {
  std::vector<std::uint64_t> storage;
  std::unique_ptr<verbs::MemoryRegion> mr;
  std::size_t used = 0;
  std::uint8_t* base() { return reinterpret_cast<std::uint8_t*>(storage.data()); }
  std::size_t alloc(std::size_t bytes) {
    const std::size_t at = used;
    used += (bytes + 63) / 64 * 64;
    return at;
  }
};

struct Worker {
  lab::Endpoint ep;
  Pool pool;
  // Where the peer's rx message buffer is (exchanged at set-up; TF does it
  // over gRPC).
  std::uint64_t peer_rx = 0;
  std::uint32_t peer_rx_rkey = 0;
  // RdmaMessageBuffer: one message in flight; the next waits for both the
  // local write completion and the peer's ACK.
  bool local_busy = false, remote_busy = false;
  std::deque<std::vector<std::uint8_t>> queue;
  std::uint64_t cpu_actions = 0;
  std::uint8_t* tx() { return ep.buf(); }
  std::uint8_t* rx() { return ep.buf() + kRxAt; }
};

struct Options {
  lab::CommonOptions common;
  std::string scenario = "changed";
  std::uint32_t size = 4096;
  int requests = 2;
  int mtu = 1024;
};

// A message or tensor write posted by a worker, as the lab meant it.
struct Posted {
  bool from_requester = false;
  std::string what;  // "TENSOR_REQUEST #0", "ACK", "tensor #0"
};

struct Request {
  std::uint32_t index = 0;
  std::int64_t step_id = 0;
  std::string key;
  std::size_t result_at = 0;  // offset of the result tensor in the requester's pool
  std::uint64_t result_bytes = 0;
  bool done = false, got_tensor = false, got_error = false, bytes_ok = false;
  std::int32_t error_code = 0;
  std::string error_message;
  double start_us = 0, end_us = 0;
  int round_trips = 0;
};

struct Response {
  Message request;
  std::size_t clone_at = 0;
  bool cloned = false;
};

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
  void act(Worker& w, const std::string& text) {
    n_.say(tr(M("act"), fmt::format("{:9.3f}", now_us()), w.ep.role, text));
  }
  void enqueue(Worker& w, const Message& m) {
    w.queue.push_back(encode(m));
    posted_.push_back({&w == &rq_, fmt::format("{} #{}", type_name(m.type), m.request_index)});
    send_next(w);
  }
  // RdmaMessageBuffer::SendNextItem.
  void send_next(Worker& w) {
    if (w.queue.empty() || w.local_busy || w.remote_busy) return;
    const auto msg = std::move(w.queue.front());
    w.queue.pop_front();
    w.local_busy = w.remote_busy = true;
    std::memcpy(w.tx(), msg.data(), msg.size());
    post_write_imm(w.ep, wr_id(WrKind::Message, 0),
                   w.ep.sge(0, static_cast<std::uint32_t>(msg.size())), w.peer_rx, w.peer_rx_rkey,
                   kImmMessage);
    messages_bytes_ += msg.size();
    n_.say(tr(M("post.message"), w.ep.role, type_name(static_cast<MsgType>(msg[kTypeAt])),
              msg.size(), lab::hex(kImmMessage, 8)));
  }
  void send_ack(Worker& w) {
    // TF's ACK names no buffer at all (VA 0, rkey 0: a zero-length RDMA
    // operation needs no valid R_Key, IBTA C9-88); naming the peer's rx
    // buffer is equally valid and works on every implementation.
    post_write_imm(w.ep, wr_id(WrKind::Ack, 0), ibv_sge{}, w.peer_rx, w.peer_rx_rkey, kImmAck);
    posted_.push_back({&w == &rq_, "ACK"});
  }

  void start_request(Request& r);
  void on_requester(const ibv_wc& wc);
  void on_responder(const ibv_wc& wc);
  void respond(Response& resp);
  void send_content(Response& resp, std::uint64_t src_offset);
  bool loop(const std::function<bool()>& done);
  void verify_wire(const lab::WireFacts& facts);

  lab::Narrator& n_;
  const Options& o_;
  lab::Environment& env_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  Worker rq_, rs_;
  Meta cache_;        // the requester's meta-data cache
  Meta source_meta_;  // the responder's tensor as it is now
  std::size_t source_at_ = 0;
  std::map<std::uint32_t, Request> requests_;
  std::map<std::uint32_t, Response> responses_;
  std::vector<Posted> posted_;
  std::vector<std::vector<std::uint8_t>> sources_;  // the tensor sent for each request
  std::uint64_t copies_ = 0, copied_bytes_ = 0, messages_bytes_ = 0;
  bool wc_ok_ = true;
};

void Lab::start_request(Request& r) {
  // RdmaTensorRequest::Start: allocate the result tensor from the cached
  // meta-data, then send TENSOR_REQUEST.
  rq_.pool.used = 0;
  r.result_bytes = cache_.bytes;
  r.result_at = rq_.pool.alloc(cache_.bytes);
  r.start_us = now_us();
  r.round_trips = 1;
  act(rq_, tr(M("act.start"), r.index, shape_text(cache_.shape), cache_.bytes,
              lab::hex(rq_.pool.mr->va() + r.result_at), lab::hex(rq_.pool.mr->rkey(), 8)));
  Message m;
  m.type = MsgType::TensorRequest;
  m.name = r.key;
  m.step_id = r.step_id;
  m.request_index = r.index;
  m.remote_addr = rq_.pool.mr->va() + r.result_at;
  m.rkey = rq_.pool.mr->rkey();
  m.meta = cache_;
  enqueue(rq_, m);
}

void Lab::on_requester(const ibv_wc& wc) {
  if (wc.opcode == IBV_WC_RDMA_WRITE) {
    if (wr_kind(wc.wr_id) == WrKind::Message) {
      rq_.local_busy = false;
      send_next(rq_);
    }
    return;  // TF does no work for the completion of an ACK write either
  }
  if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM) return;
  post_imm_recv(rq_.ep);
  const std::uint32_t imm = ntohl(wc.imm_data);
  if (imm == kImmAck) {
    act(rq_, tr(M("act.ack"), lab::hex(imm, 8)));
    rq_.remote_busy = false;
    send_next(rq_);
    return;
  }
  if (imm <= kImmMaxRequest) {
    auto it = requests_.find(imm);
    if (it == requests_.end()) {
      act(rq_, tr(M("act.unknown"), imm));
      wc_ok_ = false;
      return;
    }
    Request& r = it->second;
    r.got_tensor = r.done = true;
    r.end_us = now_us();
    // The done callback consumes the result tensor now: check it now, before
    // the next step's allocation reuses the memory.
    r.bytes_ok =
        r.result_bytes == wc.byte_len && r.index < sources_.size() &&
        sources_[r.index].size() == r.result_bytes &&
        std::memcmp(rq_.pool.base() + r.result_at, sources_[r.index].data(), r.result_bytes) == 0;
    act(rq_, tr(M("act.tensor"), lab::hex(imm, 8), wc.byte_len, r.index));
    return;
  }
  const auto m = decode({rq_.rx(), kBufferBytes});
  send_ack(rq_);
  if (!m || !requests_.contains(static_cast<std::uint32_t>(m->request_index))) {
    act(rq_, tr(M("act.bad_message")));
    wc_ok_ = false;
    return;
  }
  Request& r = requests_[static_cast<std::uint32_t>(m->request_index)];
  if (m->type == MsgType::MetaDataUpdate) {
    // RdmaTensorRequest::RecvTensorMetaData: update the cache, re-allocate,
    // re-request.
    act(rq_, tr(M("act.update"), r.index, shape_text(m->meta.shape), m->meta.bytes));
    cache_ = m->meta;
    r.result_bytes = cache_.bytes;
    r.result_at = rq_.pool.alloc(cache_.bytes);
    ++r.round_trips;
    n_.say(tr(M("realloc"), cache_.bytes, lab::hex(rq_.pool.mr->va() + r.result_at)));
    Message re;
    re.type = MsgType::TensorReRequest;
    re.name = r.key;
    re.step_id = r.step_id;
    re.request_index = r.index;
    re.remote_addr = rq_.pool.mr->va() + r.result_at;
    re.rkey = rq_.pool.mr->rkey();
    re.meta = cache_;
    enqueue(rq_, re);
  } else if (m->type == MsgType::ErrorStatus) {
    act(rq_, tr(M("act.error"), r.index, m->error_code, m->error_message));
    r.got_error = r.done = true;
    r.error_code = m->error_code;
    r.error_message = m->error_message;
    r.end_us = now_us();
  } else {
    act(rq_, tr(M("act.bad_message")));
    wc_ok_ = false;
  }
}

void Lab::on_responder(const ibv_wc& wc) {
  if (wc.opcode == IBV_WC_RDMA_WRITE) {
    const WrKind kind = wr_kind(wc.wr_id);
    if (kind == WrKind::Message) {
      rs_.local_busy = false;
      send_next(rs_);
    } else if (kind == WrKind::Tensor) {
      // RdmaTensorResponse::Destroy: the write is done, the source may go.
      act(rs_, tr(M("act.destroy"), wr_index(wc.wr_id)));
      responses_.erase(static_cast<std::uint32_t>(wr_index(wc.wr_id)));
    }
    return;
  }
  if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM) return;
  post_imm_recv(rs_.ep);
  const std::uint32_t imm = ntohl(wc.imm_data);
  if (imm == kImmAck) {
    act(rs_, tr(M("act.ack"), lab::hex(imm, 8)));
    rs_.remote_busy = false;
    send_next(rs_);
    return;
  }
  if (imm != kImmMessage) {
    act(rs_, tr(M("act.unknown"), imm));
    wc_ok_ = false;
    return;
  }
  const auto m = decode({rs_.rx(), kBufferBytes});
  send_ack(rs_);
  if (!m) {
    act(rs_, tr(M("act.bad_message")));
    wc_ok_ = false;
    return;
  }
  const auto index = static_cast<std::uint32_t>(m->request_index);
  if (m->type == MsgType::TensorRequest) {
    act(rs_, tr(M("act.request"), m->request_index, shape_text(m->meta.shape), m->meta.bytes));
    Response& resp = responses_[index];
    resp = Response{};
    resp.request = *m;
    respond(resp);
  } else if (m->type == MsgType::TensorReRequest && responses_.contains(index)) {
    // RdmaTensorResponse::Resume: write the clone to the new address.
    Response& resp = responses_[index];
    act(rs_, tr(M("act.rerequest"), index, lab::hex(m->remote_addr), lab::hex(m->rkey, 8)));
    resp.request = *m;
    send_content(resp, resp.clone_at);
  } else {
    act(rs_, tr(M("act.bad_message")));
    wc_ok_ = false;
  }
}

// RdmaTensorResponse::Start and RecvHandler.
void Lab::respond(Response& resp) {
  const Message& rq = resp.request;
  const auto inc = key_incarnation(rq.name);
  if (!inc || *inc != kIncarnation) {
    // PrepareRecvTensor: the key names an incarnation of our device that no
    // longer exists: the requester talks to a worker that was restarted.
    Message e;
    e.type = MsgType::ErrorStatus;
    e.request_index = rq.request_index;
    e.error_code = kAborted;
    // The status text travels as TF writes it (English), as protocol data.
    e.error_message = fmt::format(
        "RecvTensor expects a different device incarnation: {} vs. {}. Your worker job "
        "(\"/job:worker/replica:0/task:1\") was probably restarted.",
        inc.value_or(0), kIncarnation);
    n_.say(tr(M("why.error"), fmt::format("{:016x}", inc.value_or(0)),
              fmt::format("{:016x}", kIncarnation)));
    enqueue(rs_, e);
    responses_.erase(static_cast<std::uint32_t>(rq.request_index));
    return;
  }
  if (!(rq.meta == source_meta_)) {
    // Meta-data changed: clone the tensor (it may change before the
    // re-request arrives) and tell the requester the new meta-data.
    resp.clone_at = rs_.pool.alloc(source_meta_.bytes);
    std::memcpy(rs_.pool.base() + resp.clone_at, rs_.pool.base() + source_at_, source_meta_.bytes);
    resp.cloned = true;
    ++copies_;
    copied_bytes_ += source_meta_.bytes;
    n_.say(tr(M("why.changed"), shape_text(rq.meta.shape), shape_text(source_meta_.shape),
              source_meta_.bytes));
    Message u;
    u.type = MsgType::MetaDataUpdate;
    u.request_index = rq.request_index;
    u.meta = source_meta_;
    enqueue(rs_, u);
    return;
  }
  n_.say(tr(M("why.unchanged"), shape_text(source_meta_.shape)));
  send_content(resp, source_at_);
}

// RdmaTensorResponse::SendContent: one WRITE with immediate, from the
// registered tensor straight into the requester's result tensor.
void Lab::send_content(Response& resp, std::uint64_t src_offset) {
  const Message& rq = resp.request;
  const auto len = static_cast<std::uint32_t>(source_meta_.bytes);
  post_write_imm(rs_.ep, wr_id(WrKind::Tensor, rq.request_index),
                 ibv_sge{reinterpret_cast<std::uintptr_t>(rs_.pool.base() + src_offset), len,
                         rs_.pool.mr->lkey()},
                 rq.remote_addr, rq.rkey, static_cast<std::uint32_t>(rq.request_index));
  posted_.push_back({false, fmt::format("tensor #{}", rq.request_index)});
  n_.say(tr(M("post.tensor"), len, lab::hex(rq.remote_addr), lab::hex(rq.rkey, 8),
            lab::hex(static_cast<std::uint32_t>(rq.request_index), 8)));
}

// Both workers' polling threads, interleaved (tf::poll_loop): every
// completion wakes its worker's thread, which handles it.
bool Lab::loop(const std::function<bool()>& done) {
  std::array<lab::Endpoint*, 2> sides{&rq_.ep, &rs_.ep};
  return poll_loop(
      sides,
      [&](std::size_t side, const ibv_wc& wc) {
        Worker& w = side == 0 ? rq_ : rs_;
        ++w.cpu_actions;  // every completion wakes the worker's polling thread
        if (wc.status != IBV_WC_SUCCESS) {
          lab::show_wc(n_, w.ep.role, wc);
          wc_ok_ = false;
          return;
        }
        if (side == 0)
          on_requester(wc);
        else
          on_responder(wc);
      },
      done);
}

// ---------------------------------------------------------------------------
// What went on the wire, from the capture's records: every RDMA WRITE
// message reassembled, its immediate classified, its payload decoded.
struct WireWrite {
  bool from_requester = false;
  std::uint64_t frame = 0;
  std::uint32_t psn = 0;
  std::optional<std::uint32_t> imm;
  std::uint64_t va = 0;
  std::uint32_t rkey = 0, length = 0;
  std::vector<std::uint8_t> payload;
  std::string opcodes;
};

struct WireStats {
  std::uint64_t packets = 0, bytes = 0;
  std::vector<WireWrite> writes;
};

WireStats wire_stats(const lab::WireFacts& facts, const std::string& requester_ip) {
  WireStats s;
  std::map<bool, WireWrite> open;  // a multi-packet WRITE in progress, per direction
  for (const dissect::PacketRecord* r : facts.roce()) {
    const dissect::PacketRecord& rec = *r;
    ++s.packets;
    s.bytes += rec.original_length;
    const wire::OpcodeInfo* op = rec.op;
    if (op == nullptr || op->operation != wire::Operation::Write) continue;
    const wire::IbPacket& ib = *rec.decoded.ib;
    const auto src = rec.decoded.src_address();
    const bool from_rq = src && src->to_string() == requester_ip;
    WireWrite& w = open[from_rq];
    if (op->position == wire::Position::First || op->position == wire::Position::Only) {
      w = WireWrite{};
      w.from_requester = from_rq;
      w.frame = rec.frame;
      w.psn = ib.bth.psn;
      if (ib.reth) {
        w.va = ib.reth->va;
        w.rkey = ib.reth->rkey;
        w.length = ib.reth->dma_len;
      }
    }
    if (!w.opcodes.empty()) w.opcodes += ", ";
    w.opcodes += op->name;
    w.payload.insert(w.payload.end(), ib.payload.begin(), ib.payload.end());
    if (op->position == wire::Position::Last || op->position == wire::Position::Only) {
      w.imm = ib.immdt;
      s.writes.push_back(std::move(w));
      open.erase(from_rq);
    }
  }
  return s;
}

std::string hex_bytes(std::span<const std::uint8_t> b) {
  std::string out;
  for (std::size_t i = 0; i < b.size(); ++i) out += fmt::format("{}{:02x}", i ? " " : "", b[i]);
  return out;
}

void Lab::run() {
  const bool changed = o_.scenario == "changed";
  const bool error = o_.scenario == "error";
  const std::uint32_t elems = o_.size / 4;
  source_meta_ = Meta{kDtFloat, {elems}, false, o_.size};
  // What the requester's cache holds from the previous step.
  cache_ =
      changed ? Meta{kDtFloat, {elems / 2}, false, std::uint64_t{elems / 2} * 4} : source_meta_;

  n_.step(tr(M("step.resources")));
  rq_.ep.role = tr(M("requester"));
  rs_.ep.role = tr(M("responder"));
  lab::EndpointSpec spec;
  spec.buffer = kRxAt + kBufferBytes;  // tx and rx message buffers
  spec.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  spec.cqe = 64;
  spec.max_wr = 32;
  lab::open_pair(n_, env_, rq_.ep, rs_.ep, spec, spec, o_.common);
  n_.say(tr(M("why.msgbuf"), kBufferBytes, kMessageBytes, kErrorStatusMax));

  n_.step(tr(M("step.pools")));
  for (Worker* w : {&rq_, &rs_}) {
    const std::size_t bytes = 2 * std::size_t{o_.size} + 128;
    w->pool.storage.assign(bytes / 8, 0);
    w->pool.mr =
        w->ep.pd->reg_mr(w->pool.base(), bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    n_.call(w->ep.role,
            fmt::format("ibv_reg_mr(pd, pool, {}, IBV_ACCESS_LOCAL_WRITE|"
                        "IBV_ACCESS_REMOTE_WRITE)",
                        bytes),
            fmt::format("lkey {}  rkey {}", lab::hex(w->pool.mr->lkey(), 8),
                        lab::hex(w->pool.mr->rkey(), 8)));
  }
  n_.say(tr(M("why.pool")));
  source_at_ = rs_.pool.alloc(o_.size);
  n_.say(tr(M("source"), shape_text(source_meta_.shape), o_.size, rendezvous_key(kIncarnation)));
  n_.say(tr(M("cache"), shape_text(cache_.shape), cache_.bytes));

  n_.step(tr(M("step.connect")));
  rq_.ep.first_psn = lab::kRequesterFirstPsn;
  rs_.ep.first_psn = lab::kResponderFirstPsn;
  lab::ConnectSpec c;
  c.mtu = o_.mtu;
  lab::connect_pair(n_, rq_.ep, rs_.ep, c, o_.common, false);
  rq_.peer_rx = reinterpret_cast<std::uintptr_t>(rs_.rx());
  rq_.peer_rx_rkey = rs_.ep.mr->rkey();
  rs_.peer_rx = reinterpret_cast<std::uintptr_t>(rq_.rx());
  rs_.peer_rx_rkey = rq_.ep.mr->rkey();
  n_.say(tr(M("why.rx_exchange")));
  n_.field(tr(M("rx_of"), rs_.ep.role),
           fmt::format("{} rkey {}", lab::hex(rq_.peer_rx), lab::hex(rq_.peer_rx_rkey, 8)));
  n_.field(tr(M("rx_of"), rq_.ep.role),
           fmt::format("{} rkey {}", lab::hex(rs_.peer_rx), lab::hex(rs_.peer_rx_rkey, 8)));

  n_.step(tr(M("step.recv")));
  for (Worker* w : {&rq_, &rs_})
    for (int i = 0; i < 8; ++i) post_imm_recv(w->ep);
  n_.call("ibv_post_recv(qp, wr{num_sge=0}) x 8", "0");
  n_.say(tr(M("why.recv")));

  for (int i = 0; i < o_.requests; ++i) {
    const auto index = static_cast<std::uint32_t>(i);
    n_.step(tr(M("step.request"), i + 1, o_.requests));
    // The responder's tensor of this step: new values, same meta-data.
    auto* src = reinterpret_cast<float*>(rs_.pool.base() + source_at_);
    for (std::uint32_t k = 0; k < elems; ++k)
      src[k] = static_cast<float>(k) * 0.5f + static_cast<float>(i + 1);
    sources_.emplace_back(rs_.pool.base() + source_at_, rs_.pool.base() + source_at_ + o_.size);
    Request& r = requests_[index];
    r.index = index;
    r.step_id = 7001 + i;
    r.key = rendezvous_key(error ? kOldIncarnation : kIncarnation);
    start_request(r);
    if (!loop([&] {
          return r.done && responses_.empty() && rq_.queue.empty() && rs_.queue.empty() &&
                 !rq_.remote_busy && !rs_.remote_busy && !rq_.local_busy && !rs_.local_busy;
        })) {
      n_.warn(tr(M("hung")));
      break;
    }
    if (r.got_tensor)
      n_.say(tr(M("done.tensor"), r.index, r.end_us - r.start_us, r.round_trips));
    else if (r.got_error)
      n_.say(tr(M("done.error"), r.index, r.end_us - r.start_us));
  }

  n_.step(tr(M("step.verify")));
  n_.check("completions", tr(M("check.completions")), wc_ok_);
  bool bytes_ok = !error;
  bool errors_ok = error;
  for (auto& [index, r] : requests_) {
    if (error) {
      errors_ok = errors_ok && r.got_error && !r.got_tensor && r.error_code == kAborted;
    } else {
      bytes_ok = bytes_ok && r.got_tensor && r.bytes_ok;
    }
  }
  if (error)
    n_.check("error_status", tr(M("check.error")),
             errors_ok && requests_.size() == static_cast<std::size_t>(o_.requests));
  else
    n_.check("tensor", tr(M("check.tensor")),
             bytes_ok && requests_.size() == static_cast<std::size_t>(o_.requests));
  if (changed) n_.check("clone", tr(M("check.clone")), copies_ == 1 && cache_ == source_meta_);

  // The numbers lab 11 compares with.
  nlohmann::json reqs = nlohmann::json::array();
  for (const auto& [index, r] : requests_)
    reqs.push_back({{"index", index},
                    {"tensor", r.got_tensor},
                    {"error", r.got_error},
                    {"error_code", r.error_code},
                    {"latency_us", r.end_us - r.start_us},
                    {"round_trips", r.round_trips}});
  n_.result()["requests"] = reqs;
  n_.result()["scenario"] = o_.scenario;
  n_.result()["cpu_actions"] = {{"requester", rq_.cpu_actions}, {"responder", rs_.cpu_actions}};
  n_.result()["copies"] = copies_;
  n_.result()["copied_bytes"] = copied_bytes_;
  nlohmann::json posted = nlohmann::json::array();
  for (const auto& p : posted_)
    posted.push_back({{"from", p.from_requester ? "requester" : "responder"}, {"what", p.what}});
  n_.result()["posted"] = posted;
  n_.say(tr(M("cpu"), rq_.ep.role, rq_.cpu_actions, rs_.ep.role, rs_.cpu_actions, copies_,
            copied_bytes_));

  if (const auto facts = lab::finish_wire(n_, env_, o_.common.capture)) verify_wire(*facts);
  lab::suggest(n_,
               {tr(M("try.1")), tr(M("try.2")), tr(M("try.3")), tr(M("try.4"), o_.common.capture)});
}

void Lab::verify_wire(const lab::WireFacts& facts) {
  // The requester is sim1: its address as its packets show it.
  const std::string ip = lab::wire_address(rq_.ep);
  if (!facts.readable) {
    n_.check("sequence", tr(M("check.sequence")), false);
    return;
  }
  const WireStats ws = wire_stats(facts, ip);
  n_.step(tr(M("step.wire")));
  std::vector<std::string> seen;  // messages and tensors, in wire order
  std::uint64_t acks_to_rq = 0, acks_to_rs = 0, msgs_from_rq = 0, msgs_from_rs = 0;
  bool imm_ok = true, fields_ok = true, ack_ok = true;
  std::map<std::uint64_t, Message> last_request;  // by index: where the tensor must go
  std::map<std::uint64_t, std::uint64_t> expected_len;
  std::map<MsgType, bool> dumped;
  nlohmann::json wj = nlohmann::json::array();
  for (const WireWrite& w : ws.writes) {
    const std::string dir = w.from_requester ? tr(M("dir.rq")) : tr(M("dir.rs"));
    const std::uint32_t imm = w.imm.value_or(0);
    nlohmann::json j{{"frame", w.frame},
                     {"from", w.from_requester ? "requester" : "responder"},
                     {"psn", w.psn},
                     {"length", w.length},
                     {"opcodes", w.opcodes}};
    if (w.imm) j["imm"] = imm;
    if (!w.imm) {
      imm_ok = false;
      n_.say(tr(M("wire.noimm"), w.frame, dir, w.opcodes));
    } else if (imm == kImmAck) {
      ack_ok = ack_ok && w.length == 0;
      (w.from_requester ? acks_to_rs : acks_to_rq) += 1;
      j["kind"] = "ack";
      n_.say(tr(M("wire.ack"), w.frame, dir, lab::hex(imm, 8), w.length));
    } else if (imm == kImmMessage) {
      (w.from_requester ? msgs_from_rq : msgs_from_rs) += 1;
      const auto m = decode(w.payload);
      j["kind"] = "message";
      const bool size_ok = m && (m->type == MsgType::ErrorStatus ? w.length > kMessageBytes
                                                                 : w.length == kMessageBytes);
      if (!size_ok) {
        fields_ok = false;
        n_.say(tr(M("wire.bad"), w.frame, dir, w.length));
        wj.push_back(j);
        continue;
      }
      const std::string what = fmt::format("{} #{}", type_name(m->type), m->request_index);
      seen.push_back(what);
      j["message"] = {{"type", type_name(m->type)},
                      {"request_index", m->request_index},
                      {"name", m->name},
                      {"step_id", m->step_id},
                      {"rkey", m->rkey},
                      {"shape", m->meta.shape},
                      {"tensor_bytes", m->meta.bytes},
                      {"error_code", m->error_code},
                      {"error_message", m->error_message}};
      n_.say(tr(M("wire.message"), w.frame, dir, lab::hex(imm, 8), w.length, what));
      if (!dumped[m->type]) {
        dumped[m->type] = true;
        n_.field(fmt::format("[{}..{}]", kTypeAt, kNameAt + 9),
                 hex_bytes(std::span(w.payload).first(kNameAt + 10)), tr(M("dump.head")));
      }
      if (m->type == MsgType::TensorRequest || m->type == MsgType::TensorReRequest) {
        n_.field(fmt::format("[{}] name", kNameAt), m->name);
        n_.field(fmt::format("[{}] step_id", kStepIdAt), std::to_string(m->step_id));
        n_.field(fmt::format("[{}] request_index", kRequestIndexAt),
                 std::to_string(m->request_index));
        n_.field(fmt::format("[{}] remote_addr", kRemoteAddrAt), lab::hex(m->remote_addr));
        n_.field(fmt::format("[{}] rkey", kRkeyAt), lab::hex(m->rkey, 8));
        last_request[m->request_index] = *m;
        expected_len[m->request_index] = m->meta.bytes;
      }
      if (m->type != MsgType::ErrorStatus) {
        n_.field(fmt::format("[{}] is_dead", kIsDeadAt), m->meta.is_dead ? "1" : "0");
        n_.field(
            fmt::format("[{}] data_type", kDataTypeAt),
            fmt::format("{}{}", m->meta.dtype, m->meta.dtype == kDtFloat ? " (DT_FLOAT)" : ""));
        n_.field(fmt::format("[{}] tensor_shape", kShapeAt), shape_text(m->meta.shape));
        n_.field(fmt::format("[{}] tensor_bytes", kTensorBytesAt), std::to_string(m->meta.bytes));
        if (m->type == MsgType::MetaDataUpdate) expected_len[m->request_index] = m->meta.bytes;
      } else {
        n_.field(fmt::format("[{}] request_index", kRequestIndexAt),
                 std::to_string(m->request_index));
        n_.field(fmt::format("[{}] error_status", kErrorStatusAt),
                 fmt::format("code {} \"{}\"", m->error_code, m->error_message));
      }
      if (m->type != MsgType::ErrorStatus) fields_ok = fields_ok && m->meta.dtype == kDtFloat;
    } else {
      // A tensor: the immediate is the request index; the RETH must be what
      // the latest (re-)request of that index named, the length what the
      // meta-data said.
      const std::string what = fmt::format("tensor #{}", imm);
      seen.push_back(what);
      j["kind"] = "tensor";
      const auto it = last_request.find(imm);
      const bool ok = it != last_request.end() && it->second.remote_addr == w.va &&
                      it->second.rkey == w.rkey && expected_len[imm] == w.length &&
                      w.payload.size() == w.length && !w.from_requester;
      fields_ok = fields_ok && ok;
      n_.say(tr(M("wire.tensor"), w.frame, dir, w.opcodes, lab::hex(imm, 8), w.length,
                lab::hex(w.va), lab::hex(w.rkey, 8)));
    }
    wj.push_back(j);
  }
  n_.result()["wire_writes"] = wj;

  // The protocol, independently of what the lab posted.
  std::vector<std::string> expected;
  for (int i = 0; i < o_.requests; ++i) {
    expected.push_back(fmt::format("TENSOR_REQUEST #{}", i));
    if (o_.scenario == "error") {
      expected.push_back(fmt::format("ERROR_STATUS #{}", i));
      continue;
    }
    if (o_.scenario == "changed" && i == 0) {
      expected.push_back("META_DATA_UPDATE #0");
      expected.push_back("TENSOR_RE_REQUEST #0");
    }
    expected.push_back(fmt::format("tensor #{}", i));
  }
  nlohmann::json ej = expected, sj = seen;
  n_.result()["expected_sequence"] = ej;
  n_.result()["wire_sequence"] = sj;
  n_.check("sequence", tr(M("check.sequence")), seen == expected);
  n_.check("immediates", tr(M("check.imm")), imm_ok);
  n_.check("acks", tr(M("check.acks")),
           ack_ok && acks_to_rq == msgs_from_rq && acks_to_rs == msgs_from_rs &&
               msgs_from_rq + msgs_from_rs > 0);
  n_.check("fields", tr(M("check.fields")), fields_ok);

  const std::uint64_t msgs = msgs_from_rq + msgs_from_rs;
  n_.result()["measure"] = {{"packets", ws.packets},
                            {"wire_bytes", ws.bytes},
                            {"messages", msgs},
                            {"ack_writes", acks_to_rq + acks_to_rs},
                            {"message_bytes", messages_bytes_}};
  n_.say(tr(M("measure"), ws.packets, ws.bytes, msgs, acks_to_rq + acks_to_rs, messages_bytes_));
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
    app.add_option("--scenario", o.scenario, tr(M("opt.scenario")))
        ->check(lab::IsMember({"unchanged", "changed", "error"}))
        ->capture_default_str();
    app.add_option("-s,--size", o.size, tr(M("opt.size")))
        ->check(lab::Range(8u, 1u << 24))
        ->capture_default_str();
    app.add_option("-n,--requests", o.requests, tr(M("opt.requests")))
        ->check(lab::Range(1, 16))
        ->capture_default_str();
    lab::add_mtu_option(app, o.mtu);
  };
  return lab::run(argc, argv, "lab10", "lab10-tf-rendezvous", M("desc"), o.common, options,
                  [&](lab::Narrator& n) { run_lab(n, o); });
}

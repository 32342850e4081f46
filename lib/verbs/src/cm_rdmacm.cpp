// CmChannel / CmId over librdmacm (see verbs/cm.hpp), with QPs the
// application owns: rdma_connect/rdma_accept carry conn_param.qp_num, the
// QP's attributes come from rdma_init_qp_attr, and the active side sends the
// RTU with rdma_establish.
#include "rdmalab/verbs/cm.hpp"

#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include <cstring>

#include "rdmalab/verbs/error.hpp"

namespace rdmalab::verbs {

namespace {

[[noreturn]] void fail(std::string_view verb, int err, const std::string& detail = {}) {
  throw VerbsError(std::string(verb), err, ErrorContext{{}, 0, 0, detail}, hint_for(verb, err));
}

void check(int rc, std::string_view verb, const std::string& detail = {}) {
  if (rc != 0) fail(verb, errno != 0 ? errno : EIO, detail);
}

/// A numeric or named host and a port as a socket address (IPv4 or IPv6).
sockaddr_storage address(const std::string& host, std::uint16_t port, std::string_view verb) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = host.empty() ? AI_PASSIVE : 0;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res) != 0 ||
      res == nullptr)
    fail(verb, EADDRNOTAVAIL, host);
  sockaddr_storage s{};
  std::memcpy(&s, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  return s;
}

CmEventType type_of(rdma_cm_event_type t) noexcept {
  switch (t) {
    case RDMA_CM_EVENT_ADDR_RESOLVED: return CmEventType::AddrResolved;
    case RDMA_CM_EVENT_ROUTE_RESOLVED: return CmEventType::RouteResolved;
    case RDMA_CM_EVENT_CONNECT_REQUEST: return CmEventType::ConnectRequest;
    case RDMA_CM_EVENT_CONNECT_RESPONSE: return CmEventType::ConnectResponse;
    case RDMA_CM_EVENT_ESTABLISHED: return CmEventType::Established;
    case RDMA_CM_EVENT_REJECTED: return CmEventType::Rejected;
    case RDMA_CM_EVENT_UNREACHABLE: return CmEventType::Unreachable;
    case RDMA_CM_EVENT_DISCONNECTED: return CmEventType::Disconnected;
    default: return CmEventType::Error;
  }
}

rdma_conn_param conn_param(const CmConnParam& p) noexcept {
  rdma_conn_param c{};
  c.private_data = p.private_data.empty() ? nullptr : p.private_data.data();
  c.private_data_len =
      static_cast<std::uint8_t>(std::min(p.private_data.size(), wire::cm::kReqUserPrivateData));
  c.responder_resources = p.responder_resources;
  c.initiator_depth = p.initiator_depth;
  c.retry_count = p.retry_count;
  c.rnr_retry_count = p.rnr_retry_count;
  c.qp_num = p.qp_num;
  return c;
}

class RdmacmId final : public CmId {
 public:
  explicit RdmacmId(rdma_cm_id* id) noexcept : id_(id) {}
  ~RdmacmId() override {
    if (id_ != nullptr) rdma_destroy_id(id_);
  }

  void resolve_addr(const std::optional<std::string>& src, const std::string& dst,
                    std::uint16_t port, std::chrono::milliseconds timeout) override {
    sockaddr_storage d = address(dst, port, "rdma_resolve_addr");
    sockaddr_storage s{};
    if (src) s = address(*src, 0, "rdma_resolve_addr");
    errno = 0;
    check(rdma_resolve_addr(id_, src ? reinterpret_cast<sockaddr*>(&s) : nullptr,
                            reinterpret_cast<sockaddr*>(&d), static_cast<int>(timeout.count())),
          "rdma_resolve_addr", dst);
  }
  void resolve_route(std::chrono::milliseconds timeout) override {
    errno = 0;
    check(rdma_resolve_route(id_, static_cast<int>(timeout.count())), "rdma_resolve_route");
  }
  void listen(const std::string& ip, std::uint16_t port) override {
    sockaddr_storage a = address(ip, port, "rdma_bind_addr");
    errno = 0;
    check(rdma_bind_addr(id_, reinterpret_cast<sockaddr*>(&a)), "rdma_bind_addr", ip);
    errno = 0;
    check(rdma_listen(id_, 8), "rdma_listen");
  }
  void connect(const CmConnParam& p) override {
    rdma_conn_param c = conn_param(p);
    errno = 0;
    check(rdma_connect(id_, &c), "rdma_connect");
  }
  void accept(const CmConnParam& p) override {
    rdma_conn_param c = conn_param(p);
    errno = 0;
    check(rdma_accept(id_, &c), "rdma_accept");
  }
  void reject() override {
    errno = 0;
    check(rdma_reject(id_, nullptr, 0), "rdma_reject");
  }
  void establish() override {
    errno = 0;
    check(rdma_establish(id_), "rdma_establish");
  }
  void disconnect() override {
    errno = 0;
    check(rdma_disconnect(id_), "rdma_disconnect");
  }
  ibv_qp_attr init_qp_attr(ibv_qp_state state, int& mask) const override {
    ibv_qp_attr a{};
    a.qp_state = state;
    mask = 0;
    errno = 0;
    check(rdma_init_qp_attr(id_, &a, &mask), "rdma_init_qp_attr");
    return a;
  }
  std::string device_name() const override {
    return id_->verbs != nullptr ? ibv_get_device_name(id_->verbs->device) : std::string();
  }

 private:
  rdma_cm_id* id_;
};

class RdmacmChannel final : public CmChannel {
 public:
  RdmacmChannel() {
    errno = 0;
    ch_ = rdma_create_event_channel();
    if (ch_ == nullptr) fail("rdma_create_event_channel", errno != 0 ? errno : ENODEV);
  }
  ~RdmacmChannel() override { rdma_destroy_event_channel(ch_); }

  std::unique_ptr<CmId> create_id() override {
    rdma_cm_id* id = nullptr;
    errno = 0;
    check(rdma_create_id(ch_, &id, nullptr, RDMA_PS_TCP), "rdma_create_id");
    return std::make_unique<RdmacmId>(id);
  }

  std::optional<CmEvent> get_event(std::chrono::milliseconds timeout) override {
    pollfd p{ch_->fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(timeout.count()));
    if (n == 0) return std::nullopt;
    if (n < 0) fail("poll", errno);
    rdma_cm_event* e = nullptr;
    errno = 0;
    check(rdma_get_cm_event(ch_, &e), "rdma_get_cm_event");
    CmEvent out;
    out.type = type_of(e->event);
    out.name = rdma_event_str(e->event);
    out.status = e->status;
    const rdma_conn_param& c = e->param.conn;
    if (c.private_data != nullptr && c.private_data_len > 0) {
      const auto* b = static_cast<const std::uint8_t*>(c.private_data);
      out.param.private_data.assign(b, b + c.private_data_len);
    }
    out.param.responder_resources = c.responder_resources;
    out.param.initiator_depth = c.initiator_depth;
    out.param.retry_count = c.retry_count;
    out.param.rnr_retry_count = c.rnr_retry_count;
    out.param.qp_num = c.qp_num;
    if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST) out.new_id = std::make_unique<RdmacmId>(e->id);
    rdma_ack_cm_event(e);
    return out;
  }

 private:
  rdma_event_channel* ch_ = nullptr;
};

}  // namespace

std::unique_ptr<CmChannel> make_rdmacm_channel() {
  return std::make_unique<RdmacmChannel>();
}

}  // namespace rdmalab::verbs

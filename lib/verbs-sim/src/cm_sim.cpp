// CmChannel / CmId over the simulated CM: the same calls, with the errno
// values the simulator returns turned into VerbsError like librdmacm's.
#include "cm_sim.hpp"

#include "rdmalab/verbs/error.hpp"

namespace rdmalab::verbs {

namespace {

void check(int rc, std::string_view verb, const std::string& detail = {}) {
  if (rc != 0)
    throw VerbsError(std::string(verb), rc, ErrorContext{{}, 0, 0, detail}, hint_for(verb, rc));
}

wire::IpAddress ip_of(const std::string& text, std::string_view verb) {
  const auto ip = wire::IpAddress::parse(text);
  if (!ip)
    throw VerbsError(std::string(verb), EADDRNOTAVAIL, ErrorContext{{}, 0, 0, text},
                     hint_for(verb, EADDRNOTAVAIL));
  return *ip;
}

/// Private data cut as cm_rdmacm.cpp cuts it for librdmacm: to what a REQ has
/// room for after rdma_cm's header.
CmConnParam to_sim(const CmConnParam& p) {
  CmConnParam s = p;
  if (s.private_data.size() > wire::cm::kReqUserPrivateData)
    s.private_data.resize(wire::cm::kReqUserPrivateData);
  return s;
}

class SimCmId final : public CmId {
 public:
  explicit SimCmId(sim::cm::Id* id) noexcept : id_(id) {}

  void resolve_addr(const std::optional<std::string>& src, const std::string& dst,
                    std::uint16_t port, std::chrono::milliseconds) override {
    std::optional<wire::IpAddress> s;
    if (src) s = ip_of(*src, "rdma_resolve_addr");
    check(id_->resolve_addr(s, ip_of(dst, "rdma_resolve_addr"), port), "rdma_resolve_addr", dst);
  }
  void resolve_route(std::chrono::milliseconds) override {
    check(id_->resolve_route(), "rdma_resolve_route");
  }
  void listen(const std::string& ip, std::uint16_t port) override {
    check(id_->listen(ip_of(ip, "rdma_bind_addr"), port), "rdma_bind_addr", ip);
  }
  void connect(const CmConnParam& p) override { check(id_->connect(to_sim(p)), "rdma_connect"); }
  void accept(const CmConnParam& p) override { check(id_->accept(to_sim(p)), "rdma_accept"); }
  void reject() override { check(id_->reject(), "rdma_reject"); }
  void establish() override { check(id_->establish(), "rdma_establish"); }
  void disconnect() override { check(id_->disconnect(), "rdma_disconnect"); }
  ibv_qp_attr init_qp_attr(ibv_qp_state state, int& mask) const override {
    ibv_qp_attr a{};
    a.qp_state = state;
    mask = 0;
    check(id_->init_qp_attr(a, mask), "rdma_init_qp_attr");
    return a;
  }
  std::string device_name() const override {
    return id_->device() != nullptr ? id_->device()->name() : std::string();
  }

 private:
  sim::cm::Id* id_;  // owned by the simulator's CM
};

CmEventType type_of(sim::cm::EventType t) noexcept {
  using T = sim::cm::EventType;
  switch (t) {
    case T::AddrResolved: return CmEventType::AddrResolved;
    case T::RouteResolved: return CmEventType::RouteResolved;
    case T::ConnectRequest: return CmEventType::ConnectRequest;
    case T::ConnectResponse: return CmEventType::ConnectResponse;
    case T::Established: return CmEventType::Established;
    case T::Rejected: return CmEventType::Rejected;
    case T::Unreachable: return CmEventType::Unreachable;
    case T::Disconnected: return CmEventType::Disconnected;
  }
  return CmEventType::Error;
}

class SimCmChannel final : public CmChannel {
 public:
  explicit SimCmChannel(sim::cm::Manager& m) : ch_(m.create_event_channel()) {}

  std::unique_ptr<CmId> create_id() override { return std::make_unique<SimCmId>(ch_->create_id()); }

  std::optional<CmEvent> get_event(std::chrono::milliseconds) override {
    auto e = ch_->get_event();
    if (!e) return std::nullopt;
    CmEvent out;
    out.type = type_of(e->type);
    out.name = sim::cm::event_name(e->type);
    out.status = e->status;
    out.param = e->param;
    if (e->type == sim::cm::EventType::ConnectRequest)
      out.new_id = std::make_unique<SimCmId>(e->id);
    return out;
  }

 private:
  sim::cm::EventChannel* ch_;
};

}  // namespace

std::unique_ptr<CmChannel> make_sim_cm_channel(sim::cm::Manager& manager) {
  return std::make_unique<SimCmChannel>(manager);
}

}  // namespace rdmalab::verbs

// Adapters from the verbs interface to rdmalab::sim objects. The simulator
// owns its objects (parents own children, as in the kernel); each adapter
// holds the raw handle and returns it to its parent on destruction.
#include "rdmalab/verbs/sim_backend.hpp"

#include <fmt/format.h>

#include <array>
#include <map>

#include "cm_sim.hpp"
#include "rdmalab/sim/device.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/verbs/log.hpp"
#include "rdmalab/verbs/qp_init.hpp"

namespace rdmalab::verbs {
namespace {

using i18n::Message;
constexpr std::array kCatalog{
    Message{"auto.verbs", "backend: real verbs ({} RDMA device(s) found)",
            "后端：真实 verbs（找到 {} 个 RDMA 设备）"},
    Message{"auto.sim", "backend: simulated {} fabric (no RDMA device found)",
            "后端：模拟 {} 网络（没有找到 RDMA 设备）"},
    Message{"chosen.verbs", "backend: real verbs (--backend verbs)",
            "后端：真实 verbs（--backend verbs）"},
    Message{"chosen.sim", "backend: simulated {} fabric (--backend sim)",
            "后端：模拟 {} 网络（--backend sim）"},
    Message{"transport", "simulated RoCEv2", "模拟 RoCEv2"},
    Message{"transport.ib", "simulated InfiniBand", "模拟 InfiniBand"},
};
consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

class SimMr final : public MemoryRegion {
 public:
  SimMr(sim::ProtectionDomain& pd, sim::MemoryRegion& mr) : pd_(pd), mr_(mr) {}
  ~SimMr() override {
    if (const int rc = pd_.dereg_mr(&mr_); rc != 0) report_destroy_failure("ibv_dereg_mr", rc);
  }
  void* addr() const noexcept override { return mr_.addr(); }
  std::size_t length() const noexcept override { return mr_.length(); }
  std::uint32_t lkey() const noexcept override { return mr_.lkey(); }
  std::uint32_t rkey() const noexcept override { return mr_.rkey(); }
  int access() const noexcept override { return mr_.access(); }
  ibv_mr* get() const noexcept override { return mr_.get(); }

 private:
  sim::ProtectionDomain& pd_;
  sim::MemoryRegion& mr_;
};

class SimMw final : public MemoryWindow {
 public:
  SimMw(sim::ProtectionDomain& pd, sim::MemoryWindow& mw) : pd_(pd), mw_(mw) {}
  ~SimMw() override {
    if (const int rc = pd_.dealloc_mw(&mw_); rc != 0) report_destroy_failure("ibv_dealloc_mw", rc);
  }
  ibv_mw* get() const noexcept override { return mw_.get(); }

 private:
  sim::ProtectionDomain& pd_;
  sim::MemoryWindow& mw_;
};

class SimAh final : public AddressHandle {
 public:
  SimAh(sim::ProtectionDomain& pd, sim::AddressHandle& ah) : pd_(pd), ah_(ah) {}
  ~SimAh() override {
    if (const int rc = pd_.destroy_ah(&ah_); rc != 0) report_destroy_failure("ibv_destroy_ah", rc);
  }
  ibv_ah* get() const noexcept override { return ah_.get(); }

 private:
  sim::ProtectionDomain& pd_;
  sim::AddressHandle& ah_;
};

class SimCompChannel final : public CompChannel {
 public:
  SimCompChannel(sim::Device& dev, sim::CompletionChannel& ch) : dev_(dev), ch_(ch) {}
  ~SimCompChannel() override {
    if (const int rc = dev_.destroy_comp_channel(&ch_); rc != 0)
      report_destroy_failure("ibv_destroy_comp_channel", rc);
  }
  // Blocking is virtual time passing: the fabric runs, one event at a time,
  // until the channel has an event, nothing is left to happen (then no event
  // can ever come, and a real program would sleep forever), or `timeout` of
  // virtual time has passed (a QP retrying RNR forever never lets the
  // fabric go idle).
  CompletionQueue* get_event(std::chrono::milliseconds timeout) override {
    sim::Fabric& f = dev_.fabric();
    const sim::Time deadline =
        f.now() + static_cast<sim::Time>(timeout.count()) * sim::kMillisecond;
    if (!f.run_until([this] { return ch_.pending() > 0; }, deadline)) return nullptr;
    sim::CompletionQueue* cq = ch_.get_event();
    const auto it = cqs_.find(cq);
    return it == cqs_.end() ? nullptr : it->second;
  }
  ibv_comp_channel* get() const noexcept override { return ch_.get(); }
  sim::CompletionChannel& raw() noexcept { return ch_; }
  // The wrappers of the CQs created on this channel, to answer get_event
  // with the caller's object.
  void add(sim::CompletionQueue* cq, CompletionQueue* wrapper) { cqs_[cq] = wrapper; }
  void remove(const sim::CompletionQueue* cq) noexcept { cqs_.erase(cq); }

 private:
  sim::Device& dev_;
  sim::CompletionChannel& ch_;
  std::map<const sim::CompletionQueue*, CompletionQueue*> cqs_;
};

class SimCq final : public CompletionQueue {
 public:
  SimCq(sim::Device& dev, sim::CompletionQueue& cq, SimCompChannel* channel = nullptr)
      : dev_(dev), cq_(cq), channel_(channel) {
    if (channel_ != nullptr) channel_->add(&cq_, this);
  }
  ~SimCq() override {
    if (channel_ != nullptr) channel_->remove(&cq_);
    if (const int rc = dev_.destroy_cq(&cq_); rc != 0) report_destroy_failure("ibv_destroy_cq", rc);
  }
  int poll(std::span<ibv_wc> out) noexcept override {
    return cq_.poll_now(static_cast<int>(out.size()), out.data());
  }
  // An empty CQ lets virtual time move on: one event at a time, until the
  // fabric has nothing left to do.
  bool progress() override { return dev_.fabric().step(); }
  int size() const noexcept override { return cq_.capacity(); }
  int req_notify(bool solicited_only) noexcept override { return cq_.req_notify(solicited_only); }
  void ack_events(unsigned n) noexcept override {
    if (const int rc = cq_.ack_events(n); rc != 0) report_destroy_failure("ibv_ack_cq_events", rc);
  }
  int moderate(std::uint16_t count, std::uint16_t period_us) noexcept override {
    return cq_.modify_moderation(count, period_us);
  }
  sim::CompletionQueue& raw() noexcept { return cq_; }

 private:
  sim::Device& dev_;
  sim::CompletionQueue& cq_;
  SimCompChannel* channel_;
};

class SimQp final : public QueuePair {
 public:
  SimQp(sim::ProtectionDomain& pd, sim::QueuePair& qp) : pd_(pd), qp_(qp) {}
  ~SimQp() override {
    if (const int rc = pd_.destroy_qp(&qp_); rc != 0) report_destroy_failure("ibv_destroy_qp", rc);
  }
  std::uint32_t qpn() const noexcept override { return qp_.qp_num(); }
  ibv_qp_type type() const noexcept override { return qp_.qp_type(); }
  ibv_qp_state state() const override { return qp_.state(); }
  int modify(ibv_qp_attr& attr, int mask) noexcept override { return qp_.modify(attr, mask); }
  int post_send(ibv_send_wr* wr, ibv_send_wr** bad) noexcept override {
    return qp_.post_send(wr, bad);
  }
  int post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad) noexcept override {
    return qp_.post_recv(wr, bad);
  }
  int bind_mw(ibv_mw* mw, ibv_mw_bind& bind) noexcept override { return qp_.bind_mw(mw, bind); }
  std::string device_name() const override { return pd_.device().name(); }
  sim::QueuePair& raw() noexcept { return qp_; }

 private:
  sim::ProtectionDomain& pd_;
  sim::QueuePair& qp_;
};

class SimSrq final : public Srq {
 public:
  SimSrq(sim::ProtectionDomain& pd, sim::SharedReceiveQueue& srq) : pd_(pd), srq_(srq) {}
  ~SimSrq() override {
    if (const int rc = pd_.destroy_srq(&srq_); rc != 0)
      report_destroy_failure("ibv_destroy_srq", rc);
  }
  int post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad) noexcept override {
    return srq_.post_recv(wr, bad);
  }
  int modify(ibv_srq_attr& attr, int mask) noexcept override { return srq_.modify(attr, mask); }
  int query(ibv_srq_attr& attr) noexcept override { return srq_.query(attr); }
  ibv_srq* get() const noexcept override { return srq_.get(); }

 private:
  sim::ProtectionDomain& pd_;
  sim::SharedReceiveQueue& srq_;
};

class SimPd final : public ProtectionDomain {
 public:
  SimPd(sim::Device& dev, sim::ProtectionDomain& pd) : dev_(dev), pd_(pd) {}
  ~SimPd() override {
    if (const int rc = dev_.dealloc_pd(&pd_); rc != 0) report_destroy_failure("ibv_dealloc_pd", rc);
  }
  std::unique_ptr<MemoryRegion> reg_mr(void* addr, std::size_t length, int access) override {
    errno = 0;
    sim::MemoryRegion* mr =
        check_ptr(pd_.reg_mr(addr, length, access), "ibv_reg_mr",
                  ErrorContext{dev_.name(), 0, 0, fmt::format("{} bytes", length)});
    return std::make_unique<SimMr>(pd_, *mr);
  }
  std::unique_ptr<MemoryWindow> alloc_mw(ibv_mw_type type) override {
    errno = 0;
    sim::MemoryWindow* mw =
        check_ptr(pd_.alloc_mw(type), "ibv_alloc_mw",
                  ErrorContext{dev_.name(), 0, 0, fmt::format("type {}", static_cast<int>(type))});
    return std::make_unique<SimMw>(pd_, *mw);
  }
  std::unique_ptr<QueuePair> create_qp(const QpInitAttrs& a) override {
    auto* scq = dynamic_cast<SimCq*>(a.send_cq);
    auto* rcq = dynamic_cast<SimCq*>(a.recv_cq);
    if (scq == nullptr || rcq == nullptr)
      throw UsageError("create_qp: send_cq and recv_cq must be CQs of the same simulated device");
    ibv_qp_init_attr init = detail::to_ibv(a, scq->raw().get(), rcq->raw().get());
    if (a.srq != nullptr) {
      auto* srq = dynamic_cast<SimSrq*>(a.srq);
      if (srq == nullptr)
        throw UsageError("create_qp: the SRQ must be one of the same simulated device");
      init.srq = srq->get();
    }
    errno = 0;
    sim::QueuePair* qp =
        check_ptr(pd_.create_qp(init), "ibv_create_qp", ErrorContext{dev_.name(), 0, 0, {}});
    return std::make_unique<SimQp>(pd_, *qp);
  }
  std::unique_ptr<AddressHandle> create_ah(const ibv_ah_attr& attr) override {
    errno = 0;
    sim::AddressHandle* ah =
        check_ptr(pd_.create_ah(attr), "ibv_create_ah",
                  ErrorContext{dev_.name(), attr.port_num, 0,
                               fmt::format("sgid_index {}", attr.grh.sgid_index)});
    return std::make_unique<SimAh>(pd_, *ah);
  }
  std::unique_ptr<Srq> create_srq(const SrqInitAttrs& a) override {
    ibv_srq_init_attr init{};
    init.attr.max_wr = a.max_wr;
    init.attr.max_sge = a.max_sge;
    init.attr.srq_limit = a.srq_limit;
    errno = 0;
    sim::SharedReceiveQueue* srq = check_ptr(
        pd_.create_srq(init), "ibv_create_srq",
        ErrorContext{dev_.name(), 0, 0, fmt::format("max_wr {} max_sge {}", a.max_wr, a.max_sge)});
    return std::make_unique<SimSrq>(pd_, *srq);
  }

 private:
  sim::Device& dev_;
  sim::ProtectionDomain& pd_;
};

class SimContext final : public Context {
 public:
  explicit SimContext(sim::Device& dev) : dev_(dev) {
    info_.name = dev.name();
    const auto& mac = dev.config().mac;
    // A node GUID derived from the MAC (EUI-64), as RoCE devices do.
    info_.node_guid = fmt::format("{:02x}{:02x}:{:02x}ff:fe{:02x}:{:02x}{:02x}", mac[0] ^ 2, mac[1],
                                  mac[2], mac[3], mac[4], mac[5]);
    info_.transport =
        i18n::tr(dev.fabric().config().link_layer == wire::LinkLayer::Infiniband ? M("transport.ib")
                                                                                 : M("transport"));
  }
  const DeviceInfo& info() const noexcept override { return info_; }
  BackendKind kind() const noexcept override { return BackendKind::Sim; }
  PortInfo query_port(std::uint8_t port) const override {
    const ibv_port_attr a = dev_.query_port(port);
    if (a.state == IBV_PORT_NOP)
      check_rc(EINVAL, "ibv_query_port", ErrorContext{info_.name, port, 0, {}});
    PortInfo p;
    p.state = a.state;
    p.max_mtu = a.max_mtu;
    p.active_mtu = a.active_mtu;
    p.link_layer = a.link_layer;
    p.lid = a.lid;
    p.gid_table_len = a.gid_tbl_len;
    p.sm_lid = a.sm_lid;
    p.lmc = a.lmc;
    p.phys_state = a.phys_state;
    return p;
  }
  std::vector<GidEntry> gid_table(std::uint8_t port) const override {
    const PortInfo p = query_port(port);
    std::vector<GidEntry> out;
    for (int i = 0; i < p.gid_table_len; ++i) {
      GidEntry e;
      e.index = i;
      e.gid = dev_.gid(i, port);
      // An InfiniBand port's GID is not a RoCE one (fe80::<port GUID>) and
      // belongs to no Ethernet interface.
      const bool ib = p.link_layer == IBV_LINK_LAYER_INFINIBAND;
      e.type = ib ? GidType::IB : GidType::RoceV2;
      if (!ib) e.netdev = info_.name;
      out.push_back(e);
    }
    return out;
  }
  // What the simulated device enforces (sim::DeviceLimits): no limit on
  // the number of CQs, no SRQ, no CQ moderation.
  DeviceAttrs query_device() const override {
    const sim::DeviceLimits& l = dev_.limits();
    DeviceAttrs d;
    d.max_cqe = l.max_cqe;
    d.max_qp_wr = l.max_qp_wr;
    d.max_sge = l.max_sge;
    d.max_srq = l.max_srq;
    d.max_srq_wr = l.max_srq_wr;
    d.phys_port_cnt = dev_.port_count();
    return d;
  }
  std::unique_ptr<ProtectionDomain> alloc_pd() override {
    errno = 0;
    sim::ProtectionDomain* pd =
        check_ptr(dev_.alloc_pd(), "ibv_alloc_pd", ErrorContext{info_.name, 0, 0, {}});
    return std::make_unique<SimPd>(dev_, *pd);
  }
  std::unique_ptr<CompletionQueue> create_cq(int cqe) override {
    errno = 0;
    sim::CompletionQueue* cq =
        check_ptr(dev_.create_cq(cqe), "ibv_create_cq",
                  ErrorContext{info_.name, 0, 0, fmt::format("cqe {}", cqe)});
    return std::make_unique<SimCq>(dev_, *cq);
  }
  std::unique_ptr<CompletionQueue> create_cq(int cqe, CompChannel& channel) override {
    auto* ch = dynamic_cast<SimCompChannel*>(&channel);
    if (ch == nullptr)
      throw UsageError("create_cq: the completion channel must be one of this simulated device");
    errno = 0;
    sim::CompletionQueue* cq =
        check_ptr(dev_.create_cq(cqe, &ch->raw()), "ibv_create_cq",
                  ErrorContext{info_.name, 0, 0, fmt::format("cqe {}, channel", cqe)});
    return std::make_unique<SimCq>(dev_, *cq, ch);
  }
  std::unique_ptr<CompChannel> create_comp_channel() override {
    errno = 0;
    sim::CompletionChannel* ch = check_ptr(dev_.create_comp_channel(), "ibv_create_comp_channel",
                                           ErrorContext{info_.name, 0, 0, {}});
    return std::make_unique<SimCompChannel>(dev_, *ch);
  }
  // Events are queued while the fabric runs (a CQ is polled): nothing to
  // wait for here.
  std::optional<AsyncEvent> get_async_event(std::chrono::milliseconds /*timeout*/) override {
    ibv_async_event ev{};
    if (!dev_.get_async_event(ev)) return std::nullopt;
    return to_async_event(ev);
  }

 private:
  sim::Device& dev_;
  DeviceInfo info_;
};

class SimBackendImpl final : public SimBackend {
 public:
  explicit SimBackendImpl(SimBackendOptions o) : fabric_(o.fabric), seed_(o.fabric.seed) {
    if (o.hosts.empty()) {
      const std::size_t n = o.topology ? o.topology->host_count() : 2;
      for (std::size_t i = 0; i < n; ++i) {
        sim::HostConfig h;
        h.name = fmt::format("sim{}", i);
        h.mac = {0x02,
                 0x00,
                 0x00,
                 0x00,
                 static_cast<std::uint8_t>(i >> 8),
                 static_cast<std::uint8_t>(i + 1)};
        h.ip = *wire::IpAddress::parse(fmt::format("10.99.{}.{}", (i + 1) >> 8, (i + 1) & 0xFF));
        o.hosts.push_back(h);
      }
    }
    if (o.port_mtu != 0)
      for (auto& h : o.hosts) h.port_mtu = o.port_mtu;
    if (const auto& c = o.nic_costs;
        c.doorbell_ns + c.wqe_fetch_ns + c.payload_fetch_ns + c.cqe_write_ns > 0)
      for (auto& h : o.hosts) {
        h.doorbell_ns = c.doorbell_ns;
        h.wqe_fetch_ns = c.wqe_fetch_ns;
        h.payload_fetch_ns = c.payload_fetch_ns;
        h.cqe_write_ns = c.cqe_write_ns;
      }
    for (const auto& h : o.hosts) devices_.push_back(&fabric_.add_host(h));
    if (o.topology) topology_ = sim::connect_topology(fabric_, *o.topology, devices_);
    if (!o.capture_path.empty()) fabric_.start_capture(o.capture_path, o.snaplen);
  }
  BackendKind kind() const noexcept override { return BackendKind::Sim; }
  std::vector<DeviceInfo> devices() const override {
    std::vector<DeviceInfo> out;
    for (sim::Device* d : devices_) out.push_back(SimContext(*d).info());
    return out;
  }
  std::unique_ptr<Context> open(const std::string& name) override {
    for (sim::Device* d : devices_)
      if (name.empty() || d->name() == name) return std::make_unique<SimContext>(*d);
    throw VerbsError("ibv_open_device", ENODEV, ErrorContext{name, 0, 0, {}}, {});
  }
  const sim::Topology& topology() const noexcept override { return topology_; }
  std::unique_ptr<CmChannel> create_cm_channel() override {
    if (!cm_) cm_ = std::make_unique<sim::cm::Manager>(fabric_, devices_, seed_);
    return make_sim_cm_channel(*cm_);
  }
  sim::Fabric& fabric() noexcept override { return fabric_; }
  sim::QueuePair* sim_qp(QueuePair& qp) const noexcept override {
    auto* s = dynamic_cast<SimQp*>(&qp);
    return s != nullptr ? &s->raw() : nullptr;
  }
  sim::Device* device(std::string_view name) noexcept override {
    for (sim::Device* d : devices_)
      if (d->name() == name) return d;
    return nullptr;
  }

 private:
  sim::Fabric fabric_;
  std::vector<sim::Device*> devices_;
  sim::Topology topology_;
  std::uint64_t seed_ = 1;
  std::unique_ptr<sim::cm::Manager> cm_;  // after the fabric: destroyed first
};

}  // namespace

std::span<const i18n::Message> sim_backend_catalog() noexcept {
  return kCatalog;
}

std::unique_ptr<SimBackend> make_sim_backend(SimBackendOptions options) {
  return std::make_unique<SimBackendImpl>(std::move(options));
}

std::unique_ptr<Backend> choose_backend(BackendChoice choice, SimBackendOptions sim_options,
                                        std::string* said) {
  std::string line;
  std::unique_ptr<Backend> b;
  // The simulated fabric's link layer, as the line names it.
  const char* fabric =
      sim_options.fabric.link_layer == wire::LinkLayer::Infiniband ? "InfiniBand" : "RoCEv2";
  switch (choice) {
    case BackendChoice::Verbs:
      line = i18n::tr(M("chosen.verbs"));
      b = make_verbs_backend();
      break;
    case BackendChoice::Sim:
      line = i18n::tr(M("chosen.sim"), fabric);
      b = make_sim_backend(std::move(sim_options));
      break;
    case BackendChoice::Auto:
      if (const int n = count_verbs_devices(); n > 0) {
        line = i18n::tr(M("auto.verbs"), n);
        b = make_verbs_backend();
      } else {
        line = i18n::tr(M("auto.sim"), fabric);
        b = make_sim_backend(std::move(sim_options));
      }
      break;
  }
  if (said != nullptr) *said = std::move(line);
  return b;
}

}  // namespace rdmalab::verbs

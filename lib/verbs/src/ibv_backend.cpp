// The real-verbs backend: each class owns one libibverbs object and releases
// it in its destructor. Destructors never throw; a failing destroy verb (EBUSY
// when a child is still alive) is reported through the log sink.
#include <endian.h>
#include <fmt/format.h>
#include <net/if.h>
#include <poll.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "rdmalab/verbs/backend.hpp"
#include "rdmalab/verbs/error.hpp"
#include "rdmalab/verbs/log.hpp"
#include "rdmalab/verbs/qp_init.hpp"

namespace rdmalab::verbs {
namespace {

class IbvMr final : public MemoryRegion {
 public:
  explicit IbvMr(ibv_mr* mr, int access) : mr_(mr), access_(access) {}
  ~IbvMr() override {
    if (const int rc = ibv_dereg_mr(mr_); rc != 0) report_destroy_failure("ibv_dereg_mr", rc);
  }
  void* addr() const noexcept override { return mr_->addr; }
  std::size_t length() const noexcept override { return mr_->length; }
  std::uint32_t lkey() const noexcept override { return mr_->lkey; }
  std::uint32_t rkey() const noexcept override { return mr_->rkey; }
  int access() const noexcept override { return access_; }
  ibv_mr* get() const noexcept override { return mr_; }

 private:
  ibv_mr* mr_;
  int access_;
};

class IbvMw final : public MemoryWindow {
 public:
  explicit IbvMw(ibv_mw* mw) : mw_(mw) {}
  ~IbvMw() override {
    if (const int rc = ibv_dealloc_mw(mw_); rc != 0) report_destroy_failure("ibv_dealloc_mw", rc);
  }
  ibv_mw* get() const noexcept override { return mw_; }

 private:
  ibv_mw* mw_;
};

class IbvAh final : public AddressHandle {
 public:
  explicit IbvAh(ibv_ah* ah) : ah_(ah) {}
  ~IbvAh() override {
    if (const int rc = ibv_destroy_ah(ah_); rc != 0) report_destroy_failure("ibv_destroy_ah", rc);
  }
  ibv_ah* get() const noexcept override { return ah_; }

 private:
  ibv_ah* ah_;
};

class IbvCq final : public CompletionQueue {
 public:
  // cq_context names this wrapper: ibv_get_cq_event hands it back.
  explicit IbvCq(ibv_cq* cq) : cq_(cq) { cq_->cq_context = this; }
  ~IbvCq() override {
    if (const int rc = ibv_destroy_cq(cq_); rc != 0) report_destroy_failure("ibv_destroy_cq", rc);
  }
  int poll(std::span<ibv_wc> out) noexcept override {
    return ibv_poll_cq(cq_, static_cast<int>(out.size()), out.data());
  }
  bool progress() override { return true; }  // the NIC progresses on its own
  int size() const noexcept override { return cq_->cqe; }
  int req_notify(bool solicited_only) noexcept override {
    return ibv_req_notify_cq(cq_, solicited_only ? 1 : 0);
  }
  void ack_events(unsigned n) noexcept override { ibv_ack_cq_events(cq_, n); }
  int moderate(std::uint16_t count, std::uint16_t period_us) noexcept override {
    ibv_modify_cq_attr a{};
    a.attr_mask = IBV_CQ_ATTR_MODERATE;
    a.moderate.cq_count = count;
    a.moderate.cq_period = period_us;
    return ibv_modify_cq(cq_, &a);
  }
  ibv_cq* get() const noexcept { return cq_; }

 private:
  ibv_cq* cq_;
};

class IbvCompChannel final : public CompChannel {
 public:
  IbvCompChannel(ibv_comp_channel* ch, std::string device) : ch_(ch), device_(std::move(device)) {}
  ~IbvCompChannel() override {
    if (const int rc = ibv_destroy_comp_channel(ch_); rc != 0)
      report_destroy_failure("ibv_destroy_comp_channel", rc);
  }
  CompletionQueue* get_event(std::chrono::milliseconds timeout) override {
    // ibv_get_cq_event blocks on the channel's fd: wait on it first, so
    // that an event that never comes ends in nullptr, not in a hang.
    pollfd p{ch_->fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
    if (ready < 0) check_rc(errno, "poll(comp_channel->fd)", ErrorContext{device_, 0, 0, {}});
    if (ready == 0) return nullptr;
    ibv_cq* cq = nullptr;
    void* context = nullptr;
    check_rc(ibv_get_cq_event(ch_, &cq, &context) != 0 ? errno : 0, "ibv_get_cq_event",
             ErrorContext{device_, 0, 0, {}});
    return static_cast<IbvCq*>(context);
  }
  ibv_comp_channel* get() const noexcept override { return ch_; }

 private:
  ibv_comp_channel* ch_;
  std::string device_;
};

class IbvQp final : public QueuePair {
 public:
  IbvQp(ibv_qp* qp, std::string device) : qp_(qp), device_(std::move(device)) {}
  ~IbvQp() override {
    if (const int rc = ibv_destroy_qp(qp_); rc != 0) report_destroy_failure("ibv_destroy_qp", rc);
  }
  std::uint32_t qpn() const noexcept override { return qp_->qp_num; }
  ibv_qp_type type() const noexcept override { return qp_->qp_type; }
  ibv_qp_state state() const override {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    const int rc = ibv_query_qp(qp_, &attr, IBV_QP_STATE, &init);
    check_rc(rc, "ibv_query_qp", ErrorContext{device_, 0, qpn(), {}});
    return attr.qp_state;
  }
  int modify(ibv_qp_attr& attr, int mask) noexcept override {
    return ibv_modify_qp(qp_, &attr, mask);
  }
  int post_send(ibv_send_wr* wr, ibv_send_wr** bad) noexcept override {
    return ibv_post_send(qp_, wr, bad);
  }
  int post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad) noexcept override {
    return ibv_post_recv(qp_, wr, bad);
  }
  int bind_mw(ibv_mw* mw, ibv_mw_bind& bind) noexcept override {
    return ibv_bind_mw(qp_, mw, &bind);
  }
  std::string device_name() const override { return device_; }

 private:
  ibv_qp* qp_;
  std::string device_;
};

class IbvSrq final : public Srq {
 public:
  explicit IbvSrq(ibv_srq* srq) : srq_(srq) {}
  ~IbvSrq() override {
    if (const int rc = ibv_destroy_srq(srq_); rc != 0)
      report_destroy_failure("ibv_destroy_srq", rc);
  }
  int post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad) noexcept override {
    return ibv_post_srq_recv(srq_, wr, bad);
  }
  int modify(ibv_srq_attr& attr, int mask) noexcept override {
    return ibv_modify_srq(srq_, &attr, mask);
  }
  int query(ibv_srq_attr& attr) noexcept override { return ibv_query_srq(srq_, &attr); }
  ibv_srq* get() const noexcept override { return srq_; }

 private:
  ibv_srq* srq_;
};

class IbvPd final : public ProtectionDomain {
 public:
  IbvPd(ibv_pd* pd, std::string device) : pd_(pd), device_(std::move(device)) {}
  ~IbvPd() override {
    if (const int rc = ibv_dealloc_pd(pd_); rc != 0) report_destroy_failure("ibv_dealloc_pd", rc);
  }
  std::unique_ptr<MemoryRegion> reg_mr(void* addr, std::size_t length, int access) override {
    errno = 0;
    ibv_mr* mr =
        check_ptr(ibv_reg_mr(pd_, addr, length, static_cast<unsigned>(access)), "ibv_reg_mr",
                  ErrorContext{device_, 0, 0, fmt::format("{} bytes", length)});
    return std::make_unique<IbvMr>(mr, access);
  }
  std::unique_ptr<MemoryWindow> alloc_mw(ibv_mw_type type) override {
    errno = 0;
    ibv_mw* mw =
        check_ptr(ibv_alloc_mw(pd_, type), "ibv_alloc_mw",
                  ErrorContext{device_, 0, 0, fmt::format("type {}", static_cast<int>(type))});
    return std::make_unique<IbvMw>(mw);
  }
  std::unique_ptr<QueuePair> create_qp(const QpInitAttrs& a) override {
    if (a.send_cq == nullptr || a.recv_cq == nullptr)
      throw UsageError("create_qp: send_cq and recv_cq are required");
    auto* scq = dynamic_cast<IbvCq*>(a.send_cq);
    auto* rcq = dynamic_cast<IbvCq*>(a.recv_cq);
    if (scq == nullptr || rcq == nullptr)
      throw UsageError("create_qp: the CQs belong to another backend");
    ibv_qp_init_attr init = detail::to_ibv(a, scq->get(), rcq->get());
    if (a.srq != nullptr) {
      auto* srq = dynamic_cast<IbvSrq*>(a.srq);
      if (srq == nullptr) throw UsageError("create_qp: the SRQ belongs to another backend");
      init.srq = srq->get();
    }
    errno = 0;
    ibv_qp* qp =
        check_ptr(ibv_create_qp(pd_, &init), "ibv_create_qp", ErrorContext{device_, 0, 0, {}});
    return std::make_unique<IbvQp>(qp, device_);
  }
  std::unique_ptr<AddressHandle> create_ah(const ibv_ah_attr& attr) override {
    ibv_ah_attr a = attr;
    errno = 0;
    ibv_ah* ah = check_ptr(
        ibv_create_ah(pd_, &a), "ibv_create_ah",
        ErrorContext{device_, attr.port_num, 0, fmt::format("sgid_index {}", attr.grh.sgid_index)});
    return std::make_unique<IbvAh>(ah);
  }
  std::unique_ptr<Srq> create_srq(const SrqInitAttrs& a) override {
    ibv_srq_init_attr init{};
    init.attr.max_wr = a.max_wr;
    init.attr.max_sge = a.max_sge;
    init.attr.srq_limit = a.srq_limit;
    errno = 0;
    ibv_srq* srq = check_ptr(
        ibv_create_srq(pd_, &init), "ibv_create_srq",
        ErrorContext{device_, 0, 0, fmt::format("max_wr {} max_sge {}", a.max_wr, a.max_sge)});
    return std::make_unique<IbvSrq>(srq);
  }

 private:
  ibv_pd* pd_;
  std::string device_;
};

std::string guid_text(__be64 guid_be) {
  const std::uint64_t g = be64toh(guid_be);
  return fmt::format("{:04x}:{:04x}:{:04x}:{:04x}", (g >> 48) & 0xFFFF, (g >> 32) & 0xFFFF,
                     (g >> 16) & 0xFFFF, g & 0xFFFF);
}

class IbvContext final : public Context {
 public:
  IbvContext(ibv_context* ctx, DeviceInfo info) : ctx_(ctx), info_(std::move(info)) {}
  ~IbvContext() override {
    if (const int rc = ibv_close_device(ctx_); rc != 0)
      report_destroy_failure("ibv_close_device", rc);
  }
  const DeviceInfo& info() const noexcept override { return info_; }
  BackendKind kind() const noexcept override { return BackendKind::Verbs; }

  PortInfo query_port(std::uint8_t port) const override {
    ibv_port_attr a{};
    check_rc(ibv_query_port(ctx_, port, &a), "ibv_query_port",
             ErrorContext{info_.name, port, 0, {}});
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
    p.active_width = a.active_width;
    p.active_speed = a.active_speed;
    return p;
  }

  std::vector<GidEntry> gid_table(std::uint8_t port) const override {
    const PortInfo p = query_port(port);
    // ibv_query_gid_table returns the valid entries of every port. Its buffer
    // travels in a uverbs ioctl attribute whose length is 16 bits, so it must
    // stay under 64 KiB (rxe reports a table length of 1024 per port: 1024
    // entries of 32 bytes already exceed it, and the kernel answers EINVAL).
    constexpr std::size_t kMaxEntries = 0xFFFF / sizeof(ibv_gid_entry);
    std::vector<ibv_gid_entry> entries(
        std::min<std::size_t>(static_cast<std::size_t>(std::max(p.gid_table_len, 1)), kMaxEntries));
    const ssize_t n = ibv_query_gid_table(ctx_, entries.data(), entries.size(), 0);
    if (n < 0) return gid_table_by_index(port, p.gid_table_len);
    std::vector<GidEntry> out;
    for (ssize_t i = 0; i < n; ++i) {
      const auto& e = entries[static_cast<std::size_t>(i)];
      if (e.port_num == port) out.push_back(to_entry(e));
    }
    return out;
  }

  DeviceAttrs query_device() const override {
    ibv_device_attr_ex a{};
    check_rc(ibv_query_device_ex(ctx_, nullptr, &a), "ibv_query_device_ex",
             ErrorContext{info_.name, 0, 0, {}});
    DeviceAttrs d;
    d.max_cq = a.orig_attr.max_cq;
    d.max_cqe = a.orig_attr.max_cqe;
    d.max_qp_wr = a.orig_attr.max_qp_wr;
    d.max_sge = a.orig_attr.max_sge;
    d.max_srq = a.orig_attr.max_srq;
    d.max_srq_wr = a.orig_attr.max_srq_wr;
    d.max_cq_count = a.cq_mod_caps.max_cq_count;
    d.max_cq_period = a.cq_mod_caps.max_cq_period;
    d.phys_port_cnt = a.orig_attr.phys_port_cnt;
    return d;
  }

  std::unique_ptr<ProtectionDomain> alloc_pd() override {
    errno = 0;
    ibv_pd* pd = check_ptr(ibv_alloc_pd(ctx_), "ibv_alloc_pd", ErrorContext{info_.name, 0, 0, {}});
    return std::make_unique<IbvPd>(pd, info_.name);
  }

  std::unique_ptr<CompletionQueue> create_cq(int cqe) override {
    errno = 0;
    ibv_cq* cq = check_ptr(ibv_create_cq(ctx_, cqe, nullptr, nullptr, 0), "ibv_create_cq",
                           ErrorContext{info_.name, 0, 0, fmt::format("cqe {}", cqe)});
    return std::make_unique<IbvCq>(cq);
  }

  std::unique_ptr<CompletionQueue> create_cq(int cqe, CompChannel& channel) override {
    errno = 0;
    ibv_cq* cq = check_ptr(ibv_create_cq(ctx_, cqe, nullptr, channel.get(), 0), "ibv_create_cq",
                           ErrorContext{info_.name, 0, 0, fmt::format("cqe {}, channel", cqe)});
    return std::make_unique<IbvCq>(cq);
  }

  std::unique_ptr<CompChannel> create_comp_channel() override {
    errno = 0;
    ibv_comp_channel* ch = check_ptr(ibv_create_comp_channel(ctx_), "ibv_create_comp_channel",
                                     ErrorContext{info_.name, 0, 0, {}});
    return std::make_unique<IbvCompChannel>(ch, info_.name);
  }

  std::optional<AsyncEvent> get_async_event(std::chrono::milliseconds timeout) override {
    // ibv_get_async_event blocks: wait on async_fd first, then read one
    // event, copy what names its object and acknowledge it at once (an
    // unacknowledged event keeps its object from being destroyed).
    pollfd p{ctx_->async_fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
    if (ready < 0) check_rc(errno, "poll(async_fd)", ErrorContext{info_.name, 0, 0, {}});
    if (ready == 0) return std::nullopt;
    ibv_async_event ev{};
    check_rc(ibv_get_async_event(ctx_, &ev) != 0 ? errno : 0, "ibv_get_async_event",
             ErrorContext{info_.name, 0, 0, {}});
    const AsyncEvent out = to_async_event(ev);
    ibv_ack_async_event(&ev);
    return out;
  }

 private:
  static GidEntry to_entry(const ibv_gid_entry& e) {
    GidEntry g;
    g.index = static_cast<int>(e.gid_index);
    g.gid = e.gid;
    g.type = e.gid_type == IBV_GID_TYPE_ROCE_V2   ? GidType::RoceV2
             : e.gid_type == IBV_GID_TYPE_ROCE_V1 ? GidType::RoceV1
                                                  : GidType::IB;
    char name[IF_NAMESIZE] = {};
    if (e.ndev_ifindex != 0 && if_indextoname(e.ndev_ifindex, name) != nullptr) g.netdev = name;
    return g;
  }

  // The fallback when the whole table cannot be read at once (more valid
  // entries than one ioctl carries): one ibv_query_gid_ex per index; empty
  // slots answer ENODATA and are skipped.
  std::vector<GidEntry> gid_table_by_index(std::uint8_t port, int len) const {
    std::vector<GidEntry> out;
    for (int i = 0; i < len; ++i) {
      ibv_gid_entry e{};
      if (ibv_query_gid_ex(ctx_, port, static_cast<std::uint32_t>(i), &e, 0) == 0)
        out.push_back(to_entry(e));
    }
    if (out.empty() && len > 0)
      check_rc(EINVAL, "ibv_query_gid_table", ErrorContext{info_.name, port, 0, {}});
    return out;
  }

  ibv_context* ctx_;
  DeviceInfo info_;
};

// ibv_get_device_list owns an array that must be freed: hold it in RAII.
struct DeviceList {
  int n = 0;
  ibv_device** list = nullptr;
  DeviceList() {
    errno = 0;
    list = ibv_get_device_list(&n);
  }
  ~DeviceList() {
    if (list != nullptr) ibv_free_device_list(list);
  }
  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;
  [[nodiscard]] std::span<ibv_device*> devices() const {
    return list == nullptr ? std::span<ibv_device*>()
                           : std::span<ibv_device*>(list, static_cast<std::size_t>(n));
  }
};

DeviceInfo info_of(ibv_device* d) {
  DeviceInfo i;
  i.name = ibv_get_device_name(d);
  i.node_guid = guid_text(ibv_get_device_guid(d));
  switch (d->transport_type) {
    case IBV_TRANSPORT_IB: i.transport = "InfiniBand"; break;
    case IBV_TRANSPORT_IWARP: i.transport = "iWARP"; break;
    default: i.transport = "other"; break;
  }
  return i;
}

class IbvBackend final : public Backend {
 public:
  BackendKind kind() const noexcept override { return BackendKind::Verbs; }
  std::vector<DeviceInfo> devices() const override {
    DeviceList l;
    std::vector<DeviceInfo> out;
    for (ibv_device* d : l.devices()) out.push_back(info_of(d));
    return out;
  }
  std::unique_ptr<Context> open(const std::string& name) override {
    DeviceList l;
    if (l.list == nullptr || l.n == 0)
      throw VerbsError("ibv_get_device_list", l.list == nullptr && errno != 0 ? errno : ENODEV, {},
                       hint_for("ibv_get_device_list", ENODEV));
    for (ibv_device* d : l.devices()) {
      if (!name.empty() && name != ibv_get_device_name(d)) continue;
      errno = 0;
      ibv_context* ctx = check_ptr(ibv_open_device(d), "ibv_open_device",
                                   ErrorContext{ibv_get_device_name(d), 0, 0, {}});
      return std::make_unique<IbvContext>(ctx, info_of(d));
    }
    throw VerbsError("ibv_open_device", ENODEV, ErrorContext{name, 0, 0, {}},
                     hint_for("ibv_get_device_list", ENODEV));
  }
  std::unique_ptr<CmChannel> create_cm_channel() override { return make_rdmacm_channel(); }
};

}  // namespace

std::unique_ptr<Backend> make_verbs_backend() {
  return std::make_unique<IbvBackend>();
}

int count_verbs_devices() noexcept {
  DeviceList l;
  return l.list == nullptr ? 0 : l.n;
}

}  // namespace rdmalab::verbs

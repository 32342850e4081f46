// DCQCN: the congestion control of RoCEv2 NICs, as a model in virtual time.
//
// DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
// SIGCOMM 2015) has three parts:
//   congestion point (CP)    a switch marks ECN-capable packets CE (11b in the
//                            IP header's ECN field) with a probability that
//                            grows with its egress queue (EcnMarking below);
//   notification point (NP)  the receiving NIC answers a CE-marked packet
//                            with a CNP (BTH opcode 0x81, BECN set) to the
//                            sending QP, at most one per
//                            np_min_time_between_cnps (DcqcnNp);
//   reaction point (RP)      the sending NIC keeps a rate per QP, cuts it on
//                            a CNP by alpha/2 and raises it again with timers
//                            and a byte counter (DcqcnRp).
//
// Every number is an integer: rates in bit/s, times in ns, alpha in units of
// 2^-20 (kAlphaOne is 1), each product rounded down. A test can follow the
// model by hand to the bit and the nanosecond.
//
// The RP needs no events of its own: its timers are due times that
// advance_to(t) runs in order, so the NIC calls it whenever it looks at the
// rate (before sending, on a CNP), and a QP whose next packet waits for the
// rate wakes at next_rate_change() to be re-timed. The same calls in the same
// order give the same rates on every platform.
#pragma once

#include <cstdint>
#include <functional>

namespace rdmalab::sim {

/// Virtual time in nanoseconds (the same type as in fabric.hpp).
using Time = std::int64_t;

/// ECN marking at a switch egress queue (RED-like): no mark below
/// `kmin_bytes`, probability rising linearly to `pmax` at `kmax_bytes`, every
/// ECN-capable packet marked above. The NIC does not use it; a switch takes
/// these values from a DCQCN preset so that both ends match.
struct EcnMarking {
  std::uint64_t kmin_bytes = 0;
  std::uint64_t kmax_bytes = 0;
  double pmax = 0.0;
};

/// Parameters of the NP and the RP (one set for the whole fabric). The
/// defaults are those of mlx5() below; the names in comments are the mlx5
/// `cc_params` debugfs files (drivers/infiniband/hw/mlx5/cong.c).
struct DcqcnParams {
  /// alpha is kept in units of 2^-20: kAlphaOne stands for 1.
  static constexpr std::uint32_t kAlphaOne = 1u << 20;

  /// How the RP reacts to CNPs.
  enum class Reaction : std::uint8_t {
    /// The paper's RP: every CNP cuts the rate at once and updates alpha at
    /// once; the alpha timer restarts on each CNP and, when it expires,
    /// alpha decays (alpha = (1 - g) alpha).
    PerCnp,
    /// The reference code's "Mellanox version" (HPCC simulator,
    /// rdma-hw.cc): after the first CNP, alpha is updated every
    /// `alpha_period` (up by g when a CNP came in the period, down otherwise)
    /// and the rate is cut at most once every `rate_decrease_period`, when a
    /// CNP came since the last cut.
    Periodic,
  };
  /// Which stages the rate-increase events go through.
  enum class Increase : std::uint8_t {
    /// The paper (after QCN): a timer counter T and a byte counter BC. Fast
    /// recovery while max(T, BC) < F, hyper increase (Rt += i * HAI with
    /// i = min(T, BC) - F) once min(T, BC) > F, additive (Rt += AI) between.
    Paper,
    /// The reference code: one stage counter s (every increase event counts):
    /// fast recovery while s < F, additive once at s == F, then Rt += HAI on
    /// every event.
    Reference,
  };

  // --- notification point ---
  /// np_min_time_between_cnps: a QP sends at most one CNP per interval.
  Time np_min_time_between_cnps = 4000;
  /// np_cnp_dscp: the DSCP of CNPs (the IP header's ECN bits stay 00).
  std::uint8_t np_cnp_dscp = 48;

  // --- reaction point ---
  Reaction reaction = Reaction::Periodic;
  Increase increase = Increase::Paper;
  /// rp_dce_tcp_g: the gain g, in units of 2^-20 (1/256 is 4096).
  std::uint32_t g = 5120;
  /// rp_initial_alpha_value: alpha set on a QP's first CNP, units of 2^-20.
  std::uint32_t initial_alpha = 1023u << 10;
  /// rp_dce_tcp_rtt: the alpha timer (the paper's K).
  Time alpha_period = 1000;
  /// rp_rate_reduce_monitor_period: the rate is cut at most once per period
  /// (Reaction::Periodic only).
  Time rate_decrease_period = 4000;
  /// rp_time_reset: the rate-increase timer (the paper's T); restarts on
  /// every cut.
  Time rate_increase_period = 300000;
  /// rp_byte_reset: an increase event every this many bytes sent since the
  /// last cut (the paper's B); 0: no byte counter.
  std::uint64_t byte_counter = 32767;
  /// rp_threshold: fast-recovery stages (the paper's F).
  std::uint32_t fast_recovery_stages = 1;
  /// rp_ai_rate, rp_hai_rate: the additive and hyper-additive steps of the
  /// target rate, bit/s.
  std::uint64_t ai_rate_bps = 5'000'000;
  std::uint64_t hai_rate_bps = 50'000'000;
  /// rp_min_rate: the rate never falls below this, bit/s.
  std::uint64_t min_rate_bps = 1'000'000;
  /// rp_max_rate: the highest rate, bit/s; 0: the port's line rate.
  std::uint64_t max_rate_bps = 0;
  /// rp_rate_to_set_on_first_cnp: current and target rate set on the first
  /// CNP (bit/s, Reaction::Periodic); 0: keep the current rate.
  std::uint64_t rate_on_first_cnp_bps = 0;
  /// rp_clamp_tgt_rate: true, every cut sets the target rate to the current
  /// one (the paper); false, only a cut that follows an increase event does
  /// (the reference code's ClampTargetRate 0).
  bool clamp_target_rate = false;

  /// The switch side of the preset (not used by the NIC).
  EcnMarking ecn;
};

/// Zhu et al., SIGCOMM 2015 (sections 3 and 5, 40 Gb/s testbed): Kmin 5 KB,
/// Kmax 200 KB, Pmax 1 %, g 1/256, CNP interval N 50 us, alpha timer K 55 us,
/// rate-increase timer T 55 us, byte counter B 10 MB, F 5, R_AI 40 Mb/s.
/// The paper gives no R_HAI: 80 Mb/s is the reference code's `dcqcn_paper`
/// choice (50 Mb/s at 25 Gb/s, scaled to 40 Gb/s). Minimum rate: not in the
/// paper; 1 Mb/s as mlx5.
[[nodiscard]] DcqcnParams dcqcn_paper();
/// The reference code (alibaba-edu/High-Precision-Congestion-Control,
/// simulation/run.py --cc dcqcn, rdma-hw.cc's Mellanox version) at
/// `line_rate_bps`: Kmin 100 KB, Kmax 400 KB, Pmax 0.2 (at 25 Gb/s, scaled
/// with the rate), g 1/256, alpha timer 1 us, rate cut at most every 4 us,
/// rate-increase timer 300 us, no byte counter, F 1, AI 5 Mb/s and HAI
/// 50 Mb/s (at 25 Gb/s, scaled), min rate 1 Gb/s, no clamp. The reference
/// code sends no CNP of its own: it ACKs every packet (L2_ACK_INTERVAL 1)
/// and the ACK of a CE-marked packet carries a CNP flag, so its alpha timer
/// may see a CNP in every 1 us period. This preset paces CNPs at 4 us, as
/// mlx5 NPs do: the cut, sampled every 4 us, sees the same; alpha rises by
/// g at most once per 4 us instead of once per 1 us while every packet is
/// marked (above Kmax). Between Kmin and Kmax a period rarely holds two
/// marked packets of one QP and the two agree (chapter 26 measures both).
[[nodiscard]] DcqcnParams hpcc_dcqcn(std::uint64_t line_rate_bps);
/// NVIDIA ConnectX-4 and later, the firmware defaults of the mlx5 cc_params
/// as NVIDIA's "DCQCN parameters" page lists them: dce_tcp_g 1019 (g =
/// 5/1024), dce_tcp_rtt 1 us, initial_alpha_value 1023, rate_reduce_monitor_
/// period 4 us, time_reset 300 us, byte_reset 32767, threshold 1, ai_rate
/// 5 Mb/s, hai_rate 50 Mb/s, min_rate 1 Mb/s, clamp_tgt_rate 0,
/// rate_to_set_on_first_cnp 0; np_min_time_between_cnps 4 us, cnp_dscp 48.
/// How the firmware combines its byte and time stages is not documented:
/// Increase::Paper is a model. ECN: the reference code's 100 KB / 400 KB /
/// 0.2 at 25 Gb/s (NICs have no marking thresholds).
[[nodiscard]] DcqcnParams mlx5();

/// One change of an RP's state, for a lab's time series.
struct DcqcnSample {
  enum class Event : std::uint8_t {
    Cnp,           // a CNP arrived (Periodic: the cut comes later)
    Decrease,      // the rate was cut
    Alpha,         // the alpha timer fired
    FastRecovery,  // Rc = (Rt + Rc) / 2
    Additive,      // Rt += AI, then fast recovery's step
    Hyper,         // Rt += i * HAI, then fast recovery's step
    Idle,          // back at the line rate with alpha 0: timers stopped
  };
  Time time = 0;
  Event event = Event::Cnp;
  std::uint64_t rate_bps = 0;    // Rc
  std::uint64_t target_bps = 0;  // Rt
  std::uint32_t alpha = 0;       // units of 2^-20
};

/// The reaction point of one QP.
class DcqcnRp {
 public:
  /// `line_rate_bps`: the port's rate; the QP starts there.
  DcqcnRp(const DcqcnParams& params, std::uint64_t line_rate_bps);

  /// A CNP for this QP arrived at `t` (timers due at or before t run first).
  void on_cnp(Time t);
  /// `bytes` left the NIC for this QP at `t` (the byte counter).
  void on_bytes_sent(std::uint64_t bytes, Time t);
  /// Runs every timer due at or before `t`, in time order; at equal times
  /// the alpha timer first, then the rate cut, then the rate increase.
  void advance_to(Time t);
  /// When the next timer is due; INT64_MAX when none runs (before the first
  /// CNP, or idle again).
  [[nodiscard]] Time next_timer() const noexcept;
  /// When a timer may next change the rate: the next rate-increase event, or
  /// the next periodic cut when a CNP waits for it; INT64_MAX when none is
  /// due. (A cut of Reaction::PerCnp comes with its CNP.)
  [[nodiscard]] Time next_rate_change() const noexcept;

  [[nodiscard]] std::uint64_t rate_bps() const noexcept { return rc_; }
  [[nodiscard]] std::uint64_t target_bps() const noexcept { return rt_; }
  /// alpha in units of 2^-20.
  [[nodiscard]] std::uint32_t alpha() const noexcept { return alpha_; }
  /// The stage counters: rate-increase timer and byte counter events since
  /// the last cut.
  [[nodiscard]] std::uint32_t timer_stage() const noexcept { return t_stage_; }
  [[nodiscard]] std::uint32_t byte_stage() const noexcept { return b_stage_; }
  /// Whether the QP is rate limited (a CNP came and it has not recovered).
  [[nodiscard]] bool active() const noexcept { return active_; }
  [[nodiscard]] const DcqcnParams& params() const noexcept { return p_; }
  [[nodiscard]] std::uint64_t line_rate_bps() const noexcept { return line_; }

  /// Called on every change of state (a time series for labs and tests).
  void set_observer(std::function<void(const DcqcnSample&)> observer) {
    observer_ = std::move(observer);
  }

 private:
  void first_cnp(Time t);
  void decrease(Time t);
  void update_alpha(Time t, bool cnp);
  void increase_event(Time t, bool from_timer);
  void check_idle(Time t);
  void emit(Time t, DcqcnSample::Event e) const;

  DcqcnParams p_;
  std::uint64_t line_ = 0;
  std::uint64_t max_ = 0;  // the highest rate: max_rate_bps or the line rate
  std::uint64_t rc_ = 0;
  std::uint64_t rt_ = 0;
  std::uint32_t alpha_ = 0;
  bool active_ = false;
  bool cnp_for_alpha_ = false;     // Periodic: a CNP came this alpha period
  bool cnp_for_decrease_ = false;  // Periodic: a CNP came since the last cut
  std::uint32_t t_stage_ = 0;
  std::uint32_t b_stage_ = 0;
  std::uint64_t bytes_ = 0;  // since the last byte-counter event
  Time next_alpha_ = 0;
  Time next_decrease_ = 0;
  Time next_increase_ = 0;
  std::function<void(const DcqcnSample&)> observer_;
};

/// The notification point's pacing for one QP: at most one CNP per
/// np_min_time_between_cnps.
class DcqcnNp {
 public:
  explicit DcqcnNp(Time interval) noexcept : interval_(interval) {}
  /// A CE-marked packet arrived at `t`: true when a CNP is to be sent now.
  [[nodiscard]] bool on_marked(Time t) noexcept {
    if (sent_ && t - last_ < interval_) return false;
    sent_ = true;
    last_ = t;
    return true;
  }

 private:
  Time interval_ = 0;
  Time last_ = 0;
  bool sent_ = false;
};

}  // namespace rdmalab::sim

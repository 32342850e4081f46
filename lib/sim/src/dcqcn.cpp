// The DCQCN reaction point and the parameter presets (see dcqcn.hpp).
//
// The algorithm follows Zhu et al. (SIGCOMM 2015, section 3.2 and figure 7)
// and the reference code's "Mellanox version" (alibaba-edu/High-Precision-
// Congestion-Control, simulation/src/point-to-point/model/rdma-hw.cc:
// UpdateAlphaMlx, CheckRateDecreaseMlx, RateIncEventMlx). Where they differ,
// DcqcnParams::Reaction and DcqcnParams::Increase choose:
//   - the paper cuts the rate on every CNP and updates alpha with it; the
//     reference code samples "a CNP came" every alpha period (1 us) and every
//     rate-decrease period (4 us), and its first CNP only sets alpha to 1 and
//     starts those timers: the first cut comes one period later, with alpha
//     decayed by the alpha ticks in between;
//   - the paper has a byte counter next to the timer and hyper-increases by
//     i * R_HAI; the reference code has the timer only, one additive step
//     (stage F) and then a constant R_HAI per event;
//   - the paper always clamps the target rate on a cut (Rt = Rc); the
//     reference code (ClampTargetRate 0) does so only after an increase event;
//   - the reference code keeps rates and alpha in doubles and adds 1 ns to the
//     rate-decrease timer to order it after the alpha timer; here rates are
//     integers (products rounded down, the fast-recovery average rounded up
//     so that Rc reaches Rt) and equal due times run alpha, then the cut.
#include "rdmalab/sim/dcqcn.hpp"

#include <algorithm>
#include <climits>

namespace rdmalab::sim {
namespace {

constexpr Time kNever = INT64_MAX;
constexpr Time kUs = 1000;

}  // namespace

// --- Presets -------------------------------------------------------------------

DcqcnParams dcqcn_paper() {
  DcqcnParams p;
  p.np_min_time_between_cnps = 50 * kUs;  // N
  p.reaction = DcqcnParams::Reaction::PerCnp;
  p.increase = DcqcnParams::Increase::Paper;
  p.g = DcqcnParams::kAlphaOne / 256;
  p.initial_alpha = DcqcnParams::kAlphaOne;  // alpha starts at 1
  p.alpha_period = 55 * kUs;                 // K
  p.rate_decrease_period = 0;                // every CNP cuts
  p.rate_increase_period = 55 * kUs;         // T
  p.byte_counter = 10'000'000;               // B = 10 MB
  p.fast_recovery_stages = 5;                // F
  p.ai_rate_bps = 40'000'000;
  p.hai_rate_bps = 80'000'000;
  p.min_rate_bps = 1'000'000;
  p.clamp_target_rate = true;
  p.ecn = EcnMarking{5'000, 200'000, 0.01};
  return p;
}

DcqcnParams hpcc_dcqcn(std::uint64_t line_rate_bps) {
  // run.py scales with bw / 25 (Gb/s): at line rate L bit/s, Kmin = 100 KB *
  // L / 25 Gb/s = L / 250000 bytes, Kmax = L / 62500, AI = 5 Mb/s * L /
  // 25 Gb/s = L / 5000, HAI = L / 500.
  DcqcnParams p;
  p.np_min_time_between_cnps = 4 * kUs;
  p.reaction = DcqcnParams::Reaction::Periodic;
  p.increase = DcqcnParams::Increase::Reference;
  p.g = DcqcnParams::kAlphaOne / 256;        // EWMA_GAIN 0.00390625
  p.initial_alpha = DcqcnParams::kAlphaOne;  // cnp_received_mlx: alpha = 1
  p.alpha_period = 1 * kUs;                  // ALPHA_RESUME_INTERVAL 1
  p.rate_decrease_period = 4 * kUs;          // RATE_DECREASE_INTERVAL 4
  p.rate_increase_period = 300 * kUs;        // RP_TIMER 300
  p.byte_counter = 0;                        // no byte counter
  p.fast_recovery_stages = 1;                // FAST_RECOVERY_TIMES 1
  p.ai_rate_bps = line_rate_bps / 5000;
  p.hai_rate_bps = line_rate_bps / 500;
  p.min_rate_bps = 1'000'000'000;  // MIN_RATE 1000Mb/s
  p.clamp_target_rate = false;     // CLAMP_TARGET_RATE 0
  p.rate_on_first_cnp_bps = 0;     // RateOnFirstCnp 1.0: the current rate
  p.ecn = EcnMarking{line_rate_bps / 250'000, line_rate_bps / 62'500, 0.2};
  return p;
}

DcqcnParams mlx5() {
  DcqcnParams p;  // the defaults are mlx5's
  p.ecn = EcnMarking{100'000, 400'000, 0.2};
  return p;
}

// --- Reaction point --------------------------------------------------------------

DcqcnRp::DcqcnRp(const DcqcnParams& params, std::uint64_t line_rate_bps)
    : p_(params),
      line_(line_rate_bps),
      max_(params.max_rate_bps != 0 ? std::min(params.max_rate_bps, line_rate_bps) : line_rate_bps),
      rc_(max_),
      rt_(max_),
      next_alpha_(kNever),
      next_decrease_(kNever),
      next_increase_(kNever) {
  // A period of 0 would make a timer fire forever at one instant.
  p_.alpha_period = std::max<Time>(p_.alpha_period, 1);
  p_.rate_decrease_period = std::max<Time>(p_.rate_decrease_period, 1);
  p_.rate_increase_period = std::max<Time>(p_.rate_increase_period, 1);
  p_.g = std::min(p_.g, DcqcnParams::kAlphaOne);
  p_.initial_alpha = std::min(p_.initial_alpha, DcqcnParams::kAlphaOne);
}

Time DcqcnRp::next_timer() const noexcept {
  return std::min({next_alpha_, next_decrease_, next_increase_});
}

Time DcqcnRp::next_rate_change() const noexcept {
  return std::min(next_increase_, cnp_for_decrease_ ? next_decrease_ : kNever);
}

void DcqcnRp::emit(Time t, DcqcnSample::Event e) const {
  if (observer_) observer_(DcqcnSample{t, e, rc_, rt_, alpha_});
}

void DcqcnRp::advance_to(Time t) {
  while (active_) {
    const Time due = next_timer();
    if (due > t) return;
    if (next_alpha_ == due) {
      next_alpha_ += p_.alpha_period;
      const bool cnp = p_.reaction == DcqcnParams::Reaction::Periodic && cnp_for_alpha_;
      cnp_for_alpha_ = false;
      update_alpha(due, cnp);
      check_idle(due);
    } else if (next_decrease_ == due) {
      next_decrease_ += p_.rate_decrease_period;
      if (cnp_for_decrease_) {
        cnp_for_decrease_ = false;
        decrease(due);
      }
    } else {
      next_increase_ += p_.rate_increase_period;
      increase_event(due, true);
      check_idle(due);
    }
  }
}

void DcqcnRp::on_cnp(Time t) {
  advance_to(t);
  const bool first = !active_;
  if (first) first_cnp(t);
  emit(t, DcqcnSample::Event::Cnp);
  if (p_.reaction == DcqcnParams::Reaction::Periodic) {
    // The first CNP starts the timers; later ones are sampled by them.
    if (!first) cnp_for_alpha_ = true;
    cnp_for_decrease_ = true;
    return;
  }
  // The paper: cut with the current alpha, then raise alpha, and restart the
  // alpha timer.
  decrease(t);
  update_alpha(t, true);
  next_alpha_ = t + p_.alpha_period;
}

void DcqcnRp::first_cnp(Time t) {
  active_ = true;
  alpha_ = p_.initial_alpha;
  t_stage_ = b_stage_ = 0;
  bytes_ = 0;
  cnp_for_alpha_ = cnp_for_decrease_ = false;
  next_alpha_ = t + p_.alpha_period;
  if (p_.reaction == DcqcnParams::Reaction::Periodic) {
    next_decrease_ = t + p_.rate_decrease_period;
    if (p_.rate_on_first_cnp_bps != 0) rc_ = rt_ = std::min(p_.rate_on_first_cnp_bps, max_);
  }
}

void DcqcnRp::decrease(Time t) {
  if (p_.clamp_target_rate || t_stage_ + b_stage_ > 0) rt_ = rc_;
  // Rc * (1 - alpha / 2): alpha is in units of 2^-20, alpha / 2 of 2^-21.
  const std::uint64_t cut = (rc_ * alpha_) >> 21;
  rc_ = std::max(rc_ - cut, p_.min_rate_bps);
  t_stage_ = b_stage_ = 0;
  bytes_ = 0;
  next_increase_ = t + p_.rate_increase_period;
  emit(t, DcqcnSample::Event::Decrease);
}

void DcqcnRp::update_alpha(Time t, bool cnp) {
  // alpha = (1 - g) alpha + g [CNP], the product rounded down.
  const std::uint64_t kept =
      (std::uint64_t{alpha_} * (DcqcnParams::kAlphaOne - p_.g)) >> 20;  // < 2^20 * 2^20
  alpha_ = static_cast<std::uint32_t>(kept) + (cnp ? p_.g : 0);
  emit(t, DcqcnSample::Event::Alpha);
}

void DcqcnRp::increase_event(Time t, bool from_timer) {
  const std::uint32_t f = p_.fast_recovery_stages;
  DcqcnSample::Event e = DcqcnSample::Event::FastRecovery;
  std::uint64_t step = 0;
  if (p_.increase == DcqcnParams::Increase::Paper) {
    const std::uint32_t hi = std::max(t_stage_, b_stage_);
    const std::uint32_t lo = std::min(t_stage_, b_stage_);
    if (hi < f) {
      e = DcqcnSample::Event::FastRecovery;
    } else if (lo > f) {
      e = DcqcnSample::Event::Hyper;
      step = std::uint64_t{lo - f} * p_.hai_rate_bps;
    } else {
      e = DcqcnSample::Event::Additive;
      step = p_.ai_rate_bps;
    }
  } else {
    const std::uint32_t s = t_stage_ + b_stage_;
    if (s < f) {
      e = DcqcnSample::Event::FastRecovery;
    } else if (s == f) {
      e = DcqcnSample::Event::Additive;
      step = p_.ai_rate_bps;
    } else {
      e = DcqcnSample::Event::Hyper;
      step = p_.hai_rate_bps;
    }
  }
  rt_ = std::min(rt_ + step, max_);
  rc_ = (rt_ + rc_ + 1) / 2;  // rounded up: Rc reaches Rt
  if (from_timer)
    ++t_stage_;
  else
    ++b_stage_;
  emit(t, e);
}

void DcqcnRp::on_bytes_sent(std::uint64_t bytes, Time t) {
  advance_to(t);
  if (!active_ || p_.byte_counter == 0) return;
  bytes_ += bytes;
  while (active_ && bytes_ >= p_.byte_counter) {
    bytes_ -= p_.byte_counter;
    increase_event(t, false);
    check_idle(t);
  }
}

// Back at the highest rate with nothing left to decay: the timers stop (a
// model: real NICs free the rate limiter of a recovered flow, when exactly is
// not documented), and the next CNP is a first CNP again.
void DcqcnRp::check_idle(Time t) {
  if (rc_ != max_ || rt_ != max_ || alpha_ != 0 || cnp_for_alpha_ || cnp_for_decrease_) return;
  active_ = false;
  next_alpha_ = next_decrease_ = next_increase_ = kNever;
  t_stage_ = b_stage_ = 0;
  bytes_ = 0;
  emit(t, DcqcnSample::Event::Idle);
}

}  // namespace rdmalab::sim

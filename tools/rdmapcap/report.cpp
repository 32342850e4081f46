#include "rdmapcap/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <utility>

#include "rdmalab/i18n/i18n.hpp"
#include "rdmalab/wire/pause.hpp"
#include "rdmapcap/messages.hpp"

namespace rdmapcap {
namespace {

namespace dissect = rdmalab::dissect;
namespace wire = rdmalab::wire;
namespace i18n = rdmalab::i18n;
using dissect::Event;
using dissect::EventType;
using dissect::Severity;

template <class... Args>
void put(std::string& out, fmt::format_string<Args...> f, Args&&... args) {
  fmt::format_to(std::back_inserter(out), f, std::forward<Args>(args)...);
}

/// Text for HTML element content and attribute values.
std::string esc(std::string_view s) {
  std::string r;
  r.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': r += "&amp;"; break;
      case '<': r += "&lt;"; break;
      case '>': r += "&gt;"; break;
      case '"': r += "&quot;"; break;
      default: r.push_back(c);
    }
  }
  return r;
}

/// "12.5 µs", "3.20 ms", "1.250 s" (the units of rdmapcap's summary).
std::string duration_text(std::int64_t ns) {
  const double v = static_cast<double>(ns);
  if (ns < 1000) return fmt::format("{} ns", ns);
  if (ns < 1'000'000) return fmt::format("{:.1f} µs", v / 1e3);
  if (ns < 1'000'000'000) return fmt::format("{:.2f} ms", v / 1e6);
  return fmt::format("{:.3f} s", v / 1e9);
}

/// "9.87 Gbit/s" from bits per second.
std::string rate_text(double bps) {
  if (bps >= 1e9) return fmt::format("{:.2f} Gbit/s", bps / 1e9);
  if (bps >= 1e6) return fmt::format("{:.2f} Mbit/s", bps / 1e6);
  if (bps >= 1e3) return fmt::format("{:.2f} kbit/s", bps / 1e3);
  return fmt::format("{:.0f} bit/s", bps);
}

/// Seconds since the start of the capture, to the microsecond.
std::string seconds_text(std::int64_t ns) {
  return fmt::format("{:.6f}", static_cast<double>(ns) / 1e9);
}

std::string_view severity_class(Severity s) {
  return dissect::severity_name(s);  // "info", "notice", "warning", "error"
}

/// The LadderSvg picture made zoomable and unique inside one page: a
/// viewBox (so CSS can scale it) and its arrow-head marker renamed, since a
/// page holds many pictures and a hidden one's marker would not be drawn.
std::string embed_svg(std::string svg, const std::string& marker) {
  const std::size_t h = svg.find(" height=\"");
  if (h != std::string::npos) {
    const std::size_t start = h + 9;
    const std::size_t end = svg.find('"', start);
    const std::string height = svg.substr(start, end - start);
    svg.insert(h, fmt::format(" viewBox=\"0 0 1500 {}\"", height));
  }
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"id=\"a\"", "id=\"" + marker + "\""},
        {"url(#a)", "url(#" + marker + ")"}}) {
    for (std::size_t at = svg.find(from); at != std::string::npos;
         at = svg.find(from, at + to.size()))
      svg.replace(at, from.size(), to);
  }
  return svg;
}

constexpr std::string_view kStyle = R"css(
body{font-family:"DejaVu Sans","Noto Sans CJK SC","Source Han Sans SC","WenQuanYi Micro Hei","Microsoft YaHei","PingFang SC",sans-serif;margin:0 auto;max-width:1560px;padding:0 16px 40px;color:#222;line-height:1.45}
h1{font-size:1.6em;margin:.6em 0 .1em}h2{border-bottom:2px solid #ccd;padding-bottom:2px;margin-top:1.6em}
h3{margin-top:1.4em;background:#eef2f8;padding:4px 8px}h4{margin:1em 0 .3em}
.gen{color:#666;margin:0}nav ul{columns:2;margin:.3em 0}
table{border-collapse:collapse;margin:.4em 0}td,th{border:1px solid #ccd;padding:2px 8px;text-align:left;vertical-align:top}
th{background:#f3f5f9}table.kv th{font-weight:normal;color:#444}
tr.error td,li.error{color:#b00000}tr.warning td,li.warning{color:#a05a00}tr.notice td,li.notice{color:#006078}
tr:target td,g.hit text{font-weight:bold}tr:target{outline:2px solid #e0a000}
pre.summary{background:#f7f7f9;border:1px solid #e0e0e8;padding:8px;overflow:auto;font-size:13px}
.ladder .bar{margin:.3em 0;display:flex;gap:8px;align-items:center}
.ladder .view{overflow:auto;border:1px solid #ccd;max-height:80vh}
.ladder svg{display:block;width:1500px;height:auto}
svg.plot{display:block;border:1px solid #dde;background:#fff;margin:.3em 0}
.note{color:#666;font-style:italic}
button{font:inherit;padding:1px 10px}
)css";

constexpr std::string_view kScript = R"js(
(function () {
  'use strict';
  function pages(lad) { return lad.querySelectorAll('.page'); }
  function show(lad, i) {
    var p = pages(lad);
    i = Math.max(0, Math.min(p.length - 1, i));
    for (var k = 0; k < p.length; k++) p[k].hidden = k !== i;
    lad.dataset.current = String(i);
    lad.querySelector('.pageno').textContent =
        lad.dataset.fmt.replace('{0}', String(i + 1)).replace('{1}', String(p.length));
  }
  function zoom(lad, f) {
    var z = Math.max(0.25, Math.min(4, parseFloat(lad.dataset.zoom || '1') * f));
    lad.dataset.zoom = String(z);
    lad.querySelectorAll('svg').forEach(function (s) { s.style.width = (1500 * z) + 'px'; });
  }
  document.querySelectorAll('.ladder').forEach(function (lad) {
    show(lad, 0);
    var cur = function () { return parseInt(lad.dataset.current, 10); };
    lad.querySelector('.prev').addEventListener('click', function () { show(lad, cur() - 1); });
    lad.querySelector('.next').addEventListener('click', function () { show(lad, cur() + 1); });
    lad.querySelector('.zin').addEventListener('click', function () { zoom(lad, 1.25); });
    lad.querySelector('.zout').addEventListener('click', function () { zoom(lad, 0.8); });
  });
  // A link to a frame's row: open the ladder page that holds it, mark it.
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!id) return;
    var el = document.getElementById(id);
    if (!el) return;
    var page = el.closest('.page');
    if (page) show(page.closest('.ladder'), parseInt(page.dataset.page, 10));
    document.querySelectorAll('g.hit').forEach(function (g) { g.classList.remove('hit'); });
    if (el.tagName.toLowerCase() === 'g') el.classList.add('hit');
    el.scrollIntoView({block: 'center'});
  }
  window.addEventListener('hashchange', reveal);
  reveal();
})();
)js";

// The timeline plots: one lane per quantity over the whole capture's time.
constexpr int kPlotWidth = 1100, kLabelWidth = 250, kRateHeight = 90, kLaneHeight = 26,
              kAxisHeight = 28;
// The overview: a title and legend, then per requester QP a rate lane with a
// strip of CE and CNP ticks under it.
constexpr int kLegendHeight = 44, kOverviewRate = 30, kOverviewLaneHeight = 44;
// Under the ticks, when the capture has round trips: the queueing delay.
constexpr int kOverviewDelay = 20;

}  // namespace

Report::Report(const dissect::Analyzer& first, std::int64_t start_ns, ReportOptions options)
    : opt_(std::move(options)), stats_(first.stats()), pfc_(first.pfc()), start_ns_(start_ns) {
  std::vector<dissect::ConversationSummary> all = first.summaries();
  total_convs_ = all.size();
  // The lowest round trip towards each responder address, over every channel.
  std::map<wire::IpAddress, std::int64_t> base;
  for (const dissect::ConversationSummary& s : all) {
    total_channels_ += s.channels.size();
    for (const dissect::ChannelSummary& ch : s.channels) {
      if (ch.rtt_samples == 0) continue;
      const auto [it, added] = base.try_emplace(ch.responder.addr, ch.rtt_min_ns);
      if (!added) it->second = std::min(it->second, ch.rtt_min_ns);
    }
  }
  for (dissect::ConversationSummary& s : all) {
    if (convs_.size() == opt_.conversations) break;
    Conversation c;
    c.channels.resize(s.channels.size());
    for (std::size_t i = 0; i < s.channels.size(); ++i) {
      const auto it = base.find(s.channels[i].responder.addr);
      if (it != base.end()) c.channels[i].base_rtt_ns = it->second;
    }
    c.summary = std::move(s);
    convs_.push_back(std::move(c));
  }
}

Report::Conversation* Report::conversation(std::uint32_t id) {
  if (id == 0 || id > convs_.size()) return nullptr;
  return &convs_[id - 1];
}

void Report::pause_frame(const dissect::PacketRecord& rec) {
  const wire::PauseFrame& p = *rec.pause;
  const auto one = [&](std::uint8_t priority, std::uint16_t quanta) {
    auto it = std::find_if(pauses_.begin(), pauses_.end(), [&](const PauseTrack& t) {
      return t.src == p.src && t.priority == priority;
    });
    if (it == pauses_.end()) {
      pauses_.push_back(PauseTrack{p.src, priority, -1, {}});
      it = std::prev(pauses_.end());
    }
    const std::int64_t d = wire::pause_quanta_ns(quanta, stats_.link_speed_bps);
    const std::int64_t t = rec.time_ns;
    if (it->until_ns >= 0 && t < it->until_ns) {
      // Paused already: the new time replaces what was left (XON ends it).
      it->intervals.back().second = t + d;
      it->until_ns = d > 0 ? t + d : -1;
    } else if (d > 0) {
      it->intervals.emplace_back(t, t + d);
      it->until_ns = t + d;
    } else {
      it->until_ns = -1;
    }
  };
  if (p.pfc()) {
    for (std::uint8_t prio = 0; prio < wire::kPriorities; ++prio)
      if (p.enabled(prio)) one(prio, p.quanta[prio]);
  } else {
    one(static_cast<std::uint8_t>(wire::kPriorities), p.quanta[0]);
  }
}

void Report::packet(const dissect::PacketRecord& rec) {
  if (rec.pause) {
    pause_frame(rec);
    for (const Event& e : rec.events) {
      if (pfc_events_.size() < opt_.events_per_conv)
        pfc_events_.push_back(EventRow{e, rec.time_ns, false});
    }
  }
  // CE marks, CNPs and round trips go to the timeline of the channel the
  // analyser put the packet in: a CE-marked request or READ response, the
  // CNP that answers it, the response that took an RTT sample.
  if (Conversation* c = conversation(rec.conversation);
      c != nullptr && rec.channel >= 0 &&
      static_cast<std::size_t>(rec.channel) < c->channels.size()) {
    Channel& ch = c->channels[static_cast<std::size_t>(rec.channel)];
    // A mark counts where it is on the channel's data (as the summary's
    // ecn_ce): a request or a READ response, not an ACK.
    const bool data = rec.op != nullptr && rec.op->carries_data();
    for (const Event& e : rec.events) {
      if (e.type == EventType::EcnMarked && data) ch.ce_ns.push_back(rec.time_ns);
      if (e.type == EventType::Cnp) ch.cnp_ns.push_back(rec.time_ns);
    }
    if (rec.rtt_ns >= 0) ch.rtt.emplace_back(rec.time_ns, rec.rtt_ns);
  }
  Conversation* c = conversation(rec.conversation);
  if (c == nullptr) return;
  if (c->drawn < opt_.rows) {
    if (c->drawn % opt_.rows_per_page == 0) {
      // Room for the end-of-capture notes on the last page.
      c->pages.emplace_back(c->summary.a, c->summary.b, start_ns_, opt_.rows_per_page + 32);
      c->pages.back().set_anchors(true);
    }
    c->pages.back().row(rec);
    c->drawn_frames.push_back(rec.frame);
    ++c->drawn;
  } else {
    ++c->not_drawn;
  }
  for (const Event& e : rec.events) {
    if (dissect::severity(e.type) == Severity::Info) continue;
    if (c->events.size() < opt_.events_per_conv)
      c->events.push_back(EventRow{e, rec.time_ns, false});
    else
      ++c->events_not_listed;
  }
}

void Report::finish(std::span<const Event> end_events) {
  findings_.assign(end_events.begin(), end_events.end());
  for (const Event& e : end_events) {
    if (Conversation* c = conversation(e.conversation)) {
      c->events.push_back(EventRow{e, -1, true});
      if (!c->pages.empty()) c->pages.back().note(e);
    } else if (e.conversation == 0) {
      pfc_events_.push_back(EventRow{e, -1, true});
    }
  }
  // A pause still running when the capture ended is cut there, as the
  // summary counts it ("paused ... inside the capture").
  for (PauseTrack& t : pauses_)
    for (auto& [from, to] : t.intervals) to = std::min(to, stats_.last_ns);
}

bool Report::drawn(const Conversation& c, std::uint64_t frame) const {
  return std::binary_search(c.drawn_frames.begin(), c.drawn_frames.end(), frame);
}

void Report::section_capture(std::string& out) const {
  put(out, "<section id=\"capture\"><h2>{}</h2>\n<table class=\"kv\">\n",
      esc(i18n::text(M("rep.capture"))));
  const auto row = [&](const i18n::Message& label, const std::string& value) {
    put(out, "<tr><th>{}</th><td>{}</td></tr>\n", esc(i18n::text(label)), esc(value));
  };
  row(M("rep.frames"), std::to_string(stats_.frames));
  row(M("rep.roce"), fmt::format("{} ({})", stats_.roce, stats_.roce_v1));
  row(M("rep.other"), std::to_string(stats_.other));
  row(M("rep.malformed"),
      fmt::format("{} / {} / {}", stats_.malformed, stats_.icrc_errors, stats_.unknown_opcode));
  row(M("rep.pause_frames"), std::to_string(stats_.pause_frames));
  row(M("rep.duration"), duration_text(stats_.last_ns - stats_.first_ns));
  row(M("rep.conv_count"), std::to_string(total_convs_));
  const std::uint64_t gbps = stats_.link_speed_bps / 1'000'000'000;
  using Source = dissect::CaptureStats::SpeedSource;
  switch (stats_.link_speed_source) {
    case Source::Given: row(M("rep.link_speed"), i18n::tr(M("rep.speed_given"), gbps)); break;
    case Source::Inferred: row(M("rep.link_speed"), i18n::tr(M("rep.speed_inferred"), gbps)); break;
    case Source::Assumed: row(M("rep.link_speed"), i18n::tr(M("rep.speed_assumed"), gbps)); break;
    case Source::None: row(M("rep.link_speed"), i18n::tr(M("rep.speed_none"))); break;
  }
  out += "</table></section>\n";
}

void Report::section_findings(std::string& out) const {
  put(out, "<section id=\"findings\"><h2>{}</h2>\n", esc(i18n::text(M("rep.findings"))));
  if (findings_.empty()) {
    put(out, "<p>{}</p></section>\n", esc(i18n::text(M("rep.no_findings"))));
    return;
  }
  out += "<ul>\n";
  for (const Event& e : findings_) {
    const Severity sev = dissect::severity(e.type);
    put(out, "<li class=\"finding {}\" data-type=\"{}\" data-frame=\"{}\">[{}] {}",
        severity_class(sev), dissect::event_name(e.type), e.frame,
        esc(dissect::severity_label(sev)), esc(dissect::describe(e)));
    const Conversation* c = e.conversation != 0 && e.conversation <= convs_.size()
                                ? &convs_[e.conversation - 1]
                                : nullptr;
    const bool pfc_row =
        e.conversation == 0 &&
        std::any_of(pfc_events_.begin(), pfc_events_.end(), [&](const EventRow& r) {
          return !r.end_of_capture && r.event.frame == e.frame;
        });
    const std::string frame = i18n::tr(M("rep.col.frame")) + " " + std::to_string(e.frame);
    if ((c != nullptr && drawn(*c, e.frame)) || pfc_row)
      put(out, " — <a href=\"#f{}\">{}</a>", e.frame, esc(frame));
    else
      put(out, " — {}", esc(frame));
    if (c != nullptr)
      put(out, ", <a href=\"#conv-{0}\">{1}</a>", e.conversation,
          esc(i18n::tr(M("rep.finding_conv"), e.conversation)));
    out += "</li>\n";
  }
  out += "</ul></section>\n";
}

void Report::ladder(const Conversation& c, std::string& out) const {
  put(out, "<h4>{}</h4>\n", esc(i18n::text(M("rep.ladder"))));
  if (c.pages.empty()) return;
  put(out,
      "<div class=\"ladder\" data-fmt=\"{}\"><div class=\"bar\"><button class=\"prev\" "
      "type=\"button\">{}</button><span class=\"pageno\"></span><button class=\"next\" "
      "type=\"button\">{}</button><button class=\"zout\" type=\"button\">{}</button><button "
      "class=\"zin\" type=\"button\">{}</button></div>\n<div class=\"view\">\n",
      esc(i18n::text(M("rep.page"))), esc(i18n::text(M("rep.prev"))),
      esc(i18n::text(M("rep.next"))), esc(i18n::text(M("rep.zoom_out"))),
      esc(i18n::text(M("rep.zoom_in"))));
  for (std::size_t i = 0; i < c.pages.size(); ++i) {
    put(out, "<div class=\"page\" data-page=\"{}\"{}>\n", i, i == 0 ? "" : " hidden");
    out += embed_svg(c.pages[i].svg(), fmt::format("a{}_{}", c.summary.id, i));
    out += "</div>\n";
  }
  out += "</div></div>\n";
  if (c.not_drawn != 0)
    put(out, "<p class=\"note\">{}</p>\n", esc(i18n::tr(M("rep.rows_cut"), c.not_drawn)));
}

void Report::events_table(const Conversation& c, std::string& out) const {
  put(out, "<h4>{}</h4>\n", esc(i18n::text(M("rep.events"))));
  if (c.events.empty()) {
    put(out, "<p>{}</p>\n", esc(i18n::text(M("rep.no_events"))));
    return;
  }
  put(out,
      "<table class=\"events\"><thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th>"
      "</tr></thead><tbody>\n",
      esc(i18n::text(M("rep.col.frame"))), esc(i18n::text(M("rep.col.time"))),
      esc(i18n::text(M("rep.col.severity"))), esc(i18n::text(M("rep.col.event"))),
      esc(i18n::text(M("rep.col.text"))));
  for (const EventRow& r : c.events) {
    const Severity sev = dissect::severity(r.event.type);
    const std::string frame = drawn(c, r.event.frame)
                                  ? fmt::format("<a href=\"#f{0}\">{0}</a>", r.event.frame)
                                  : std::to_string(r.event.frame);
    put(out,
        "<tr class=\"{}\" data-type=\"{}\" data-frame=\"{}\" data-end=\"{}\"><td>{}</td><td>{}</td>"
        "<td>{}</td><td><code>{}</code></td><td>{}</td></tr>\n",
        severity_class(sev), dissect::event_name(r.event.type), r.event.frame,
        r.end_of_capture ? 1 : 0, frame,
        r.end_of_capture ? esc(i18n::text(M("rep.end"))) : seconds_text(r.time_ns - start_ns_),
        esc(dissect::severity_label(sev)), dissect::event_name(r.event.type),
        esc(dissect::describe(r.event)));
  }
  out += "</tbody></table>\n";
  if (c.events_not_listed != 0)
    put(out, "<p class=\"note\">{}</p>\n", esc(i18n::tr(M("rep.events_cut"), c.events_not_listed)));
}

double Report::x_of(std::int64_t t) const {
  const std::int64_t span = std::max<std::int64_t>(1, stats_.last_ns - stats_.first_ns);
  const double f = static_cast<double>(std::clamp<std::int64_t>(t - stats_.first_ns, 0, span)) /
                   static_cast<double>(span);
  return kLabelWidth + f * kPlotWidth;
}

namespace {

void lane_label(std::string& out, int y, const std::string& label) {
  put(out, "<text x=\"4\" y=\"{}\">{}</text>\n", y + 17, esc(label));
  put(out, "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#dde\"/>\n", kLabelWidth,
      y + kLaneHeight - 1, kLabelWidth + kPlotWidth);
}

/// The opening tag of a plot: `attrs` go on it as they are.
void svg_open(std::string& out, std::string_view attrs, int width, int height) {
  put(out,
      "<svg {} xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} "
      "{}\" shape-rendering=\"crispEdges\" font-size=\"12\" font-family=\"DejaVu Sans, Noto Sans "
      "CJK SC, sans-serif\">\n",
      attrs, width, height, width, height);
}

/// The highest rate of a channel's bins, in bits per second.
double peak_bps(const dissect::ChannelSummary& s) {
  const double bin = static_cast<double>(std::max<std::int64_t>(1, s.rate_bin_ns));
  double peak = 0;
  for (const std::uint64_t b : s.rate_bytes)
    peak = std::max(peak, static_cast<double>(b) * 8e9 / bin);
  return peak;
}

constexpr const char* kRateColor = "#4a78c0";
constexpr const char* kCeColor = "#d07000";
constexpr const char* kCnpColor = "#c00000";
constexpr const char* kPauseColor = "#8a50b0";
constexpr const char* kDelayColor = "#1a8a7a";

/// The highest queueing delay of a channel's RTT samples, or 0.
std::int64_t max_delay(const std::vector<std::pair<std::int64_t, std::int64_t>>& rtt,
                       std::int64_t base) {
  std::int64_t top = 0;
  for (const auto& [t, r] : rtt) top = std::max(top, r - base);
  return top;
}

}  // namespace

void Report::pause_lanes(int& y, std::string& out) const {
  for (const PauseTrack& t : pauses_) {
    const std::string mac = wire::mac_to_string(t.src);
    lane_label(out, y,
               t.priority < wire::kPriorities ? i18n::tr(M("rep.lane.pfc"), mac, t.priority)
                                              : i18n::tr(M("rep.lane.pause"), mac));
    for (const auto& [from, to] : t.intervals)
      put(out,
          "<rect class=\"pfc\" data-src=\"{}\" data-priority=\"{}\" data-ns=\"{}\" x=\"{:.1f}\" "
          "y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>\n",
          mac, t.priority, to - from, x_of(from), y + 5, std::max(0.5, x_of(to) - x_of(from)),
          kLaneHeight - 10, kPauseColor, duration_text(to - from));
    y += kLaneHeight;
  }
}

void Report::time_axis(int y, std::string& out) const {
  const std::int64_t t0 = stats_.first_ns;
  const std::int64_t span = std::max<std::int64_t>(1, stats_.last_ns - stats_.first_ns);
  put(out, "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#444\"/>\n", kLabelWidth, y,
      kLabelWidth + kPlotWidth);
  for (int i = 0; i <= 4; ++i) {
    const std::int64_t t = t0 + span * i / 4;
    put(out,
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#444\"/><text "
        "x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"{4}\">{5}</text>\n",
        x_of(t), y, y + 4, y + 18,
        i == 0   ? "start"
        : i == 4 ? "end"
                 : "middle",
        seconds_text(t - start_ns_) + " s");
  }
}

void Report::timeline(const dissect::ChannelSummary& s, const Channel& ch, std::string& out,
                      const std::string& id) const {
  const std::size_t lanes = 3 + pauses_.size();
  const int height = kRateHeight + static_cast<int>(lanes) * kLaneHeight + kAxisHeight + 8;
  const int width = kLabelWidth + kPlotWidth + 20;
  put(out, "<h4>{}</h4>\n",
      esc(i18n::tr(M("rep.timeline"), dissect::endpoint_string(s.requester),
                   dissect::endpoint_string(s.responder))));
  svg_open(out,
           fmt::format("class=\"plot\" id=\"{}\" data-ce=\"{}\" data-cnp=\"{}\"", id,
                       ch.ce_ns.size(), ch.cnp_ns.size()),
           width, height);
  // Rate: request frame bits per bin, as the summary measured them.
  const double peak = peak_bps(s);
  int y = 4;
  put(out, "<text x=\"4\" y=\"{}\">{}</text>\n", y + kRateHeight / 2,
      esc(i18n::tr(M("rep.lane.rate"), rate_text(peak))));
  put(out, "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f6f8fc\"/>\n", kLabelWidth,
      y, kPlotWidth, kRateHeight);
  rate_bars(s, peak, y, kRateHeight, out);
  y += kRateHeight;
  const auto ticks = [&](const std::vector<std::int64_t>& times, const char* cls,
                         const char* color) {
    for (const std::int64_t t : times)
      put(out,
          "<line class=\"{}\" x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"{}\"/>\n",
          cls, x_of(t), y + 4, x_of(t), y + kLaneHeight - 4, color);
  };
  lane_label(out, y, i18n::tr(M("rep.lane.ce"), ch.ce_ns.size()));
  ticks(ch.ce_ns, "ce", kCeColor);
  y += kLaneHeight;
  lane_label(out, y, i18n::tr(M("rep.lane.cnp"), ch.cnp_ns.size()));
  ticks(ch.cnp_ns, "cnp", kCnpColor);
  y += kLaneHeight;
  const std::int64_t top = max_delay(ch.rtt, ch.base_rtt_ns);
  lane_label(out, y,
             ch.rtt.empty() ? std::string(i18n::text(M("rep.lane.qdelay_none")))
                            : i18n::tr(M("rep.lane.qdelay"), duration_text(top),
                                       duration_text(ch.base_rtt_ns), ch.rtt.size()));
  delay_stems(ch, top, y + 3, kLaneHeight - 6, out);
  y += kLaneHeight;
  pause_lanes(y, out);
  time_axis(y, out);
  out += "</svg>\n";
}

void Report::rate_bars(const dissect::ChannelSummary& s, double peak, int y, int height,
                       std::string& out) const {
  const double bin = static_cast<double>(std::max<std::int64_t>(1, s.rate_bin_ns));
  for (std::size_t i = 0; i < s.rate_bytes.size(); ++i) {
    const double bps = static_cast<double>(s.rate_bytes[i]) * 8e9 / bin;
    if (bps <= 0) continue;
    const std::int64_t from = s.first_ns + static_cast<std::int64_t>(i) * s.rate_bin_ns;
    const double x1 = x_of(from), x2 = x_of(from + s.rate_bin_ns);
    const double h = peak > 0 ? bps / peak * (height - 4) : 0;
    put(out,
        "<rect class=\"rate\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"{}\"><title>{}</title></rect>\n",
        x1, y + height - h, std::max(0.5, x2 - x1), h, kRateColor, rate_text(bps));
  }
}

void Report::delay_stems(const Channel& ch, std::int64_t top, int y, int height,
                         std::string& out) const {
  for (const auto& [t, r] : ch.rtt) {
    const std::int64_t d = r - ch.base_rtt_ns;
    const double h = top > 0 ? static_cast<double>(d) / static_cast<double>(top) * height : 0;
    put(out,
        "<rect class=\"qdelay\" data-ns=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"1.5\" "
        "height=\"{:.1f}\" fill=\"{}\"><title>{}</title></rect>\n",
        d, x_of(t), y + height - h, h, kDelayColor, duration_text(d));
  }
}

void Report::overview(std::string& out) const {
  struct Lane {
    std::uint32_t conv;
    const dissect::ChannelSummary* s;
    const Channel* ch;
  };
  std::vector<Lane> lanes;
  for (const Conversation& c : convs_) {
    for (std::size_t i = 0; i < c.channels.size() && lanes.size() < opt_.lanes; ++i)
      lanes.push_back(Lane{c.summary.id, &c.summary.channels[i], &c.channels[i]});
  }
  const std::size_t total = total_channels_;
  // One scale for every lane: the highest bin of any of them.
  double peak = 0;
  std::size_t ce = 0, cnp = 0, rtts = 0;
  std::int64_t top = 0;  // the highest queueing delay: the delay strips' scale
  for (const Lane& l : lanes) {
    peak = std::max(peak, peak_bps(*l.s));
    ce += l.ch->ce_ns.size();
    cnp += l.ch->cnp_ns.size();
    rtts += l.ch->rtt.size();
    top = std::max(top, max_delay(l.ch->rtt, l.ch->base_rtt_ns));
  }
  const int lane_height = kOverviewLaneHeight + (rtts > 0 ? kOverviewDelay : 0);
  const int width = kLabelWidth + kPlotWidth + 20;
  const int cut = total > lanes.size() ? kLaneHeight : 0;
  const int height = kLegendHeight + static_cast<int>(lanes.size()) * lane_height + cut +
                     static_cast<int>(pauses_.size()) * kLaneHeight + kAxisHeight + 8;
  svg_open(out,
           fmt::format("class=\"plot overview\" id=\"overview-plot\" data-lanes=\"{}\" "
                       "data-requesters=\"{}\" data-ce=\"{}\" data-cnp=\"{}\" "
                       "data-rtt=\"{}\" data-qdelay-max=\"{}\"",
                       lanes.size(), total, ce, cnp, rtts, top),
           width, height);
  put(out, "<rect width=\"{}\" height=\"{}\" fill=\"#fff\"/>\n", width, height);
  // Title and legend.
  put(out, "<text x=\"4\" y=\"15\" font-weight=\"bold\">{}</text>\n",
      esc(i18n::tr(M("rep.overview_title"), rate_text(peak))));
  int lx = kLabelWidth;
  const auto key = [&](const char* color, const i18n::Message& label) {
    put(out,
        "<rect x=\"{}\" y=\"24\" width=\"12\" height=\"10\" fill=\"{}\"/><text x=\"{}\" "
        "y=\"33\">{}</text>\n",
        lx, color, lx + 16, esc(i18n::text(label)));
    lx += 140;
  };
  key(kRateColor, M("rep.legend"));
  key(kCeColor, M("rep.legend_ce"));
  key(kCnpColor, M("rep.legend_cnp"));
  key(kPauseColor, M("rep.legend_pfc"));
  if (rtts > 0) {
    key(kDelayColor, M("rep.legend_qdelay"));
    put(out, "<text x=\"{}\" y=\"33\">{}</text>\n", lx,
        esc(i18n::tr(M("rep.qdelay_scale"), duration_text(top))));
  }
  int y = kLegendHeight;
  for (const Lane& l : lanes) {
    const std::string requester = dissect::endpoint_string(l.s->requester);
    put(out,
        "<g class=\"lane\" data-conv=\"{}\" data-ce=\"{}\" data-cnp=\"{}\" data-rtt=\"{}\" "
        "data-qdelay-max=\"{}\">\n",
        l.conv, l.ch->ce_ns.size(), l.ch->cnp_ns.size(), l.ch->rtt.size(),
        max_delay(l.ch->rtt, l.ch->base_rtt_ns));
    std::string title =
        i18n::tr(M("rep.lane.requester_title"), l.conv, requester,
                 dissect::endpoint_string(l.s->responder), l.ch->ce_ns.size(), l.ch->cnp_ns.size());
    if (!l.ch->rtt.empty())
      title += i18n::tr(M("rep.lane.qdelay_title"), l.ch->rtt.size(),
                        l.s->responder.addr.to_string(), duration_text(l.ch->base_rtt_ns),
                        duration_text(max_delay(l.ch->rtt, l.ch->base_rtt_ns)));
    put(out, "<title>{}</title>\n", esc(title));
    put(out, "<text x=\"4\" y=\"{}\">{}. {}</text>\n", y + kOverviewRate / 2 + 5, l.conv,
        esc(requester));
    put(out, "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f6f8fc\"/>\n", kLabelWidth,
        y, kPlotWidth, kOverviewRate);
    rate_bars(*l.s, peak, y, kOverviewRate, out);
    // CE marks above CNPs, in the strip under the rate.
    for (const std::int64_t t : l.ch->ce_ns)
      put(out,
          "<line class=\"ce\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" "
          "stroke=\"{3}\"/>\n",
          x_of(t), y + kOverviewRate + 1, y + kOverviewRate + 6, kCeColor);
    for (const std::int64_t t : l.ch->cnp_ns)
      put(out,
          "<line class=\"cnp\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" "
          "stroke=\"{3}\"/>\n",
          x_of(t), y + kOverviewRate + 6, y + kOverviewRate + 11, kCnpColor);
    if (rtts > 0) {
      const int band = y + kOverviewLaneHeight - 2;
      put(out, "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f3faf8\"/>\n",
          kLabelWidth, band, kPlotWidth, kOverviewDelay);
      delay_stems(*l.ch, top, band, kOverviewDelay, out);
    }
    out += "</g>\n";
    y += lane_height;
  }
  if (cut != 0) {
    put(out, "<text x=\"4\" y=\"{}\" font-style=\"italic\">{}</text>\n", y + 17,
        esc(i18n::tr(M("rep.lanes_cut"), total - lanes.size())));
    y += kLaneHeight;
  }
  pause_lanes(y, out);
  time_axis(y, out);
  out += "</svg>\n";
}

std::string Report::overview_svg() const {
  std::string out;  // UTF-8, the default of an XML document without a declaration
  overview(out);
  return out;
}

void Report::section_conversation(const Conversation& c, std::string& out) const {
  const dissect::ConversationSummary& s = c.summary;
  put(out, "<section class=\"conv\" id=\"conv-{}\" data-conv=\"{}\">\n<h3>{}</h3>\n", s.id, s.id,
      esc(i18n::tr(M("rep.conv"), s.id, dissect::endpoint_string(s.a),
                   dissect::endpoint_string(s.b))));
  // The summary's own text for this conversation, without the capture's
  // header (everything before the first blank line).
  std::string text;
  const dissect::ConversationSummary one[] = {s};
  dissect::render_summary_text(stats_, one, text);
  const std::size_t blank = text.find("\n\n");
  if (blank != std::string::npos) text.erase(0, blank + 2);
  put(out, "<pre class=\"summary\">{}</pre>\n", esc(text));
  for (std::size_t i = 0; i < s.channels.size(); ++i)
    timeline(s.channels[i], c.channels[i], out, fmt::format("plot-{}-{}", s.id, i + 1));
  ladder(c, out);
  events_table(c, out);
  out += "</section>\n";
}

void Report::section_pfc(std::string& out) const {
  put(out, "<section id=\"pfc\"><h2>{}</h2>\n", esc(i18n::text(M("rep.pfc"))));
  if (pfc_.empty()) {
    put(out, "<p>{}</p></section>\n", esc(i18n::text(M("rep.no_pfc"))));
    return;
  }
  put(out,
      "<table class=\"pfc\"><thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th>"
      "<th>{}</th></tr></thead><tbody>\n",
      esc(i18n::text(M("rep.col.sender"))), esc(i18n::text(M("rep.col.priority"))),
      esc(i18n::text(M("rep.col.pause_frames"))), esc(i18n::text(M("rep.col.paused"))),
      esc(i18n::text(M("rep.col.longest"))), esc(i18n::text(M("rep.col.storms"))));
  for (const dissect::PfcSummary& p : pfc_) {
    const std::string prio =
        p.priority ? std::to_string(*p.priority) : std::string(i18n::text(M("rep.whole_link")));
    put(out,
        "<tr data-src=\"{}\" data-priority=\"{}\" data-paused-ns=\"{}\"><td>{}</td><td>{}</td>"
        "<td>{} ({})</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        wire::mac_to_string(p.src), p.priority ? static_cast<int>(*p.priority) : 8, p.paused_ns,
        wire::mac_to_string(p.src), esc(prio), p.frames, p.xon_frames, duration_text(p.paused_ns),
        duration_text(p.longest_pause_ns), p.storms);
  }
  out += "</tbody></table>\n";
  // The pause frames' events: their rows are the frames' anchors.
  put(out,
      "<table class=\"events\"><thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th>"
      "</tr></thead><tbody>\n",
      esc(i18n::text(M("rep.col.frame"))), esc(i18n::text(M("rep.col.time"))),
      esc(i18n::text(M("rep.col.severity"))), esc(i18n::text(M("rep.col.event"))),
      esc(i18n::text(M("rep.col.text"))));
  std::uint64_t anchored = 0;  // one anchor per frame, on its first row
  for (const EventRow& r : pfc_events_) {
    const Severity sev = dissect::severity(r.event.type);
    std::string id;
    if (!r.end_of_capture && r.event.frame != anchored) {
      id = fmt::format(" id=\"f{}\"", r.event.frame);
      anchored = r.event.frame;
    }
    put(out,
        "<tr{} class=\"{}\" data-type=\"{}\" data-frame=\"{}\" data-end=\"{}\"><td><a "
        "href=\"#f{}\">{}</a></td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>\n",
        id, severity_class(sev), dissect::event_name(r.event.type), r.event.frame,
        r.end_of_capture ? 1 : 0, r.event.frame, r.event.frame,
        r.end_of_capture ? esc(i18n::text(M("rep.end"))) : seconds_text(r.time_ns - start_ns_),
        esc(dissect::severity_label(sev)), dissect::event_name(r.event.type),
        esc(dissect::describe(r.event)));
  }
  out += "</tbody></table></section>\n";
}

std::string Report::html() const {
  std::string out;
  const bool zh = i18n::current() == i18n::Lang::Zh;
  const std::string title = i18n::tr(M("rep.title"), opt_.title);
  put(out,
      "<!DOCTYPE html>\n<html lang=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n<meta "
      "name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n"
      "<style>{}</style>\n</head>\n<body>\n<header><h1>{}</h1><p class=\"gen\">{}</p></header>\n",
      zh ? "zh-CN" : "en", esc(title), kStyle, esc(title),
      esc(i18n::tr(M("rep.generated"), opt_.title)));
  // Contents.
  put(out, "<nav><h2>{}</h2><ul>\n", esc(i18n::text(M("rep.contents"))));
  put(out, "<li><a href=\"#capture\">{}</a></li>\n<li><a href=\"#findings\">{}</a></li>\n",
      esc(i18n::text(M("rep.capture"))), esc(i18n::text(M("rep.findings"))));
  if (!convs_.empty() || !pauses_.empty())
    put(out, "<li><a href=\"#overview\">{}</a></li>\n", esc(i18n::text(M("rep.overview"))));
  for (const Conversation& c : convs_)
    put(out, "<li><a href=\"#conv-{}\">{}</a></li>\n", c.summary.id,
        esc(i18n::tr(M("rep.conv"), c.summary.id, dissect::endpoint_string(c.summary.a),
                     dissect::endpoint_string(c.summary.b))));
  put(out, "<li><a href=\"#pfc\">{}</a></li>\n</ul></nav>\n", esc(i18n::text(M("rep.pfc"))));
  section_capture(out);
  section_findings(out);
  if (!convs_.empty() || !pauses_.empty()) {
    put(out, "<section id=\"overview\"><h2>{}</h2>\n", esc(i18n::text(M("rep.overview"))));
    overview(out);
    out += "</section>\n";
  }
  put(out, "<section id=\"conversations\"><h2>{}</h2>\n", esc(i18n::text(M("rep.conversations"))));
  if (convs_.empty()) put(out, "<p>{}</p>\n", esc(i18n::text(M("rep.no_convs"))));
  for (const Conversation& c : convs_) section_conversation(c, out);
  if (total_convs_ > convs_.size())
    put(out, "<p class=\"note\">{}</p>\n",
        esc(i18n::tr(M("rep.convs_cut"), total_convs_ - convs_.size())));
  out += "</section>\n";
  section_pfc(out);
  put(out, "<script>{}</script>\n</body>\n</html>\n", kScript);
  return out;
}

}  // namespace rdmapcap

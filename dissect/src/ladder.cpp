// The ladder (time-sequence) diagram: one lifeline per QP, one arrow per
// packet, the analyser's events written beside the arrow. The terminal
// version streams row by row; the SVG version keeps the rows to size the
// picture.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "catalog.hpp"
#include "format.hpp"
#include "rdmalab/dissect/render.hpp"

namespace rdmalab::dissect {

using detail::M;

namespace {

constexpr std::string_view kReset = "\x1b[0m";
constexpr std::string_view kDim = "\x1b[2m";
constexpr std::string_view kRed = "\x1b[31m";
constexpr std::string_view kYellow = "\x1b[33m";
constexpr std::string_view kCyan = "\x1b[36m";

Severity worst(const std::vector<Event>& events) {
  Severity s = Severity::Info;
  for (const Event& e : events) s = std::max(s, severity(e.type));
  return s;
}

bool has(const std::vector<Event>& events, EventType t) {
  return std::any_of(events.begin(), events.end(), [t](const Event& e) { return e.type == t; });
}

/// The characters a ladder is drawn with.
struct Glyphs {
  std::string_view line, dash, right, left;
  std::string_view timeout, resent, nak, out_of_order;
};
constexpr Glyphs kUnicode{"│", "─", "▶", "◀", "⏱ ", "↻ ", "✗ ", "⇅ "};
constexpr Glyphs kAscii{"|", "-", ">", "<", "T ", "R ", "X ", "~ "};

const Glyphs& glyphs(bool ascii) {
  return ascii ? kAscii : kUnicode;
}

/// Marks put in front of the label: ↻ resent, ✗ NAK, ⏱ timeout, ⇅ out of
/// order (ASCII: R, X, T, ~).
std::string marks(const PacketRecord& rec, const Glyphs& g) {
  std::string m;
  if (has(rec.events, EventType::Timeout)) m += g.timeout;
  if (has(rec.events, EventType::Retransmission)) m += g.resent;
  if (has(rec.events, EventType::NakSequence) || has(rec.events, EventType::NakFatal) ||
      has(rec.events, EventType::RnrNak))
    m += g.nak;
  if (has(rec.events, EventType::OutOfOrder)) m += g.out_of_order;
  return m;
}

/// Display width of UTF-8 text made of ASCII and the single-width symbols above.
std::size_t width(std::string_view s) {
  std::size_t n = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

std::string repeat(std::string_view s, std::size_t n) {
  std::string r;
  r.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) r += s;
  return r;
}

bool from_left(const PacketRecord& rec, const Endpoint& left) {
  const auto src = rec.decoded.src_address();
  return src && *src == left.addr;
}

std::string_view color_of(Severity s, const PacketRecord* rec) {
  if (s == Severity::Error) return kRed;
  if (s == Severity::Warning) return kYellow;
  if (s == Severity::Notice) return kCyan;
  if (rec && rec->op && rec->op->is_response()) return kDim;
  return {};
}

template <class... Args>
void put(std::string& out, fmt::format_string<Args...> f, Args&&... args) {
  fmt::format_to(std::back_inserter(out), f, std::forward<Args>(args)...);
}

std::string xml_escape(std::string_view s) {
  std::string r;
  for (char c : s) {
    switch (c) {
      case '<': r += "&lt;"; break;
      case '>': r += "&gt;"; break;
      case '&': r += "&amp;"; break;
      case '"': r += "&quot;"; break;
      default: r.push_back(c);
    }
  }
  return r;
}

}  // namespace

LadderText::LadderText(const Endpoint& left, const Endpoint& right, std::int64_t start_ns,
                       LadderOptions options)
    : left_(left), right_(right), start_ns_(start_ns), opt_(options) {
  if (opt_.width < 24) opt_.width = 44;
}

void LadderText::header(std::string& out) const {
  const std::string l = endpoint_string(left_);
  const std::string r = endpoint_string(right_);
  const std::size_t span = opt_.width + 2;
  const std::size_t pad = span > l.size() ? span - l.size() : 1;
  fmt::format_to(std::back_inserter(out), "{:>12}  {}{}{}\n", i18n::tr(M("lad.time")), l,
                 std::string(pad, ' '), r);
  const Glyphs& g = glyphs(opt_.ascii);
  fmt::format_to(std::back_inserter(out), "{:>12}  {}{}{}\n", "", g.line,
                 std::string(opt_.width, ' '), g.line);
}

void LadderText::row(const PacketRecord& rec, std::string& out) const {
  const bool l2r = from_left(rec, left_);
  const Glyphs& g = glyphs(opt_.ascii);
  std::string label = " " + marks(rec, g) + short_label(rec) + " ";
  const std::size_t w = opt_.width;
  std::size_t lw = width(label);
  if (lw + 4 > w) {
    label = label.substr(0, w - 4);
    lw = width(label);
  }
  const std::size_t dashes = w - 1 - lw;
  const std::size_t before = dashes / 2, after = dashes - before;
  std::string arrow =
      l2r ? repeat(g.dash, before) + label + repeat(g.dash, after) + std::string(g.right)
          : std::string(g.left) + repeat(g.dash, before) + label + repeat(g.dash, after);
  const Severity sev = worst(rec.events);
  const std::string_view col = opt_.color ? color_of(sev, &rec) : std::string_view{};
  fmt::format_to(std::back_inserter(out), "{:>12}  {}{}{}{}{}",
                 detail::format_seconds(rec.time_ns - start_ns_).substr(0, 12), g.line, col, arrow,
                 col.empty() ? std::string_view{} : kReset, g.line);
  bool first = true;
  for (const Event& e : rec.events) {
    const std::string_view ec =
        opt_.color ? color_of(severity(e.type), nullptr) : std::string_view{};
    if (!first)
      fmt::format_to(std::back_inserter(out), "\n{:>12}  {}{}{}", "", g.line, std::string(w, ' '),
                     g.line);
    fmt::format_to(std::back_inserter(out), "  {}{}{}", ec, describe(e),
                   ec.empty() ? std::string_view{} : kReset);
    first = false;
  }
  out.push_back('\n');
}

void LadderText::note(const Event& e, std::string& out) const {
  const std::string_view ec = opt_.color ? color_of(severity(e.type), nullptr) : std::string_view{};
  const Glyphs& g = glyphs(opt_.ascii);
  fmt::format_to(std::back_inserter(out), "{:>12}  {}{}{}  {}{}{}\n", "", g.line,
                 std::string(opt_.width, ' '), g.line, ec,
                 i18n::tr(M("dec.end"), e.frame, describe(e)),
                 ec.empty() ? std::string_view{} : kReset);
}

LadderSvg::LadderSvg(const Endpoint& left, const Endpoint& right, std::int64_t start_ns,
                     std::size_t max_rows)
    : left_(left), right_(right), start_ns_(start_ns), max_rows_(max_rows) {}

void LadderSvg::row(const PacketRecord& rec) {
  if (rows_.size() >= max_rows_) {
    ++dropped_;
    return;
  }
  Row r{rec.frame,
        rec.time_ns,
        from_left(rec, left_),
        false,
        marks(rec, kUnicode) + short_label(rec),
        {},
        worst(rec.events)};
  for (const Event& e : rec.events) {
    if (!r.notes.empty()) r.notes += "  ·  ";
    r.notes += describe(e);
  }
  rows_.push_back(std::move(r));
}

void LadderSvg::note(const Event& e) {
  if (rows_.size() >= max_rows_) {
    ++dropped_;
    return;
  }
  rows_.push_back(Row{
      e.frame, 0, true, true, {}, fmt::format("[{}] {}", e.frame, describe(e)), severity(e.type)});
}

std::string LadderSvg::svg() const {
  constexpr int kLeft = 170, kRight = 610, kTop = 70, kStep = 30, kNotes = 630;
  const int height = kTop + static_cast<int>(rows_.size() + 1) * kStep + (dropped_ ? kStep : 0);
  std::string out;
  put(out,
      R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="1500" height="{}" font-family="DejaVu Sans Mono, Noto Sans Mono CJK SC, Noto Sans CJK SC, Source Han Sans SC, WenQuanYi Micro Hei Mono, Microsoft YaHei, PingFang SC, monospace" font-size="12">)svg"
      "\n",
      height);
  put(out,
      R"svg(<defs><marker id="a" markerWidth="10" markerHeight="8" refX="9" refY="4" orient="auto"><path d="M0,0 L10,4 L0,8 z" fill="context-stroke"/></marker></defs>)svg"
      "\n");
  put(out, R"svg(<rect width="100%" height="100%" fill="white"/>)svg"
           "\n");
  put(out,
      R"svg(<text x="{}" y="30" text-anchor="middle" font-weight="bold">{}</text>)svg"
      "\n",
      kLeft, xml_escape(endpoint_string(left_)));
  put(out,
      R"svg(<text x="{}" y="30" text-anchor="middle" font-weight="bold">{}</text>)svg"
      "\n",
      kRight, xml_escape(endpoint_string(right_)));
  put(out,
      R"svg(<text x="10" y="30">{}</text>)svg"
      "\n",
      xml_escape(i18n::tr(M("lad.time"))));
  for (int x : {kLeft, kRight})
    put(out,
        R"svg(<line x1="{0}" y1="40" x2="{0}" y2="{1}" stroke="#444" stroke-width="2"/>)svg"
        "\n",
        x, height - 10);
  int y = kTop;
  for (const Row& r : rows_) {
    const char* color = r.sev == Severity::Error     ? "#c00000"
                        : r.sev == Severity::Warning ? "#c07000"
                        : r.sev == Severity::Notice  ? "#007090"
                                                     : "#222222";
    const bool anchor = anchors_ && !r.is_note;
    if (anchor) put(out, "<g id=\"f{}\">\n", r.frame);
    if (!r.is_note) {
      put(out,
          R"svg(<text x="10" y="{}">{}</text>)svg"
          "\n",
          y + 4, detail::format_seconds(r.time_ns - start_ns_));
      const int x1 = r.left_to_right ? kLeft : kRight,
                x2 = r.left_to_right ? kRight - 2 : kLeft + 2;
      put(out,
          R"svg(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="1.5" marker-end="url(#a)"/>)svg"
          "\n",
          x1, y, x2, y + 10, color);
      put(out,
          R"svg(<text x="{}" y="{}" text-anchor="middle" fill="{}">{}</text>)svg"
          "\n",
          (kLeft + kRight) / 2, y + 1, color, xml_escape(r.label));
    }
    if (!r.notes.empty())
      put(out,
          R"svg(<text x="{}" y="{}" fill="{}" font-size="11">{}</text>)svg"
          "\n",
          kNotes, y + 9, color, xml_escape(r.notes));
    if (anchor) out += "</g>\n";
    y += kStep;
  }
  if (dropped_)
    put(out,
        R"svg(<text x="10" y="{}">{}</text>)svg"
        "\n",
        y + 4, xml_escape(i18n::tr(M("lad.truncated"), dropped_)));
  out += "</svg>\n";
  return out;
}

}  // namespace rdmalab::dissect

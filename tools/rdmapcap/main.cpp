// rdmapcap: decode and analyse RoCE captures.
//
//   rdmapcap decode  FILE [--json] [--all]
//   rdmapcap summary FILE [--json]
//   rdmapcap ladder  FILE [--conversation N] [--svg OUT] [--rows N] [--color auto|always|never]
//                         [--ascii]
//   rdmapcap report  FILE -o OUT.html [--rows N] [--conversations N] [--lanes N]
//   rdmapcap plot    FILE -o OUT.svg [--lanes N]
//
// All the protocol work is in rdmalab::dissect; this file reads the file with
// rdmalab::capture, feeds the analyser in frame order, and writes what the
// library renders. Exit codes are listed in --help (message "exit_codes").
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/cli/cli.hpp"
#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/dissect/render.hpp"
#include "rdmalab/i18n/i18n.hpp"
#include "rdmapcap/in_order.hpp"
#include "rdmapcap/messages.hpp"
#include "rdmapcap/pipeline.hpp"
#include "rdmapcap/report.hpp"

namespace {

namespace i18n = rdmalab::i18n;
namespace dissect = rdmalab::dissect;
namespace capture = rdmalab::capture;
using rdmapcap::M;

constexpr int kExitOk = 0;
constexpr int kExitProtocolErrors = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInput = 3;

/// Buffered standard output: one fwrite per 64 KiB instead of one per line.
class Out {
 public:
  static constexpr std::size_t kBufferBytes = std::size_t{1} << 16;
  std::string buf;
  void maybe_flush() {
    if (buf.size() >= kBufferBytes) flush();
  }
  void flush() {
    if (!buf.empty()) std::fwrite(buf.data(), 1, buf.size(), stdout);
    buf.clear();
  }
  /// Appends `text`, or writes it straight out when it would fill the buffer.
  void write(std::string_view text) {
    if (buf.size() + text.size() < kBufferBytes) {
      buf += text;
      return;
    }
    flush();
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  ~Out() { flush(); }
};

/// A progress bar on stderr, only on a terminal and only once a run has
/// lasted more than a second.
class Progress {
 public:
  Progress() : enabled_(isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}
  /// Called once per packet; looks at the clock (and asks the reader for
  /// its position, a system call) only every 16384 packets.
  template <class Position>
  void tick(const Position& position, std::uint64_t total) {
    if (!enabled_ || (++n_ & 0x3FFF) != 0 || total == 0) return;
    const std::uint64_t pos = position();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (s < 1.0) return;
    const int pct = static_cast<int>(100.0 * static_cast<double>(pos) / static_cast<double>(total));
    const int bars = pct / 4;
    std::fprintf(stderr, "\r%s [%-25.*s] %3d%%  %.0f MB/s", i18n::tr(M("progress")).c_str(), bars,
                 "#########################", pct, static_cast<double>(pos) / s / 1e6);
    shown_ = true;
  }
  ~Progress() {
    if (shown_) std::fprintf(stderr, "\r\x1b[K");
  }

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
  std::uint64_t n_ = 0;
  bool shown_ = false;
};

/// Does any event say the capture holds a protocol error?
bool is_error(const dissect::Event& e) {
  return dissect::severity(e.type) == dissect::Severity::Error;
}

/// Reads the whole file, decoding and analysing each packet, and calls
/// `each` for it. Returns the exit code; `analyzer` holds the result.
int read_capture(const std::string& path, dissect::Analyzer& analyzer, Out& out,
                 const std::function<void(dissect::PacketRecord&)>& each, bool& errors,
                 bool check_icrc = true) {
  try {
    capture::PcapReader reader(path);
    const auto link = reader.link_type();
    if (!link) {
      std::fprintf(stderr, "%s\n", i18n::tr(M("err.link"), path, reader.datalink()).c_str());
      return kExitInput;
    }
    Progress progress;
    // Frames are read and decoded on a second thread, a batch at a time
    // (pipeline.hpp), and analysed here, in file order, 512 records at a
    // time: the analyser looks ahead within them (Analyzer::feed of a
    // span), then each is handed to `each`. 512 records (384 KiB) are still
    // in this core's cache when `each` and the error check read them again;
    // a whole batch of 4096 is not.
    rdmapcap::Pipeline pipeline(reader, *link, check_icrc);
    constexpr std::size_t kChunk = 512;
    try {
      for (;;) {
        const std::span<dissect::PacketRecord> batch = pipeline.next();
        if (batch.empty()) break;
        for (std::size_t at = 0; at < batch.size(); at += kChunk) {
          const std::span<dissect::PacketRecord> recs =
              batch.subspan(at, std::min(kChunk, batch.size() - at));
          analyzer.feed(recs);
          for (dissect::PacketRecord& rec : recs) {
            for (const dissect::Event& e : rec.events) errors = errors || is_error(e);
            each(rec);
            out.maybe_flush();
            progress.tick([&pipeline] { return pipeline.position(); }, reader.file_size());
          }
        }
      }
    } catch (const capture::CaptureError& e) {
      out.flush();
      std::fprintf(stderr, "%s\n%s\n", e.what(), i18n::tr(M("err.partial")).c_str());
      return kExitInput;
    }
  } catch (const capture::CaptureError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitInput;
  }
  return kExitOk;
}

int finish(dissect::Analyzer& analyzer, bool errors,
           const std::function<void(const dissect::Event&)>& each) {
  // PSN spaces beyond --max-channels were counted, not followed: say so.
  if (const std::uint64_t n = analyzer.stats().untracked; n != 0)
    std::fprintf(stderr, "%s\n",
                 i18n::tr(M("err.untracked"), n, analyzer.options().max_channels).c_str());
  for (const dissect::Event& e : analyzer.finish()) {
    errors = errors || is_error(e);
    each(e);
  }
  return errors ? kExitProtocolErrors : kExitOk;
}

int cmd_decode(const std::string& path, bool json, bool all, bool payload,
               const dissect::AnalyzerOptions& aopt) {
  Out out;
  dissect::Analyzer analyzer(aopt);
  bool errors = false;
  std::int64_t start = 0;
  bool first = true;
  const int rc = read_capture(
      path, analyzer, out,
      [&](dissect::PacketRecord& rec) {
        if (first) start = rec.time_ns;
        first = false;
        if (!rec.is_roce() && !all) return;
        if (json) {
          if (rec.pause) dissect::render_pause_json(rec, out.buf);
          if (!rec.is_roce()) return;
          dissect::render_packet_json(rec, out.buf);
          if (payload && out.buf.size() >= 2) {
            out.buf.resize(out.buf.size() - 2);  // reopen the object: "}\n"
            out.buf += ",\"payload_hex\":\"";
            dissect::render_payload_hex(rec, true, out.buf);
            out.buf += "\"}\n";
          }
        } else {
          dissect::render_packet_text(rec, start, out.buf);
          if (payload) dissect::render_payload_hex(rec, false, out.buf);
          out.buf.push_back('\n');
        }
      },
      errors);
  if (rc != kExitOk) return rc;
  return finish(analyzer, errors, [&](const dissect::Event& e) {
    if (json) {
      // End-of-capture conclusions are not packets: one object each, marked.
      dissect::render_end_of_capture_json(e, out.buf);
    } else {
      out.buf += fmt::format("[{}] {}\n", dissect::severity_label(dissect::severity(e.type)),
                             dissect::describe(e));
    }
  });
}

// Whether a command gives the analyser's memory back before the process
// exits. After a capture of a whole cluster that is millions of blocks, each
// freed on its own (a tenth of a second for 100,000 conversations), which
// the system reclaims at exit at once. A sanitizer build frees them, so that
// its leak check still accounts for every block.
#if defined(RDMALAB_ASAN)
constexpr bool kFreeAtExit = true;
#else
constexpr bool kFreeAtExit = false;
#endif

int cmd_summary(const std::string& path, bool json, bool check_icrc,
                const dissect::AnalyzerOptions& aopt) {
  Out out;
  auto owner = std::make_unique<dissect::Analyzer>(aopt);
  dissect::Analyzer& analyzer = *owner;
  // The summary is the last thing the process does (see kFreeAtExit).
  if (!kFreeAtExit) (void)owner.release();
  bool errors = false;
  const int rc = read_capture(
      path, analyzer, out, [](dissect::PacketRecord&) {}, errors, check_icrc);
  if (rc != kExitOk) return rc;
  const int code = finish(analyzer, errors, [](const dissect::Event&) {});
  // A capture of a whole cluster has hundreds of thousands of
  // conversations: summarised a block at a time, on two threads (the
  // reading thread's core is idle by now), and written out in order as
  // blocks are done (in_order.hpp). The analyser's summary() only reads.
  const std::size_t n = analyzer.conversation_count();
  const auto format =
      json ? dissect::SummaryWriter::Format::Json : dissect::SummaryWriter::Format::Text;
  // The text does not show a channel's rate over time: not worked out.
  const auto parts = json ? dissect::Analyzer::SummaryParts::All
                          : dissect::Analyzer::SummaryParts::WithoutRateSeries;
  dissect::SummaryWriter writer(format, analyzer.stats(), n, out.buf);
  rdmapcap::render_in_order(
      n,
      [&](std::size_t i, std::string& text) {
        dissect::SummaryWriter::conversation(
            format, analyzer.summary(static_cast<std::uint32_t>(i + 1), parts), i, text);
      },
      [&out](std::string_view text) { out.write(text); });
  writer.end(analyzer.pfc());
  return code;
}

int cmd_ladder(const std::string& path, std::uint32_t conv, const std::string& svg_path,
               std::size_t rows, const std::string& color, bool ascii) {
  Out out;
  // First pass: find the conversation and both QP numbers.
  dissect::Analyzer first;
  bool errors = false;
  std::int64_t start = 0;
  bool seen = false;
  int rc = read_capture(
      path, first, out,
      [&](dissect::PacketRecord& rec) {
        if (!seen) start = rec.time_ns;
        seen = true;
      },
      errors);
  if (rc != kExitOk) return rc;
  const auto ends = first.endpoints(conv);
  if (!ends) {
    std::fprintf(stderr, "%s\n",
                 i18n::tr(M("err.no_conv"), conv, first.conversation_count()).c_str());
    return kExitUsage;
  }
  const char* no_color = std::getenv("NO_COLOR");
  dissect::LadderOptions opt;
  opt.color = color == "always" || (color == "auto" && isatty(STDOUT_FILENO) == 1 &&
                                    (no_color == nullptr || *no_color == '\0'));
  opt.ascii = ascii;
  dissect::LadderText text(ends->first, ends->second, start, opt);
  dissect::LadderSvg svg(ends->first, ends->second, start, rows);
  out.buf += fmt::format("{}  {}  {}\n", dissect::endpoint_string(ends->first), ascii ? "<->" : "⇄",
                         dissect::endpoint_string(ends->second));
  text.header(out.buf);
  std::size_t drawn = 0;
  dissect::Analyzer second;
  errors = false;
  rc = read_capture(
      path, second, out,
      [&](dissect::PacketRecord& rec) {
        if (rec.conversation != conv) return;
        if (drawn++ < rows) text.row(rec, out.buf);
        if (!svg_path.empty()) svg.row(rec);
      },
      errors);
  if (rc != kExitOk) return rc;
  const int code = finish(second, errors, [&](const dissect::Event& e) {
    if (e.conversation != conv) return;  // another conversation's conclusion
    text.note(e, out.buf);
    if (!svg_path.empty()) svg.note(e);
  });
  if (drawn > rows) out.buf += i18n::tr(M("more_rows"), drawn - rows) + "\n";
  if (!svg_path.empty()) {
    std::ofstream f(svg_path, std::ios::binary);
    f << svg.svg();
    if (!f) {
      out.flush();
      std::fprintf(stderr, "%s\n", i18n::tr(M("err.svg"), svg_path).c_str());
      return kExitInput;
    }
  }
  return code;
}

/// `rdmapcap report` (the page) and `rdmapcap plot` (its overview alone).
int cmd_report(const std::string& path, const std::string& out_path, bool plot,
               rdmapcap::ReportOptions ropt, const dissect::AnalyzerOptions& aopt) {
  const i18n::Message& cannot = plot ? M("err.write_plot") : M("err.write");
  // Open the output first: a path that cannot be written is reported before
  // the capture is read, and no partial file is left behind on failure.
  std::ofstream html(out_path, std::ios::binary | std::ios::trunc);
  if (!html) {
    std::fprintf(stderr, "%s\n", i18n::tr(cannot, out_path).c_str());
    return kExitInput;
  }
  const auto give_up = [&](int rc) {
    html.close();
    std::error_code ignored;
    std::filesystem::remove(out_path, ignored);
    return rc;
  };
  Out out;  // stays empty: the page goes to the file
  // First pass: summaries, endpoints and the port speed.
  dissect::Analyzer first(aopt);
  bool errors = false;
  std::int64_t start = 0;
  bool seen = false;
  int rc = read_capture(
      path, first, out,
      [&](dissect::PacketRecord& rec) {
        if (!seen) start = rec.time_ns;
        seen = true;
      },
      errors);
  if (rc != kExitOk) return give_up(rc);
  (void)first.finish();
  ropt.title = std::filesystem::path(path).filename().string();
  if (plot) ropt.rows = 0;  // no ladder is drawn: the plot needs no rows
  rdmapcap::Report report(first, start, ropt);
  // Second pass: ladders, events, timelines.
  dissect::Analyzer second(aopt);
  errors = false;
  rc = read_capture(
      path, second, out, [&](dissect::PacketRecord& rec) { report.packet(rec); }, errors);
  if (rc != kExitOk) return give_up(rc);
  std::vector<dissect::Event> ends;
  const int code = finish(second, errors, [&](const dissect::Event& e) { ends.push_back(e); });
  report.finish(ends);
  html << (plot ? report.overview_svg() : report.html());
  html.close();
  if (!html) {
    std::fprintf(stderr, "%s\n", i18n::tr(cannot, out_path).c_str());
    return give_up(kExitInput);
  }
  return code;
}

/// "100G", "25g", "400G", "100000M", "1T": a port speed in bits per second;
/// nullopt for anything else (no unit, zero, above 10T).
std::optional<std::uint64_t> parse_speed(const std::string& text) {
  if (text.size() < 2) return std::nullopt;
  std::uint64_t unit = 0;
  switch (text.back()) {
    case 'M':
    case 'm': unit = 1'000'000; break;
    case 'G':
    case 'g': unit = 1'000'000'000; break;
    case 'T':
    case 't': unit = 1'000'000'000'000; break;
    default: return std::nullopt;
  }
  std::uint64_t n = 0;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    const char ch = text[i];
    if (ch < '0' || ch > '9' || n > 10'000'000) return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(ch - '0');
  }
  constexpr std::uint64_t kMaxBps = 10'000'000'000'000;
  if (n == 0 || n > kMaxBps / unit) return std::nullopt;
  return n * unit;
}

}  // namespace

int main(int argc, char** argv) {
  i18n::init_from_args(argc, argv);
  CLI::App app{std::string(i18n::text(M("app"))), "rdmapcap"};
  app.footer(std::string(i18n::text(M("exit_codes"))));
  rdmalab::cli::localize(app);  // the help formatter, -h and --lang
  app.require_subcommand(1);
  app.fallthrough();  // --lang is also accepted after the subcommand

  std::string file, svg, color = "auto";
  bool json = false, all = false;
  std::uint32_t conv = 1;
  std::size_t rows = 500;

  auto* decode = app.add_subcommand("decode", std::string(i18n::text(M("cmd.decode"))));
  decode->add_option(i18n::tr(M("arg.file")), file, std::string(i18n::text(M("opt.file"))))
      ->required();
  decode->add_flag("--json", json, std::string(i18n::text(M("opt.json"))));
  decode->add_flag("--all", all, std::string(i18n::text(M("opt.all"))));
  bool payload = false;
  decode->add_flag("--payload", payload, std::string(i18n::text(M("opt.payload"))));

  auto* summary = app.add_subcommand("summary", std::string(i18n::text(M("cmd.summary"))));
  summary->add_option(i18n::tr(M("arg.file")), file, std::string(i18n::text(M("opt.file"))))
      ->required();
  summary->add_flag("--json", json, std::string(i18n::text(M("opt.json"))));
  bool no_icrc = false;
  summary->add_flag("--no-icrc", no_icrc, std::string(i18n::text(M("opt.no_icrc"))));

  auto* ladder = app.add_subcommand("ladder", std::string(i18n::text(M("cmd.ladder"))));
  ladder->add_option(i18n::tr(M("arg.file")), file, std::string(i18n::text(M("opt.file"))))
      ->required();
  ladder->add_option("-c,--conversation", conv, std::string(i18n::text(M("opt.conv"))))
      ->check(CLI::PositiveNumber);
  ladder->add_option("--svg", svg, std::string(i18n::text(M("opt.svg"))));
  ladder->add_option("--rows", rows, std::string(i18n::text(M("opt.rows"))))
      ->check(CLI::PositiveNumber);
  ladder->add_option("--color", color, std::string(i18n::text(M("opt.color"))))
      ->check(CLI::IsMember({"auto", "always", "never"}));
  bool ascii = false;
  ladder->add_flag("--ascii", ascii, std::string(i18n::text(M("opt.ascii"))));

  auto* report = app.add_subcommand("report", std::string(i18n::text(M("cmd.report"))));
  report->add_option(i18n::tr(M("arg.file")), file, std::string(i18n::text(M("opt.file"))))
      ->required();
  std::string html;
  report->add_option("-o,--output", html, std::string(i18n::text(M("opt.output"))))->required();
  std::size_t report_rows = 2000, report_convs = 100;
  report->add_option("--rows", report_rows, std::string(i18n::text(M("opt.report_rows"))))
      ->check(CLI::PositiveNumber);
  report
      ->add_option("--conversations", report_convs, std::string(i18n::text(M("opt.report_convs"))))
      ->check(CLI::PositiveNumber);

  std::size_t lanes = rdmapcap::ReportOptions{}.lanes;
  report->add_option("--lanes", lanes, std::string(i18n::text(M("opt.plot_lanes"))))
      ->check(CLI::PositiveNumber);

  auto* plot = app.add_subcommand("plot", std::string(i18n::text(M("cmd.plot"))));
  plot->add_option(i18n::tr(M("arg.file")), file, std::string(i18n::text(M("opt.file"))))
      ->required();
  std::string svg_out;
  plot->add_option("-o,--output", svg_out, std::string(i18n::text(M("opt.plot_output"))))
      ->required();
  plot->add_option("--lanes", lanes, std::string(i18n::text(M("opt.plot_lanes"))))
      ->check(CLI::PositiveNumber);

  // Options of the analysis, shared by decode, summary, report and plot.
  std::string link_speed;
  double storm_ms = 100;
  std::size_t max_channels = dissect::AnalyzerOptions{}.max_channels;
  for (auto* cmd : {decode, summary, report, plot}) {
    cmd->add_option("--max-channels", max_channels, std::string(i18n::text(M("opt.max_channels"))))
        ->check(CLI::PositiveNumber);
    cmd->add_option("--link-speed", link_speed, std::string(i18n::text(M("opt.link_speed"))));
    cmd->add_option("--pfc-storm-ms", storm_ms, std::string(i18n::text(M("opt.pfc_storm"))))
        ->check(CLI::PositiveNumber);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return rdmalab::cli::exit_for(app, e);
  }
  dissect::AnalyzerOptions aopt;
  if (!link_speed.empty()) {
    const auto bps = parse_speed(link_speed);
    if (!bps) {
      std::fprintf(stderr, "%s\n", i18n::tr(M("err.link_speed"), link_speed).c_str());
      return kExitUsage;
    }
    aopt.link_speed_bps = *bps;
  }
  aopt.pfc_storm_ns = static_cast<std::int64_t>(storm_ms * 1e6);
  aopt.max_channels = max_channels;
  if (*decode) return cmd_decode(file, json, all, payload, aopt);
  if (*summary) return cmd_summary(file, json, !no_icrc, aopt);
  if (*report || *plot) {
    rdmapcap::ReportOptions ropt;
    ropt.rows = report_rows;
    ropt.conversations = report_convs;
    ropt.lanes = lanes;
    // The plot's lanes come from the conversations the report keeps.
    if (*plot) ropt.conversations = std::max(report_convs, lanes);
    return *report ? cmd_report(file, html, false, ropt, aopt)
                   : cmd_report(file, svg_out, true, ropt, aopt);
  }
  return cmd_ladder(file, conv, svg, rows, color, ascii);
}

#include "rdmalab/lab/wire_view.hpp"

#include <fmt/format.h>

#include <array>
#include <iostream>

#include "rdmalab/capture/pcap_file.hpp"
#include "rdmalab/cli/cli.hpp"
#include "rdmalab/dissect/analyzer.hpp"
#include "rdmalab/dissect/render.hpp"
#include "rdmalab/lab/endpoint.hpp"

namespace rdmalab::lab {
namespace {

using i18n::Message;
constexpr std::array kCatalog{
    Message{"title", "what happened on the wire ({0}, {1} packets)",
            "线路上发生了什么（{0}，共 {1} 个报文）"},
    Message{"more", "... {} more packets not shown (rdmapcap ladder {} shows all)",
            "……另有 {} 个报文未显示（用 rdmapcap ladder {} 查看全部）"},
    Message{"events", "what the analyser explains:", "分析器的解释："},
    Message{"check.icrc", "every ICRC on the wire is correct", "线路上每个报文的 ICRC 都正确"},
    Message{"unreadable", "the capture could not be read: {}", "无法读取抓包文件：{}"},
    Message{
        "verbs.capture",
        "On real devices the simulator's capture is not available. To see the packets: between "
        "two hosts running Soft-RoCE, run `tcpdump -i IFACE -s 0 -w lab.pcap udp port 4791` on "
        "the interface under rxe, then `rdmapcap ladder lab.pcap`. Traffic between two QPs of "
        "the same host never reaches a network interface (rxe loops it back inside the kernel), "
        "and hardware RoCE NICs process packets without the kernel, so tcpdump sees neither; "
        "use two hosts, a mirror port, or the vendor's capture tool. One host can still put them "
        "on a wire: two rxe devices on the two ends of a veth pair, routed across it, with "
        "`-d rxe1 --peer-dev rxe0` (tools/softroce-vm sets this up).",
        "在真实设备上没有模拟器的抓包。要看到报文：在两台运行 Soft-RoCE 的主机之间，对 rxe "
        "所绑定的网口执行 `tcpdump -i IFACE -s 0 -w lab.pcap udp port 4791`，再用 "
        "`rdmapcap ladder lab.pcap` 查看。同一主机上两个 QP 之间的流量根本不会经过网口（rxe "
        "在内核里直接回环），而硬件 RoCE 网卡处理报文时不经过内核，所以 tcpdump 两者都看不到；"
        "请使用两台主机、交换机镜像端口或厂商提供的抓包工具。单台主机也能让报文经过线路：把两个 "
        "rxe 设备分别建在一对 veth 的两端，让它们之间的流量经这对 veth 路由，再用 "
        "`-d rxe1 --peer-dev rxe0` 运行（tools/softroce-vm 就是这样设置的）。"},
};
consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

constexpr std::size_t kMaxRows = 60;

}  // namespace

std::span<const i18n::Message> wire_view_catalog() noexcept {
  return kCatalog;
}

std::vector<const dissect::PacketRecord*> WireFacts::roce() const {
  std::vector<const dissect::PacketRecord*> out;
  for (const auto& rec : records)
    if (rec.is_roce() && rec.has_bth()) out.push_back(&rec);
  return out;
}

WireFacts read_wire(const std::string& path) {
  WireFacts facts;
  dissect::Analyzer analyzer;
  capture::PcapReader reader(path);
  const auto link = reader.link_type().value_or(wire::LinkType::Ethernet);
  capture::Packet pkt;
  while (reader.next(pkt)) {
    // The record's spans point into its own copy of the bytes, which lives
    // as long as the facts (a vector's heap buffer does not move with it).
    auto& bytes = facts.bytes.emplace_back(pkt.data.begin(), pkt.data.end());
    dissect::PacketRecord& rec = facts.records.emplace_back();
    dissect::decode_record(bytes, pkt.original_length, link, pkt.frame, pkt.time_ns, rec);
    analyzer.feed(rec);
  }
  facts.readable = true;
  // finish() returns only the end-of-capture conclusions (analyzer.hpp).
  facts.end_of_capture = analyzer.finish();
  for (std::uint32_t id = 1;; ++id) {
    auto ends = analyzer.endpoints(id);
    if (!ends) break;
    facts.conversations.push_back(std::move(*ends));
  }
  for (const auto& rec : facts.records) {
    if (!rec.is_roce() || !rec.has_bth()) continue;
    ++facts.packets;
    const auto& bth = rec.decoded.ib->bth;
    const std::string op =
        rec.op != nullptr
            ? fmt::format("{} {}", wire::transport_name(rec.op->transport), rec.op->name)
            : fmt::format("opcode 0x{:02x}", bth.opcode);
    ++facts.opcodes[op];
    if (rec.icrc && !rec.icrc->ok()) facts.icrc_all_ok = false;
    for (const auto& e : rec.events) ++facts.events[std::string(dissect::event_name(e.type))];
  }
  for (const auto& e : facts.end_of_capture)
    ++facts.events[std::string(dissect::event_name(e.type))];
  return facts;
}

WireFacts show_wire(Narrator& n, const std::string& path) {
  WireFacts facts;
  try {
    facts = read_wire(path);
  } catch (const capture::CaptureError& e) {
    n.warn(i18n::tr(M("unreadable"), e.what()));
    return facts;
  }
  const std::vector<dissect::PacketRecord>& recs = facts.records;
  const std::vector<dissect::Event>& tail = facts.end_of_capture;

  // The --json result's "wire" section: each packet as the record
  // `rdmapcap decode --json` writes (its events inside), and the
  // end-of-capture conclusions as its end-of-capture lines hold them.
  nlohmann::json frames = nlohmann::json::array();
  nlohmann::json end_of_capture = nlohmann::json::array();
  std::string line;
  for (const auto* rec : facts.roce()) {
    line.clear();
    dissect::render_packet_json(*rec, line);
    frames.push_back(nlohmann::json::parse(line));
  }
  for (const auto& e : tail) {
    line.clear();
    dissect::render_event_json(e, line);
    end_of_capture.push_back(nlohmann::json::parse(line));
  }
  n.result()["wire"] = {{"capture", path},
                        {"packets", facts.packets},
                        {"icrc_ok", facts.icrc_all_ok},
                        {"frames", std::move(frames)},
                        {"end_of_capture", std::move(end_of_capture)}};

  if (!n.narrating() || recs.empty()) return facts;
  std::cout << "\n" << i18n::tr(M("title"), path, facts.packets) << "\n";
  // One ladder per conversation (a lab with two QP pairs shows two).
  dissect::LadderOptions lo;
  lo.color = cli::use_colour(1);
  lo.ascii = n.ascii();
  std::string out;
  std::size_t shown = 0;
  for (std::uint32_t id = 1; id <= facts.conversations.size(); ++id) {
    const auto& ends = facts.conversations[id - 1];
    dissect::LadderText ladder(ends.first, ends.second, recs.front().time_ns, lo);
    if (id > 1) out += "\n";
    ladder.header(out);
    for (const auto& rec : recs) {
      if (!rec.is_roce() || rec.conversation != id) continue;
      if (shown++ == kMaxRows) {
        out += i18n::tr(M("more"), facts.packets - kMaxRows, path) + "\n";
        break;
      }
      ladder.row(rec, out);  // the row carries the record's own events
    }
    // End-of-capture verdicts name a frame of their conversation.
    for (const auto& e : tail)
      for (const auto& rec : recs)
        if (rec.frame == e.frame && rec.conversation == id) ladder.note(e, out);
    if (shown > kMaxRows) break;
  }
  std::cout << out;
  return facts;
}

void explain_capture_on_verbs(Narrator& n) {
  n.say(i18n::tr(M("verbs.capture")));
}

std::optional<WireFacts> finish_wire(Narrator& n, const Environment& env,
                                     const std::string& pcap_path) {
  sim::Fabric* fabric = env.fabric();
  if (fabric == nullptr) {
    explain_capture_on_verbs(n);
    return std::nullopt;
  }
  fabric->stop_capture();
  WireFacts facts = show_wire(n, pcap_path);
  n.check("icrc", i18n::tr(M("check.icrc")), facts.readable && facts.icrc_all_ok);
  return facts;
}

}  // namespace rdmalab::lab

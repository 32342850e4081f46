// One captured frame, decoded: the unit the analyser and the renderers work on.
//
// decode_record() turns captured bytes into a PacketRecord with
// wire::decode_frame, checks the ICRC, and clears the events. It performs no
// I/O and does not allocate once the record's event vector has grown to its
// working size, so a caller reading a capture reuses one record per packet.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "rdmalab/dissect/event.hpp"
#include "rdmalab/wire/cm.hpp"
#include "rdmalab/wire/frame.hpp"
#include "rdmalab/wire/icrc.hpp"
#include "rdmalab/wire/mad.hpp"
#include "rdmalab/wire/opcode.hpp"
#include "rdmalab/wire/pause.hpp"

namespace rdmalab::dissect {

struct PacketRecord {
  // The members are in the order the analyser reads them, the rare ones
  // last: records are decoded on one core and analysed on another, and each
  // of a record's cache lines the analyser need not fetch is time.
  std::uint64_t frame = 0;   // 1-based, as Wireshark numbers frames
  std::int64_t time_ns = 0;  // since the epoch
  std::size_t captured_length = 0;
  std::size_t original_length = 0;
  /// The opcode's table row; nullptr when not RoCE or the opcode is unknown.
  const wire::OpcodeInfo* op = nullptr;
  /// ICRC verdict; empty when it could not be checked (snap length, malformed).
  std::optional<wire::IcrcCheck> icrc;
  /// The conversation the analyser put this packet in (1-based), 0 for none.
  std::uint32_t conversation = 0;
  /// The channel (requester -> responder QP) of that conversation the packet
  /// belongs to, as an index into ConversationSummary::channels; -1 for none.
  /// A CNP belongs to the channel whose data it answers.
  std::int32_t channel = -1;
  /// The round trip this packet (an ACK, READ response or atomic ACK)
  /// completed, when the analyser took it as an RTT sample of its channel
  /// (ChannelSummary::rtt_samples); -1 otherwise. Set by Analyzer::feed.
  std::int64_t rtt_ns = -1;
  /// Events found for this packet: by decode_record (ICRC, malformed) and by
  /// Analyzer::feed.
  std::vector<Event> events;
  /// The decoded frame. Its payload spans point into the captured bytes and
  /// are valid only as long as those bytes are.
  wire::Frame decoded;
  /// Native InfiniBand: the VCRC checked (with the ICRC, by check_icrc).
  std::optional<wire::VcrcCheck> vcrc;
  /// An 802.3x PAUSE or 802.1Qbb PFC frame (not RoCE), when this is one.
  std::optional<wire::PauseFrame> pause;
  /// The common MAD header of a management datagram (a UD packet to QP 0,
  /// subnet management, or QP 1, the general services: SA, CM, PerfMgt ...).
  std::optional<wire::mad::Header> mad;
  /// A Connection Manager MAD (UD packet to QP 1), when this is one.
  std::optional<wire::cm::Message> cm;

  [[nodiscard]] bool is_roce() const noexcept { return decoded.is_roce(); }
  /// True when the BTH was decoded (the packet has a PSN, opcode, QPN).
  [[nodiscard]] bool has_bth() const noexcept;
  /// The frame could not be decoded: a length, version or header that does
  /// not fit (snap-length truncation and unknown opcodes are not malformed).
  [[nodiscard]] bool malformed() const noexcept;
};

/// Decodes one frame into `rec` (events cleared, then the packet-level ones
/// added). Never throws on any bytes. The ICRC, a CRC-32 over the whole
/// packet, is most of the cost on full-payload captures: `check_icrc = false`
/// skips it (rec.icrc stays empty).
void decode_record(wire::Bytes captured, std::size_t original_length, wire::LinkType link,
                   std::uint64_t frame, std::int64_t time_ns, PacketRecord& rec,
                   bool check_icrc = true);

/// The ICRC (and, on an InfiniBand link, VCRC) check of decode_record with
/// `check_icrc`, done later: for a record decode_record made with
/// `check_icrc = false` from the same `captured` bytes, before anything
/// else reads it. The record then equals what decode_record with the check
/// would have made (a program decoding on one thread and analysing on
/// another can do the check on whichever is idle).
void check_record_crc(wire::Bytes captured, PacketRecord& rec);

}  // namespace rdmalab::dissect

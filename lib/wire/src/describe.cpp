#include "rdmalab/wire/describe.hpp"

#include "rdmalab/wire/timers.hpp"

namespace rdmalab::wire {
namespace {

using i18n::Message;

constexpr std::array kCatalog{
    Message{"error.truncated", "truncated in {0} at offset {1} (needs {2} bytes, {3} present)",
            "{0} 在偏移 {1} 处被截断（需要 {2} 字节，只有 {3} 字节）"},
    Message{"error.snap_truncated",
            "capture cut by its snap length in {0} at offset {1}; not a malformed packet",
            "抓包截断长度（snaplen）在 {0} 的偏移 {1} 处截断了报文；报文本身并无格式错误"},
    Message{"error.unknown_opcode", "unknown BTH opcode at offset {1}; the rest is shown raw",
            "偏移 {1} 处的 BTH 操作码未知；其后内容按原始字节显示"},
    Message{"error.bad_padding", "pad count {2} is larger than the {3} payload bytes at offset {1}",
            "填充计数 {2} 大于偏移 {1} 处仅有的 {3} 字节载荷"},
    Message{"error.bad_length",
            "{0} length at offset {1} says {2} bytes, which the packet does not hold",
            "偏移 {1} 处的 {0} 长度字段声明 {2} 字节，但报文装不下"},
    Message{"error.bad_version", "{0} header at offset {1} has the wrong version",
            "偏移 {1} 处的 {0} 头部版本号错误"},
    Message{"error.unsupported_link", "unsupported link type", "不支持的链路层类型"},
    Message{"aeth.ack_unlimited", "ACK (credits not in use)", "ACK（未启用信用计数）"},
    Message{"aeth.ack_credits", "ACK, credit code {}", "ACK，信用码 {}"},
    Message{"aeth.rnr", "RNR NAK: receiver not ready, retry after {} ms",
            "RNR NAK：接收端未就绪（没有可用的接收 WQE），{} ms 后重试"},
    Message{"aeth.nak", "NAK: {}", "NAK：{}"},
    Message{"aeth.reserved", "reserved syndrome 0x{:02x}", "保留的综合码 0x{:02x}"},
    Message{"nak.psn_seq", "PSN sequence error", "PSN 序列错误"},
    Message{"nak.invalid_request", "invalid request", "无效请求"},
    Message{"nak.remote_access", "remote access error", "远端访问错误"},
    Message{"nak.remote_op", "remote operational error", "远端操作错误"},
    Message{"nak.invalid_rd", "invalid RD request", "无效 RD 请求"},
    Message{"nak.reserved", "reserved NAK code {}", "保留的 NAK 码 {}"},
};

consteval const Message& M(std::string_view key) {
  return i18n::find(kCatalog, key);
}

}  // namespace

std::span<const i18n::Message> catalog() noexcept {
  return kCatalog;
}

std::string describe(const DecodeError& e) {
  const Message* m = nullptr;
  switch (e.kind) {
    case ErrorKind::Truncated: m = &M("error.truncated"); break;
    case ErrorKind::SnapTruncated: m = &M("error.snap_truncated"); break;
    case ErrorKind::UnknownOpcode: m = &M("error.unknown_opcode"); break;
    case ErrorKind::BadPadding: m = &M("error.bad_padding"); break;
    case ErrorKind::BadLength: m = &M("error.bad_length"); break;
    case ErrorKind::BadVersion: m = &M("error.bad_version"); break;
    case ErrorKind::UnsupportedLink: m = &M("error.unsupported_link"); break;
  }
  return i18n::tr(*m, layer_name(e.layer), e.offset, e.needed, e.available);
}

std::string nak_code_name(std::uint8_t code) {
  switch (code) {
    case 0: return i18n::tr(M("nak.psn_seq"));
    case 1: return i18n::tr(M("nak.invalid_request"));
    case 2: return i18n::tr(M("nak.remote_access"));
    case 3: return i18n::tr(M("nak.remote_op"));
    case 4: return i18n::tr(M("nak.invalid_rd"));
    default: return i18n::tr(M("nak.reserved"), code);
  }
}

std::string describe_syndrome(std::uint8_t syndrome) {
  const Aeth a{syndrome, 0};
  switch (a.kind()) {
    case AckKind::Ack:
      return a.value() == 0x1F ? i18n::tr(M("aeth.ack_unlimited"))
                               : i18n::tr(M("aeth.ack_credits"), a.value());
    case AckKind::RnrNak: return i18n::tr(M("aeth.rnr"), rnr_timer_ms(a.value()).value_or(0));
    case AckKind::Nak: return i18n::tr(M("aeth.nak"), nak_code_name(a.value()));
    case AckKind::Reserved: break;
  }
  return i18n::tr(M("aeth.reserved"), syndrome);
}

}  // namespace rdmalab::wire

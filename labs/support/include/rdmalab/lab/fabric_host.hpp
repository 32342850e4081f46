// What the fabric labs (18 and on) repeat: a host with one PD, one MR and
// one CQ and many QPs on it, signalled WRITEs into a peer's MR, and the
// statistics of their tables. Every verb is narrated, as in every lab.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "rdmalab/lab/endpoint.hpp"
#include "rdmalab/lab/narrator.hpp"

namespace rdmalab::lab {

/// Opens `device`, chooses the GID, allocates a PD, registers an MR of
/// `buffer` bytes (local and remote write) and creates a CQ of `cqe`
/// entries, narrating each verb to `n` (which may be a quiet narrator).
void open_host(Narrator& n, Environment& env, Endpoint& e, const std::string& device,
               std::size_t buffer, int cqe, const CommonOptions& o);

/// An RC QP for `e` on `base`'s PD and CQ (`base` may be `e` itself), with
/// room for `send_depth` send and `recv_depth` receive WRs; `e` takes
/// `base`'s GID.
void add_qp(Narrator& n, Endpoint& base, Endpoint& e, std::uint32_t send_depth,
            std::uint32_t recv_depth);

/// Posts a signalled WRITE of `size` bytes from the start of `from`'s MR to
/// offset `remote` in `to`'s MR.
void post_write(Endpoint& from, const Endpoint& to, std::uint64_t remote, std::uint32_t size,
                std::uint64_t wr_id);

/// Nanoseconds as microseconds, for the tables.
[[nodiscard]] double to_us(std::int64_t ns) noexcept;

/// The nearest-rank percentile of `ns` (the smallest value with at least a
/// fraction `p` of the samples at or under it), in microseconds; 0 when
/// there is no sample.
[[nodiscard]] double percentile_us(std::vector<std::int64_t> ns, double p);

}  // namespace rdmalab::lab

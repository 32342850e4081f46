#!/usr/bin/env bash
# Builds rdmapcap and its benchmark with the optimised preset, then runs the
# benchmark once over its three synthetic captures: N packets of one QP pair
# with 1 KiB payloads; 2N congestion-heavy packets (CE marks, CNPs, PFC and
# 802.3x pause frames) from 100,000 requester QPs; the same traffic from 4
# QPs, whose time per packet the 100,000-QP capture is compared with. Each is
# timed against a bare libpcap read loop, the same loop over rdmapcap's mapped
# reader, every byte read once (mapped and with read()), and tshark (see bench/dissect/bench_rdmapcap.cpp). BASELINE, when set, names a second
# rdmapcap (a build of another commit) timed on the same captures in turns.
#
#   [BASELINE=path/to/rdmapcap] scripts/bench-rdmapcap.sh [PACKETS] [PAYLOAD_BYTES] [RUNS]
#                                                         (default 1000000 1024 3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/release"
packets=${1:-1000000}
payload=${2:-1024}
runs=${3:-3}
cmake --preset release -S "$root" >/dev/null
cmake --build "$build" --target rdmapcap bench_rdmapcap -j2
args=(--packets "$packets" --payload "$payload" --runs "$runs" --rdmapcap "$build/tools/rdmapcap/rdmapcap")
command -v tshark >/dev/null || args+=(--no-tshark)
[[ -n "${BASELINE:-}" ]] && args+=(--baseline "$BASELINE")
"$build/bench/dissect/bench_rdmapcap" "${args[@]}"

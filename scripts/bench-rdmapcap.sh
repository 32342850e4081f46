#!/usr/bin/env bash
# Builds rdmapcap and its benchmark with the optimised preset, then runs the
# benchmark on three synthetic captures, one after the other: N packets of
# one QP pair, 1 KiB payloads (timed against a bare libpcap read loop,
# `rdmapcap summary` with and without ICRC checks, and tshark); the
# congestion-heavy capture with 100,000 requester QPs (2N packets: CE marks,
# CNPs, PFC and 802.3x pause frames); and the same with 4 QPs, whose time per
# packet the 100,000-QP one is compared with.
#
#   scripts/bench-rdmapcap.sh [PACKETS] [PAYLOAD_BYTES] [RUNS]     (default 1000000 1024 3)
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
"$build/bench/dissect/bench_rdmapcap" "${args[@]}"
for qps in 100000 4; do
  echo
  echo "== congestion-heavy capture, $qps QPs, $((2 * packets)) packets"
  "$build/bench/dissect/bench_rdmapcap" "${args[@]}" --packets "$((2 * packets))" --congestion --qps "$qps"
done

#!/usr/bin/env bash
# Builds rdmapcap and its benchmark with the optimised preset, then runs the
# benchmark: a synthetic capture of N packets timed with a bare libpcap read
# loop, `rdmapcap summary` (with and without ICRC checks) and tshark.
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

#!/usr/bin/env bash
# Configures and builds one CMake preset (default: release). Quiet unless
# something fails, then the build log is shown.
#   scripts/build.sh [PRESET]
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
log="build/$preset.log"
mkdir -p build
if ! { cmake --preset "$preset" --log-level=WARNING -Wno-dev &&
       cmake --build --preset "$preset" -j "$(nproc)"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "rdmalab: build of preset '$preset' failed (log: $log)" >&2
  exit 1
fi

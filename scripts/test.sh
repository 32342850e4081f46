#!/usr/bin/env bash
# The second command of the README: install dependencies, build, and run the
# whole test suite with ctest, twice: an optimised build with warnings as
# errors, and a build with AddressSanitizer + UndefinedBehaviorSanitizer. Then
# the fuzz targets run for a bounded time.
#   scripts/test.sh            everything
#   scripts/test.sh release    one preset only (release, asan or dev)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

presets=("$@")
[[ ${#presets[@]} -gt 0 ]] || presets=(release asan fuzz)

status=0
for preset in "${presets[@]}"; do
  echo "== rdmalab: $preset build and tests"
  scripts/build.sh "$preset"
  if [[ "$preset" == fuzz ]]; then
    ctest --test-dir "build/$preset" -L fuzz --output-on-failure || status=1
  else
    ctest --preset "$preset" -LE fuzz -j "$(nproc)" || status=1
  fi
done
exit $status

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
# Real verbs: the tests labelled softroce boot Debian's kernel in qemu with two
# Soft-RoCE devices. They run when the machine can run the VM and are
# reported as skipped (never failed) when it cannot.
scripts/install-deps.sh --vm || echo "== rdmalab: the Soft-RoCE VM packages could not be installed"
if tools/softroce-vm/softroce-vm --check; then
  echo "== rdmalab: label softroce runs: real verbs on Soft-RoCE in a qemu VM"
else
  echo "== rdmalab: label softroce SKIPPED: the Soft-RoCE VM cannot run here (reason above)"
fi

presets=("$@")
[[ ${#presets[@]} -gt 0 ]] || presets=(release asan fuzz)

status=0
# Each phase says how long it took: the whole run must stay well inside CI's
# time limit on a 2-core machine, and this is where to look when it grows.
phase_start=$SECONDS
phase_done() {
  echo "== rdmalab: $1 took $((SECONDS - phase_start)) s (total $SECONDS s)"
  phase_start=$SECONDS
}
phase_done "installing dependencies"
for preset in "${presets[@]}"; do
  echo "== rdmalab: $preset build and tests"
  scripts/build.sh "$preset"
  phase_done "$preset build"
  if [[ "$preset" == fuzz ]]; then
    # Each target is one single-threaded process: one per core.
    ctest --test-dir "build/$preset" -L fuzz --output-on-failure -j "$(nproc)" || status=1
  else
    # One VM boot per run is enough: the sanitizer build skips the softroce label.
    exclude=fuzz
    [[ "$preset" == asan ]] && exclude='fuzz|softroce'
    ctest --preset "$preset" -LE "$exclude" -j "$(nproc)" || status=1
  fi
  phase_done "$preset tests"
  # The README's and the course's install-and-run commands, typed literally
  # (they rebuild the release tree, so they run after its tests, not in them).
  if [[ "$preset" == release ]]; then
    tests/e2e/first-commands.sh || status=1
    phase_done "the README's first commands"
  fi
done
exit $status

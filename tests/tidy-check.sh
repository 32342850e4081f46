#!/usr/bin/env bash
# clang-tidy, as .clang-tidy says, over every C++ source of the libraries,
# tools, labs and benchmarks (the tests are left out: doctest's macros trip
# the bug-prone checks by design). Needs the build's compile_commands.json.
# Prints each finding and exits 1 when there is one; exits 0 when none.
#
#   tests/tidy-check.sh BUILD_DIR [RUN_CLANG_TIDY]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:?build directory with compile_commands.json}
runner=${2:-run-clang-tidy}
[[ -f "$build/compile_commands.json" ]] || { echo "tidy: no $build/compile_commands.json"; exit 1; }
root=$(pwd)
log=$(mktemp)
db=$(mktemp -d)
trap 'rm -rf "$log" "$db"' EXIT
# The build's commands without the shared precompiled header: GCC's .gch is
# not clang's, and each source must name the headers it uses on its own.
python3 - "$build/compile_commands.json" "$db/compile_commands.json" <<'PY'
import json, re, sys
entries = json.load(open(sys.argv[1]))
for e in entries:
    e["command"] = re.sub(r" -include \S*cmake_pch\.hxx| -Winvalid-pch", "", e["command"])
json.dump(entries, open(sys.argv[2], "w"))
PY
# One job per core; -quiet drops the per-file banner, the findings remain.
# run-clang-tidy asks clang-tidy for colour whatever the output is: strip it.
"$runner" -p "$db" -quiet -j "$(nproc)" "^$root/(lib|dissect|labs|tools|bench)/" 2>&1 |
  sed -E 's/\x1b\[[0-9;]*m//g' >"$log"
status=${PIPESTATUS[0]}
findings=$(grep -cE '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$log")
files=$(grep -cE '^\S*clang-tidy' "$log")
if ((status != 0 || findings > 0)); then
  if ((findings > 0)); then
    grep -E -A3 '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$log" | head -200
  else
    tail -40 "$log"
  fi
  echo "tidy: $findings finding(s) (exit $status)"
  exit 1
fi
echo "tidy: $files sources checked, no finding"

#!/usr/bin/env bash
# clang-tidy, as .clang-tidy says, over every C++ source of the libraries,
# tools, labs and benchmarks (the tests are left out: doctest's macros trip
# the bug-prone checks by design). Needs the build's compile_commands.json.
# Prints each finding and exits 1 when there is one; exits 0 when none.
#
# A source whose exact input a previous run found clean is not checked again:
# tests/tidy-cache.py keys each source by a hash of its preprocessed text, its
# flags, .clang-tidy and the tool's version, and tests/tidy-clean.txt lists the
# keys found clean. After changing sources, `--update` rewrites that list when
# the run finds nothing (commit it with the change; a stale list only costs
# time: every source whose key it lacks is checked).
#
#   tests/tidy-check.sh BUILD_DIR [RUN_CLANG_TIDY] [--update]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:?build directory with compile_commands.json}
runner=run-clang-tidy
update=0
for arg in "${@:2}"; do
  if [[ "$arg" == --update ]]; then update=1; else runner=$arg; fi
done
[[ -f "$build/compile_commands.json" ]] || { echo "tidy: no $build/compile_commands.json"; exit 1; }
root=$(pwd)
log=$(mktemp)
db=$(mktemp -d)
keys=$(mktemp)
trap 'rm -rf "$log" "$db" "$keys"' EXIT
# The build's commands without the shared precompiled header: GCC's .gch is
# not clang's, and each source must name the headers it uses on its own.
python3 - "$build/compile_commands.json" "$db/compile_commands.json" <<'PY'
import json, re, sys
entries = json.load(open(sys.argv[1]))
for e in entries:
    e["command"] = re.sub(r" -include \S*cmake_pch\.hxx| -Winvalid-pch", "", e["command"])
json.dump(entries, open(sys.argv[2], "w"))
PY
filter="^$root/(lib|dissect|labs|tools|bench)/"
python3 tests/tidy-cache.py keys "$db/compile_commands.json" "$root" "$filter" "$keys"
all=$(wc -l <"$keys")
mapfile -t todo < <(python3 tests/tidy-cache.py todo "$keys" tests/tidy-clean.txt)
status=0
if ((${#todo[@]} > 0)); then
  # The sources to check, as one anchored alternation of their paths.
  pattern=$(printf '%s\n' "${todo[@]}" | python3 -c 'import re,sys; print("|".join(re.escape(l.strip()) for l in sys.stdin))')
  # One job per core; -quiet drops the per-file banner, the findings remain.
  # run-clang-tidy asks clang-tidy for colour whatever the output is: strip it.
  "$runner" -p "$db" -quiet -j "$(nproc)" "^$root/($pattern)\$" 2>&1 |
    sed -E 's/\x1b\[[0-9;]*m//g' >"$log"
  status=${PIPESTATUS[0]}
fi
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
echo "tidy: $files of $all sources checked, no finding; the other $((all - files)) were found clean before on exactly this input (tests/tidy-clean.txt)"
if ((update)); then
  python3 tests/tidy-cache.py update "$keys" tests/tidy-clean.txt
  echo "tidy: tests/tidy-clean.txt lists the $all sources' keys"
fi

#!/usr/bin/env bash
# Runs two builds of rdmalab side by side on the same inputs and reports every
# difference in what they print or write: each lab on the simulator (English,
# Chinese, --json, and its capture, with a set of variants), and rdmapcap's
# commands on every capture in tests/data and on the labs' captures.
#
# A refactoring that must not change behaviour is proved with it:
#   scripts/compare-builds.sh OLD_BUILD_DIR NEW_BUILD_DIR [OUT_DIR]
# e.g. a release build of the previous commit (a git worktree) against
# build/release. Exit 0 when every output is byte for byte equal.
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?old build directory}
new=${2:?new build directory}
out=${3:-$(mktemp -d)}
mkdir -p "$out"

# Lab variants: a lab, then its arguments (after --backend sim --seed 1).
variants=(
  "01-send-recv|"
  "01-send-recv|-s 3000 -m 1024"
  "01-send-recv|--no-recv"
  "01-send-recv|-n 3 --rnr-retry 2"
  "02-write|"
  "02-write|--offset 100 -s 2000 -m 512"
  "03-read|"
  "03-read|-s 5000 -m 1024 --rd-atomic 2 -n 3"
  "04-atomics|"
  "04-atomics|-n 5 --add 7"
  "05-write-imm|"
  "05-write-imm|--imm 0xdeadbeef -s 3000 -m 1024"
  "06-mtu|"
  "06-mtu|-s 10000 -n 2"
  "07-retry|"
  "07-retry|--scenario acks"
  "07-retry|--scenario psn"
  "07-retry|--scenario dead"
  "07-retry|--scenario loss --loss 0.2"
  "07-retry|--scenario rnr"
  "07-retry|--scenario none"
  "08-adaptive-routing|"
  "08-adaptive-routing|--ar off"
  "08-adaptive-routing|--paths 4 -s 65536"
  "09-nccl-net|"
  "09-nccl-net|--qps-per-conn 4 -n 3"
  "10-tf-rendezvous|"
  "10-tf-rendezvous|--scenario changed"
  "10-tf-rendezvous|--scenario error"
  "11-gdr-read|"
  "11-gdr-read|-n 3 -s 100000"
  "12-one-sided|"
  "12-one-sided|--break"
  "13-mr-scope|"
  "13-mr-scope|--no-misuse"
)

run_all() {  # BUILD DEST
  local build=$1 dest=$2 i=0
  mkdir -p "$dest"
  for v in "${variants[@]}"; do
    local lab=${v%%|*} args=${v#*|}
    local bin
    bin=$(ls "$build"/labs/"$lab"/lab* 2>/dev/null | head -1)
    [[ -x "$bin" ]] || { echo "missing lab binary $lab in $build" >"$dest/$i.missing"; i=$((i+1)); continue; }
    local tag
    tag=$(printf '%02d-%s' "$i" "$lab")
    # shellcheck disable=SC2086
    for lang in en zh; do
      "$bin" --backend sim --seed 1 --lang "$lang" --capture "$dest/$tag.$lang.pcap" $args \
        >"$dest/$tag.$lang.txt" 2>&1 </dev/null; echo "exit $?" >>"$dest/$tag.$lang.txt"
    done
    "$bin" --backend sim --seed 1 --json --capture "$dest/$tag.json.pcap" $args \
      >"$dest/$tag.json" 2>&1 </dev/null; echo "exit $?" >>"$dest/$tag.json"
    i=$((i+1))
  done
  local pcap="$build/tools/rdmapcap/rdmapcap"
  for f in tests/data/*.pcap "$dest"/*.en.pcap; do
    local b
    b=$(basename "$f" .pcap)
    for cmd in "decode" "decode --all" "decode --json" "decode --json --all" "summary" \
               "summary --json" "ladder --color never" "ladder --svg /dev/stdout"; do
      local key=${cmd// /_}; key=${key//\//_}
      for lang in en zh; do
        # shellcheck disable=SC2086
        "$pcap" --lang "$lang" $cmd "$f" >"$dest/rdmapcap.$b.$key.$lang" 2>&1 </dev/null ||
          echo "exit $?" >>"$dest/rdmapcap.$b.$key.$lang"
      done
    done
  done
}

export LC_ALL=C.UTF-8
run_all "$old" "$out/old"
run_all "$new" "$out/new"
if diff -rq "$out/old" "$out/new" >"$out/diff.txt"; then
  echo "compare-builds: every output equal ($(ls "$out/new" | wc -l) files) in $out"
else
  echo "compare-builds: $(wc -l <"$out/diff.txt") file(s) differ (list in $out/diff.txt):"
  head -40 "$out/diff.txt"
  exit 1
fi

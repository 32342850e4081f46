#!/usr/bin/env bash
# Runs two builds of rdmalab side by side on the same inputs and reports every
# difference in what they print or write: each lab on the simulator (English,
# Chinese, --json, and its capture, with a set of variants), and rdmapcap's
# commands on every capture in tests/data and on the labs' captures.
#
# A refactoring that must not change behaviour is proved with it:
#   scripts/compare-builds.sh OLD_BUILD_DIR NEW_BUILD_DIR [OUT_DIR]
# e.g. a release build of the previous commit (a git worktree) against
# build/release.
#
# The labs print and send real buffer addresses (a RETH's VA, the buffer
# info's va=). Both builds run without address-space randomisation and with
# every allocation mmap'd, so two builds that allocate alike print the same
# addresses; a change in how much a lab allocates still moves them. So the
# outputs are compared twice: byte for byte, and then, where they differ,
# with addresses and the ICRCs computed over them masked (the decoders still
# say whether each ICRC is correct). Exit 0 when every output is equal at
# least masked; the report says how many were equal byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?old build directory}
new=${2:?new build directory}
out=${3:-$(mktemp -d)}
mkdir -p "$out"

# Lab variants: a lab, then its arguments (after --backend sim --seed 1).
variants=(
  "01-send-recv|"
  "01-send-recv|--cm"
  "01-send-recv|-s 3000 -m 1024"
  "01-send-recv|--no-recv"
  "01-send-recv|-n 3 --rnr-retry 2"
  "02-write|"
  "02-write|--cm"
  "02-write|--offset 100 -s 2000 -m 512"
  "03-read|"
  "03-read|--cm"
  "03-read|-s 5000 -m 1024 --rd-atomic 2 -n 3"
  "04-atomics|"
  "04-atomics|-n 5 --add 7"
  "05-write-imm|"
  "05-write-imm|--cm"
  "05-write-imm|--imm 0xdeadbeef -s 3000 -m 1024"
  "06-mtu|"
  "06-mtu|--cm"
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
  "12-one-sided|--break reuse"
  "12-one-sided|--break early-read"
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
    # The capture is written to the same path by both builds (the path is
    # printed), then moved; a lab that exits non-zero on purpose (a usage
    # error, a failed check) is recorded with its exit status.
    local st
    for mode in en zh json; do
      local flags=(--lang "$mode") outf="$dest/$tag.$mode.txt"
      [[ $mode == json ]] && flags=(--json) && outf="$dest/$tag.json"
      rm -f "$scratch"/*.pcap
      st=0
      # shellcheck disable=SC2086
      run "$bin" --backend sim --seed 1 "${flags[@]}" --capture "$scratch/$tag.pcap" $args \
        >"$outf" 2>&1 </dev/null || st=$?
      echo "exit $st" >>"$outf"
      for c in "$scratch"/*.pcap; do
        [[ -e $c ]] && mv "$c" "$dest/$(basename "$c" .pcap).$mode.pcap"
      done
    done
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
        st=0
        "$pcap" --lang "$lang" $cmd "$f" >"$dest/rdmapcap.$b.$key.$lang" 2>&1 </dev/null || st=$?
        echo "exit $st" >>"$dest/rdmapcap.$b.$key.$lang"
      done
    done
  done
}

# No address-space randomisation, every allocation its own mapping: the same
# addresses from run to run and, while allocations stay alike, build to build.
run() {
  if setarch -R true 2>/dev/null; then
    GLIBC_TUNABLES=glibc.malloc.mmap_threshold=0 setarch -R "$@"
  else
    "$@"
  fi
}

# Addresses (0x55d0c3a1b2c0, va=000055d0c3a1b2c0, or 12+ decimal digits in
# JSON) and ICRC values (text "ICRC  0x1d6a953d", JSON "icrc": {"value": N,
# compact or indented).
mask() {
  perl -0777 -pe 's/0x[0-9a-f]{9,16}/0xADDRESS/g; s/va=[0-9a-f]{16}/va=ADDRESS/g;
    s/(?<![0-9])[0-9]{12,20}(?![0-9])/ADDRESS/g; s/(ICRC +)0x[0-9a-f]{8}/$1ICRC/g;
    s/("icrc":\s*\{[^}]*?"value":\s*)[0-9]+/$1ICRC/g' "$1"
}

export LC_ALL=C.UTF-8
scratch="$out/scratch"
mkdir -p "$scratch"
run_all "$old" "$out/old"
run_all "$new" "$out/new"
total=$(ls "$out/new" | wc -l)
if diff -rq "$out/old" "$out/new" >"$out/diff.txt"; then
  echo "compare-builds: every output equal byte for byte ($total files) in $out"
  exit 0
fi
# Outputs that differ byte for byte, compared again masked. A capture is
# compared through its decodes (rdmapcap's outputs for it, also compared).
strict=0
: >"$out/masked-diff.txt"
while read -r line; do
  strict=$((strict + 1))
  f=$(sed -E 's/^Files (.*) and .* differ$/\1/' <<<"$line")
  rel=${f#"$out/old/"}
  [[ "$line" == Files* ]] || { echo "$line" >>"$out/masked-diff.txt"; continue; }
  [[ "$rel" == *.pcap ]] && continue
  diff <(mask "$out/old/$rel") <(mask "$out/new/$rel") >/dev/null ||
    echo "$rel" >>"$out/masked-diff.txt"
done <"$out/diff.txt"
masked=$(wc -l <"$out/masked-diff.txt")
echo "compare-builds: $total files; $strict differ byte for byte (list in $out/diff.txt)," \
     "$masked with addresses and ICRCs masked"
if ((masked > 0)); then
  head -40 "$out/masked-diff.txt"
  exit 1
fi

#!/usr/bin/env bash
# Regenerates what the lab chapters of the course companion show from the
# programs themselves, after an intended change of a lab's output:
#   1. the golden transcripts (scripts/regen-golden.sh, which builds PRESET);
#   2. in docs/en and docs/zh, every block between
#        <!-- transcript:labNN -->   and   <!-- /transcript -->
#      becomes a ```text block holding tests/labs/golden/labNN.<lang>.txt
#      (a marker whose golden does not exist yet is left as it is);
#   3. docs/figures/labNN.svg (lab08: labNN-off.svg and labNN-on.svg), the
#      ladder diagram of each lab's capture: the lab runs on the simulator
#      with --seed 1, rdmapcap draws its capture; docs/figures/labNN.zh.svg
#      is the same capture drawn with --lang zh (Chinese labels, for
#      docs/zh). The fabric labs (18 and on) write one capture per run and
#      show overview plots instead (rdmapcap plot): docs/figures/labNN-RUN-plot.svg
#      and labNN-RUN-plot.zh.svg, for the runs whose plot a chapter shows;
#   4. in docs/zh, the rdmapcap (and lab) output excerpts: the Chinese output
#      of the lines the English chapter shows (scripts/regen-zh-excerpts.py);
#   5. docs/{en,zh}/img/report-congestion.png, the screenshot of rdmapcap
#      report in chapter 25 (tests/site/browse_report.py --docs).
# Review the diff before committing it. tests/docs checks that the chapters
# and the goldens agree and that every figure a chapter shows exists
# (docs_test), and runs every command the lab chapters show (docs_commands_test):
# the short rdmapcap excerpts in the chapters are kept by hand, and that test
# names any excerpt line the real output no longer contains.
#   scripts/regen-docs.sh [PRESET]        (default: dev)
#   scripts/regen-docs.sh --no-build [PRESET]   (use the binaries as built)
set -euo pipefail
cd "$(dirname "$0")/.."

build=1
if [[ ${1:-} == --no-build ]]; then
  build=0
  shift
fi
preset=${1:-dev}
bin="build/$preset"

if ((build)); then
  scripts/regen-golden.sh "$preset"
fi

# 2. Transcript blocks, from the goldens.
for lang in en zh; do
  for chapter in docs/"$lang"/[0-9][0-9]-*.md; do
    grep -q '<!-- transcript:' "$chapter" || continue
    tmp=$(mktemp)
    awk -v lang="$lang" -v golden_dir="tests/labs/golden" '
      match($0, /<!-- transcript:[a-z0-9]+ -->/) {
        print
        name = substr($0, RSTART + 16, RLENGTH - 20)
        golden = golden_dir "/" name "." lang ".txt"
        if ((getline probe < golden) <= 0) next  # no golden yet: keep the block
        close(golden)
        print "```text"
        while ((getline line < golden) > 0) print line
        close(golden)
        print "```"
        skip = 1
        next
      }
      /<!-- \/transcript -->/ { skip = 0; print; next }
      skip { next }
      { print }
    ' "$chapter" >"$tmp"
    if ! cmp -s "$tmp" "$chapter"; then
      cat "$tmp" >"$chapter"
      echo "updated $chapter"
    fi
    rm -f "$tmp"
  done
done

# 3. Ladder diagrams, drawn from fresh simulator captures.
rdmapcap="$bin/tools/rdmapcap/rdmapcap"
if ! "$rdmapcap" ladder --help 2>/dev/null | grep -q -- '--svg'; then
  echo "rdmalab: $rdmapcap has no 'ladder --svg': figures not regenerated" >&2
  exit 1
fi
mkdir -p docs/figures
work=$(mktemp -d)
status=0
trap 'rm -rf "$work"' EXIT
for dir in labs/[0-9][0-9]-*/; do
  dir=${dir%/}
  topic=$(basename "$dir")     # 01-send-recv
  name="lab${topic:0:2}"       # lab01
  exe="$bin/labs/$topic/$name-${topic:3}"
  if [[ ! -x $exe ]]; then
    echo "rdmalab: $exe is not built: docs/figures/$name.svg not regenerated" >&2
    continue
  fi
  # A lab whose checks fail keeps its old figure: a picture of a broken run
  # would contradict its chapter.
  if ! "$exe" --lang en --backend sim --seed 1 --capture "$work/$name.pcap" >"$work/$name.txt" 2>&1; then
    echo "rdmalab: $name failed its checks: its figures are not regenerated" >&2
    status=1
    continue
  fi
  # Most labs write the one capture they are given; lab08 runs twice and
  # writes lab08-off.pcap and lab08-on.pcap. Each capture gets its figure.
  # rdmapcap exits 1 when a capture holds protocol errors (lab07 and lab08
  # provoke them on purpose); the picture is still written.
  # A capture of datagrams alone (lab15, UD) holds no conversation: the
  # ladder has nothing to draw, and that lab shows no figure.
  for pcap in "$work/$name".pcap "$work/$name"-*.pcap; do
    [[ -f $pcap ]] || continue
    # The fabric labs (18 and on) show their captures' overview plot: every
    # requester's rate on one scale, CE marks, CNPs and pauses. Only the plots
    # a chapter shows are drawn (a lab may write more captures than its
    # chapter needs pictures of).
    if ((10#${topic:0:2} >= 18)); then
      if ! grep -q "figures/$(basename "$pcap" .pcap)-plot.svg" docs/en/*.md; then
        continue
      fi
      for lang in en zh; do
        suffix=-plot.svg
        [[ $lang == en ]] || suffix=-plot.$lang.svg
        svg="docs/figures/$(basename "$pcap" .pcap)$suffix"
        "$rdmapcap" --lang "$lang" plot "$pcap" -o "$svg" || [[ $? -eq 1 ]]
        echo "wrote $svg"
      done
      continue
    fi
    if "$rdmapcap" summary --json "$pcap" | grep -q '"conversations":\[\]'; then
      echo "no conversation in $name's capture: no figure"
      continue
    fi
    for lang in en zh; do
      suffix=.svg
      [[ $lang == en ]] || suffix=.$lang.svg
      svg="docs/figures/$(basename "$pcap" .pcap)$suffix"
      "$rdmapcap" --lang "$lang" ladder "$pcap" --color never --svg "$svg" >/dev/null ||
        [[ $? -eq 1 ]]
      echo "wrote $svg"
    done
  done
done
# 4. The Chinese chapters' output excerpts, from the English ones.
if ! python3 scripts/regen-zh-excerpts.py "$bin"; then
  status=1
fi
# 5. The screenshot of rdmapcap report that chapter 25 shows
#    (docs/en/img/report-congestion.png and docs/zh/img/...), taken in
#    headless Chromium by the report's browser test.
if ! /usr/bin/python3 tests/site/browse_report.py --rdmapcap "$rdmapcap" --data tests/data \
     --out "$work/report" --docs docs; then
  echo "rdmalab: the report screenshots were not regenerated" >&2
  status=1
fi
git status --short docs tests/labs/golden
exit "$status"

#!/usr/bin/env bash
# End-to-end checks of the rdmapcap command line: outputs, languages, exit
# codes and bad input. usage: cli_test.sh RDMAPCAP DATA_DIR
set -u
BIN=$1
DATA=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0
check() {  # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}
code() {  # code EXPECTED CMD...: the command's exit code
  "${@:2}" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  [ "$rc" -eq "$1" ] || { echo "  exit $rc, expected $1; stderr: $(head -c 300 "$TMP/err")"; return 1; }
}

# decode, text: the project's first demo.
code 0 "$BIN" decode "$DATA/mtu_write_s3072_m1024.pcap"
check "decode: 20 frames, each ICRC correct" test "$(grep -c '^  ICRC .* correct' "$TMP/out")" -eq 20
check "decode: 5 WRITE First explained" test "$(grep -c 'RC RDMA WRITE First: first packet' "$TMP/out")" -eq 5
check "decode: DMA length against the payload" grep -q 'DMA len    3072 .* 3 packet' "$TMP/out"
check "decode: AETH syndrome decoded" grep -q 'Syndrome   0x1f .*ACK (credits not in use)' "$TMP/out"

# decode --json: the NAK and go-back-N of loss_drop_one_nak.
code 0 "$BIN" decode --json "$DATA/loss_drop_one_nak.pcap"
check "json: 28 lines" test "$(wc -l <"$TMP/out")" -eq 28
check "json: NAK in frame 14 for PSN 0x109" \
  test "$(jq -c 'select(.frame==14) | [.aeth.syndrome, .psn, .events[0].type]' "$TMP/out")" = '[96,265,"nak_psn_sequence"]'
check "json: frames 15,16 resend PSNs 0x109,0x10a" \
  test "$(jq -c '[select(any(.events[]; .type=="retransmission")) | [.frame,.psn]]' "$TMP/out" | jq -sc 'add')" = '[[15,265],[16,266]]'

# summary: timeout inferred, retries counted. The capture ends with the
# third retry, before a fourth was due: still retrying, not "gave up".
code 0 "$BIN" summary --json "$DATA/dead_peer_retry_exceeded.pcap"
check "summary: timeout 12, 3 retries, still retrying at the end" \
  test "$(jq -c '.conversations[0].channels[0] | [.timeout, .max_retries, .retry_exhausted, .still_retrying]' "$TMP/out")" = '[12,3,false,true]'

# congestion and PFC: options, and a clear message for bad values.
code 0 "$BIN" summary --json --link-speed 25G "$DATA/congestion_pfc.pcap"
check "pfc: speed given, priority 3 paused 400 µs" \
  test "$(jq -c '[.capture.link_speed_source, .capture.link_speed_bps, (.pfc[] | select(.priority==3) | .paused_ns)]' "$TMP/out")" = '["given",25000000000,400000]'
check "bad --link-speed: exit 2" code 2 "$BIN" summary --link-speed 100 "$DATA/congestion_pfc.pcap"
check "bad --link-speed: says which option" grep -q -- '--link-speed 100:' "$TMP/err"
check "pfc storm: exit 1 below the threshold" code 1 "$BIN" summary --pfc-storm-ms 0.3 "$DATA/congestion_pfc.pcap"
check "channel limit: a warning naming --max-channels" code 0 "$BIN" summary --max-channels 1 "$DATA/congestion_pfc.pcap"
check "channel limit: the message" grep -q -- '--max-channels' "$TMP/err"
code 0 "$BIN" summary --json "$DATA/loss_tail_drop_timeout.pcap"
check "summary: tail drop gives timeout 14" test "$(jq '.conversations[0].channels[0].timeout' "$TMP/out")" = 14

# Languages: --lang and the environment.
code 0 "$BIN" --lang zh summary "$DATA/loss_drop_one_nak.pcap"
check "zh: summary in Chinese" grep -q '会话 1' "$TMP/out"
code 0 env LANG=zh_CN.UTF-8 "$BIN" decode "$DATA/send_bw_s64.pcap"
check "zh from LANG" grep -q '基本传输头' "$TMP/out"
code 0 "$BIN" --lang zh --help
check "zh: --help translated, exit codes documented" grep -q '退出码' "$TMP/out"
code 0 "$BIN" --help
check "help documents exit codes" grep -q 'Exit codes: 0 success; 1' "$TMP/out"

# ladder: terminal, colour control, SVG.
code 0 "$BIN" ladder --color always "$DATA/loss_drop_one_nak.pcap"
check "ladder: NAK row coloured" grep -q $'\x1b\[33m◀.*NAK(0) PSN 0x000109' "$TMP/out"
code 0 env NO_COLOR=1 "$BIN" ladder --svg "$TMP/l.svg" "$DATA/loss_drop_one_nak.pcap"
check "ladder: NO_COLOR respected" bash -c "! grep -q $'\x1b' '$TMP/out'"
check "ladder: 28 rows" test "$(grep -c '│.*[▶◀]' "$TMP/out")" -eq 28
# --ascii: the same 28 rows drawn with | - > < only (box-drawing characters
# and arrows are double width in many CJK terminals).
code 0 "$BIN" --lang zh ladder --ascii "$DATA/loss_drop_one_nak.pcap"
check "ladder --ascii: 28 rows" test "$(grep -c '^ *[0-9.]*  |.*[<>].*|' "$TMP/out")" -eq 28
check "ladder --ascii: no box-drawing characters or arrows" \
  bash -c "! grep -q '[│─▶◀⏱↻✗⇅⇄]' '$TMP/out'"
# The Chinese column heading 时间 is two characters four terminal columns
# wide: right-aligned over the 12-column times, the endpoint after it starts
# where the rows' first | stands (column 15), as in English.
check "ladder --lang zh: the heading lines up with the rows" python3 -c "
import sys, unicodedata
lines = open(sys.argv[1], encoding='utf-8').read().split('\n')
head = next(l for l in lines if l.lstrip().startswith('时间'))
row = next(l for l in lines if l[:1] == ' ' and '  |' in l)
width = lambda s: sum(2 if unicodedata.east_asian_width(c) in 'WF' else 1 for c in s)
sys.exit(0 if width(head[:head.index('时间') + 2]) == 12 and row.index('|') == 14 else 1)
" "$TMP/out"
# --payload: the bytes themselves (rping's 16-byte buffer advertisement).
code 0 "$BIN" decode --payload "$DATA/rping_cm.pcap"
check "decode --payload: hex dump" grep -q '0000  00 00 56 2c 36 aa 4d 90 00 00 05 10 00 00 00 40  |..V,6.M........@|' "$TMP/out"
code 0 "$BIN" decode --json --payload "$DATA/rping_cm.pcap"
check "decode --json --payload: payload_hex" grep -q '"payload_hex":"0000562c36aa4d900000051000000040"' "$TMP/out"
# Two conversations in one file: an end-of-capture conclusion is drawn only
# in the ladder of its own conversation. (mergecap -a appends the second
# file with earlier timestamps: the capture's latest time stays the third
# retry's, so conversation 1 is still retrying at the end.)
if command -v mergecap >/dev/null; then
  mergecap -a -F pcap -w "$TMP/two.pcap" "$DATA/dead_peer_retry_exceeded.pcap" "$DATA/rc_pingpong_s64.pcap"
  code 0 "$BIN" ladder -c 1 "$TMP/two.pcap"
  check "ladder -c 1: the conclusion about its PSN" grep -q "still retrying when the capture ended" "$TMP/out"
  code 0 "$BIN" ladder -c 2 "$TMP/two.pcap"
  check "ladder -c 2: not the other conversation's" bash -c "! grep -q 'still retrying' '$TMP/out'"
fi
check "ladder: SVG written" grep -q '<svg' "$TMP/l.svg"
check "ladder: SVG shows go-back-N" grep -q 'go-back-N' "$TMP/l.svg"
code 2 "$BIN" ladder --conversation 9 "$DATA/loss_drop_one_nak.pcap"
check "ladder: unknown conversation is a usage error" grep -q 'no conversation 9' "$TMP/err"

# Usage and input errors.
check "no subcommand: exit 2" code 2 "$BIN"
check "unknown option: exit 2" code 2 "$BIN" decode --bogus "$DATA/send_bw_s64.pcap"
check "missing file: exit 3" code 3 "$BIN" decode "$TMP/none.pcap"
printf 'this is not a capture file at all, not even close\n' >"$TMP/garbage.pcap"
check "wrong magic: exit 3" code 3 "$BIN" summary "$TMP/garbage.pcap"
head -c 3000 "$DATA/loss_drop_one_nak.pcap" >"$TMP/cut.pcap"
code 3 "$BIN" decode --json "$TMP/cut.pcap"
check "truncated file: packets before the cut, then exit 3" test "$(wc -l <"$TMP/out")" -ge 1
# A pcap header with link type 147 (USER0), which rdmapcap does not read.
printf '\xd4\xc3\xb2\xa1\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00\x93\x00\x00\x00' >"$TMP/user0.pcap"
code 3 "$BIN" summary "$TMP/user0.pcap"
check "unsupported link type: exit 3 with a message" grep -q 'unsupported link type 147' "$TMP/err"
# Snap-length truncation: cut every record to 60 bytes (headers kept).
python3 - "$DATA/mtu_write_s3072_m1024.pcap" "$TMP/snap.pcap" <<'PY'
import struct, sys
src = open(sys.argv[1], "rb").read()
out = bytearray(src[:24]); out[16:20] = struct.pack("<I", 60)
off = 24
while off + 16 <= len(src):
    ts, tu, incl, orig = struct.unpack("<IIII", src[off:off + 16])
    keep = min(incl, 60)
    out += struct.pack("<IIII", ts, tu, keep, orig) + src[off + 16:off + 16 + keep]
    off += 16 + incl
open(sys.argv[2], "wb").write(out)
PY
code 0 "$BIN" summary --json "$TMP/snap.pcap"
check "snaplen-truncated: counted, not malformed, still analysed" \
  test "$(jq -c '[.capture.snap_truncated, .capture.malformed, .conversations[0].channels[0].messages.write]' "$TMP/out")" = '[20,0,5]'

# pcapng reads the same as pcap (editcap comes with tshark).
if command -v editcap >/dev/null; then
  editcap -F pcapng "$DATA/loss_drop_one_nak.pcap" "$TMP/nak.pcapng"
  code 0 "$BIN" summary --json "$DATA/loss_drop_one_nak.pcap"
  mv "$TMP/out" "$TMP/pcap.json"
  code 0 "$BIN" summary --json "$TMP/nak.pcapng"
  check "pcapng: same summary as pcap" cmp -s "$TMP/out" "$TMP/pcap.json"
fi

# Long captures: rdmapcap reads and decodes in batches on a second thread (at
# most 4096 frames each, and about 1 MiB of frames libpcap reads); every frame
# must come out once, in order, and a capture damaged after the first batches
# must still report each frame before the damage, then fail with exit 3.
python3 - "$DATA/send_bw_s64.pcap" "$DATA/write_bw_s4096_m1024.pcap" "$TMP/long.pcap" "$TMP/cut.pcap" <<'PY'
import sys
def records(path):
    b = open(path, "rb").read()
    out, off = [], 24
    while off + 16 <= len(b):
        incl = int.from_bytes(b[off + 8:off + 12], "little")
        out.append(b[off:off + 16 + incl])
        off += 16 + incl
    return b[:24], out
head, small = records(sys.argv[1])
_, large = records(sys.argv[2])
body = b"".join(small) * 1000 + b"".join(large) * 150 + b"".join(small) * 10
open(sys.argv[3], "wb").write(head + body)
open(sys.argv[4], "wb").write(head + body[:len(body) * 3 // 4 + 5])
PY
frames=$(python3 -c "
import sys; b = open(sys.argv[1], 'rb').read(); n, off = 0, 24
while off + 16 <= len(b): off += 16 + int.from_bytes(b[off + 8:off + 12], 'little'); n += 1
print(n)" "$TMP/long.pcap")
code 0 "$BIN" summary --json "$TMP/long.pcap"
check "long capture: every frame counted ($frames)" test "$(jq '.capture.frames' "$TMP/out")" -eq "$frames"
code 0 "$BIN" decode --json "$TMP/long.pcap"
check "long capture: frames 1..N once each, in order" \
  test "$(jq -s '[.[] | select(.frame) | .frame] | . as $f | if $f == [range(1; ($f | length) + 1)] then length else -1 end' "$TMP/out")" = "$frames"
# The same capture as pcapng is read by libpcap, whose frames are copied
# into each batch (a pcap file is read in place from a mapping): the same
# decode, frame for frame.
if command -v editcap >/dev/null; then
  mv "$TMP/out" "$TMP/long.json"
  editcap -F pcapng "$TMP/long.pcap" "$TMP/long.pcapng"
  code 0 "$BIN" decode --json "$TMP/long.pcapng"
  check "long capture as pcapng: the same decode" cmp -s "$TMP/out" "$TMP/long.json"
fi
code 3 "$BIN" decode --json "$TMP/cut.pcap"
last=$(sed -n 's/.*damaged after frame \([0-9]*\).*/\1/p' "$TMP/err")
check "cut capture: damage reported after a later batch" test "${last:-0}" -gt 8192
check "cut capture: the frames before the damage, in order" \
  test "$(jq -s '[.[] | .frame] | . as $f | if $f == [range(1; ($f | length) + 1)] then length else -1 end' "$TMP/out")" = "${last:-x}"
check "cut capture: says the output is partial" grep -q 'before the error' "$TMP/err"

# report: one self-contained page; bad input and an unwritable output say so
# in the user's language, exit non-zero and leave no page behind.
code 0 "$BIN" report "$DATA/congestion_pfc.pcap" -o "$TMP/r.html"
check "report: a whole HTML page" sh -c "head -c 15 '$TMP/r.html' | grep -q '<!DOCTYPE html>' && tail -n 1 '$TMP/r.html' | grep -q '</html>'"
check "report: needs no network (no external URL)" sh -c "! grep -Eq '(src|href)=\"(https?:)?//' '$TMP/r.html'"
check "report: both conversations" test "$(grep -c '<section class="conv"' "$TMP/r.html")" -eq 2
check "report: storm past 0.3 ms, exit 1" code 1 "$BIN" report --pfc-storm-ms 0.3 "$DATA/congestion_pfc.pcap" -o "$TMP/r.html"
check "report: the storm is a finding" grep -q 'data-type="pfc_storm"' "$TMP/r.html"
check "report: missing capture, exit 3" code 3 "$BIN" report "$TMP/missing.pcap" -o "$TMP/m.html"
check "report: no page for a missing capture" test ! -e "$TMP/m.html"
check "report: unwritable output, exit 3" code 3 "$BIN" report "$DATA/rc_pingpong_s64.pcap" -o "$TMP/no/such/dir/r.html"
check "report: says it cannot write" grep -q 'cannot write the report to' "$TMP/err"
check "report: in Chinese too" code 3 "$BIN" --lang zh report "$DATA/rc_pingpong_s64.pcap" -o "$TMP/no/such/dir/r.html"
check "report: the Chinese message" grep -q '无法把报告写入' "$TMP/err"
check "report: -o is required, exit 2" code 2 "$BIN" report "$DATA/rc_pingpong_s64.pcap"

# plot: the report's overview alone, one SVG. Each requester QP's lane shows
# as many CE and CNP ticks as the summary counts for it, the pause intervals
# add up to the summary's paused time per sender and priority, and every
# lane's bars are drawn to one scale: the highest bar of all is the full
# height (26 of a 30-pixel band) and no bar is higher.
plot_agrees() {  # plot_agrees SVG SUMMARY_JSON LANES
  python3 - "$@" <<'PY'
import json, sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
summary = json.load(open(sys.argv[2]))
want_lanes = int(sys.argv[3])
chans = [ch for c in summary["conversations"] for ch in c["channels"]]
lanes = root.findall("s:g[@class='lane']", ns)
ok = len(lanes) == min(want_lanes, len(chans)) and root.get("data-requesters") == str(len(chans))
# Queueing delay: one stem per RTT sample, each the sample's excess over the
# lowest RTT towards the same responder address, so the highest stem of a
# lane is its rtt_max_ns minus that lowest RTT.
base = {}
for ch in chans:
    if ch["rtt_samples"]:
        a = ch["responder"]["addr"]
        base[a] = min(base.get(a, ch["rtt_min_ns"]), ch["rtt_min_ns"])
for g, ch in zip(lanes, chans):
    ok &= len(g.findall("s:line[@class='ce']", ns)) == ch["ecn_ce"]
    ok &= len(g.findall("s:line[@class='cnp']", ns)) == ch["cnps"]
    stems = [int(r.get("data-ns")) for r in g.findall("s:rect[@class='qdelay']", ns)]
    ok &= len(stems) == ch["rtt_samples"] and min(stems, default=0) >= 0
    if stems:
        ok &= max(stems) == ch["rtt_max_ns"] - base[ch["responder"]["addr"]]
for p in summary.get("pfc", []):
    prio = "8" if p["priority"] is None else str(p["priority"])
    drawn = sum(int(r.get("data-ns")) for r in root.findall("s:rect[@class='pfc']", ns)
                if r.get("data-src") == p["src"] and r.get("data-priority") == prio)
    ok &= drawn == p["paused_ns"]
heights = [float(r.get("height")) for g in lanes for r in g.findall("s:rect[@class='rate']", ns)]
ok &= bool(heights) and max(heights) == 26.0
sys.exit(0 if ok else 1)
PY
}
code 0 "$BIN" summary --json "$DATA/congestion_pfc.pcap"
cp "$TMP/out" "$TMP/s.json"
check "plot: writes an SVG" code 0 "$BIN" plot "$DATA/congestion_pfc.pcap" -o "$TMP/p.svg"
check "plot: agrees with the summary (ticks, pauses, one scale)" plot_agrees "$TMP/p.svg" "$TMP/s.json" 16
check "plot: the report holds the same overview" grep -q 'id="overview-plot" data-lanes="2" data-requesters="2" data-ce="400" data-cnp="16"' "$TMP/r.html"
check "plot: --lanes 1 draws one lane" code 0 "$BIN" plot --lanes 1 "$DATA/congestion_pfc.pcap" -o "$TMP/p1.svg"
check "plot: and says one is left out" grep -q '1 more requester QP(s) not drawn; raise --lanes' "$TMP/p1.svg"
check "plot: one lane agrees too" plot_agrees "$TMP/p1.svg" "$TMP/s.json" 1
check "plot: labels in Chinese" code 0 "$BIN" --lang zh plot "$DATA/congestion_pfc.pcap" -o "$TMP/pz.svg"
check "plot: the Chinese title" grep -q '各请求端 QP 的请求速率' "$TMP/pz.svg"
check "plot: missing capture, exit 3" code 3 "$BIN" plot "$TMP/missing.pcap" -o "$TMP/m.svg"
check "plot: no file for a missing capture" test ! -e "$TMP/m.svg"
check "plot: unwritable output, exit 3, in Chinese" code 3 "$BIN" --lang zh plot "$DATA/rc_pingpong_s64.pcap" -o "$TMP/no/such/dir/p.svg"
check "plot: the Chinese message" grep -q '无法把图写入' "$TMP/err"
check "plot: --lanes 0 is refused, exit 2" code 2 "$BIN" plot --lanes 0 "$DATA/rc_pingpong_s64.pcap" -o "$TMP/p.svg"

# No reader thread to be had (one process allowed for an ordinary user): the
# capture is read on the main thread, with the same result, not an abort.
if [[ $(id -u) -eq 0 ]] && command -v runuser >/dev/null && id nobody >/dev/null 2>&1; then
  cp "$DATA/loss_drop_one_nak.pcap" "$TMP/nobody.pcap"
  chmod 755 "$TMP"
  chmod 644 "$TMP/nobody.pcap"
  code 0 "$BIN" summary --json "$TMP/nobody.pcap"
  mv "$TMP/out" "$TMP/threaded.json"
  # LeakSanitizer (in a sanitizer build) needs a thread of its own at exit.
  runuser -u nobody -- bash -c 'ulimit -u 1 && ASAN_OPTIONS=detect_leaks=0 exec "$0" summary --json "$1"' "$BIN" \
    "$TMP/nobody.pcap" >"$TMP/out" 2>"$TMP/err"
  check "no thread for the reader: exit 0, same summary" \
    sh -c "test $? -eq 0 && cmp -s '$TMP/out' '$TMP/threaded.json'"
fi

exit $fail

#!/usr/bin/env bash
# Are the analyser's prefetches in the optimised program?
#
# GCC 12 once deleted most of them: it took the hash tables' and rings'
# prefetch(), whose only effect was __builtin_prefetch, for functions without
# effects and dropped their calls, and nothing failed. dissect/src/prefetch.hpp
# now issues them with a volatile asm statement. This check counts the
# prefetcht0 instructions in the analyser's functions (rdmalab::dissect::)
# of an optimised x86-64 build of rdmapcap, against the call sites in the
# source, each emitted at least once wherever it is inlined:
#   the lookahead (analyzer.cpp, feed_all and the ahead_* stages):
#     a record's first lines (one loop) and its packet line       2
#     the half-channel table's slot (FlatMap::prefetch)            1
#     the channel's first line, then its lines (one loop)          2
#     the conversation (its lines, one loop), the rate series,
#     the RTT samples and the congestion state                     4
#     three rings (Ring::prefetch: the oldest element and the
#     next slot)                                                   6
#   finish(): the unacknowledged requests' ring, ahead             2
#                                                                 ---
#                                                                  17
# (With the deleted prefetches the whole program held 13.)
# It also counts those of the capture reader (rdmalab::capture::), whose
# mapped path asks for the next frame one record ahead (pcap_file.cpp):
#   the frame's end, its lines (one loop), the record header after it   3
# usage: prefetch-check.sh RDMAPCAP [OBJDUMP]
set -euo pipefail
bin=$1
objdump=${2:-objdump}
disassembly=$("$objdump" -d --no-show-raw-insn -C "$bin")
# count NAMESPACE: the prefetcht0 instructions in that namespace's functions.
count() {
  awk -v ns="<$1" '/^[0-9a-f]+ <.*>:$/ { f = index($0, ns) > 0 } f && /\tprefetcht0 / { n++ }
       END { print n + 0 }' <<<"$disassembly"
}
status=0
for check in "rdmalab::dissect:: 17 dissect/src/prefetch.hpp" \
  "rdmalab::capture:: 3 lib/capture/src/pcap_file.cpp"; do
  read -r ns expected where <<<"$check"
  n=$(count "$ns")
  if ((n < expected)); then
    echo "prefetch-check: $n prefetcht0 in ${ns%::}'s functions, expected at least $expected" >&2
    echo "(has the compiler dropped prefetches again? see $where)" >&2
    status=1
  else
    echo "prefetch-check: $n prefetcht0 in ${ns%::}'s functions (at least $expected)"
  fi
done
exit $status

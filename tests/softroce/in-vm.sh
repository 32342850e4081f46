#!/bin/bash
# The softroce test job, run inside the Soft-RoCE VM by run-vm.sh (through
# tools/softroce-vm/softroce-vm): rxe0 on vethA 10.99.0.1, rxe1 on vethB
# 10.99.0.2, both in the initial network namespace.
#
#   in-vm.sh NAME=PATH...    the binaries to use: lab01-send-recv ...
#                            lab17-perf, verbs_device_test,
#                            softroce_dead_peer, rdmalab
#
# Every step leaves its result in $RDMALAB_VM_OUT (the host's results
# directory): STEP.out (stdout; the JSON result for the labs), STEP.err,
# STEP.status (the exit status) and STEP.pcap where the step captures the
# wire. This script only runs the steps and records what happened; the
# checks are separate ctest tests on the host (check.cmake), one per step,
# so ctest shows exactly which one failed.
set -u
out=${RDMALAB_VM_OUT:?run me inside tools/softroce-vm/softroce-vm}
declare -A bin
for a in "$@"; do bin[${a%%=*}]=${a#*=}; done

step_limit=180 # seconds per step: one hung step must not eat the whole budget

# run STEP [ENV=VALUE...] -- COMMAND...: one step, its output and status.
run() {
  local step=$1
  shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  echo "== $step: $*"
  local t0=$SECONDS
  env "${envs[@]}" timeout -k 5 "$step_limit" "$@" >"$out/$step.out" 2>"$out/$step.err"
  local rc=$?
  echo "$rc" >"$out/$step.status"
  echo "   exit status $rc after $((SECONDS - t0)) s"
  return 0
}

# Capture of vethA, the responder's (rxe0's) end of the wire: whole frames
# and a large buffer, as the capture chapter recommends.
tcpdump_pid=""
capture_start() {
  tcpdump -i vethA -s 0 -B 32768 -U -w "$out/$1.pcap" udp port 4791 2>"$out/$1.tcpdump.log" &
  tcpdump_pid=$!
  # Wait until tcpdump listens, or the first packets are missed.
  for _ in $(seq 100); do
    grep -q 'listening on' "$out/$1.tcpdump.log" 2>/dev/null && return 0
    sleep 0.1
  done
}
capture_stop() {
  sleep 2 # tcpdump loses the last packets when stopped right after them
  kill -INT "$tcpdump_pid" 2>/dev/null
  wait "$tcpdump_pid" 2>/dev/null
  tcpdump_pid=""
}

# ib_write_bw from rxe1 (client, requester) to rxe0 (server, responder):
# five 4096-byte WRITEs at path MTU 1024, so 20 request packets and 5 ACKs.
write_bw() {
  local step=$1
  local args=(-F -x 1 -n 5 -s 4096 -m 1024)
  timeout 60 ib_write_bw -d rxe0 "${args[@]}" >"$out/$step.server.out" 2>&1 &
  local server=$!
  # The client connects over TCP; wait for the server's listening socket.
  for _ in $(seq 100); do
    ss -ltn 2>/dev/null | grep -q ':18515 ' && break
    sleep 0.1
  done
  run "$step" -- ib_write_bw -d rxe1 "${args[@]}" 10.99.0.1
  wait "$server"
  echo $? >"$out/$step.server.status"
}

# The Soft-RoCE commands the set-up chapter (docs/*/02-setup.md) shows, as a
# reader types them once rxe0 exists.
run docs-setup -- bash -c '
  rdma link
  ibv_devices
  ibv_devinfo -d rxe0
  cat /sys/class/infiniband/rxe0/ports/1/gids/1
  cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/1
  ulimit -l'

# The doctor on the two rxe devices: their limits (inline data found by
# creating QPs, CQs, SRQs, CQ moderation) among its checks.
run doctor-limits -- "${bin[rdmalab]}" --lang en doctor --backend verbs

# Labs 01-13 with real verbs, one process, both QPs on rxe0 (the packets stay
# inside rxe0 and never reach the wire).
for lab in lab01-send-recv lab02-write lab03-read lab04-atomics lab05-write-imm lab06-mtu \
           lab07-retry lab08-adaptive-routing lab09-nccl-net lab10-tf-rendezvous lab11-gdr-read \
           lab12-one-sided lab13-mr-scope lab15-ud; do
  run "$lab" -- "${bin[$lab]}" --backend verbs -d rxe0 --json --capture "$out/$lab.pcap"
done
# Lab 07 breaks the simulated wire; on verbs only two of its scenarios need
# no broken wire: none (everything succeeds) and rnr (no receive posted: RNR
# NAKs, and with rnr_retry 0 IBV_WC_RNR_RETRY_EXC_ERR at once).
lab07=${bin[lab07-retry]}
run lab07-retry-none -- "$lab07" --backend verbs -d rxe0 --json --scenario none
run lab07-retry-rnr -- "$lab07" --backend verbs -d rxe0 --json --scenario rnr --rnr-retry 0
# The same labs in one process across the wire: the requester's QPs on rxe1,
# the responder's on rxe0 (-d rxe1 --peer-dev rxe0), so every packet crosses
# the veth pair and is captured there. Lab 09 follows NCCL with path MTU 4096
# by default; rxe accepts that on a 1500-byte veth (it checks the port's
# maximum MTU, not the active one) and the IP layer then drops its frames
# (RoCEv2 sets DF), so across this wire it runs at 1024. Lab 07's default
# scenario is "none" on verbs; its RNR scenario needs no broken wire either.
# That one sends a single-packet SEND (-s 1024): how many packets of a longer
# SEND leave before the RNR NAK is back depends on the sender's packet rate
# (rxe under TCG: one; the simulator at line rate: all), not on the protocol.
declare -A wire_args=([lab09-nccl-net]="-m 1024")
for lab in lab01-send-recv lab02-write lab03-read lab04-atomics lab05-write-imm lab06-mtu \
           lab07-retry lab08-adaptive-routing lab09-nccl-net lab10-tf-rendezvous lab11-gdr-read \
           lab12-one-sided lab13-mr-scope lab15-ud; do
  capture_start "$lab-wire"
  # shellcheck disable=SC2086 # wire_args holds separate words
  run "$lab-wire" -- "${bin[$lab]}" --backend verbs -d rxe1 --peer-dev rxe0 --json \
    ${wire_args[$lab]:-}
  capture_stop
done
capture_start lab07-retry-rnr-wire
run lab07-retry-rnr-wire -- "$lab07" --backend verbs -d rxe1 --peer-dev rxe0 --json \
  --scenario rnr --rnr-retry 0 -s 1024
capture_stop
# Lab 01 connected in band with rdma_cm (loopback on rxe0: the CM binds both
# ends to 10.99.0.1).
run lab01-send-recv-cm -- "${bin[lab01-send-recv]}" --backend verbs -d rxe0 --json --cm
# Labs 02, 03, 05 and 06 the same way: the passive side then tells its
# buffer's VA, rkey and length in a SEND.
for lab in lab02-write lab03-read lab05-write-imm lab06-mtu; do
  run "$lab-cm" -- "${bin[$lab]}" --backend verbs -d rxe0 --json --cm
done

# Labs as two processes across the wire: the passive side on rxe0 listens
# (lab 01's receiver; the target of WRITE and WRITE with immediate in labs 02,
# 05 and 06; the source of READ in lab 03), the active side on rxe1 connects —
# out of band over TCP, then in band with rdma_cm. Each process leaves its
# own JSON result; the wire is captured.
#   two_process STEP LAB [ARGS...]
two_process() {
  local step=$1 lab=$2
  shift 2
  timeout -k 5 60 "${bin[$lab]}" --backend verbs -d rxe0 --json "$@" --listen 7471 \
    >"$out/$step-passive.out" 2>"$out/$step-passive.err" &
  local passive=$!
  # The passive side must be listening before the active side connects: an
  # rdma_cm REQ to a port nobody listens on is rejected at once (the TCP side
  # channel retries; the CM does not). Wait for its TCP socket or its
  # listening CM ID, at most 10 s (then the step fails on its own).
  local _
  for _ in $(seq 100); do
    ss -ltn 2>/dev/null | grep -q ':7471 ' && break
    rdma resource show cm_id 2>/dev/null | grep -qE 'state LISTEN.*7471' && break
    sleep 0.1
  done
  run "$step" -- "${bin[$lab]}" --backend verbs -d rxe1 --json "$@" --connect 10.99.0.1:7471
  wait "$passive"
  echo $? >"$out/$step-passive.status"
}
for lab in lab01-send-recv lab02-write lab03-read lab05-write-imm lab06-mtu; do
  capture_start "${lab%%-*}-two-process"
  two_process "${lab%%-*}-two-process" "$lab"
  capture_stop
  capture_start "${lab%%-*}-two-process-cm"
  two_process "${lab%%-*}-two-process-cm" "$lab" --cm
  capture_stop
done
# Lab 04: the counter's owner on rxe0, the two racing clients on rxe1, two QP
# pairs across the wire (out of band only: the lab has no --cm).
capture_start lab04-two-process
two_process lab04-two-process lab04-atomics
capture_stop

# A passive side whose peer misbehaves ends with a clear error, not a hang:
# garbage instead of the connection message, and a peer that connects and
# vanishes without a word.
bad_peer() {
  local step=$1 lab=$2 say=$3
  timeout -k 5 60 "${bin[$lab]}" --backend verbs -d rxe0 --json --listen 7472 \
    >"$out/$step.out" 2>"$out/$step.err" &
  local passive=$!
  # Connect once it listens (a fixed sleep loses the race on a loaded host,
  # and then the passive side waits for a peer that never came).
  local _
  for _ in $(seq 100); do
    ss -ltn 2>/dev/null | grep -q ':7472 ' && break
    sleep 0.1
  done
  (
    exec 3<>/dev/tcp/10.99.0.1/7472
    [[ -n $say ]] && printf '%s\n' "$say" >&3
    sleep 2
  )
  wait "$passive"
  echo $? >"$out/$step.status"
}
bad_peer lab02-garbage-peer lab02-write "hello, I am not a connection message"
bad_peer lab05-vanished-peer lab05-write-imm ""

# The wrapper conformance suite on one device, then across the wire from
# rxe1 to rxe0 with the wire captured.
run conformance-rxe0 RDMALAB_DEVICES=rxe0 -- "${bin[verbs_device_test]}"
capture_start conformance-rxe1-rxe0
run conformance-rxe1-rxe0 RDMALAB_DEVICES=rxe1,rxe0 -- "${bin[verbs_device_test]}"
capture_stop

# perftest across the wire, clean.
capture_start write-bw
write_bw write-bw
capture_stop

# The same with one request dropped: an nftables rule in the input hook (after
# the capture tap, so the dropped packet is in the capture once) drops the
# 10th RoCE packet that arrives on vethA. The responder sees a PSN gap, NAKs
# the missing PSN once (PSN sequence error), and the requester goes back to
# it (go-back-N).
nft -f - <<'EOF'
table inet rdmalab_loss {
  chain input {
    type filter hook input priority 0;
    iifname "vethA" udp dport 4791 numgen inc mod 100000 == 9 counter drop
  }
}
EOF
capture_start loss-nak
write_bw loss-nak
capture_stop
nft list table inet rdmalab_loss >"$out/loss-nak.nft" 2>&1
nft delete table inet rdmalab_loss

# A dead peer: every RoCE packet arriving on vethA is dropped, so the WRITE of
# softroce_dead_peer (rxe1 -> rxe0, timeout 12, retry_cnt 3) is sent 1 + 3
# times and completes with IBV_WC_RETRY_EXC_ERR.
nft -f - <<'EOF'
table inet rdmalab_dead {
  chain input {
    type filter hook input priority 0;
    iifname "vethA" udp dport 4791 counter drop
  }
}
EOF
capture_start dead-peer
run dead-peer -- "${bin[softroce_dead_peer]}"
capture_stop
nft delete table inet rdmalab_dead

# Lab 14 (shared receive queue): on rxe0 alone; across the wire (three sender
# QPs on rxe1, three receiver QPs on one SRQ on rxe0), captured; and across the
# wire with the SRQ left empty: RNR NAKs to every sender QP.
lab14=${bin[lab14-srq]}
run lab14-srq -- "$lab14" --backend verbs -d rxe0 --json
capture_start lab14-srq-wire
run lab14-srq-wire -- "$lab14" --backend verbs -d rxe1 --peer-dev rxe0 --json
capture_stop
capture_start lab14-srq-empty-wire
run lab14-srq-empty-wire -- "$lab14" --backend verbs -d rxe1 --peer-dev rxe0 --json --empty-srq
capture_stop

# Lab 16 (completions): on rxe0 alone, and across the wire, captured. Its
# events come from rxe's own completion handler through uverbs' channel fd,
# its ENOMEM from rxe's send queue, its EOPNOTSUPP from ibv_modify_cq on rxe.
lab16=${bin[lab16-completions]}
run lab16-completions -- "$lab16" --backend verbs -d rxe0 --json
capture_start lab16-completions-wire
run lab16-completions-wire -- "$lab16" --backend verbs -d rxe1 --peer-dev rxe0 --json
capture_stop

# Lab 17 (performance) next to Debian's perftest on the same rxe link
# (requester rxe1, responder rxe0), the same sizes and iterations, path MTU
# 1024: ib_write_bw and ib_send_bw (-n 2000), ib_write_lat (-n 1000, 64
# bytes). Each lab run sits between two runs of the perftest tool it is
# compared with, so that a change of the VM's speed shows as a spread
# between those two (which the check prints) instead of as a difference
# between lab and perftest.
#   perf_pair STEP TOOL ARGS...: the tool's server on rxe0, its client on rxe1
perf_pair() {
  local step=$1 tool=$2
  shift 2
  timeout -k 5 120 "$tool" -d rxe0 "$@" >"$out/$step.server.out" 2>&1 &
  local server=$!
  local _
  for _ in $(seq 100); do
    ss -ltn 2>/dev/null | grep -q ':18515 ' && break
    sleep 0.1
  done
  run "$step" -- "$tool" -d rxe1 "$@" 10.99.0.1
  wait "$server"
  echo $? >"$out/$step.server.status"
}
lab17=${bin[lab17-perf]}
lab17_wire=(--backend verbs -d rxe1 --peer-dev rxe0 --json)
# At 64 KiB rxe in the VM ends WRITEs and SENDs with IBV_WC_REM_INV_REQ_ERR
# or IBV_WC_REM_OP_ERR in some runs, perftest's and the lab's alike:
# bandwidth is measured at 64 and 4096 bytes.
for size in 64 4096; do
  for op in write send; do
    perf_pair "perftest-$op-bw-$size-1" "ib_${op}_bw" -F -x 1 -m 1024 -n 2000 -s "$size"
    run "lab17-perf-$op-bw-$size" -- "$lab17" "${lab17_wire[@]}" --test bw --op "$op" \
      -s "$size" -n 2000
    perf_pair "perftest-$op-bw-$size-2" "ib_${op}_bw" -F -x 1 -m 1024 -n 2000 -s "$size"
  done
done
# perftest uses no inline data on rxe ("Max inline data : 0[B]" in its
# header): neither does the run compared with it; a second one with -I.
perf_pair perftest-write-lat-64-1 ib_write_lat -F -x 1 -m 1024 -n 1000 -s 64
run lab17-perf-write-lat-64 -- "$lab17" "${lab17_wire[@]}" --test lat -s 64 -n 1000
perf_pair perftest-write-lat-64-2 ib_write_lat -F -x 1 -m 1024 -n 1000 -s 64
run lab17-perf-write-lat-64-inline -- "$lab17" "${lab17_wire[@]}" --test lat -s 64 -n 1000 -I
# The knob table on rxe.
run lab17-perf-knobs -- "$lab17" "${lab17_wire[@]}" -s 64 -n 2000

# Last, chapter 2's "Two rxe devices on your own machine" exactly as the
# chapter shows it: the harness's own set-up is taken down first (deleting the
# veth removes both rxe devices; the policy rules are undone by hand), then
# the chapter's block runs line by line, stopping at the first failure, and
# the devices it made are shown and carry lab 01 across the pair.
ip link delete vethA
for pref in 100 101 110 111 200; do ip rule del pref "$pref"; done
ip rule add pref 0 lookup local
chapter=$(dirname "${BASH_SOURCE[0]}")/../../docs/en/02-setup.md
awk '/^### Two rxe devices on your own machine/ { inside = 1 }
     inside && /^```sh$/ { block = 1; next }
     block && /^```$/ { exit }
     block { print }' "$chapter" >/tmp/own-machine.sh
run docs-own-machine -- bash -c 'bash -e -x /tmp/own-machine.sh && rdma link && ip rule'
capture_start docs-own-machine-lab01
run docs-own-machine-lab01 -- "${bin[lab01-send-recv]}" --backend verbs -d rxe1 --peer-dev rxe0 \
  --json
capture_stop
exit 0

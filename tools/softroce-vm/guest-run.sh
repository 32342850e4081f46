#!/bin/bash
# Second stage of the softroce-vm guest, run as PID 1 on the host's root file
# system (read-only over 9p): builds the Soft-RoCE test bed, tells the host it
# is ready, runs the job with a time limit, reports its exit status and
# powers the VM off.
#
#   rxe0 on vethA 10.99.0.1  <== veth pair ==>  rxe1 on vethB 10.99.0.2
#
# Both ends stay in the initial network namespace: the 6.1 rxe driver only
# receives RoCE there (in a second namespace `rdma link add` succeeds and the
# GIDs appear, but no RoCE packet reaches the wire and QPs fail). With two
# local addresses the kernel would deliver 10.99.0.1 -> 10.99.0.2 through
# loopback, so policy routing sends each peer address out of the *other*
# veth, and packets arriving on a veth are looked up in the local table first.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ctl=/run/rdmalab/ctl
out=/run/rdmalab/out

halt() {
  sync
  busybox poweroff -f
}
fail() {
  echo "softroce-vm guest: $*"
  echo "softroce-vm guest: $*" >>"$ctl/stderr"
  halt
}

# shellcheck source=/dev/null  # written by the host: job_cwd, job_argv ...
source "$ctl/job" || fail "no job description"

hostname softroce-vm
ip link set lo up

modprobe veth || fail "modprobe veth"
modprobe rdma_rxe || fail "modprobe rdma_rxe"
ip link add vethA type veth peer name vethB || fail "ip link add veth"
ip link set vethA mtu "$job_mtu"
ip link set vethB mtu "$job_mtu"
ip addr add 10.99.0.1/24 dev vethA
ip addr add 10.99.0.2/24 dev vethB
ip link set vethA up
ip link set vethB up

for k in all default vethA vethB; do
  sysctl -qw "net.ipv4.conf.$k.rp_filter=0" "net.ipv4.conf.$k.accept_local=1"
done
ip route add 10.99.0.2/32 dev vethA src 10.99.0.1 table 101
ip route add 10.99.0.1/32 dev vethB src 10.99.0.2 table 102
ip rule add pref 100 iif vethA lookup local
ip rule add pref 101 iif vethB lookup local
ip rule add pref 110 to 10.99.0.2 lookup 101
ip rule add pref 111 to 10.99.0.1 lookup 102
ip rule add pref 200 lookup local
ip rule del pref 0 lookup local
# Static neighbours: no ARP, whose replies the policy above would confuse.
mac_a=$(</sys/class/net/vethA/address)
mac_b=$(</sys/class/net/vethB/address)
ip neigh replace 10.99.0.2 lladdr "$mac_b" dev vethA nud permanent
ip neigh replace 10.99.0.1 lladdr "$mac_a" dev vethB nud permanent

rdma link add rxe0 type rxe netdev vethA || fail "rdma link add rxe0"
rdma link add rxe1 type rxe netdev vethB || fail "rdma link add rxe1"

# The port turns ACTIVE and the GID table fills asynchronously. Index 1 is
# the RoCE v2 GID of the IPv4 address (::ffff:10.99.0.x); wait for it.
for i in $(seq 200); do
  okay=1
  for dev in rxe0 rxe1; do
    p=/sys/class/infiniband/$dev/ports/1
    grep -q ACTIVE "$p/state" 2>/dev/null || okay=0
    grep -q '0000:0000:0000:0000:0000:ffff:0a63' "$p/gids/1" 2>/dev/null || okay=0
  done
  [[ $okay -eq 1 ]] && break
  sleep 0.1
done
[[ $okay -eq 1 ]] || fail "rxe0/rxe1 did not become ACTIVE with their IPv4 GIDs"

# Memory registration pins pages; the default memlock limit is the classic
# first failure on real machines.
ulimit -l unlimited

uptime=unknown
read -r uptime _ </proc/uptime
echo "$uptime" >"$ctl/ready"

cd "$job_cwd" 2>/dev/null || cd /
env -i "${job_env[@]}" HOME=/tmp RDMALAB_VM_OUT="$out" \
  timeout -k 5 "$job_timeout" "${job_argv[@]}" >"$ctl/stdout" 2>"$ctl/stderr" </dev/null
echo $? >"$ctl/exit-status"
halt

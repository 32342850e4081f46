#!/bin/bash
# ctest fixture of the softroce label: boots the Soft-RoCE VM once and runs
# in-vm.sh inside it; the other softroce tests check what it left in
# RESULTS. Without the VM's packages (qemu, Debian's kernel ...) it writes
# RESULTS/skipped and exits 77, which ctest reports as skipped, and the
# checks skip as well.
#
#   run-vm.sh RESULTS NAME=PATH...
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
vm=$here/../../tools/softroce-vm/softroce-vm
results=$1
shift

rm -rf "$results"
mkdir -p "$results"
# The whole job takes 1-3 minutes under TCG on two cores; the limits only
# bound a hang.
"$vm" --out "$results" --boot-timeout 240 --timeout 1200 -- "$here/in-vm.sh" "$@"
rc=$?
case $rc in
  0) ;;
  125)
    echo "softroce-vm: skipped: the VM cannot run on this machine (see above)" |
      tee "$results/skipped"
    exit 77
    ;;
  *) echo "softroce-vm: the VM job failed with status $rc" ;;
esac
exit $rc

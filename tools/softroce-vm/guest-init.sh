#!/bin/busybox sh
# First stage of the softroce-vm guest: the /init of its initramfs, run by
# busybox. It loads the virtio and 9p modules, mounts the host's root
# (read-only) and the two writable shares, gives the new root its own /proc,
# /sys, /dev, /run and a writable /tmp, and hands over to guest-run.sh, which
# runs from the host tree on the host's own bash.
/bin/busybox --install -s /bin
export PATH=/bin

fail() {
  echo "softroce-vm guest: $*"
  poweroff -f
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

# KVM probe: the kernel booted and ran us; that is all the host wants to know.
if grep -q 'rdmalab.probe=1' /proc/cmdline; then
  echo rdmalab-probe-ok
  poweroff -f
fi

while read -r ko; do
  insmod "/modules/$ko" || fail "insmod $ko"
done </modules/order

# msize: 9p's default of 8 KiB per message makes every file read slow.
# The host shares / with multidevs=remap, so that files of different host file
# systems (the roots of /proc, /sys, /tmp ...) never share an inode number.
opts=trans=virtio,version=9p2000.L,msize=262144,cache=loose
mount -t 9p -o "$opts,ro" hostroot /newroot || fail "mount of the host root over 9p"
for d in proc sys dev tmp run; do
  [ -d "/newroot/$d" ] || fail "/$d is missing on the host root"
done
mount -t proc proc /newroot/proc || fail "mount /proc"
mount -t sysfs sysfs /newroot/sys || fail "mount /sys"
mount -t devtmpfs devtmpfs /newroot/dev || fail "mount /dev"
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs tmpfs /newroot/dev/shm
# /run gets an empty tmpfs (the host's sockets and PID files mean nothing
# here). /tmp keeps the host's files, since a build tree may live there, but
# becomes writable: an overlay whose upper layer is a tmpfs, so what the
# guest writes is discarded with the VM. Without overlay support, an empty
# tmpfs.
mount -t tmpfs -o mode=755 tmpfs /newroot/run || fail "mount /run"
ovl=/newroot/run/softroce-vm/tmp
mkdir -p "$ovl/upper" "$ovl/work"
chmod 1777 "$ovl/upper"
mount -t overlay overlay -o "lowerdir=/newroot/tmp,upperdir=$ovl/upper,workdir=$ovl/work" \
  /newroot/tmp || mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp || fail "mount /tmp"

mkdir -p /newroot/run/rdmalab/ctl /newroot/run/rdmalab/out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 rdmalab_ctl /newroot/run/rdmalab/ctl ||
  fail "mount of the control share"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 rdmalab_out /newroot/run/rdmalab/out ||
  fail "mount of the results share"

stage2=$(cat /proc/cmdline | tr ' ' '\n' | grep '^rdmalab.stage2=' | cut -d= -f2-)
[ -n "$stage2" ] || fail "no rdmalab.stage2= on the kernel command line"
exec switch_root /newroot /bin/bash "$stage2"

#!/usr/bin/env bash
# The first command of the README: install dependencies, build, and run the
# project's main job on the simulator-free demo capture shipped in the repo:
# decode a real Soft-RoCE capture of two 3072-byte RDMA WRITEs at path MTU
# 1024 and print each packet's headers.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
exec build/release/tools/rdmapcap/rdmapcap decode "$@" tests/data/mtu_write_s3072_m1024.pcap

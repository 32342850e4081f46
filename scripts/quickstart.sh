#!/usr/bin/env bash
# The first command of the README: install dependencies, build, and run the
# project's main job: lab 01 (SEND/RECV) end to end — on a real RDMA device
# if there is one, else on the simulated RoCEv2 fabric — ending with what
# went on the wire. Arguments are passed to the lab (e.g. --lang zh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
# The Wireshark plugin goes into your personal plugin folder (quietly when
# nothing changed); Wireshark and tshark then show rdmalab's analysis.
scripts/install-wireshark-plugin.sh --no-build > /dev/null 2>&1 ||
  echo "rdmalab: the Wireshark plugin was not installed (scripts/install-wireshark-plugin.sh says why)" >&2
exec build/release/labs/01-send-recv/lab01-send-recv "$@"

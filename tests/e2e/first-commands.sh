#!/usr/bin/env bash
# The first commands a reader types, run literally as the README and the
# course show them (chapter 2, "Build and test: two commands"; chapter 15,
# installing the Wireshark plugin), after `scripts/build.sh release`:
#
#   scripts/quickstart.sh                 lab 01 end to end, and the wire
#   scripts/quickstart.sh --lang zh       the same in Chinese
#   scripts/quickstart.sh --no-recv       the RNR NAK variant
#   scripts/install-wireshark-plugin.sh   the plugin in the personal folder
#   scripts/install-wireshark-plugin.sh --uninstall
#   cmake --build build/release --target install_wireshark_plugin
#   tools/softroce-vm/softroce-vm -- ibv_devices        (where the VM runs)
#   tools/softroce-vm/softroce-vm --out /tmp/vm -- sh -c '... lab01 ... --json > ...'
#
# Each runs with a fresh HOME, so the plugin lands in a throw-away personal
# plugin folder and nothing of the machine's own set-up is touched. The
# docs test (tests/docs) runs every other command the chapters show; this
# script covers the ones that install or build, which do not belong inside
# ctest (they rebuild the tree the tests run from).
#
# Prints one line per check and a closing "N passed, M failed"; exits 1 when
# a check failed.
set -uo pipefail
cd "$(dirname "$0")/../.."

home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
mkdir -p "$home/extcap"
# No extcap helpers: tshark would start each one it finds to list interfaces.
export HOME=$home XDG_CONFIG_HOME=$home/.config WIRESHARK_EXTCAP_DIR=$home/extcap

passed=0
failed=0
# check DESCRIPTION CONDITION...: one result line.
check() {
  local what=$1
  shift
  if "$@"; then
    echo "  ok    $what"
    passed=$((passed + 1))
  else
    echo "  FAIL  $what"
    failed=$((failed + 1))
  fi
}
# shows FILE REGEX: FILE has a line matching REGEX.
shows() { grep -Eq -- "$2" "$1"; }

out=$home/out
# run NAME COMMAND...: runs it bounded in time, output in $out.NAME, status
# in $status.
run() {
  local name=$1
  shift
  timeout 600 "$@" >"$out.$name" 2>&1
  status=$?
  if ((status != 0)); then
    echo "  -- $* exited with status $status; its output:"
    sed 's/^/     /' "$out.$name"
  fi
}

echo "== rdmalab: the reader's first commands, as the README and chapters 2 and 15 show them"

run en scripts/quickstart.sh
check "scripts/quickstart.sh exits 0" test "$status" -eq 0
check "... narrates lab 01 and shows the wire" \
  shows "$out.en" '^what happened on the wire \(captures/lab01\.pcap, [0-9]+ packets\)'
check "... ends with lab 01's verdict" shows "$out.en" '^lab01: all checks passed$'

run zh scripts/quickstart.sh --lang zh
check "scripts/quickstart.sh --lang zh exits 0" test "$status" -eq 0
check "... speaks Chinese" shows "$out.zh" '^lab01：全部检查通过$'

run norecv scripts/quickstart.sh --no-recv
check "scripts/quickstart.sh --no-recv exits 0" test "$status" -eq 0
check "... the SEND fails with IBV_WC_RNR_RETRY_EXC_ERR" \
  shows "$out.norecv" '^  sender completion: status IBV_WC_RNR_RETRY_EXC_ERR'
check "... and the ladder shows the RNR NAK" shows "$out.norecv" '✗ RNR NAK PSN'

# quickstart.sh installs the plugin quietly; tshark lists it. Personal
# plugins do not load for root, so as root tshark runs in a user namespace.
personal=$(tshark -G folders 2>/dev/null | sed -n 's/^Personal Plugins:[[:space:]]*//p')
check "quickstart.sh put the plugin into the personal plugin folder" \
  test -f "$personal/epan/rdmalab.so"
as_user=()
[[ $(id -u) -eq 0 ]] && unshare --user true 2>/dev/null && as_user=(unshare --user)
if [[ $(id -u) -ne 0 || ${#as_user[@]} -gt 0 ]]; then
  check "tshark loads it" sh -c "${as_user[*]} tshark -G plugins 2>/dev/null | grep -q '^rdmalab\.so'"
else
  echo "  --    tshark runs as root and no user namespace is allowed here: plugin loading not checked"
fi

rm -f "$personal/epan/rdmalab.so"
run plugin scripts/install-wireshark-plugin.sh
check "scripts/install-wireshark-plugin.sh exits 0" test "$status" -eq 0
check "... installs the plugin and says where" shows "$out.plugin" "installed $personal/epan/rdmalab.so"
check "... the plugin is there" test -f "$personal/epan/rdmalab.so"
run uninstall scripts/install-wireshark-plugin.sh --uninstall
check "scripts/install-wireshark-plugin.sh --uninstall exits 0" test "$status" -eq 0
check "... the plugin is gone" test ! -e "$personal/epan/rdmalab.so"
run target cmake --build build/release --target install_wireshark_plugin
check "cmake --build build/release --target install_wireshark_plugin exits 0" test "$status" -eq 0
check "... the plugin is back" test -f "$personal/epan/rdmalab.so"

# Chapter 2's two examples of the Soft-RoCE VM, where it can run (the
# softroce label says why when it cannot).
if tools/softroce-vm/softroce-vm --check >/dev/null 2>&1; then
  run vm_devices tools/softroce-vm/softroce-vm -- ibv_devices
  check "tools/softroce-vm/softroce-vm -- ibv_devices exits 0" test "$status" -eq 0
  check "... lists rxe0 and rxe1" sh -c "grep -Eq '^ +rxe0 ' '$out.vm_devices' && grep -Eq '^ +rxe1 ' '$out.vm_devices'"
  rm -rf /tmp/vm
  run vm_lab01 tools/softroce-vm/softroce-vm --out /tmp/vm -- sh -c \
    'build/release/labs/01-send-recv/lab01-send-recv --backend verbs -d rxe0 --json > $RDMALAB_VM_OUT/lab01.json'
  check "tools/softroce-vm/softroce-vm --out /tmp/vm -- sh -c '... lab01 ...' exits 0" \
    test "$status" -eq 0
  check "... /tmp/vm/lab01.json says ok on real verbs" \
    sh -c "grep -q '\"ok\": true' /tmp/vm/lab01.json && grep -q '\"backend\": \"verbs\"' /tmp/vm/lab01.json"
  rm -rf /tmp/vm
else
  echo "  --    the Soft-RoCE VM cannot run here: its two examples not run"
fi

echo "first commands: $passed passed, $failed failed"
((failed == 0))

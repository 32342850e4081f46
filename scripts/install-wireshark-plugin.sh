#!/usr/bin/env bash
# Builds the rdmalab Wireshark plugin and copies it into your personal plugin
# folder, the one Wireshark and tshark report as "Personal Plugins" (for
# Wireshark 4.0: ~/.local/lib/wireshark/plugins/4.0/epan/rdmalab.so).
#
#   scripts/install-wireshark-plugin.sh [--build-dir DIR] [--no-build] [--uninstall]
#
# --build-dir DIR  use (and build in) this CMake build tree (default:
#                  build/release, the "release" preset)
# --no-build       copy what DIR holds, do not run CMake (the build's own
#                  install_wireshark_plugin target uses this)
# --uninstall      remove the plugin from the personal plugin folder
#
# Messages follow LANGUAGE / LC_ALL / LC_MESSAGES / LANG (zh... = Chinese).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/release"
uninstall=0
build_it=1

lang=en
for v in "${LANGUAGE:-}" "${LC_ALL:-}" "${LC_MESSAGES:-}" "${LANG:-}"; do
  [[ -z $v ]] && continue
  case $v in zh*) lang=zh ;; esac
  break
done
# say "English text" "中文文本": one line on stderr in the chosen language.
say() { if [[ $lang == zh ]]; then echo "rdmalab: $2" >&2; else echo "rdmalab: $1" >&2; fi; }
die() { say "$1" "$2"; exit 1; }

while [[ $# -gt 0 ]]; do
  case $1 in
    --build-dir) build=$(realpath -m "$2"); shift 2 ;;
    --uninstall) uninstall=1; shift ;;
    --no-build) build_it=0; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1" "未知选项：$1" ;;
  esac
done

command -v tshark >/dev/null ||
  die "tshark not found: install it first (sudo apt-get install tshark libwireshark-dev)" \
      "找不到 tshark：请先安装（sudo apt-get install tshark libwireshark-dev）"

# Where this Wireshark looks for personal plugins, version folder included
# ("Personal Plugins: /home/me/.local/lib/wireshark/plugins/4.0").
personal=$(tshark -G folders 2>/dev/null | sed -n 's/^Personal Plugins:[[:space:]]*//p')
[[ -n $personal ]] ||
  die "tshark -G folders does not name a personal plugin folder" \
      "tshark -G folders 没有给出个人插件目录"
ws_abi=$(basename "$personal")
dest="$personal/epan"

if [[ $uninstall == 1 ]]; then
  rm -f "$dest/rdmalab.so"
  say "removed $dest/rdmalab.so" "已删除 $dest/rdmalab.so"
  exit 0
fi

if [[ $build_it == 1 ]]; then
  if [[ $build == "$root/build/release" ]]; then
    cmake --preset release -S "$root" >/dev/null
  else
    cmake -S "$root" -B "$build" >/dev/null
  fi
  cmake --build "$build" --target rdmalab_wireshark_plugin -j2
fi

plugin="$build/wireshark-plugins/$ws_abi/epan/rdmalab.so"
if [[ ! -f $plugin ]]; then
  built=$(cd "$build/wireshark-plugins" 2>/dev/null && ls -d */ 2>/dev/null | tr -d / | tr '\n' ' ')
  die "no plugin for Wireshark $ws_abi in $build (built for: ${built:-none}); a plugin only loads into the major.minor version it was built for" \
      "$build 中没有适用于 Wireshark $ws_abi 的插件（已构建的版本：${built:-无}）；插件只能被构建时所用的主次版本加载"
fi

install -D -m 0644 "$plugin" "$dest/rdmalab.so"
say "installed $dest/rdmalab.so" "已安装到 $dest/rdmalab.so"

if [[ $(id -u) == 0 ]]; then
  say "note: Wireshark does not load personal plugins when run as root; run it as an ordinary user" \
      "注意：以 root 身份运行时 Wireshark 不加载个人插件，请以普通用户身份运行"
elif tshark -G plugins 2>/dev/null | grep -q '^rdmalab\.so'; then
  say "tshark loads it: try  tshark -r FILE -2 -Y rdmalab.retransmission" \
      "tshark 已能加载该插件，可试用：tshark -r 文件 -2 -Y rdmalab.retransmission"
else
  die "tshark does not list the plugin (tshark -G plugins): check the folder above" \
      "tshark 的插件列表（tshark -G plugins）中没有它：请检查上面的目录"
fi

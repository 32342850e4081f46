#!/usr/bin/env bash
# Installs everything rdmalab needs from Debian's packages (Debian 12 or
# newer). Idempotent: prints nothing and changes nothing when all packages are
# already installed. Needs root or sudo for the install itself.
#
#   scripts/install-deps.sh            build, test and capture dependencies
#   scripts/install-deps.sh --vm       also what the Soft-RoCE VM harness needs
set -euo pipefail

packages=(
  # toolchain
  g++ cmake ninja-build pkg-config clang libclang-rt-14-dev clang-format clang-tidy
  # LLVM's linker: links the tests and labs in a third of the time GNU ld takes
  lld
  # rdma-core: verbs, rdma_cm, the providers (rxe among them) and the tools
  libibverbs-dev librdmacm-dev ibverbs-providers rdmacm-utils ibverbs-utils
  # capture files, command lines, formatting, JSON, tests, CRC
  libpcap-dev libcli11-dev libfmt-dev nlohmann-json3-dev doctest-dev zlib1g-dev
  # the allocator rdmapcap links (tools/rdmapcap/CMakeLists.txt)
  libjemalloc-dev
  # the Wireshark plugin, and the reference decoder and capture tool for tests
  libwireshark-dev libglib2.0-dev tshark tcpdump
  # the tshark comparison test; jq and mergecap (wireshark-common) for commands
  # the docs show and the CLI tests run
  python3 jq wireshark-common
  # the JSON Schemas of every output, checked by the tests
  python3-jsonschema
  # the course as a static site (scripts/build-site.sh), and the test that
  # opens every page in headless Chromium (a CJK font for its screenshots)
  mkdocs mkdocs-material chromium chromium-driver python3-selenium fonts-wqy-microhei
)
if [[ "${1:-}" == "--vm" ]]; then
  packages+=(qemu-system-x86 linux-image-amd64 busybox-static kmod cpio xz-utils rdma-core perftest
             iproute2 nftables)
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "rdmalab: installing ${#missing[@]} Debian package(s): ${missing[*]}" >&2
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "rdmalab: need root or sudo to install packages" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer no without a prompt.
echo "wireshark-common wireshark-common/install-setuid boolean false" | "${sudo[@]}" debconf-set-selections
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

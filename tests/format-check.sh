#!/usr/bin/env bash
# Every C++ source of the project is formatted as .clang-format says (with
# Debian's clang-format). Lists the files that are not, with the command that
# fixes them, and exits 1; exits 0 when all are.
#
#   tests/format-check.sh [CLANG_FORMAT]
set -uo pipefail
cd "$(dirname "$0")/.."
clang_format=${1:-clang-format}
mapfile -t files < <(find bench dissect labs lib tests tools \( -name '*.cpp' -o -name '*.hpp' \) \
  -not -path '*/build/*' | sort)
bad=()
for f in "${files[@]}"; do
  "$clang_format" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
echo "format: ${#files[@]} files checked, ${#bad[@]} not formatted"
if ((${#bad[@]} > 0)); then
  printf '  %s\n' "${bad[@]}"
  echo "fix with: $clang_format -i ${bad[*]}"
  exit 1
fi

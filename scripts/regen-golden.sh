#!/usr/bin/env bash
# Regenerates the golden transcripts of the labs (tests/labs/golden/*.txt)
# after an intended change of a lab's output. Review the diff before
# committing it.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-dev}
scripts/build.sh "$preset"
RDMALAB_REGEN_GOLDEN=1 ctest --test-dir "build/$preset" -R 'labs_e2e_test.*golden' --output-on-failure
git status --short tests/labs/golden

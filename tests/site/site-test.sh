#!/usr/bin/env bash
# The course site (label site): builds it strictly with scripts/build-site.sh,
# then opens every page in headless Chromium (browse_site.py).
#   site-test.sh OUT_DIR        screenshots go to OUT_DIR
set -euo pipefail
out=${1:?usage: site-test.sh OUT_DIR}
cd "$(dirname "$0")/../.."
scripts/build-site.sh
# Debian's python3: python3-selenium is one of its modules.
/usr/bin/python3 tests/site/browse_site.py build/site docs/figures "$out"

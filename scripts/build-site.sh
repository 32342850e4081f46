#!/usr/bin/env bash
# Builds the course (docs/en and docs/zh) as one static site in build/site:
# English at build/site/index.html, Chinese at build/site/zh/index.html, a
# language switch on every page that leads to the same chapter in the other
# language. Strict: a broken link, a missing image or anchor, or a chapter in
# one language only fails the build. Open build/site/index.html from disk, or
# serve build/site over http for the search:
#   python3 -m http.server -d build/site 8000
#
#   scripts/build-site.sh            build into build/site
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# Debian's mkdocs and mkdocs-material (scripts/install-deps.sh installs them);
# they are modules of Debian's python3, so that is the interpreter used here.
python=/usr/bin/python3
if ! "$python" -c "import mkdocs" 2>/dev/null; then
  echo "rdmalab: the site needs Debian's mkdocs (run scripts/install-deps.sh)" >&2
  exit 1
fi
if ! "$python" -c "from mkdocs.utils import get_theme_names; assert 'material' in get_theme_names()" \
     2>/dev/null; then
  echo "rdmalab: the site needs Debian's mkdocs-material (run scripts/install-deps.sh)" >&2
  exit 1
fi

config_dir=build/site-config
rm -rf build/site "$config_dir"
mkdir -p "$config_dir"

# One configuration per language, inheriting mkdocs.yml. The Chinese half is
# built into build/site/zh, so the other language is one level up from it.
write_config() {
  local lang=$1 other=$2 other_root=$3 site_dir=$4 language=$5
  cat >"$config_dir/mkdocs.$lang.yml" <<EOF
INHERIT: $root/mkdocs.yml
docs_dir: $root/docs/$lang
site_dir: $root/$site_dir
theme:
  name: material
  custom_dir: $root/scripts/site/overrides
  language: $language
plugins:
  - search:
      lang: en
hooks:
  - $root/scripts/site/hooks.py
extra:
  rdmalab:
    lang: $lang
    other: $other
    other_root: "$other_root"
    repo: $root
EOF
}
write_config en zh zh/ build/site en
write_config zh en ../ build/site/zh zh-rdmalab

for lang in en zh; do
  log="$config_dir/mkdocs.$lang.log"
  if ! "$python" -m mkdocs build --strict --config-file "$config_dir/mkdocs.$lang.yml" \
       >"$log" 2>&1; then
    cat "$log" >&2
    echo "rdmalab: the $lang half of the site failed to build (strict: every warning is an error)" >&2
    exit 1
  fi
done

# MkDocs checks the links to files; this checks the rest of what a reader
# would click or see: every relative href and src of every page resolves to
# a file of the site, and every #anchor to an element of that page.
"$python" scripts/site/check-site.py build/site
echo "rdmalab: site built in build/site (open build/site/index.html)"

#!/usr/bin/env python3
"""Checks a built site (scripts/build-site.sh): every relative href and src
of every HTML page names a file of the site, and every #anchor an element id
of the page it points to. MkDocs itself checks links between files but not
anchors, nor what the theme and the hooks add (the language switch).

    check-site.py SITE_DIR        exit 1 and one line per problem if any
"""

import os
import sys
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()
        self.refs = []  # (tag, attribute, value)

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)
            if value is not None and (
                    (name == "href" and tag in ("a", "link"))
                    or (name == "src" and tag in ("img", "script", "iframe"))):
                self.refs.append((tag, name, value))


def _parse(path, cache):
    if path not in cache:
        page = _Page()
        with open(path, encoding="utf-8") as f:
            page.feed(f.read())
        cache[path] = page
    return cache[path]


def check(site):
    cache = {}
    problems = []
    pages = sorted(os.path.join(d, f) for d, _, fs in os.walk(site) for f in fs
                   if f.endswith(".html"))
    for page_path in pages:
        page = _parse(page_path, cache)
        rel = os.path.relpath(page_path, site)
        for tag, attr, value in page.refs:
            parts = urlsplit(value)
            if parts.scheme or parts.netloc or value.startswith("/"):
                continue  # external: not part of the site (and not loaded by it, see the test)
            target = page_path
            if parts.path:
                target = os.path.normpath(os.path.join(os.path.dirname(page_path),
                                                       unquote(parts.path)))
                if os.path.isdir(target):
                    target = os.path.join(target, "index.html")
                if not os.path.isfile(target):
                    problems.append(f"{rel}: <{tag} {attr}=\"{value}\">: no such file in the site")
                    continue
                if not os.path.realpath(target).startswith(os.path.realpath(site) + os.sep):
                    problems.append(f"{rel}: <{tag} {attr}=\"{value}\">: leaves the site")
                    continue
            fragment = unquote(parts.fragment)
            if fragment and target.endswith(".html") and \
                    fragment not in _parse(target, cache).ids:
                problems.append(f"{rel}: <{tag} {attr}=\"{value}\">: no element has this id")
    return pages, problems


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    pages, problems = check(sys.argv[1])
    if not pages:
        print(f"rdmalab: no HTML page in {sys.argv[1]}", file=sys.stderr)
        return 1
    for p in problems:
        print(f"rdmalab: {p}", file=sys.stderr)
    if problems:
        print(f"rdmalab: the site has {len(problems)} broken link(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

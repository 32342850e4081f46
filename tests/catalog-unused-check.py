#!/usr/bin/env python3
"""Every catalog message is used: a Message{"key", ...} whose key no source
names (as M("key") or any other string literal) is dead text that still has
to be translated and reviewed. Lists such keys and exits 1; exits 0 when every
key is used.

Usage: catalog-unused-check.py [ROOT]
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
definition = re.compile(r'Message\{\s*"([^"]+)"')
literal = re.compile(r'"([A-Za-z0-9_.]+)"')
defined, used = {}, set()
for folder in ("lib", "dissect", "labs", "tools", "bench"):
    for path in sorted((root / folder).rglob("*")):
        if path.suffix not in (".cpp", ".hpp") or "build" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        for m in definition.finditer(text):
            defined.setdefault(m.group(1), []).append(str(path.relative_to(root)))
        used.update(literal.findall(definition.sub("Message{", text)))
unused = sorted(k for k in defined if k not in used)
for key in unused:
    print(f"unused catalog message '{key}' in {', '.join(defined[key])}")
print(f"catalogs: {len(defined)} messages, {len(unused)} unused")
sys.exit(1 if unused else 0)

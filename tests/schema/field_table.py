#!/usr/bin/env python3
"""The table of JSON fields and the Wireshark fields that show the same
value, made from the x-wireshark annotations of docs/schema/*.schema.json.

  field_table.py SCHEMA_DIR            print the table (Markdown rows)
  field_table.py SCHEMA_DIR DOC...     check each DOC holds exactly those rows
"""

import json
import pathlib
import sys


def rows(schema_dir):
    out = []

    def walk(node, path):
        if isinstance(node, dict):
            if "x-wireshark" in node:
                out.append((path, node["x-wireshark"]))
            for key, value in node.get("properties", {}).items():
                walk(value, f"{path}.{key}" if path else key)
            for key in ("$defs",):
                for name, value in node.get(key, {}).items():
                    walk(value, path)

    for name, prefix in (("decode.schema.json", ""), ("event.schema.json", "events[]")):
        walk(json.loads((pathlib.Path(schema_dir) / name).read_text()), prefix)
    return [f"| `{p}` | `{w}` |" for p, w in out]


HEADS = ("| JSON field | Wireshark field |", "| JSON 字段 | Wireshark 字段 |")


def main():
    schema_dir, docs = sys.argv[1], sys.argv[2:]
    want = rows(schema_dir)
    if not docs:
        print("\n".join(want))
        return 0
    bad = 0
    for doc in docs:
        lines = pathlib.Path(doc).read_text().splitlines()
        # The rows of the table headed "| JSON field | Wireshark field |" (in
        # Chinese "| JSON 字段 | Wireshark 字段 |").
        heads = [i for i, l in enumerate(lines) if l in HEADS]
        have = []
        if heads:
            for line in lines[heads[0] + 2:]:
                if not line.startswith("|"):
                    break
                have.append(line)
        if have != want:
            bad += 1
            print(f"{doc}: the JSON field table differs from the schemas'")
            for line in sorted(set(want) - set(have)):
                print("  missing:", line)
            for line in sorted(set(have) - set(want)):
                print("  not in the schemas:", line)
    print(f"{len(docs) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Every JSON output rdmalab writes validates against its schema in docs/schema.

Runs rdmapcap decode --json (with and without --all and --payload) and
summary --json on every capture in the data folder, in English and Chinese,
and every lab with --json on the simulator (with the variants given), and
validates each document: decode lines against decode.schema.json, summaries
against summary.schema.json, lab results against lab-result.schema.json.
A schema that does not describe the output, or an output field the schema
does not name, fails the test.

The decode lines of one capture are mostly alike (thousands of WRITE Middles
and ACKs), and jsonschema takes a millisecond or more per document. Two
documents with the same skeleton (skeleton() below: the same keys at every
level, the same types, the same sign of every number, the same short strings
up to their hex digits) validate alike against these schemas, which check
structure, types, enums, patterns and minimums; only the first document of
each skeleton is validated. A line of a new shape is always validated.

Usage: validate_outputs.py --schemas DIR --rdmapcap PATH --data DIR
                           --work DIR [--lab "BIN [ARGS]"]...
"""

import argparse
import glob
import json
import os
import pathlib
import shlex
import subprocess
import sys
import warnings

import jsonschema

warnings.simplefilter("ignore", DeprecationWarning)  # RefResolver: kept for Debian 12's jsonschema


def validator(schemas, name):
    base = pathlib.Path(schemas).resolve()
    schema = json.loads((base / name).read_text())
    store = {}
    for path in base.glob("*.schema.json"):
        doc = json.loads(path.read_text())
        store[path.as_uri()] = doc
        store[path.name] = doc
    resolver = jsonschema.RefResolver(base_uri=(base / name).as_uri(), referrer=schema, store=store)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, resolver=resolver)


def skeleton(doc):
    """What validation depends on, without what merely varies from packet to
    packet: keys, types, signs of numbers, short strings with their hex
    digits masked (an opcode name stays itself, a PSN becomes its shape)."""
    if isinstance(doc, dict):
        return tuple(sorted((k, skeleton(v)) for k, v in doc.items()))
    if isinstance(doc, list):
        items = frozenset(skeleton(v) for v in doc)
        return ("list", min(len(doc), 2), items)
    if isinstance(doc, bool) or doc is None:
        return doc
    if isinstance(doc, (int, float)):
        return (type(doc).__name__, (doc > 0) - (doc < 0))
    if len(doc) > 32:
        return ("str", "long")
    return ("str", "".join("h" if c in "0123456789abcdefABCDEF" else c for c in doc))


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, LANGUAGE=""))
    if r.returncode not in (0, 1):  # 1: protocol errors found, still a full output
        raise RuntimeError(f"{shlex.join(cmd)} exited {r.returncode}: {r.stderr}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--schemas", required=True)
    ap.add_argument("--rdmapcap", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--lab", action="append", default=[],
                    help='a lab binary and its extra arguments, as one word: "BIN --scenario dead"')
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    decode = validator(a.schemas, "decode.schema.json")
    summary = validator(a.schemas, "summary.schema.json")
    lab = validator(a.schemas, "lab-result.schema.json")

    failures, documents = [], 0

    seen = set()

    def check(v, doc, where):
        nonlocal documents
        shape = (id(v), skeleton(doc))
        if shape in seen:
            return
        seen.add(shape)
        documents += 1
        errors = sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errors[:3]:
            failures.append(f"{where}: {'/'.join(map(str, e.absolute_path))}: {e.message}")

    captures = sorted(glob.glob(os.path.join(a.data, "*.pcap")))
    lab_captures = []
    for i, spec in enumerate(a.lab):
        binary, *args = shlex.split(spec)
        cap = os.path.join(a.work, f"lab{i}.pcap")
        cmd = [binary, "--json", "--backend", "sim", "--seed", "1", "--capture", cap] + args
        out = run(cmd)
        check(lab, json.loads(out), shlex.join([os.path.basename(binary)] + args))
        # A lab that compares runs writes one capture for each, named after
        # the one asked for (lab 08: lab7-off.pcap and lab7-on.pcap).
        made = ([cap] if os.path.exists(cap) else []) + sorted(glob.glob(cap[:-5] + "-*.pcap"))
        if not made:
            failures.append(f"{os.path.basename(binary)}: wrote no capture")
        lab_captures += made

    for pcap in captures + lab_captures:
        name = os.path.basename(pcap)
        for lang in ("en", "zh"):
            for flags in ([], ["--all"], ["--payload"]):
                out = run([a.rdmapcap, "--lang", lang, "decode", "--json", *flags, pcap])
                for n, line in enumerate(out.splitlines(), 1):
                    check(decode, json.loads(line), f"decode {' '.join(flags)} {name} line {n}")
            out = run([a.rdmapcap, "--lang", lang, "summary", "--json", pcap])
            check(summary, json.loads(out), f"summary {name}")

    for f in failures[:40]:
        print("FAIL", f)
    print(f"{documents - len(set(f.split(':')[0] for f in failures))} passed, "
          f"{len(set(f.split(':')[0] for f in failures))} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

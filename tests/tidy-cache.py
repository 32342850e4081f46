#!/usr/bin/env python3
"""Which sources clang-tidy must look at: those whose input it has not
already found clean.

clang-tidy's verdict on a source is a function of what it reads: the source
after preprocessing (every header it includes, project and system), the
compiler flags, .clang-tidy and clang-tidy's own version. The key of a
source is a SHA-256 over those four, with the checkout's path replaced by a
placeholder so that any clone gives the same key. tests/tidy-clean.txt lists
the keys of sources a full run found clean; a source whose key is listed
has been checked on exactly this input, and is not checked again. Any change
to the source, to a header it includes (ours or a Debian package's), to its
flags, to the configuration or to the tool gives a new key, and the source
is checked. (The same idea as ccache for compiling, or ctcache for
clang-tidy; the list lives in the repository because CI starts from a clean
clone.)

  tidy-cache.py keys DB ROOT FILTER OUT
      writes "KEY PATH" for every source of DB (compile_commands.json) under
      ROOT whose path matches FILTER, one per line, to OUT
  tidy-cache.py todo KEYS MANIFEST
      prints the paths of KEYS whose key MANIFEST does not list
  tidy-cache.py update KEYS MANIFEST
      rewrites MANIFEST as the keys of KEYS (after a run with no finding)
"""

import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys

PLACEHOLDER = b"@ROOT@"


def preprocess_args(entry):
    """The entry's compiler arguments, turned into a clang preprocessing run
    writing to standard output."""
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    # The compiler, after a launcher if there is one (ccache c++ ...).
    first = 2 if os.path.basename(args[0]) in ("ccache", "sccache") else 1
    out = ["clang++-14"]
    skip = False
    for a in args[first:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD"):
            continue
        out.append(a)
    return out + ["-E", "-Wno-unknown-warning-option", "-Wno-unused-command-line-argument"]


def key_of(entry, root, tool, config):
    args = preprocess_args(entry)
    r = subprocess.run(args, cwd=entry["directory"], capture_output=True)
    if r.returncode != 0:
        return None  # cannot tell: clang-tidy looks at it
    rootb = root.encode()
    h = hashlib.sha256()
    h.update(tool)
    h.update(config)
    flags = " ".join(a for a in args[1:] if a != entry["file"]).encode().replace(rootb, PLACEHOLDER)
    h.update(flags)
    h.update(r.stdout.replace(rootb, PLACEHOLDER))
    return h.hexdigest()


def keys(db, root, pattern, out):
    root = os.path.realpath(root)
    tool = subprocess.run(["clang-tidy-14", "--version"], capture_output=True).stdout
    config = open(os.path.join(root, ".clang-tidy"), "rb").read()
    entries = [e for e in json.load(open(db)) if re.search(pattern, e["file"])]
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        results = list(pool.map(lambda e: key_of(e, root, tool, config), entries))
    with open(out, "w") as f:
        for e, k in zip(entries, results):
            f.write(f"{k or 'none'} {os.path.relpath(e['file'], root)}\n")


def read_pairs(path):
    pairs = []
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line and not line.startswith("#"):
                k, p = line.split(" ", 1)
                pairs.append((k, p))
    return pairs


def todo(keys_file, manifest):
    clean = {k for k, _ in read_pairs(manifest)}
    for k, p in read_pairs(keys_file):
        if k == "none" or k not in clean:
            print(p)


def update(keys_file, manifest):
    pairs = sorted((p, k) for k, p in read_pairs(keys_file) if k != "none")
    with open(manifest, "w") as f:
        f.write("# Keys of the sources clang-tidy found clean (tests/tidy-cache.py);\n")
        f.write("# rewritten by tests/tidy-check.sh BUILD --update after a clean run.\n")
        for p, k in pairs:
            f.write(f"{k} {p}\n")


def main(argv):
    if len(argv) >= 2 and argv[1] == "keys" and len(argv) == 6:
        keys(*argv[2:])
    elif len(argv) == 4 and argv[1] == "todo":
        todo(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "update":
        update(argv[2], argv[3])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

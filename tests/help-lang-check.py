#!/usr/bin/env python3
"""Every program's --help, and each subcommand's, is Chinese with --lang zh.

Usage: help-lang-check.py PROGRAM...

Runs `PROGRAM --lang zh --help` and, for every subcommand its help lists,
`PROGRAM SUB --lang zh --help`, and fails on an English word left in the
text. The rule, word by word (a word is a run of ASCII letters, digits and
_ . - / +):

- a word with a digit, an underscore or a capital after its first letter is
  an identifier or an acronym (RoCEv2, IBV_WC_SUCCESS, wr_id, QP, MTU): kept;
- an option name (a word starting with "-"), the values CLI11 lists for an
  option ({a,b,c}), an option's default (=value) and values listed as
  "a | b | c" are what the user types: kept, wherever on the page they
  appear (a description explains its option's values by name);
- the program's own name and its subcommand names: kept;
- the words of ALLOWED below (file formats, program and product names, IBTA
  opcode and ibv field names, units) are names, not prose: kept;
- any other word of two letters or more, all small or Capitalised ("Usage",
  "Options", "bytes", "chained"), is English prose: the check fails.

Exits 0 when every help text passes, 1 otherwise (listing each word found).
"""
import re
import subprocess
import sys

# Names that stay in Latin letters in Chinese text: option values, file
# formats, programs and products, units. Prose words must not be added here.
ALLOWED = {
    # option values
    "en", "zh", "auto", "always", "never", "sim", "verbs", "send", "local", "write", "read",
    "fadd", "cas", "ud", "rc",
    # formats (JSON Lines), programs, products, libraries
    "pcap", "pcapng", "json", "Lines", "tcpdump", "tshark", "Wireshark", "Linux", "Ethernet", "cooked",
    "rdmalab", "rdmapcap", "rdma", "rxe", "perftest", "ib", "Soft", "NCCL", "TensorFlow",
    "ibv", "rdma_cm", "libibverbs", "gRPC", "protobuf", "nvidia", "peermem", "dmabuf",
    "doctor", "sysfs", "lsmod", "modprobe", "memlock",
    # IBTA opcode words, ibv_* field names, MSCCL++'s channel operations,
    # libfabric's terms, as the chapters use them
    "First", "Middle", "Last", "Only", "Request", "Response", "Invalidate", "rkey", "lkey", "wc",
    "timeout",
    "port", "channel", "put", "signal", "wait", "flush", "libfabric", "provider",
    # units
    "ms", "ns", "us", "KiB", "MiB", "GiB", "Gb", "s",
    # environment variables are upper case; these are their lower-case values
    "dumb",
}

WORD = re.compile(r"[A-Za-z0-9_./+-]+")


def option_values(text):
    values = set()
    for group in re.findall(r"\{([^}]*)\}", text):
        values.update(v.strip() for v in group.split(","))
    values.update(re.findall(r"=([A-Za-z][A-Za-z0-9_-]*)", text))
    for run in re.findall(r"[A-Za-z][\w-]*(?:\s*\|\s*[A-Za-z][\w-]*)+", text):
        values.update(v.strip() for v in run.split("|"))
    return values


def english_words(text, own_names):
    bad = []
    values = option_values(text)
    # Value lists {a,b,c} are what the user types.
    text = re.sub(r"\{[^}]*\}", " ", text)
    for word in WORD.findall(text):
        if word.startswith("-"):
            continue
        if word in values:
            continue
        for part in re.split(r"[./+]", word):
            letters = part.strip("-")
            if len(letters) < 2 or not letters.isalpha():
                continue  # digits, underscores, single letters
            if any(c.isupper() for c in letters[1:]):
                continue  # acronym or CamelCase identifier
            if letters in own_names or letters in values or letters in ALLOWED:
                continue
            bad.append(letters)
    return bad


def run_help(argv):
    r = subprocess.run(argv + ["--lang", "zh", "--help"], capture_output=True, text=True,
                       timeout=60)
    if r.returncode != 0:
        return None, f"exit status {r.returncode}: {r.stderr.strip()}"
    return r.stdout, None


def subcommands(text):
    # The section CLI11 titles "Subcommands" (子命令：), one "name  description" per line.
    names, inside = [], False
    for line in text.splitlines():
        if line.startswith("子命令"):
            inside = True
            continue
        if inside:
            m = re.match(r"^\s+([a-z][a-z0-9-]*)\s", line)
            if not m:
                break
            names.append(m.group(1))
    return names


def main():
    failures = 0
    checked = 0
    for program in sys.argv[1:]:
        name = program.rsplit("/", 1)[-1]
        text, err = run_help([program])
        if err:
            print(f"{name} --help: {err}")
            failures += 1
            continue
        subs = subcommands(text)
        own = {name, *name.split("-"), *subs}
        pages = [([program], name, text)]
        for sub in subs:
            sub_text, err = run_help([program, sub])
            if err:
                print(f"{name} {sub} --help: {err}")
                failures += 1
                continue
            pages.append(([program, sub], f"{name} {sub}", sub_text))
        for _, label, page in pages:
            checked += 1
            bad = english_words(page, own)
            if bad:
                failures += 1
                print(f"{label} --lang zh --help: English words {sorted(set(bad))}")
    print(f"help texts checked: {checked}, failing: {failures}")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Rewrites the Chinese chapters' output excerpts from the programs' own --lang zh output.

The English chapters show short excerpts of rdmapcap's output: a ```text block
after a lab chapter's ```sh block, or a plain block after a concept chapter's
```sh block (or "$ command" and its output in one plain block). The Chinese
chapter holds the same commands (tests/docs checks it). For every excerpt, this
script runs the commands as tests/docs/docs_commands_test does, in English and
in Chinese, finds the English excerpt's lines in the English output, and writes
the Chinese output's lines at the same positions into the Chinese chapter. An
excerpt whose two outputs do not have the same number of lines is left as it
is, with a warning. Run by scripts/regen-docs.sh after the build; alone:

    scripts/regen-zh-excerpts.py [BUILD_DIR]      (default: build/dev)
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VA = re.compile(r"0x[0-9a-f]{16}")
ICRC = re.compile(r"ICRC  0x[0-9a-f]{8}")


def mask(line: str) -> str:
    return ICRC.sub("ICRC  0xICRC", VA.sub("0xADDRESS", line)).rstrip()


def blocks(path: Path):
    """The fenced blocks of a Markdown file: (info, first body line, end line, transcript)."""
    out, fence, transcript = [], None, False
    lines = path.read_text(encoding="utf-8").split("\n")
    for n, line in enumerate(lines):
        t = line.strip()
        if fence:
            if t.startswith(fence[0]) and not t[len(fence[0]):].strip():
                out.append((fence[1], fence[2], n, fence[3]))
                fence = None
            continue
        if t.startswith("```"):
            mark = t[: len(t) - len(t.lstrip("`"))]
            fence = (mark, t[len(mark):].strip(), n + 1, transcript)
        elif t.startswith("<!-- transcript:"):
            transcript = True
        elif t == "<!-- /transcript -->":
            transcript = False
    return lines, out


def run(argv, cwd=None, stderr=False, env=None) -> list[str]:
    r = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT if stderr else subprocess.DEVNULL, text=True,
                       timeout=300)
    return r.stdout.split("\n")


def translate(excerpt: list[str], en_out: list[str], zh_out: list[str]):
    """The zh lines at the positions of the excerpt's lines in en_out; None if they do not align."""
    if len(en_out) != len(zh_out):
        return None
    masked = [mask(l) for l in en_out]
    out, at = [], 0
    for line in excerpt:
        if not line.strip():
            out.append(line)
            continue
        want = mask(line)
        while at < len(masked) and masked[at] != want:
            at += 1
        if at == len(masked):
            return None
        out.append(keep_addresses(line, zh_out[at].rstrip()))
        at += 1
    return out


def keep_addresses(en_line: str, zh_line: str) -> str:
    """zh_line with the heap addresses and ICRCs of the excerpt's own line, which
    change from run to run, so that a refresh changes only what the program says."""
    for pattern in (VA, ICRC):
        mine = pattern.findall(en_line)
        if mine and len(pattern.findall(zh_line)) == len(mine):
            it = iter(mine)
            zh_line = pattern.sub(lambda _: next(it), zh_line)
    return zh_line


def main() -> int:
    build = Path(sys.argv[1] if len(sys.argv) > 1 else "build/dev")
    if not build.is_absolute():
        build = ROOT / build
    rdmapcap = build / "tools" / "rdmapcap" / "rdmapcap"
    if not rdmapcap.exists():
        print(f"rdmalab: {rdmapcap} is not built: zh excerpts not regenerated", file=sys.stderr)
        return 1
    status = 0
    tmp = Path(tempfile.mkdtemp(prefix="rdmalab_zh_excerpts_"))
    for en_path in sorted((ROOT / "docs" / "en").glob("[0-9][0-9]-*.md")):
        zh_path = ROOT / "docs" / "zh" / en_path.name
        lab_chapter = en_path.name[2:6] == "-lab"
        en_lines, en_blocks = blocks(en_path)
        zh_lines, zh_blocks = blocks(zh_path)
        if len(en_blocks) != len(zh_blocks):
            print(f"rdmalab: {zh_path.name}: not the same blocks as docs/en: skipped", file=sys.stderr)
            status = 1
            continue
        replace = {}  # zh block index -> new body lines
        for b, (info, start, end, transcript) in enumerate(en_blocks):
            if transcript:
                continue
            body = en_lines[start:end]
            nxt = en_blocks[b + 1] if b + 1 < len(en_blocks) else None
            commands, excerpt, target = [], None, None
            if info == "sh":
                commands = body
                want = "text" if lab_chapter else ""
                if nxt and nxt[0] == want and not nxt[3]:
                    excerpt, target = en_lines[nxt[1]:nxt[2]], b + 1
            elif info == "" and not lab_chapter and body and body[0].strip().startswith("$ "):
                commands, excerpt, target = [body[0].strip()[2:]], body[1:], b
            # Run the block's commands in order (labs write the captures the
            # rdmapcap commands read); keep the last rdmapcap's output.
            en_out = zh_out = None
            pending = ""
            for raw in commands:
                line = raw.strip()
                if line.endswith("\\"):
                    pending += line[:-1] + " "
                    continue
                line = re.sub(r"\s{2,}#.*$", "", pending + line).strip()
                pending = ""
                if not line:
                    continue
                words = shlex.split(line)
                if "/labs/" in words[0]:
                    exe = build / "labs" / words[0].split("/labs/", 1)[1]
                    lab = Path(words[0]).name[:5]
                    if not exe.exists():
                        print(f"rdmalab: {exe} is not built: {zh_path.name} not regenerated",
                              file=sys.stderr)
                        status = 1
                        excerpt = None
                        break
                    argv = [str(exe), *words[1:], "--capture", str(tmp / f"{lab}.pcap")]
                    if lab_chapter or excerpt is None:
                        run(argv)
                        en_out = zh_out = None
                    else:  # a concept chapter shows a lab's own output (messages on stderr too)
                        en_out = run(argv + ["--lang", "en"], stderr=True)
                        zh_out = run(argv + ["--lang", "zh"], stderr=True)
                elif words[0] == "rdmapcap" and excerpt is not None and lab_chapter:
                    args = [str(tmp / w[9:]) if w.startswith("captures/") else w for w in words[1:]]
                    en_out = run([str(rdmapcap), "--lang", "en", *args], cwd=ROOT)
                    zh_out = run([str(rdmapcap), "--lang", "zh", *args], cwd=ROOT)
                elif words[0] == "rdmapcap" and excerpt is not None:
                    # As a reader types it (pipes included), from the source tree.
                    path = f"{rdmapcap.parent}:{os.environ.get('PATH', '')}"
                    en_out = run(["/bin/sh", "-c", line], cwd=ROOT,
                                 env={**os.environ, "PATH": path, "LANGUAGE": "en", "LC_ALL": "",
                                      "LANG": ""})
                    zh_out = run(["/bin/sh", "-c", line], cwd=ROOT,
                                 env={**os.environ, "PATH": path, "LANGUAGE": "zh", "LC_ALL": "",
                                      "LANG": ""})
                else:
                    en_out = zh_out = None
            if excerpt is None or en_out is None:
                continue
            zh = translate(excerpt, en_out, zh_out)
            if zh is None:
                print(f"rdmalab: {zh_path.name}: an excerpt of '{commands[-1].strip()}' "
                      "cannot be matched line by line: left as it is", file=sys.stderr)
                status = 1
                continue
            if target == b:  # "$ command" block: keep the command line
                zh = [zh_lines[zh_blocks[b][1]]] + zh
            replace[target] = zh
        if not replace:
            continue
        out, last = [], 0
        for i, (info, start, end, _) in enumerate(zh_blocks):
            if i in replace:
                out += zh_lines[last:start] + replace[i]
                last = end
        out += zh_lines[last:]
        text = "\n".join(out)
        if text != zh_path.read_text(encoding="utf-8"):
            zh_path.write_text(text, encoding="utf-8")
            print(f"updated {zh_path.relative_to(ROOT)}")
    for f in tmp.iterdir():
        f.unlink()
    tmp.rmdir()
    return status


if __name__ == "__main__":
    sys.exit(main())

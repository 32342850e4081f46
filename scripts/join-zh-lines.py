#!/usr/bin/env python3
"""Joins the hard-wrapped lines of Chinese paragraphs in Markdown files.

A line break inside a paragraph renders as a space, which Chinese text must
not have between two characters. Outside fenced code blocks, tables, HTML
lines and headings, a line is joined to the previous one of the same
paragraph (or list item, or quote) when either side of the break is Chinese:
with nothing between them when both sides are Chinese characters or
full-width punctuation, with one space when the other side is Latin text.
tests/docs (docs_test) rejects a line break between two Chinese characters.

    scripts/join-zh-lines.py FILE.md...     (rewrites the files in place)
"""
import re
import sys

LIST_ITEM = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+")
BLOCK_START = ("#", "|", "<", "```", "~~~")


def is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return (0x4E00 <= cp <= 0x9FFF or 0x3000 <= cp <= 0x303F or 0xFF00 <= cp <= 0xFFEF
            or cp in (0x201C, 0x201D, 0x2018, 0x2019, 0x2026, 0x2014))


def is_cjk_punct(ch: str) -> bool:
    cp = ord(ch)
    return (0x3000 <= cp <= 0x303F or 0xFF00 <= cp <= 0xFFEF
            or cp in (0x201C, 0x201D, 0x2018, 0x2019, 0x2026, 0x2014))


def join_file(text: str) -> str:
    out: list[str] = []
    fence = None
    joinable = False  # the previous output line is prose that a continuation may extend
    for line in text.split("\n"):
        stripped = line.strip()
        if fence:
            out.append(line)
            if stripped.startswith(fence) and stripped[len(fence):].strip() == "":
                fence = None
            continue
        if stripped.startswith("```") or stripped.startswith("~~~"):
            fence = re.match(r"^(`+|~+)", stripped).group(1)
            out.append(line)
            joinable = False
            continue
        if not stripped or stripped.startswith(BLOCK_START):
            out.append(line)
            joinable = False
            continue
        quote = stripped.startswith(">")
        body = stripped.lstrip(">").strip() if quote else stripped
        starts_item = LIST_ITEM.match(line) is not None
        if joinable and not starts_item and body:
            prev = out[-1].rstrip()
            prev_quote = prev.lstrip().startswith(">")
            if prev_quote == quote and (is_cjk(prev[-1]) or is_cjk(body[0])):
                both = (is_cjk(prev[-1]) and is_cjk(body[0])) or is_cjk_punct(
                    prev[-1]) or is_cjk_punct(body[0])
                out[-1] = prev + ("" if both else " ") + body
                continue
        out.append(line)
        joinable = True
    return "\n".join(out)


def main() -> int:
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        joined = join_file(text)
        if joined != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(joined)
            print(f"joined {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

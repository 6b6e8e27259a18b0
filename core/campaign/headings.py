"""Answer headings demoted below the Vote page's own labels.

The Vote page titles the two answers "Answer A" and "Answer B" as level-3 headings. An answer that opens
with ``# Summary`` would otherwise be drawn larger than the label that says whose answer it is, and the
page would read as if the answer's heading were the page's structure. :func:`demote_headings` shifts every
heading of a text by one amount, so that its largest heading becomes level ``top`` (4 by default: smaller
than the labels) and the relative sizes inside the answer are kept; levels stop at 6, the smallest Markdown
has.

Headings are recognised as CommonMark writes them: ATX (``## Title``, up to three spaces of indentation,
an optional closing run of ``#``) and setext (a paragraph line underlined with ``===`` for level 1 or
``---`` for level 2). A setext heading is rewritten as an ATX heading of its new level. Nothing inside a
fenced code block (```` ``` ```` or ``~~~``, closed by a fence of the same character at least as long) or an
indented code block is touched, so ``# comment`` lines in code keep their meaning. A ``---`` after a blank
line is a thematic break, not a heading, and stays.
"""

from __future__ import annotations

import re

__all__ = ["ANSWER_TOP_LEVEL", "demote_headings", "heading_levels"]

ANSWER_TOP_LEVEL = 4  # the Vote page's labels are level 3 (st.subheader)
MAX_LEVEL = 6

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# Lines that cannot be the text of a setext heading: they start a block of their own.
_BLOCK_START = re.compile(r"^ {0,3}(?:[-+*][ \t]|\d{1,9}[.)][ \t]|>|#{1,6}(?:[ \t]|$)|`{3,}|~{3,}|\|)")


def _blocks(lines: list[str]) -> list[str]:
    """One tag per line: ``code`` (inside or on the fence of a code block), ``text`` otherwise."""
    tags, fence, previous_blank = [], None, True
    for line in lines:
        if fence is not None:
            tags.append("code")
            closing = _FENCE.match(line)
            if closing and closing.group(2)[0] == fence[0] and len(closing.group(2)) >= len(fence) \
                    and not closing.group(3).strip():
                fence = None
            continue
        opening = _FENCE.match(line)
        if opening and not (opening.group(2)[0] == "`" and "`" in opening.group(3)):
            fence = opening.group(2)
            tags.append("code")
        elif previous_blank and line.startswith(("    ", "\t")) and line.strip():
            tags.append("code")  # an indented code block starts after a blank line
        elif tags and tags[-1] == "code" and fence is None and line.startswith(("    ", "\t")) \
                and not _FENCE.match(line):
            tags.append("code")
        else:
            tags.append("text")
        previous_blank = not line.strip()
    return tags


def _headings(lines: list[str]) -> dict[int, tuple[int, str, int]]:
    """First line -> (level, title, lines it spans) for every heading; a setext heading spans its paragraph
    and its underline."""
    tags = _blocks(lines)
    found: dict[int, tuple[int, str, int]] = {}
    covered: set[int] = set()
    for i, line in enumerate(lines):
        if tags[i] != "text":
            continue
        atx = _ATX.match(line)
        if atx:
            found[i] = (len(atx.group(1)), (atx.group(2) or "").strip(), 1)
            covered.add(i)
            continue
        underline = _SETEXT.match(line)
        start = _paragraph_start(lines, tags, covered, i) if underline else None
        if start is not None:
            title = " ".join(lines[j].strip() for j in range(start, i))
            found[start] = (1 if underline.group(1)[0] == "=" else 2, title, i - start + 1)
            covered.update(range(start, i + 1))
    return found


def _paragraph_start(lines: list[str], tags: list[str], covered: set[int], underline: int) -> int | None:
    """First line of the plain paragraph right above a setext underline, or None when there is none (then a
    ``---`` is a thematic break, a ``===`` plain text)."""
    start = underline
    while start > 0 and tags[start - 1] == "text" and lines[start - 1].strip() and (start - 1) not in covered:
        start -= 1
    if start == underline:
        return None
    if any(_BLOCK_START.match(lines[j]) or _SETEXT.match(lines[j]) for j in range(start, underline)):
        return None  # a list item, quote, table … : not a paragraph CommonMark would make a heading
    if lines[start].startswith(("    ", "\t")):
        return None
    return start


def heading_levels(text: str) -> list[int]:
    """The level of every heading of ``text``, in order (code blocks excluded)."""
    found = _headings(text.split("\n"))
    return [found[i][0] for i in sorted(found)]


def demote_headings(text: str, top: int = ANSWER_TOP_LEVEL) -> str:
    """``text`` with its headings shifted so that the largest is level ``top`` (levels stop at 6).

    A text whose largest heading is already ``top`` or smaller is returned unchanged.
    """
    if not 1 <= top <= MAX_LEVEL:
        raise ValueError(f"top must be a heading level from 1 to {MAX_LEVEL}, got {top}")
    lines = text.split("\n")
    found = _headings(lines)
    if not found:
        return text
    shift = top - min(level for level, _, _ in found.values())
    if shift <= 0:
        return text
    out, i = [], 0
    while i < len(lines):
        if i in found:
            level, title, span = found[i]
            out.append("#" * min(MAX_LEVEL, level + shift) + (" " + title if title else ""))
            i += span
        else:
            out.append(lines[i])
            i += 1
    return "\n".join(out)

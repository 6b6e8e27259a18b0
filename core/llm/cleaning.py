"""Answer cleaning before a blind comparison: URLs, citation markers, emoji and stray whitespace.

An answer shown to an annotator should be judged on its content. A URL can reveal which model (or which
search backend) wrote it and cannot be followed anyway; a citation marker such as ``[1]`` or ``【1】``
points at sources the annotator never sees; emoji sway judgements of tone; uneven whitespace makes two
equal answers look different. Each rule can be switched off.

A URL in a sentence becomes the placeholder ``[link]`` rather than nothing: removed outright it left
fragments such as "Read the docs at." or "See for more.", which read as a broken answer and penalise it
for something the annotator was never meant to judge. ``[link]`` keeps the sentence whole and says only
that the answer pointed somewhere, not where (the site can reveal the model or its search backend); it is
the same for every answer and short in any language. Dropping the lead-in phrase instead ("read the docs
at", "visit", "详见" …) would need a list of phrases per language and could cut meaning ("You can
download it from … and install it"). A URL that is only an aside in parentheses ("a tool
(https://…) works"), an empty link and a reference definition are removed; a link with text keeps its
text; a link whose text is only a citation number becomes ``[link]``. An answer left with nothing but
placeholders is empty: there is nothing to judge in it.

Code is never altered by the URL, citation or emoji rules: fenced blocks (```` ``` ```` or ``~~~``) are
left byte for byte, inline ``code`` spans are protected, so ``a[1]``, ``x[0]`` or a URL inside code
survive. Numbers in brackets are removed only where they read as citations: ``Paris[1]``, ``Paris [1,2].``,
``[1][2]``, a ``[1]`` that opens a line; a list literal (``[1, 2, 3]`` after a space, ``x = [1,2]``),
an index (``x[0]``, ``a[1]``, ``row_ids[2]``) and checkboxes (``- [ ]``) stay.

Emoji are the characters Unicode draws as emoji by default (Emoji_Presentation), any symbol followed by
the emoji variation selector U+FE0F, their skin-tone modifiers, zero-width-joiner sequences, flags
(regional indicators, tag sequences) and keycaps (``1️⃣`` keeps its ``1``). Text-style symbols (✓, ♥,
→, ©, ∑, ≤), CJK text and CJK punctuation are kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["URL_PLACEHOLDER", "CleaningRules", "clean_answer"]


@dataclass(frozen=True)
class CleaningRules:
    """Which cleaning rules run (all by default)."""

    urls: bool = True
    citations: bool = True
    emoji: bool = True
    whitespace: bool = True


MAX_PASSES = 4
# A removed span leaves this mark so that the spaces around it can be tidied in one pass.
_GAP = "\x00"
URL_PLACEHOLDER = "[link]"
# A removed URL that the sentence still needs: becomes URL_PLACEHOLDER once asides are told apart.
_LINK = "\ue002"
# Inline code spans are swapped for numbered private-use tokens while the prose rules run.
_CODE_OPEN, _CODE_CLOSE = "\ue000", "\ue001"

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_CODE_TOKEN = re.compile(_CODE_OPEN + r"(\d+)" + _CODE_CLOSE)

# --- URLs -----------------------------------------------------------------------------------------
# ASCII only: CJK text often runs straight on from a URL ("详见https://a.cn。"), so a non-ASCII
# character ends it. Balanced parentheses stay inside (Wikipedia-style paths).
_URL_CHAR = r"[A-Za-z0-9\-._~:/?#@!$&'*+,;=%]"
_URL = re.compile(r"(?<![A-Za-z0-9])(?:(?:https?|ftp)://|www\.)(?:" + _URL_CHAR + r"|\(" + _URL_CHAR + r"*\))+",
                  re.IGNORECASE)
_URL_TRAILING = ".,;:!?'"
_LINK_TEXT = r"((?:[^\[\]\n]|\[[^\[\]\n]*\])*)"
_INLINE_LINK = re.compile(r"!?\[" + _LINK_TEXT + r"\]\(\s*<?[^()\s<>]*(?:\([^()\s]*\)[^()\s<>]*)*>?"
                          r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)")
_REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[([^\]\n^]+)\]:[ \t]*\S+.*$", re.MULTILINE)
_REFERENCE_LINK = re.compile(r"\[" + _LINK_TEXT + r"\]\[([^\]\n]+)\]")
_NUMBER_TEXT = re.compile(r"^\s*(?:\[\s*)?\d+(?:\s*[,，;–-]\s*\d+)*(?:\s*\])?\s*$")  # "[1]", "2", "[1, 2]"
_LINK_ASIDE = re.compile(r"\(\s*" + _LINK + r"\s*\)")  # "(https://…)": nothing of the sentence is lost
_LINK_AUTOLINK = re.compile(r"<\s*" + _LINK + r"\s*>")  # "<https://…>" is the URL itself
_ONLY_PLACEHOLDERS = re.compile(r"^[\s.,;:!?。，、；：！？\-*>]*(?:" + re.escape(URL_PLACEHOLDER)
                                + r"[\s.,;:!?。，、；：！？\-*>]*)+$")

# --- citations ------------------------------------------------------------------------------------
_NUMBER = r"[1-9]\d{0,2}"  # citations count from 1; [0] is always an index
_CITATION_BODY = r"\[\s*" + _NUMBER + r"(?:\s*[,，;–-]\s*" + _NUMBER + r")*\s*\]"
_CITATION_CHAIN = re.compile(r"(?:" + _CITATION_BODY + r")+")
_CJK_CITATION = re.compile(r"【\d+(?:[†:][^】\n]*|(?:\s*[,，、;–-]\s*\d+)*)】")
_FOOTNOTE_REF = re.compile(r"\[\^[^\]\s]+\](?!:)")
# After these a bracketed number is a value (x = [1,2], f([1]), {[1]}), not a citation.
_VALUE_CONTEXT = set("=([{,+*/<>|")
# An identifier with "_" or "." inside, or a single letter, reads as code being indexed: row_ids[2], a[1].
_INDEXED_NAME = re.compile(r"(?:^|[^\w.])(?:[A-Za-z]|[A-Za-z_][\w.]*[_.][\w.]*\w)$")

# --- emoji ----------------------------------------------------------------------------------------
_EMOJI_PRESENTATION = (
    "\u231a\u231b\u23e9-\u23ec\u23f0\u23f3\u25fd\u25fe\u2614\u2615\u2648-\u2653\u267f\u2693\u26a1"
    "\u26aa\u26ab\u26bd\u26be\u26c4\u26c5\u26ce\u26d4\u26ea\u26f2\u26f3\u26f5\u26fa\u26fd\u2705"
    "\u270a\u270b\u2728\u274c\u274e\u2753-\u2755\u2757\u2795-\u2797\u27b0\u27bf\u2b1b\u2b1c\u2b50\u2b55"
    "\U0001f000-\U0001f02f\U0001f0a0-\U0001f0ff\U0001f18e\U0001f191-\U0001f19a\U0001f1e6-\U0001f1ff"
    "\U0001f201\U0001f202\U0001f21a\U0001f22f\U0001f232-\U0001f23a\U0001f250\U0001f251"
    "\U0001f300-\U0001f64f\U0001f680-\U0001f6ff\U0001f7e0-\U0001f7ff\U0001f90c-\U0001f9ff"
    "\U0001fa70-\U0001faff"
)
# Symbols that become emoji when followed by U+FE0F (text style otherwise, so kept alone).
_PICTOGRAPHIC_TEXT = (
    "\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u2199\u21a9\u21aa\u2328\u23cf\u23ed-\u23ef\u23f1\u23f2"
    "\u23f8-\u23fa\u24c2\u25aa\u25ab\u25b6\u25c0\u25fb\u25fc\u2600-\u27bf\u2934\u2935\u2b05-\u2b07"
    "\u3030\u303d\u3297\u3299\U0001f170\U0001f171\U0001f17e\U0001f17f"
)
_MODIFIERS = "\ufe0f\ufe0e\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f"
_EMOJI_UNIT = "(?:[" + _EMOJI_PRESENTATION + "]|[" + _PICTOGRAPHIC_TEXT + "]\ufe0f)[" + _MODIFIERS + "]*"
_EMOJI_SEQUENCE = re.compile(_EMOJI_UNIT + "(?:\u200d(?:[" + _EMOJI_PRESENTATION + _PICTOGRAPHIC_TEXT
                             + "])[" + _MODIFIERS + "]*)*")
_KEYCAP = re.compile("([0-9#*])\ufe0f?\u20e3")
_STRAY_SELECTOR = re.compile("[\ufe0e\ufe0f]")

# --- whitespace and gaps --------------------------------------------------------------------------
_ZERO_WIDTH = re.compile("[\u200b\ufeff]")
_EMPTY_WRAPPER = re.compile(r"\(\s*" + _GAP + r"+\s*\)|<\s*" + _GAP + r"+\s*>|\[\s*" + _GAP + r"+\s*\]")
_GAP_RUN = re.compile(r"([ \t]*)" + _GAP + r"+([ \t]*)")
_CLOSING = set(".,;:!?)]}。，、；：！？）」』】》\"'")


def clean_answer(text: str, rules: CleaningRules = CleaningRules()) -> str:
    """Return ``text`` with the URL, citation, emoji and whitespace rules of ``rules`` applied.

    Code (fenced blocks and inline spans) is left as it is; see the module notes for what each rule
    removes and what it keeps.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, not {type(text).__name__}")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    parts = []
    for is_code, block in _split_fenced(text):
        parts.append(block if is_code else _clean_prose(block, rules))
    cleaned = "\n".join(parts)
    if rules.whitespace:
        cleaned = cleaned.strip("\n")
    if rules.urls and _ONLY_PLACEHOLDERS.match(cleaned):
        return ""  # links and nothing else: nothing to judge
    return cleaned


def _split_fenced(text: str) -> list[tuple[bool, str]]:
    """Split into (is_code, lines joined) blocks; an unclosed fence runs to the end (as CommonMark)."""
    blocks: list[tuple[bool, list[str]]] = []
    fence = None
    for line in text.split("\n"):
        if fence is None:
            opening = _FENCE_OPEN.match(line)
            if opening:
                fence = opening.group(1)
                blocks.append((True, [line]))
                continue
            if not blocks or blocks[-1][0]:
                blocks.append((False, []))
            blocks[-1][1].append(line)
        else:
            blocks[-1][1].append(line)
            stripped = line.strip()
            if (stripped.startswith(fence) and set(stripped) == {fence[0]}
                    and len(line) - len(line.lstrip(" ")) <= 3):
                fence = None
    return [(is_code, "\n".join(lines)) for is_code, lines in blocks]


def _clean_prose(text: str, rules: CleaningRules) -> str:
    spans: list[str] = []

    def protect(match: re.Match) -> str:
        spans.append(match.group(0))
        return f"{_CODE_OPEN}{len(spans) - 1}{_CODE_CLOSE}"

    text = _INLINE_CODE.sub(protect, text)
    # One removal can uncover another (a marker inside a URL, an emoji splitting one): repeat until stable,
    # so that cleaning cleaned text changes nothing.
    for _ in range(MAX_PASSES):
        before = text
        if rules.emoji:
            text = _KEYCAP.sub(r"\1", text)
            text = _close_gaps(_EMOJI_SEQUENCE.sub(_GAP, text))
            text = _STRAY_SELECTOR.sub("", text)
        if rules.urls:
            text = _close_gaps(_remove_urls(text))
        if rules.citations:
            text = _close_gaps(_remove_citations(text))
        if text == before:
            break
    if rules.whitespace:
        text = _ZERO_WIDTH.sub("", text)
        text = "\n".join(line.rstrip() for line in text.split("\n"))
        text = re.sub(r"\n{3,}", "\n\n", text)
    return _CODE_TOKEN.sub(lambda match: spans[int(match.group(1))], text)


def _remove_urls(text: str) -> str:
    defined = {label.strip().lower() for label in _REFERENCE_DEFINITION.findall(text)}
    text = _REFERENCE_DEFINITION.sub(_GAP, text)
    text = _REFERENCE_LINK.sub(
        lambda m: m.group(1) if m.group(2).strip().lower() in defined else m.group(0), text)
    text = _INLINE_LINK.sub(_inline_link, text)

    def bare(match: re.Match) -> str:
        url = match.group(0)
        kept = len(url.rstrip(_URL_TRAILING))
        return _LINK + url[kept:]

    text = _LINK_AUTOLINK.sub(_LINK, _LINK_ASIDE.sub(_GAP, _URL.sub(bare, text)))
    return text.replace(_LINK, URL_PLACEHOLDER)


def _inline_link(match: re.Match) -> str:
    """``[text](url)`` keeps its text; with no text it goes; with a citation number for text (``[[1]](url)``)
    it is a bare URL that the sentence needs ("Sources: [link]")."""
    label = match.group(1)
    if not label.strip():
        return _GAP
    return _LINK if _NUMBER_TEXT.match(label) else label


def _remove_citations(text: str) -> str:
    text = _CJK_CITATION.sub(_GAP, text)
    text = _FOOTNOTE_REF.sub(_GAP, text)

    def numeric(match: re.Match) -> str:
        return _GAP if _reads_as_citation(text, match) else match.group(0)

    return _CITATION_CHAIN.sub(numeric, text)


def _reads_as_citation(text: str, match: re.Match) -> bool:
    start, end = match.span()
    following = text[end:end + 1]
    if following in ("(", ":", "="):  # a link, a reference definition, an assignment target
        return False
    before = text[:start]
    line_before = before[before.rfind("\n") + 1:]
    attached = line_before.rstrip(" \t")
    if not attached:
        # "[1] Smith et al." opens a reference line; "[1, 2, 3] is a list" does not.
        return not re.search(r"\s", match.group(0))
    if attached[-1] in _VALUE_CONTEXT:
        return False
    spaced_inside = re.search(r"[,，;]\s", match.group(0)) is not None
    if spaced_inside and attached != line_before:
        return False  # "the list [1, 2, 3]": a value written with spaces, set off from the word
    # Attached to a code-like name (a[1], row_ids[2]) it is an index.
    return not (attached == line_before and _INDEXED_NAME.search(attached))


def _close_gaps(text: str) -> str:
    """Remove the gap marks, leaving one space between words and none before closing punctuation."""
    if _GAP not in text:
        return text
    text = _EMPTY_WRAPPER.sub(_GAP, text)

    def tidy(match: re.Match) -> str:
        left, right = match.group(1), match.group(2)
        start, end = match.span()
        at_line_start = start == 0 or text[start - 1] == "\n"
        at_line_end = end == len(text) or text[end] == "\n"
        if at_line_start:
            return left  # indentation before the removed span stays
        if at_line_end or text[end] in _CLOSING:
            return ""
        return " " if (left or right) else ""

    return _GAP_RUN.sub(tidy, text)

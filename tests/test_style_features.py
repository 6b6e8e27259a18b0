"""Style features of answer texts (core.io.style_features): named edge cases, a cross-check against a slow,
obvious line-by-line implementation with Python's ``re``, and Hypothesis properties."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.io import style_features
from core.io.style_features import SIDE_COLUMNS, STYLE_FEATURES, StyleFeatureError, answer_features, pair_features


def reference(text: str) -> tuple[int, int, int, int]:
    """The definitions read literally: walk the lines, drop fenced blocks, match each line."""
    prose, fence = [], None
    for line in text.split("\n"):
        opener = re.match(r"[ \t]*(```|~~~)", line)
        if fence is None:
            if opener:
                fence = opener.group(1)
                continue
            prose.append(line)
        elif opener and opener.group(1) == fence:
            fence = None
    headers = sum(bool(re.match(r"#{1,6}[ \t]", line)) for line in prose)
    lists = sum(bool(re.match(r"[ \t]*(?:[-*+]|[0-9]+[.)])[ \t]", line)) for line in prose)
    bold = sum(len(re.findall(r"\*\*[^*\n]+\*\*", line)) + len(re.findall(r"__[^_\n]+__", line)) for line in prose)
    return len(text), headers, lists, bold


def features(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in answer_features([text]).iloc[0])


@pytest.mark.parametrize("text, expected", [
    ("", (0, 0, 0)),
    ("# Title\n## Sub\n###### six\n####### seven", (3, 0, 0)),
    ("#hashtag and #another\n#\n# ", (1, 0, 0)),  # '#' needs a space after it; '# ' alone counts
    ("  # indented is not a header", (0, 0, 0)),
    ("1.5 million people\n2) two\n10. ten\n3.x", (0, 2, 0)),
    ("- a\n  * b\n\t+ c\n-no\n**bold** start", (0, 3, 1)),
    ("**unclosed bold\nand ** across ** lines", (0, 0, 1)),  # spans stay on one line
    ("**outer __inner__ outer**", (0, 0, 2)),  # one span of each kind
    ("****\n***a***\n**a**b**", (0, 0, 2)),
    ("```python\n# comment\n- not a list\n**x**\n```\n# real", (1, 0, 0)),
    ("text\n```\n# inside an unclosed fence\n- item", (0, 0, 0)),
    ("~~~\n```\n# still code\n~~~\n# prose", (1, 0, 0)),  # a block closes with its own fence kind
    ("   ```\n# code\n   ```\n- item", (0, 1, 0)),  # indented fences count
    ("# Title\r\n- item\r\n**b**\r\n", (1, 1, 1)),  # CRLF line ends
    ("## Über\n- naïve **café** 日本語\n1. ✓", (1, 2, 1)),  # length in characters, not bytes
])
def test_named_edge_cases(text, expected):
    """Expected (headers, lists, bold) counted by hand; length is len(text), in characters."""
    assert features(text) == (len(text), *expected) == reference(text)


def test_missing_answers_have_missing_features_not_zeros():
    frame = answer_features(pd.Series(["- a", None, np.nan, ""], index=[5, 6, 7, 8], dtype=object))
    assert list(frame.columns) == list(STYLE_FEATURES)
    assert list(frame.index) == [5, 6, 7, 8]
    assert frame.isna().all(axis=1).tolist() == [False, True, True, False]
    assert frame.loc[8].tolist() == [0, 0, 0, 0] and frame.loc[5, "lists"] == 1
    assert answer_features([None, None]).isna().all().all()


def test_pair_features_columns_and_order():
    frame = pair_features(pd.Series(["# h\n- x", "ab", None]), pd.Series(["**b**", "- 1\n- 2", "x"]))
    assert list(frame.columns) == [c for pair in SIDE_COLUMNS.values() for c in pair]
    assert frame["len_a"].tolist()[:2] == [7, 2] and pd.isna(frame.loc[2, "len_a"])
    assert frame["headers_a"].tolist()[:2] == [1, 0] and frame["lists_b"].tolist() == [0, 2, 0]
    assert frame["bold_b"].tolist() == [1, 0, 0] and frame.loc[2, "len_b"] == 1


def test_inputs_of_every_text_kind_agree():
    texts = ["# a", None, "**b** - c", "- d\n- e"]
    expected = answer_features(texts)
    for variant in (pd.Series(texts, dtype="string[pyarrow]"), pd.Series(texts, dtype="str"),
                    pa.array(texts), pa.array(texts, type=pa.large_string()), pa.chunked_array([texts[:2], texts[2:]])):
        pd.testing.assert_frame_equal(answer_features(variant).reset_index(drop=True), expected)
    assert features("42") == (2, 0, 0, 0) and answer_features([7, 2.5])["length"].tolist() == [1, 3]


def test_bad_input_is_named():
    with pytest.raises(StyleFeatureError, match=r"rows 2\b"):
        answer_features(["fine", "\ud800 lone surrogate"])
    with pytest.raises(StyleFeatureError, match="answer_b"):
        pair_features(["a", "b"], ["c"])
    with pytest.raises(StyleFeatureError, match="must hold text"):
        answer_features(pa.array([1, 2]))


def test_chunks_and_neighbouring_texts_do_not_interact(monkeypatch):
    """Texts are contiguous in memory: a run of '*' or '_' ending one text and starting the next, or a
    fence left open at the end of one, must not leak into its neighbour; nor may chunk borders."""
    texts = ["a _", "_b__ __", "x**", "**y** **", "```", "# h", "~~~\n", "- l"] * 5
    monkeypatch.setattr(style_features, "ROWS_PER_CHUNK", 3)
    got = answer_features(texts).to_numpy()
    assert (got == np.array([reference(t) for t in texts])).all()


MARKDOWN_TOKENS = ["```", "~~~", "**", "__", "*", "_", "# ", "## ", "####### ", "#x", "- ", "+ ", "1. ", "12) ", "3.5",
                   "\n", "\n", "\r\n", " ", "  ", "\t", "x", "word", "é", "日本", "   ```py\n", "\n~~~\n"]
markdownish = st.lists(st.sampled_from(MARKDOWN_TOKENS), max_size=40).map("".join)
any_text = st.text(alphabet=st.sampled_from(list("#*_-+.)`~ \t\n\r0123456789abé日")), max_size=80)
FENCED_MARKDOWN = "```\n# h\n- item\n1. one\n**bold** __b__\n```\n"


@settings(max_examples=120, deadline=None)
@given(st.lists(st.one_of(markdownish, any_text, st.text(max_size=30)), min_size=1, max_size=12))
def test_vectorised_counts_equal_the_line_by_line_reference(texts):
    got = answer_features(texts).to_numpy()
    assert (got == np.array([reference(t) for t in texts])).all()
    assert (got >= 0).all() and got[:, 0].tolist() == [len(t) for t in texts]


@settings(max_examples=80, deadline=None)
@given(st.one_of(markdownish, any_text))
def test_a_fenced_block_of_markdown_changes_nothing_but_length(text):
    before = features(text)
    prepended = features(FENCED_MARKDOWN + text)
    assert prepended[1:] == before[1:] and prepended[0] == before[0] + len(FENCED_MARKDOWN)
    if not _ends_inside_fence(text):  # appended after the text, outside any open block
        assert features(text + "\n" + FENCED_MARKDOWN)[1:] == before[1:]


@settings(max_examples=80, deadline=None)
@given(markdownish, markdownish)
def test_counts_add_up_over_lines_of_fence_free_texts(first, second):
    first, second = first.replace("`", "").replace("~", ""), second.replace("`", "").replace("~", "")
    joined = features(first + "\n" + second)
    assert joined[1:] == tuple(a + b for a, b in zip(features(first)[1:], features(second)[1:]))


def _ends_inside_fence(text: str) -> bool:
    """True when the text leaves a fenced block open (then appended text would be code)."""
    return reference(text + "\n# probe")[1] == reference(text)[1]


# -- the fast kernel on realistic markdown: chunks, threads, fences, CRLF ----------------------------------
MARKDOWN_LINES = st.one_of(
    st.builds(lambda level, title: "#" * level + " " + title, st.integers(1, 7), st.text("ab *_é", max_size=8)),
    st.builds(lambda indent, bullet, item: indent + bullet + " " + item, st.sampled_from(["", "  ", "\t", "    "]),
              st.sampled_from(["-", "*", "+", "1.", "12)", "3.5", "**"]), st.text("ab*_ 日", max_size=10)),
    st.builds(lambda a, b: f"{a} **{b}** and __{a}__ ***{b}*** x*y a_b", st.text("ab ", min_size=1, max_size=5),
              st.text("cd_*", max_size=5)),
    st.sampled_from(["```", "```python", "   ```", "~~~", "``", "", "plain prose", "# comment in code?",
                     "****", "__ __", "text **unclosed", "close** it"]),
)
MARKDOWN_DOCUMENT = st.builds(lambda lines, crlf, final: ("\r\n" if crlf else "\n").join(lines) + final,
                              st.lists(MARKDOWN_LINES, max_size=14), st.booleans(), st.sampled_from(["", "\n"]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(MARKDOWN_DOCUMENT, st.none()), min_size=1, max_size=40), st.integers(1, 9))
def test_the_fast_kernel_equals_the_reference_on_random_markdown(texts, rows_per_chunk):
    """Many documents at once, cut into chunks of any size and counted by two threads: the counts of every
    document equal the line-by-line reference's (missing ones stay missing)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(style_features, "ROWS_PER_CHUNK", rows_per_chunk)
        patch.setattr(style_features, "PARALLEL_MIN_BYTES", 0)
        got = answer_features(texts)
    present = [t is not None for t in texts]
    assert got.isna().all(axis=1).tolist() == [not p for p in present]
    expected = np.array([reference(t) for t in texts if t is not None]).reshape(-1, 4)
    assert (got[present].to_numpy(dtype=np.int64) == expected).all()


def test_a_chunk_without_code_and_one_with_code_count_alike():
    """Bold spans are counted in place when a chunk has no fenced block, in a blanked copy when it has one:
    the same prose gives the same counts either way, and code never counts."""
    prose = "**a** __b__ **c**\n- **d**"
    fenced = "```\n**in code** __x__\n```\n" + prose
    counts = answer_features([prose, prose, fenced, "~~~\n**open block**"])
    assert counts["bold"].tolist() == [4, 4, 4, 0]

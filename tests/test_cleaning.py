"""Answer cleaning: a table of tricky cases per rule, each rule switched off, and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.llm.cleaning import CleaningRules, clean_answer

ALL_RULES = CleaningRules()
FENCED = "```python\nurl = 'https://x.com'  # see [1] 😀\n\tprint(a[1])   \n\n\n\nx[0]\n```"

CASES = [
    # (name, input, expected with every rule on)
    ("citation attached", "Paris is the capital of France[1]. It is big [2][3].",
     "Paris is the capital of France. It is big."),
    ("citation list", "Water boils at 100 °C [1,2], at sea level[3, 4].",
     "Water boils at 100 °C, at sea level."),
    ("citation range", "Known since 1905 [2-4] and since.", "Known since 1905 and since."),
    ("cjk citation", "北京是中国的首都【1】。", "北京是中国的首都。"),
    ("cjk citation with source", "很好【2†source】结束", "很好结束"),
    ("footnote reference", "Footnote[^1] here.", "Footnote here."),
    ("reference list opens lines", "[1] Smith 2020\n[2] Doe 2021", "Smith 2020\nDoe 2021"),
    ("list literal with spaces", "The list [1, 2, 3] has three items.", "The list [1, 2, 3] has three items."),
    ("list literal at line start", "[1, 2, 3] is a list", "[1, 2, 3] is a list"),
    ("assigned list", "x = [1,2] and f([3])", "x = [1,2] and f([3])"),
    ("zero index", "the first is y[0] here", "the first is y[0] here"),
    ("single letter index", "take a[1] and b[2][3]", "take a[1] and b[2][3]"),
    ("identifier index", "use row_ids[2] or self.items[1]", "use row_ids[2] or self.items[1]"),
    ("checkboxes", "- [ ] todo\n- [x] done", "- [ ] todo\n- [x] done"),
    ("inline code kept", "Use `a[1]` and `https://x.com` 🎉 ok", "Use `a[1]` and `https://x.com` ok"),
    ("double backtick code", "Run ``x = `[1]` `` now[1].", "Run ``x = `[1]` `` now."),
    ("fenced code kept", FENCED + "\ntext[1]", FENCED + "\ntext"),
    ("tilde fence kept", "~~~\nhttps://a.com 😀\n~~~", "~~~\nhttps://a.com 😀\n~~~"),
    # a URL in a sentence becomes [link] (removed outright it left "See for more.": see core.llm.cleaning)
    ("bare url", "See https://example.com/a_(b)?q=1 for more.", "See [link] for more."),
    ("www url", "Go to www.example.org, then", "Go to [link], then"),
    ("emoji inside a url", "see https://😀a.example now", "see [link] now"),
    ("url after cjk", "详见https://zh.wikipedia.org/wiki/x。也见www.a.cn/b", "详见[link]。也见[link]"),
    ("markdown link", "Read [the docs](https://docs.python.org/3/ \"Docs\") now.", "Read the docs now."),
    ("image", "![a chart](http://x/y.png) here", "a chart here"),
    ("citation link", "Sources: [[1]](https://a.com) [[2]](https://b.com)", "Sources: [link] [link]"),
    ("reference link", "Text with ref [link][1].\n\n[1]: https://a.com \"Title\"", "Text with ref link."),
    ("autolink", "Visit <https://example.com>.", "Visit [link]."),
    ("url in parentheses", "A tool (https://a.com) works", "A tool works"),  # an aside: nothing is lost
    # real-looking answers: the sentence stays whole, the site is not shown
    ("docs lead-in", "For the full API, read the docs at https://docs.python.org/3/library/asyncio.html.",
     "For the full API, read the docs at [link]."),
    ("download and install", "Download it from https://www.python.org/downloads/ and install it.",
     "Download it from [link] and install it."),
    ("source label", "Source: https://en.wikipedia.org/wiki/Photosynthesis", "Source: [link]"),
    ("see parenthetical", "Use a virtual environment (see https://docs.python.org/3/tutorial/venv.html).",
     "Use a virtual environment (see [link])."),
    ("reference list", "Further reading:\n- https://arxiv.org/abs/1706.03762\n- https://jalammar.github.io/x/",
     "Further reading:\n- [link]\n- [link]"),
    ("link with text", "See [the style guide](https://peps.python.org/pep-0008/) for naming.",
     "See the style guide for naming."),
    ("only links", "https://example.com\n- <https://b.example>", ""),
    ("emoji", "Great job 🎉! 😀 Done", "Great job! Done"),
    ("zwj family", "Family 👨\u200d👩\u200d👧 here", "Family here"),
    ("flag", "France 🇫🇷 and 🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f end",
     "France and end"),
    ("skin tone", "ok 👍🏽 ok", "ok ok"),
    ("variation selector", "love ❤️ and ♥ and ✔\ufe0e", "love and ♥ and ✔"),
    ("keycap keeps digit", "1️⃣ Install", "1 Install"),
    ("math and symbols kept", "∑ x ≤ 2 → ✓ © ± ∞ ½", "∑ x ≤ 2 → ✓ © ± ∞ ½"),
    ("cjk text kept", "你好，世界！日本語テキスト、한국어。", "你好，世界！日本語テキスト、한국어。"),
    ("indented emoji line", "- a\n  🎉 b", "- a\n  b"),
    ("trailing spaces and blank runs", "one   \n\n\n\ntwo\t\n", "one\n\ntwo"),
    ("windows line ends", "a\r\n\r\n\r\nb", "a\n\nb"),
    ("zero width", "a\u200bb\ufeff", "ab"),
    ("indentation kept", "1. item\n    - nested\n        code", "1. item\n    - nested\n        code"),
    # an unclosed fence runs to the end; only the text's own trailing blank lines go
    ("unclosed fence", "```\nhttps://a.com [1]\n\n\n", "```\nhttps://a.com [1]"),
]


@pytest.mark.parametrize("text, expected", [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_clean_answer_table(text, expected):
    assert clean_answer(text) == expected


@pytest.mark.parametrize("rule, text, expected", [
    ("urls", "See https://a.com now[1] 😀", "See https://a.com now"),
    ("citations", "See https://a.com now[1] 😀", "See [link] now[1]"),
    ("emoji", "See https://a.com now[1] 😀", "See [link] now 😀"),
    ("whitespace", "a   \n\n\n\nb", "a   \n\n\n\nb"),
])
def test_each_rule_can_be_switched_off(rule, text, expected):
    assert clean_answer(text, CleaningRules(**{rule: False})) == expected


def test_no_rules_leaves_text_unchanged():
    text = "A [1] https://a.com 😀  \n\n\n\nB"
    assert clean_answer(text, CleaningRules(False, False, False, False)) == text


def test_no_url_fragment_is_left_dangling():
    """Removed outright, a URL left lead-ins hanging ("read the docs at."): none may end a sentence now."""
    lead_ins = ("at", "visit", "see", "from", "to", "here:", "source:", "详见")
    for text in ("Read the docs at https://a.example/x.", "Visit www.a.example.", "See https://a.example.",
                 "Get it from https://a.example.", "Go to https://a.example!", "More here: https://a.example",
                 "Source: https://a.example", "详见https://a.example。"):
        cleaned = clean_answer(text).rstrip(".!。").casefold()
        assert not cleaned.endswith(lead_ins), (text, cleaned)
        assert "a.example" not in cleaned


def test_rejects_non_text():
    with pytest.raises(TypeError, match="text must be a string"):
        clean_answer(None)  # type: ignore[arg-type]


prose = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="`~\r\x00\ue000\ue001"),
                max_size=80)


@settings(max_examples=150, deadline=None)
@given(before=prose, code=st.text(max_size=60).filter(lambda s: "```" not in s and "\r" not in s), after=prose)
def test_fenced_code_survives_byte_for_byte(before, code, after):
    block = f"```\n{code}\n```"
    assert block in clean_answer(f"{before}\n{block}\n{after}")


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="你好世界北京是中国的首都。，！？ abcxyz\n", max_size=80))
def test_plain_cjk_and_latin_text_keeps_every_character(text):
    cleaned = clean_answer(text)
    assert [c for c in cleaned if not c.isspace()] == [c for c in text if not c.isspace()]


# Pieces that interact: markers, URLs, links, emoji and joiners, brackets, CJK punctuation, blank lines.
tricky = st.lists(st.sampled_from(list("ab 1[]()【】^,.:\n\t😀👍🏽\u200d\ufe0f❤#*/=x_你好。!?-<>†")
                                  + ["https://", "www.", "[1]", "[^1]", "](", "\n\n\n", "- [ ] ", "a[1]", "[1, 2]",
                                     "(https://a.b)", "[t](https://a.b)"]), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(prose, tricky))
def test_cleaning_is_idempotent(text):
    once = clean_answer(text)
    assert clean_answer(once) == once

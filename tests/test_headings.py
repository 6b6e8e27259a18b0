"""Answer headings demoted below the Vote page's "Answer A/B" labels (core.campaign.headings)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.campaign.headings import ANSWER_TOP_LEVEL, demote_headings, heading_levels


def test_the_largest_heading_becomes_level_4_and_the_others_keep_their_distance():
    text = "# Title\n\nIntro.\n\n## Part\n\n### Detail\n"
    assert demote_headings(text) == "#### Title\n\nIntro.\n\n##### Part\n\n###### Detail\n"


def test_levels_stop_at_6():
    assert demote_headings("# A\n#### B\n###### C") == "#### A\n###### B\n###### C"


def test_a_text_whose_headings_are_small_enough_is_unchanged():
    for text in ("#### Small\n\ntext", "plain text, no heading", "", "##### x\n###### y"):
        assert demote_headings(text) == text


def test_a_text_starting_at_level_2_is_shifted_by_2():
    assert demote_headings("## Steps\n### One") == "#### Steps\n##### One"


def test_closing_hashes_and_indentation_follow_commonmark():
    assert demote_headings("  # Title ##\n#\n#NotAHeading\n    # indented code") == \
        "#### Title\n####\n#NotAHeading\n    # indented code"


def test_fenced_code_is_never_touched():
    text = ("# Real\n\n```python\n# a comment\n## another\nTitle\n===\n```\n\n~~~~\n# in tilde fence\n```\n"
            "# still code\n~~~~\n## After")
    expected = ("#### Real\n\n```python\n# a comment\n## another\nTitle\n===\n```\n\n~~~~\n# in tilde fence\n```\n"
                "# still code\n~~~~\n##### After")
    assert demote_headings(text) == expected


def test_an_unclosed_fence_runs_to_the_end():
    assert demote_headings("## Top\n```\n# code\n## code") == "#### Top\n```\n# code\n## code"


def test_a_fence_closes_only_with_the_same_character_and_at_least_its_length():
    text = "````\n```\n# code\n````\n# Heading"
    assert demote_headings(text) == "````\n```\n# code\n````\n#### Heading"


def test_setext_headings_become_atx_headings_of_their_new_level():
    text = "Big title\n=========\n\nSection\n-------\n\nbody"
    assert demote_headings(text) == "#### Big title\n\n##### Section\n\nbody"


def test_a_multi_line_paragraph_under_an_underline_is_one_heading():
    assert demote_headings("two line\ntitle\n===\ntext") == "#### two line title\ntext"


def test_a_dash_rule_after_a_blank_line_or_a_list_is_a_thematic_break():
    text = "# H\n\n---\n\n- item\n---\n> quote\n---"
    assert demote_headings(text) == "#### H\n\n---\n\n- item\n---\n> quote\n---"


def test_heading_levels_ignore_code_and_read_setext():
    assert heading_levels("A\n===\n```\n# no\n```\n## B\nC\n---") == [1, 2, 2]


def test_a_bad_top_level_is_refused():
    with pytest.raises(ValueError, match="top must be a heading level"):
        demote_headings("# x", top=7)


@given(st.lists(st.sampled_from(["# a", "## b", "### c", "text", "", "```", "# code?", "Title", "===", "---",
                                 "    # indented", "- item", "~~~"]), max_size=25))
def test_after_demotion_no_heading_is_larger_than_the_labels(lines):
    text = "\n".join(lines)
    demoted = demote_headings(text)
    assert all(level >= ANSWER_TOP_LEVEL for level in heading_levels(demoted))
    assert len(heading_levels(demoted)) == len(heading_levels(text))
    assert demote_headings(demoted) == demoted  # idempotent

"""The Hypothesis profiles of tests/conftest.py: `dev` caps every property test, its own @settings too."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLE_CAP, HYPOTHESIS_PROFILE, cap_examples


def counted(max_examples: int):
    """A property test asking for ``max_examples`` in its own @settings, and the list its calls land in."""
    calls: list[int] = []

    @settings(max_examples=max_examples, deadline=None, database=None)
    @given(st.integers())
    def property_test(x):
        calls.append(x)

    return property_test, calls


def test_a_cap_lowers_a_tests_own_settings():
    test, calls = counted(300)
    cap_examples(test, 7)
    test()
    assert 0 < len(calls) <= 7


def test_a_cap_leaves_a_smaller_request_and_the_other_settings_alone():
    test, calls = counted(5)
    cap_examples(test, 7)
    test()
    assert 0 < len(calls) <= 5
    assert test._hypothesis_internal_use_settings.deadline is None


def test_a_plain_function_is_left_alone():
    def plain():
        pass

    cap_examples(plain, 7)
    assert not hasattr(plain, "_hypothesis_internal_use_settings")


@pytest.mark.skipif(HYPOTHESIS_PROFILE != "dev", reason="only the dev profile caps below the tests' own settings")
def test_the_dev_profile_caps_at_25():
    assert EXAMPLE_CAP == 25 and settings.default.max_examples == 25


@settings(max_examples=300, deadline=None, database=None)
@given(st.integers())
def test_this_module_is_capped_at_collection(x):
    assert isinstance(x, int)


def test_collection_applied_the_cap():
    """pytest_collection_modifyitems capped the test above (300 asked) to the profile's cap."""
    assert test_this_module_is_capped_at_collection._hypothesis_internal_use_settings.max_examples == EXAMPLE_CAP

"""core.validation: one rule and one wording per setting, whichever module asks."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import EvalBoardError, SettingError
from core.leaderboard.aggregate import LeaderboardError, LeaderboardSettings, aggregate
from core.leaderboard.task_bootstrap import TaskBootstrapError, bootstrap_mean_ci
from core.ranking import RankingError, RankSettings
from core.ranking.bootstrap import BootstrapError
from core.stats.friedman import FriedmanError, nemenyi_q
from core.validation import (
    check_alpha,
    check_choice,
    check_integer,
    check_max_iter,
    check_positive,
    check_replicates,
    check_seed,
    check_share,
)

anything = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                     st.text(max_size=5), st.lists(st.integers(), max_size=2))


@given(anything)
def test_alpha_is_accepted_exactly_when_a_real_number_strictly_between_0_and_1(value):
    valid = not isinstance(value, (bool, str, list, type(None))) and 0 < value < 1
    if valid:
        assert check_alpha(value) == float(value)
    else:
        with pytest.raises(SettingError) as info:
            check_alpha(value)
        assert str(info.value) == f"`alpha` must lie strictly between 0 and 1, not {value!r}"


@given(anything, st.integers(-3, 3))
def test_integer_is_accepted_exactly_when_whole_and_at_least_the_minimum(value, minimum):
    valid = isinstance(value, int) and not isinstance(value, bool) and value >= minimum
    if valid:
        assert check_integer(value, "n", minimum) == value
    else:
        with pytest.raises(SettingError, match=f"^`n` must be .*, not {re.escape(repr(value))}$"):
            check_integer(value, "n", minimum)


@pytest.mark.parametrize("minimum, wanted", [(0, "a non-negative integer"), (1, "a positive integer"),
                                             (2, "an integer >= 2"), (-1, "an integer >= -1")])
def test_integer_wording_names_the_bound_plainly(minimum, wanted):
    with pytest.raises(SettingError, match=f"^`k` must be {wanted}, not 2.5$"):
        check_integer(2.5, "k", minimum)


@given(anything)
def test_seed_is_a_non_negative_integer_or_none_where_allowed(value):
    valid = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if valid:
        assert check_seed(value) == value
    else:
        with pytest.raises(SettingError, match="^`seed` must be a non-negative integer, not "):
            check_seed(value)
    assert check_seed(None, allow_none=True) is None


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_share_lies_in_the_unit_interval(value):
    closed, half_open = 0 <= value <= 1, 0 <= value < 1  # NaN fails both
    for below_one, valid in ((False, closed), (True, half_open)):
        if valid:
            assert check_share(value, "p", below_one=below_one) == value
        else:
            with pytest.raises(SettingError, match=r"^`p` must lie in \[0, 1[\])], not "):
                check_share(value, "p", below_one=below_one)


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_a_tolerance_is_a_finite_positive_number(value):
    if math.isfinite(value) and value > 0:
        assert check_positive(value, "tol") == value
    else:
        with pytest.raises(SettingError, match="^`tol` must be a finite number > 0"):
            check_positive(value, "tol")


def test_numpy_numbers_are_numbers_and_come_back_as_python_numbers():
    assert type(check_alpha(np.float32(0.25))) is float
    assert type(check_replicates(np.int64(7))) is int and check_replicates(np.int64(7)) == 7
    assert check_max_iter(np.uint8(3)) == 3
    with pytest.raises(SettingError):
        check_replicates(np.bool_(True))


def test_choice():
    assert check_choice("bt", "scheme", ("bt", "winrate")) == "bt"
    with pytest.raises(SettingError, match="^`scheme` must be one of bt, winrate, not 'elo'$"):
        check_choice("elo", "scheme", ("bt", "winrate"))


def test_a_module_keeps_its_own_error_class():
    with pytest.raises(BootstrapError):
        check_alpha(2.0, error=BootstrapError)


@pytest.mark.parametrize("call, error", [
    (lambda: RankSettings(alpha=1.5), BootstrapError),
    (lambda: RankSettings(replicates=0), BootstrapError),
    (lambda: RankSettings(seed=-1), RankingError),
    (lambda: aggregate(None, LeaderboardSettings(alpha=1.5)), LeaderboardError),
    (lambda: bootstrap_mean_ci([0.1, 0.2], alpha=1.5), TaskBootstrapError),
    (lambda: nemenyi_q(3, 1.5), FriedmanError),
])
def test_every_module_says_the_same_about_the_same_setting(call, error):
    """The old copies said "must be strictly between … got", "must lie strictly between … not", …"""
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, EvalBoardError) and isinstance(info.value, ValueError)
    text = str(info.value)
    assert text in ("`alpha` must lie strictly between 0 and 1, not 1.5",
                    "`replicates` must be a positive integer, not 0",
                    "`seed` must be a non-negative integer, not -1")


def test_the_bias_diagnostics_use_the_same_wording():
    import pandas as pd

    from core.bias.diagnose import diagnose

    with pytest.raises(SettingError, match=r"^`alpha` must lie strictly between 0 and 1, not 1.5$"):
        diagnose(pd.DataFrame(), alpha=1.5)

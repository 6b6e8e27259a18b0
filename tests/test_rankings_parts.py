"""The Rankings page's calls (core.ranking.inputs.rank_prepared and rank_prepared_groups on the shared
prepared request: one policy decision, golden votes removed once, slim group frames) give what
``rank_input`` gives for every scheme and annotator policy."""

from __future__ import annotations

import io

import numpy as np
import pytest

import pages._rankings_parts as parts
from core.filters import Filters
from core.io import load
from core.ranking import RankSettings
from core.ranking.inputs import rank_input
from core.samples import arena_demo
from pages import _request as request_cache


@pytest.fixture(scope="module")
def votes():
    buffer = io.BytesIO()
    arena_demo(n_votes=4000, seed=2).to_csv(buffer, index=False)
    return load(buffer.getvalue(), name="arena.csv").frame


@pytest.mark.parametrize("scheme", ["bt", "winrate", "stratified", "ipw", "adjusted"])
@pytest.mark.parametrize("policy", ["exclude", "downweight", "keep"])
def test_page_fits_equal_rank_input(votes, monkeypatch, scheme, policy):
    monkeypatch.setattr(request_cache, "load_dataset", lambda *args, **kwargs: votes)
    request_cache.prepared_request.clear()  # its key ("db", 1, "sha") would be another test's otherwise
    ci = "none" if scheme == "adjusted" else "bootstrap"
    page = parts.compute.__wrapped__("db", 1, "sha", Filters(), scheme, ci, 50, 0, policy)["ranking"]
    reference = rank_input("votes", votes, RankSettings(scheme=scheme, ci=ci, replicates=50, seed=0),
                           annotators=policy)
    assert [r.model for r in page.rows] == [r.model for r in reference.rows]
    np.testing.assert_allclose([r.rating for r in page.rows], [r.rating for r in reference.rows], rtol=1e-9)
    np.testing.assert_allclose([r.ci_low for r in page.rows], [r.ci_low for r in reference.rows], rtol=1e-9)
    assert page.fit == reference.fit and page.policy == reference.policy
    unqualified = page.policy.unqualified_annotators
    for by in ("game_id", "dimension"):
        groups = parts.compute_groups.__wrapped__("db", 1, "sha", Filters(), scheme, 0, policy, unqualified, by)
        expected = rank_input("votes", votes, RankSettings(scheme=scheme, ci="none", seed=0), by=[by],
                              annotators=policy)
        assert groups.keys() == expected.keys()
        for key, ranking in expected.items():
            np.testing.assert_allclose([r.rating for r in groups[key].rows], [r.rating for r in ranking.rows],
                                       rtol=1e-9)

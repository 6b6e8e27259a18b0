"""Offline eval-set categories are named by distinctive content words with a typical query, and the
automatic checks read as what they make sure of."""

from __future__ import annotations

import numpy as np

from core.evalset.audit import Audit
from core.evalset.categories import STOP_WORDS, cluster_names, short, typical_queries
from core.evalset.results import check_sentence

STEW = ["What is the best beef stew recipe?", "Does beef stew always need wine?",
        "How long should beef stew simmer?", "Best way to thicken a beef stew?"]
KYOTO = ["What is the best way to travel around Kyoto?", "Does Kyoto always get crowded in spring?",
         "Which Kyoto temples should a traveller visit?", "Best Kyoto travel pass for temples?"]


def test_cluster_names_are_distinctive_content_words():
    labels = np.array([0] * 4 + [1] * 4)
    names = cluster_names(STEW + KYOTO, labels)
    assert set(names[0].split(" / ")) >= {"beef", "stew"} and "kyoto" in names[1].split(" / ")
    for name in names.values():
        assert not set(name.split(" / ")) & STOP_WORDS  # never "best / always / does"


def test_typical_query_is_nearest_the_centroid():
    emb = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [0.6, 0.8], [0.8, 0.6]])  # unit vectors
    texts = ["a", "b", "c", "d", "e"]
    assert typical_queries(texts, emb, ["x", "x", "y", "y", "y"]) == {"x": "a", "y": "d"}
    assert short("word " * 40, 20).endswith("…") and len(short("word " * 40, 20)) == 20


def test_checks_read_as_what_they_ensure():
    passed, text = check_sentence({"duplicate_selected": "passed", "excluded_category_selected": "passed"})
    assert passed and text == "Automatic checks passed: no duplicate selected, no query from an excluded category."
    failed, text = check_sentence({"duplicate_selected": ["q1", "q2"], "excluded_category_selected": "passed"})
    assert not failed and text == "Automatic checks failed: duplicates selected: q1, q2."
    audit = Audit(checks={"duplicate_selected": "passed", "invalid_status_selected": ["q9"]})
    markdown = audit.to_markdown()
    assert "- no duplicate selected: passed" in markdown and '- queries with an invalid status: ["q9"]' in markdown

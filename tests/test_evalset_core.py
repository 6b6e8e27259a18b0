"""Eval-set builder, offline pieces: Hamilton allocation, normalisation and pre-filter, union–find,
fuzzy category matching, embeddings and the neighbour search, selection rules, pool reading."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.evalset.allocation import hamilton
from core.evalset.categories import (
    OTHER,
    assign_by_keywords,
    match_category,
    with_other,
)
from core.evalset.embeddings import tfidf_embed
from core.evalset.knn import nearest_neighbours
from core.evalset.normalise import (
    exact_duplicates,
    normalise,
    prefilter,
    readable_share,
)
from core.evalset.pool import read_pool
from core.evalset.scoring import heuristic_scores
from core.evalset.selection import SelectionSettings, Selector, SliceQuota
from core.evalset.unionfind import UnionFind, components
from core.io import InputError

# --- Hamilton ---------------------------------------------------------------------------------------


def test_hamilton_worked_example_even_split():
    # the method's worked example: 500/300/200, 100 places -> quotas 50/30/20 exactly
    assert hamilton({"A": 500, "B": 300, "C": 200}, 100) == {"A": 50, "B": 30, "C": 20}


def test_hamilton_worked_example_largest_remainders():
    # 1000 queries, 33 places: quotas 16.5/9.9/6.6, floors 16/9/6 (31), remainders .5/.9/.6 -> B and C
    assert hamilton({"A": 500, "B": 300, "C": 200}, 33) == {"A": 16, "B": 10, "C": 7}


def test_hamilton_equal_remainders_go_to_the_larger_category_then_by_name():
    # quotas 1.5/1.5/1.0 for 4 of 30/30/20: one place left, equal remainders .5/.5 -> name order
    assert hamilton({"b": 30, "a": 30, "c": 20}, 4) == {"b": 1, "a": 2, "c": 1}
    # quotas 0.5 (x2) and 0.5 (x2) over sizes 11 vs 10: the larger category wins the tie
    assert hamilton({"small": 10, "big": 11}, 1) == {"small": 0, "big": 1}


def test_hamilton_a_category_never_gets_more_than_it_has():
    # quotas 0.998 and 499.002: floors 0 and 499, the last place to the larger remainder
    assert hamilton({"tiny": 2, "big": 1000}, 500) == {"tiny": 1, "big": 499}
    assert hamilton({"a": 3, "b": 2}, 10) == {"a": 3, "b": 2}  # more places than queries: all of them
    assert hamilton({"a": 3, "b": 0}, 2) == {"a": 2, "b": 0}


def test_hamilton_rejects_a_negative_size():
    with pytest.raises(ValueError, match="size"):
        hamilton({"a": 1}, -1)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=4), st.integers(1, 500), min_size=1, max_size=12),
       st.integers(0, 3000))
def test_hamilton_sums_exactly_and_stays_within_one_of_the_quota(counts, size):
    alloc = hamilton(counts, size)
    total = sum(counts.values())
    assert sum(alloc.values()) == min(size, total)
    assert all(0 <= alloc[c] <= counts[c] for c in counts)
    if size <= total and all(size * n / total <= n for n in counts.values()):
        for name, n in counts.items():  # no category exhausted: Hamilton's quota property
            quota = size * n / total
            assert abs(alloc[name] - quota) < 1 + 1e-9


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from("abcdefgh"), st.integers(1, 100), min_size=1), st.integers(0, 200),
       st.randoms())
def test_hamilton_does_not_depend_on_the_order_of_categories(counts, size, rnd):
    items = list(counts.items())
    rnd.shuffle(items)
    assert hamilton(dict(items), size) == hamilton(counts, size)


# --- normalisation and pre-filter -------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("Hello,   World!!", "hello world"),
    ("  How do I   make\tpork?\n", "how do i make pork"),
    ("你好，世界！", "你好世界"),  # CJK punctuation removed
    ("「红烧肉」怎么做？", "红烧肉怎么做"),
    ("ＡＢＣ　１２３", "abc 123"),  # full-width letters, digits and space folded (NFKC)
    ("Straße", "strasse"),  # case folding, not just lower()
    ("pizza 🍕 near me?", "pizza 🍕 near me"),  # emoji are symbols, not punctuation: kept
    ("...!!!???", ""),
    ("¿Qué tal? «Bien»", "qué tal bien"),
    ("Привет, мир!", "привет мир"),
])
def test_normalise_table(text, expected):
    assert normalise(text) == expected


def test_exact_duplicates_keep_the_first_occurrence():
    texts = ["How to make pork?", "how to make pork", "Other", "HOW TO MAKE PORK!!", "other"]
    normalised, keeper = exact_duplicates(texts)
    assert keeper.tolist() == [0, 0, 2, 0, 2]
    assert normalised[3] == "how to make pork"


@pytest.mark.parametrize("text, keep, reason", [
    ("hello", False, "too_short"),  # 5 characters
    ("hello!", True, ""),  # 6
    ("  hi   ", False, "too_short"),
    ("如何解锁隐藏关卡", True, ""),  # Chinese letters are readable
    ("怎么改名", False, "too_short"),
    ("😀😀😀😀😀😀😀😀", False, "unreadable"),
    ("!!!!!!??????", False, "unreadable"),
    ("👍👍👍 ok 👍👍👍", False, "unreadable"),  # 2 readable of 8 non-space: 25%
    ("ok 👍👍👍 fine", True, ""),  # 6 of 9: 67%
    ("Как дела? 你好 hello", True, ""),  # mixed scripts
    ("١٢٣٤٥٦٧", True, ""),  # Arabic-Indic digits are digits
])
def test_prefilter_table(text, keep, reason):
    verdict = prefilter(text)
    assert (verdict.keep, verdict.reason) == (keep, reason)


def test_readable_share_counts_letters_and_digits_of_any_script():
    assert readable_share("ab!!") == 0.5
    assert readable_share("红烧肉？") == 0.75
    assert readable_share("   ") == 0.0


# --- union-find --------------------------------------------------------------------------------------


def test_union_find_components_named_cases():
    assert components(5, [], []).tolist() == [0, 1, 2, 3, 4]
    assert components(6, [0, 1, 4], [1, 2, 5]).tolist() == [0, 0, 0, 3, 4, 4]
    assert components(4, [3, 2, 1], [2, 1, 0]).tolist() == [0, 0, 0, 0]  # a chain, given backwards
    assert components(3, [1, 1], [1, 1]).tolist() == [0, 1, 2]  # self loops join nothing


def test_union_by_size_and_path_compression():
    uf = UnionFind(8)
    for a, b in [(0, 1), (2, 3), (0, 2), (4, 5), (6, 7), (4, 6), (0, 4)]:
        uf.union(a, b)
    assert uf.size[uf.find(7)] == 8
    uf.find(7)
    assert uf.parent[7] == uf.find(0)  # compressed: points at the root


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 30).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=40))))
def test_union_find_agrees_with_a_graph_search(case):
    n, edges = case
    labels = components(n, [a for a, _ in edges], [b for _, b in edges])
    adjacency = {i: set() for i in range(n)}
    for a, b in edges:
        adjacency[a].add(b)
        adjacency[b].add(a)
    for start in range(n):
        seen, stack = {start}, [start]
        while stack:
            for nxt in adjacency[stack.pop()] - seen:
                seen.add(nxt)
                stack.append(nxt)
        assert labels[start] == min(seen)


# --- fuzzy category matching -------------------------------------------------------------------------

KNOWN = ["Cooking", "Travel", "Account support", "Programming", OTHER]


@pytest.mark.parametrize("answer, expected", [
    ("Cooking", "Cooking"),  # exact
    ("cooking", "Cooking"),  # case-insensitive
    ("  TRAVEL ", "Travel"),
    ("Cookin", "Cooking"),  # similarity 0.92
    ("Programing", "Programming"),
    ("Travel & tourism", "Travel"),  # substring
    ("account", "Account support"),  # contained in a known name
    ("Finance", None),
    ("", None),
    (None, None),
    ("other", OTHER),
])
def test_match_category(answer, expected):
    assert match_category(answer, KNOWN) == expected


def test_similarity_threshold_is_two_thirds():
    # ratio("abcdef", "abcxyz") = 0.5 < 0.66, no substring: unmatched; "abcdex" vs "abcdef" = 0.83
    assert match_category("abcxyz", ["abcdef"]) is None
    assert match_category("abcdex", ["abcdef"]) == "abcdef"


def test_with_other_dedups_and_puts_other_last():
    assert with_other(["B", "other", "a", "b", " "]) == ["B", "a", OTHER]


def test_offline_keyword_assignment():
    cats = ["Cooking", "Travel plans", "美食做法", OTHER]
    assert assign_by_keywords(["best cooking tips", "my travel to Rome", "stock prices", "红烧肉的做法"], cats) == \
        ["Cooking", "Travel plans", OTHER, "美食做法"]


# --- embeddings and neighbours ------------------------------------------------------------------------


def test_offline_embeddings_are_unit_rows_and_rank_paraphrases_first():
    texts = ["how to make braised pork", "how to make braised pork belly", "weather in paris tomorrow",
             "红烧肉怎么做", "红烧肉的做法", ""]
    x = tfidf_embed(texts)
    norms = np.linalg.norm(x, axis=1)
    np.testing.assert_allclose(norms[:5], 1.0, rtol=1e-5)
    assert norms[5] == pytest.approx(1.0) or norms[5] == 0.0
    sims = x @ x.T
    assert sims[0, 1] > 0.75 > sims[0, 2]
    assert sims[3, 4] > sims[3, 0]  # Chinese works without word boundaries


def test_neighbour_search_is_exact_on_small_inputs():
    rng = np.random.default_rng(1)
    base = rng.normal(size=(40, 16))
    x = np.vstack([base, base + 0.1 * rng.normal(size=base.shape)])
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    nb = nearest_neighbours(x, k=3, floor=0.5)
    sims = x @ x.T
    np.fill_diagonal(sims, -np.inf)
    for i in range(x.shape[0]):
        want = np.sort(sims[i][sims[i] >= 0.5])[::-1][:3]
        got = np.sort(nb.sims[nb.rows == i])[::-1]
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_inverted_file_search_finds_nearly_all_near_duplicates():
    from core.evalset.demo_pool import demo_pool

    texts = [normalise(t) for t in demo_pool(3000, seed=3)["query"]]
    x = tfidf_embed(texts)
    exact = nearest_neighbours(x, floor=0.75, exact_up_to=10**9)
    ivf = nearest_neighbours(x, floor=0.75, exact_up_to=100)
    assert ivf.method.startswith("ivf")
    want = set(zip(*[v.tolist() for v in exact.pairs()[:2]]))
    got = set(zip(*[v.tolist() for v in ivf.pairs()[:2]]))
    assert got <= want | got and len(want) > 100
    assert len(want & got) / len(want) >= 0.95


def test_each_row_keeps_at_most_k_neighbours():
    x = np.ones((30, 4), np.float32) / 2.0  # all identical
    nb = nearest_neighbours(x, k=10, floor=0.75)
    assert np.bincount(nb.rows).tolist() == [10] * 30
    assert not np.any(nb.rows == nb.cols)


def test_dedup_keeps_one_canonical_per_component_and_asks_a_model_about_a_shortlist():
    from core.evalset.dedup import CANONICAL_CHOICES, semantic_dedup

    texts = [f"how do i cook rice {'well ' * (i % 5)}at home number {i}" for i in range(30)] + ["weather in oslo today"]
    emb = np.zeros((31, 4), np.float32)
    emb[:30, 0] = 1.0  # one component of 30 identical vectors
    emb[30, 1] = 1.0
    offline = semantic_dedup(texts, emb)
    canon = offline.canonical_of
    assert len(set(canon[:30].tolist())) == 1 and canon[30] == 30
    best = canon[0]
    assert texts[best].count("well") == 4  # most distinct words, then longest: a "well well well well" query
    asked = []

    def choose(groups):
        asked.extend(groups)
        return [len(g) - 1 for g in groups]

    with_model = semantic_dedup(texts, emb, choose=choose)
    [shortlist] = asked
    assert len(shortlist) == CANONICAL_CHOICES
    assert texts[with_model.canonical_of[0]] == shortlist[-1]
    assert 29 <= with_model.n_auto <= 30 * 10  # K = 10 neighbours each: enough edges to join all 30


# --- scoring heuristic ------------------------------------------------------------------------------


def test_heuristic_tags():
    s = heuristic_scores("Step by step, how do I set up unit tests in a table, without internet, only on weekends")
    assert s["is_procedural"] and s["needs_structured_output"] and s["has_heavy_constraints"]
    assert not s["is_trap_unreleased"]
    assert heuristic_scores("What is the next event in the game?")["is_trap_unreleased"]
    assert heuristic_scores("下个活动是什么")["is_trap_unreleased"]
    vague = heuristic_scores("is it fun")
    rich = heuristic_scores("Why does my sourdough bread in Lisbon turn dry at 230 C, and how can I fix it?")
    assert all(0 <= vague[k] <= 100 for k in ("specificity", "completeness", "depth"))
    assert rich["specificity"] > vague["specificity"] and rich["depth"] > vague["depth"]


# --- selection --------------------------------------------------------------------------------------


def _candidates(n_per: dict[str, int], seed: int = 0, tags: dict[str, float] | None = None):
    rng = np.random.default_rng(seed)
    rows = []
    for cat, n in n_per.items():
        for i in range(n):
            rows.append({"query_id": f"{cat}{i:03d}", "category": cat, "subcategory": "",
                         "score": float(rng.uniform(0, 100)),
                         **{t: bool(rng.random() < p) for t, p in (tags or {}).items()}})
    frame = pd.DataFrame(rows)
    for t in ("is_procedural", "needs_structured_output", "has_heavy_constraints", "is_trap_unreleased"):
        if t not in frame:
            frame[t] = False
    emb = np.eye(len(frame), dtype=np.float32)  # nobody similar
    return frame, emb


def test_selection_follows_hamilton_and_takes_the_best_first():
    frame, emb = _candidates({"A": 500, "B": 300, "C": 200})
    sel = Selector(frame, emb, SelectionSettings(33, slices=())).run()
    chosen = frame.iloc[list(sel.chosen)]
    assert chosen["category"].value_counts().to_dict() == {"A": 16, "B": 10, "C": 7}
    for cat, group in frame.groupby("category"):
        best = group.nlargest(len(chosen[chosen.category == cat]), "score")["query_id"]
        assert set(best) == set(chosen.loc[chosen.category == cat, "query_id"])
    assert set(sel.chosen.values()) == {"allocation"}


def test_inside_a_category_places_follow_its_subcategories():
    frame, emb = _candidates({"A": 40, "B": 40})
    frame.loc[frame["category"] == "A", "subcategory"] = ["x"] * 30 + ["y"] * 10
    sel = Selector(frame, emb, SelectionSettings(8, slices=())).run()
    chosen = frame.iloc[list(sel.chosen)]
    assert chosen.groupby(["category", "subcategory"]).size().to_dict() == {("A", "x"): 3, ("A", "y"): 1,
                                                                           ("B", ""): 4}


def test_slice_backfill_meets_the_minimum_within_the_buffer_and_then_swaps():
    frame, emb = _candidates({"A": 100, "B": 100}, tags={"is_procedural": 0.05})
    quotas = (SliceQuota("procedural", "is_procedural", 0.32, 4),)
    sel = Selector(frame, emb, SelectionSettings(20, slices=quotas, buffer=2)).run()
    chosen = frame.iloc[list(sel.chosen)]
    assert chosen["is_procedural"].sum() >= 7  # ceil(0.32 × 20)
    # exactly the size asked: backfills replace (they used to add up to `buffer` places); the buffer is reserves
    assert len(sel.chosen) == 20 and len(sel.reserves) == 2 and not set(sel.reserves) & set(sel.chosen)
    backfilled = [r for r, why in sel.chosen.items() if why.startswith("slice backfill: procedural")]
    assert backfilled and all(frame.loc[r, "is_procedural"] for r in backfilled)
    [report] = sel.slice_report
    assert report["met"] and report["target"] == 7


def test_disabled_slice_is_ignored_and_a_short_slice_is_reported():
    frame, emb = _candidates({"A": 50}, tags={"is_trap_unreleased": 0.0, "has_heavy_constraints": 0.02})
    quotas = (SliceQuota("trap", "is_trap_unreleased", 0.0, 0), SliceQuota("heavy", "has_heavy_constraints", 0.5, 2))
    sel = Selector(frame, emb, SelectionSettings(10, slices=quotas)).run()
    assert [r["slice"] for r in sel.slice_report] == ["heavy"]
    assert sel.slice_report[0]["after"] == int(frame["has_heavy_constraints"].sum())
    assert not sel.slice_report[0]["met"]


def test_similar_selected_pair_is_replaced_from_the_same_category():
    frame, emb = _candidates({"A": 6, "B": 6})
    frame["score"] = [90, 80, 70, 60, 50, 40, 95, 85, 75, 65, 55, 45]
    emb[1] = emb[0] * 0.9 + emb[1] * 0.1  # A001 nearly equals A000
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    sel = Selector(frame, emb, SelectionSettings(4, slices=())).run()
    ids = {frame.loc[r, "query_id"]: why for r, why in sel.chosen.items()}
    assert "A000" in ids and "A001" not in ids
    assert ids["A002"] == "replacement: similar to A000"
    assert sel.replacements[0]["dropped"] == "A001"


def test_rejection_draws_a_replacement_and_never_returns_the_rejected():
    frame, emb = _candidates({"A": 10, "B": 10})
    selector = Selector(frame, emb, SelectionSettings(4, slices=()))
    selector.run()
    first = [frame.loc[r, "query_id"] for r in selector.selection.chosen]
    unknown = selector.reject([first[0], "nope"])
    assert unknown == ["nope"]
    now = {frame.loc[r, "query_id"]: why for r, why in selector.selection.chosen.items()}
    assert first[0] not in now and len(now) == 4
    assert f"replacement: rejected {first[0]}" in now.values()


def test_reserves_go_where_a_larger_set_would_put_its_extra_places():
    frame, emb = _candidates({"A": 500, "B": 300, "C": 200})
    sel = Selector(frame, emb, SelectionSettings(33, slices=(), buffer=3)).run()
    assert len(sel.chosen) == 33 and set(sel.reserves.values()) == {"reserve"}
    # Hamilton for 33 places: A 16, B 10, C 7; for 36: A 18, B 11, C 7 -> two reserves of A, one of B
    assert frame.loc[list(sel.reserves), "category"].value_counts().to_dict() == {"A": 2, "B": 1}
    for cat in ("A", "B"):  # the best of their category after the chosen ones
        group = frame[frame.category == cat].nlargest(len(frame[frame.category == cat]), "score")["query_id"].tolist()
        taken = sum(frame.loc[r, "category"] == cat for r in sel.chosen)
        held = [frame.loc[r, "query_id"] for r in sel.reserves if frame.loc[r, "category"] == cat]
        assert set(held) == set(group[taken:taken + len(held)])


def test_reserves_are_not_similar_to_the_set_nor_to_each_other():
    frame, emb = _candidates({"A": 8})
    frame["score"] = [90, 80, 70, 60, 50, 40, 30, 20]
    emb[2] = emb[0]  # A002 (third best) repeats the chosen A000
    emb[4] = emb[3]  # A004 repeats A003, the first reserve
    sel = Selector(frame, emb, SelectionSettings(2, slices=(), buffer=2)).run()
    ids = lambda rows: [frame.loc[r, "query_id"] for r in rows]  # noqa: E731
    assert ids(sel.chosen) == ["A000", "A001"] and ids(sel.reserves) == ["A003", "A005"]


def test_a_rejected_query_is_replaced_by_a_reserve_of_its_category_and_the_reserves_are_topped_up():
    frame, emb = _candidates({"A": 10, "B": 10})
    selector = Selector(frame, emb, SelectionSettings(4, slices=(), buffer=2))
    sel = selector.run()
    reserve_rows = list(sel.reserves)
    in_b = [r for r in reserve_rows if frame.loc[r, "category"] == "B"]
    victim = next(r for r in sel.chosen if frame.loc[r, "category"] == "B")
    assert in_b, "one reserve per category expected for 4 + 2 places over two equal categories"
    selector.reject([frame.loc[victim, "query_id"]])
    assert sel.chosen[in_b[0]] == f"replacement: rejected {frame.loc[victim, 'query_id']}"
    assert len(sel.chosen) == 4 and len(sel.reserves) == 2 and in_b[0] not in sel.reserves
    assert victim not in sel.reserves and not set(sel.reserves) & set(sel.chosen)


def test_too_few_queries_give_fewer_reserves_never_an_error():
    frame, emb = _candidates({"A": 3})
    sel = Selector(frame, emb, SelectionSettings(2, slices=(), buffer=5)).run()
    assert len(sel.chosen) == 2 and len(sel.reserves) == 1


# --- reading a pool ---------------------------------------------------------------------------------


def test_pool_from_csv_jsonl_and_txt(tmp_path):
    csv = tmp_path / "p.csv"
    csv.write_text("id,Prompt,category\n7,How do I cook rice?,food\n8,Where is Rome?,travel\n")
    frame = read_pool(csv)
    assert frame.to_dict("list") == {"query_id": ["7", "8"], "query": ["How do I cook rice?", "Where is Rome?"],
                                     "category": ["food", "travel"]}
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text('{"text": "first query here"}\n{"text": "second query here"}\n')
    assert read_pool(jsonl)["query_id"].tolist() == ["q000001", "q000002"]
    txt = tmp_path / "p.txt"
    txt.write_text("one query\n\n  two query  \n", encoding="utf-8")
    assert read_pool(txt)["query"].tolist() == ["one query", "two query"]


def test_pool_errors_name_rows_and_columns(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("query_id,query\na,first\na,second\nb,\n")
    with pytest.raises(InputError) as err:
        read_pool(bad)
    text = str(err.value)
    assert "'query_id'" in text and "1 (" in text and "2 (" in text and "empty query text" in text and "3" in text
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("question,answer\nx,y\n")
    with pytest.raises(InputError, match="no query text column.*'question', 'answer'"):
        read_pool(wrong)
    (tmp_path / "empty.txt").write_text("\n\n")
    with pytest.raises(InputError, match="empty"):
        read_pool(tmp_path / "empty.txt")
    (tmp_path / "blank.txt").write_text("\n \n\t.\n")
    assert read_pool(tmp_path / "blank.txt")["query"].tolist() == ["."]  # kept here, dropped by the pre-filter


def test_pairs_are_unique():
    x = tfidf_embed(["alpha beta gamma"] * 3 + ["alpha beta gamma delta"])
    a, b, _ = nearest_neighbours(x, floor=0.5).pairs()
    assert sorted(zip(a.tolist(), b.tolist())) == sorted(set(itertools.combinations(range(4), 2)))

"""The build, stage by stage: preprocessing, semantic dedup, categories (then the user's exclusions),
subcategories, scoring, selection; every stage recorded in the :class:`~core.evalset.audit.Audit`.

Progress goes to an optional callback as :class:`~core.evalset.progress.ProgressEvent`: a stage's start,
then, in a stage with model calls, each finished call with the count planned and the time left.

``prepare`` runs up to the category exclusion suggestions (the point where a person decides which
categories to exclude), ``finish`` runs the rest, ``build`` runs both. Every query keeps a row in
``Build.pool`` with its ``status`` (``candidate`` or why it left: ``exact_duplicate``, ``too_short``,
``unreadable``, ``irrelevant``, ``duplicate``, ``excluded``, ``classification_failed``, ``rejected``)
and ``duplicate_of`` for duplicates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import core.evalset.categories as cats
import core.evalset.llm_stages as stages
from core.errors import SettingError
from core.evalset.audit import Audit, StageRecord
from core.evalset.dedup import semantic_dedup
from core.evalset.embeddings import tfidf_embed, unit_rows
from core.evalset.normalise import exact_duplicates, normalise, prefilter
from core.evalset.results import record_selection
from core.evalset.scoring import (
    SCORE_COLUMNS,
    TAG_COLUMNS,
    heuristic_scores,
    length_neutral_scores,
    representativeness,
)
from core.evalset.selection import Selector
from core.evalset.settings import BuildSettings
from core.evalset.state import Build, Progress
from core.llm.client import run_sync


def build(pool: pd.DataFrame, settings: BuildSettings, progress: Progress | None = None) -> Build:
    state = prepare(pool, settings, progress)
    return finish(state, settings.exclude, progress)


def prepare(pool: pd.DataFrame, settings: BuildSettings, progress: Progress | None = None) -> Build:
    frame = pool.reset_index(drop=True).copy()
    frame["raw_query_original"] = frame["query"]
    frame["status"] = "candidate"
    frame["duplicate_of"] = ""
    frame["emb_row"] = -1
    audit = Audit(settings=settings.describe())
    state = Build(settings, frame, np.zeros((0, 0), np.float32), audit, report=progress)
    chat = settings.chat_client()
    try:
        if chat is not None:
            state.say("Checking the model endpoint")
            run_sync(stages.preflight(chat))  # EndpointUnusable (a ValueError) before any work is done
        for stage, label in ((_exact, "Exact deduplication"), (_prefilter, "Pre-filter")):
            state.say(label)
            stage(state)
        for stage, label in ((_relevance, "Relevance"), (_rewrite, "Rewrite")):
            state.say(label if chat else f"{label} (no model: skipped)")
            stage(state, chat)
        state.say("Embeddings and semantic deduplication")
        _semantic(state, chat)
        state.say("Categories")
        _categorise(state, chat)
    finally:
        state.report = None  # a callback belongs to one run (and a page's may not be copied)
    return state


def finish(state: Build, exclude: tuple[str, ...] | list[str] = (), progress: Progress | None = None) -> Build:
    chat = state.settings.chat_client()
    state.report = progress
    try:
        state.say("Category exclusions")
        _exclude(state, list(exclude))
        for stage, label in ((_subcategories, "Subcategories"), (_score, "Scoring")):
            state.say(label)
            stage(state, chat)
        state.say("Selection")
        _select(state)
    finally:
        state.report = None
    return state


# -- stages ----------------------------------------------------------------------------------------
def _drop(state: Build, mask: np.ndarray, status: str) -> int:
    mask = np.asarray(mask, dtype=bool) & state.active().to_numpy()
    state.pool.loc[mask, "status"] = status
    return int(mask.sum())


def _exact(state: Build) -> None:
    f = state.pool
    normalised, keeper = exact_duplicates(f["query"].tolist())
    f["normalised"] = normalised
    repeat = keeper != np.arange(len(f))
    f.loc[repeat, "duplicate_of"] = f["query_id"].to_numpy()[keeper[repeat]]
    n = _drop(state, repeat, "exact_duplicate")
    state.audit.add(StageRecord("exact dedup", len(f), len(f) - n, "normalised text",
                                {"exact_duplicate": n} if n else {},
                                ["lower case, Unicode punctuation removed, whitespace collapsed; first kept"]))


def _prefilter(state: Build) -> None:
    f = state.pool
    before = int(state.active().sum())
    dropped = {}
    reasons = [prefilter(t).reason if a else "" for t, a in zip(f["query"], state.active())]
    for reason in ("too_short", "unreadable"):
        n = _drop(state, np.array([r == reason for r in reasons]), reason)
        if n:
            dropped[reason] = n
    state.audit.add(StageRecord("pre-filter", before, int(state.active().sum()), "local rules", dropped,
                                ["≤ 5 characters, or < 30% letters/digits (any script) among non-space characters"]))


def _relevance(state: Build, chat) -> None:
    before = int(state.active().sum())
    if chat is None:
        state.audit.add(StageRecord("relevance", before, before, "skipped", notes=["no model configured"]))
        return
    rows = np.flatnonzero(state.active().to_numpy())
    calls = state.calls("Relevance")
    verdicts = run_sync(stages.relevance(chat, state.pool["query"].to_numpy()[rows].tolist(),
                                         state.settings.domain, calls))
    mask = np.zeros(len(state.pool), bool)
    mask[rows[[v is False for v in verdicts]]] = True
    n = _drop(state, mask, "irrelevant")
    unjudged = sum(v is None for v in verdicts)
    notes = [f"{unjudged:,} queries could not be judged and were kept"] if unjudged else []
    state.audit.add(StageRecord("relevance", before, before - n, "model", {"irrelevant": n} if n else {}, notes,
                                calls.as_dict()))


def _rewrite(state: Build, chat) -> None:
    before = int(state.active().sum())
    if chat is None:
        state.audit.add(StageRecord("rewrite", before, before, "skipped", notes=["no model configured"]))
        return
    rows = np.flatnonzero(state.active().to_numpy())
    calls = state.calls("Rewrite")
    rewritten = run_sync(stages.rewrite(chat, state.pool["query"].to_numpy()[rows].tolist(), calls))
    col = state.pool.columns.get_loc("query")
    changed = 0
    for row, text in zip(rows.tolist(), rewritten):
        if text and text != state.pool.iat[row, col]:
            state.pool.iat[row, col] = text
            changed += 1
    kept = sum(t is None for t in rewritten)
    notes = [f"{changed:,} rewritten; the original text is kept in raw_query_original"]
    if kept:
        notes.append(f"{kept:,} kept as written (rewrite failed)")
    state.audit.add(StageRecord("rewrite", before, before, "model", notes=notes, calls=calls.as_dict()))


def _semantic(state: Build, chat) -> None:
    f = state.pool
    rows = np.flatnonzero(state.active().to_numpy())
    texts = f["query"].to_numpy()[rows].tolist()
    embedder = state.settings.embed_client()
    notes = []
    if embedder is not None:
        calls = state.calls("Embeddings")
        calls.expect(1)  # one request as far as progress goes (the client batches it)
        try:
            emb = unit_rows(np.asarray(run_sync(embedder.embed(texts)), dtype=np.float32))
            method = f"embeddings endpoint ({state.settings.model.embed_model})"
            calls.calls = 1
        except Exception as exc:  # noqa: BLE001 - any failure of the endpoint falls back, and says so
            emb = tfidf_embed([normalise(t) for t in texts])
            method = "offline TF-IDF (embeddings endpoint failed)"
            notes.append(f"embeddings endpoint failed ({exc}); offline embeddings used")
        finally:
            calls.tick()
    else:
        emb = tfidf_embed([normalise(t) for t in texts]) if texts else np.zeros((0, 1), np.float32)
        method = "offline character n-gram TF-IDF"
    f.loc[rows, "emb_row"] = np.arange(rows.size)
    state.embeddings = emb
    if rows.size == 0:
        state.audit.add(StageRecord("semantic dedup", 0, 0, method))
        return
    calls = state.calls("Semantic deduplication")
    review = (lambda pairs: run_sync(stages.review(chat, pairs, calls))) if chat else None
    choose = (lambda groups: run_sync(stages.canonical(chat, groups, calls))) if chat else None
    s = state.settings
    result = semantic_dedup(texts, emb, seed=s.seed, review=review, choose=choose,
                            duplicate_above=s.duplicate_above, review_from=s.review_from)
    dup = result.canonical_of != np.arange(rows.size)
    ids = f["query_id"].to_numpy()
    f.loc[rows[dup], "duplicate_of"] = ids[rows[result.canonical_of[dup]]]
    mask = np.zeros(len(f), bool)
    mask[rows[dup]] = True
    n = _drop(state, mask, "duplicate")
    notes += [f"neighbour search: {result.method}, K = 10",
              (f"{result.n_auto:,} pairs > {s.duplicate_above} (duplicates), {result.n_borderline:,} in "
               f"[{s.review_from}, {s.duplicate_above}] of which {result.n_confirmed:,} judged duplicates"),
              "borderline pairs reviewed by the model" if chat else
              "no model: a borderline pair is merged only when both queries have the same set of words",
              "canonical query: the model's choice" if chat else
              "canonical query: the most specific and complete (most distinct words), then the longest"]
    if result.n_unreviewed:
        notes.append(f"{result.n_unreviewed:,} borderline pairs could not be reviewed and were kept apart")
    state.audit.add(StageRecord("semantic dedup", rows.size, rows.size - n, method, {"duplicate": n} if n else {},
                                notes, calls.as_dict() if chat else {}))


def _categorise(state: Build, chat) -> None:
    f = state.pool
    rows = np.flatnonzero(state.active().to_numpy())
    texts = f["query"].to_numpy()[rows].tolist()
    given = [c for c in state.settings.categories if str(c).strip()]
    calls = state.calls("Categories")
    notes = []
    failed = np.zeros(rows.size, bool)
    if given:
        names = cats.with_other(given)
        source = "given by the user"
    elif "category" in f and (f["category"].astype(str).str.strip() != "").to_numpy()[rows].all() and rows.size:
        names = cats.with_other(sorted(set(f["category"].to_numpy()[rows])))
        source = "the pool's category column"
    elif chat is not None and rows.size:
        rng = np.random.default_rng(state.settings.seed)
        sample = [texts[i] for i in sorted(rng.choice(rows.size, min(1000, rows.size), replace=False))]
        found = run_sync(stages.discover(chat, sample, calls))
        names = cats.with_other(found) if found else []
        source = "discovered by the model" if found else ""
    else:
        names, source = [], ""
    if source == "the pool's category column":
        labels = f["category"].to_numpy()[rows].tolist()
        method = "given"
    elif names and chat is not None:
        labels = run_sync(stages.classify(chat, texts, names, calls))
        failed = np.array([lab == cats.CLASSIFICATION_FAILED for lab in labels], dtype=bool)
        labels = [cats.OTHER if fl else lab for lab, fl in zip(labels, failed)]
        method = "model"
    elif names:
        labels = cats.assign_by_keywords(texts, names)
        method = "offline keywords"
        notes.append("no model: a query goes to the first category whose name (or a word of it) it contains")
    else:
        emb = state.embeddings[f["emb_row"].to_numpy()[rows]]
        labels = cats.discover_offline(texts, emb, seed=state.settings.seed)
        names = sorted(set(labels))
        method = "offline clusters"
        source = "offline k-means clusters named by their most distinctive words (stop words left out)"
        notes += [f"{name}: e.g. “{cats.short(query)}”"
                  for name, query in sorted(cats.typical_queries(texts, emb, labels).items())]
        if chat is not None:
            notes.append("category discovery by the model failed; offline clusters used")
    if "category" not in f:
        f["category"] = ""
    f["category"] = f["category"].astype(object).where(f["category"].notna(), "")
    f.loc[rows, "category"] = labels
    f["classification_failed"] = False
    f.loc[rows[failed], "classification_failed"] = True
    n_failed = _drop(state, np.isin(np.arange(len(f)), rows[failed]), "classification_failed")
    state.categories = sorted(set(labels)) if method == "given" else [c for c in names if c in set(labels)] or names
    notes.insert(0, f"categories {source}: {', '.join(state.categories)}")
    if n_failed:
        notes.append(f"{n_failed:,} queries failed classification: counted under {cats.OTHER}, never selected")
    state.audit.add(StageRecord("classification", rows.size, rows.size - n_failed, method,
                                {"classification_failed": n_failed} if n_failed else {}, notes,
                                calls.as_dict() if chat else {}))
    if chat is not None and state.categories:
        summary = state.category_summary()
        ex_calls = state.calls("Exclusion suggestions")
        state.suggested_exclusions = run_sync(stages.exclusions(
            chat, [(r.category, int(r.queries), list(r.samples)) for r in summary.itertuples()], ex_calls))
        state.audit.add(StageRecord("exclusion suggestions", rows.size - n_failed, rows.size - n_failed, "model",
                                    notes=[f"suggested: {', '.join(state.suggested_exclusions) or 'none'}"],
                                    calls=ex_calls.as_dict()))


def _exclude(state: Build, exclude: list[str]) -> None:
    f = state.pool
    before = int(state.active().sum())
    known = sorted(set(f.loc[f["status"].isin(["candidate", "classification_failed"]), "category"]))
    chosen, unknown = [], []
    for name in exclude:
        match = cats.match_category(name, known)
        (chosen if match else unknown).append(match or name)
    if unknown:
        raise SettingError(f"cannot exclude unknown categories: {', '.join(unknown)} (known: {', '.join(known)})")
    n = _drop(state, f["category"].isin(chosen).to_numpy(), "excluded")
    state.audit.add(StageRecord("category exclusion", before, before - n, "user",
                                {"excluded": n} if n else {},
                                [f"excluded: {', '.join(sorted(set(chosen))) or 'none'}"]))


def _subcategories(state: Build, chat) -> None:
    f = state.pool
    f["subcategory"] = ""
    active = state.active().to_numpy()
    big = [(c, np.flatnonzero(active & (f["category"] == c).to_numpy()))
           for c in sorted(set(f.loc[active, "category"]))]
    big = [(c, rows) for c, rows in big if rows.size > cats.SUBCATEGORY_THRESHOLD]
    calls = state.calls("Subcategories")
    answers = run_sync(stages.subcategories(chat, [(c, f["query"].to_numpy()[r].tolist()) for c, r in big],
                                            cats.MIN_SUBCATEGORY, calls, state.settings.seed)) \
        if (chat and big) else [None] * len(big)
    refined, fallback = [], 0
    for (category, rows), labels in zip(big, answers):
        if labels is not None:
            labels = [lab or "" for lab in labels]
            counts = pd.Series(labels).value_counts()
            small = set(counts[counts < cats.MIN_SUBCATEGORY].index) | {""}
            largest = next((lab for lab in counts.index if lab not in small), None)
            labels = [largest if (lab in small and largest) else lab for lab in labels] if largest else None
            if labels is not None and len(set(labels)) < 2:
                labels = [""] * len(labels)  # one group is no refinement
        if labels is None:
            fallback += chat is not None
            labels = cats.refine_offline(f["query"].to_numpy()[rows].tolist(),
                                         state.embeddings[f["emb_row"].to_numpy()[rows]], seed=state.settings.seed)
        f.loc[rows, "subcategory"] = labels
        if len(set(labels)) > 1:
            refined.append(f"{category}: {len(set(labels))} subcategories")
    notes = refined or ["no category needed refining"]
    if fallback:
        notes.append(f"{fallback} categories refined offline after the model failed")
    n = int(state.active().sum())
    state.audit.add(StageRecord("subcategories", n, n, "model" if chat else "offline clusters", notes=notes,
                                calls=calls.as_dict() if chat else {}))


def _score(state: Build, chat) -> None:
    f = state.pool
    rows = np.flatnonzero(state.active().to_numpy())
    texts = f["query"].to_numpy()[rows].tolist()
    calls = state.calls("Scoring")
    scored = run_sync(stages.score(chat, texts, calls)) if (chat and texts) else [None] * len(texts)
    filled = [s if s is not None else heuristic_scores(t) for s, t in zip(scored, texts)]
    for col in SCORE_COLUMNS:
        f[col] = np.nan
        f.loc[rows, col] = [s[col] for s in filled]
    for col in TAG_COLUMNS:
        f[col] = False
        f.loc[rows, col] = [bool(s[col]) for s in filled]
    f["score"] = np.nan
    f.loc[rows, "score"] = [representativeness(s["specificity"], s["completeness"], s["depth"]) for s in filled]
    f["length_chars"] = f["query"].astype(str).str.len()
    f["score_length_neutral"] = np.nan
    f.loc[rows, "score_length_neutral"] = length_neutral_scores(f["score"].to_numpy(float)[rows],
                                                                f["length_chars"].to_numpy()[rows])
    heuristic = sum(s is None for s in scored)
    notes = [] if not chat else [f"{heuristic:,} scored by the heuristic after the model failed"] if heuristic else []
    if not chat:
        notes.append("no model: stated heuristic (core.evalset.scoring)")
    notes.append("selection ranks by the length-neutral score: the score's percentile among queries of similar "
                 "length (up to 10 length strata)" if state.settings.length_neutral else
                 "selection ranks by the score itself (length-neutral ranking switched off)")
    state.audit.add(StageRecord("scoring", rows.size, rows.size, "model" if chat else "heuristic", notes=notes,
                                calls=calls.as_dict() if chat else {}))


def _select(state: Build) -> None:
    f = state.pool
    rows = np.flatnonzero(state.active().to_numpy())
    candidates = f.iloc[rows].reset_index(drop=True)
    emb = state.embeddings[candidates["emb_row"].to_numpy()] if rows.size else np.zeros((0, 1), np.float32)
    state.selector = Selector(candidates, emb, state.settings.selection())
    state.selector.run()
    record_selection(state)

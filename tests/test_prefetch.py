"""Prefetching the votes pages: each (page, dataset, filters, alpha) is computed once, in the background."""

from __future__ import annotations

import threading

import pages._annotators_parts as annotators_parts
import pages._bias_parts as bias_parts
from core.filters import Filters
from core.store import Dataset
from pages import _prefetch


def dataset(columns) -> Dataset:
    return Dataset(7, "votes", "votes", "", 10, "", "f" * 64, tuple(columns), ())


def test_each_page_is_computed_once_per_key(monkeypatch, db_path):
    calls, done = [], threading.Event()

    def recorder(name):
        def compute(*args):
            calls.append((name, *args[1:]))
            if len(calls) == 4:
                done.set()
        compute.__name__ = name
        return compute

    monkeypatch.setattr(bias_parts, "compute_bias", recorder("compute_bias"))
    monkeypatch.setattr(annotators_parts, "compute_annotators", recorder("compute_annotators"))
    monkeypatch.setattr(_prefetch, "_started", set())
    votes = dataset(["model_a", "model_b", "winner", "annotator_id"])
    _prefetch.prefetch_vote_pages(votes, Filters())
    _prefetch.prefetch_vote_pages(votes, Filters())  # the same key again: nothing new
    _prefetch.prefetch_vote_pages(votes, Filters(games=("chat",)))  # new filters: Bias and Annotators again
    assert done.wait(10)
    assert sorted((c[0], c[3].describe()) for c in calls) == sorted(
        (name, f) for name in ("compute_bias", "compute_annotators") for f in ("none", "game_id ∈ {chat}"))


def test_no_annotator_page_without_annotators(monkeypatch, db_path):
    names, done = [], threading.Event()

    def compute_bias(*args):
        names.append("bias")
        done.set()

    monkeypatch.setattr(bias_parts, "compute_bias", compute_bias)
    monkeypatch.setattr(annotators_parts, "compute_annotators", lambda *a: names.append("annotators"))
    monkeypatch.setattr(_prefetch, "_started", set())
    _prefetch.prefetch_vote_pages(dataset(["model_a", "model_b", "winner"]), Filters())
    assert done.wait(10)
    assert names == ["bias"]

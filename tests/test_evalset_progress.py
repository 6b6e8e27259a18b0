"""Progress of a build: stage starts, then counts and the time left inside every stage with model calls,
against the fake OpenAI-compatible server on 127.0.0.1; the throttle and the CLI's lines on stderr."""

from __future__ import annotations

import itertools
import math

import pytest

from core.cli import main
from core.evalset import build
from core.evalset.progress import ProgressEvent, StageProgress, clock, throttled
from tests.fake_openai import FakeOpenAI
from tests.test_evalset_llm import responder, settings_for, small_pool


def test_model_stages_report_increasing_counts_and_a_finite_eta():
    events: list[ProgressEvent] = []
    with FakeOpenAI(responder=responder, latency_s=0.002) as server:
        state = build(small_pool(120), settings_for(server, size=10), progress=events.append)
    starts = [e.stage for e in events if not e.total]
    assert starts[:4] == ["Checking the model endpoint", "Exact deduplication", "Pre-filter", "Relevance"]
    assert starts[-1] == "Selection"
    audit = {s.stage: s for s in state.audit.stages}
    for stage, record in (("Relevance", "relevance"), ("Rewrite", "rewrite"), ("Categories", "classification"),
                          ("Scoring", "scoring")):
        counted = [e for e in events if e.stage == stage and e.total]
        assert counted, stage
        done = [e.done for e in counted]
        assert done == sorted(done) and done[-1] == counted[-1].total  # increasing, ending at the total
        assert counted[-1].total == audit[record].calls["calls"]  # every call of the audit was counted
        ticks = [e for e in counted if e.done]
        assert all(e.eta_s is not None and math.isfinite(e.eta_s) and e.eta_s >= 0 for e in ticks)
        assert all(0 <= e.fraction <= 1 for e in counted)
        assert all(b.elapsed_s >= a.elapsed_s for a, b in itertools.pairwise(counted))
    relevance = [e for e in events if e.stage == "Relevance" and e.total]
    assert relevance[-1].total == audit["relevance"].n_in  # one call per query


def test_the_eta_is_the_mean_time_per_call_times_the_calls_left():
    now = iter([100.0, 101.0, 102.0, 103.0, 110.0])
    seen: list[ProgressEvent] = []
    progress = StageProgress("Rewrite", seen.append, clock=lambda: next(now))  # started at 100
    progress.expect(10)  # at 101: nothing done, no estimate yet
    progress.tick()  # at 102: 1 call in 2 s, 9 left
    progress.tick()  # at 103: 2 calls in 3 s, 8 left
    progress.skip(4)  # at 110: 4 planned calls not needed
    assert [(e.done, e.total) for e in seen] == [(0, 10), (1, 10), (2, 10), (2, 6)]
    assert seen[0].eta_s is None
    assert seen[1].eta_s == pytest.approx(18.0) and seen[2].eta_s == pytest.approx(12.0)
    assert seen[3].eta_s == pytest.approx(10 / 2 * 4)
    assert seen[2].text() == "Rewrite: 2 / 10 model calls (20%) · 0:03 elapsed · about 0:12 left"
    assert ProgressEvent("Pre-filter").text() == "Pre-filter" and ProgressEvent("Pre-filter").fraction is None
    assert clock(3723) == "1:02:03" and clock(-1) == "0:00"


def test_throttled_passes_stage_starts_the_last_call_and_one_event_per_interval():
    t = [0.0]
    passed: list[ProgressEvent] = []
    report = throttled(passed.append, every_s=2.0, clock=lambda: t[0])
    report(ProgressEvent("Relevance"))
    for done in range(1, 11):
        t[0] += 0.5
        report(ProgressEvent("Relevance", done, 10, t[0], 1.0))
    report(ProgressEvent("Rewrite"))
    assert [(e.stage, e.done) for e in passed] == [("Relevance", 0), ("Relevance", 4), ("Relevance", 8),
                                                    ("Relevance", 10), ("Rewrite", 0)]


def test_cli_prints_progress_on_stderr_and_the_result_on_stdout(tmp_path, db_path, capsys, monkeypatch):
    pool = tmp_path / "pool.csv"
    small_pool(60).to_csv(pool, index=False)
    with FakeOpenAI(responder=responder) as server:
        code = main(["evalset", "build", str(pool), "--size", "8", "--output", str(tmp_path / "set.csv"),
                     "--base-url", server.base_url, "--model", "judge"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "Relevance: " in err and " model calls (100%)" in err and "Relevance" not in out
    assert "selected 8 of" in out

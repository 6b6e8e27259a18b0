"""Bias diagnostics at scale (docs/design.md "Performance goals"): 1,000,000 canonical votes with every optional
column. Goals: full ``diagnose`` + JSON/markdown report ≤ 3 s; scheme ipw with 1,000 bootstrap
replicates ≤ 2 s. Prints medians of a few repeats; it is a benchmark, not a test."""

from __future__ import annotations

import statistics
import time

from core.bias import render as bias_report
from core.bias.diagnose import diagnose
from core.io.votes import votes_from_frame
from core.ranking import RankSettings, rank_votes
from core.samples import arena_demo

REPEATS = 3


def median_seconds(fn) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    votes = votes_from_frame(arena_demo(1_000_000, 50), "arena_demo")[0]  # canonical, as loaded or stored

    def full():
        report = diagnose(votes)
        bias_report.to_json(report)
        bias_report.to_markdown(report)

    full_s = median_seconds(full)
    ipw_s = median_seconds(lambda: rank_votes(votes, RankSettings(scheme="ipw", replicates=1000)))
    print(f"diagnose + report, 1M votes: median {full_s:.2f} s (goal ≤ 3 s)")
    print(f"rank scheme ipw, 1,000 bootstrap replicates: median {ipw_s:.2f} s (goal ≤ 2 s)")


if __name__ == "__main__":
    main()

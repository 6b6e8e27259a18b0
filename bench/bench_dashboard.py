"""The dashboard at scale, measured in a real browser: 1,000,000 stored votes (12 models, the demo's
3 games × 3 dimensions, annotators, golds, timings, lengths).

Goals: first render of Rankings ≤ 5 s; any later page switch or toggle ≤ 2 s. A step's time runs from
the click until Streamlit's run state is back to "notRunning" and the step's content is visible.
Each round starts a fresh server (cold caches), so "first render" is measured every round; the
median over rounds is printed per step, with the slowest one.

With ``--settle S`` each click waits until the previous step's charts are drawn and S seconds more,
as a user reading the page would; without it every click follows as soon as the previous step's first
content is visible, so a step can overlap the browser still drawing the last one (and the background
prefetch of the other pages). Both protocols are worth reporting.

    .venv/bin/python bench/bench_dashboard.py [--rounds 3] [--votes 1000000] [--settle 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.io import load  # noqa: E402
from core.samples import write_arena_csv  # noqa: E402
from core.store import Store  # noqa: E402
from tests.browser_support import (  # noqa: E402
    CHROMIUM,
    IDLE_JS,
    LAUNCH_ARGS,
    VIEWPORT,
    PlaywrightTimeout,
    streamlit_server,
)

OUT = Path(__file__).resolve().parent / "out"


def prepare(votes: int) -> Path:
    """A store holding the votes (built once; reused while the file exists)."""
    OUT.mkdir(parents=True, exist_ok=True)
    db = OUT / f"dashboard_{votes}.db"
    if db.exists():
        return db
    csv = OUT / f"arena_{votes}.csv"
    if not csv.exists():
        write_arena_csv(csv, votes, 12)
    t = time.perf_counter()
    with Store(db) as store:
        dataset = store.ingest(load(csv), name=f"arena {votes:,}").dataset
        stored = time.perf_counter() - t
        store.load(dataset.id)  # as the Data page does after an upload: writes the columnar snapshot
    print(f"stored {votes:,} votes in {stored:.1f} s; first full load (writes the snapshot) "
          f"{time.perf_counter() - t - stored:.1f} s", file=sys.stderr)
    return db


SETTLE_S = 0.0  # --settle: pause before each click, after the page's charts are drawn (a user reading)
CHARTS_DRAWN = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
    .every(chart => chart.querySelector('.main-svg'))"""


# Records every change of Streamlit's run state (``data-test-script-state`` on the app root) so a fast
# run that starts and ends between two polls is still seen.
WATCH_JS = """() => {
  if (window.__runStates) { window.__runStates.length = 0; return; }
  window.__runStates = [];
  const app = document.querySelector('[data-testid="stApp"]');
  new MutationObserver(() => window.__runStates.push(app.getAttribute('data-test-script-state')))
    .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""


def act(page, action, timeout_ms: int) -> bool:
    """Do ``action``, wait for the script run it starts to end; whether a run was seen (False: none
    started within 2 s, which is then part of the step's time)."""
    page.evaluate(WATCH_JS)
    action()
    try:
        page.wait_for_function("() => window.__runStates.includes('running')", timeout=2_000)
        seen = True
    except PlaywrightTimeout:
        seen = False
    page.wait_for_function(IDLE_JS, timeout=timeout_ms)
    return seen


def timed(page, action, ready) -> float:
    if SETTLE_S:
        page.wait_for_function(CHARTS_DRAWN, timeout=60_000)
        page.wait_for_timeout(SETTLE_S * 1000)
    start = time.perf_counter()
    if not act(page, action, timeout_ms=180_000):
        print("  (no script run seen within 2 s: this step's time includes that wait)", file=sys.stderr)
    ready()
    return time.perf_counter() - start


def one_round(playwright, db: Path, log: Path) -> dict[str, float]:
    from playwright.sync_api import expect

    def visible(locator):
        return lambda: expect(locator).to_be_visible(timeout=180_000)

    times: dict[str, float] = {}
    with streamlit_server(db, log) as url:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        page = browser.new_context(viewport=VIEWPORT).new_page()
        page.goto(url)
        expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible(timeout=180_000)
        page.wait_for_function(IDLE_JS, timeout=180_000)
        nav = page.get_by_test_id("stSidebarNav")

        def link(title):
            return lambda: nav.get_by_role("link", name=title).click()

        def heading(title):
            return visible(page.get_by_role("heading", name=title, exact=True))

        def table(title):
            return lambda: (heading(title)(), visible(page.get_by_test_id("stDataFrame").first)())

        radio = page.get_by_test_id("stRadio")
        times["Rankings, first render"] = timed(page, link("Rankings"), table("Rankings"))
        times["toggle scheme: win rate"] = timed(page, lambda: radio.get_by_text("Win rate", exact=True).click(),
                                                 visible(page.get_by_text("Win rate: 12 models")))
        times["toggle scheme: stratified"] = timed(
            page, lambda: radio.get_by_text("Stratified win rate", exact=True).click(),
            visible(page.get_by_text("Stratified win rate: 12 models")))
        times["toggle scheme: back to BT"] = timed(
            page, lambda: radio.get_by_text("Bradley–Terry (Elo)", exact=True).click(),
            visible(page.get_by_text("Bradley–Terry (Elo): 12 models")))
        times["switch to Bias"] = timed(page, link("Bias"),
                                        visible(page.get_by_text("At a glance: position × time")))
        times["switch to Annotators"] = timed(page, link("Annotators"), table("Annotators"))
        times["switch to Leaderboard"] = timed(page, link("Leaderboard"), heading("Leaderboard"))
        times["switch to Reports"] = timed(page, link("Reports"), heading("Reports"))
        times["switch to Data"] = timed(page, link("Data"), table("Data"))
        times["switch back to Rankings"] = timed(page, link("Rankings"), table("Rankings"))
        times["switch back to Bias"] = timed(page, link("Bias"),
                                             visible(page.get_by_text("At a glance: position × time")))
        browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--votes", type=int, default=1_000_000)
    parser.add_argument("--settle", type=float, default=0.0, metavar="S",
                        help="before each click, wait until every chart is drawn and then S seconds more "
                             "(default 0: click as soon as the previous step's content is visible)")
    args = parser.parse_args()
    global SETTLE_S
    SETTLE_S = args.settle
    if not CHROMIUM.exists():
        sys.exit(f"{CHROMIUM} is needed")
    from playwright.sync_api import sync_playwright

    db = prepare(args.votes)
    rounds = []
    with sync_playwright() as playwright:
        for i in range(args.rounds):
            rounds.append(one_round(playwright, db, OUT / f"dashboard_streamlit_{i}.log"))
            print(f"round {i + 1}: " + ", ".join(f"{k} {v:.2f}" for k, v in rounds[-1].items()), file=sys.stderr)
    pause = f"clicks {args.settle:g} s after the charts are drawn" if args.settle else "clicks at once"
    print(f"Dashboard, {args.votes:,} stored votes, {args.rounds} rounds (fresh server each), {pause}, seconds:")
    print(f"  {'step':<30} {'median':>7} {'max':>7}  goal")
    for step in rounds[0]:
        values = [r[step] for r in rounds]
        goal = 5.0 if step.endswith("first render") else 2.0
        verdict = "ok" if statistics.median(values) <= goal else "OVER"
        print(f"  {step:<30} {statistics.median(values):7.2f} {max(values):7.2f}  ≤ {goal:g} s {verdict}")


if __name__ == "__main__":
    main()

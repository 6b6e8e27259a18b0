"""Three annotators voting at once in real browsers, on one dashboard server.

One ``streamlit run app.py`` (the whole dashboard, tests/browser_support.py) and three browser contexts,
three Streamlit sessions, each signed in on the Vote page with its own token. In every round the three
choose and submit before any of them waits, so their script runs overlap on the server; one round is a
double click. After every vote each page's HTML is searched for the models' names and the golden items'
internal names. At the end the store must hold every submitted vote once, with the outcome each annotator
clicked, and each annotator's count must be the target. A screenshot of an item with two dimensions and
one of a finished session are saved in the test's artifacts folder.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import pytest

from core.campaign import CHOICES, create_campaign, issue_tokens, read_answers, read_golden
from core.store.connection import connect
from tests.browser_support import ARTIFACTS, chromium, expect, new_page, streamlit_server, wait_idle

pytestmark = pytest.mark.browser

MODELS = ("hidden-model-orion", "hidden-model-lyra", "hidden-model-vega")
DIMENSIONS = ("overall", "helpfulness")
TARGET = 5
ANSWERS_CSV = "\n".join(["query_id,prompt,model,answer"] + [
    f'q{q},"Question {q}: how do I keep basil fresh?",{m},"## Tip {q}.{i}\n\nKeep it {("cool", "dry", "in water")[i]}."'
    for q in range(6) for i, m in enumerate(MODELS)]).encode()
GOLDEN_CSV = b"question,correct_answer,wrong_answer\nHow many legs has a spider?,8,6\nLargest planet?,Jupiter,Mars\n" \
             b"Boiling point of water at sea level?,100 degrees Celsius,60 degrees Celsius\n"
# What each annotator clicks, per dimension; the second one changes its mind between rounds.
PLAN = {"annotator-1": lambda r: ("A", "B"), "annotator-2": lambda r: ("Tie", "A") if r % 2 else ("B", "Both bad"),
        "annotator-3": lambda r: ("Both bad", "Tie")}
FORBIDDEN = (*MODELS, "golden:")


@pytest.fixture
def campaign_db(tmp_path) -> tuple[Path, dict[str, str]]:
    db = tmp_path / "evalboard.db"
    conn = connect(db)
    try:
        campaign = create_campaign(conn, "browser-three", read_answers(ANSWERS_CSV, name="answers.csv"),
                                   read_golden(GOLDEN_CSV, name="golden.csv"), dimensions=DIMENSIONS,
                                   golden_rate=0.3, target=TARGET, seed=3)
        tokens = {t.label: t.token for t in issue_tokens(conn, campaign, len(PLAN))}
    finally:
        conn.close()
    return db, tokens


def artifacts(tmp_path: Path) -> Path:
    folder = tmp_path / "artifacts"
    folder.mkdir(exist_ok=True)
    return folder


def enter_token(page, token: str) -> None:
    """Type the token and press Enter (without waiting for the first item)."""
    expect(page.get_by_role("heading", name="Vote", exact=True)).to_be_visible()
    box = page.get_by_label("Your annotator token", exact=True)
    box.fill(token)
    box.press("Enter")


def expect_first_item(page) -> None:
    expect(page.get_by_text(f"0 / {TARGET} done")).to_be_visible()
    expect(page.get_by_role("heading", name="Answer B")).to_be_visible()
    wait_idle(page)


def choose_and_submit(page, choices: tuple[str, ...], double: bool = False) -> None:
    """On an idle page, check one choice per dimension and submit (without waiting for the next item)."""
    wait_idle(page)
    for dimension, choice in zip(DIMENSIONS, choices):
        group = page.get_by_test_id("stRadio").filter(has_text=f"Which answer is better — {dimension}?")
        radio = group.get_by_role("radio", name=choice, exact=True)
        radio.check(force=True)  # the radio's own input is visually hidden behind its label
        expect(radio).to_be_checked()
    submit = page.get_by_role("button", name="Submit")
    submit.dblclick() if double else submit.click()


def expect_progress(page, done: int) -> None:
    expect(page.get_by_text("All done" if done >= TARGET else f"{done} / {TARGET} done")).to_be_visible()
    wait_idle(page)


def check_page_is_clean(page) -> None:
    html = page.content()
    leaked = [name for name in FORBIDDEN if name in html]
    assert not leaked, f"the Vote page shows {leaked}"


def stored_votes(db: Path) -> list[tuple[str, int, str, str]]:
    """(annotator label, item, dimension, outcome) of every stored vote."""
    conn = connect(db)
    try:
        return conn.execute("SELECT t.label, v.assignment_id, v.dimension, v.winner FROM campaign_votes v "
                            "JOIN campaign_assignments a ON a.id = v.assignment_id "
                            "JOIN campaign_tokens t ON t.token_hash = a.token_hash ORDER BY v.id").fetchall()
    finally:
        conn.close()


def test_three_annotators_vote_at_once_in_the_browser(campaign_db, tmp_path):
    db, tokens = campaign_db
    out = artifacts(tmp_path)
    labels = list(PLAN)
    clicked: dict[str, list[tuple[str, ...]]] = {label: [] for label in labels}
    with streamlit_server(db, tmp_path / "streamlit.log") as url, chromium() as browser, \
            contextlib.ExitStack() as stack:
        # An annotator opens the Vote page's own address, as the campaign owner hands it out.
        pages = {label: stack.enter_context(new_page(browser, f"{url}/vote")) for label in labels}
        for label, page in pages.items():  # three sign in at once too
            enter_token(page, tokens[label])
        for page in pages.values():
            expect_first_item(page)
            check_page_is_clean(page)
        pages[labels[0]].screenshot(path=out / "campaign_01_item.png")
        for round_ in range(TARGET):
            # All three submit before any waits: the sessions' script runs overlap on the server.
            for label, page in pages.items():
                choices = PLAN[label](round_)
                choose_and_submit(page, choices, double=round_ == 1)
                clicked[label].append(choices)
            for _label, page in pages.items():
                expect_progress(page, round_ + 1)
                check_page_is_clean(page)
        for page in pages.values():
            expect(page.get_by_text("All done")).to_be_visible()
        pages[labels[1]].screenshot(path=out / "campaign_02_done.png")
    ARTIFACTS.mkdir(exist_ok=True)  # a copy where the other browser tests leave theirs, for a person to look at
    for png in out.glob("campaign_*.png"):
        shutil.copy(png, ARTIFACTS / png.name)

    votes = stored_votes(db)
    items = {label: sorted({item for who, item, _, _ in votes if who == label}) for label in labels}
    assert {label: len(ids) for label, ids in items.items()} == {label: TARGET for label in labels}
    # one row per (item, dimension): the double click stored its vote once
    assert len(votes) == len({(item, dim) for _, item, dim, _ in votes}) == len(labels) * TARGET * len(DIMENSIONS)
    for label in labels:
        # each item holds what was clicked on it, in order (items are numbered as they were served)
        stored = {(item, dim): outcome for who, item, dim, outcome in votes if who == label}
        expected = {(item, dim): CHOICES[choice] for item, choices in zip(items[label], clicked[label])
                    for dim, choice in zip(DIMENSIONS, choices)}
        assert stored == expected
    conn = connect(db)
    try:
        done = dict(conn.execute("SELECT label, done FROM campaign_tokens"))
        open_items = conn.execute("SELECT count(*) FROM campaign_assignments WHERE voted = 0").fetchone()[0]
    finally:
        conn.close()
    assert done == {label: TARGET for label in labels} and open_items == 0

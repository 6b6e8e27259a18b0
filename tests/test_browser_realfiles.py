"""The real public files of ../shared/data uploaded through the Data page as a new user would: each
file read as detected or through the mapping form (which starts from detection's proposal), stored,
made active, and every analysis page for its kind opened without an exception element.

Screenshots go to tests/artifacts/ (realfiles_*.png). Skipped when ../shared is absent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.browser_support import (
    by_key,
    chromium,
    expect,
    go,
    new_page,
    screenshot,
    sidebar_picker,
    streamlit_server,
    upload_files,
    wait_idle,
)
from tests.conftest import SHARED_DATA, shared_file

pytestmark = pytest.mark.browser
STORE_MS = 240_000  # storing 350k MMLU-Pro cells on a loaded 2-core machine
VOTES_PAGES = ("Rankings", "Bias", "Annotators", "Reports")
RUNS_PAGES = ("Leaderboard", "Reports")
JUDGE_PAGES = ("Judge", "Reports")


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    """One server for the module; every test stores its own file, in a session of its own."""
    if not SHARED_DATA.exists():
        pytest.skip(f"real datasets not available: {SHARED_DATA}")
    folder = tmp_path_factory.mktemp("realfiles")
    with streamlit_server(folder / "evalboard.db", folder / "streamlit.log") as url:
        yield url


@pytest.fixture
def session(server) -> Iterator:
    with chromium() as browser, new_page(browser, server) as page:
        yield page


def store_button(page):
    return page.get_by_role("button", name="Validate and store", exact=True)


def choose_file(page, relative: str) -> None:
    go(page, "Data")
    upload_files(page, "upload_file", [shared_file(relative)], then=store_button(page))


def pick(page, label: str, option: str) -> None:
    """Choose ``option`` in the selectbox whose label is ``label`` (within the mapping form)."""
    box = page.get_by_role("combobox", name=label, exact=True)
    box.click()
    page.get_by_role("option", name=option, exact=True).click()
    expect(box).to_have_value(option)
    wait_idle(page)


def store(page, stored_text: str, slug: str) -> None:
    store_button(page).click()
    # a long store reruns the script when it ends: wait for its message, then for the end of that run
    expect(page.get_by_text(stored_text).first).to_be_visible(timeout=STORE_MS)
    wait_idle(page, STORE_MS)
    screenshot(page, f"realfiles_{slug}_stored")


def open_pages(page, titles: tuple[str, ...], slug: str) -> None:
    for title in titles:
        page.get_by_test_id("stSidebarNav").get_by_role("link", name=title).click()
        # the page's own heading first (its script has started), then the end of that run
        expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible(timeout=STORE_MS)
        wait_idle(page, STORE_MS)
        screenshot(page, f"realfiles_{slug}_{title.lower()}")
        errors = page.get_by_test_id("stException")
        assert errors.count() == 0, f"{title}: {errors.all_inner_texts()}"


def test_alpaca_eval_2_preferences_as_detected(session):
    page = session
    choose_file(page, "alpaca_eval_annotations/preferences.csv")
    expect(page.get_by_text("Detected: judged preferences against a baseline")).to_be_visible()
    screenshot(page, "realfiles_alpaca2_detected")
    store(page, "stored 46,680 preferences rows as dataset 'preferences'", "alpaca2")
    expect(sidebar_picker(page)).to_have_value(re.compile(r"^preferences · preferences"))
    open_pages(page, JUDGE_PAGES, "alpaca2")


def test_alpaca_eval_1_preferences_with_judge_failures_left_out(session):
    page = session
    choose_file(page, "alpaca_eval_annotations/preferences_alpaca_eval1_gpt4_vs_text_davinci_003.csv")
    expect(page.get_by_text("Detected: judged preferences against a baseline")).to_be_visible()
    store(page, "stored 42,604 preferences rows", "alpaca1")
    expect(page.get_by_text("61 rows without a judgement").first).to_be_visible()
    open_pages(page, JUDGE_PAGES, "alpaca1")


def test_mmlu_pro_wide_with_unanswered_as_zero(session):
    page = session
    choose_file(page, "mmlu_pro_per_question/correct_matrix_wide.csv")
    by_key(page, "upload_missing").get_by_text("score 0", exact=True).click()
    expect(by_key(page, "upload_missing").get_by_role("radio", name="score 0")).to_be_checked()
    wait_idle(page)
    store(page, "stored 348,928 eval runs rows", "mmlu")
    open_pages(page, RUNS_PAGES, "mmlu")  # 349k per-task cells: no Styler, which Streamlit would refuse


def test_llmfao_votes_as_detected(session):
    page = session
    choose_file(page, "llmfao/crowd-comparisons.csv")
    store(page, "stored 8,931 votes rows", "llmfao")
    expect(page.get_by_text("column 'id' read as query_id").first).to_be_visible()
    open_pages(page, VOTES_PAGES, "llmfao")
    go(page, "Annotators")  # query_id from id: the 2,139 pairs, 2,124 of them rated by several workers
    expect(page.get_by_text("Items rated by several annotators")).to_be_visible()
    expect(page.get_by_text("2,124", exact=True)).to_be_visible()


def test_pandalm_one_vote_per_annotator(session):
    page = session
    choose_file(page, "pandalm_testset/testset-v1.json")
    pick(page, "'0'", "tie")
    store(page, "stored 2,997 votes rows", "pandalm")
    open_pages(page, VOTES_PAGES, "pandalm")


def test_tulu_through_the_mapping_form(session):
    page = session
    choose_file(page, "tulu1_human_eval/annotations.csv")
    store(page, "stored 1,150 votes rows", "tulu")
    open_pages(page, VOTES_PAGES, "tulu")


def test_pythia_wide_scores(session):
    page = session
    choose_file(page, "pythia_opt_bloom_lmeval/zero_shot_acc_wide.csv")
    store(page, "stored 1,885 eval runs rows", "pythia")
    open_pages(page, RUNS_PAGES, "pythia")


def test_lm_eval_results_files(session):
    page = session
    go(page, "Data")
    files = sorted(shared_file("pythia_opt_bloom_lmeval/original/evals").rglob("*.json"))
    page.get_by_text("Several files").click()
    button = page.get_by_role("button", name="Validate and store these files")
    upload_files(page, "lm_eval_files", files, then=button)
    button.click()
    expect(page.get_by_text("stored 2,925 eval runs rows").first).to_be_visible(timeout=STORE_MS)
    wait_idle(page, STORE_MS)
    screenshot(page, "realfiles_lm_eval_stored")
    open_pages(page, RUNS_PAGES, "lm_eval")


def test_football_results_mapped_by_hand(session):
    page = session
    choose_file(page, "bradleyterry2_classic/football.csv")
    pick(page, "**model_a**", "home")  # required columns have bold labels
    pick(page, "**model_b**", "away")
    pick(page, "'-1'", "model_b")
    pick(page, "'0'", "tie")
    store(page, "stored 1,900 votes rows", "football")
    open_pages(page, VOTES_PAGES, "football")


def test_benchmark_table_refused_with_a_reason(session):
    page = session
    choose_file(page, "alpaca_eval_benchmark_table/benchmarks.csv")
    store_button(page).click()
    expect(page.get_by_text("The file was not stored.")).to_be_visible()
    wait_idle(page)
    screenshot(page, "realfiles_benchmarks_refused")

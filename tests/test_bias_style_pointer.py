"""The length test points to the style-controlled ranking when length matters (at the page's or the
command's α), and only then: core.bias.view, `evalboard bias --format markdown`, and the Bias page."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.bias.render import STYLE_POINTER, length_matters, to_markdown
from core.bias.view import STYLE_POINTER as PAGE_POINTER
from core.bias.view import bias_view
from core.cli import main
from core.io import load
from core.io.votes import votes_from_frame
from core.samples import SAMPLES_DIR
from core.store import Store
from tests.app_pages import app_router, open_page, samples  # noqa: F401 - fixtures
from tests.test_app_data import texts

ARENA = SAMPLES_DIR / "arena_demo.csv"


def lengths_without_effect(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """Votes whose outcome cannot depend on length: every vote comes twice, with the two answers' lengths
    swapped and the same winner, so the longer answer wins exactly half of the decisive votes."""
    rng = np.random.default_rng(seed)
    models = np.array(["m1", "m2", "m3", "m4"])
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    once = pd.DataFrame({"model_a": models[a], "model_b": models[b],
                         "winner": rng.choice(["model_a", "model_b", "tie"], n, p=[0.45, 0.45, 0.1]),
                         "len_a": rng.integers(50, 900, n), "len_b": rng.integers(50, 900, n)})
    return pd.concat([once, once.rename(columns={"len_a": "len_b", "len_b": "len_a"})], ignore_index=True)


def test_view_points_only_when_length_matters():
    demo = bias_view(load(ARENA).frame)  # the demo plants a length effect (p ≈ 1e-12)
    assert demo.report.length.detected and demo.style_pointer == PAGE_POINTER
    none = bias_view(votes_from_frame(lengths_without_effect(), "flat.csv")[0])
    assert not none.report.length.detected and none.style_pointer is None
    no_lengths = bias_view(votes_from_frame(lengths_without_effect().drop(columns=["len_a", "len_b"]), "x.csv")[0])
    assert not length_matters(no_lengths.report) and no_lengths.style_pointer is None


def test_alpha_decides():
    votes = votes_from_frame(pd.read_csv(ARENA, nrows=600), "demo.csv")[0]
    length = bias_view(votes, alpha=0.5).report.length
    p = min(length.test.p_value, length.fit.p[1])  # the test flags when either is under α
    assert bias_view(votes, alpha=min(0.5, p * 1.01)).style_pointer == PAGE_POINTER
    assert bias_view(votes, alpha=p * 0.99).style_pointer is None


def test_markdown_sentence(tmp_path, capsys):
    assert main(["bias", str(ARENA), "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    [line] = [x for x in text.splitlines() if x.startswith("- **Length:**")]
    assert line.endswith(STYLE_POINTER)
    src = tmp_path / "flat.csv"
    lengths_without_effect().to_csv(src, index=False)
    assert main(["bias", str(src), "--format", "markdown"]) == 0
    assert STYLE_POINTER not in capsys.readouterr().out
    report = bias_view(load(ARENA).frame).report
    assert STYLE_POINTER in to_markdown(report) and STYLE_POINTER not in to_markdown(report, style_pointer=False)


def test_page_shows_the_pointer_and_the_link(app_router, samples):
    at = open_page("bias", samples["arena_demo"], bias_tab="Length")
    assert not at.error and PAGE_POINTER in texts(at.main.info)
    [link] = at.get("page_link")
    assert "Style-controlled BT" in link.proto.label and link.proto.page.endswith("rankings")


def test_page_without_a_length_effect_has_no_pointer(app_router, db_path):
    with Store(db_path) as store:
        flat = store.ingest(load(lengths_without_effect().to_csv(index=False).encode(), name="flat.csv"),
                            name="flat").dataset.id
    at = open_page("bias", flat, bias_tab="Length")
    assert not at.error and PAGE_POINTER not in texts(at.main.info) and not at.get("page_link")
    assert len(at.get("plotly_chart")) == 1  # the length curve is still drawn

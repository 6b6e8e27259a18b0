"""The judged-preferences bundle: ``JUDGE_REPORT.md`` (the markdown of ``evalboard judge``, the notes, then the
figure), ``judge.csv`` (one row per model, as ``evalboard judge --format csv``), ``report.json`` (the judge JSON
under ``judge``, with the settings, input and versions every report records) and ``figures/lc_vs_raw.png`` (the
raw vs length-controlled scatter, :func:`core.charts.judge.lc_vs_raw_scatter`), or a note saying why there is
no PNG. ``--bootstrap B`` sets the win rate's replicates; the length-controlled interval takes min(B, 100), each
replicate refitting every model's length GLM."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.io as pio

from core.charts import export
from core.charts.judge import lc_vs_raw_scatter
from core.formats import dumps, markdown_text
from core.judge.analysis import judge
from core.judge.render import judge_csv, judge_markdown
from core.judge.types import JudgeResult, JudgeSettings
from core.report.bundle import (
    REPORT_JSON,
    ReportResult,
    ReportSettings,
    Steps,
    figures_markdown,
    png_status,
    write_pngs,
)
from core.report.judge_tables import lc_warnings, n_models, scatter_rows
from core.schema import DEFAULT_LC_REPLICATES

MARKDOWN = "JUDGE_REPORT.md"
CSV = "judge.csv"
FIGURE = "lc_vs_raw"


def build_judge_report(frame: pd.DataFrame, out: Path, settings: ReportSettings, common: dict[str, Any],
                       progress=None) -> ReportResult:
    steps = Steps(4, progress)
    steps("win rates and length control (bootstrap)")
    lc_replicates = min(settings.bootstrap, DEFAULT_LC_REPLICATES)  # each one refits every model's length GLM
    result = judge(frame, JudgeSettings(baseline=settings.baseline, bootstrap=settings.bootstrap,
                                        lc_bootstrap=lc_replicates, alpha=settings.alpha, seed=settings.seed))
    doc = result.as_dict()
    png, png_note = png_status(settings.png)
    steps("figure")
    figures = {FIGURE: scatter_figure(result)} if png else {}
    steps("PNG export")
    png, png_note, pngs = write_pngs(figures, out, png, png_note)
    steps("write markdown, CSV, JSON")
    (out / CSV).write_text(judge_csv(result), encoding="utf-8")
    (out / MARKDOWN).write_text(report_markdown(result, doc) + "\n\n" + figures_markdown([FIGURE], png, png_note),
                                encoding="utf-8")
    timings = steps.done()
    params = {"baseline": result.baseline, "bootstrap": settings.bootstrap, "lc_bootstrap": lc_replicates,
              "alpha": settings.alpha, "seed": settings.seed}
    report = {"kind": "preferences", "params": params, **common, "judge": doc, "png": png, "png_note": png_note,
              "figures": [FIGURE], "notes": [], "timings": timings}
    (out / REPORT_JSON).write_text(dumps(report) + "\n", encoding="utf-8")
    return ReportResult("preferences", out, [out / MARKDOWN, out / CSV, out / REPORT_JSON, *pngs], figures, png,
                        png_note, timings)


def scatter_figure(result: JudgeResult):
    doc = result.as_dict()
    return lc_vs_raw_scatter(scatter_rows(doc), result.baseline)


def report_markdown(result: JudgeResult, doc: dict[str, Any]) -> str:
    """The report's heading and summary, then the markdown of ``evalboard judge`` (its notes say which SE is
    which)."""
    warned = lc_warnings(doc)
    params = doc.get("params") or {}
    summary = (f"{n_models(doc)} models judged against the baseline {markdown_text(result.baseline)} on "
               f"{params.get('n_prompts', '—')} prompts")
    if warned:
        summary += f"; LC moves far from the raw rate for {len(warned)} of them (see the notes)"
    return "\n\n".join(["# Judged preferences", summary + ".", judge_markdown(result)])


def scatter_png(figure_json: str) -> bytes:
    """A figure (plotly JSON, as the page caches it) as PNG bytes, rendered through core.charts.export."""
    figure = pio.from_json(figure_json)
    with tempfile.TemporaryDirectory(prefix="evalboard-judge-") as tmp:
        (path,) = export.export_png({FIGURE: figure}, tmp)
        return Path(path).read_bytes()

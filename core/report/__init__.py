"""``evalboard report INPUT --out DIR``: the whole bundle of one input (DESIGN "CLI").

Votes give ``BT_ANALYSIS_REPORT.md``, ``BT_ANALYSIS_REPORT.csv``, ``report.json`` and ``figures/*.png``
(:mod:`core.report.votes`); a score table (EvalRuns) gives ``leaderboard.json``, ``LEADERBOARD.md``,
``report.json`` and its figures (:mod:`core.report.runs`). Figures come from :mod:`core.charts` and
are written as PNG by ``core.charts.export.export_png`` (one kaleido session per batch) unless
``png=False`` or PNG export is unavailable; ``report.json`` then says ``"png": false`` and why.

Long steps report through ``progress(step, total, label)``; :func:`terminal_progress` draws one
overwritten line on stderr (no dependency).
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

Progress = Callable[[int, int, str], None]
VERSIONED = ("numpy", "pandas", "scipy", "plotly", "streamlit", "evalboard")
REPORT_JSON = "report.json"
FIGURES_DIR = "figures"


@dataclass(frozen=True)
class ReportSettings:
    bootstrap: int = 1000
    seed: int = 0
    alpha: float = 0.05
    png: bool = True
    annotators: str = "exclude"  # the annotator policy of every votes analysis (keep, exclude, downweight)
    dimension: str | None = None  # the dimension analysed (None: the first of several, core.ranking.request)


@dataclass
class ReportResult:
    kind: str
    out_dir: Path
    files: list[Path]
    figures: dict[str, Any]  # name -> plotly Figure (empty when the charts package is missing)
    png: bool
    png_note: str | None
    timings: dict[str, float] = field(default_factory=dict)


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in VERSIONED:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def terminal_progress(stream=None) -> Progress:
    """A progress callback drawing ``[step/total] label`` on one stderr line (newline at the end)."""
    stream = stream or sys.stderr
    start = time.perf_counter()

    def progress(step: int, total: int, label: str) -> None:
        line = f"[{step}/{total}] {label} ({time.perf_counter() - start:.1f} s)"
        stream.write("\r" + line.ljust(78)[:120] + ("\n" if step >= total else ""))
        stream.flush()

    return progress


class Steps:
    """Counts steps for the progress callback and times them (seconds, by label)."""

    def __init__(self, total: int, progress: Progress | None):
        self.total, self.progress, self.step = total, progress, 0
        self.timings: dict[str, float] = {}
        self._label: str | None = None
        self._t = time.perf_counter()

    def __call__(self, label: str) -> None:
        self._close()
        self.step += 1
        self._label, self._t = label, time.perf_counter()
        if self.progress:
            self.progress(min(self.step, self.total), self.total, label)

    def _close(self) -> None:
        if self._label is not None:
            self.timings[self._label] = round(time.perf_counter() - self._t, 4)
            self._label = None

    def done(self) -> dict[str, float]:
        self._close()
        if self.progress:
            self.progress(self.total, self.total, "done")
        return self.timings


def safe_name(name: str) -> str:
    """A figure name usable as a file name: anything but letters, digits, ``_ . -`` becomes ``_``."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", str(name)) or "_"


def charts_module(name: str):
    """``core.charts.<name>``, or None while the charts package (or that module) does not exist."""
    import importlib

    try:
        return importlib.import_module(f"core.charts.{name}")
    except ImportError:
        return None


def png_status(requested: bool) -> tuple[bool, str | None]:
    if not requested:
        return False, "PNG export turned off"
    export = charts_module("export")
    if export is None:
        return False, "PNG export unavailable: core.charts.export is not installed"
    try:
        reason = export.png_unavailable_reason()
        if reason:
            return False, f"PNG export unavailable: {reason}"
    except Exception as exc:  # noqa: BLE001 - a broken exporter must not sink the rest of the report
        return False, f"PNG export unavailable: {type(exc).__name__}: {exc}"
    return True, None


def write_pngs(figures: dict[str, Any], out_dir: Path, png: bool, note: str | None
               ) -> tuple[bool, str | None, list[Path]]:
    """Export every figure as ``figures/<name>.png``; (png written?, note, paths)."""
    if not png or not figures:
        return False, note or ("no figures: the core.charts package is not available" if png else note), []
    export = charts_module("export")
    fig_dir = out_dir / FIGURES_DIR
    fig_dir.mkdir(parents=True, exist_ok=True)
    try:
        paths = export.export_png(figures, fig_dir)
    except Exception as exc:  # noqa: BLE001 - the tables and JSON are still worth writing
        return False, f"PNG export failed: {type(exc).__name__}: {exc}", []
    return True, None, [Path(p) for p in paths]


def figures_markdown(names: list[str], png: bool, note: str | None) -> str:
    lines = ["## Figures", ""]
    if png:
        lines += [f"![{n}]({FIGURES_DIR}/{safe_name(n)}.png)" for n in names]
    else:
        lines.append(f"PNG figures were not written: {note or 'unavailable'}. The figures listed in "
                     "report.json can be rendered in the dashboard.")
    return "\n".join(lines) + "\n"


def build_report(kind: str, frame, out_dir: str | Path, settings: ReportSettings = ReportSettings(),
                 source: dict[str, Any] | None = None, progress: Progress | None = None) -> ReportResult:
    """Write the bundle of a validated input (``kind``, ``frame`` as core.io or the store give them)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    common = {"seed": settings.seed, "input": source or {}, "versions": versions()}
    if kind == "votes":
        from core.report.votes import build_votes_report

        return build_votes_report(frame, out, settings, common, progress)
    if kind == "eval_runs":
        from core.report.runs import build_runs_report

        return build_runs_report(frame, out, settings, common, progress)
    from core.io import InputError, Problem

    raise InputError(str((source or {}).get("source", "input")),
                     [Problem((), f"holds {kind.replace('_', ' ')}; a report needs individual votes or a score "
                                  "table (EvalRuns)")])


def read_report_input(args) -> tuple[str, Any, dict[str, Any]]:
    """(kind, frame, source) as ``core.cli.read_input`` reads them, plus the input's sha256 and origin."""
    from core.io import DEFAULT_MISSING, InputError, Problem, load, load_lm_eval, parse_pairs
    from core.io.missing import apply_missing_rule
    from core.store import DatasetNotFound, Store

    path = Path(args.votes)
    missing = getattr(args, "missing", DEFAULT_MISSING)
    if path.is_dir() or args.kind == "lm_eval":
        loaded = load_lm_eval([path], metric=getattr(args, "metric", None) or "acc", missing=missing)
    elif path.exists():
        loaded = load(path, kind=args.kind, columns=parse_pairs(args.map, "--map"),
                      outcomes=parse_pairs(args.outcome, "--outcome", empty_key=True), missing=missing)
    else:
        with Store(args.db) as store:
            try:
                info = store.dataset(args.votes)
            except DatasetNotFound as exc:
                raise InputError(args.votes, [Problem((), "no such file, and no stored dataset of that name")],
                                 exc.hint or None) from None
            frame = store.load(info.id)
        if info.kind == "eval_runs" and missing != DEFAULT_MISSING:
            frame, _ = apply_missing_rule(frame, missing)  # cells left out at ingest now count 0
        return info.kind, frame, {"source": f"dataset {info.name} (id {info.id})", "sha256": info.sha256,
                                  "rows": len(frame), "missing": missing}
    return loaded.kind, loaded.frame, {"source": str(loaded.source), "sha256": loaded.sha256,
                                       "rows": int(loaded.rows), "missing": missing}


__all__ = ["ReportResult", "ReportSettings", "build_report", "read_report_input", "terminal_progress", "versions"]

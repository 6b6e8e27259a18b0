"""What every report bundle shares: its settings and result, the step counter behind the progress line,
the software versions it records, and the PNG figures it writes (``figures/*.png`` through
:mod:`core.charts.export`, one kaleido session per batch, or a note saying why there are none).

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

from core.charts import export

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
    baseline: str | None = None  # judged preferences: the baseline (None: the input's only one)
    qualify: str | None = None  # the qualification rules (--qualify; None: golden,fast)


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


def png_status(requested: bool) -> tuple[bool, str | None]:
    if not requested:
        return False, "PNG export turned off"
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

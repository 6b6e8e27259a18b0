"""A report bundle kept in memory for downloads (the dashboard's Reports page): built in a temporary
folder from a stored dataset and its filters, read back as bytes, zipped on demand."""

from __future__ import annotations

import io
import tempfile
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from core.filters import Filters
from core.filters import apply as apply_filters
from core.report.build import build_report
from core.report.bundle import FIGURES_DIR, REPORT_JSON, ReportSettings
from core.store import Dataset

MIME = {".json": "application/json", ".md": "text/markdown", ".csv": "text/csv", ".zip": "application/zip"}


@dataclass(frozen=True)
class Bundle:
    """A built report: its files (name -> bytes) and the PNG figures (name -> bytes)."""

    key: tuple
    files: dict[str, bytes]
    figures: dict[str, bytes]
    png_note: str | None

    def file(self, suffix: str) -> tuple[str, bytes] | None:
        """The main file with this suffix (report.json for .json)."""
        names = sorted(n for n in self.files if n.endswith(suffix))
        if suffix == ".json" and REPORT_JSON in self.files:
            names = [REPORT_JSON]
        return (names[0], self.files[names[0]]) if names else None

    def figures_zip(self) -> bytes:
        return _zip({f"{FIGURES_DIR}/{n}": data for n, data in self.figures.items()})

    def everything_zip(self) -> bytes:
        return _zip({**self.files, **{f"{FIGURES_DIR}/{n}": d for n, d in self.figures.items()}})


def bundle_key(dataset: Dataset, filters: Filters, settings: ReportSettings) -> tuple:
    return (dataset.id, dataset.sha256, filters, settings)


def build_bundle(dataset: Dataset, frame: pd.DataFrame, filters: Filters, settings: ReportSettings,
                 progress) -> Bundle:
    """Write the bundle of the filtered dataset to a temporary folder and read it back."""
    # The dimension is the report's to choose (it ranks every dimension per dimension too): the other
    # filters narrow the rows.
    kept = apply_filters(frame, replace(filters, dimensions=()))
    if filters.dimensions and settings.dimension is None:
        settings = replace(settings, dimension=filters.dimensions[0])
    source = {"source": f"dataset {dataset.name} (id {dataset.id})", "sha256": dataset.sha256, "rows": len(kept),
              "filters": filters.describe()}
    with tempfile.TemporaryDirectory(prefix="evalboard-report-") as tmp:
        result = build_report(dataset.kind, kept, tmp, settings, source, progress)
        out = Path(tmp)
        files = {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}
        fig_dir = out / FIGURES_DIR
        figures = {p.name: p.read_bytes() for p in sorted(fig_dir.glob("*.png"))} if fig_dir.exists() else {}
    return Bundle(bundle_key(dataset, filters, settings), files, figures, result.png_note)


def safe_stem(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60] or "dataset"


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()

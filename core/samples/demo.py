"""The committed sample datasets, put into a store so the dashboard opens with data to explore."""

from __future__ import annotations

from pathlib import Path

from core.io import load
from core.store import REPO_ROOT, IngestResult, Store

SAMPLES_DIR = REPO_ROOT / "data" / "samples"
# file name -> dataset name; the files are written by ``python -m core.samples``
SAMPLE_FILES = {"arena_demo.csv": "arena_demo", "evalruns_demo.csv": "evalruns_demo", "judge_demo.csv": "judge_demo"}


def sample_paths(directory: Path = SAMPLES_DIR) -> dict[str, Path]:
    return {name: directory / file for file, name in SAMPLE_FILES.items()}


def ensure_samples(store: Store, directory: Path = SAMPLES_DIR) -> list[IngestResult]:
    """Store every sample dataset that is not stored yet (re-running adds nothing)."""
    results = []
    for name, path in sample_paths(directory).items():
        results.append(store.ingest(load(path), name=name))
    return results

"""The report package imports only what a caller uses: its ``__init__`` is a docstring, and the shared
parts (settings, progress, PNG export) load without the votes and score-table bundles."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(m for m in sys.modules if m.startswith('core.')))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_the_package_init_loads_nothing():
    assert loaded_after("import core.report") == {"core.report"}


def test_the_shared_parts_load_without_the_bundles():
    loaded = loaded_after("import core.report.bundle")
    assert not {"core.report.votes", "core.report.runs", "core.report.build", "core.ranking", "core.bias"} & loaded

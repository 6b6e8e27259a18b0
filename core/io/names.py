"""Rules for names a user gives or a file name implies: dataset names follow the same one-line rules
as model names, and may not start like a spreadsheet formula (they reach CSV exports and window titles)."""

from __future__ import annotations

from pathlib import Path

from core.io.columns import _CONTROL
from core.io.problems import InputError, Problem

FORMULA_START = ("=", "+", "-", "@")
MAX_NAME_CHARS = 200
NAME_HINT = "give the dataset another name: --name NAME on the command line, 'Dataset name' on the Data page"


def default_dataset_name(source: str) -> str:
    """The file name without its extensions (``votes.csv.gz`` -> ``votes``)."""
    return Path(source).name.split(".")[0] or "dataset"


def dataset_name(source: str, name: str | None = None) -> str:
    """The name a dataset is stored under: ``name`` when given, else from the file name; refused with an
    :class:`InputError` (naming the file) when it breaks a name rule."""
    explicit = name is not None and name != ""
    chosen = (name if explicit else default_dataset_name(source)).strip()
    origin = "the dataset name" if explicit else "the dataset name taken from the file name"
    wrong = name_problem(chosen)
    if wrong:
        raise InputError(source, [Problem((), f"{origin} {chosen!r} {wrong}")], NAME_HINT)
    return chosen


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a dataset name, or None."""
    if not name:
        return "is empty"
    if _CONTROL.search(name):
        return "holds a line break or control character"
    if name.startswith(FORMULA_START):
        return f"starts with {name[0]!r}, which a spreadsheet reads as a formula"
    if len(name) > MAX_NAME_CHARS:
        return f"is longer than {MAX_NAME_CHARS} characters"
    return None

"""Writing the demo data as CSV: the committed samples and big, chunked arena files for benchmarks.

Files are byte-identical on rerun: no index column, ``\\n`` line endings whatever the OS, and
floats that are already rounded (response times to 0.01 s, scores to 4 decimals) written with
Python's shortest round-trip repr.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from core.formats import csv_frame
from core.samples.arena import arena_chunks, arena_demo
from core.samples.evalruns import evalruns_demo
from core.validation import check_integer

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "data" / "samples"
ARENA_SAMPLE = "arena_demo.csv"
EVALRUNS_SAMPLE = "evalruns_demo.csv"


def _write_csv(frame: pd.DataFrame, handle, header: bool) -> None:
    handle.write(csv_frame(frame, header=header))


def write_samples(directory: str | Path = SAMPLES_DIR) -> dict[str, Path]:
    """Write ``arena_demo.csv`` (20,000 votes, 12 models, seed 0) and ``evalruns_demo.csv`` (seed 0).

    Parameters
    ----------
    directory : str or Path
        Target folder, created if missing; defaults to the repository's ``data/samples``.

    Returns
    -------
    dict
        ``{"arena": path, "evalruns": path}``.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = {}
    for key, name, frame in (
        ("arena", ARENA_SAMPLE, arena_demo(20_000, 12, seed=0)),
        ("evalruns", EVALRUNS_SAMPLE, evalruns_demo(seed=0)),
    ):
        path = directory / name
        tmp = path.with_name(path.name + ".tmp")
        # Write then rename, so an interrupted run never leaves a truncated sample behind.
        with open(tmp, "w", encoding="utf-8", newline="") as handle:
            _write_csv(frame, handle, header=True)
        tmp.replace(path)
        written[key] = path
    return written


def write_arena_csv(
    path: str | Path,
    n_votes: int,
    n_models: int = 12,
    seed: int = 0,
    chunk_size: int = 1_000_000,
    start: str = "2026-10-01",
) -> Path:
    """Write a (possibly very large) demo arena CSV chunk by chunk, in bounded memory.

    Parameters
    ----------
    path : str or Path
        Output file (parent folders are created).
    n_votes, n_models, seed, start
        As for :func:`core.samples.arena_demo`.
    chunk_size : int
        Votes generated and written at a time; peak memory grows with it (~0.9 GB per million).
        The same distribution for any value; the file is deterministic for given arguments and
        identical to ``arena_demo(...)`` when ``chunk_size >= n_votes``.

    Returns
    -------
    Path
        The written file.
    """
    check_integer(n_votes, "n_votes", 0)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    chunks = arena_chunks(n_votes, n_models, seed, start, chunk_size=chunk_size)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as handle:
        for k, chunk in enumerate(chunks):
            _write_csv(chunk, handle, header=k == 0)
    tmp.replace(path)
    return path

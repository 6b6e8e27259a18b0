"""Style-feature extraction benchmark: core.io.style_features.pair_features on 1,000,000 pairs of ~2 kB answers.

The answers are a realistic markdown mix: prose, ``##`` headers, ``-``/``*``/numbered list items (some nested),
``**bold**`` and ``__bold__`` spans, single ``*`` and ``_`` in prose, fenced Python blocks in a quarter of the
answers, CRLF line ends in a fifth. Prints the median of ``--repeats`` runs, wall and CPU seconds (CPU of
every thread), and the ratio to the implementation of an earlier commit (``--old``, read with ``git show``)
on ``--old-pairs`` pairs, both measured in this run, after checking that the two count alike.

Run: ``.venv/bin/python bench/bench_style_features.py [--pairs 1000000] [--repeats 3] [--old-pairs 100000]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.io import style_features  # noqa: E402

OLD_COMMIT = "0ec080d"  # the numpy-only kernel (a pass over the bytes per feature, 32k-answer chunks)


def answer_pool(size: int, rng: np.random.Generator) -> list[bytes]:
    """Distinct ~2 kB answers of the mix the module docstring describes."""
    lines = []
    for i in range(800):
        kind = i % 12
        shapes = [f"## Section {i}", f"- point {i} about **things** here", f"{i % 9 + 1}. step {i} of the plan",
                  f"  * nested item {i} with __under__ bold", f"**Note {i}:** see __this__ and **that**",
                  f"### Sub {i}", f"Plain prose sentence {i} explaining a detail, e.g. 1.5 million users, *em* here."]
        lines.append(shapes[kind] if kind < len(shapes)
                     else f"Plain prose sentence {i} explaining a detail, with a_b and x*y.")
    code = "```python\nfor x in range(3):\n    print(x)  # not a header\n- not a list\n```"
    pool = []
    for _ in range(size):
        parts, total, fenced = [], 0, rng.random() < 0.25
        while total < 2048:
            line = code if fenced and rng.random() < 0.08 else lines[rng.integers(0, len(lines))]
            parts.append(line + "\n")
            total += len(line) + 1
        text = "".join(parts)
        pool.append((text.replace("\n", "\r\n") if rng.random() < 0.2 else text).encode())
    return pool


def texts_column(pool: list[bytes], n: int, rng: np.random.Generator) -> pa.Array:
    pick = rng.integers(0, len(pool), n)
    lengths = np.array([len(p) for p in pool], dtype=np.int64)[pick]
    offsets = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    return pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(b"".join(pool[i] for i in pick)))


def old_module(commit: str):
    """core/io/style_features.py as it was at ``commit``, loaded as a module of its own (None without git)."""
    try:
        source = subprocess.run(["git", "show", f"{commit}:core/io/style_features.py"], cwd=ROOT, check=True,
                                capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    folder = Path(tempfile.mkdtemp(prefix="old-style-features-"))
    path = folder / "old_style_features.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("old_style_features", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(fn, repeats: int) -> tuple[float, float, list[float]]:
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), walls


def compare_with_old(pool: list[bytes], rng: np.random.Generator, args: argparse.Namespace) -> None:
    """Old and new on the same ``--old-pairs`` pairs, after checking that they count alike."""
    old = old_module(args.old)
    if old is None:
        print(f"(no git or no commit {args.old}: the ratio to the old implementation is not measured)")
        return
    a, b = texts_column(pool, args.old_pairs, rng), texts_column(pool, args.old_pairs, rng)
    if not style_features.pair_features(a, b).equals(old.pair_features(a, b)):
        raise SystemExit("the old and the new implementation count differently")
    new_wall, new_cpu, _ = timed(lambda: style_features.pair_features(a, b), args.repeats)
    old_wall, old_cpu, _ = timed(lambda: old.pair_features(a, b), args.repeats)
    print(f"\n== {args.old_pairs:,} pairs: old ({args.old}) vs new, identical counts ==")
    print(f"  old: median {old_wall:.2f} s wall, {old_cpu:.2f} s CPU")
    print(f"  new: median {new_wall:.2f} s wall, {new_cpu:.2f} s CPU")
    print(f"  ratio old/new: {old_wall / new_wall:.2f}x wall, {old_cpu / new_cpu:.2f}x CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--old-pairs", type=int, default=100_000)
    parser.add_argument("--old", default=OLD_COMMIT, help="commit of the implementation to compare with")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    pool = answer_pool(20_000, rng)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start; "
          f"{style_features.WORKERS} threads above {style_features.PARALLEL_MIN_BYTES >> 20} MB of text")

    compare_with_old(pool, rng, args)
    a, b = texts_column(pool, args.pairs, rng), texts_column(pool, args.pairs, rng)
    gb = (a.nbytes + b.nbytes) / 1e9
    wall, cpu, walls = timed(lambda: style_features.pair_features(a, b), args.repeats)
    print(f"\n== {args.pairs:,} pairs ({gb:.2f} GB of text) ==")
    print(f"  median {wall:.1f} s wall (runs {', '.join(f'{w:.1f}' for w in walls)}), {cpu:.1f} s CPU; "
          f"target <= 20 s; load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()

"""`evalboard --help` loads no heavy library, and a command loads only what it uses.

Building the parser (every subcommand's ``--help`` included) must not import numpy, pandas, scipy,
pyarrow, plotly, streamlit, openai or sqlite-utils: together they take seconds to import, and a user
asking for help should not wait for them. Each check runs in a fresh interpreter, since this test
process has long imported all of them.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

from core.collect.stop import DEFAULT_GRACE_S
from core.commands import parsers
from core.llm.cleaning import CleaningRules
from core.samples.demo import SAMPLES_DIR
from tests.conftest import REPO

HEAVY = ("numpy", "pandas", "scipy", "pyarrow", "plotly", "streamlit", "openai", "sqlite_utils")

# Runs every `--help` of the parser tree (top level, each command, each action of collect/campaign/
# evalset) in one interpreter, then prints which heavy top-level packages were imported.
WALK_HELP = """
import argparse, contextlib, io, json, sys
import core.cli

def subcommands(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()

def walk(parser, path):
    yield path
    for name, sub in subcommands(parser):
        yield from walk(sub, path + [name])

paths = list(walk(core.cli.build_parser(), []))
for path in paths:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        try:
            core.cli.main(path + ["--help"])
        except SystemExit as exc:
            assert exc.code == 0, (path, exc.code)
    assert "usage: evalboard" in out.getvalue(), path
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1:]))
print(json.dumps({"paths": [" ".join(p) for p in paths], "heavy": heavy}))
"""


def run_python(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_no_help_imports_a_heavy_library():
    proc = run_python("-c", WALK_HELP, *HEAVY)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    # the walk reached every command and the workflow's actions, so an empty list below means something
    for command in ("", "rank", "leaderboard", "report", "bias", "ingest", "collect run", "campaign create",
                    "evalset build"):
        assert command in result["paths"], command
    assert result["heavy"] == []


def test_python_m_help_imports_no_heavy_module():
    """The import log of ``python -m core.cli --help`` (and of ``rank --help``) names no heavy package."""
    for argv in (["--help"], ["rank", "--help"]):
        proc = run_python("-X", "importtime", "-m", "core.cli", *argv)
        assert proc.returncode == 0, proc.stderr
        assert "usage: evalboard" in proc.stdout
        imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in proc.stderr.splitlines()
                    if line.startswith("import time:")}
        assert "core" in imported  # the log was read
        assert not imported & set(HEAVY), (argv, sorted(imported & set(HEAVY)))


RANK_IMPORTS = """
import sys
import core.cli
code = core.cli.main(["rank", sys.argv[1], "--bootstrap", "20", "--output", sys.argv[2]])
print(code, sorted(m for m in sys.modules if m.split(".")[0] in ("openai", "plotly", "streamlit", "sqlite_utils")
                   or m in ("scipy", "core.store")))
"""


def test_rank_of_a_file_loads_only_what_ranking_needs(tmp_path):
    """Ranking a file needs neither the store, nor scipy, nor the model client or the charts."""
    proc = run_python("-c", RANK_IMPORTS, str(SAMPLES_DIR / "arena_demo.csv"), str(tmp_path / "out.json"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split(" ", 1) == ["0", "[]\n"]
    assert json.loads((tmp_path / "out.json").read_text())["n_models"] == 12


def test_the_light_parser_agrees_with_the_modules_it_does_not_import():
    """core.commands.parsers keeps its own copies of two settings: importing them would load the collector."""
    assert parsers.DEFAULT_GRACE_S == DEFAULT_GRACE_S
    assert set(parsers.CLEANING_RULES) == {f.name for f in dataclasses.fields(CleaningRules)}

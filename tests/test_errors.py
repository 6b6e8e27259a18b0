"""Every error a user can cause is an EvalBoardError: the CLI prints its message and exits 2; anything else
is a fault of the software, named by its type, exit 1."""

from __future__ import annotations

import ast
import importlib
import sqlite3
import subprocess
import sys

import pytest

from core import cli
from core.cli import main
from core.errors import EvalBoardError, SettingError
from core.samples.demo import SAMPLES_DIR
from tests.conftest import REPO

ARENA = str(SAMPLES_DIR / "arena_demo.csv")

# Exceptions that are not the user's to fix, so they stay outside EvalBoardError (exit 1 in the CLI).
INTERNAL = {
    "core.ranking.bradley_terry.ConvergenceError": "a solver that stops short is the software's to fix",
    "core.store.transactions.StoreBusy": "another process held the store: a moment's contention, not bad input",
    "core.formats.NonFiniteOutputError": "a NaN or inf reaching an output is a bug by definition",
    "core.llm.client.LLMError": "a model endpoint's failure, recorded per request by the collector",
}
BUILT_IN = {"Exception", "ValueError", "KeyError", "LookupError", "RuntimeError", "PermissionError", "OSError",
            "TypeError"}


def exception_classes_in_core() -> list[tuple[str, str]]:
    """(module, class) of every class in core/ that derives from an exception by name (read from the source,
    so a new module's errors are found without being listed here)."""
    found = []
    for path in sorted((REPO / "core").rglob("*.py")):
        module = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else b.attr for b in node.bases
                         if isinstance(b, (ast.Name, ast.Attribute))}
                if bases & BUILT_IN or any(b.endswith("Error") for b in bases):
                    found.append((module, node.name))
    return found


CLASSES = exception_classes_in_core()


def test_the_scan_finds_the_errors():
    names = {name for _, name in CLASSES}
    assert {"InputError", "RankingError", "DatasetNotFound", "TokenError", "SettingError", "EvalBoardError",
            "ConvergenceError"} <= names
    assert len(CLASSES) >= 30


@pytest.mark.parametrize("module, name", CLASSES, ids=[f"{m}.{n}" for m, n in CLASSES])
def test_every_error_of_core_is_a_user_error_or_listed_as_internal(module, name):
    cls = getattr(importlib.import_module(module), name)
    if f"{module}.{name}" in INTERNAL:
        assert not issubclass(cls, EvalBoardError)
    else:
        assert issubclass(cls, EvalBoardError), f"{module}.{name} is neither an EvalBoardError nor listed as internal"


@pytest.mark.parametrize("module, name, built_in", [
    ("core.io.problems", "InputError", ValueError),
    ("core.store.names", "DatasetNotFound", KeyError),
    ("core.campaign.store", "TokenError", PermissionError),
    ("core.campaign.store", "CampaignError", ValueError),
    ("core.store.schema", "SchemaTooNew", RuntimeError),
    ("core.collect.store", "RunNotFound", KeyError),
    ("core.evalset.store", "EvalSetNotFound", KeyError),
    ("core.ranking", "RankingError", ValueError),
    ("core.ranking.ties", "NotIdentifiableError", ValueError),
    ("core.ranking.bootstrap", "BootstrapError", ValueError),
])
def test_user_errors_keep_their_built_in_base(module, name, built_in):
    """``except ValueError`` (or KeyError, PermissionError …) around a call keeps catching them."""
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, EvalBoardError) and issubclass(cls, built_in)


def test_key_errors_keep_their_own_message():
    """KeyError quotes its argument; the not-found errors print a sentence instead, also as EvalBoardErrors."""
    from core.collect.store import RunNotFound
    from core.store.names import DatasetNotFound

    assert str(DatasetNotFound("x", "stored: a, b")) == "no dataset named or numbered 'x'; stored: a, b"
    assert str(RunNotFound("r")) == "no collection run named 'r'"


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


def test_a_bad_file_exits_2_with_its_name_first(capsys):
    code, err = run_cli(capsys, "rank", "/dev/null")
    assert (code, err) == (2, "/dev/null: rejected, nothing was stored: no such file\n")


@pytest.mark.parametrize("argv, message", [
    (["--alpha", "2"], "evalboard: `alpha` must lie strictly between 0 and 1, not 2.0\n"),
    (["--bootstrap", "0"], "evalboard: `replicates` must be a positive integer, not 0\n"),
    (["--seed", "-1"], "evalboard: `seed` must be a non-negative integer, not -1\n"),
    (["--anchor", "atlas-70b=high"], "evalboard: --anchor needs a number after '=', not 'high'\n"),
    (["--anchor", "Z=1200"], None),  # a RankingError: the anchor names no model of the data
])
def test_a_bad_setting_exits_2_with_the_message(capsys, argv, message):
    code, err = run_cli(capsys, "rank", ARENA, "--bootstrap", "20", *argv)
    assert code == 2
    if message is None:
        assert err.startswith("evalboard: --anchor names 'Z'") and err.count("\n") == 1
    else:
        assert err == message


def test_an_unknown_dataset_exits_2(db_path, capsys):
    code, err = run_cli(capsys, "delete", "nosuch", "--db", str(db_path))
    assert code == 2 and err.startswith("evalboard: no dataset named or numbered 'nosuch'")


def test_a_store_from_a_newer_evalboard_exits_2(tmp_path, capsys):
    from core.store.schema import SCHEMA_VERSION

    db = tmp_path / "newer.db"
    with sqlite3.connect(db) as con:
        con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    code, err = run_cli(capsys, "datasets", "--db", str(db))
    assert code == 2 and err.startswith("evalboard: ") and "newer than this EvalBoard" in err
    assert "SchemaTooNew" not in err


def test_a_bad_campaign_setting_exits_2(db_path, tmp_path, capsys):
    answers = tmp_path / "answers.csv"
    answers.write_text("query_id,prompt,model,answer\n" + "".join(f"q{i},Q{i}?,{m},answer {m}{i}\n"
                                                                for i in range(4) for m in ("a", "b")))
    code, err = run_cli(capsys, "campaign", "create", "c1", "--db", str(db_path), "--answers", str(answers),
                        "--overlap", "1.5")
    assert code == 2 and err.startswith("evalboard: overlap must lie in [0, 1]")


@pytest.mark.parametrize("error", [ValueError("bad shape"), KeyError("k"), ZeroDivisionError("division by zero")])
def test_a_fault_of_the_software_exits_1_naming_its_type(monkeypatch, capsys, error):
    """A plain ValueError is no longer taken for bad input: only EvalBoardError is."""
    def broken(args):
        raise error

    monkeypatch.setitem(cli.COMMANDS, "datasets", broken)
    code, err = run_cli(capsys, "datasets")
    assert code == 1 and err == f"evalboard: {type(error).__name__}: {error}\n"


def test_a_user_error_raised_anywhere_is_mapped_without_knowing_its_module(monkeypatch, capsys):
    class SomeNewError(EvalBoardError, ValueError):
        pass

    def refuses(args):
        raise SomeNewError("that will not do")

    monkeypatch.setitem(cli.COMMANDS, "datasets", refuses)
    assert run_cli(capsys, "datasets") == (2, "evalboard: that will not do\n")


def test_the_installed_command_prints_no_traceback(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "core.cli", "rank", ARENA, "--alpha", "2"], cwd=REPO,
                          capture_output=True, text=True, timeout=120,
                          env={"EVALBOARD_DB": str(tmp_path / "x.db"), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2
    assert proc.stderr == "evalboard: `alpha` must lie strictly between 0 and 1, not 2.0\n"


def test_setting_error_is_a_value_error():
    assert issubclass(SettingError, ValueError) and issubclass(SettingError, EvalBoardError)

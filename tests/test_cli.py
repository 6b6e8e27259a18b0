"""The evalboard CLI contract: output, exit status 0 / 2 / 1, and the store left intact on errors."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from core.cli import main
from core.samples.demo import SAMPLES_DIR
from core.store import Store
from tests.conftest import REPO, snapshot


def test_ingest_prints_what_was_stored(db_path, capsys):
    assert main(["ingest", str(SAMPLES_DIR / "arena_demo.csv"), "--name", "arena", "--db", str(db_path)]) == 0
    out = capsys.readouterr().out
    assert "stored 20,000 votes rows as dataset 'arena' (id 1)" in out
    with Store(db_path) as store:
        assert store.dataset("arena").rows == 20_000


def test_ingest_same_file_twice_reports_it(db_path, capsys):
    path = str(SAMPLES_DIR / "evalruns_demo.csv")
    assert main(["ingest", path, "--db", str(db_path)]) == 0
    assert main(["ingest", path, "--db", str(db_path)]) == 0
    assert "already stored as dataset 'evalruns_demo'" in capsys.readouterr().out


def test_invalid_file_exits_2_and_stores_nothing(db_path, tmp_path, capsys):
    main(["samples", "--db", str(db_path)])
    before = snapshot(db_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("model_a,model_b,winner\nx,y,a\nx,x,b\ny,z,maybe\n")
    assert main(["ingest", str(bad), "--db", str(db_path)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err
    assert "model_a == model_b" in err and "1 row: 2 ('x')" in err
    assert "unknown winner label" in err and "3 ('maybe')" in err
    assert snapshot(db_path) == before


def test_mapping_options(db_path, tmp_path, capsys):
    path = tmp_path / "prefs.csv"
    path.write_text("sys1,sys2,pref,who\nx,y,A-better,u1\ny,x,B-better,u2\nx,y,same,u1\n")
    code = main(["ingest", str(path), "--db", str(db_path), "--map", "model_a=sys1", "--map", "model_b=sys2",
                 "--map", "winner=pref", "--map", "annotator_id=who", "--outcome", "A-better=model_a",
                 "--outcome", "B-better=model_b", "--outcome", "same=tie"])
    assert code == 0, capsys.readouterr().err
    with Store(db_path) as store:
        frame = store.load("prefs")
    assert frame["winner"].tolist() == ["model_a", "model_b", "tie"]
    assert frame["annotator_id"].tolist() == ["u1", "u2", "u1"]


def test_malformed_option_exits_2(db_path, capsys):
    assert main(["ingest", str(SAMPLES_DIR / "arena_demo.csv"), "--db", str(db_path), "--map", "oops"]) == 2
    assert "--map must look like NAME=VALUE" in capsys.readouterr().err


def test_missing_file_exits_2(db_path, tmp_path, capsys):
    assert main(["ingest", str(tmp_path / "nope.csv"), "--db", str(db_path)]) == 2
    assert "no such file" in capsys.readouterr().err


def test_datasets_and_delete(db_path, capsys):
    assert main(["datasets", "--db", str(db_path)]) == 0
    assert "no datasets stored" in capsys.readouterr().out
    assert main(["samples", "--db", str(db_path)]) == 0
    assert main(["datasets", "--db", str(db_path)]) == 0
    listing = capsys.readouterr().out
    assert "arena_demo" in listing and "20,000" in listing and "evalruns_demo" in listing
    assert "judge_demo" in listing and "preferences" in listing
    assert main(["delete", "arena_demo", "--db", str(db_path)]) == 0
    assert "deleted dataset 'arena_demo'" in capsys.readouterr().out
    assert main(["delete", "arena_demo", "--db", str(db_path)]) == 2
    assert "no dataset named or numbered 'arena_demo'" in capsys.readouterr().err


def test_other_failures_exit_1(db_path, monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("core.store.Store.ingest", broken)
    assert main(["ingest", str(SAMPLES_DIR / "evalruns_demo.csv"), "--db", str(db_path)]) == 1
    assert "disk full" in capsys.readouterr().err


def test_usage_error_exits_2():
    with pytest.raises(SystemExit) as exc:
        main(["ingest"])
    assert exc.value.code == 2


def test_console_script_is_installed(db_path):
    """The installed `evalboard` entry point, as a user types it."""
    exe = os.path.join(os.path.dirname(sys.executable), "evalboard")
    if not os.path.exists(exe):
        pytest.skip("console script not installed in this environment")
    proc = subprocess.run([exe, "ingest", str(SAMPLES_DIR / "evalruns_demo.csv"), "--db", str(db_path)],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "stored 36 eval runs rows" in proc.stdout

"""What a fresh machine gets from `make run` / `make test`: Debian's Chromium (installed when root, else
one line saying the command), kaleido as a runtime dependency, and PNG figures rendered by that
Chromium with nothing downloaded."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tomllib
from pathlib import Path

import plotly.graph_objects as go
import pytest

from core.charts import export
from tests.app_pages import app_router, samples  # noqa: F401 - fixtures

REPO = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
# A make started by these tests must not inherit the settings of the `make test` that runs them.
MAKE_ENV = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == PNG_MAGIC and head[12:16] == b"IHDR"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _executable(path: Path, body: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


# --- the package -------------------------------------------------------------------------------------

def test_kaleido_is_a_runtime_dependency_not_a_test_extra():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = [d.split("=")[0].split(">")[0].strip() for d in project["dependencies"]]
    extras = [d.split("=")[0].split(">")[0].strip() for d in project["optional-dependencies"]["test"]]
    assert "kaleido" in names and "kaleido" not in extras


# --- the make step that installs Chromium ------------------------------------------------------------

def _make_chromium(tmp_path: Path, chromium: Path, user_id: int, require: bool = False,
                   creates_chromium: bool = True) -> tuple[subprocess.CompletedProcess, list[str]]:
    """``make chromium`` with a fake apt-get that records its arguments (and "installs" by creating the
    browser file), run as the given user id."""
    calls = tmp_path / "apt-calls.txt"
    install = f'[ "$1" = install ] && touch {chromium} && chmod +x {chromium}\n' if creates_chromium else ""
    apt = _executable(tmp_path / "fake-apt-get", f'#!/bin/sh\necho "$@" >> {calls}\n{install}exit 0\n')
    result = subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO), "chromium", f"CHROMIUM={chromium}", f"APT_GET={apt}",
         f"USER_ID={user_id}", f"REQUIRE_CHROMIUM={int(require)}"],
        capture_output=True, text=True, timeout=60, env=MAKE_ENV)
    return result, calls.read_text().splitlines() if calls.exists() else []


@needs_make
def test_make_leaves_an_installed_chromium_alone(tmp_path):
    chromium = _executable(tmp_path / "chromium")
    result, apt_calls = _make_chromium(tmp_path, chromium, user_id=0)
    assert result.returncode == 0 and result.stdout == "" and apt_calls == []


@needs_make
def test_make_as_root_installs_debian_chromium(tmp_path):
    chromium = tmp_path / "chromium"
    result, apt_calls = _make_chromium(tmp_path, chromium, user_id=0)
    assert result.returncode == 0, result.stderr
    assert apt_calls == ["update -qq", "install -y -qq chromium"]
    assert os.access(chromium, os.X_OK)
    assert "Chromium is missing" not in result.stdout


@needs_make
def test_make_without_root_says_the_command_in_one_line_and_goes_on(tmp_path):
    result, apt_calls = _make_chromium(tmp_path, tmp_path / "chromium", user_id=1000)
    assert result.returncode == 0 and apt_calls == []
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1 and "sudo apt-get install -y chromium" in lines[0]


@needs_make
def test_make_fails_in_ci_when_chromium_cannot_be_installed(tmp_path):
    result, _ = _make_chromium(tmp_path, tmp_path / "chromium", user_id=0, require=True, creates_chromium=False)
    assert result.returncode != 0 and "Chromium is missing" in result.stdout


@needs_make
@pytest.mark.parametrize("target", ["run", "test"])
def test_run_and_test_both_take_the_chromium_step(target, tmp_path):
    plan = subprocess.run(["make", "--no-print-directory", "-n", "-C", str(REPO), target,
                           f"CHROMIUM={tmp_path / 'absent'}"], capture_output=True, text=True, timeout=60,
                          env=MAKE_ENV)
    assert plan.returncode == 0, plan.stderr
    assert "install -y -qq chromium" in plan.stdout


def test_ci_uses_the_make_step_rather_than_its_own_apt_get():
    script = (REPO / ".ci" / "run").read_text()
    assert "make test REQUIRE_CHROMIUM=1" in script and "apt-get" not in script


# --- which browser PNG export drives -----------------------------------------------------------------

@pytest.fixture
def no_browser(monkeypatch, tmp_path):
    """A machine with no browser anywhere: no BROWSER_PATH, no Debian chromium, an empty PATH."""
    monkeypatch.delenv("BROWSER_PATH", raising=False)
    monkeypatch.setattr(export, "DEBIAN_CHROMIUM", str(tmp_path / "absent" / "chromium"))
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    return empty


def test_browser_path_prefers_an_executable_browser_path(no_browser, tmp_path, monkeypatch):
    mine = _executable(tmp_path / "my-chrome")
    monkeypatch.setenv("BROWSER_PATH", str(mine))
    assert export.browser_path() == str(mine)


def test_a_wrong_browser_path_falls_back_to_debian_chromium(no_browser, tmp_path, monkeypatch):
    debian = _executable(tmp_path / "chromium")
    monkeypatch.setattr(export, "DEBIAN_CHROMIUM", str(debian))
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "nowhere"))
    assert export.browser_path() == str(debian) and export.png_available()


def test_a_chromium_on_path_is_found(no_browser):
    found = _executable(no_browser / "chromium-browser")
    assert export.browser_path() == str(found)


def test_no_browser_says_why_and_how_to_fix_it(no_browser, tmp_path, monkeypatch):
    assert export.browser_path() is None and not export.png_available()
    assert "apt-get install -y chromium" in export.png_unavailable_reason()
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "nowhere"))
    assert "BROWSER_PATH=" in export.png_unavailable_reason()
    with pytest.raises(RuntimeError, match="no Chromium-based browser was found"):
        export.export_png({"bars": go.Figure(go.Bar(y=[1]))}, tmp_path / "out")


def test_export_hands_kaleido_the_found_browser_and_no_cdn_script(monkeypatch, tmp_path):
    mine = _executable(tmp_path / "my-chrome")
    monkeypatch.setenv("BROWSER_PATH", str(mine))
    seen = {}

    def fake_write(specs, kopts, cancel_on_error):
        seen.update(specs=specs, kopts=kopts, cancel_on_error=cancel_on_error)

    import kaleido
    monkeypatch.setattr(kaleido, "write_fig_from_object_sync", fake_write)
    fig = go.Figure(go.Bar(y=[1, 2]), layout={"height": 321})
    paths = export.export_png({"bars": fig}, tmp_path / "out", width=640)
    assert seen["kopts"] == {"path": str(mine), "mathjax": False}  # MathJax would come from a CDN
    assert seen["cancel_on_error"] is True
    assert [s["path"] for s in seen["specs"]] == paths == [tmp_path / "out" / "bars.png"]
    assert seen["specs"][0]["opts"] == {"format": "png", "scale": 1.0, "width": 640, "height": 321}


# --- a real PNG from Debian's Chromium ---------------------------------------------------------------

@pytest.mark.skipif(not Path(export.DEBIAN_CHROMIUM).exists(),
                    reason="/usr/bin/chromium is not installed (make test installs it when run as root)")
def test_debian_chromium_renders_a_png(tmp_path, monkeypatch):
    """Not skipped where Chromium is installed: PNG figures are part of the product."""
    monkeypatch.delenv("BROWSER_PATH", raising=False)
    assert export.png_unavailable_reason() is None
    assert export.browser_path() == export.DEBIAN_CHROMIUM
    figures = {"bars": go.Figure(go.Bar(x=["a", "b"], y=[0.4, 0.7])),
               "tall": go.Figure(go.Scatter(y=[1, 3, 2]), layout={"height": 300})}
    paths = export.export_png(figures, tmp_path / "png", width=600)
    assert [_png_size(p) for p in paths] == [(600, export.DEFAULT_HEIGHT), (600, 300)]
    assert all(p.stat().st_size > 5_000 for p in paths)  # drawn, not an empty canvas


def test_a_report_without_a_browser_says_the_command_to_run(no_browser):
    from core.report.bundle import png_status

    written, note = png_status(True)
    assert not written and "sudo apt-get install -y chromium" in note


# --- the dashboard's Reports page shows the figures ------------------------------------------------

@pytest.mark.skipif(not Path(export.DEBIAN_CHROMIUM).exists(),
                    reason="/usr/bin/chromium is not installed (make test installs it when run as root)")
def test_the_reports_page_builds_and_shows_png_figures(app_router, samples, monkeypatch):
    """What `make run` serves: the PNG toggle is on by default and the bundle's figures are drawn."""
    from tests.app_pages import open_page
    from tests.test_app_data import run

    monkeypatch.delenv("BROWSER_PATH", raising=False)
    at = open_page("reports", samples["evalruns_demo"], report_bootstrap=50)
    assert at.toggle(key="report_png").value is True
    at.button(key="FormSubmitter:report_settings-Build the report").click()
    run(at)
    assert not at.exception and not at.error
    labels = [d.proto.label for d in at.get("download_button")]
    assert any(label.endswith("PNG figures (zip)") for label in labels), labels
    captions = [img.caption for element in at.get("imgs") + at.get("image") for img in element.proto.imgs]
    # each figure of a score-table report, drawn from its PNG in the Figures tab
    assert set(captions) == {"leaderboard_bars.png", "category_heatmap.png", "pairwise_matrix.png",
                             "critical_difference.png"}
    assert all(img.url for element in at.get("imgs") + at.get("image") for img in element.proto.imgs)

"""PNG export of plotly figures through kaleido 1.x (a headless Chromium).

All figures of a batch are rendered in ONE kaleido session, since starting Chromium dominates the cost.
The browser is chosen here and handed to kaleido, so it is always the machine's own and nothing is ever
downloaded: ``BROWSER_PATH`` when it names an executable, else Debian's ``/usr/bin/chromium`` (which
``make run`` and ``make test`` install), else a Chromium-based browser on ``PATH``. The render page loads
plotly.js from the installed plotly package and no MathJax, so rendering needs no network either.
:func:`png_available` tells whether a PNG can be made, so callers can skip PNGs cleanly when not."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import plotly.graph_objects as go

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
DEFAULT_HEIGHT = 500
DEBIAN_CHROMIUM = "/usr/bin/chromium"
# Chromium-based browsers kaleido can drive, by the names their packages put on PATH.
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome-stable", "google-chrome", "chrome",
                 "microsoft-edge", "brave-browser")
INSTALL_HINT = "install Debian's chromium (sudo apt-get install -y chromium) or set BROWSER_PATH"


def _executable(path: str | None) -> bool:
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def browser_path() -> str | None:
    """The browser PNG export drives, or None: ``BROWSER_PATH`` when it names an executable file, else
    ``/usr/bin/chromium``, else the first of :data:`BROWSER_NAMES` found on ``PATH``."""
    for candidate in (os.environ.get("BROWSER_PATH"), DEBIAN_CHROMIUM):
        if _executable(candidate):
            return candidate
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if _executable(found):
            return found
    return None


def png_unavailable_reason() -> str | None:
    """Why PNG figures cannot be rendered on this machine (one sentence with the fix), or None."""
    try:
        major = int(version("kaleido").split(".")[0])
    except (PackageNotFoundError, ValueError):
        return "kaleido is not installed (pip install 'kaleido>=1')"
    if major < 1:
        return f"kaleido {version('kaleido')} is too old (PNG export needs kaleido ≥ 1)"
    if browser_path() is None:
        wrong = os.environ.get("BROWSER_PATH")
        where = f"BROWSER_PATH={wrong!r} is not an executable and " if wrong else ""
        return f"{where}no Chromium-based browser was found: {INSTALL_HINT}"
    return None


def png_available() -> bool:
    """True when kaleido (≥ 1) is installed and a Chromium-based browser it can drive is present."""
    return png_unavailable_reason() is None


def export_png(figures: Mapping[str, go.Figure], out_dir: str | os.PathLike, width: int = 1000,
               height: int | None = None, scale: float = 1.0) -> list[Path]:
    """Write ``<out_dir>/<name>.png`` for every figure, all in one kaleido session; return the paths in
    the order of ``figures``. ``height=None`` uses each figure's own layout height (else 500 px). Names
    must be plain file stems (letters, digits, ``.``, ``_``, ``-``). Raises RuntimeError when no browser
    is available (check :func:`png_available` first); never downloads one."""
    items = list(figures.items())
    for name, _ in items:
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"figure name {name!r} is not a plain file name")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.png" for name, _ in items]
    if not items:
        return []
    reason = png_unavailable_reason()
    if reason:
        raise RuntimeError(f"PNG export unavailable: {reason}")
    import kaleido  # only when a PNG is written: kaleido (and its browser driver) is heavy and optional for the rest

    specs = [{"fig": fig.to_dict(), "path": path,
              "opts": {"format": "png", "scale": scale, "width": int(width or fig.layout.width or 1000),
                       "height": int(height or fig.layout.height or DEFAULT_HEIGHT)}}
             for path, (_, fig) in zip(paths, items)]
    # cancel_on_error: a figure that fails raises here instead of leaving a missing file behind.
    kaleido.write_fig_from_object_sync(specs, kopts={"path": browser_path(), "mathjax": False},
                                       cancel_on_error=True)
    return paths

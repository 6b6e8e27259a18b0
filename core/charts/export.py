"""PNG export of plotly figures through kaleido 1.x (a headless Chromium).

All figures of a batch are rendered in ONE kaleido session (``plotly.io.write_images``), since starting
Chromium dominates the cost. No browser is ever downloaded: :func:`png_available` tells whether kaleido
can find one (``BROWSER_PATH``, a Chromium/Chrome on ``PATH`` or in a typical location), so callers can
skip PNGs cleanly when it cannot."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from importlib.metadata import version
from pathlib import Path

import plotly.graph_objects as go

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
DEFAULT_HEIGHT = 500


def _browser_path() -> str | None:
    try:
        from choreographer.browsers.chromium import Chromium
        return Chromium.find_browser(skip_local=False)
    except Exception:  # noqa: BLE001 — any failure to look means "no browser"
        return None


def png_available() -> bool:
    """True when kaleido (≥ 1) is installed and a Chromium-based browser it can drive is present."""
    try:
        import kaleido  # noqa: F401
        if int(version("kaleido").split(".")[0]) < 1:
            return False
    except Exception:  # noqa: BLE001 — not installed, or an unreadable version
        return False
    path = _browser_path()
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


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
    if not png_available():
        raise RuntimeError("PNG export needs kaleido ≥ 1 and a Chromium/Chrome browser; none was found "
                           "(set BROWSER_PATH or install chromium)")
    import plotly.io as pio
    figs = [fig for _, fig in items]
    heights = [int(height or fig.layout.height or DEFAULT_HEIGHT) for fig in figs]
    widths = [int(width or fig.layout.width or 1000) for fig in figs]
    pio.write_images(figs, paths, format="png", width=widths, height=heights, scale=scale)
    return paths

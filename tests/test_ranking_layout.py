"""The layout of core.ranking: a scheme module imports the bottom (types, rows) and numerics only, never
the package that dispatches to it nor another scheme, and no module imports inside a function (scipy
apart: it loads where a scheme needs it, so ranking a file with plain BT never pays for it)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

RANKING = Path(__file__).resolve().parents[1] / "core" / "ranking"
SCHEMES = sorted((RANKING / "schemes").glob("[!_]*.py"))
# What a scheme may build on: the result types, the shared row builder and the numerics.
SCHEME_MAY_IMPORT = {"core.ranking." + name for name in (
    "types", "rows", "bradley_terry", "bootstrap", "cells", "covariates", "ties", "winrate", "periods", "style_fit",
    "style_model", "crowd_fit")}


def imported_modules(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_every_scheme_has_a_module():
    assert {p.stem for p in SCHEMES} == {"bt", "winrate", "stratified", "ipw", "adjusted", "davidson", "style", "crowd"}


@pytest.mark.parametrize("path", SCHEMES, ids=lambda p: p.stem)
def test_a_scheme_imports_only_the_bottom_and_numerics(path):
    ranking_imports = {m for m in imported_modules(ast.parse(path.read_text())) if m.startswith("core.ranking")}
    assert ranking_imports <= SCHEME_MAY_IMPORT, f"{path.name} imports {sorted(ranking_imports - SCHEME_MAY_IMPORT)}"


@pytest.mark.parametrize("path", [*sorted(RANKING.rglob("*.py")), *(RANKING.parent / "stats" / f"{name}.py" for name in
                                  ("newton", "resampling"))], ids=lambda p: str(p.relative_to(RANKING.parent)))
def test_no_import_inside_a_function(path):
    tree = ast.parse(path.read_text())
    inside = [f"{node.name}: line {inner.lineno}" for node in ast.walk(tree)
              if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
              for inner in ast.walk(node) if isinstance(inner, (ast.Import, ast.ImportFrom))
              and not all(name.split(".")[0] == "scipy" for name in imported_modules(inner))]
    assert inside == []

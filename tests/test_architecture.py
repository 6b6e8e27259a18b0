"""The shape of the code base, checked from its source (parsed with ``ast``, nothing imported).

- no import cycle among the modules of ``core`` (imports inside functions and under ``TYPE_CHECKING``
  count too: a cycle there is still a tangle, only a later one);
- ``core/`` holds packages and only a few small top-level modules;
- no file in ``core/`` or ``pages/`` over 450 lines, no page over 150;
- no import statement inside a function of ``core``, except the optional heavy dependencies listed in
  :data:`DEFERRED_IMPORTS`, each with its reason;
- ``core`` never imports streamlit (pages draw, core computes).

Each rule is a function of a folder that returns the offences it finds, so that the tests below can
also plant an offence in a throw-away tree and see the rule catch it.
"""

from __future__ import annotations

import ast
import functools
import textwrap
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import REPO

TOP_LEVEL_MODULES = {"__init__", "cli", "errors", "validation", "schema", "formats", "filters"}
MAX_LINES = 450
MAX_PAGE_LINES = 150
# (module, imported name) -> why it is imported inside a function rather than at the top.
DEFERRED_IMPORTS = {
    ("core.charts.export", "kaleido"): "optional: only the PNG export needs it, and it starts a browser",
    ("core.formats", "pandas"): "core.formats serves the CLI parser; `--help` must not load pandas "
                                "(tests/test_cli_imports.py)",
    ("core.formats", "numpy"): "as pandas: `--help` must not load numpy (tests/test_cli_imports.py)",
    ("core.ranking.cells", "csr_matrix"): "`evalboard rank` of a file does not load scipy "
                                          "(tests/test_cli_imports.py); only large sparse inputs need it",
    ("core.ranking.ties", "connected_components"): "scipy loads only for `--ties davidson` (tests/test_cli_imports.py)",
    ("core.stats.newton", "LinAlgError"): "scipy loads only for the schemes that use Newton's method "
                                          "(tests/test_cli_imports.py: plain BT of a file loads no scipy)",
    ("core.stats.newton", "lstsq"): "as LinAlgError",
    ("core.stats.newton", "solve"): "as LinAlgError",
    ("core.stats.newton", "linprog"): "scipy loads only for the recession-direction check of the schemes that use it",
    ("core.commands.source", "DatasetNotFound"): "the store (sqlite_utils) loads only for a stored dataset: ranking "
                                                 "a file needs none of it (tests/test_cli_imports.py)",
    ("core.commands.source", "Store"): "as DatasetNotFound",
}


def core_modules(root: Path) -> dict[str, Path]:
    """``{dotted name: file}`` of every module under ``root/core`` (a package by its ``__init__.py``)."""
    modules = {}
    for path in sorted((root / "core").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


@functools.cache
def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _imports(module: str, path: Path) -> Iterator[tuple[ast.AST, str, str]]:
    """(node, imported module, imported name) for every import in the file, wherever it stands.

    ``from P import n`` yields both P (whose ``__init__`` runs) and P.n (a submodule, if it is one);
    relative imports are made absolute.
    """
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(_parse(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            yield node, base, base
            for alias in node.names:
                yield node, f"{base}.{alias.name}", alias.name


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The module of ``modules`` that an imported dotted name lands in (its longest known prefix)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(root: Path) -> dict[str, set[str]]:
    modules = core_modules(root)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for _, target, _ in _imports(module, path):
            owner = _owner(target, modules) if target.startswith("core") else None
            if owner and owner != module:
                graph[module].add(owner)
    return graph


def import_cycles(root: Path) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), each sorted."""
    graph = import_graph(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))
    return sorted(cycles)


def stray_top_level_modules(root: Path) -> list[str]:
    """Top-level modules of core/ beyond the allowed few, and folders that are not packages."""
    core = root / "core"
    stray = [p.name for p in core.glob("*.py") if p.stem not in TOP_LEVEL_MODULES]
    stray += [f"{p.name}/ (no __init__.py)" for p in core.iterdir()
              if p.is_dir() and p.name != "__pycache__" and not (p / "__init__.py").exists()]
    return sorted(stray)


def oversized_files(root: Path) -> list[str]:
    """Files of core/ or pages/ over MAX_LINES lines, and pages over MAX_PAGE_LINES."""
    found = []
    for folder, limit in (("core", MAX_LINES), ("pages", MAX_PAGE_LINES)):
        for path in sorted((root / folder).rglob("*.py")):
            lines = len(path.read_text().splitlines())
            if lines > limit:
                found.append(f"{path.relative_to(root)}: {lines} lines (at most {limit})")
    return found


def _inside_functions(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that stand inside a function (at any depth), in one walk of the tree."""
    stack = [(tree, False)]
    while stack:
        node, in_function = stack.pop()
        if in_function and isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))


def function_level_imports(root: Path) -> list[str]:
    """Import statements inside a function of core, other than the DEFERRED_IMPORTS."""
    found = []
    for module, path in core_modules(root).items():
        for node in _inside_functions(_parse(path)):
            names = [alias.name for alias in node.names]
            if all((module, name) in DEFERRED_IMPORTS for name in names):
                continue
            what = (f"from {'.' * node.level}{node.module or ''} import {', '.join(names)}"
                    if isinstance(node, ast.ImportFrom) else f"import {', '.join(names)}")
            found.append(f"{path.relative_to(root)}:{node.lineno} {what}")
    return sorted(found)


def streamlit_imports(root: Path) -> list[str]:
    found = []
    for module, path in core_modules(root).items():
        for node, target, name in _imports(module, path):
            if isinstance(node, ast.ImportFrom) and target != name:
                continue  # reported once, by the module it imports from
            if target == "streamlit" or target.startswith("streamlit."):
                found.append(f"{path.relative_to(root)}:{node.lineno} imports {target}")
    return sorted(set(found))


# -- the rules, on this repository ---------------------------------------------------------------------
def test_no_import_cycle_in_core():
    cycles = import_cycles(REPO)
    assert not cycles, "import cycles among core modules (break each):\n" + "\n".join(
        " <-> ".join(c) for c in cycles)


def test_core_top_level_holds_packages_and_a_few_modules():
    stray = stray_top_level_modules(REPO)
    assert not stray, (f"core/ may hold packages and only {sorted(TOP_LEVEL_MODULES - {'__init__'})} as modules; "
                       f"move these into a package: {stray}")


def test_no_file_too_long():
    assert not oversized_files(REPO), "split these files:\n" + "\n".join(oversized_files(REPO))


def test_no_import_inside_a_function_in_core():
    found = function_level_imports(REPO)
    assert not found, ("imports inside functions: move them to the top of the module (or, for an optional heavy "
                       "dependency, add it to DEFERRED_IMPORTS with its reason):\n" + "\n".join(found))


def test_core_never_imports_streamlit():
    found = streamlit_imports(REPO)
    assert not found, "core computes, pages draw: move these to pages/\n" + "\n".join(found)


def test_every_deferred_import_says_why_and_still_exists():
    """An allowance that no code uses any more is removed, so the list stays true."""
    assert all(reason.strip() for reason in DEFERRED_IMPORTS.values())
    modules = core_modules(REPO)
    used = {(m, name) for m, p in modules.items() for _, _, name in _imports(m, p)}
    assert set(DEFERRED_IMPORTS) <= used, sorted(set(DEFERRED_IMPORTS) - used)


# -- each rule catches a planted offence -----------------------------------------------------------------
def plant(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def clean_tree(root: Path) -> Path:
    return plant(root, {"core/__init__.py": "", "core/schema.py": "X = 1\n", "core/a/__init__.py": '"""A."""\n',
                        "core/a/one.py": "from core.schema import X\n", "pages/page.py": "import core.a.one\n"})


def test_a_clean_tree_passes_every_rule(tmp_path):
    root = clean_tree(tmp_path)
    assert import_cycles(root) == []
    assert stray_top_level_modules(root) == []
    assert oversized_files(root) == []
    assert function_level_imports(root) == []
    assert streamlit_imports(root) == []


def test_a_cycle_is_caught_with_its_modules(tmp_path):
    root = plant(clean_tree(tmp_path), {
        "core/a/two.py": "from core.a.three import f\n",
        "core/a/three.py": "def f():\n    from core.a import two\n",  # inside a function: still an edge
    })
    assert import_cycles(root) == [["core.a.three", "core.a.two"]]


def test_a_module_importing_its_own_package_back_is_a_cycle(tmp_path):
    root = plant(clean_tree(tmp_path), {"core/a/__init__.py": "from core.a.one import X\n",
                                        "core/a/one.py": "from core.a import helper\n",
                                        "core/a/helper.py": "Y = 1\n"})
    assert import_cycles(root) == [["core.a", "core.a.one"]]


def test_relative_imports_are_followed(tmp_path):
    root = plant(clean_tree(tmp_path), {"core/a/two.py": "from .three import f\n",
                                        "core/a/three.py": "from . import two\n"})
    assert import_cycles(root) == [["core.a.three", "core.a.two"]]


def test_a_stray_top_level_module_is_caught(tmp_path):
    root = plant(clean_tree(tmp_path), {"core/ranking_extra.py": "", "core/assets/data.txt": "x"})
    assert stray_top_level_modules(root) == ["assets/ (no __init__.py)", "ranking_extra.py"]


def test_long_files_are_caught(tmp_path):
    root = plant(clean_tree(tmp_path), {"core/a/long.py": "x = 1\n" * 451, "pages/long_page.py": "x = 1\n" * 151,
                                        "pages/ok_page.py": "x = 1\n" * 150})
    assert oversized_files(root) == ["core/a/long.py: 451 lines (at most 450)",
                                     "pages/long_page.py: 151 lines (at most 150)"]


def test_imports_inside_functions_are_caught_except_the_allowed(tmp_path):
    root = plant(clean_tree(tmp_path), {
        "core/a/lazy.py": """
            def f():
                import json
                from core.schema import X
            class C:
                async def g(self):
                    from core.a import one
            """,
        "core/charts/__init__.py": "",
        "core/charts/export.py": "def png():\n    import kaleido\n",
    })
    assert function_level_imports(root) == ["core/a/lazy.py:3 import json",
                                            "core/a/lazy.py:4 from core.schema import X",
                                            "core/a/lazy.py:7 from core.a import one"]


def test_streamlit_in_core_is_caught(tmp_path):
    root = plant(clean_tree(tmp_path), {"core/a/draw.py": "import streamlit as st\n",
                                        "core/a/cache.py": "def f():\n    from streamlit.runtime import x\n"})
    assert streamlit_imports(root) == ["core/a/cache.py:2 imports streamlit.runtime",
                                       "core/a/draw.py:1 imports streamlit"]

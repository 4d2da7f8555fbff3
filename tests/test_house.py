"""The house rules that keep sigmatool readable: small modules, short functions, layers pointing down."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "sigmatool"
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_MODULE_LINES = 700  # one concept per module; the cap only flags a module that may hold two
MAX_FUNCTION_LINES = 60


def _functions(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text())
    return [
        (node.name, (node.end_lineno or node.lineno) - node.lineno + 1)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_longer_than_700_lines(path: Path) -> None:
    assert MAX_MODULE_LINES >= len(path.read_text().splitlines())


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_function_is_longer_than_60_lines(path: Path) -> None:
    assert [] == [(name, lines) for name, lines in _functions(path) if lines > MAX_FUNCTION_LINES]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


# Lower layers never import upper ones: the CLI is the top; options, errors and kernels are the bottom.
FORBIDDEN = {
    "sigmatool/kernels": (
        "sigmatool.load",
        "sigmatool.render",
        "sigmatool.cli",
        "sigmatool.options",
        "polars",
    ),
    "sigmatool/options": ("sigmatool.load", "sigmatool.render", "sigmatool.cli", "polars", "numpy"),
    "sigmatool/load": ("sigmatool.render", "sigmatool.cli"),
    "sigmatool/render": ("sigmatool.load", "sigmatool.cli"),
    "sigmatool/errors.py": ("sigmatool.", "polars", "numpy"),
}


@pytest.mark.parametrize("layer", list(FORBIDDEN))
def test_layers_import_only_downwards(layer: str) -> None:
    paths = [p for p in MODULES if str(p.relative_to(ROOT)).startswith(layer)]
    wrong = [
        (str(p.relative_to(ROOT)), name)
        for p in paths
        for name in _imports(p)
        if any(name == f or name.startswith(f) for f in FORBIDDEN[layer])
    ]
    assert [] == wrong

"""The package surface: every public name resolves, and the CLI starts without the analyses it does not run."""

from __future__ import annotations

import subprocess
import sys

import pytest

import sigmatool


@pytest.mark.parametrize("name", sigmatool.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(sigmatool, name) is not None


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = sigmatool.nope  # type: ignore[attr-defined]


def _loaded_by(code: str) -> set[str]:
    script = f"import sys; {code}; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


@pytest.mark.parametrize(
    "module",
    [
        "sigmatool.budget",
        "sigmatool.groupsize",
        "sigmatool.simulate",
        "sigmatool.silent",
        "sigmatool.track",
        "sigmatool.load",
        "sigmatool.sql",
        "sigmatool.figures",
        "sigmatool.report",
    ],
)
def test_starting_the_cli_loads_no_analysis(module: str) -> None:
    assert module not in _loaded_by("import sigmatool.cli")


@pytest.mark.parametrize("module", ["polars", "numpy", "scipy", "matplotlib", "sqlglot"])
def test_starting_the_cli_imports_no_heavy_library(module: str) -> None:
    assert module not in _loaded_by("import sigmatool.cli")


@pytest.mark.parametrize("module", ["polars", "numpy", "matplotlib", "sigmatool.report"])
def test_the_version_imports_no_heavy_library(module: str) -> None:
    assert module not in _loaded_by("from sigmatool.cli import main; main(['--version'])")


def _version_run() -> subprocess.CompletedProcess[str]:
    script = (
        "import sys; sys.argv = ['sigmatool', '--version']\n"
        "from sigmatool.entry import run\n"
        "try:\n    run()\nfinally:\n    print(' '.join(sorted(sys.modules)), file=sys.stderr)"
    )
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL
    )


def test_the_console_script_version_is_the_command_lines() -> None:
    from tests.conftest import invoke

    assert invoke("--version").stdout == _version_run().stdout


@pytest.mark.parametrize("module", ["typer", "click", "rich", "polars", "numpy"])
def test_the_console_script_version_imports_no_command_line(module: str) -> None:
    assert module not in set(_version_run().stderr.split())

"""The package surface: every public name resolves, and the CLI starts without the analyses it does not run."""

from __future__ import annotations

import functools
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


# Each start-up is run once, in a fresh process, and every module test below reads that run.
@functools.cache
def _loaded_by(code: str) -> frozenset[str]:
    script = f"import sys; {code}; print(); print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    # The last line: what the code printed before it (a help naming polars) is not a module.
    return frozenset(done.stdout.splitlines()[-1].split())


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


@pytest.mark.parametrize("module", ["polars", "numpy", "scipy", "highspy", "matplotlib", "sqlglot"])
def test_starting_the_cli_imports_no_heavy_library(module: str) -> None:
    assert module not in _loaded_by("import sigmatool.cli")


@pytest.mark.parametrize("module", ["polars", "numpy", "matplotlib", "sigmatool.report"])
def test_the_version_imports_no_heavy_library(module: str) -> None:
    assert module not in _loaded_by("from sigmatool.cli import main; main(['--version'])")


@pytest.mark.parametrize("module", ["polars", "numpy"])
@pytest.mark.parametrize("flag", ["--help", "--help-all"])
def test_a_commands_help_imports_no_heavy_library(flag: str, module: str) -> None:
    assert module not in _loaded_by(f"from sigmatool.cli import main; main(['plan', '{flag}'])")


@functools.cache
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


@pytest.mark.parametrize("other", ["budget", "groupsize", "plan", "report", "simulate", "sql", "track"])
def test_a_named_command_imports_no_other_command(other: str) -> None:
    loaded = _loaded_by("from sigmatool.cli import main; main(['silent', '--help'])")
    assert "sigmatool.cli.silent" in loaded
    assert f"sigmatool.cli.{other}" not in loaded


def test_the_help_lists_every_command() -> None:
    from sigmatool.cli import COMMANDS
    from tests.conftest import invoke

    listed = invoke("--help").stdout
    assert [name for name in COMMANDS if f" {name} " in listed] == list(COMMANDS)


def _collector_after(code: str) -> list[str]:
    """Whether the garbage collector is on, and how many objects it has frozen, after ``code`` has run."""
    script = (
        "import gc, sys\n"
        f"try:\n    {code}\n"
        "except SystemExit:\n    pass\n"
        "print(gc.isenabled(), gc.get_freeze_count() > 0, file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL
    )
    return done.stderr.split()[-2:]


def test_the_console_script_collects_garbage_again_once_a_command_runs() -> None:
    # Start-up runs without the collector; the command's work runs with it, start-up's objects frozen.
    run = "sys.argv = ['sigmatool', 'silent', '--G', '8']; from sigmatool.entry import run; run()"
    assert _collector_after(run) == ["True", "True"]


def test_the_library_entry_point_leaves_the_collector_alone() -> None:
    run = "from sigmatool.cli import main; main(['silent', '--G', '8'])"
    assert _collector_after(run) == ["True", "False"]


_FIT = (
    "import numpy as np; from sigmatool.prior import fit_prior; "
    "fit_prior(np.arange(9), np.full(9, 8), np.arange(1.0, 10.0), kind='npmle')"
)


@pytest.mark.parametrize("code", ["import sigmatool.report", "import sigmatool.preflight", _FIT])
def test_a_report_and_a_prior_fit_import_no_scipy_stats(code: str) -> None:
    # scipy.stats alone takes 0.4 s to import: a report over several columns paid it for the prior's pmf.
    assert "scipy.stats" not in _loaded_by(code)


def test_the_priors_binomial_log_pmf_is_scipy_stats_own_to_the_bit() -> None:
    import numpy as np
    from scipy.stats import binom

    from sigmatool.prior.model import grid_prior

    rng = np.random.default_rng(5)
    atoms = np.concatenate([[0.0, 1.0], rng.random(300)])
    prior = grid_prior(atoms, np.full(atoms.size, 1.0 / atoms.size))
    n = rng.integers(1, 2000, 400)
    k = np.floor(rng.random(400) * (n + 1)).astype(np.int64)
    with np.errstate(divide="ignore"):
        expected = binom.logpmf(k[:, None], n[:, None], atoms[None, :]) + np.log(1.0 / atoms.size)
    assert np.array_equal(prior.log_joint(k, n)[:, : atoms.size], expected)


def _newest_changelog_version() -> str:
    """The version of CHANGELOG.md's first ``## `` heading (``## 0.4.0 (unreleased)`` → ``0.4.0``)."""
    from pathlib import Path

    text = (Path(__file__).parent.parent / "CHANGELOG.md").read_text()
    heading = next(line for line in text.splitlines() if line.startswith("## "))
    return heading[3:].split()[0]


def test_the_version_is_the_changelogs_newest() -> None:
    assert _newest_changelog_version() == sigmatool.__version__


def test_the_command_line_says_the_changelogs_newest_version() -> None:
    assert f"sigmatool {_newest_changelog_version()}\n" == _version_run().stdout


def test_the_package_metadata_takes_its_version_from_the_package() -> None:
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib")  # Python 3.11 on
    config = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    assert "version" not in config["project"]
    assert {"attr": "sigmatool.__version__"} == config["tool"]["setuptools"]["dynamic"]["version"]

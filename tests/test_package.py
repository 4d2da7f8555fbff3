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


def test_starting_the_cli_loads_no_other_analysis() -> None:
    code = "import sys, sigmatool.cli; print(sorted(m for m in sys.modules if m.startswith('sigmatool.')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert ("budget", "groupsize", "simulate") == tuple(
        m for m in ("budget", "groupsize", "simulate") if m not in loaded
    )

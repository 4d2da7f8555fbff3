"""The README and docs/ are the manual: every `$ sigmatool …` example runs and prints what they show."""

from __future__ import annotations

import contextlib
import os
import shlex
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, invoke

README = ROOT / "README.md"
TEXT_COMMANDS = ("sql", "report")  # they print text, not a frame: no --format


def code_blocks(path: Path) -> list[list[str]]:
    """The lines of each fenced code block."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            if current is None:
                current = []
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def examples(path: Path) -> list[tuple[str, list[str]]]:
    """(command line, the output lines shown under it) for each `$ sigmatool` line in a code block."""
    found: list[tuple[str, list[str]]] = []
    for lines in code_blocks(path):
        for i, line in enumerate(lines):
            if line.startswith("$ sigmatool "):
                shown = []
                for after in lines[i + 1 :]:
                    if after.startswith("$ "):
                        break
                    shown.append(after)
                found.append((line[2:], shown))
    return found


@contextlib.contextmanager
def in_a_scratch_folder() -> Iterator[None]:
    """Run in an empty folder holding only a link to sample_data/: examples may write files (-o, --plot)."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="sigmatool-docs-") as folder:
        os.symlink(ROOT / "sample_data", Path(folder) / "sample_data")
        os.chdir(folder)
        try:
            yield
        finally:
            os.chdir(here)


def run_example(command: str) -> tuple[int, list[str]]:
    """Run one documented command in-process; `| head -N`, `| grep -v TEXT` and `| cut -dC -fN-` after it
    are applied."""
    command, *filters = command.split("|")
    args = shlex.split(command)[1:]
    # `sql` prints a query, not a frame: it has no --format.
    if args[0] not in TEXT_COMMANDS and "--format" not in args and "-f" not in args and "-o" not in args:
        args += ["--format", "table"]
    with in_a_scratch_folder():
        result = invoke(*args)
    out = result.stdout.splitlines()
    for step in filters:
        name, *rest = shlex.split(step)
        if name == "head":
            out = out[: int(rest[0].lstrip("-"))]
        elif name == "cut":
            assert ("-d", "-f", "-") == (rest[0][:2], rest[1][:2], rest[1][-1]), step
            first = int(rest[1][2:-1]) - 1
            out = [rest[0][2:].join(line.split(rest[0][2:])[first:]) for line in out]
        else:
            assert (name, rest[0]) == ("grep", "-v"), step
            out = [line for line in out if rest[1] not in line]
    return result.exit_code, out


DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLES = [(f"{path.name}: {command}", command, shown) for path in DOCS for command, shown in examples(path)]


def test_the_readme_has_examples() -> None:
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize(("command", "shown"), [e[1:] for e in EXAMPLES], ids=[e[0] for e in EXAMPLES])
def test_documented_example_prints_what_the_docs_show(command: str, shown: list[str]) -> None:
    code, out = run_example(command)
    assert 0 == code
    assert [s.rstrip() for s in shown] == [o.rstrip() for o in out]


def python_blocks(path: Path) -> list[str]:
    text = path.read_text()
    blocks: list[str] = []
    for part in text.split("```python\n")[1:]:
        blocks.append(part.split("```", 1)[0])
    return blocks


@pytest.mark.parametrize("code", python_blocks(README))
def test_readme_python_example_runs(code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert "sigmatool" in namespace


def test_the_readme_stays_short() -> None:
    # The README is the front page: details live in docs/.
    assert README.stat().st_size < 16_000

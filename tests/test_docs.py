"""The README is the manual: every `$ sigmatool …` example runs, and prints what the README shows."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.conftest import ROOT, invoke

README = ROOT / "README.md"


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


def run_example(command: str) -> tuple[int, list[str]]:
    """Run one README command in-process; a trailing `| head -N` keeps the first N lines."""
    head = None
    if "| head" in command:
        command, _, tail = command.partition("|")
        head = int(tail.split("-")[-1])
    args = shlex.split(command)[1:]
    if "--format" not in args and "-f" not in args and "-o" not in args:
        args += ["--format", "table"]
    result = invoke(*args)
    out = result.stdout.splitlines()
    return result.exit_code, out[:head] if head else out


EXAMPLES = examples(README)


def test_the_readme_has_examples() -> None:
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize(("command", "shown"), EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_readme_example_prints_what_the_readme_shows(command: str, shown: list[str]) -> None:
    code, out = run_example(command)
    assert (0, [s.rstrip() for s in shown]) == (code, [o.rstrip() for o in out])


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

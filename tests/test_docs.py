"""The README and docs/ are the manual: every `$ sigmatool …` example runs and prints what they show."""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sigmatool.cli import main
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


def through_a_shell(command: str) -> bool:
    """Whether the line holds shell syntax (`|`, `>`, `;`, `&&` outside quotes): then a shell must run it."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    return any(token and set(token) <= set(lexer.punctuation_chars) for token in lexer)


def run_in_a_pipe(command: str) -> tuple[int, list[str]]:
    """Run `sigmatool ARGS | FILTERS` as a shell does: sigmatool's stdout is a real pipe (not a terminal)
    read by `bash -c FILTERS`, and what the filters print is what the page must show.

    sigmatool runs in this process, through the console script's `main`, with stdin /dev/null as at a
    prompt: a fresh interpreter per example would cost a second of imports and print the same. Both ends
    must succeed (as under `pipefail`): a reader that leaves early must not make sigmatool fail, and its
    stderr may hold notes but no error.
    """
    head, _, filters = command.partition(" | ")
    assert not through_a_shell(head), f"only `sigmatool ARGS | FILTERS` is run: {command}"
    read_end, write_end = os.pipe()
    errors = io.StringIO()
    with (
        tempfile.TemporaryFile("w+", encoding="utf-8") as shown,
        open(os.devnull, encoding="utf-8") as nothing,
    ):
        reader = subprocess.Popen(
            ["bash", "-c", filters], stdin=read_end, stdout=shown, stderr=subprocess.STDOUT
        )
        os.close(read_end)
        pipe = open(write_end, "w", encoding="utf-8")  # noqa: SIM115 (closed below, past a broken pipe)
        try:
            with contextlib.redirect_stdout(pipe), contextlib.redirect_stderr(errors):
                sys.stdin, stdin = nothing, sys.stdin
                try:
                    code = main(shlex.split(head)[1:])
                finally:
                    sys.stdin = stdin
        finally:
            with contextlib.suppress(BrokenPipeError):
                pipe.close()
        assert 0 == reader.wait(timeout=60), filters
        shown.seek(0)
        out = shown.read().splitlines()
    assert "Traceback" not in errors.getvalue(), errors.getvalue()
    assert not any(line.startswith("error:") for line in errors.getvalue().splitlines()), errors.getvalue()
    return code, out


def run_example(command: str) -> tuple[int, list[str]]:
    """Run one documented command as a user who copies it would.

    A line with shell syntax (`| head -2`) runs in bash, so a pipe gets what a pipe gets (CSV unless
    `--format` says otherwise). A plain line runs in-process, as on a terminal: a table unless `--format`
    or `-o` says otherwise (`sql` and `report` print text, whatever the terminal).
    """
    with in_a_scratch_folder():
        if through_a_shell(command):
            return run_in_a_pipe(command)
        args = shlex.split(command)[1:]
        if args[0] not in TEXT_COMMANDS and not {"--format", "-f", "-o"} & set(args):
            args += ["--format", "table"]
        result = invoke(*args)
    return result.exit_code, result.stdout.splitlines()


DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLES = [(f"{path.name}: {command}", command, shown) for path in DOCS for command, shown in examples(path)]


def test_the_readme_has_examples() -> None:
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize(("command", "shown"), [e[1:] for e in EXAMPLES], ids=[e[0] for e in EXAMPLES])
def test_documented_example_prints_what_the_docs_show(command: str, shown: list[str]) -> None:
    code, out = run_example(command)
    assert 0 == code
    assert [s.rstrip() for s in shown] == [o.rstrip() for o in out]


def test_a_piped_example_reads_what_a_pipe_gets() -> None:
    # In a pipe the default format is CSV, whatever a terminal would show: the harness must not force a table.
    with in_a_scratch_folder():
        header = invoke("budget", "sample_data/toy_pass_rates.csv", "--G", "8", "--format", "csv").stdout
    assert (0, header.splitlines()[:1]) == run_example(
        "sigmatool budget sample_data/toy_pass_rates.csv --G 8 | head -1"
    )


def test_a_plain_example_reads_what_a_terminal_gets() -> None:
    with in_a_scratch_folder():
        table = invoke("budget", "sample_data/toy_pass_rates.csv", "--G", "8", "--format", "table").stdout
    assert (0, table.splitlines()) == run_example("sigmatool budget sample_data/toy_pass_rates.csv --G 8")


def run_in_bash(command: str) -> tuple[int, list[str], str]:
    """The whole line in `bash -o pipefail`, `sigmatool` a fresh process of this checkout: exit code, stdout
    lines and stderr."""
    with in_a_scratch_folder():
        folder = Path.cwd() / ".bin"
        folder.mkdir()
        (folder / "sigmatool").write_text(
            f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m sigmatool "$@"\n'
        )
        (folder / "sigmatool").chmod(0o755)
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env={
                **os.environ,
                "PATH": os.pathsep.join([str(folder), os.environ["PATH"]]),
                "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            },
            timeout=120,
            check=False,
        )
    return done.returncode, done.stdout.splitlines(), done.stderr


PIPED = [e for e in EXAMPLES if through_a_shell(e[1])]


@pytest.mark.slow
@pytest.mark.parametrize(("command", "shown"), [e[1:] for e in PIPED], ids=[e[0] for e in PIPED])
def test_a_piped_example_prints_the_same_from_the_console_script(command: str, shown: list[str]) -> None:
    code, out, errors = run_in_bash(command)
    assert 0 == code, errors
    assert [s.rstrip() for s in shown] == [o.rstrip() for o in out]
    assert "Traceback" not in errors


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

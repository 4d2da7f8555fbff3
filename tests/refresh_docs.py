"""Rewrite the output shown under every `$ sigmatool …` example in README.md and docs/ with its real output.

    python -m tests.refresh_docs      # (make docs) then read the diff: a change in output is a change in behaviour

The docs test (tests/test_docs.py) checks the same examples the same way, so after this it passes.
"""

from __future__ import annotations

from pathlib import Path

from tests.test_docs import DOCS, run_example


def refresh(path: Path) -> bool:
    lines = path.read_text().splitlines()
    out: list[str] = []
    inside = False
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        if line.startswith("```"):
            inside = not inside
            continue
        if not (inside and line.startswith("$ sigmatool ")):
            continue
        while i < len(lines) and not lines[i].startswith(("$ ", "```")):
            i += 1  # drop the old output
        _, shown = run_example(line[2:])
        out += [s.rstrip() for s in shown]
    text = "\n".join(out) + "\n"
    changed = text != path.read_text()
    path.write_text(text)
    return changed


def main() -> None:
    for path in DOCS:
        if refresh(path):
            print(f"updated {path}")


if __name__ == "__main__":
    main()

"""Print pip constraints that pin every runtime dependency of pyproject.toml to its declared floor.

pyproject.toml is the one source of truth: `make test-floors` installs sigmatool under these constraints,
so the floors it proves are the ones users are promised. A dependency without a `>=` floor is an error.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$")


def floor_pin(requirement: str) -> str:
    """`name>=X,<Y ; marker` -> `name==X ; marker`."""
    spec, _, marker = requirement.partition(";")
    found = NAME.match(spec)
    if found is None:
        raise SystemExit(f"floors: cannot read the requirement {requirement!r} in pyproject.toml")
    name, rest = found.groups()
    floors = [part.strip()[2:].strip() for part in rest.split(",") if part.strip().startswith(">=")]
    if len(floors) != 1:
        raise SystemExit(f"floors: {name} needs exactly one '>=' floor in pyproject.toml, not {rest!r}")
    return f"{name}=={floors[0]}" + (f" ;{marker}" if marker else "")


def main() -> None:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    sys.stdout.write("".join(floor_pin(r) + "\n" for r in project["dependencies"]))


if __name__ == "__main__":
    main()

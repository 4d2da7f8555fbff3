"""The memory budget the console script gives polars' streaming engine (sigmatool.memory)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sigmatool import memory


def test_the_default_budget_is_set_when_none_is_chosen() -> None:
    env: dict[str, str] = {}
    memory.set_default(env)
    assert {memory.BUDGET_MB: "1024"} == env
    assert memory.budgeted(env)


@pytest.mark.parametrize("chosen", [{memory.BUDGET_MB: "300"}, {memory.BUDGET_FRACTION: "0.5"}])
def test_a_budget_the_user_chose_is_kept(chosen: dict[str, str]) -> None:
    env = dict(chosen)
    memory.set_default(env)
    assert chosen == env
    assert memory.budgeted(env)


def test_without_a_budget_polars_default_share_is_not_a_budget() -> None:
    assert not memory.budgeted({})
    assert not memory.budgeted({memory.BUDGET_MB: ""})


@pytest.mark.parametrize(
    ("version", "honoured"),
    [("2.1.0", True), ("2.1.0b2", True), ("2.10.3", True), ("3.0.0", True), ("2.0.0", False),
     ("1.44.2", False), ("1.34.0", False), ("", False), ("dev", False)],
)  # fmt: skip
def test_only_polars_21_and_later_keep_a_group_by_near_the_budget(version: str, honoured: bool) -> None:
    assert honoured == memory.honoured(version)


SCRIPT = """
import os, sys
from sigmatool import entry, memory
real, seen = memory.set_default, []
def spy(*args):
    seen.append("polars" in sys.modules)
    real(*args)
memory.set_default = spy
sys.argv = ["sigmatool", *sys.argv[1:]]
try:
    entry.run()
except SystemExit:
    pass
print(seen, os.environ.get(memory.BUDGET_MB), file=sys.stderr)
"""


@pytest.mark.parametrize(("given", "expected"), [(None, "1024"), ("300", "300")])
def test_the_console_script_sets_the_budget_before_polars_is_imported(
    given: str | None, expected: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("POLARS_OOC_MEMORY_BUDGET")}
    if given:
        env[memory.BUDGET_MB] = given
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, "silent", "--help"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert f"[False] {expected}" == done.stderr.strip().splitlines()[-1]

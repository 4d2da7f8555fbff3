"""``sigmatool check``: is the input what an analysis takes it for? One row per test, before any rate.

Each test (:data:`CHECKS`) gives a row ``check, status, affected, total, detail, fix``; status is ``ok``,
``warn`` or ``fail``. The tests:

- ``rows``: the rows read (fail when there are none);
- ``selection``: whether the rows are all the run's rollouts or a selection by reward (rlprobe's default
  capture keeps the top, bottom and a random few of each step);
- the group tests of :mod:`sigmatool.load.integrity` on a rollout log: ``singleton_groups``, ``group_size``,
  ``mixed_groups``, ``shared_keys`` (a table of pass rates has no groups: each is ok with that said).

The same counts make the notes every command prints on a log; ``check`` lays them out as a table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from sigmatool.load import dataset
from sigmatool.load.integrity import Check, log_integrity, log_selection
from sigmatool.options import InputOptions
from sigmatool.trainers.dumps import SelectionError

if TYPE_CHECKING:
    from sigmatool.figures.plot import Plot
    from sigmatool.render import View

CHECKS = ("rows", "selection", "singleton_groups", "group_size", "mixed_groups", "shared_keys")
COLUMNS = ("check", "status", "affected", "total", "detail", "fix")
GROUP_CHECKS = CHECKS[2:]


@dataclass(frozen=True)
class CheckResult:
    """The rows of :data:`CHECKS`, in that order."""

    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(c.status == "ok" for c in self.checks)

    def frame(self) -> pl.DataFrame:
        return pl.DataFrame(
            [[getattr(c, name) for name in COLUMNS] for c in self.checks],
            schema={
                "check": pl.String,
                "status": pl.String,
                "affected": pl.Int64,
                "total": pl.Int64,
                "detail": pl.String,
                "fix": pl.String,
            },
            orient="row",
        )

    def headline(self) -> str:
        """One sentence: every test passed, or which did not."""
        failed = [c.check for c in self.checks if c.status == "fail"]
        warned = [c.check for c in self.checks if c.status == "warn"]
        if not failed and not warned:
            return f"All {len(self.checks)} checks pass: the rows read as the groups the run sampled."
        said = [
            f"{', '.join(names)} {verb}" for names, verb in ((failed, "failed"), (warned, "warned")) if names
        ]
        return f"{len(failed) + len(warned)} of {len(self.checks)} checks did not pass ({'; '.join(said)}): see each fix."

    def view(self) -> View | None:
        from sigmatool.render import View

        return View(headline=self.headline())

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot | None:
        return None

    def warnings(self) -> tuple[str, ...]:
        return ()


def _not_a_log(total: int) -> list[Check]:
    said = "a table of pass rates, one prompt a row: no groups to check"
    return [Check(name, "ok", 0, total, said, "") for name in GROUP_CHECKS]


def check(options: InputOptions) -> CheckResult:
    """Read the input as the analyses read it and run every test on it."""
    try:
        with dataset(options) as ds:
            picked = log_selection(ds)
            if picked is not None:
                raise picked
            checked = log_integrity(ds)
            if checked is None:
                frame = ds.parts[0].frame if ds.parts else ds.frame  # several --col: the rows of one
                total = int(frame.select(pl.len()).collect(engine="streaming").item())
                groups = _not_a_log(total)
            else:
                total, groups = checked.rows, checked.checks()
    except SelectionError as exc:
        said = "not checked: the rows are a selection by reward"
        return CheckResult(
            (
                Check("rows", "ok", exc.rows, exc.rows, f"{exc.rows:,} rows read", ""),
                Check("selection", "fail", exc.selected, exc.rows, exc.detail, exc.fix),
                *[Check(name, "fail", 0, 0, said, exc.fix) for name in GROUP_CHECKS],
            )
        )
    rows = Check(
        "rows",
        "ok" if total else "fail",
        0 if total else 1,
        total,
        f"{total:,} rows read",
        "" if total else "give a log with rows",
    )
    selection = Check("selection", "ok", 0, total, "every row is read (no selection by reward)", "")
    return CheckResult((rows, selection, *groups))

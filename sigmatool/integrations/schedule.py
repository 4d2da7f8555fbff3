"""A schedule file read back with its record (:mod:`.meta`): what a trainer's sampler draws from.

- ``order`` (``curriculum --export-order``): ``steps``, the input rows of each of T steps of B;
- ``weights`` (``curriculum --per-prompt``): each input row's chance per draw (π / B; 0 for a row the schedule
  never draws or that has no pass rate), summing to 1, and each row's pass rate as the file shows it;
- ``plan`` (``plan --per-prompt``): one group size G for every kept row; ``weights`` 1/K on the K kept.

Every problem is one line, raised as :class:`ScheduleError`: a ``ValueError`` for library users, a usage
error (exit 2) on the command line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.integrations import meta
from sigmatool.integrations.meta import ScheduleError

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


__all__ = ["FloatArray", "IntArray", "Schedule", "ScheduleError", "read_schedule", "shown_rates"]


@dataclass(frozen=True)
class Schedule:
    """A schedule file: ``kind``, its ``record``, and per kind ``steps`` (order: T × B input rows) or
    ``weights`` (per input row, summing to 1) with ``p`` (each row's pass rate as the file shows it, NaN
    where it shows none) and ``group`` (each row's --by group, 0 without)."""

    path: str
    record: dict[str, Any]
    kind: str
    steps: IntArray | None = None
    weights: FloatArray | None = None
    p: FloatArray | None = None
    group: IntArray | None = None
    G: int | None = None
    groups: tuple[str, ...] = field(default=())

    @property
    def batch(self) -> int | None:
        """Prompts a step (None for a plan, whose batch is the trainer's)."""
        return None if self.kind == "plan" else self.record.get("B")

    @property
    def total_steps(self) -> int | None:
        return self.record.get("T")

    @property
    def rows(self) -> int:
        """The input's rows: the length of the trainer's dataset."""
        found = self.record["input"].get("rows")
        if found is None:
            raise ScheduleError(
                f"{self.path}: made from a rollout log or several pass-rate columns, so its rows are not a "
                "dataset's; schedule one pass-rate file of prompts"
            )
        return int(found)

    @property
    def kept(self) -> int:
        """Rows a weighted draw or a plan can take."""
        assert self.weights is not None
        return int(np.count_nonzero(self.weights > 0))


def read_schedule(path: str | os.PathLike[str]) -> Schedule:
    """The schedule file at ``path`` (parquet, CSV, TSV, JSON or JSON lines, as sigmatool wrote it)."""
    path = os.fspath(path)
    record = meta.read(path)
    frame = _frame(path)
    columns = record.get("columns", {})
    kind = record["kind"]
    need = [columns.get(c, c) for c in {"order": ("step", "row"), "weights": ("weight",)}.get(kind, ())]
    if kind == "plan":
        need = ["group_size"]
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise ScheduleError(f"{path}: no column {', '.join(map(repr, missing))} that its record names")
    if kind == "order":
        return _order(path, record, frame, columns.get("step", "step"), columns.get("row", "row"))
    if kind == "weights":
        w = frame[columns.get("weight", "weight")].cast(pl.Float64).fill_null(0.0).to_numpy()
        return _weighted(path, record, frame, w / w.sum())
    return _plan(path, record, frame)


def _frame(path: str) -> pl.DataFrame:
    ext = os.path.splitext(path)[1].lower()
    try:
        if ext in (".parquet", ".pq"):
            return pl.read_parquet(path)
        if ext in (".csv", ".tsv"):
            return pl.read_csv(path, separator="\t" if ext == ".tsv" else ",", infer_schema_length=None)
        if ext in (".jsonl", ".ndjson"):
            return pl.read_ndjson(path)
        if ext == ".json":
            return pl.read_json(path)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise ScheduleError(f"{path}: cannot read it ({str(exc).strip().splitlines()[0]})") from None
    raise ScheduleError(
        f"{path}: a schedule is parquet, CSV, TSV, JSON or JSON lines, not {ext or 'no extension'}"
    )


def _order(path: str, record: dict[str, Any], frame: pl.DataFrame, step: str, row: str) -> Schedule:
    B, T = int(record["B"]), int(record["T"])
    if frame.height != B * T:
        raise ScheduleError(f"{path}: {frame.height:,} rows, not the T × B = {T:,} × {B:,} its record says")
    ordered = frame.select(step, row).with_row_index("__i").sort(step, "__i")
    steps = ordered[row].cast(pl.Int64).to_numpy().reshape(T, B)
    steps = np.ascontiguousarray(steps, dtype=np.int64)
    return Schedule(path, record, "order", steps=steps, G=record.get("G"))


def _weighted(path: str, record: dict[str, Any], frame: pl.DataFrame, weights: FloatArray) -> Schedule:
    """A weights or plan file: every input row in order, with its pass rate and --by group."""
    rows = record["input"].get("rows")
    if rows is not None and frame.height != rows:
        raise ScheduleError(f"{path}: {frame.height:,} rows, not the {rows:,} input rows its record says")
    by = [c for c in record["input"].get("by", []) if c in frame.columns]
    group = np.zeros(frame.height, dtype=np.int64)
    names: tuple[str, ...] = ("all",)
    if by:
        key = pl.concat_str([pl.col(c).cast(pl.String).fill_null("null") for c in by], separator="/")
        keys = frame.select(key).to_series()
        names = tuple(keys.unique(maintain_order=True).to_list())
        index = {name: i for i, name in enumerate(names)}
        group = np.array([index[x] for x in keys.to_list()], dtype=np.int64)
    return Schedule(path, record, record["kind"], weights=np.asarray(weights, dtype=np.float64),
                    p=shown_rates(frame, record), group=group, groups=names,
                    G=record.get("G"))  # fmt: skip


def shown_rates(frame: pl.DataFrame, record: dict[str, Any]) -> FloatArray:
    """Each row's pass rate as the file shows it: k / n from the counts' columns, else the rate column
    (NaN where it shows none)."""
    source = record["input"]
    k, n, p = source.get("k_col"), source.get("n_col"), source.get("p_col")
    if k in frame.columns and n in frame.columns:
        rate = frame.select((pl.col(k).cast(pl.Float64) / pl.col(n).cast(pl.Float64)).alias("p"))["p"]
    elif p in frame.columns:
        rate = frame[p].cast(pl.Float64, strict=False)
    else:
        rate = pl.Series([None] * frame.height, dtype=pl.Float64)
    return np.asarray(rate.fill_null(float("nan")).to_numpy(), dtype=np.float64)


def _plan(path: str, record: dict[str, Any], frame: pl.DataFrame) -> Schedule:
    size = frame["group_size"].cast(pl.Int64).fill_null(0).to_numpy()
    sizes = sorted({int(s) for s in size[size > 0]})
    if len(sizes) != 1:
        raise ScheduleError(
            f"{path}: a plan with {'no kept prompt' if not sizes else 'sizes ' + ', '.join(map(str, sizes))}; a "
            "trainer runs one G per run: plan with one --sizes G"
        )
    kept = (size > 0).astype(np.float64)
    found = _weighted(path, record, frame, kept / kept.sum())
    return Schedule(found.path, record, "plan", weights=found.weights, p=found.p, group=found.group,
                    groups=found.groups, G=sizes[0])  # fmt: skip

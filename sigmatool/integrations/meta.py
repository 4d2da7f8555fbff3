"""What made a schedule file, recorded with it: the command line, the schedule's options, the input (files,
rows, pass-rate columns), B, T, G and the seed.

A parquet file carries the record in its key-value metadata under :data:`KEY`; a CSV, TSV, JSON or JSON lines
file in ``FILE.sigmatool.json`` beside it (:func:`sidecar`). Nothing else in the file changes, so a trainer
reads the file as before. The record is a JSON object:

- ``format``: :data:`FORMAT`; ``sigmatool``: the version that wrote it; ``command``: ``curriculum`` or
  ``plan``; ``kind``: ``order`` (``--export-order``: T × B rows, step by step), ``weights`` (curriculum
  ``--per-prompt``: every input row with its chance per draw) or ``plan`` (plan ``--per-prompt``);
- ``argv``: the command line; ``input``: ``files``, ``rows`` (the input's rows: a trainer's dataset must
  have as many), ``p_col``, ``k_col``, ``n_col``, ``id_col``, ``by``;
- ``B`` (prompts a step), ``T`` (steps), ``G`` (answers a prompt), ``seed``; ``schedule``: the schedule and
  its parameters (curriculum) or the sizes and budget (plan); ``columns``: the names the file gives its added
  columns (``step``, ``row``, ``weight``, ``pool``, ``group_size``, …).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sigmatool.errors import UsageError
from sigmatool.render.write import RECORD_KEY as KEY
from sigmatool.render.write import record_sidecar

if TYPE_CHECKING:
    from sigmatool.curriculum import CurriculumResult
    from sigmatool.load import Dataset
    from sigmatool.options import PlanOptions

FORMAT = "sigmatool-schedule/1"


class ScheduleError(UsageError, ValueError):
    """A schedule file, or what it is given to, cannot make the draws asked: one line naming the problem (a
    ValueError for library users, a usage error, exit 2, on the command line)."""


KINDS = ("order", "weights", "plan")


def sidecar(path: str) -> str:
    """The record's file beside a CSV, TSV, JSON or JSON lines schedule: ``FILE.sigmatool.json``."""
    return record_sidecar(path)


def is_parquet(path: str) -> bool:
    return os.path.splitext(path)[1].lower() in (".parquet", ".pq")


def record(
    *,
    command: str,
    kind: str,
    argv: str,
    inputs: Mapping[str, Any],
    B: int | None,
    T: int | None,
    G: int | None,
    seed: int | None,
    schedule: Mapping[str, Any],
    columns: Mapping[str, str],
) -> dict[str, Any]:
    """The record of one schedule file (the module's docstring says each field)."""
    from sigmatool import __version__

    if kind not in KINDS:
        raise ScheduleError(f"a schedule is one of {', '.join(KINDS)}, not {kind!r}")
    return {
        "format": FORMAT,
        "sigmatool": __version__,
        "command": command,
        "kind": kind,
        "argv": argv,
        "input": dict(inputs),
        "B": B,
        "T": T,
        "G": G,
        "seed": seed,
        "schedule": dict(schedule),
        "columns": dict(columns),
    }


def read(path: str) -> dict[str, Any]:
    """The record of the schedule file ``path``; a :class:`ScheduleError` naming the file when sigmatool did not write it
    (no record, or one of another format)."""
    text = _parquet_record(path) if is_parquet(path) else _sidecar_record(path)
    if text is None:
        where = "no 'sigmatool' entry in its parquet metadata" if is_parquet(path) else f"no {sidecar(path)}"
        raise ScheduleError(
            f"{path}: not a schedule sigmatool wrote ({where}); write one with curriculum --export-order, "
            "curriculum --per-prompt -o FILE or plan --per-prompt -o FILE"
        )
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScheduleError(f"{path}: its sigmatool record is not JSON ({exc.msg})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("kind") not in KINDS:
        raise ScheduleError(f"{path}: its sigmatool record is not a schedule of format {FORMAT}")
    return meta


def _parquet_record(path: str) -> str | None:
    import polars as pl

    try:
        found = pl.read_parquet_metadata(path)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise ScheduleError(
            f"{path}: cannot read it as parquet ({str(exc).strip().splitlines()[0]})"
        ) from None
    return found.get(KEY)


def _sidecar_record(path: str) -> str | None:
    if not os.path.exists(path):
        raise ScheduleError(f"{path}: no such file")
    try:
        with open(sidecar(path), encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def input_of(ds: Dataset) -> dict[str, Any]:
    """The input a schedule was made from: its files, rows (None for a rollout log, whose rows are answers),
    pass-rate columns, id column and --by columns."""
    import polars as pl

    from sigmatool.load import with_originals

    o = ds.options
    rows = None
    if not ds.is_log and not ds.parts:
        rows = int(with_originals(ds).frame.select(pl.len()).collect().item())
    return {
        "files": [source.label for source in ds.sources],
        "rows": rows,
        "p_col": o.col,
        "k_col": o.k_col,
        "n_col": o.n_col,
        "samples": o.samples,
        "id_col": o.id_col,
        "by": list(ds.by),
    }


def curriculum_record(ds: Dataset, result: CurriculumResult, kind: str, argv: str) -> dict[str, Any]:
    """The record of ``curriculum --export-order`` (``order``) or ``--per-prompt`` (``weights``)."""
    from sigmatool.curriculum.rows import added_name
    from sigmatool.load import with_originals

    o = result.options
    names = list(with_originals(ds).columns)
    if kind == "order":
        columns = {"step": added_name("step", names), "row": added_name("row", names)}
    else:
        columns = {"weight": added_name("weight", names)}
        unit = {"pools": "pool", "buckets": "bucket"}.get(o.schedule.value)
        if unit:
            columns[unit] = added_name(unit, [*names, "weight"])
    schedule = {
        "schedule": o.schedule.value,
        "static": o.static,
        "mean": list(o.mean),
        "width": o.width,
        "pools": [[p.lo, p.hi, p.weight] for p in o.pools],
        "band": list(o.band),
        "buckets": o.buckets,
        "bucket_weight": o.bucket_weight.value,
        "drop_solved": o.drop_solved,
        "drop_unsolved": o.drop_unsolved,
        "blend": dict(o.blend),
        "epochs": o.epochs,
        "estimator": o.estimator,
    }
    return record(command="curriculum", kind=kind, argv=argv, inputs=input_of(ds), B=o.batch, T=o.steps,
                  G=o.G, seed=o.seed, schedule=schedule, columns=columns)  # fmt: skip


def plan_record(ds: Dataset, request: PlanOptions, argv: str) -> dict[str, Any]:
    """The record of ``plan --per-prompt -o FILE``: G is each kept row's ``group_size``."""
    schedule = {
        "sizes": list(request.sizes),
        "budget": request.budget,
        "total": request.total,
        "objective": request.objective,
        "method": request.method,
    }
    one = request.sizes[0] if len(request.sizes) == 1 else None
    columns = {c: c for c in ("group_size", "keep", "p_used")}
    return record(command="plan", kind="plan", argv=argv, inputs=input_of(ds), B=None, T=None, G=one,
                  seed=None, schedule=schedule, columns=columns)  # fmt: skip

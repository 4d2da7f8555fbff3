"""Rollouts logged beside a run rather than dumped by its trainer: W&B tables, rlprobe's flight recorder, and
miles' ``--dump-details`` trajectories; each read as its writer writes it (docs/trainers.md cites the code).

- **W&B tables** (``--from wandb-table``): a ``.table.json`` as a run's media (``{"columns", "data"}``, bare
  ``NaN``) or as an artifact (``{"_type": "table", "column_types", "columns", "data", "log_mode", "ncols",
  "nrows"}``, NaN as null). Read into memory (W&B caps a table at 200,000 rows): null and NaN are missing,
  text that reads as a number is that number. TRL's ``completions`` table reads as ``--from trl``; any other
  table by ``--prompt-col``, ``--reward-col``, ``--group-col`` and ``--step-col``.
- **rlprobe** (``--from rlprobe``): ``samples/shard-NNNNN.parquet`` (``step, group_id, prompt_id,
  prompt_text, reward_total, capture_reason, reward_component.<fn>``) beside ``manifest.json``. A capture
  whose rows were picked by reward (``top_k``, ``bottom_k``, ``random``) is refused (:class:`SelectionError`).
- **miles** (``--from miles``): ``trajectory/{rollout_id}.jsonl`` (``sample_index, group_index, status,
  reward, prompt, messages``); the ``.pt`` files beside them are never unpickled.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import polars as pl

from sigmatool.errors import DataError
from sigmatool.trainers.dumps.files import DumpFile, wandb_step
from sigmatool.trainers.dumps.readers import (
    ROW,
    Options,
    Part,
    _key,
    _require,
    _reward_field,
    _rule,
    choose_trl_reward,
    json_schema,
    parquet_schema,
)
from sigmatool.trainers.dumps.rewards import REWARD

MASKED = "…"
TRL_FIELDS = ("step", "prompt", "completion")
SELECTED = ("top_k", "bottom_k", "random")


class SelectionError(DataError):
    """Rows picked by reward (rlprobe's capture): counted, so that ``check`` can show them as a row."""

    def __init__(self, rows: int, reasons: dict[str, int], where: str) -> None:
        self.rows = rows
        self.reasons = reasons
        self.selected = sum(n for r, n in reasons.items() if r in SELECTED)
        counted = ", ".join(f"{r}: {reasons[r]:,}" for r in SELECTED if r in reasons)
        self.detail = (
            f"{self.selected:,} of {rows:,} rows were captured by reward ({counted}): rlprobe's sampling keeps "
            "the best, the worst and a random few of each step, so their pass rates are not the run's"
        )
        self.fix = "record every rollout: Recorder(sampling=SamplingConfig(top_k=0, bottom_k=0, random_k=B)), B ≥ a step's rollouts"
        super().__init__(f"{where}: {self.detail}; {self.fix}")


# ------------------------------------------------------------------------------------------- W&B tables


def _number(value: object) -> float | None:
    """A cell as a number: numbers as they are, text that reads as one; None where it is not one."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _column(values: list[object]) -> pl.Series:
    """One table column: booleans, whole numbers, numbers (text that reads as a number too; NaN is missing),
    else text (a cell that is a record or a list as its JSON)."""
    present = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    kinds = {type(v) for v in present}
    if kinds <= {bool}:
        return pl.Series([None if v not in (True, False) else v for v in values], dtype=pl.Boolean)
    if kinds <= {int}:
        return pl.Series(values, dtype=pl.Int64)
    numbers = [None if v is None else _number(v) for v in values]
    if all(n is not None for n, v in zip(numbers, values, strict=True) if v is not None):
        return pl.Series([None if n is None or math.isnan(n) else n for n in numbers], dtype=pl.Float64)
    return pl.Series(
        [None if v is None else v if isinstance(v, str) else json.dumps(v, sort_keys=True) for v in values],
        dtype=pl.String,
    )


def read_table(path: str) -> pl.DataFrame:
    """A ``.table.json`` file (either form) as a frame; a one-line DataError for any other file."""
    try:
        with open(path, encoding="utf-8") as handle:
            found = json.load(handle)  # reads a media file's bare NaN too
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: not a W&B table: cannot read it as JSON ({exc})") from exc
    if not isinstance(found, dict) or "columns" not in found or "data" not in found:
        keys = ", ".join(found) if isinstance(found, dict) else type(found).__name__
        raise DataError(f"{path}: not a W&B table: no 'columns' and 'data' (found {keys})")
    kind = found.get("_type", "table")
    if kind != "table":
        raise DataError(
            f"{path}: a W&B {kind!r}, not a table (_type 'table'): download the table itself (its .table.json)"
        )
    columns, data = found["columns"], found["data"]
    if not isinstance(columns, list) or not isinstance(data, list):
        raise DataError(f"{path}: not a W&B table: 'columns' and 'data' must be lists")
    wrong = [
        i for i, row in enumerate(data, start=1) if not isinstance(row, list) or len(row) != len(columns)
    ]
    if wrong:
        shown = ", ".join(str(i) for i in wrong[:5]) + (" and more" if len(wrong) > 5 else "")
        first = data[wrong[0] - 1]
        size = len(first) if isinstance(first, list) else "no"
        raise DataError(
            f"{path}: {len(wrong):,} row(s) of 'data' do not hold one cell per column ({len(columns)} "
            f"columns; row {wrong[0]} has {size} cells), at rows {shown}"
        )
    names = [str(c) for c in columns]
    if len(set(names)) != len(names):
        raise DataError(f"{path}: a W&B table whose columns repeat a name: {', '.join(names)}")
    return pl.DataFrame([_column([row[i] for row in data]).alias(name) for i, name in enumerate(names)])


def _masked(expr: pl.Expr, dtype: pl.DataType, masks: tuple[str, ...]) -> pl.Expr:
    if dtype != pl.String:
        return expr
    for mask in masks:
        expr = expr.str.replace_all(mask, MASKED)
    return expr


def wandb_table(file: DumpFile, index: int, opts: Options) -> Part:
    """A W&B table: TRL's ``completions`` (step, prompt, completion, <reward functions>, <extras>,
    advantage) as ``--from trl`` reads it, or any table by the columns the options name."""
    table = read_table(file.path)
    schema = table.schema
    trl = not opts.prompt_cols and all(f in schema for f in TRL_FIELDS)
    notes: list[str] = []
    said: list[str] = []  # how the rows were read, said with the reward rule
    if trl:
        cols: tuple[str, ...] = ("prompt",)
        default = opts.reward_col or choose_trl_reward([file.path], [schema])
    elif not opts.prompt_cols:
        raise DataError(
            f"{file.path}: a W&B table that is not TRL's completions (step, prompt, completion): name its "
            f"columns with --prompt-col and --reward-col (and --group-col, --step-col); its columns are: "
            f"{', '.join(schema.names())}"
        )
    else:
        cols = opts.prompt_cols
        default = opts.reward_col or ""
    _require(file.path, "wandb-table", schema, [*cols, *(c for c in (opts.group_col,) if c)], "a W&B table")
    field = _reward_field(file.path, "wandb-table", schema, default, opts)
    step_col = opts.step_col or ("step" if "step" in schema else None)
    if step_col is not None:
        _require(file.path, "wandb-table", schema, [step_col], "a W&B table")
        step = pl.col(step_col).cast(pl.Int64, strict=False)
    else:
        _, how = wandb_step(file.path)
        step = pl.lit(file.step, dtype=pl.Int64)
        if how:
            said.append(f"wandb-table: no step column: step = {how}")
    parts = [_masked(pl.col(c), schema[c], opts.prompt_masks) for c in cols]
    prompt = parts[0].hash() if len(parts) == 1 else _key(*parts)
    group = _key(step, pl.col(opts.group_col)) if opts.group_col else _key(step, prompt)
    frame = (
        table.lazy()
        .with_row_index(ROW, offset=1)
        .select(
            ROW, step.alias("step"), group.alias("group"), prompt.alias("prompt"), pl.col(field).alias(REWARD)
        )
    )
    shown = ", ".join(cols)
    notes.append(
        "wandb-table: TRL's completions table (grouped by (step, prompt))"
        if trl
        else f"wandb-table: prompts keyed by {shown}; a group = one (step, {opts.group_col or shown})"
    )
    if (
        trl
        and table.height > 1
        and bool(table.select(pl.struct(step_col or pl.lit(0), "prompt").is_unique().all()).item())
    ):
        said.append(
            "wandb-table: one completion per prompt and step: TRL's log_unique_prompts=True logged one "
            "completion of each group, so each prompt's rate is one answer a step, not its group's"
        )
    return Part(frame, _rule("wandb-table", field, schema[field], opts), notes, "; ".join(said))


# ---------------------------------------------------------------------------------------------- rlprobe


def rlprobe_manifest(path: str) -> dict[str, object]:
    """The manifest.json of the run a shard belongs to (its run folder, or the one above a rank-NNN/)."""
    folder = Path(os.path.abspath(path)).parent.parent
    for where in (folder, folder.parent):
        try:
            with open(where / "manifest.json", encoding="utf-8") as handle:
                found = json.load(handle)
        except (OSError, ValueError):
            continue
        if isinstance(found, dict):
            return found
    return {}


def rlprobe_generations(path: str) -> int | None:
    """``trainer_config.num_generations`` of the run's manifest, when it says it."""
    config = rlprobe_manifest(path).get("trainer_config")
    n = config.get("num_generations") if isinstance(config, dict) else None
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def capture_reasons(frames: list[pl.LazyFrame]) -> dict[str, int]:
    """How many rows each ``capture_reason`` holds, over the frames that have the column."""
    reasons: dict[str, int] = {}
    for frame in frames:
        if "capture_reason" not in frame.collect_schema():
            continue
        counts = frame.group_by("capture_reason").len().collect(engine="streaming")
        for reason, n in counts.iter_rows():
            reasons[str(reason)] = reasons.get(str(reason), 0) + int(n)
    return reasons


def selection(reasons: dict[str, int], where: str) -> SelectionError | None:
    """The error for rows picked by reward, when some are."""
    if not any(r in reasons for r in SELECTED):
        return None
    return SelectionError(sum(reasons.values()), reasons, where)


def rlprobe_selection(files: list[DumpFile]) -> None:
    """Raise :class:`SelectionError` when some rows' ``capture_reason`` says they were picked by reward."""
    for file in files:
        parquet_schema(file.path, "rlprobe")  # a file that is no parquet is named as such
    frames = [pl.scan_parquet(file.path, glob=False) for file in files]
    where = files[0].path if len(files) == 1 else f"{len(files)} rlprobe shards"
    found = selection(capture_reasons(frames), where)
    if found is not None:
        raise found


def rlprobe(file: DumpFile, index: int, opts: Options) -> Part:
    """rlprobe ``samples/shard-NNNNN.parquet``: step, sample_id, group_id, prompt_id, prompt_text,
    completion_text, reward_total, ..., capture_reason, reward_component.<fn>."""
    schema = parquet_schema(file.path, "rlprobe")
    layout = "RunWriter's sample shards: step, group_id, prompt_id, prompt_text, reward_total, capture_reason"
    texts = [c for c in ("prompt_id", "prompt_text") if c in schema]
    _require(file.path, "rlprobe", schema, ["step", *(texts or ["prompt_text"])], layout)
    field = _reward_field(file.path, "rlprobe", schema, "reward_total", opts)
    extra = [c for c in ("group_id", "rank") if c in schema]
    needed = list(dict.fromkeys(["step", *texts, field, *extra]))
    lf = pl.scan_parquet(file.path, glob=False).select(needed).with_row_index(ROW, offset=1)
    step = pl.col("step").cast(pl.Int64)
    prompt = pl.coalesce([pl.col(c).cast(pl.String) for c in texts]).hash()
    # Each rank numbers its batch's groups from 0 (rank-NNN/ folders of one run): a group is (step, rank, id).
    rank = pl.col("rank") if "rank" in schema else pl.lit(0)
    by_prompt = _key(step, prompt)
    group = (
        pl.when(pl.col("group_id").is_not_null())
        .then(_key(step, rank, pl.col("group_id")))
        .otherwise(by_prompt)
        if "group_id" in schema
        else by_prompt
    )
    frame = lf.select(
        ROW, step.alias("step"), group.alias("group"), prompt.alias("prompt"), pl.col(field).alias(REWARD)
    )
    n = rlprobe_generations(file.path)
    said = f"; n = {n} (manifest.json trainer_config.num_generations)" if n else ""
    note = f"rlprobe: prompts keyed by prompt_id, else prompt_text; a group = one (rank, group_id) ({{step}}_g{{i}}){said}"
    return Part(frame, _rule("rlprobe", field, schema[field], opts), [note], per_group=n)


# ------------------------------------------------------------------------------------------------ miles


def miles(file: DumpFile, index: int, opts: Options) -> Part:
    """miles ``trajectory/{rollout_id}.jsonl`` (``--dump-details``): sample_index, group_index, status, reward,
    prompt, messages; one row per sample that recorded a conversation."""
    schema = json_schema(file.path, "miles")
    layout = "save_debug_trajectory_data: sample_index, group_index, status, reward, prompt, messages"
    _require(file.path, "miles", schema, ["group_index", "prompt"], layout)
    field = _reward_field(file.path, "miles", schema, "reward", opts)
    fields = ["group_index", "prompt", field]
    wanted = {name: schema[name] for name in dict.fromkeys(fields)}
    lf = pl.scan_ndjson(file.path, schema=wanted).with_row_index(ROW, offset=1)
    step = pl.lit(file.step, dtype=pl.Int64)
    # A prompt is text or a list of messages (Sample.prompt); either is hashed as it is.
    prompt = pl.col("prompt").hash()
    frame = lf.select(
        ROW,
        step.alias("step"),
        _key(step, pl.col("group_index")).alias("group"),
        prompt.alias("prompt"),
        pl.col(field).alias(REWARD),
    )
    note = (
        "miles: step = the rollout id of trajectory/{rollout_id}.jsonl; a group = one (rollout id, group_index); "
        "prompts keyed by 'prompt' (not 'messages', the whole conversation, new each rollout)"
    )
    return Part(frame, _rule("miles", field, schema[field], opts), [note])


LOGGERS = {"wandb-table": wandb_table, "rlprobe": rlprobe, "miles": miles}

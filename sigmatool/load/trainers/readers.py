"""One dump file of one trainer into rows of (step, group, prompt, raw reward), reading only those fields.

Each reader follows the trainer's own writer; docs/trainers.md cites the file and function it was read from.
Prompts are UInt64 hashes of their text (ROLL: of the dataset's ``id`` when it has one); text columns are
hashed as they stream past and never kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from sigmatool.errors import DataError, UsageError
from sigmatool.load.sources import first_line
from sigmatool.load.trainers.files import DumpFile
from sigmatool.load.trainers.rewards import REWARD, RewardRule, describe

ROW = "__row"
INFER_ROWS = 200
TRL_NOT_REWARDS = ("step", "advantage")


@dataclass(frozen=True)
class Options:
    reward_col: str | None = None
    threshold: float | None = None


@dataclass
class Part:
    """What one file gives: rows with ``step``, ``group``, ``prompt``, the raw reward and ``__row``."""

    frame: pl.LazyFrame
    rule: RewardRule
    notes: list[str]


def json_schema(path: str, trainer: str) -> pl.Schema:
    """Field names and types from the first rows of a JSON-lines file."""
    try:
        return pl.scan_ndjson(path, infer_schema_length=INFER_ROWS).collect_schema()
    except pl.exceptions.NoDataError as exc:
        raise DataError(f"{path}: the file is empty") from exc
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise DataError(
            f"{path}: not a {trainer} dump: cannot read it as JSON lines: {first_line(exc)}"
        ) from exc


def _require(path: str, trainer: str, schema: pl.Schema, fields: list[str], layout: str) -> None:
    missing = [f for f in fields if f not in schema]
    if missing:
        raise DataError(
            f"{path}: missing field(s) {', '.join(repr(m) for m in missing)} for a {trainer} dump "
            f"(assumed {layout}); its fields are: {', '.join(schema.names()) or 'none'}"
        )


def _scan_json(path: str, schema: pl.Schema, fields: list[str]) -> pl.LazyFrame:
    # A schema of only the needed fields makes the reader skip every other field's value.
    wanted = {name: schema[name] for name in dict.fromkeys(fields)}
    return pl.scan_ndjson(path, schema=wanted).with_row_index(ROW, offset=1)


def _hash(expr: pl.Expr) -> pl.Expr:
    return expr.hash()


def _key(*parts: pl.Expr) -> pl.Expr:
    """One UInt64 for a tuple of values: the group key."""
    return pl.struct(*[p.alias(f"k{i}") for i, p in enumerate(parts)]).hash()


def _step(file: DumpFile, schema: pl.Schema, field: str | None) -> pl.Expr:
    if field is not None and field in schema:
        return pl.col(field).cast(pl.Int64, strict=False)
    return pl.lit(file.step, dtype=pl.Int64)


def _rule(trainer: str, field: str, dtype: pl.DataType, opts: Options, why: str = "") -> RewardRule:
    return describe(trainer, field, dtype, opts.threshold, why)


def _reward_field(path: str, trainer: str, schema: pl.Schema, default: str, opts: Options) -> str:
    field = opts.reward_col or default
    if field not in schema:
        raise DataError(
            f"{path}: no reward field {field!r} in this {trainer} dump; its fields are: {', '.join(schema.names())}"
        )
    return field


# ------------------------------------------------------------------------------------------------ readers


def verl(file: DumpFile, index: int, opts: Options) -> Part:
    """verl ``{step}.jsonl``: input, output, gts, score, step, plus the reward function's extra keys."""
    schema = json_schema(file.path, "verl")
    _require(
        file.path, "verl", schema, ["input"], "RayPPOTrainer._dump_generations: input, output, score, step"
    )
    default = "acc" if "acc" in schema else "score"
    field = _reward_field(file.path, "verl", schema, default, opts)
    why = "" if opts.reward_col or field == "acc" else " (no 'acc' field)"
    notes = []
    fields = ["input", field, *(f for f in ("step", "uid") if f in schema)]
    lf = _scan_json(file.path, schema, fields)
    step = _step(file, schema, "step")
    prompt = _hash(pl.col("input"))
    if "uid" in schema:
        group = _key(step, pl.col("uid"))
        notes.append("verl: rollouts grouped by their 'uid' field")
    else:
        group = _key(step, prompt)
        notes.append("verl: no 'uid' field: rollouts grouped by (step, input)")
    frame = lf.select(
        ROW, step.alias("step"), group.alias("group"), prompt.alias("prompt"), pl.col(field).alias(REWARD)
    )
    return Part(frame, _rule("verl", field, schema[field], opts, why), notes)


def trl_reward_columns(schema: pl.Schema) -> list[str]:
    """Columns of a TRL completions file that may be rewards: numeric ones other than step and advantage."""
    return [
        name
        for name, dtype in schema.items()
        if name not in TRL_NOT_REWARDS and (dtype.is_numeric() or dtype == pl.Boolean)
    ]


def parquet_schema(path: str, trainer: str = "trl") -> pl.Schema:
    try:
        return pl.scan_parquet(path, glob=False).collect_schema()
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise DataError(
            f"{path}: not a {trainer} dump: cannot read it as parquet: {first_line(exc)}"
        ) from exc


def trl(file: DumpFile, index: int, opts: Options) -> Part:
    """TRL ``completions_{step:05d}.parquet``: step, prompt, completion, one column per reward function, advantage."""
    schema = parquet_schema(file.path)
    layout = "GRPOTrainer.log: step, prompt, completion, <reward functions>, advantage"
    _require(file.path, "trl", schema, ["prompt"], layout)
    default = opts.reward_col or choose_trl_reward([file.path], [schema])
    field = _reward_field(file.path, "trl", schema, default, opts)
    # Only the needed columns, so that a logged extra column of any name (even ``__row``) does no harm.
    needed = list(dict.fromkeys(["prompt", field, *(["step"] if "step" in schema else [])]))
    lf = pl.scan_parquet(file.path, glob=False).select(needed).with_row_index(ROW, offset=1)
    step = _step(file, schema, "step")
    prompt = _hash(pl.col("prompt"))
    frame = lf.select(
        ROW,
        step.alias("step"),
        _key(step, prompt).alias("group"),
        prompt.alias("prompt"),
        pl.col(field).alias(REWARD),
    )
    return Part(frame, _rule("trl", field, schema[field], opts), ["trl: rollouts grouped by (step, prompt)"])


def choose_trl_reward(paths: list[str], schemas: list[pl.Schema]) -> str:
    """The one reward column of TRL files; a UsageError listing them when there are several."""
    names = list(dict.fromkeys(c for s in schemas for c in trl_reward_columns(s)))
    if len(names) == 1:
        return names[0]
    if not names:
        raise DataError(f"{paths[0]}: no numeric reward column in this TRL completions file")
    raise UsageError(
        f"the TRL files have several reward columns ({', '.join(names)}); choose one with --reward-col"
    )


def _unwrap(expr: pl.Expr, dtype: pl.DataType, how: str) -> tuple[pl.Expr, pl.DataType]:
    """A list-valued field to a scalar: its first element (``first``) or its sum (``sum``)."""
    if not isinstance(dtype, pl.List):
        return expr, dtype
    inner = dtype.inner
    assert isinstance(inner, pl.DataType)
    return (expr.list.first() if how == "first" else expr.list.sum()), inner


def _message_texts(expr: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """NeMo-RL ``content``: per row, the list of message texts (train: strings; val: {role, content})."""
    if isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.List):
        expr, dtype = expr.list.first(), dtype.inner
    if isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct):
        return expr.list.eval(pl.element().struct.field("content").cast(pl.String))
    if isinstance(dtype, pl.List) and dtype.inner == pl.String:
        return expr
    raise DataError(f"NeMo-RL field 'content' holds {dtype}, not a list of messages")


def nemo_rl(file: DumpFile, index: int, opts: Options) -> Part:
    """NeMo-RL ``train_data_step{N}.jsonl``: per row content, rewards, ... each wrapped in a one-item list."""
    schema = json_schema(file.path, "nemo-rl")
    layout = "Logger.log_batched_dict_as_jsonl from grpo_train: content, rewards, ..., idx"
    _require(file.path, "nemo-rl", schema, ["content"], layout)
    field = _reward_field(file.path, "nemo-rl", schema, "rewards", opts)
    reward, dtype = _unwrap(pl.col(field), schema[field], "first")
    texts = _message_texts(pl.col("content"), schema["content"])
    # The prompt is every message but the last (the answer); groups are the runs of one prompt in a file.
    prompt = _hash(texts.list.slice(0, texts.list.len() - 1).list.join("\x1f"))
    lf = _scan_json(file.path, schema, ["content", field]).select(
        ROW, prompt.alias("prompt"), reward.alias(REWARD)
    )
    group = _key(pl.lit(index, dtype=pl.Int64), pl.col("prompt").rle_id())
    frame = lf.select(
        ROW, pl.lit(file.step, dtype=pl.Int64).alias("step"), group.alias("group"), "prompt", REWARD
    )
    note = "nemo-rl: prompt = every message but the last; a group = a run of rows with one prompt"
    return Part(frame, _rule("nemo-rl", field, dtype, opts), [note])


def areal(file: DumpFile, index: int, opts: Options) -> Part:
    """AReaL ``rollout/{version}/{task_id}.jsonl``: task_id, sample_idx, ..., tail_version, reward, prompt, completion."""
    schema = json_schema(file.path, "areal")
    layout = (
        "WorkflowExecutor._dump_trajectory: task_id, sample_idx, tail_version, reward, prompt, completion"
    )
    _require(file.path, "areal", schema, ["task_id", "prompt"], layout)
    field = _reward_field(file.path, "areal", schema, "reward", opts)
    fields = ["task_id", "prompt", field, *(["tail_version"] if "tail_version" in schema else [])]
    step = _step(file, schema, "tail_version")
    prompt = _hash(pl.col("prompt"))
    frame = _scan_json(file.path, schema, fields).select(
        ROW,
        step.alias("step"),
        _key(step, pl.col("task_id")).alias("group"),
        prompt.alias("prompt"),
        pl.col(field).alias(REWARD),
    )
    note = "areal: step = policy version (tail_version); a group = one task_id"
    return Part(frame, _rule("areal", field, schema[field], opts), [note])


def skyrl(file: DumpFile, index: int, opts: Options) -> Part:
    """SkyRL ``global_step_{N}_evals/{data_source}.jsonl``: input_prompt, output_response, score, ..., data_source."""
    schema = json_schema(file.path, "skyrl")
    layout = "dump_per_dataset_eval_results: input_prompt, output_response, score, stop_reason, env_class, env_extras, data_source"
    _require(file.path, "skyrl", schema, ["input_prompt"], layout)
    field = _reward_field(file.path, "skyrl", schema, "score", opts)
    # Token-level rewards are a list per rollout; SkyRL's own metrics sum them.
    reward, dtype = _unwrap(pl.col(field), schema[field], "sum")
    prompt = _hash(pl.col("input_prompt"))
    step = pl.lit(file.step, dtype=pl.Int64)
    frame = _scan_json(file.path, schema, ["input_prompt", field]).select(
        ROW,
        step.alias("step"),
        _key(pl.lit(index), prompt).alias("group"),
        prompt.alias("prompt"),
        reward.alias(REWARD),
    )
    return Part(
        frame, _rule("skyrl", field, dtype, opts), ["skyrl: rollouts grouped by (file, input_prompt)"]
    )


def roll(file: DumpFile, index: int, opts: Options) -> Part:
    """ROLL ``rollout_dump_data.step_{N}.jsonl``: one JSON object of column arrays per line."""
    schema = json_schema(file.path, "roll")
    layout = "write_to_json_process: one line of column arrays global_step, id, prompt, messages, ..., scores"
    key = next((k for k in ("id", "prompt", "messages") if k in schema), None)
    _require(file.path, "roll", schema, [key or "id"], layout)
    assert key is not None
    field = _reward_field(file.path, "roll", schema, "scores", opts)
    fields = [key, field, *(["global_step"] if "global_step" in schema else [])]
    lf = _scan_json(file.path, schema, fields).drop(ROW)
    lf = lf.explode(fields)
    _, dtype = _unwrap(pl.col(field), schema[field], "first")
    step = _step(file, schema, "global_step")
    prompt = _hash(pl.col(key))
    frame = lf.with_row_index(ROW, offset=1).select(
        ROW,
        step.alias("step"),
        _key(step, prompt).alias("group"),
        prompt.alias("prompt"),
        pl.col(field).alias(REWARD),
    )
    return Part(
        frame,
        _rule("roll", field, dtype, opts),
        [f"roll: prompts keyed by the {key!r} field; grouped by (step, {key})"],
    )


READERS: dict[str, Callable[[DumpFile, int, Options], Part]] = {
    "verl": verl,
    "trl": trl,
    "nemo-rl": nemo_rl,
    "areal": areal,
    "skyrl": skyrl,
    "roll": roll,
}

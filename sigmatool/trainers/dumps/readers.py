"""One dump file of one trainer into rows of (step, group, prompt, raw reward), reading only those fields.

Each reader follows the trainer's own writer; docs/trainers.md cites the file and function it was read from.
Prompts are UInt64 hashes of their text (ROLL: of the dataset's ``id`` when it has one); text columns are
hashed as they stream past and never kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from sigmatool.errors import DataError, UsageError, first_line
from sigmatool.trainers.dumps.areal_text import LAYOUT, read_generated
from sigmatool.trainers.dumps.files import DumpFile, run_label, run_metadata
from sigmatool.trainers.dumps.rewards import REWARD, RewardRule, describe

ROW = "__row"
INFER_ROWS = 200
TRL_NOT_REWARDS = ("step", "advantage")
FILTERED_WHY = (
    " (use_dynamic_sampling: the row's own reward; 'rewards' holds the unfiltered batch's, by position)"
)


@dataclass(frozen=True)
class Options:
    reward_col: str | None = None
    threshold: float | None = None
    # A log without a fixed layout (a W&B table): the columns that key its prompts, its groups and steps,
    # and the patterns cut from prompt texts.
    prompt_cols: tuple[str, ...] = ()
    group_col: str | None = None
    step_col: str | None = None
    prompt_masks: tuple[str, ...] = ()


@dataclass
class Part:
    """What one file gives: rows with ``step``, ``group``, ``prompt``, the raw reward and ``__row``."""

    frame: pl.LazyFrame
    rule: RewardRule
    notes: list[str]
    rows: str = ""  # how the rows were read where a trainer's setting changes it, said with the reward rule
    per_group: int | None = None  # the rollouts per group the run sampled, when the log's metadata says it


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
    # With use_dynamic_sampling, grpo_train dumps the kept rows with 'rewards' set to the whole generation
    # batch's total_reward (by position, not the row's own) and the row's own in 'filtered_rewards'.
    default = "filtered_rewards" if "filtered_rewards" in schema else "rewards"
    field = _reward_field(file.path, "nemo-rl", schema, default, opts)
    why = "" if opts.reward_col or field != "filtered_rewards" else FILTERED_WHY
    reward, dtype = _unwrap(pl.col(field), schema[field], "first")
    texts = _message_texts(pl.col("content"), schema["content"])
    # The prompt is every message but the last (the answer); groups are the runs of one prompt in a file.
    prompt = _hash(texts.list.slice(0, texts.list.len() - 1).list.join("\x1f"))
    lf = _scan_json(file.path, schema, ["content", field]).select(
        ROW, prompt.alias("prompt"), reward.alias(REWARD)
    )
    # Groups are runs of rows with one prompt (repeat_interleave). With dynamic sampling a prompt drawn twice
    # in a step gives one run of 2G rows: a run whose length is a multiple m of the file's most common run
    # length G (the group size, as every kept group is whole) is m groups.
    run = pl.col("prompt").rle_id()
    length, place = pl.len().over("__run"), pl.int_range(pl.len()).over("__run")
    size = pl.col("__len").filter(pl.col("__place") == 0).mode().min()
    split = pl.when((pl.col("__len") > size) & (pl.col("__len") % size == 0)).then(pl.col("__place") // size)
    group = _key(pl.lit(index, dtype=pl.Int64), pl.col("__run"), split.otherwise(0))
    frame = (
        lf.with_columns(run.alias("__run"))
        .with_columns(length.alias("__len"), place.alias("__place"))
        .select(ROW, pl.lit(file.step, dtype=pl.Int64).alias("step"), group.alias("group"), "prompt", REWARD)
    )
    note = (
        "nemo-rl: prompt = every message but the last; a group = a run of rows with one prompt, a run of m × G "
        "rows (G the file's most common run: one prompt drawn m times in a step) m groups"
    )
    return Part(frame, _rule("nemo-rl", field, dtype, opts, why), [note])


def areal_text(file: DumpFile, index: int, opts: Options) -> Part:
    """AReaL before v0.5.2, ``generated/{version}/{qid}.txt``: one text record per sample, one block per episode."""
    if opts.reward_col not in (None, "reward"):
        raise UsageError(
            f"{file.path}: an {LAYOUT} file has one reward, 'reward'; --reward-col does not apply"
        )
    step = pl.lit(file.step, dtype=pl.Int64)
    prompt = _hash(pl.col("prompt"))
    frame = (
        read_generated(file.path)
        .lazy()
        .with_row_index(ROW, offset=1)
        .select(
            ROW,
            step.alias("step"),
            _key(step, pl.lit(index, dtype=pl.Int64), pl.col("block")).alias("group"),
            prompt.alias("prompt"),
            pl.col("reward").alias(REWARD),
        )
    )
    note = "areal: generated/{version}/{qid}.txt (before v0.5.2): step = the version folder; a group = one episode"
    return Part(frame, _rule("areal", "reward", pl.String(), opts), [note])


def areal(file: DumpFile, index: int, opts: Options) -> Part:
    """AReaL ``rollout/{version}/{task_id}.jsonl``: task_id, sample_idx, ..., tail_version, reward, prompt, completion."""
    if file.path.endswith(".txt"):
        return areal_text(file, index, opts)
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
        _key(step, pl.col("task_id"), prompt).alias("group"),
        prompt.alias("prompt"),
        pl.col(field).alias(REWARD),
    )
    # Several data-parallel workers (SPMD) each number their tasks from 0 and append to the same
    # {version}/{task_id}.jsonl; a task is one prompt's episode, so the prompt tells their groups apart.
    note = "areal: step = policy version (tail_version); a group = one (version, task_id, prompt)"
    return Part(frame, _rule("areal", field, schema[field], opts), [note])


def skyrl(file: DumpFile, index: int, opts: Options) -> Part:
    """SkyRL ``global_step_{N}_evals/{data_source}.jsonl``: input_prompt, output_response, score, ..., data_source."""
    schema = json_schema(file.path, "skyrl")
    layout = "dump_per_dataset_eval_results: input_prompt, output_response, score, stop_reason, env_class, env_extras, data_source"
    _require(file.path, "skyrl", schema, ["input_prompt"], layout)
    field = _reward_field(file.path, "skyrl", schema, "score", opts)
    # Token-level rewards are a list per rollout; SkyRL's own metrics sum them.
    reward, dtype = _unwrap(pl.col(field), schema[field], "sum")
    trajectories = _skyrl_trajectories(_scan_json(file.path, schema, ["input_prompt", field]), reward)
    prompt = _hash(pl.col("input_prompt"))
    step = pl.lit(file.step, dtype=pl.Int64)
    frame = trajectories.select(
        ROW,
        step.alias("step"),
        _key(pl.lit(index), prompt).alias("group"),
        prompt.alias("prompt"),
        REWARD,
    )
    notes = ["skyrl: rollouts grouped by (file, input_prompt)"]
    rows = STEP_WISE_NOTE if _skyrl_step_wise(file.path) else ""
    return Part(frame, _rule("skyrl", field, dtype, opts), notes, rows)


STEP_WISE_NOTE = (
    "skyrl: rows are the turns of step-wise trajectories (step_wise_trajectories=true): each trajectory "
    "counts once, keyed by its first turn's input_prompt, with its last turn's score"
)


def _later_turn() -> pl.Expr:
    """A row that continues the row before it: its input_prompt is that row's, extended (the next turn)."""
    text, before = pl.col("input_prompt"), pl.col("input_prompt").shift(1)
    return (text.str.starts_with(before) & (text.str.len_bytes() > before.str.len_bytes())).fill_null(False)


def _skyrl_trajectories(lf: pl.LazyFrame, reward: pl.Expr) -> pl.LazyFrame:
    """One row per trajectory: its first turn's input_prompt, its last turn's reward and row number.

    With step_wise_trajectories, evaluate_step_wise dumps every turn as a row, a trajectory's turns in a run
    (dump_per_dataset_eval_results keeps the generator's order), each turn's input_prompt the whole
    conversation so far; the score that counts is the last turn's (rewards sit on the final step). Without
    it, no row continues the one before, and every row is its own trajectory: a decoded prompt ends in the
    chat template's turn for the answer, so one prompt's text is never the start of the next one's.
    """
    return (
        lf.select(
            ROW, "input_prompt", reward.alias(REWARD), _later_turn().not_().cum_sum().alias("__trajectory")
        )
        .group_by("__trajectory", maintain_order=True)
        .agg(pl.col(ROW).last(), pl.col("input_prompt").first(), pl.col(REWARD).last())
    )


def _skyrl_step_wise(path: str) -> bool:
    """Whether the first rows of a SkyRL dump hold later turns of a trajectory (reads those rows only)."""
    head = pl.scan_ndjson(path, schema={"input_prompt": pl.String}).head(INFER_ROWS)
    return bool(head.select(_later_turn().any()).collect().item())


def roll(file: DumpFile, index: int, opts: Options) -> Part:
    """ROLL ``rollout_dump_data.step_{N}.jsonl``: one JSON object of column arrays per line."""
    schema = json_schema(file.path, "roll")
    layout = "write_to_json_process: one line of column arrays global_step, id, prompt, messages, ..., scores"
    key = next((k for k in ("id", "prompt", "messages") if k in schema), None)
    _require(file.path, "roll", schema, [key or "id"], layout)
    assert key is not None
    field = _reward_field(file.path, "roll", schema, "scores", opts)
    # Each dataset of a multi-domain run numbers its own ids: an id is a prompt within its domain.
    domain = ["domain"] if key == "id" and "domain" in schema else []
    fields = [key, *domain, field, *(["global_step"] if "global_step" in schema else [])]
    lf = _scan_json(file.path, schema, fields).drop(ROW)
    lf = lf.explode(fields)
    _, dtype = _unwrap(pl.col(field), schema[field], "first")
    step = _step(file, schema, "global_step")
    shown = f"the 'domain' and {key!r} fields" if domain else f"the {key!r} field"
    grouped = f"domain, {key}" if domain else key
    prompt = _hash(roll_prompt(bool(domain), key))
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
        [f"roll: prompts keyed by {shown}; grouped by (step, {grouped})"],
    )


def roll_prompt(domain: bool, key: str = "id") -> pl.Expr:
    """A ROLL prompt's key text: its dataset id, after its domain and a unit separator when the batch has one."""
    if not domain:
        return pl.col(key)
    return pl.concat_str(
        [pl.col("domain").cast(pl.String).fill_null(""), pl.col(key).cast(pl.String).fill_null("")],
        separator="\x1f",
    )


READERS: dict[str, Callable[[DumpFile, int, Options], Part]] = {
    "verl": verl,
    "trl": trl,
    "nemo-rl": nemo_rl,
    "areal": areal,
    "skyrl": skyrl,
    "roll": roll,
}


# ------------------------------------------------------------------------- eval harnesses and collectors


def _label(value: object) -> pl.Expr:
    return pl.lit(None if value is None else str(value), dtype=pl.String)


def verifiers(file: DumpFile, index: int, opts: Options) -> Part:
    """verifiers ``vf-eval`` ``results.jsonl``: example_id (before v0.1.6: id), prompt, completion, reward, ...,
    beside ``metadata.json`` (env_id or env, model, num_examples, rollouts_per_example)."""
    schema = json_schema(file.path, "verifiers")
    key = "example_id" if "example_id" in schema else "id"
    layout = "vf-eval results.jsonl: example_id, prompt, completion, reward, ..."
    _require(file.path, "verifiers", schema, [key], layout)
    field = _reward_field(file.path, "verifiers", schema, "reward", opts)
    meta = run_metadata(file.path)
    env = meta.get("env_id") or meta.get("env") or Path(file.path).parent.parent.name.split("--")[0]
    examples = meta.get("num_examples")
    notes = []
    lf = _scan_json(file.path, schema, [key, field])
    if key == "id" and isinstance(examples, int) and examples > 0:
        # vf-eval before v0.1.6 wrote id = i // rollouts_per_example while its rows cycled through the
        # examples (scripts/eval.py at 8c1b7fe7 to ed7cdf22): the example of row i (from 0) is i mod n.
        example = (pl.col(ROW) - 1) % examples
        notes.append(
            "verifiers: an 'id' file (vf-eval before v0.1.6, whose 'id' = row // rollouts_per_example while the "
            f"rows cycle through the examples): prompts keyed by row mod num_examples ({examples}, metadata.json)"
        )
    elif key == "id":
        example = pl.col("id")
        notes.append(
            "verifiers: an 'id' file without metadata.json's num_examples: keyed by 'id', which vf-eval before "
            "v0.1.6 wrote as row // rollouts_per_example while the rows cycled through the examples; if so, "
            "one key holds several problems (keep metadata.json beside results.jsonl)"
        )
    else:
        example = pl.col(key)
    prompt = _key(pl.lit(str(env)), example.cast(pl.String))
    frame = lf.select(
        ROW,
        pl.lit(file.step, dtype=pl.Int64).alias("step"),
        _key(pl.lit(index), prompt).alias("group"),
        prompt.alias("prompt"),
        pl.col(field).alias(REWARD),
        _label(meta.get("model")).alias("model"),
        _label(run_label(file.path)).alias("run"),
    )
    grouping = [
        f"verifiers: prompts keyed by (env, {'example' if key == 'id' else key}); a group = one run's rollouts "
        "of one prompt",
        f"verifiers: step {file.step} = the run {run_label(file.path)} (model {meta.get('model', 'not named')})",
    ]
    return Part(frame, _rule("verifiers", field, schema[field], opts), grouping, "; ".join(notes))


def nemo_gym(file: DumpFile, index: int, opts: Options) -> Part:
    """NeMo-Gym rollouts ``X.jsonl`` (responses_create_params, response, reward, ..., _ng_task_index,
    _ng_rollout_index, agent_ref), or its reward profile ``X_reward_profiling.jsonl`` (rollout_infos)."""
    schema = json_schema(file.path, "nemo-gym")
    if "rollout_infos" in schema:
        return _nemo_gym_profile(file, index, opts, schema)
    layout = (
        "rollout collection: responses_create_params, response, reward, _ng_task_index, _ng_rollout_index"
    )
    _require(file.path, "nemo-gym", schema, ["_ng_task_index"], layout)
    field = _reward_field(file.path, "nemo-gym", schema, "reward", opts)
    agent = "agent_ref" in schema and isinstance(schema["agent_ref"], pl.Struct)
    fields = ["_ng_task_index", field, *(["agent_ref"] if agent else [])]
    name = (
        pl.col("agent_ref").struct.field("name").cast(pl.String) if agent else pl.lit(None, dtype=pl.String)
    )
    prompt = _key(name, pl.col("_ng_task_index"))
    frame = _scan_json(file.path, schema, fields).select(
        ROW,
        pl.lit(file.step, dtype=pl.Int64).alias("step"),
        _key(pl.lit(index), prompt).alias("group"),
        prompt.alias("prompt"),
        pl.col(field).alias(REWARD),
        name.alias("agent"),
    )
    note = (
        "nemo-gym: prompts keyed by (agent_ref.name, _ng_task_index); a group = a file's rollouts of one task"
    )
    return Part(frame, _rule("nemo-gym", field, schema[field], opts), [note])


def _nemo_gym_profile(file: DumpFile, index: int, opts: Options, schema: pl.Schema) -> Part:
    """A reward profile: one row per task, its rollouts' rewards in ``rollout_infos`` (v0.3.0 and later)."""
    infos = schema["rollout_infos"]
    inner = infos.inner if isinstance(infos, pl.List) else None
    field = opts.reward_col or "reward"
    if not isinstance(inner, pl.Struct) or field not in {f.name for f in inner.fields}:
        raise DataError(f"{file.path}: a NeMo-Gym reward profile whose 'rollout_infos' hold no {field!r}")
    dtype = next(f.dtype for f in inner.fields if f.name == field)
    lf = _scan_json(file.path, schema, ["_ng_task_index", "rollout_infos"]).explode("rollout_infos")
    prompt = _key(pl.lit(None, dtype=pl.String), pl.col("_ng_task_index"))
    frame = (
        lf.drop(ROW)
        .with_row_index(ROW, offset=1)
        .select(
            ROW,
            pl.lit(file.step, dtype=pl.Int64).alias("step"),
            _key(pl.lit(index), prompt).alias("group"),
            prompt.alias("prompt"),
            pl.col("rollout_infos").struct.field(field).alias(REWARD),
            pl.lit(None, dtype=pl.String).alias("agent"),
        )
    )
    note = "nemo-gym: a reward profile: each task's rollouts from its 'rollout_infos' (rows are rollouts in task order)"
    rule = _rule("nemo-gym", f"rollout_infos.{field}", dtype, opts)  # type: ignore[arg-type]
    return Part(frame, rule, [note])


# open-instruct's reward without a threshold: verification_reward (10, its default) times a 0/1 verifier.
OPEN_INSTRUCT_VALUES = ((10.0,), (0.0,))


def open_instruct(file: DumpFile, index: int, opts: Options) -> Part:
    """open-instruct ``--save_traces`` ``{run_name}_rollouts_{shard:06d}.jsonl``: step, prompt_idx, sample_idx,
    prompt_tokens, response_tokens, reward, advantage, finish_reason, dataset, ground_truth, ..."""
    schema = json_schema(file.path, "open-instruct")
    layout = "save_rollouts_to_disk: step, prompt_idx, sample_idx, prompt_tokens, reward, dataset, ..."
    _require(file.path, "open-instruct", schema, ["step", "prompt_idx", "prompt_tokens"], layout)
    field = _reward_field(file.path, "open-instruct", schema, "reward", opts)
    dataset = "dataset" in schema
    fields = ["step", "prompt_idx", "prompt_tokens", field, *(["dataset"] if dataset else [])]
    run = re.sub(r"_rollouts_\d{6}\.jsonl$", "", Path(file.path).name)
    label = pl.lit(None, dtype=pl.String)
    if dataset:
        kind = schema["dataset"]
        label = pl.col("dataset").list.first() if isinstance(kind, pl.List) else pl.col("dataset")
    step = pl.col("step").cast(pl.Int64)
    prompt = _hash(pl.col("prompt_tokens"))
    frame = _scan_json(file.path, schema, fields).select(
        ROW,
        step.alias("step"),
        _key(pl.lit(run), step, pl.col("prompt_idx")).alias("group"),
        prompt.alias("prompt"),
        pl.col(field).alias(REWARD),
        label.cast(pl.String).alias("dataset"),
        pl.lit(run).alias("run"),
    )
    notes = ["open-instruct: prompts keyed by their prompt_tokens; a group = one (run, step, prompt_idx)"]
    values = OPEN_INSTRUCT_VALUES if opts.reward_col is None else ((1.0,), (0.0, -1.0))
    rule = describe("open-instruct", field, schema[field], opts.threshold, "", values)
    caveat = (
        "open-instruct: with filter_zero_std_samples (on by default) the traces are written after the groups "
        "whose rewards all agree were dropped: they hold no silent group, and their pass rates lean to the middle"
    )
    return Part(frame, rule, notes, caveat)


READERS.update({"verifiers": verifiers, "nemo-gym": nemo_gym, "open-instruct": open_instruct})

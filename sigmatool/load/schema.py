"""Which columns mean what: the value column, picked by name or given, its form, and the columns needed.

The schema step of the walk (the face of :mod:`sigmatool.load` lists the steps). A difficulty dataset gives
each prompt a pass rate (``--col``, or found by name: :data:`~sigmatool.load.names.RATE_NAMES`), k right
of n samples (``--k-col``/``--n-col``, columns ``k`` and ``n``, or a rate with ``--samples N``), or a log of
single graded answers (``--rollouts``). A pass-rate column holds a plain rate or one of the counted forms of
:mod:`sigmatool.load.forms` (``"k/n"`` text, a list of grades, a whole number of right or wrong answers out of
``--samples N``), perhaps at a dotted path into nested records; docs/datasets.md lists the public datasets
and the sources of each fact. Only schemas and the first rows are read here; the columns are scanned by
:mod:`sigmatool.load.scan`.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import polars as pl

from sigmatool.errors import DataError, UsageError
from sigmatool.load.forms import FRACTION_PATTERN, KNOWN_COLUMNS, leaf_paths, resolve_leaf
from sigmatool.load.names import RATE_NAMES, RATE_SUFFIXES
from sigmatool.load.sources import SAMPLE_LABEL, Source, read_error, source_schema
from sigmatool.options import InputOptions
from sigmatool.trainers.dumps.detect import dump_hint

# ----------------------------------------------------------------------------------- the value column


def counts_columns(schema: pl.Schema, extra: Sequence[str] = ()) -> bool:
    """Whether the input holds counts in columns named ``k`` and ``n`` (as sigmatool's own exports write
    them, e.g. ``track --export-pass-rates``) and no pass-rate column by name."""
    names = list(schema.names())
    rates = [
        c
        for c in names
        if c.lower() in RATE_NAMES or any(c.lower().endswith(s) for s in RATE_SUFFIXES) or c in extra
    ]
    counts = all(c in names and schema[c].is_numeric() for c in ("k", "n"))
    return counts and not rates


def _grade_list(dtype: pl.DataType) -> bool:
    """A list (or array) of booleans or numbers: one grade per answer, readable with --col."""
    if not isinstance(dtype, pl.List | pl.Array):
        return False
    return bool(dtype.inner == pl.Boolean or dtype.inner.is_numeric())


# Column names of a rollout log: the prompt an answer belongs to, and the answer's reward.
PROMPT_KEYS = (
    "example_id", "prompt_id", "problem_id", "question_id", "task_id", "uid", "unique_id", "id", "idx",
    "prompt", "question", "problem",
)  # fmt: skip
REWARD_KEYS = ("reward", "rewards", "score", "correct", "is_correct", "passed", "success", "accuracy", "acc")
# Rows read to tell a rollout log (a repeated prompt key, 0/1 or ±1 rewards) from a table of pass rates.
PEEK_ROWS = 100_000


def rollout_route(
    source: Source, schema: pl.Schema, reward: str | None = None, key: str | None = None
) -> tuple[str, str] | None:
    """When ``source`` looks like a rollout log, one row per graded answer (a prompt key, ``key`` (the
    user's --id-col) or one found by name, that repeats in its first rows, and a reward, ``reward`` or one
    found by name, that is boolean, 0/1 or ±1 there): the options that read it so, and the key column.
    None otherwise."""
    names = {c.lower(): c for c in schema.names()}
    rewards = [reward] if reward else [names[r] for r in REWARD_KEYS if r in names]
    found = [names[k] for k in PROMPT_KEYS if k in names]
    given = [key] if key is not None and key in schema else []
    keys = [k for k in [*given, *found] if k not in rewards]
    if not rewards or not keys or rewards[0] not in schema:
        return None
    reward, key = rewards[0], keys[0]
    try:
        first = source.scan().select(key, reward).head(PEEK_ROWS).collect()
    except (pl.exceptions.PolarsError, OSError):
        return None
    values = first[reward].drop_nulls()
    if values.len() < 2 or first[key].n_unique() == first.height:
        return None
    signs = ""
    if values.dtype != pl.Boolean:
        if not values.dtype.is_numeric():
            return None
        distinct = set(values.unique().to_list())
        if not distinct <= {0, 1}:
            if not distinct <= {-1, 1}:
                return None
            signs = " --threshold 0"
    return f"--rollouts --prompt-col {key} --reward-col {reward}{signs}", key


def check_not_rollouts(source: Source, schema: pl.Schema, col: str, id_col: str | None = None) -> None:
    """A pass-rate column that holds one 0/1 reward per row of a repeated prompt key (the --id-col given,
    or one found by name) is a rollout log read as pass rates (every group would be silent): refused,
    naming the options that read it."""
    found = rollout_route(source, schema, col, id_col)
    if found is None:
        return
    route, key = found
    raise UsageError(
        f"{source.label}: column {col!r} holds one reward per row and {key!r} repeats: this is a rollout log "
        f"(one row per answer), not one pass rate per prompt; read it with {route}, or give --samples 1 to "
        "take each row as a prompt answered once"
    )


def pick_rate_column(
    schema: pl.Schema, label: str, extra: Sequence[str] = (), source: Source | None = None
) -> str:
    """The pass-rate column, by name (or one of ``extra``): exactly one candidate, else an error listing them
    (with ``source``, one that looks like a rollout log names the options that read it)."""
    names = list(schema.names())
    candidates = [
        c
        for c in names
        if c.lower() in RATE_NAMES or any(c.lower().endswith(s) for s in RATE_SUFFIXES) or c in extra
    ]
    if len(candidates) == 1:
        return candidates[0]
    numeric = [c for c, dtype in schema.items() if dtype.is_numeric()]
    listing = ", ".join(numeric) if numeric else "none"
    if not candidates:
        hint = dump_hint(names)
        if hint:
            raise DataError(f"{label}: no pass-rate column: {hint}")
        found = None if source is None else rollout_route(source, schema)
        if found is not None:
            raise DataError(
                f"{label}: no pass-rate column, and {found[1]!r} repeats beside a 0/1 reward: a rollout log "
                f"(one row per answer); read it with {found[0]}"
            )
        grades = [c for c, dtype in schema.items() if _grade_list(dtype)]
        lists = f"; lists of grades (k of n): {', '.join(grades)}" if grades else ""
        raise DataError(
            f"{label}: no pass-rate column found (looked for {', '.join(RATE_NAMES)} or a name ending in "
            f"solve_rate/pass_rate); pick one with --col, or give --k-col/--n-col. Numeric columns: {listing}"
            + lists
        )
    raise DataError(
        f"{label}: several pass-rate columns ({', '.join(candidates)}); pick one with --col (repeat --col "
        "to compare them). "
        f"Numeric columns: {listing}"
    )


# ------------------------------------------------------------------------------------------- its form

COUNTED = ("fraction", "list", "count")
SAMPLE_ROWS = 1000
Schema = Mapping[str, pl.DataType]


@dataclass(frozen=True)
class ValueForm:
    """The form of the pass-rate column: rate, fraction, list or count (with its n and direction)."""

    form: str = "rate"
    samples: int | None = None
    counts: str = "right"
    notes: tuple[str, ...] = ()

    @property
    def counted(self) -> bool:
        return self.form in COUNTED


def column_expr(schema: Schema, path: str, label: str) -> pl.Expr:
    """A top-level column, else a dotted path into nested records (names may contain dots themselves)."""
    if path in schema or "." not in path:
        return pl.col(path)
    return resolve_leaf(schema, path, label).expr


def column_dtype(schema: Schema, path: str, label: str) -> pl.DataType:
    if path in schema:
        return schema[path]
    return resolve_leaf(schema, path, label).dtype


def _is_list(dtype: pl.DataType) -> bool:
    return isinstance(dtype, (pl.List, pl.Array))


def _form_of(dtype: pl.DataType) -> str:
    """A nested dtype in words: ``lists of lists of numbers``, ``lists of records``, ``lists of text``."""
    if _is_list(dtype):
        return "lists of " + _form_of(dtype.inner)  # type: ignore[attr-defined]
    if isinstance(dtype, pl.Struct):
        return "records"
    if dtype.is_numeric():
        return "numbers"
    return "text" if dtype == pl.String else str(dtype)


def _fractional(source: Source, expr: pl.Expr) -> bool:
    """Whether the first values of a text column look like "k/n"."""
    try:
        sample = source.scan().select(expr).head(SAMPLE_ROWS).collect().to_series()
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise read_error(source, exc) from exc
    return bool(sample.cast(pl.String).str.contains(FRACTION_PATTERN).any())


def detected_extras(source: Source, schema: Schema) -> list[str]:
    """Columns of known datasets picked by name when their values have the form: OpenR1-Math's list of
    grades, Polaris's "k/n" ``difficulty`` (a difficulty of another kind, e.g. a level, is left alone)."""
    extra = []
    shape = source.shape()
    if shape is not None and shape.value is not None:
        extra.append(shape.value)  # the values of a JSON object of ids (load.objects)
    if _is_list(schema.get("correctness_math_verify", pl.Null())):
        extra.append("correctness_math_verify")
    if schema.get("difficulty") == pl.String and _fractional(source, pl.col("difficulty")):
        extra.append("difficulty")
    return extra


def _count_form(opts: InputOptions, path: str) -> ValueForm:
    known = KNOWN_COLUMNS.get(path)
    samples = opts.samples or (known.samples if known else None)
    if samples is None:
        raise UsageError(
            f"--counts: column {path!r} counts answers out of how many? give --samples N (e.g. --samples 16)"
        )
    direction = opts.counts or (known.counts if known else "right")
    notes = [f"reading {path!r} as a count of {direction} answers out of {samples}"]
    if opts.counts is None and known is not None:
        notes = [f"{path!r} ({known.dataset}): {known.note}"]
    return ValueForm("count", samples, direction, tuple(notes))


def value_form(opts: InputOptions, source: Source, schema: Schema) -> ValueForm:
    """The form of ``opts.col`` in this source, from its dtype and, for text, its first values."""
    path = opts.col or ""
    if path not in schema and "." not in path:
        return ValueForm()  # a missing column is named with the others (check_columns)
    dtype = column_dtype(schema, path, source.label)
    known = KNOWN_COLUMNS.get(path)
    if _is_list(dtype):
        inner = dtype.inner  # type: ignore[attr-defined]
        if not (inner == pl.Boolean or inner.is_numeric() or inner == pl.Null):
            raise DataError(
                f"{source.label}: column {path!r} holds {_form_of(dtype)}, not pass rates or a list of grades "
                "(true/false or 0/1) per prompt"
            )
        if opts.samples is not None or opts.counts is not None:
            raise UsageError(
                f"{path!r} holds lists of grades, which carry their own n: drop --samples/--counts"
            )
        return ValueForm("list")
    if opts.counts is not None or (known is not None and known.samples and dtype.is_integer()):
        if not (dtype.is_numeric() or dtype == pl.String):
            raise UsageError(f"--counts: column {path!r} holds {dtype}, not whole numbers")
        return _count_form(opts, path)
    if (
        dtype == pl.String
        and not opts.percent
        and _fractional(source, column_expr(schema, path, source.label))
    ):
        if opts.samples is not None:
            raise UsageError(f"{path!r} holds 'k/n' text, which carries its own n: drop --samples")
        return ValueForm("fraction")
    if isinstance(dtype, pl.Struct) and source.fmt not in ("json", "jsonl"):
        # JSON types come from the values: records there may be stray values, which are named by row.
        choices = ", ".join(leaf_paths(dtype, path)[:12])
        raise DataError(f"{source.label}: {path!r} holds records; give the path of one field: {choices}")
    return ValueForm("rate")


def value_column(
    options: InputOptions, sources: Sequence[Source]
) -> tuple[InputOptions, ValueForm, list[str]]:
    """The options with the pass-rate column resolved (detected by name when not given), and its form."""
    if options.rollouts:
        # A trainer's dump read as a plain log loses the trainer's reward rule and groups: say which it is.
        hint = dump_hint(source_schema(sources[0])[0].names())
        note = f"{sources[0].label}: {hint}, which grades and groups the rollouts as the trainer did"
        return options, ValueForm(), [note] if hint else []
    if options.k_col:
        return options, ValueForm(), []
    first = sources[0]
    notes: list[str] = []
    if options.col is None:
        schema = source_schema(first)[0]
        extras = detected_extras(first, schema)
        if options.samples is None and options.counts is None and counts_columns(schema, extras):
            counted = replace(options, k_col="k", n_col="n")
            return (
                counted,
                ValueForm(),
                ["no pass-rate column: reading counts k of n from columns 'k' and 'n'"],
            )
        col = pick_rate_column(schema, first.label, extras, first)
        notes = [] if first.label == SAMPLE_LABEL else [f"using pass-rate column {col!r}"]
        options = replace(options, col=col)
    schema, listed_only = source_schema(first)
    if options.samples is None and options.counts is None and not listed_only and options.col in schema:
        check_not_rollouts(first, schema, options.col or "", options.id_col)
    form = ValueForm() if listed_only else value_form(options, first, schema)
    return options, form, [*notes, *form.notes]


# --------------------------------------------------------------------------------- the columns needed


def value_columns(opts: InputOptions) -> list[str]:
    """The user's columns that hold the values (not --by, id or weight)."""
    if opts.rollouts:
        return [opts.reward_col or ""]
    if opts.k_col:
        return [opts.k_col, opts.n_col or ""]
    return [opts.col or ""]


def needed_columns(opts: InputOptions) -> list[str]:
    cols: list[str] = list(opts.by)
    if opts.rollouts:
        cols += [*opts.prompt_key, *(c for c in (opts.group_col, opts.rollout_col) if c)]
    cols += value_columns(opts)
    for extra in (opts.weight_col, opts.id_col):
        if extra:
            cols.append(extra)
    return list(dict.fromkeys(cols))


def nested_path(opts: InputOptions, schema: pl.Schema) -> list[str]:
    """The value column when it is a dotted path into nested records rather than a column."""
    col = opts.col
    return [col] if col and col not in schema and "." in col and not opts.rollout_log else []


def did_you_mean(missing: Sequence[str], names: Sequence[str]) -> str:
    """`` (did you mean 'pass_rate'?)`` when a column's name is close to a missing one (difflib), else ''."""
    lowered = {n.lower(): n for n in names}
    close = []
    for name in missing:
        same = lowered.get(name.lower())
        close += [same] if same else difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    shown = ", ".join(repr(c) for c in dict.fromkeys(close))
    return f" (did you mean {shown}?)" if shown else ""


def check_columns(
    schema: pl.Schema, opts: InputOptions, label: str, form: ValueForm, header: list[str] | None = None
) -> list[str]:
    """Missing, duplicated and wrongly typed value columns are errors; returns notes for the rest.

    ``header`` is a CSV file's header as written: polars renames a repeated name, so repeats are found there.
    """
    needed = [c for c in needed_columns(opts) if c not in nested_path(opts, schema)]
    names = header if header is not None else list(schema.names())
    missing = [c for c in needed if c not in schema]
    if missing:
        hint = dump_hint(list(schema.names()))
        raise DataError(
            f"{label}: missing column(s) {', '.join(repr(m) for m in missing)}{did_you_mean(missing, names)}; "
            f"the columns are: {', '.join(names)}" + (f"; {hint}" if hint else "")
        )
    doubled = sorted({n for n in names if names.count(n) > 1})
    used = [d for d in doubled if d in needed]
    if used:
        raise DataError(
            f"{label}: column name(s) {', '.join(repr(d) for d in used)} appear more than once in the "
            "header, so it is not clear which to use; rename the copies"
        )
    for name in value_columns(opts) if not (opts.rollouts or form.counted) else []:
        dtype = column_dtype(schema, name, label)
        if dtype == pl.String:
            continue
        if dtype == pl.Boolean:
            raise DataError(
                f"{label}: column {name!r} holds true/false values, not pass rates or counts; if each row "
                f"is one graded answer, read it as a rollout log: --rollouts --prompt-col ID --reward-col {name}"
            )
        if dtype.is_nested():
            raise DataError(
                f"{label}: column {name!r} holds lists or records ({dtype}), not numbers; "
                "give the column with the pass rate or the counts"
            )
    return [f"{label}: column {d!r} appears more than once in the header (not used)" for d in doubled]

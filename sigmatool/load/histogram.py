"""The histogram of distinct values: one streaming pass over the rows, then checks on what it found.

Every analysis needs only the distinct (``--by`` group, p̂) or (``--by`` group, k, n) values and how many
prompts stand behind each: at most a few thousand rows for k-of-n data, however many prompts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import polars as pl

from sigmatool.errors import DataError
from sigmatool.load.dataset import Dataset, k_expr, n_expr, numeric, p_expr, rate_value
from sigmatool.load.forms import LIST_VALUE
from sigmatool.load.grid import off_grid, read_grid
from sigmatool.load.grouping import key_notes, text_column, text_key_notes
from sigmatool.load.integrity import log_integrity, log_selection
from sigmatool.load.logs import packed_rollout_aggregates, unpacked_rollout_columns
from sigmatool.load.names import (
    BAD_REWARDS,
    NULL_REWARDS,
    PROBLEM,
    RAW_ID,
    RAW_K,
    RAW_N,
    RAW_P,
    RAW_W,
    REWARD,
    UNGRADED,
)
from sigmatool.load.schema import needed_columns
from sigmatool.load.sources import data_error, source_schema
from sigmatool.load.validate import describe_bad_rows, null_expr, percent_hint, problems
from sigmatool.memory import budgeted, honoured
from sigmatool.options import COLUMN
from sigmatool.trainers.dumps import describe_bad_rows as describe_bad_rollouts

Progress = Callable[[int], None]
# A rollout log from local files is aggregated per prompt in this many passes (see _log_groups).
LOG_PASSES = 2
LOG_SEED = 20260607
Reload = Callable[[Dataset, tuple[str, ...]], Dataset]


@dataclass(frozen=True)
class Histogram:
    """Distinct values with their prompts, the dataset that produced them, and notes for people.

    ``frame`` has the ``--by`` columns, ``p`` (and ``k``, ``n`` with counts), ``prompts`` (summed weight)
    and ``rows``, sorted by them.
    """

    frame: pl.DataFrame
    dataset: Dataset
    notes: tuple[str, ...] = ()
    # How the input was read where a likely misreading is possible: the answer's headline starts with it.
    reading: tuple[str, ...] = ()
    # What streamed rows may bring, summed while checked (sigmatool.load.rows.Rows): a histogram's sums
    # come from its distinct values.
    totals: None = None


def _counting(lf: pl.LazyFrame, on_rows: Progress | None) -> pl.LazyFrame:
    """``lf``, calling ``on_rows`` (for a progress display) with the size of each batch of rows as it passes;
    it may be called from several threads."""
    if on_rows is None:
        return lf
    report = on_rows

    def count(batch: pl.DataFrame) -> pl.DataFrame:
        report(batch.height)
        return batch

    return lf.map_batches(count, streamable=True)


def aggregate(
    lf: pl.LazyFrame, keys: Sequence[str], aggs: Sequence[pl.Expr], on_rows: Progress | None = None
) -> pl.DataFrame:
    """Group ``lf`` by ``keys`` in one streaming pass; memory holds the distinct keys, never the rows.

    ``on_rows`` is called with the size of each batch of input rows as it passes (see :func:`_counting`).
    """
    return _counting(lf, on_rows).group_by(keys).agg(aggs).collect(engine="streaming")


def _late_text(exc: BaseException) -> bool:
    """A CSV or JSON column held text past the rows used to guess its type."""
    return isinstance(exc, pl.exceptions.ComputeError) and "could not parse" in str(exc)


def text_columns(ds: Dataset) -> tuple[str, ...]:
    """The user's value and weight columns, to be read as text when a number was expected."""
    opts = ds.options
    if ds.form == "trainer" or (ds.counted and ds.form != "count"):
        return ()  # dumps are read by their own readers; text and lists are read as they are
    cols = [opts.k_col, opts.n_col] if opts.k_col else [opts.col]
    if opts.rollouts:
        cols = [opts.reward_col]
    cols.append(opts.weight_col)
    return tuple(c for c in cols if c)


def histogram(ds: Dataset, reload: Reload, on_rows: Progress | None = None) -> Histogram:
    """One streaming pass: usable rows grouped by ``--by`` columns and distinct values, then checked.

    Bad values raise :class:`DataError` naming the column and first rows, unless ``--skip-invalid``.
    ``reload(ds, text_cols)`` reads the input again with those columns as text: when a CSV or JSON column
    turns out to hold text past the rows polars guessed its type from, the pass is run once more that way.
    """
    try:
        grouped = _group(ds, on_rows)
    except (pl.exceptions.PolarsError, OSError) as exc:
        if not _late_text(exc) or ds.text_cols or not text_columns(ds):
            raise data_error(ds.sources, exc) from exc
        ds = reload(ds, text_columns(ds))
        try:
            grouped = _group(ds, on_rows)
        except (pl.exceptions.PolarsError, OSError) as again:
            raise data_error(ds.sources, again) from again
    frame, notes = _check(grouped, ds, reload)
    read = read_grid(frame, ds)
    # Rates read as k of n on the grid they lie on: read_grid's note, said first.
    inferred = read.notes[-1] if read.grid is not None and not ds.by else None
    if read.grid is not None:
        # The same checked rates, now with their counts (null off the grid): made in memory from the checked
        # histogram, not read or checked again. What was skipped was counted on the rates, as written.
        frame = _counted_on_grid(frame, read)
    ds = read
    if ds.is_log:
        notes += log_notes(frame, ds)
    hint = weight_hint(frame, ds)
    notes += degenerate_notes(frame, ds)
    first, reading = _reading(frame, ds, hint, inferred)
    rest = [note for note in (*ds.notes, *notes) if note not in first]
    return Histogram(frame, ds, (*first, *rest), reading)


def _reading(
    frame: pl.DataFrame, ds: Dataset, hint: list[str], inferred: str | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """How the input was read where a likely misreading is possible: the note said first, and the headline's
    sentence. A histogram read one prompt per row (its count column not given as --weight-col); rates read
    as k of n on a grid the data suggested (``inferred``: the note that says so); rates that are all 0 or 1,
    which rows of answers read as prompts would be."""
    total = int(frame["prompts"].sum())
    if hint:
        return (hint[0],), (f"Read as {total:,} prompts, one per row ({hint[1]}).",)
    col = repr(ds.options.col)
    if inferred and ds.grid is not None:
        n, off = ds.grid.n, ds.grid.off
        said = f"{off:,.0f} prompt(s) off that grid read as bare rates" if off else f"all multiples of 1/{n}"
        return (inferred,), (f"Rates read as k right of n = {n} samples ({said}).",)
    p = frame.filter(pl.col("prompts") > 0)["p"].cast(pl.Float64) if "p" in frame.columns else None
    answers = ds.form == "rate" and not ds.is_log and not ds.has_counts and not ds.by and total > 1
    if answers and p is not None and bool(p.is_in([0.0, 1.0]).all()) and p.n_unique() == 2:
        note = (
            f"every pass rate in {col} is 0 or 1: read as {total:,} prompts, one per row; if each row is one "
            f"answer, read them as a rollout log: --rollouts --prompt-col ID --reward-col {ds.options.col}"
        )
        return (note,), (
            f"Read as {total:,} prompts, one per row, each never or always right (see the note).",
        )
    return (), ()


def log_notes(frame: pl.DataFrame, ds: Dataset) -> list[str]:
    """A rollout log's notes on its prompt keys (:func:`key_notes`, :func:`text_notes`) and its groups
    (:mod:`sigmatool.load.integrity`): a finding of the group checks says its own way out, so the key notes
    do not say a wrong one (sample more where a mask merges the prompts; key by a text that is a rollout's
    own turn or conversation)."""
    trainer = ds.log.trainer if ds.log is not None else None
    key = "" if trainer else ", ".join(repr(c) for c in ds.options.prompt_key)
    checked = log_integrity(ds)
    singles = checked is None or checked.mask is None
    picked = log_selection(ds)
    notes = [] if picked is None else [str(picked)]
    notes += key_notes(frame, ds.by, trainer=trainer, key=key, singles=singles)
    if checked is None:
        return notes + text_notes(ds)
    if not (checked.mixed or checked.per_rollout):
        notes += text_notes(ds)
    who = f"{trainer}: " if trainer else ""
    return notes + checked.notes(who, shared=ds.log is not None)


def text_notes(ds: Dataset) -> list[str]:
    """Whether a rollout log's prompt key tells the prompts apart as their text does (grouping.text_key_notes):
    for ``--rollouts`` against a text column beside the key, for verifiers' ``example_id`` against
    ``prompt``. One more pass over those two columns, only when there is such a column."""
    if ds.log is not None and ds.log.trainer == "verifiers":
        files = [f.path for f in ds.log.files]
        if not all(
            "example_id" in pl.scan_ndjson(f, infer_schema_length=200).collect_schema() for f in files
        ):
            return []
        frames = [pl.scan_ndjson(f, infer_schema_length=None) for f in files]
        fix = (
            "; verifiers: an environment that gives several problems one example_id (a dataset without ids?)"
        )
        return text_key_notes(frames, "example_id", "prompt", fix)
    if ds.log is not None or not ds.options.rollouts:
        return []
    key = ds.options.prompt_col or ""
    text = text_column(source_schema(ds.sources[0])[0].names(), key, ds.by)
    if text is None:
        return []
    if ds.options.engine != "polars":
        from sigmatool.load.engine import engine_key_notes

        return engine_key_notes(ds.options, ds.sources, key, text)
    return text_key_notes([s.scan() for s in ds.sources], key, text)


def degenerate_notes(frame: pl.DataFrame, ds: Dataset) -> list[str]:
    """A note when no answer in the data was ever right, or none ever wrong (with several pass-rate columns,
    in some column): every group is then all wrong (or all right) at every G, which real prompt sets almost
    never give and a broken grader or harness always does."""
    if frame.height == 0 or "p" not in frame.columns:
        return []
    lines = []
    keys = [c for c in ds.by if c == COLUMN]
    parts = frame.partition_by(keys, maintain_order=True, as_dict=True) if keys else {(): frame}
    for key, part in parts.items():
        used = part.filter(pl.col("prompts") > 0)
        if used.height == 0:
            continue
        p = used["p"].cast(pl.Float64)
        where = f"--col {key[0]}: " if keys else ""
        prompts = f"{float(used['prompts'].sum()):,.0f} prompts"
        if bool((p == 0).all()):
            lines.append(
                f"{where}no answer was ever right ({prompts}): every group is all wrong at every G; a grader "
                "or harness that rejects every answer (a broken reward function, answer extraction or "
                "answer format) does this"
            )
        elif bool((p == 1).all()):
            lines.append(
                f"{where}every answer was right ({prompts}): every group is all right at every G; a grader "
                "that accepts every answer (a reward that ignores the answer) does this"
            )
    return lines


# Names a column of prompts per row goes by in a histogram of counts (``sigmatool sql`` writes ``prompts``).
WEIGHT_NAMES = frozenset(
    {"count", "counts", "prompts", "n_prompts", "num_prompts", "prompt_count", "frequency", "freq", "weight"}
)


def weight_hint(frame: pl.DataFrame, ds: Dataset) -> list[str]:
    """A note when the input looks like a histogram read without ``--weight-col``: counts k of n, each
    (k, n) one row, and a column named as a count of prompts (:data:`WEIGHT_NAMES`) holding whole numbers
    ≥ 1 that add up to more than the rows. Read as given, each row is one prompt; the note names the option
    that weighs each row by that column. (Each value once makes the input as small as its histogram, so the
    column is read again at no real cost.)"""
    if (
        ds.options.weight_col
        or ds.is_log
        or not ds.has_counts
        or frame.height < 2
        or frame["rows"].max() != 1
    ):
        return []
    used = set(needed_columns(ds.options))
    try:
        schema = source_schema(ds.sources[0])[0]
    except DataError:
        return []
    wanted = (
        c for c, dtype in schema.items() if c.lower() in WEIGHT_NAMES and c not in used and dtype.is_numeric()
    )
    name = next(wanted, None)
    if name is None:
        return []
    w = pl.col(name).cast(pl.Float64)
    try:
        stats = (
            pl.concat([source.scan().select(w) for source in ds.sources])
            .select(w.sum().alias("total"), (w.is_null() | (w < 1) | (w != w.round(0))).any().alias("odd"))
            .collect()
        )
    except (pl.exceptions.PolarsError, OSError):
        return []
    total = stats["total"].item()
    if stats["odd"].item() or not total or total <= frame.height:
        return []
    return [
        f"each (k, n) is one row, and column {name!r} holds whole numbers ({total:,.0f} in all): if a row "
        f"stands for that many prompts (a histogram), --weight-col {name} weighs it so; as read, each row is "
        f"one prompt ({frame.height:,} prompts)",
        f"if column {name!r} counts prompts, --weight-col {name} reads its {total:,.0f}",
    ]


def list_hint(flagged: pl.DataFrame, ds: Dataset) -> str:
    """A list column holding numbers other than 0/1: maybe one pass rate per step, and how to make rows."""
    if ds.form != "list" or not bool((flagged[PROBLEM] == LIST_VALUE).any()):
        return ""
    source, col = ds.sources[0], ds.options.col or ""
    reader = {"parquet": "read_parquet", "csv": "read_csv", "tsv": "read_csv"}.get(source.fmt, "read_ndjson")
    return (
        f'; if each list holds pass rates (one per step?), one row per element: python -c "import polars as '
        f"pl; pl.{reader}('{source.label}').with_columns(step=pl.int_ranges(pl.col('{col}').list.len()))"
        f".explode('{col}', 'step').write_parquet('rows.parquet')\", then --col {col} --by step"
    )


def _group(ds: Dataset, on_rows: Progress | None) -> pl.DataFrame:
    return group_rows(ds.frame, ds, on_rows)


def _group_aggregations(ds: Dataset) -> list[pl.Expr]:
    """What the checks need of each distinct value: rows, weight statistics, bad and null rewards."""
    aggs = [pl.len().alias("rows")]
    if ds.options.weight_col:
        # A bad weight must be seen even when its value is averaged away: keep min, max and NaN count.
        w = numeric(RAW_W)
        aggs += [
            w.sum().alias("__wsum"),
            w.min().alias("__wmin"),
            w.max().alias("__wmax"),
            w.is_nan().sum().alias("__wnan"),
            (pl.col(RAW_W).is_not_null() & w.is_null()).sum().alias("__wtext"),
            pl.col(RAW_W).is_null().sum().alias("__wnull"),
        ]
    if ds.is_log:
        aggs += [pl.col(BAD_REWARDS).sum(), pl.col(NULL_REWARDS).sum()]
    if ds.form == "list":
        aggs.append(pl.col(UNGRADED).sum())
    return aggs


def finish_group(grouped: pl.DataFrame, ds: Dataset) -> pl.DataFrame:
    """Without a weight column each row weighs 1: its summed weight is its row count."""
    if not ds.options.weight_col:
        grouped = grouped.with_columns(pl.col("rows").cast(pl.Float64).alias("__wsum"))
    return grouped


def suspect_query(frame: pl.LazyFrame, ds: Dataset) -> pl.LazyFrame:
    """``frame`` (rows of a plain dataset) grouped by ``--by`` columns and distinct values, lazily."""
    return frame.group_by([*ds.by, *ds.value_keys]).agg(_group_aggregations(ds))


def group_rows(frame: pl.LazyFrame, ds: Dataset, on_rows: Progress | None) -> pl.DataFrame:
    """``frame`` (rows of ``ds``) grouped by ``--by`` columns and distinct values, with what the checks need."""
    if ds.is_log and ds.raw is not None:
        return finish_group(_log_groups(ds.raw, ds, on_rows), ds)
    return finish_group(aggregate(frame, [*ds.by, *ds.value_keys], _group_aggregations(ds), on_rows), ds)


def _log_groups(raw: pl.LazyFrame, ds: Dataset, on_rows: Progress | None) -> pl.DataFrame:
    """Rollout rows → (k, n) per prompt → grouped by (--by, k, n). A table of every prompt must be held
    once. Under a memory budget polars keeps one pass small (see :mod:`sigmatool.memory`); without one,
    local files are read in ``LOG_PASSES`` passes, each over the prompts whose id hashes to it, so that it
    holds only that share of them. Most logs have only 0/1 rewards: the passes count (k, n) alone, and the
    rows whose reward is not 0/1 are the rows less the n summed over prompts; only when there are some are
    the passes run again to count the bad and the missing rewards per prompt as well."""
    if ds.options.engine != "polars":
        return _engine_groups(raw, ds)
    remote = any(source.remote for source in ds.sources)
    passes = 1 if remote or (budgeted() and honoured(pl.__version__)) else LOG_PASSES
    # A local Parquet file says how many rows it has: counting them costs nothing. Other inputs count
    # them in the same reads as the passes (polars shares the scan between the two queries).
    footer = passes > 1 and all(source.fmt == "parquet" for source in ds.sources)
    grouped, rows = _log_passes(raw, ds, on_rows, passes, flags=False, count=not footer)
    if footer:
        rows = int(raw.select(pl.len()).collect().item())
    counted = int(grouped.select((pl.col(RAW_N).cast(pl.UInt64) * pl.col("rows")).sum()).item() or 0)
    return _log_passes(raw, ds, None, passes, flags=True)[0] if rows != counted else grouped


def _engine_groups(raw: pl.LazyFrame, ds: Dataset) -> pl.DataFrame:
    """:func:`_log_groups` counted by ``--engine`` (:mod:`sigmatool.load.engine`): its histogram in the
    shape, and the types, of polars' own (a prompt without a usable reward counts as k = n = 0 there)."""
    from sigmatool.load import engine

    shape = _log_passes(raw.head(0), ds, None, 1, flags=True)[0]
    hist = engine.histogram(ds.options, ds.sources, raw.collect_schema()[REWARD])
    counted = hist.select(
        *ds.by,
        pl.col("k").fill_null(0).alias(RAW_K),
        pl.col("n").fill_null(0).alias(RAW_N),
        pl.col("prompts").alias("rows"),
        pl.col("bad_rewards").alias(BAD_REWARDS),
        pl.col("null_rewards").alias(NULL_REWARDS),
    )
    return counted.select(shape.columns).cast(shape.schema)


def _log_passes(
    raw: pl.LazyFrame, ds: Dataset, on_rows: Progress | None, passes: int, flags: bool, count: bool = False
) -> tuple[pl.DataFrame, int]:
    """The groups of :func:`_log_groups` (their bad and missing rewards counted only with ``flags``), and
    with ``count`` how many rows the passes read (else 0)."""
    keys, parts, rows_read = [*ds.by, *ds.value_keys], [], 0
    for part in range(passes):
        rows = raw if passes == 1 else raw.filter(pl.col(RAW_ID).hash(LOG_SEED) % passes == part)
        per_prompt = _counting(rows, on_rows).group_by([*ds.by, RAW_ID]).agg(packed_rollout_aggregates(flags))
        counted = per_prompt.select(*ds.by, *unpacked_rollout_columns(flags), pl.lit(1.0).alias(RAW_W))
        # One query: the table of prompts goes straight into the second group-by, never out to Python.
        query = counted.group_by(keys).agg(_group_aggregations(ds))
        if count:
            # One read serves both: polars shares the scan between the two queries.
            grouped, read = pl.collect_all([query, rows.select(pl.len())], engine="streaming")
            parts.append(grouped)
            rows_read += int(read.item())
        else:
            parts.append(query.collect(engine="streaming"))
    if passes == 1:
        return parts[0], rows_read
    # Every aggregate of a log's groups is a count: the passes' groups add up.
    merged = pl.concat(parts).group_by(keys).agg(pl.exclude(keys).sum())
    return merged.cast(parts[0].schema), rows_read


def _flag(grouped: pl.DataFrame, ds: Dataset) -> pl.DataFrame:
    """Mark each distinct value bad (an invalid value or weight) or null (missing)."""
    bad = pl.lit(False)
    # Checks on distinct values use the same expressions as row checks; weight checks use the aggregates.
    for _, check in problems(ds):
        if RAW_W not in check.meta.root_names():
            bad = bad | check.fill_null(False)
    if ds.options.weight_col:
        bad = bad | (pl.col("__wmin") < 0) | (pl.col("__wnan") > 0) | (pl.col("__wtext") > 0)
        bad = bad | pl.col("__wmax").is_infinite().fill_null(False)
    value_null = null_expr(ds, weight=False)  # weight nulls are counted from the aggregates
    return grouped.with_columns(__bad=bad & ~value_null, __null=value_null)


def _raise_bad(flagged: pl.DataFrame, ds: Dataset, reload: Reload) -> None:
    """Second pass, only on failure: a DataError naming each kind of bad value and its first rows."""
    if ds.log is not None:
        raise DataError(describe_bad_rollouts(ds.log))
    if ds.options.engine != "polars":
        from sigmatool.load.engine import bad_rewards

        raise DataError(bad_rewards(ds.options, ds.sources, int(flagged[BAD_REWARDS].sum())))
    text = text_columns(ds)
    if ds.rate_to_counts and RAW_P in flagged.columns:
        off_grid(flagged, ds)
    hint = percent_hint(ds, flagged[RAW_P]) if RAW_P in flagged.columns else list_hint(flagged, ds)
    raise DataError(describe_bad_rows(ds, lambda source: reload(_only(ds, source), text)) + hint)


def _null_notes(flagged: pl.DataFrame, ds: Dataset) -> list[str]:
    """What was skipped as missing: null values, NaN read as not measured, ungraded list elements."""
    opts = ds.options
    if ds.is_log:
        n_null = int(flagged[NULL_REWARDS].sum())
        return [f"skipped {n_null:,} rollout row(s) with a null reward"] if n_null else []
    notes = []
    nulls = flagged.filter(pl.col("__null") & ~pl.col("__bad"))
    if opts.nan_missing and ds.form == "rate":
        nan = rate_value(ds).is_nan().fill_null(False)
        n_nan = int(nulls.filter(nan)["rows"].sum())
        nulls = nulls.filter(~nan)
        if n_nan:
            notes.append(f"skipped {n_nan:,} row(s) with NaN in {opts.col!r} (--nan-missing: not measured)")
    n_null = int(nulls["rows"].sum())
    if n_null:
        what = f"{opts.k_col!r}/{opts.n_col!r}" if opts.k_col else repr(opts.col)
        notes.insert(0, f"skipped {n_null:,} row(s) with a null {what}")
    if ds.form == "list":
        ungraded = int(flagged.filter(~pl.col("__bad") & ~pl.col("__null"))[UNGRADED].sum())
        if ungraded:
            notes.append(
                f"left out {ungraded:,} ungraded (null) answer(s) inside the lists of {opts.col!r}: "
                "counted in neither k nor n"
            )
    return notes


def check_rows(grouped: pl.DataFrame, ds: Dataset, reload: Reload) -> list[str]:
    """Check grouped rows (raise on bad values unless skipped); notes on what was skipped."""
    return _count_notes(_flag(grouped, ds), ds, reload)


def _count_notes(flagged: pl.DataFrame, ds: Dataset, reload: Reload) -> list[str]:
    """Raise on bad values (unless skipped); notes on what was skipped."""
    opts = ds.options
    notes: list[str] = []
    n_bad = int(flagged[BAD_REWARDS].sum() if ds.is_log else flagged.filter(pl.col("__bad"))["rows"].sum())
    if n_bad:
        if not opts.skip_invalid:
            _raise_bad(flagged, ds, reload)
        notes.append(f"skipped {n_bad:,} row(s) with an invalid value (--skip-invalid)")
    notes += _null_notes(flagged, ds)
    if opts.weight_col:
        n_wnull = int(flagged.filter(~pl.col("__bad") & ~pl.col("__null"))["__wnull"].sum())
        if n_wnull:
            notes.append(f"skipped {n_wnull:,} row(s) with a null {opts.weight_col!r}")
    return notes


def _only(ds: Dataset, source: object) -> Dataset:
    return replace(ds, sources=tuple(s for s in ds.sources if s == source))


def _counted_on_grid(frame: pl.DataFrame, ds: Dataset) -> pl.DataFrame:
    """The checked histogram of a rate column (``frame``: --by, ``p`` the rate as read, ``prompts``, ``rows``)
    read on its grid (:class:`~sigmatool.load.dataset.Grid`): k = p × n rounded and n on it, null off it;
    p = k/n on it. Rates that the grid reads as one count (``k / n`` and ``k * (1 / n)``) are merged, as a
    second check of the raw rows with their counts would merge them; its columns and order are that check's.
    On 10^7 rates in 200,000 --by groups that check took about 1.9 s of the histogram's 4.9 s."""
    assert ds.grid is not None
    k, n = ds.grid.counts(pl.col("p"))  # the grid's own reading of a rate, as of the raw rows
    counted = frame.with_columns(k.cast(pl.Int64).alias("k"), n.cast(pl.Int64).alias("n")).with_columns(
        pl.coalesce(pl.col("k") / pl.col("n"), pl.col("p")).alias("p")
    )
    values = pl.Series(ds.grid.values, dtype=pl.Float64)
    if (values * ds.grid.n).round(0).n_unique() < values.len():  # two stored rates are one k of n: merge them
        counted = counted.group_by([*ds.by, "k", "n", "p"]).agg(pl.col("prompts").sum(), pl.col("rows").sum())
    out = counted.select([*ds.by, "k", "n", "p", "prompts", "rows"])
    return out.sort([*ds.by, "p", "k", "n"])


def _check(grouped: pl.DataFrame, ds: Dataset, reload: Reload) -> tuple[pl.DataFrame, list[str]]:
    flagged = _flag(grouped, ds)
    notes = _count_notes(flagged, ds, reload)
    usable = flagged.filter(~pl.col("__bad") & ~pl.col("__null"))
    if usable.height == 0 or float(usable["__wsum"].sum()) <= 0:
        raise DataError("no usable prompts in the input (every row was empty, null or skipped)")
    value_cols = [k_expr(ds), n_expr(ds), p_expr(ds)] if ds.has_counts else [p_expr(ds)]
    names = [e.meta.output_name() for e in value_cols]
    out = usable.with_columns(value_cols).rename({"__wsum": "prompts"})
    if grouped.schema[ds.value_keys[0]] != pl.Float64 or len(ds.value_keys) > 1:
        # Several raw forms can give one value (text "0.50" and "0.5"; a rate and its counts): merge them.
        # A float rate column is its own canonical value and needs no second grouping.
        out = out.group_by([*ds.by, *names]).agg(pl.col("prompts").sum(), pl.col("rows").sum())
    out = out.select([*ds.by, *names, "prompts", "rows"]).filter(pl.col("prompts") > 0)
    top = out["prompts"].max()
    if (out["prompts"] == out["prompts"].round(0)).all() and isinstance(top, float) and top < 2**53:
        out = out.with_columns(pl.col("prompts").cast(pl.Int64))  # whole-prompt weights print as integers
    return out.sort([*ds.by, "p", *(["k", "n"] if ds.has_counts else [])]), notes

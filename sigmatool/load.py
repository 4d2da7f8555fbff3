"""Any difficulty dataset into one checked, lazy shape.

Inputs are per-prompt pass rates, k-of-n counts, or raw rollout rows. Every command works on a
:class:`Dataset`: a polars ``LazyFrame`` whose value columns are still raw, plus expressions that turn them
into the canonical ``p``, ``k``, ``n`` and ``weight``. Nothing is read until an analysis asks for the
histogram of distinct values (one streaming pass) or streams per-prompt rows to an output.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import IO, Literal

import polars as pl

from sigmatool.errors import DataError, UsageError

InputFormat = Literal["csv", "tsv", "parquet", "jsonl", "json"]
INPUT_FORMATS: tuple[str, ...] = ("csv", "tsv", "parquet", "jsonl", "json")
RATE_NAMES = ("pass_rate", "solve_rate", "pass@1", "accuracy")
RATE_SUFFIXES = ("solve_rate", "pass_rate")
RESERVED = ("p", "k", "n", "weight", "id", "G", "segment")
SAMPLE_NAME = "bigmath_solve_rates.parquet"
SAMPLE_ROWS = 215_608
# Internal names of the raw value columns, chosen not to clash with user columns.
RAW_P, RAW_K, RAW_N, RAW_W, RAW_ID, ROW = "__rate", "__k", "__n", "__w", "__id", "__row"
INTEGER_TOLERANCE = 1e-6
MAX_ROWS_NAMED = 5


def bundled_sample() -> Path:
    """Path of the Big-Math solve-rate sample shipped inside the package."""
    return Path(str(resources.files("sigmatool") / "data" / SAMPLE_NAME))


@dataclass(frozen=True)
class InputOptions:
    """Everything the user said about how to read the data."""

    paths: tuple[str, ...] = ()
    input_format: str | None = None
    col: str | None = None
    k_col: str | None = None
    n_col: str | None = None
    samples: int | None = None
    rollouts: bool = False
    prompt_col: str | None = None
    reward_col: str | None = None
    threshold: float | None = None
    weight_col: str | None = None
    by: tuple[str, ...] = ()
    id_col: str | None = None
    skip_invalid: bool = False


@dataclass(frozen=True)
class Source:
    """One input file (or stdin spooled to a file) and how to scan it."""

    path: str
    fmt: str
    label: str

    def scan(self, string_cols: Sequence[str] = ()) -> pl.LazyFrame:
        """Lazy scan; ``string_cols`` are read as text so that bad values can be found by row."""
        overrides = dict.fromkeys(string_cols, pl.String)
        try:
            if self.fmt in ("csv", "tsv"):
                return pl.scan_csv(
                    self.path,
                    separator="\t" if self.fmt == "tsv" else ",",
                    infer_schema_length=10_000,
                    schema_overrides=overrides or None,
                    glob=False,
                )
            if self.fmt == "parquet":
                return pl.scan_parquet(self.path, glob=False)
            if self.fmt == "jsonl":
                return pl.scan_ndjson(
                    self.path, infer_schema_length=10_000, schema_overrides=overrides or None
                )
            return _read_json_array(self.path)
        except pl.exceptions.NoDataError as exc:
            raise DataError(f"{self.label}: the file is empty") from exc
        except (pl.exceptions.ComputeError, OSError) as exc:
            raise DataError(f"{self.label}: cannot read it as {self.fmt}: {_first_line(exc)}") from exc


def _read_json_array(path: str) -> pl.LazyFrame:
    with open(path, "rb") as handle:
        head = handle.read(4096).lstrip()
    if not head:
        raise pl.exceptions.NoDataError("empty")
    if not head.startswith(b"["):
        return pl.scan_ndjson(path, infer_schema_length=10_000)
    return pl.read_json(path, infer_schema_length=10_000).lazy()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _is_remote(path: str) -> bool:
    return "://" in path


def _format_of(path: str, explicit: str | None) -> str:
    if explicit:
        return explicit
    name = path.lower()
    for suffix in (".gz", ".zst", ".zstd"):
        name = name.removesuffix(suffix)
    for ext, fmt in (
        (".parquet", "parquet"),
        (".pq", "parquet"),
        (".csv", "csv"),
        (".tsv", "tsv"),
        (".tab", "tsv"),
        (".jsonl", "jsonl"),
        (".ndjson", "jsonl"),
        (".json", "json"),
    ):
        if name.endswith(ext):
            return fmt
    raise UsageError(
        f"cannot tell the format of {path!r} from its extension; "
        f"pass --input-format ({'|'.join(INPUT_FORMATS)})"
    )


_spooled: list[str] = []


def _cleanup_spooled() -> None:
    for path in _spooled:
        with contextlib.suppress(OSError):
            os.unlink(path)


atexit.register(_cleanup_spooled)


def _spool_stdin(stream: IO[bytes], first: bytes) -> str:
    """Copy stdin to a temporary file in chunks, so it can be scanned lazily like any file."""
    handle = tempfile.NamedTemporaryFile(prefix="sigmatool-stdin-", delete=False)  # noqa: SIM115
    _spooled.append(handle.name)
    with handle:
        handle.write(first)
        shutil.copyfileobj(stream, handle, length=1 << 20)
    return handle.name


def resolve_sources(options: InputOptions, notes: list[str]) -> list[Source]:
    """Turn DATA arguments (paths, globs, ``-``, nothing) into sources."""
    stdin_fmt = options.input_format or "csv"
    paths = list(options.paths)
    if not paths:
        stream = sys.stdin
        if stream is not None and not stream.isatty():
            buffer = getattr(stream, "buffer", None)
            first = buffer.read(1 << 16) if buffer is not None else stream.read(1 << 16).encode()
            if first:
                assert buffer is not None
                return [Source(_spool_stdin(buffer, first), stdin_fmt, "<stdin>")]
        notes.append(
            f"no DATA given: reading the bundled Big-Math sample ({SAMPLE_ROWS:,} prompts, "
            "llama8b_solve_rate); pass a file or pipe one in to analyse your own data"
        )
        return [Source(str(bundled_sample()), "parquet", "<bundled Big-Math sample>")]
    sources: list[Source] = []
    for arg in paths:
        if arg == "-":
            buffer = sys.stdin.buffer
            sources.append(Source(_spool_stdin(buffer, b""), stdin_fmt, "<stdin>"))
            continue
        if _is_remote(arg):
            sources.append(Source(arg, _format_of(arg, options.input_format), arg))
            continue
        matches = sorted(glob.glob(arg)) if glob.has_magic(arg) else [arg]
        if not matches:
            raise DataError(f"{arg}: no file matches this pattern")
        for match in matches:
            if not os.path.exists(match):
                raise DataError(f"{match}: no such file")
            if os.path.isdir(match):
                raise DataError(f"{match}: is a folder; give the files in it, e.g. '{match}/*.parquet'")
            sources.append(Source(match, _format_of(match, options.input_format), match))
    return sources


@dataclass
class Dataset:
    """A checked, lazy difficulty dataset.

    ``frame`` has the ``--by`` columns, ``__id`` (for per-prompt output) and the raw value columns
    ``__rate`` or ``__k``/``__n``, plus ``__w`` (weight). The canonical values are the expressions
    :func:`p_expr`, :func:`k_expr`, :func:`n_expr`, :func:`weight_expr`.
    """

    frame: pl.LazyFrame
    sources: list[Source]
    options: InputOptions
    has_counts: bool
    notes: list[str] = field(default_factory=list)
    string_cols: tuple[str, ...] = ()
    raw: pl.LazyFrame | None = None  # rollouts: the rows before aggregation (else the same as frame)

    @property
    def by(self) -> tuple[str, ...]:
        return self.options.by

    @property
    def value_keys(self) -> list[str]:
        """Raw columns whose distinct values determine every per-prompt quantity and its checks."""
        if self.options.samples is not None:
            return [RAW_P, RAW_K, RAW_N]
        return [RAW_K, RAW_N] if self.has_counts else [RAW_P]


def _numeric(col: str) -> pl.Expr:
    """A raw column as Float64: text that is not a number becomes null (and is caught as invalid)."""
    return pl.col(col).cast(pl.Float64, strict=False)


def p_expr(ds: Dataset) -> pl.Expr:
    """The pass rate p̂: the rate column, or k/n."""
    if ds.has_counts:
        return (k_expr(ds) / n_expr(ds)).alias("p")
    return _numeric(RAW_P).alias("p")


def k_expr(ds: Dataset) -> pl.Expr:
    if not ds.has_counts:
        raise UsageError("this needs counts: give --k-col and --n-col, --samples N, or --rollouts")
    return _numeric(RAW_K).round(0).cast(pl.Int64).alias("k")


def n_expr(ds: Dataset) -> pl.Expr:
    if not ds.has_counts:
        raise UsageError("this needs counts: give --k-col and --n-col, --samples N, or --rollouts")
    return _numeric(RAW_N).round(0).cast(pl.Int64).alias("n")


def weight_expr() -> pl.Expr:
    return _numeric(RAW_W).alias("weight")


def _problems(ds: Dataset) -> list[tuple[str, pl.Expr]]:
    """(description, expression true on a bad row) for each kind of bad value, in the order reported."""
    opts = ds.options
    checks: list[tuple[str, pl.Expr]] = []
    if opts.rollouts:
        # Rewards are checked row by row while aggregating (see _reward_problems).
        return checks
    if ds.has_counts and opts.samples is None:
        k = _numeric(RAW_K)
        n = _numeric(RAW_N)
        for name, raw, value in ((opts.k_col, RAW_K, k), (opts.n_col, RAW_N, n)):
            checks.append((f"column {name!r}: not a number", pl.col(raw).is_not_null() & value.is_null()))
            checks.append(
                (
                    f"column {name!r}: not a whole number ≥ 0",
                    value.is_nan() | (value < 0) | ((value - value.round(0)).abs() > INTEGER_TOLERANCE),
                )
            )
        checks.append((f"column {opts.n_col!r}: n must be at least 1", n < 1))
        checks.append((f"columns {opts.k_col!r}, {opts.n_col!r}: k is larger than n", k > n))
    else:
        rate = _numeric(RAW_P)
        checks.append((f"column {opts.col!r}: not a number", pl.col(RAW_P).is_not_null() & rate.is_null()))
        checks.append((f"column {opts.col!r}: NaN is not a pass rate", rate.is_nan()))
        checks.append(
            (f"column {opts.col!r}: pass rate outside [0, 1]", ~rate.is_nan() & ((rate < 0) | (rate > 1)))
        )
        if opts.samples is not None:
            scaled = rate * opts.samples
            checks.append(
                (
                    f"column {opts.col!r}: rate × {opts.samples} (--samples) is not a whole number",
                    ~rate.is_nan() & ((scaled - scaled.round(0)).abs() > INTEGER_TOLERANCE),
                )
            )
    if opts.weight_col:
        w = _numeric(RAW_W)
        checks.append(
            (f"column {opts.weight_col!r}: weight is not a number", pl.col(RAW_W).is_not_null() & w.is_null())
        )
        checks.append(
            (
                f"column {opts.weight_col!r}: weight must be a finite number ≥ 0",
                w.is_nan() | w.is_infinite() | (w < 0),
            )
        )
    return checks


def _null_expr(ds: Dataset, *, weight: bool = True) -> pl.Expr:
    """Rows skipped as missing (and counted): a null pass rate, count or (with ``weight``) weight; for
    rollouts also a prompt with no graded reward."""
    cols = [RAW_K, RAW_N] if ds.has_counts else [RAW_P]
    if weight and ds.options.weight_col:
        cols.append(RAW_W)
    expr = pl.col(RAW_N) == 0 if ds.options.rollouts else pl.lit(False)
    for col in cols:
        expr = expr | pl.col(col).is_null()
    return expr


def usable_expr(ds: Dataset) -> pl.Expr:
    """Rows that take part in the analysis: nothing missing and no bad value."""
    bad = pl.lit(False)
    for _, check in _problems(ds):
        bad = bad | check.fill_null(False)
    return ~_null_expr(ds) & ~bad


# --------------------------------------------------------------------------------------------- loading


def _pick_rate_column(schema: pl.Schema, label: str) -> str:
    names = list(schema.names())
    candidates = [
        c for c in names if c.lower() in RATE_NAMES or any(c.lower().endswith(s) for s in RATE_SUFFIXES)
    ]
    if len(candidates) == 1:
        return candidates[0]
    numeric = [c for c, dtype in schema.items() if dtype.is_numeric()]
    listing = ", ".join(numeric) if numeric else "none"
    if not candidates:
        raise DataError(
            f"{label}: no pass-rate column found (looked for {', '.join(RATE_NAMES)} or a name ending in "
            f"solve_rate/pass_rate); pick one with --col, or give --k-col/--n-col. Numeric columns: {listing}"
        )
    raise DataError(
        f"{label}: several pass-rate columns ({', '.join(candidates)}); pick one with --col. "
        f"Numeric columns: {listing}"
    )


def _check_options(opts: InputOptions) -> None:
    if opts.rollouts:
        if not opts.prompt_col or not opts.reward_col:
            raise UsageError("--rollouts needs --prompt-col and --reward-col")
        if opts.col or opts.k_col or opts.n_col or opts.samples is not None:
            raise UsageError("--rollouts cannot be combined with --col, --k-col, --n-col or --samples")
        if opts.weight_col:
            raise UsageError("--rollouts rows are single answers: --weight-col does not apply")
    elif opts.prompt_col or opts.reward_col or opts.threshold is not None:
        raise UsageError("--prompt-col, --reward-col and --threshold need --rollouts")
    if bool(opts.k_col) != bool(opts.n_col):
        raise UsageError("--k-col and --n-col go together")
    if opts.k_col and (opts.col or opts.samples is not None):
        raise UsageError("give either --k-col/--n-col or a rate column (--col, --samples), not both")
    if opts.samples is not None and opts.samples < 1:
        raise UsageError("--samples must be at least 1")
    clash = [b for b in opts.by if b in RESERVED]
    if clash:
        raise UsageError(f"--by column name(s) {', '.join(clash)} clash with output columns; rename them")


def _needed(opts: InputOptions, rate_col: str | None) -> list[str]:
    cols: list[str] = list(opts.by)
    if opts.rollouts:
        cols += [opts.prompt_col or "", opts.reward_col or ""]
    elif opts.k_col:
        cols += [opts.k_col, opts.n_col or ""]
    elif rate_col:
        cols.append(rate_col)
    for extra in (opts.weight_col, opts.id_col):
        if extra:
            cols.append(extra)
    return list(dict.fromkeys(cols))


def _schema(source: Source, lf: pl.LazyFrame) -> pl.Schema:
    try:
        return lf.collect_schema()
    except pl.exceptions.NoDataError as exc:
        raise DataError(f"{source.label}: the file is empty") from exc
    except (pl.exceptions.ComputeError, OSError) as exc:
        raise DataError(f"{source.label}: cannot read it as {source.fmt}: {_first_line(exc)}") from exc


def _project(
    source: Source, opts: InputOptions, rate_col: str | None, string_cols: Sequence[str]
) -> pl.LazyFrame:
    """Scan one source and rename its columns to the internal names."""
    lf = source.scan(string_cols)
    schema = _schema(source, lf)
    needed = _needed(opts, rate_col)
    missing = [c for c in needed if c not in schema]
    if missing:
        raise DataError(
            f"{source.label}: missing column(s) {', '.join(repr(m) for m in missing)}; "
            f"the columns are: {', '.join(schema.names())}"
        )
    exprs: list[pl.Expr] = [pl.col(b) for b in opts.by]
    lf = lf.with_row_index(ROW, offset=1)
    exprs.append(pl.col(ROW))
    if opts.rollouts:
        exprs += [
            pl.col(opts.prompt_col or "").alias(RAW_ID),
            pl.col(opts.reward_col or "").alias("__reward"),
        ]
    else:
        exprs.append(pl.col(opts.id_col).alias(RAW_ID) if opts.id_col else pl.col(ROW).alias(RAW_ID))
        if opts.k_col:
            exprs += [pl.col(opts.k_col).alias(RAW_K), pl.col(opts.n_col or "").alias(RAW_N)]
        else:
            exprs.append(pl.col(rate_col or "").alias(RAW_P))
        exprs.append(pl.col(opts.weight_col).alias(RAW_W) if opts.weight_col else pl.lit(1.0).alias(RAW_W))
    return lf.select(exprs)


def _reward_flags(opts: InputOptions, dtype: pl.DataType) -> tuple[pl.Expr, pl.Expr]:
    """(right, usable) for one rollout row's reward, both false on a null; bad = present and not usable."""
    reward = pl.col("__reward")
    if dtype == pl.Boolean:
        return reward.fill_null(False), reward.is_not_null()
    # Numbers are compared in their own dtype (no cast per row); text is parsed and mostly fails.
    value = reward if dtype.is_numeric() else reward.cast(pl.Float64, strict=False)
    if opts.threshold is not None:
        usable = value.is_not_null() & ~value.cast(pl.Float64).is_nan()
        return (value >= opts.threshold).fill_null(False) & usable, usable
    return (value == 1).fill_null(False), ((value == 0) | (value == 1)).fill_null(False)


def _rollout_rows(lf: pl.LazyFrame, opts: InputOptions, reward_dtype: pl.DataType) -> pl.LazyFrame:
    """Raw rollout rows with two flags: the answer is right; the reward is usable (0/1, or a number with
    --threshold). A present but unusable reward is bad; a null one is skipped."""
    right, usable = _reward_flags(opts, reward_dtype)
    return lf.with_columns(__right=right, __usable=usable)


def _rollout_aggregates() -> list[pl.Expr]:
    """Per-prompt aggregates of rollout rows."""
    return [
        pl.col("__right").sum().alias(RAW_K),
        pl.col("__usable").sum().alias(RAW_N),
        (pl.col("__reward").is_not_null() & ~pl.col("__usable")).sum().alias("__bad_rewards"),
        pl.col("__reward").null_count().alias("__null_rewards"),
    ]


def _aggregate_rollouts(rows: pl.LazyFrame, opts: InputOptions) -> pl.LazyFrame:
    """(k, n) per prompt, lazily: what per-prompt output streams from."""
    return rows.group_by([*opts.by, RAW_ID]).agg(_rollout_aggregates()).with_columns(pl.lit(1.0).alias(RAW_W))


def load(
    options: InputOptions, string_cols: Sequence[str] = (), sources: Sequence[Source] | None = None
) -> Dataset:
    """Resolve, scan and check the columns of the input. Reads schemas only, never the data."""
    _check_options(options)
    notes: list[str] = []
    # Re-reads (to find bad rows, or to read a column as text) reuse the resolved sources: stdin is read once.
    sources = list(sources) if sources is not None else resolve_sources(options, notes)
    rate_col = options.col
    if not options.rollouts and not options.k_col and rate_col is None:
        first = sources[0]
        rate_col = _pick_rate_column(_schema(first, first.scan(string_cols)), first.label)
        if first.path != str(bundled_sample()):
            notes.append(f"using pass-rate column {rate_col!r}")
    opts = replace(options, col=rate_col)
    frames = [_project(s, opts, rate_col, string_cols) for s in sources]
    try:
        frame = pl.concat(frames, how="vertical_relaxed") if len(frames) > 1 else frames[0]
    except pl.exceptions.PolarsError as exc:
        raise DataError(f"the input files do not share one schema: {_first_line(exc)}") from exc
    has_counts = opts.rollouts or bool(opts.k_col) or opts.samples is not None
    raw = frame
    if opts.rollouts:
        raw = _rollout_rows(frame, opts, frame.collect_schema()["__reward"])
        frame = _aggregate_rollouts(raw, opts)
    elif opts.samples is not None:
        scaled = (_numeric(RAW_P) * opts.samples).round(0)
        frame = frame.with_columns(scaled.alias(RAW_K), pl.lit(float(opts.samples)).alias(RAW_N))
    return Dataset(frame, sources, opts, has_counts, notes, tuple(string_cols), raw)


# --------------------------------------------------------------------------------------------- histogram


Progress = Callable[[int], None]


def _read_error(exc: pl.exceptions.PolarsError, ds: Dataset) -> Exception:
    text = str(exc)
    if isinstance(exc, pl.exceptions.ComputeError) and "could not parse" in text and not ds.string_cols:
        return _TextInColumnError(text)
    return DataError(f"cannot read the input: {_first_line(exc)}")


def aggregate(
    lf: pl.LazyFrame,
    keys: Sequence[str],
    aggs: Sequence[pl.Expr],
    ds: Dataset,
    on_rows: Progress | None = None,
) -> pl.DataFrame:
    """Group ``lf`` by ``keys`` in one streaming pass; memory holds the distinct keys, never the rows.

    ``on_rows`` (for a progress display) is called with the size of each batch of input rows as it passes;
    it may be called from several threads.
    """
    if on_rows is not None:
        report = on_rows

        def count(batch: pl.DataFrame) -> pl.DataFrame:
            report(batch.height)
            return batch

        lf = lf.map_batches(count, streamable=True)
    try:
        return lf.group_by(keys).agg(aggs).collect(engine="streaming")
    except pl.exceptions.PolarsError as exc:
        raise _read_error(exc, ds) from exc


class _TextInColumnError(Exception):
    """A CSV/JSON column held text past the rows used to guess its type; read it again as text."""


def _text_columns(ds: Dataset) -> tuple[str, ...]:
    opts = ds.options
    cols = [opts.k_col, opts.n_col] if opts.k_col else [opts.col]
    if opts.rollouts:
        cols = [opts.reward_col]
    cols.append(opts.weight_col)
    return tuple(c for c in cols if c)


def row_count(ds: Dataset) -> int | None:
    """Input rows, when the files say so without being read (parquet metadata); else None."""
    if not all(source.fmt == "parquet" and not _is_remote(source.path) for source in ds.sources):
        return None
    try:
        return sum(int(pl.scan_parquet(s.path).select(pl.len()).collect().item()) for s in ds.sources)
    except pl.exceptions.PolarsError:
        return None


def histogram(ds: Dataset, on_rows: Progress | None = None) -> tuple[pl.DataFrame, Dataset]:
    """One streaming pass: usable rows grouped by ``--by`` columns and distinct values.

    Returns a frame with the ``--by`` columns, ``p`` (and ``k``, ``n`` with counts), ``prompts`` (summed
    weight) and ``rows``; plus the dataset that produced it (re-read with text columns if needed).
    Bad values raise :class:`DataError` naming the column and first rows, unless ``--skip-invalid``.
    ``on_rows`` is called with the number of input rows read, batch by batch (for a progress display).
    """
    try:
        return _histogram(ds, on_rows), ds
    except _TextInColumnError:
        # A CSV or JSON column held text past the rows polars used to guess its type: read the value
        # columns as text this time, so that the bad values are found and named by row.
        ds = load(ds.options, _text_columns(ds), ds.sources)
        return _histogram(ds, on_rows), ds


def _histogram(ds: Dataset, on_rows: Progress | None) -> pl.DataFrame:
    if ds.options.rollouts and ds.raw is not None:
        # Rollout rows → (k, n) per prompt in one pass; the per-prompt table then fits in memory.
        per_prompt = aggregate(ds.raw, [*ds.by, RAW_ID], _rollout_aggregates(), ds, on_rows)
        frame, on_rows = per_prompt.lazy().with_columns(pl.lit(1.0).alias(RAW_W)), None
    else:
        frame = ds.frame
    aggs = [pl.len().alias("rows")]
    if ds.options.weight_col:
        # A bad weight must be seen even when its value is averaged away: keep min, max and NaN count.
        w = _numeric(RAW_W)
        aggs += [
            w.sum().alias("__wsum"),
            w.min().alias("__wmin"),
            w.max().alias("__wmax"),
            w.is_nan().sum().alias("__wnan"),
            (pl.col(RAW_W).is_not_null() & w.is_null()).sum().alias("__wtext"),
            pl.col(RAW_W).is_null().sum().alias("__wnull"),
        ]
    if ds.options.rollouts:
        aggs += [pl.col("__bad_rewards").sum(), pl.col("__null_rewards").sum()]
    grouped = aggregate(frame, [*ds.by, *ds.value_keys], aggs, ds, on_rows)
    if not ds.options.weight_col:
        grouped = grouped.with_columns(pl.col("rows").cast(pl.Float64).alias("__wsum"))
    return _check_histogram(grouped, ds)


def _check_histogram(grouped: pl.DataFrame, ds: Dataset) -> pl.DataFrame:
    opts = ds.options
    # Checks on distinct values use the same expressions as row checks; weight checks use the aggregates.
    bad = pl.lit(False)
    for _, check in _problems(ds):
        if RAW_W not in check.meta.root_names():
            bad = bad | check.fill_null(False)
    if opts.weight_col:
        bad = bad | (pl.col("__wmin") < 0) | (pl.col("__wnan") > 0) | (pl.col("__wtext") > 0)
        bad = bad | pl.col("__wmax").is_infinite().fill_null(False)
    # Weights are aggregated, so their nulls are counted from the aggregates below.
    value_null = _null_expr(ds, weight=False)
    flagged = grouped.with_columns(__bad=bad & ~value_null, __null=value_null)
    n_bad = int(flagged.filter(pl.col("__bad"))["rows"].sum())
    if opts.rollouts:
        # Bad reward rows were left out of k and n while aggregating; the prompt itself stays.
        n_bad = int(flagged["__bad_rewards"].sum())
    if n_bad:
        if not opts.skip_invalid:
            raise DataError(_describe_bad_rows(ds))
        ds.notes.append(f"skipped {n_bad:,} row(s) with an invalid value (--skip-invalid)")
    n_null = int(flagged.filter(pl.col("__null") & ~pl.col("__bad"))["rows"].sum())
    if opts.rollouts:
        n_null_rewards = int(flagged["__null_rewards"].sum())
        if n_null_rewards:
            ds.notes.append(f"skipped {n_null_rewards:,} rollout row(s) with a null reward")
    elif n_null:
        what = f"{opts.k_col!r}/{opts.n_col!r}" if opts.k_col else repr(opts.col)
        ds.notes.append(f"skipped {n_null:,} row(s) with a null {what}")
    usable = flagged.filter(~pl.col("__bad") & ~pl.col("__null"))
    if opts.weight_col:
        n_wnull = int(usable["__wnull"].sum())
        if n_wnull:
            ds.notes.append(f"skipped {n_wnull:,} row(s) with a null {opts.weight_col!r}")
    if usable.height == 0 or float(usable["__wsum"].sum()) <= 0:
        raise DataError("no usable prompts in the input (every row was empty, null or skipped)")
    value_cols = [p_expr(ds)]
    if ds.has_counts:
        value_cols = [k_expr(ds), n_expr(ds), p_expr(ds)]
    out = usable.with_columns(value_cols).rename({"__wsum": "prompts"})
    if grouped.schema[ds.value_keys[0]] != pl.Float64 or len(ds.value_keys) > 1:
        # Several raw forms can give one value (text "0.50" and "0.5"; k/n pairs and samples): merge them.
        # A float rate column is its own canonical value and needs no second grouping.
        out = out.group_by([*ds.by, *[e.meta.output_name() for e in value_cols]]).agg(
            pl.col("prompts").sum(), pl.col("rows").sum()
        )
    out = out.select([*ds.by, *[e.meta.output_name() for e in value_cols], "prompts", "rows"]).filter(
        pl.col("prompts") > 0
    )
    if (out["prompts"] == out["prompts"].round(0)).all() and float(out["prompts"].max()) < 2**53:  # type: ignore[arg-type]
        # Whole-prompt weights (the usual case) print as whole numbers.
        out = out.with_columns(pl.col("prompts").cast(pl.Int64))
    return out.sort([*ds.by, "p", *(["k", "n"] if ds.has_counts else [])])


def _describe_bad_rows(ds: Dataset) -> str:
    """Second pass, only on failure: name each kind of problem with its first offending rows."""
    found: list[str] = []
    for source in ds.sources:
        single = load(ds.options, _text_columns(ds), [source])
        if ds.options.rollouts:
            assert single.raw is not None
            frame, problems = single.raw, _reward_problems(single)
        else:
            frame, problems = single.frame, _problems(single)
        for problem, check in problems:
            rows = frame.filter(check.fill_null(False)).select(ROW).head(MAX_ROWS_NAMED).collect()
            if rows.height:
                listed = ", ".join(str(r) for r in rows[ROW].to_list())
                more = " and more" if rows.height == MAX_ROWS_NAMED else ""
                plural = "s" if rows.height > 1 else ""
                found.append(f"{problem} at row{plural} {listed}{more}")
        if found:
            return f"{source.label}: " + "; ".join(found) + " (--skip-invalid skips such rows)"
    return "the input has invalid values (--skip-invalid skips such rows)"


def _reward_problems(ds: Dataset) -> list[tuple[str, pl.Expr]]:
    """Bad rewards by kind, on the rows of ``_rollout_rows``: the same ``__usable`` flag that aggregation
    counts, split into text and other values."""
    name = ds.options.reward_col
    reward = pl.col("__reward")
    text = reward.is_not_null() & reward.cast(pl.Float64, strict=False).is_null()
    bad = reward.is_not_null() & ~pl.col("__usable") & ~text
    if ds.options.threshold is not None:
        return [(f"column {name!r}: reward is not a number", text), (f"column {name!r}: NaN reward", bad)]
    return [
        (f"column {name!r}: reward is not a number", text),
        (
            f"column {name!r}: reward is not 0/1 (the identity holds for binary rewards; "
            "--threshold T counts reward ≥ T as right)",
            bad,
        ),
    ]


def per_prompt_frame(ds: Dataset) -> pl.LazyFrame:
    """Usable rows, one per prompt: ``--by`` columns, ``id``, ``p`` (and ``k``, ``n``), ``weight``."""
    cols = [*[pl.col(b) for b in ds.by], pl.col(RAW_ID).alias("id")]
    if ds.has_counts:
        cols += [k_expr(ds), n_expr(ds)]
    cols += [p_expr(ds), weight_expr()]
    return ds.frame.filter(usable_expr(ds)).select(cols)

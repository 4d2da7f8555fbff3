"""``--engine duckdb|spark``: a ``--rollouts`` log reduced to its counts where it lives.

The reduction is the query that ``sigmatool sql`` prints (:mod:`sigmatool.sql`), run inside DuckDB or Spark:
the (k, n) histogram per ``--by`` group for ``silent``, ``budget``, ``groupsize``, ``plan``, ``preflight`` and
``report``, and for ``track`` its per-prompt part (k, n per step and prompt), since a run followed step by step
needs each prompt's identity. Only that small result comes back, as a polars frame, and takes the place of
polars' own reduction: every later step (checks, notes, estimators, output) is the same code, so the output
is the same to the last digit.

Where the log is: the files given as DATA (parquet, CSV/TSV, JSON lines or a JSON array; Hive ``name=value``
folders are columns, as polars reads them), or ``--table`` (Spark: a table of its catalog; DuckDB: a table
of the database file given as DATA). A table's columns are read as an empty frame of its schema, written to
a temporary parquet file, so that every column check is the one a file gets.

Spark is reached through Spark Connect (``--spark-remote sc://host:port``, else ``$SPARK_REMOTE``), or a
local session when neither is set (which needs Java). DuckDB runs in this process.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from sigmatool.errors import DataError, UsageError, first_line
from sigmatool.load.grouping import KeyTexts, key_texts_notes
from sigmatool.options import InputOptions, SqlOptions


class Source(Protocol):
    """What the engines read of a :class:`sigmatool.load.sources.Source`."""

    @property
    def path(self) -> str: ...

    @property
    def fmt(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def separator(self) -> str: ...

    @property
    def remote(self) -> bool: ...

    @property
    def partitions(self) -> dict[str, int | float | str | None]: ...


VIEW = "sigmatool_rollouts"
SPARK_HINT = "pip install 'sigmatool[spark]'"
DUCKDB_HINT = "pip install 'sigmatool[duckdb]'"
REACH_SECONDS = 5
JAVA_HINT = "a local Spark needs Java 17 (apt-get install -y openjdk-17-jre-headless), or give --spark-remote"


class Engine:
    """One engine's connection: run a query, read a table's schema."""

    name = ""

    def query(self, sql: str) -> pl.DataFrame:  # pragma: no cover - each engine overrides it
        raise NotImplementedError

    def schema(self, table: str) -> pl.DataFrame:  # pragma: no cover
        raise NotImplementedError

    def register(self, sources: Sequence[Source]) -> str:  # pragma: no cover
        raise NotImplementedError

    def close(self) -> None:
        return None

    def failed(self, exc: BaseException, what: str) -> DataError:
        return DataError(f"--engine {self.name}: {what}: {first_line(exc)}")


def connect(options: InputOptions) -> Engine:
    """The engine ``options.engine`` names, connected."""
    return DuckDB(options) if options.engine == "duckdb" else Spark(options)


def table_schema(options: InputOptions) -> pl.DataFrame:
    """``--table``'s columns as an empty frame: what every column check reads, as it reads a file's."""
    engine = connect(options)
    try:
        return engine.schema(options.table or "")
    finally:
        engine.close()


def histogram(options: InputOptions, sources: Sequence[Source], reward: pl.DataType) -> pl.DataFrame:
    """The log's (k, n) histogram per ``--by`` group, counted by the engine: the ``--by`` columns, ``k``,
    ``n`` (null for prompts without a usable reward), ``prompts``, ``bad_rewards``, ``null_rewards``."""
    from sigmatool.sql import histogram_expression

    return _run(options, sources, reward, histogram_expression, options.by, None)


def prompt_counts(
    options: InputOptions, sources: Sequence[Source], reward: pl.DataType, step_col: str
) -> pl.DataFrame:
    """Per step and prompt, counted by the engine: the step column, the prompt column as stored, ``k`` and
    ``n`` (null without a usable reward), ``rejected_rewards``, ``missing_rewards``."""
    from sigmatool.sql import prompt_counts_expression

    return _run(options, sources, reward, prompt_counts_expression, (), step_col)


def key_texts(options: InputOptions, sources: Sequence[Source], key: str, text: str) -> KeyTexts:
    """How the prompt key and a text column beside it pair up (grouping.text_key_notes), counted by the
    engine: one more query over the two columns."""
    from sqlglot import exp

    from sigmatool.sql import table_name

    dialect = "spark" if options.engine == "spark" else "duckdb"

    def name(column: str) -> str:
        return exp.column(column, quoted=True).sql(dialect=dialect)

    engine = connect(options)
    try:
        table = table_name(options.table, dialect) if options.table else engine.register(sources)
        counts = engine.query(
            f"""WITH pairs AS (SELECT DISTINCT {name(key)} AS k, {name(text)} AS t FROM {table}),
            per_key AS (SELECT k, COUNT(*) AS texts FROM pairs GROUP BY k),
            per_text AS (SELECT t, COUNT(*) AS keys FROM pairs GROUP BY t),
            worst AS (SELECT k, texts FROM per_key ORDER BY texts DESC, k ASC NULLS LAST LIMIT 1)
            SELECT (SELECT COUNT(*) FROM per_key) AS keys,
                (SELECT COUNT(*) FROM per_key WHERE texts > 1) AS pooled,
                (SELECT k FROM worst) AS worst_key,
                (SELECT texts FROM worst) AS worst_texts,
                (SELECT COUNT(*) FROM per_text WHERE keys > 1) AS split,
                (SELECT MAX(keys) FROM per_text) AS most_keys"""
        ).row(0, named=True)
    finally:
        engine.close()
    return KeyTexts(
        int(counts["keys"]),
        int(counts["pooled"]),
        counts["worst_key"],
        int(counts["worst_texts"] or 0),
        int(counts["split"]),
        int(counts["most_keys"] or 0),
    )


def engine_key_notes(options: InputOptions, sources: Sequence[Source], key: str, text: str) -> list[str]:
    """grouping.text_key_notes, counted by the engine; a text column it cannot compare is not checked."""
    try:
        return key_texts_notes(key_texts(options, sources, key, text), key, text)
    except DataError:
        return []


def bad_rewards(options: InputOptions, sources: Sequence[Source], count: int) -> str:
    """The message for rewards the engine counted as not gradeable (it does not name their rows)."""
    what = "NaN" if options.threshold is not None else "neither 0 nor 1"
    where = sources[0].label if len(sources) == 1 else f"{sources[0].label} and {len(sources) - 1} more"
    return (
        f"{where}: column {options.reward_col!r}: {count:,} reward(s) that are {what}, counted by --engine "
        f"{options.engine}; --threshold T grades numeric rewards, --skip-invalid leaves them out (run without "
        "--engine to see their rows)"
    )


def _run(
    options: InputOptions,
    sources: Sequence[Source],
    reward: pl.DataType,
    expression: Callable[[SqlOptions], Any],
    by: Sequence[str],
    step_col: str | None,
) -> pl.DataFrame:
    from sigmatool.sql import spelled

    engine = connect(options)
    try:
        table = options.table or engine.register(sources)
        sql = SqlOptions(
            table,
            options.prompt_col or "",
            options.reward_col or "",
            "spark" if options.engine == "spark" else "duckdb",
            options.threshold,
            tuple(by),
            step_col,
            "boolean" if reward == pl.Boolean else "number",
        )
        return engine.query(spelled(expression(sql), sql.dialect))
    finally:
        engine.close()


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class DuckDB(Engine):
    """DuckDB in this process: on the files given, or on a table of a database file."""

    name = "duckdb"

    def __init__(self, options: InputOptions) -> None:
        try:
            import duckdb
        except ImportError:
            raise UsageError(f"--engine duckdb needs DuckDB: {DUCKDB_HINT}") from None
        self._error: type[BaseException] = duckdb.Error
        database = options.paths[0] if options.table else ":memory:"
        if options.table and not Path(database).is_file():
            raise DataError(f"--engine duckdb: no database file {database!r} to read --table from")
        try:
            self._con = duckdb.connect(database, read_only=bool(options.table))
        except duckdb.Error as exc:
            raise self.failed(exc, f"cannot open {database!r} as a DuckDB database") from None

    def register(self, sources: Sequence[Source]) -> str:
        if any(s.remote for s in sources):
            self._object_store()
        paths = "[" + ", ".join(_quoted(s.path) for s in sources) + "]"
        fmt = sources[0].fmt
        if fmt == "parquet":
            scan = f"read_parquet({paths}, hive_partitioning = true, union_by_name = true)"
        elif fmt in ("csv", "tsv"):
            scan = f"read_csv({paths}, header = true, delim = {_quoted(sources[0].separator)}, union_by_name = true)"
        else:
            layout = "newline_delimited" if fmt == "jsonl" else "array"
            scan = f"read_json({paths}, format = {_quoted(layout)}, union_by_name = true)"
        try:
            self._con.execute(f"CREATE TEMP VIEW {VIEW} AS SELECT * FROM {scan}")
        except self._error as exc:
            raise self.failed(exc, "cannot read the log") from None
        return VIEW

    def _object_store(self) -> None:
        """DuckDB reads object stores through its httpfs extension, which it downloads on first use;
        sigmatool downloads nothing, so the extension must be installed already."""
        try:
            self._con.execute("LOAD httpfs")
        except self._error:
            raise UsageError(
                "--engine duckdb reads object-store paths through its httpfs extension, which is not installed "
                "here: run duckdb's INSTALL httpfs where the network allows, or leave --engine out (sigmatool "
                "reads the objects itself)"
            ) from None

    def query(self, sql: str) -> pl.DataFrame:
        try:
            frame: pl.DataFrame = self._con.sql(sql).pl()
        except self._error as exc:
            raise self.failed(exc, "the query failed") from None
        return frame

    def schema(self, table: str) -> pl.DataFrame:
        from sigmatool.sql import table_name

        try:
            frame: pl.DataFrame = self._con.sql(f"SELECT * FROM {table_name(table, 'duckdb')} LIMIT 0").pl()
        except self._error as exc:
            raise self.failed(exc, f"cannot read table {table!r}") from None
        return frame

    def close(self) -> None:
        self._con.close()


class Spark(Engine):
    """Spark through Spark Connect (``--spark-remote``, else ``$SPARK_REMOTE``), else a local session."""

    name = "spark"

    def __init__(self, options: InputOptions) -> None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                from pyspark.sql import SparkSession
        except ImportError:
            raise UsageError(f"--engine spark needs PySpark: {SPARK_HINT}") from None
        self.remote = options.spark_remote or os.environ.get("SPARK_REMOTE") or None
        self._local = self.remote is None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if self.remote is not None:
                    _check_reachable(self.remote)
                    self._spark = SparkSession.builder.remote(self.remote).getOrCreate()
                else:
                    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
                        raise UsageError(f"--engine spark: {JAVA_HINT}")
                    with _quiet_children():
                        self._spark = (
                            SparkSession.builder.master("local[*]")
                            .appName("sigmatool")
                            .config("spark.ui.enabled", "false")
                            .config("spark.ui.showConsoleProgress", "false")
                            .config("spark.sql.session.timeZone", "UTC")
                            .getOrCreate()
                        )
        except (UsageError, DataError):
            raise
        except Exception as exc:
            raise self._unreachable(exc) from None

    def _unreachable(self, exc: BaseException) -> DataError:
        where = f"the Spark Connect server {self.remote}" if self.remote else "a local Spark"
        return DataError(f"--engine spark: cannot reach {where}: {first_line(exc)}")

    def _call(self, run: Callable[[], Any], what: str) -> Any:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return run()
        except Exception as exc:
            text = first_line(exc)
            if "UNAVAILABLE" in text or "Connection refused" in text or "failed to connect" in text.lower():
                raise self._unreachable(exc) from None
            raise self.failed(exc, what) from None

    def register(self, sources: Sequence[Source]) -> str:
        paths = [s.path if s.remote else os.path.abspath(s.path) for s in sources]
        fmt = sources[0].fmt
        base = _hive_base(paths[0]) if sources[0].partitions else None

        def read() -> None:
            reader = self._spark.read
            if base is not None:
                reader = reader.option("basePath", base)
            if fmt == "parquet":
                frame = reader.parquet(*paths)
            elif fmt in ("csv", "tsv"):
                frame = reader.options(header=True, inferSchema=True, sep=sources[0].separator).csv(paths)
            else:
                frame = reader.options(multiLine=fmt == "json").json(paths)
            frame.createOrReplaceTempView(VIEW)

        self._call(read, "cannot read the log")
        return VIEW

    def query(self, sql: str) -> pl.DataFrame:
        frame: pl.DataFrame = pl.from_arrow(
            self._call(lambda: self._spark.sql(sql).toArrow(), "the query failed")
        )  # type: ignore[assignment]
        return frame

    def close(self) -> None:
        """A Spark Connect session is released on the server now (at exit, the client would ask again, and
        wait minutes for a server that has gone); a local Spark ends with the process."""
        if not self._local:
            with contextlib.suppress(Exception):
                self._spark.stop()

    def schema(self, table: str) -> pl.DataFrame:
        arrow = self._call(
            lambda: self._spark.table(table).limit(0).toArrow(), f"cannot read table {table!r}"
        )
        frame: pl.DataFrame = pl.from_arrow(arrow)  # type: ignore[assignment]
        return frame


def _check_reachable(url: str) -> None:
    """A Spark Connect URL (sc://host:port/;params) whose server answers, checked in a few seconds: the
    client itself retries an unreachable server for minutes."""
    import socket
    import urllib.parse

    if not url.startswith("sc://"):
        raise UsageError(f"--spark-remote {url!r}: a Spark Connect URL is sc://host:port")
    parsed = urllib.parse.urlparse("http://" + url[len("sc://") :].split("/;")[0].split(";")[0])
    try:
        host, port = parsed.hostname, parsed.port or 15002
    except ValueError:
        raise UsageError(f"--spark-remote {url!r}: a Spark Connect URL is sc://host:port") from None
    if not host:
        raise UsageError(f"--spark-remote {url!r}: a Spark Connect URL is sc://host:port")
    try:
        with socket.create_connection((host, port), timeout=REACH_SECONDS):
            pass
    except OSError as exc:
        raise DataError(f"--engine spark: cannot reach the Spark Connect server {url}: {exc}") from None


@contextlib.contextmanager
def _quiet_children() -> Iterator[None]:
    """The local Spark's JVM, started inside this block, writes its log and progress to /dev/null rather than
    over sigmatool's own messages (its errors still come back as exceptions)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(os.devnull, "wb") as null:
        os.dup2(null.fileno(), 1)
        os.dup2(null.fileno(), 2)
    try:
        yield
    finally:
        for fd, copy in zip((1, 2), saved, strict=True):
            os.dup2(copy, fd)
            os.close(copy)


def _hive_base(path: str) -> str:
    """The folder above the first ``name=value`` folder of ``path``: Spark's ``basePath`` for partitions."""
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if "=" in part.strip("="):
            return "/".join(parts[:i]) or "/"
    return os.path.dirname(path)

"""What to read and where to write: the input and output options, and the guard that keeps them apart."""

from __future__ import annotations

import glob
import itertools
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from enum import Enum
from typing import Any

from sigmatool.errors import UsageError
from sigmatool.options.common import MAX_G, Counts, InputFormat, OutputFormat, Trainer, check_count

RESERVED = ("p", "k", "n", "prompts", "rows", "weight", "id", "G", "segment")
# The --by columns sit beside sigmatool's own helper columns, whose names all begin so.
HELPER_PREFIX = "__"
# With several pass-rate columns (--col repeated, or a glob), each output row names its column here.
COLUMN = "column"
# The trainers whose rollout dumps --from reads (sigmatool.trainers.dumps has a reader for each).
TRAINERS = tuple(t.value for t in Trainer)
# What a log's layout says of each rollout besides its step, offered to --by (read from the files).
LABELS: dict[str, tuple[str, ...]] = {
    "verifiers": ("model", "run"),  # metadata.json's model; the run folder
    "nemo-gym": ("agent",),  # agent_ref.name
    "open-instruct": ("dataset", "run"),  # the verifier source; the run_name of the file
}
# A W&B table has no fixed layout: its prompt, group and step columns may be named as a --rollouts log's are.
NAMED_COLUMNS = ("wandb-table",)
COUNT_DIRECTIONS = tuple(c.value for c in Counts)
# Output formats that are bytes, not text: never written to a terminal.
BINARY_FORMATS = (OutputFormat.parquet.value,)


class Engine(str, Enum):
    """Where a --rollouts log is reduced to its counts (see sigmatool.load.engine)."""

    polars = "polars"
    duckdb = "duckdb"
    spark = "spark"


ENGINES = tuple(e.value for e in Engine)


@dataclass(frozen=True)
class LogOptions:
    """How a rollout log is graded: the trainer whose dumps are read (--from), the reward field, a threshold."""

    trainer: str | None = None
    reward_col: str | None = None
    threshold: float | None = None
    # Any other rollout log, for the commands that follow a run step by step (track): its columns.
    rollouts: bool = False
    prompt_col: str | None = None
    step_col: str | None = None
    # Where a --rollouts log is reduced to its counts (see sigmatool.load.engine).
    engine: str = "polars"
    spark_remote: str | None = None
    table: str | None = None
    # How a log's rows make its groups (sigmatool.load.integrity): the sampled group's column, the configured
    # rollouts per group, patterns cut from prompt texts, a rollout's column (its rows count once), and every
    # --prompt-col when several make one composite key.
    group_col: str | None = None
    rollouts_per_group: int | None = None
    prompt_masks: tuple[str, ...] = ()
    rollout_col: str | None = None
    prompt_cols: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.trainer is not None and self.trainer not in TRAINERS:
            raise UsageError(f"--from: {self.trainer!r} is not one of {', '.join(TRAINERS)}")

    def dumps(self, paths: Sequence[str], command: str) -> InputOptions:
        """The input of a command that follows a run step by step (``track``): a trainer's dumps (--from) or
        any rollout log with a step column (--rollouts --prompt-col --reward-col --step-col)."""
        if self.trainer is None and not self.rollouts:
            raise UsageError(
                f"{command} reads a run's rollouts: a trainer's dumps with --from ({'|'.join(TRAINERS)}), or "
                "any rollout log with --rollouts --prompt-col P --reward-col R --step-col S"
            )
        if not paths and self.table is None:
            raise UsageError(f"{command}: give the run's files or folders (or --table with --engine)")
        if self.rollouts and not self.step_col:
            raise UsageError(
                f"{command} --rollouts follows a run step by step: --step-col names the column that tells the "
                "steps (a training step, a checkpoint, an eval run)"
            )
        if self.step_col is not None and not self.rollouts and self.trainer not in NAMED_COLUMNS:
            raise UsageError(
                "--step-col names the step column of a --rollouts log (a trainer's dumps say it)"
            )
        return self.read(paths=tuple(paths))

    def read(self, **reading: Any) -> InputOptions:
        """The input options of this log and of the other ``reading`` options (each option a log has is named
        alike in both)."""
        return InputOptions(**{f.name: getattr(self, f.name) for f in fields(self)}, **reading)


def parsed_log_options(
    *, trainer: Trainer | str | None, engine: Engine, prompt_masks: list[str] | None = None, **fields: Any
) -> LogOptions:
    """How a rollout log is graded and where it is read, from the flags as given (each by its field's name)."""
    return LogOptions(
        trainer=trainer.value if isinstance(trainer, Trainer) else trainer,
        engine=engine.value,
        prompt_masks=tuple(prompt_masks or ()),
        **fields,
    )


def prompt_columns(cols: Sequence[str] | None) -> dict[str, Any]:
    """--prompt-col as given (repeatable): the first column, and all of them when several make one key."""
    given = tuple(cols or ())
    return {"prompt_col": given[0] if given else None, "prompt_cols": given if len(given) > 1 else ()}


def parsed_read_options(
    *,
    log: LogOptions,
    rollouts: bool,
    prompt_col: Sequence[str] | None,
    input_format: InputFormat | None,
    col: list[str] | None,
    rate_col: str | None,
    counts: Counts | None,
    **reading: Any,
) -> InputOptions:
    """How to read the values from the flags as given (each by its field's name): --rate-col, the spelling
    people guess for --col, joins it; one --col that is no glob is the column, several (or a glob) each
    read apart."""
    if rate_col is not None and rate_col not in (col or []):
        col = [*(col or []), rate_col]
    one = col is not None and len(col) == 1 and not glob.has_magic(col[0])
    return replace(log, rollouts=rollouts, **prompt_columns(prompt_col)).read(
        input_format=input_format.value if input_format else None,
        col=col[0] if col is not None and one else None,
        cols=tuple(col or ()) if not one else (),
        counts=counts.value if counts else None,
        **reading,
    )


@dataclass(frozen=True)
class InputOptions:
    """Everything the user said about how to read the data."""

    paths: tuple[str, ...] = ()
    input_format: str | None = None
    separator: str | None = None
    col: str | None = None
    cols: tuple[str, ...] = ()  # several pass-rate columns or globs of names, each analysed apart
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
    percent: bool = False
    trainer: str | None = None
    counts: str | None = None
    nan_missing: bool = False
    step_col: str | None = None  # a rollout log's steps, for a run followed step by step (track, report)
    engine: str = "polars"  # where a --rollouts log is reduced to counts: polars, duckdb or spark
    spark_remote: str | None = None  # a Spark Connect URL (sc://host:port); else $SPARK_REMOTE, else local
    table: str | None = None  # a table in the engine (Spark's catalog, or the DuckDB database file given)
    group_col: str | None = None  # a log's sampled group (uid, group_index); else the prompt key
    rollouts_per_group: int | None = None  # the configured n of rollouts per group
    prompt_masks: tuple[str, ...] = ()  # regular expressions cut from prompt texts before keying
    rollout_col: str | None = (
        None  # a rollout's rows (turns) count once: first row's prompt, last row's reward
    )
    prompt_cols: tuple[str, ...] = ()  # every --prompt-col, when several make one composite key

    def __post_init__(self) -> None:
        if self.input_format is not None and self.input_format not in InputFormat.__members__:
            raise UsageError(
                f"--input-format: one of {', '.join(InputFormat.__members__)}, not {self.input_format!r}"
            )
        if self.separator is not None and len(self.separator) != 1:
            raise UsageError(f"--separator: give one character, such as ';' or '|', not {self.separator!r}")
        if self.paths.count("-") > 1:
            raise UsageError("'-' (standard input) is given more than once; stdin can be read only once")
        if self.threshold is not None and not math.isfinite(self.threshold):
            raise UsageError(f"--threshold: give a finite number, not {self.threshold}")
        if self.samples is not None:
            check_count("--samples", self.samples, 1, MAX_G)
        self._check_forms()
        self._check_groups()
        self._check_trainer()
        self._check_engine()
        clash = [b for b in self.by if b in RESERVED or b.startswith(HELPER_PREFIX)]
        if clash:
            raise UsageError(
                f"--by column name(s) {', '.join(clash)} clash with output columns (or "
                f"with sigmatool's helper columns, named {HELPER_PREFIX}…); rename them"
            )
        if len(set(self.by)) != len(self.by):
            raise UsageError("--by: each column may be given once")
        self._check_columns()

    def _check_columns(self) -> None:
        """Several --col: each given once, not beside one --col, and not clashing with --by."""
        if not self.cols:
            return
        if self.col is not None:
            raise UsageError("give either one --col or several (cols), not both")
        if len(set(self.cols)) != len(self.cols):
            raise UsageError("--col: each column may be given once")
        if COLUMN in self.by:
            raise UsageError(
                f"--by {COLUMN}: several --col name each row's pass-rate column in a column of that name; "
                "rename it"
            )

    def _check_forms(self) -> None:
        """The value columns must describe one form: rates, counts or rollouts."""
        if self.rollouts:
            if not self.prompt_col or not self.reward_col:
                raise UsageError("--rollouts needs --prompt-col and --reward-col")
            if self.col or self.cols or self.k_col or self.n_col or self.samples is not None:
                raise UsageError("--rollouts cannot be combined with --col, --k-col, --n-col or --samples")
            if self.weight_col:
                raise UsageError("--rollouts rows are single answers: --weight-col does not apply")
        elif self.trainer is None and (self.prompt_col or self.reward_col or self.threshold is not None):
            raise UsageError("--prompt-col, --reward-col and --threshold need --rollouts or --from")
        if self.step_col is not None and not self.rollouts and self.trainer not in NAMED_COLUMNS:
            raise UsageError(
                "--step-col names the step column of a --rollouts log (a trainer's dumps say it)"
            )
        if self.step_col is not None and (not self.step_col or self.step_col.startswith(HELPER_PREFIX)):
            raise UsageError(f"--step-col: give a column name, not {self.step_col!r}")
        if bool(self.k_col) != bool(self.n_col):
            raise UsageError("--k-col and --n-col go together")
        if self.k_col and (self.col or self.cols or self.samples is not None):
            raise UsageError("give either --k-col/--n-col or a rate column (--col, --samples), not both")
        if self.percent and (self.k_col or self.rollouts):
            raise UsageError(
                "--percent reads a pass-rate column given in percent; counts and rollouts have none"
            )
        if self.counts is not None:
            if self.counts not in COUNT_DIRECTIONS:
                raise UsageError(f"--counts: one of {', '.join(COUNT_DIRECTIONS)}, not {self.counts!r}")
            if self.k_col or self.rollouts or self.percent:
                raise UsageError(
                    "--counts says what a whole-number pass-rate column counts; it does not apply to "
                    "--k-col/--n-col, --rollouts or --percent"
                )
        if self.nan_missing and (self.k_col or self.rollouts):
            raise UsageError("--nan-missing applies to a pass-rate column (--col), not to counts or rollouts")

    def _check_groups(self) -> None:
        """The options that say how a log's rows make its groups apply to a log, each checked once."""
        given = {
            "--group-col": self.group_col,
            "--prompt-mask": self.prompt_masks,
            "--rollout-col": self.rollout_col,
            "--rollouts-per-group": self.rollouts_per_group is not None,
        }
        named = [name for name, value in given.items() if value]
        if named and not self.rollout_log:
            raise UsageError(f"{', '.join(named)}: these read a rollout log; give --rollouts or --from")
        if self.rollouts_per_group is not None:
            check_count("--rollouts-per-group", self.rollouts_per_group, 1, MAX_G)
        for mask in self.prompt_masks:
            try:
                re.compile(mask)
            except re.error as exc:
                raise UsageError(f"--prompt-mask {mask!r}: not a regular expression ({exc})") from exc
            if not mask or re.fullmatch(mask, ""):
                raise UsageError(
                    f"--prompt-mask {mask!r}: matches the empty text; give a pattern that cuts text"
                )
        if len(set(self.prompt_cols)) != len(self.prompt_cols):
            raise UsageError("--prompt-col: each column may be given once")
        for option, col in (("--group-col", self.group_col), ("--rollout-col", self.rollout_col)):
            if col is not None and (not col or col.startswith(HELPER_PREFIX)):
                raise UsageError(f"{option}: give a column name, not {col!r}")

    @property
    def prompt_key(self) -> tuple[str, ...]:
        """The columns that key a log's prompts: every --prompt-col, in the order given."""
        return self.prompt_cols or ((self.prompt_col,) if self.prompt_col else ())

    def _check_engine(self) -> None:
        """--engine duckdb|spark reduces a --rollouts log where it lives; --spark-remote and --table go with it."""
        if self.engine not in ENGINES:
            raise UsageError(f"--engine: one of {', '.join(ENGINES)}, not {self.engine!r}")
        if self.spark_remote is not None and self.engine != "spark":
            raise UsageError("--spark-remote connects to a Spark Connect server: give --engine spark too")
        if self.engine == "polars":
            if self.table is not None:
                raise UsageError("--table names a table inside an engine: give --engine duckdb or spark too")
            return
        if not self.rollouts:
            raise UsageError(
                f"--engine {self.engine} reduces a rollout log inside the engine: give --rollouts --prompt-col P "
                "--reward-col R (a trainer's dumps and pass-rate tables are read by polars)"
            )
        grouped = {
            "several --prompt-col": len(self.prompt_cols) > 1,
            "--prompt-mask": self.prompt_masks,
            "--rollout-col": self.rollout_col,
            "--group-col": self.group_col,
        }
        given = [name for name, value in grouped.items() if value]
        if given:
            raise UsageError(
                f"--engine {self.engine} counts each prompt by one --prompt-col where the log lives: "
                f"{', '.join(given)} need the log's rows here; leave --engine out"
            )
        if self.table is not None and not self.table.strip():
            raise UsageError("--table: give a table name")

    def check_rows_readable(self) -> None:
        """Per-prompt output reads the log's rows, which --engine leaves where they are."""
        if self.engine != "polars":
            raise UsageError(
                f"--engine {self.engine} brings back the log's counts, not its rows: per-prompt output reads "
                "the log itself; leave --engine out"
            )

    def check_engine_paths(self) -> None:
        """What --engine reads, once DATA is known: files or a table, never stdin."""
        if "-" in self.paths:
            raise UsageError(f"--engine {self.engine} reads files or tables, not standard input")
        if self.engine == "spark" and self.table is not None and self.paths:
            raise UsageError("--engine spark reads --table or the log's files, not both")
        if self.engine == "duckdb" and self.table is not None and len(self.paths) != 1:
            raise UsageError(
                "--engine duckdb --table T reads T from one DuckDB database file: give that file"
            )
        if self.table is None and not self.paths:
            raise UsageError(f"--engine {self.engine}: give the log's files, or --table")

    def _check_trainer(self) -> None:
        """--from reads a trainer's dump files as a rollout log: the other reading options do not apply."""
        if self.trainer is None:
            return
        if self.trainer not in TRAINERS:
            raise UsageError(f"--from: {self.trainer!r} is not one of {', '.join(TRAINERS)}")
        named = self.trainer in NAMED_COLUMNS
        clashes = {
            "--rollouts": self.rollouts,
            "--prompt-col": self.prompt_col and not named,
            "--group-col": self.group_col and not named,
            "--prompt-mask": self.prompt_masks and not named,
            "--rollout-col": self.rollout_col,
            "--col": self.col or self.cols,
            "--k-col": self.k_col,
            "--n-col": self.n_col,
            "--samples": self.samples is not None,
            "--weight-col": self.weight_col,
            "--id-col": self.id_col,
            "--percent": self.percent,
            "--counts": self.counts,
            "--nan-missing": self.nan_missing,
            "--input-format": self.input_format,
            "--separator": self.separator,
        }
        given = [name for name, value in clashes.items() if value]
        if given:
            raise UsageError(
                f"--from {self.trainer} reads the trainer's own fields: {', '.join(given)} "
                f"{'does' if len(given) == 1 else 'do'} not apply (--reward-col and --threshold choose the reward)"
            )
        if "-" in self.paths:
            raise UsageError(f"--from {self.trainer} reads dump files or folders, not standard input")
        offered = ("step", *LABELS.get(self.trainer, ()))
        other = [b for b in self.by if b not in offered]
        if other:
            raise UsageError(
                f"--from {self.trainer}: --by can only be {' or '.join(offered)}, not {', '.join(other)}"
            )

    def check_data(self) -> None:
        """Checks that need DATA given: --from reads files or folders, never stdin or the bundled sample."""
        if self.trainer is not None and not self.paths:
            raise UsageError(
                f"--from {self.trainer}: give the dump files, globs or the folder that holds them"
            )

    @property
    def groups(self) -> tuple[str, ...]:
        """The columns every summary is broken down by: ``column`` first with several --col, then --by."""
        return (COLUMN, *self.by) if self.cols else self.by

    @property
    def has_counts(self) -> bool:
        """Whether each prompt's value is k right of n samples (rather than a bare rate)."""
        return self.rollouts or self.trainer is not None or bool(self.k_col) or self.samples is not None

    @property
    def rollout_log(self) -> bool:
        """Whether each row is one graded answer (--rollouts, or a trainer's dump with --from)."""
        return self.rollouts or self.trainer is not None

    @property
    def columns_used(self) -> tuple[str, ...]:
        """The input's columns these options read (a report lists them): the values', weights', ids', --by."""
        if self.rollouts:
            named = [*self.prompt_key, self.reward_col, self.group_col, self.rollout_col]
        elif self.k_col:
            named = [self.k_col, self.n_col]
        else:
            named = [self.col]
        return tuple(c for c in [*named, self.weight_col, self.id_col, *self.by] if c)


# --------------------------------------------------------------------------------------------- output


@dataclass(frozen=True)
class OutputOptions:
    """Where the result goes and in which format (``auto``: a table on a terminal, CSV in a pipe)."""

    fmt: str = "auto"
    output: str | None = None
    full: bool = False  # the table view's every row (several columns are otherwise compared at a glance)

    def __post_init__(self) -> None:
        if self.fmt not in OutputFormat.__members__:
            raise UsageError(f"--format: one of {', '.join(OutputFormat.__members__)}, not {self.fmt!r}")


def by_columns(by: Sequence[str]) -> bool:
    """Whether groups ``by`` are led by the ``column`` key: several pass-rate columns, each its own run."""
    return tuple(by[:1]) == (COLUMN,)


def over_all_prompts(by: Sequence[str]) -> bool:
    """Whether groups ``by`` are all the prompts: no --by, or only the ``column`` key (each pass-rate column
    over all its prompts)."""
    return len(by) == int(by_columns(by))


def _input_files(paths: Sequence[str]) -> list[str]:
    """The files the DATA arguments name; a folder (a trainer's dump folder) stands for every file below it."""
    files: list[str] = []
    for arg in paths:
        if arg == "-" or "://" in arg:
            continue
        for match in glob.glob(arg) if glob.has_magic(arg) else [arg]:
            files.append(match)
            if os.path.isdir(match):
                files += [os.path.join(root, name) for root, _, names in os.walk(match) for name in names]
    return files


def check_folder(path: str, option: str) -> str:
    """The folder an output file goes into, which must exist; returns it."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"{option} {path}: the folder {folder} does not exist")
    return folder


# An existing output must be one of these; a regular file is replaced, the others are written in place.
NOT_WRITABLE = "not a regular file, a pipe or a character device"


def written_in_place(mode: int) -> bool:
    """A pipe or a character device (``/dev/null``, a shell's ``>(…)``): it cannot be replaced by a renamed
    file, so output goes straight into it."""
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def check_terminal(fmt: str, output: str | None) -> None:
    """Refuse a binary format bound for stdout when stdout is a terminal (a pipe or a file takes it)."""
    to_stdout = output in (None, "-")
    if fmt in BINARY_FORMATS and to_stdout and sys.stdout is not None and sys.stdout.isatty():
        raise UsageError(f"--format {fmt} is binary and stdout is a terminal: write it with -o FILE.{fmt}")


def check_outputs(inputs: InputOptions | None, outputs: Sequence[tuple[str, str | None]]) -> None:
    """Refuse an output that names an input file (however spelled) or a folder, before anything is read.

    ``outputs`` are (option, path) pairs; a path of None or ``-`` is stdout.
    """
    seen: dict[tuple[int, int], str] = {}
    written: dict[str, str] = {}
    for source in _input_files(inputs.paths) if inputs else []:
        try:
            info = os.stat(source)
        except OSError:
            continue  # a missing input is reported when it is read
        seen[(info.st_dev, info.st_ino)] = source
    for option, path in outputs:
        if not path or path == "-":
            continue
        if os.path.isdir(path):
            raise UsageError(f"{option} {path}: is a folder; give a file name")
        check_folder(path, option)
        real = os.path.realpath(path)
        if real in written:
            raise UsageError(f"{option} {path}: {written[real]} writes to the same file; give two names")
        written[real] = option
        try:
            info = os.stat(path)
        except OSError:
            continue  # a new file cannot be an input
        if not (stat.S_ISREG(info.st_mode) or written_in_place(info.st_mode)):
            raise UsageError(f"{option} {path}: {NOT_WRITABLE}")
        key = (info.st_dev, info.st_ino)
        if key in seen:
            raise UsageError(
                f"{option} {path}: this is the input file {seen[key]}; writing there would destroy it. "
                "Choose another output file"
            )


# The options that take a comma list of whole numbers.
LIST_OPTIONS = ("--G", "-G", "--group-size", "--sizes")


def check_spaced_list(arguments: Sequence[str], paths: Sequence[str]) -> None:
    """Refuse ``--G 4 8``, which leaves 8 to be read as a file, pointing to the comma list ``--G 4,8``;
    ``arguments`` are the command line's (after ``sigmatool``), ``paths`` its DATA."""
    # --G=4 is read as --G 4.
    args = [part for arg in arguments for part in _split_list_option(arg)]
    for i, flag in enumerate(args[:-2]):
        if flag not in LIST_OPTIONS:
            continue
        extra = list(itertools.takewhile(_stray_number(paths), args[i + 2 :]))
        if extra:
            given = ",".join([args[i + 1], *extra])
            raise UsageError(
                f"{extra[0]}: no such file; several values of {flag} are one comma list: {flag} {given}"
            )


def _split_list_option(arg: str) -> list[str]:
    flag, equals, value = arg.partition("=")
    return [flag, value] if equals and flag in LIST_OPTIONS else [arg]


def _stray_number(paths: Sequence[str]) -> Callable[[str], bool]:
    """Whether an argument is a whole number (or inf) taken as DATA that names no file."""
    return lambda arg: (arg.isdigit() or arg == "inf") and arg in paths and not os.path.exists(arg)

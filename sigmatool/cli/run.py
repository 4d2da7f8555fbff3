"""What every command does around its analysis: talk to people on stderr, read the input, trap signals."""

from __future__ import annotations

import contextlib
import contextvars
import errno
import gc
import importlib
import itertools
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any

from sigmatool import progress
from sigmatool.errors import Interrupted, UsageError
from sigmatool.options import (
    BeyondOptions,
    InputOptions,
    OutputOptions,
    PlotOptions,
    check_outputs,
    check_terminal,
)

if TYPE_CHECKING:
    from sigmatool.load import Dataset, Histogram, Rows, Totals
    from sigmatool.session import Session

TRAPPED = (signal.SIGTERM, signal.SIGHUP)
# The options that take a comma list of whole numbers.
LIST_OPTIONS = ("--G", "-G", "--group-size", "--sizes")
# The arguments of the running command line (after ``sigmatool``), as main received them.
ARGUMENTS: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("arguments", default=())
# The running session's first headline lines: how the input was read where a misreading is likely, and
# (made when the answer is shown) what --grader-error's grader moves.
LEAD: contextvars.ContextVar[tuple[tuple[str, ...], Callable[[], str] | None]] = contextvars.ContextVar(
    "lead", default=((), None)
)


def is_broken_pipe(exc: BaseException) -> bool:
    """A closed pipe (``| head``): an OSError with EPIPE, or a polars error carrying the OS's text."""
    if isinstance(exc, OSError) and exc.errno == errno.EPIPE:
        return True
    text = str(exc)
    return "Broken pipe" in text or "os error 32" in text


def command_line() -> str:
    """The running command line as a shell would take it back: ``sigmatool report data.csv -o r.md``."""
    import shlex

    return shlex.join(["sigmatool", *ARGUMENTS.get()])


def say(line: str, style: str = "", indent: int = 0) -> None:
    """One line for people on stderr: on a terminal styled (rich honours NO_COLOR) and wrapped to its width,
    the lines after the first ``indent`` spaces in; plain and whole otherwise (a log keeps one line each)."""
    stream = sys.stderr
    if stream is None:
        return
    if not stream.isatty():
        stream.write(line + "\n")
        stream.flush()
        return
    import shutil

    from rich.console import Console
    from rich.text import Text

    from sigmatool.render.notes import wrapped

    text = wrapped(line, shutil.get_terminal_size().columns, indent)
    Console(stderr=True, highlight=False, soft_wrap=True).print(Text(text, style=style))


def note(lines: Sequence[str]) -> None:
    """Notes, each said once: those alike but for the column they are about merged into one naming them all
    (:func:`sigmatool.render.notes.merged`)."""
    from sigmatool.render.notes import merged

    for line in merged(lines):
        say(f"note: {line}", "dim", indent=len("note: "))


def error(message: str) -> None:
    say(f"error: {message}", "bold red")


def spaced_list(paths: Sequence[str]) -> None:
    """Refuse ``--G 4 8``, which leaves 8 to be read as a file, pointing to the comma list ``--G 4,8``."""
    # --G=4 is read as --G 4.
    args = [part for arg in ARGUMENTS.get() for part in _split_list_option(arg)]
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


def check(
    inputs: InputOptions | None,
    out: OutputOptions,
    *extra: tuple[str, str | None],
    imports: Sequence[str] = (),
) -> None:
    """Before anything is read: DATA where they are required; no output may name an input file, or another.

    Then load polars (and the modules named in ``imports``: the command's analysis, which lives as long as
    the process, so that the collector, still off, does not walk its import) and give Ctrl-C back to
    Python: polars installs its own SIGINT handler, which restarts an interrupted system call, so a read
    from a pipe that never ends could not be interrupted.
    """
    if inputs is not None:
        spaced_list(inputs.paths)
        inputs.check_data()
    check_outputs(inputs, [("-o", out.output), *extra])
    check_terminal(out.fmt, out.output)
    import polars  # noqa: F401

    for module in imports:
        importlib.import_module(module)
    if not gc.isenabled():
        # The console script started without the collector (sigmatool.entry); what start-up made lives
        # as long as the process, so collections from here on skip it.
        gc.freeze()
        gc.enable()
    with contextlib.suppress(ValueError):  # not the main thread
        signal.signal(signal.SIGINT, signal.default_int_handler)


@contextlib.contextmanager
def values_of(inputs: InputOptions, stream: bool, totals: Totals | None = None) -> Iterator[Histogram | Rows]:
    """As :func:`histogram_of`, but with ``stream``, data whose pass rates are mostly distinct come as their
    checked rows instead (:class:`sigmatool.load.Rows`), for the analyses that can take them, with
    ``totals`` computed while they are checked where that can be done."""
    from sigmatool import load

    with load.dataset(inputs) as ds:
        values = load.rows(ds, totals=totals) if stream and load.streams(ds) else _histogram(ds)
        note(values.notes)
        yield values


@contextlib.contextmanager
def session(
    inputs: InputOptions,
    out: OutputOptions,
    plot: PlotOptions = PlotOptions(),
    beyond: BeyondOptions = BeyondOptions(),
    asked: object = None,
    *,
    estimator: str | None = None,
    sizes: Sequence[float] = (),
    stream: bool = True,
    imports: Sequence[str] = (),
    rows: bool = False,
    grader: tuple[float, float] | None = None,
    outputs: Sequence[tuple[str, str | None]] = (),
) -> Iterator[Session]:
    """A command's run, wired once: its options checked before anything is read, the input read once
    (streamed rows where ``stream`` allows and the rows are many distinct pass rates, else the histogram),
    the options checked against what was read, and the :class:`~sigmatool.session.Session` whose one
    valuation every answer comes from. ``asked``: the analysis' options (their estimator, G and per-prompt
    flag; silent's whole-dataset sums are made while the rows are checked). ``outputs``: the other files the
    command writes, as (option, path). ``grader``: --grader-error's FP, FN; every value is then read through
    it, and the answer's headline starts with what it moves. What the answers leave to say (fitted priors,
    cells not identified) is noted on stderr when the block ends."""
    estimator = estimator or str(getattr(asked, "estimator", "auto"))
    sizes = tuple(getattr(asked, "sizes", sizes))
    per_prompt = bool(getattr(asked, "per_prompt", False))
    # Counts are checked once read: a rate column on a 1/n grid is read as counts of n.
    beyond.check(has_counts=True, estimator=estimator, per_prompt=per_prompt)
    if per_prompt or rows:  # per-prompt output (``rows``: where ``asked`` does not say it)
        inputs.check_rows_readable()
    check(inputs, out, plot.output, *outputs, imports=imports)
    from sigmatool.options import SilentOptions
    from sigmatool.session import Session

    plain = estimator in ("auto", "plugin") and not (beyond.prior.active or beyond.dataset_level or grader)
    totals = None
    if plain and isinstance(asked, SilentOptions):
        from sigmatool.silent import totals_asked

        totals = totals_asked(asked, inputs.groups)
    with values_of(inputs, stream and plain, totals) as loaded:
        beyond.check(has_counts=loaded.dataset.has_counts, estimator=estimator)
        run = Session(
            loaded.frame, inputs.groups, estimator, beyond, sizes, loaded.dataset, loaded.totals, grader
        )
        token = LEAD.set((getattr(loaded, "reading", ()), run.grader_line if grader else None))
        try:
            yield run
        finally:
            LEAD.reset(token)
        note(run.notes())


def show(
    result: Any, out: OutputOptions, plot: PlotOptions = PlotOptions(), source: str = "", figure: Any = None
) -> None:
    """Write a command's answer: per-prompt rows (a LazyFrame) streamed to the output, any other result as its
    table view or data format (:mod:`sigmatool.views`); when --plot names a file, the figure of ``figure``
    (a result, or what a figure draws; by default the result) is drawn first."""
    from sigmatool.render import write_any
    from sigmatool.views import drawn_of, summary_of, view_of, warnings_of

    # What a figure draws is built only for --plot: it may cost more than the answer (plan re-plans per budget).
    if plot.path is not None:
        drawn = drawn_of(result) if figure is None else drawn_of(figure) or figure
        if drawn is not None:
            save_plot(plot, drawn, source)
    view = view_of(result)
    reading, graded = LEAD.get()
    lines = [*reading]
    if graded is not None and not getattr(result, "says_grader", False):
        lines.append(graded())
    if lines and view is not None and is_table(out):
        from dataclasses import replace

        view = replace(view, headline="\n".join([*lines, *([view.headline] if view.headline else [])]))
    elif lines:
        note(lines[len(reading) :])  # the reading is a note already
    if not is_table(out):  # the table's headline says these
        note(warnings_of(result))
    write_any(summary_of(result), out, view)


def is_table(out: OutputOptions) -> bool:
    """Whether the output is the table view (on a terminal, or asked for)."""
    from sigmatool.render import resolve_format

    return resolve_format(out.fmt, out.output) == "table"


def save_plot(plot: PlotOptions, drawn: object, source: str) -> None:
    """Draw the figure of a command's result and write it when --plot names a file (only then is matplotlib
    imported)."""
    if plot.path is not None:
        from sigmatool.figures.commands import draw

        draw(drawn, source, caption=plot.caption, style=plot.style).save(plot.path)


def source_of(hist: Histogram | Rows | Session) -> str:
    """The input's files as a figure's caption names them."""
    dataset = hist.dataset
    return "" if dataset is None else ", ".join(source.label for source in dataset.sources)


@contextlib.contextmanager
def histogram_of(inputs: InputOptions) -> Iterator[Histogram]:
    """The input's histogram, with rows read shown on a terminal and notes on stderr; valid in the block."""
    from sigmatool import load

    with load.dataset(inputs) as ds:
        hist = _histogram(ds)
        note(hist.notes)
        yield hist


def histogram_noted(ds: Dataset) -> Histogram:
    """The histogram of a loaded input, with rows read shown on a terminal and its notes on stderr."""
    hist = _histogram(ds)
    note(hist.notes)
    return hist


def _histogram(ds: Dataset) -> Histogram:
    """The histogram, with a bar of the rows read on a terminal."""
    from sigmatool import load

    if not progress.shown():
        return load.histogram(ds)
    rows = load.parquet_rows(ds.sources)  # read once per pass-rate column when there are several
    total = None if rows is None else rows * max(len(ds.parts), 1)
    with progress.bar("reading", total, unit="rows") as advance:
        return load.histogram(ds, on_rows=advance)


def _raise(signum: int, frame: FrameType | None) -> None:
    # Once is enough: the unwinding that follows (removing temporary files) must not be cut short.
    for trapped in TRAPPED:
        signal.signal(trapped, signal.SIG_IGN)
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_trapped() -> Iterator[None]:
    """SIGTERM and SIGHUP (timeout, Slurm, Kubernetes) unwind like Ctrl-C, so temporary files are removed."""
    previous = {}
    try:
        for signum in TRAPPED:
            previous[signum] = signal.signal(signum, _raise)
    except ValueError:  # not the main thread: leave signals to whoever owns it
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def write_rows(frame: Any, path: str) -> None:
    """Rows written to a file of their own (``--export-order``), in the format its extension names,
    atomically."""
    from sigmatool.render import write_any

    write_any(frame, OutputOptions(output=path))

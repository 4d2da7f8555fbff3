"""What every command does around its analysis: talk to people on stderr, check, read the input, show."""

from __future__ import annotations

import contextlib
import contextvars
import gc
import importlib
import signal
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sigmatool import progress
from sigmatool.options import InputOptions, OutputOptions, PlotOptions, check_outputs, check_terminal
from sigmatool.options.inputs import check_spaced_list

if TYPE_CHECKING:
    import polars as pl

    from sigmatool.cli.beyond import Analysed
    from sigmatool.load import Dataset, Histogram, Rows
    from sigmatool.options import SilentOptions
    from sigmatool.run import Run
    from sigmatool.shown import Shown

# The arguments of the running command line (after ``sigmatool``), as main received them.
ARGUMENTS: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("arguments", default=())


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
        check_spaced_list(ARGUMENTS.get(), inputs.paths)
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
def session(
    given: Analysed,
    *,
    estimator: str = "auto",
    sizes: Sequence[float] = (),
    per_prompt: bool = False,
    silent: SilentOptions | None = None,
    stream: bool = True,
    imports: Sequence[str] = (),
    outputs: Sequence[tuple[str, str | None]] = (),
    credits_many: bool = False,
    trained: tuple[str, Sequence[float]] | None = None,
) -> Iterator[Run]:
    """A command's run, wired once (``given``: its input, output, figure and grader): its options checked
    before anything is read, the input read once (streamed rows where ``stream`` allows and the rows are many
    distinct pass rates, else the histogram), and the :class:`~sigmatool.run.Run` made of it
    (:meth:`~sigmatool.run.Run.of` checks the options against what was read), whose one valuation every
    answer comes from. ``per_prompt``: the command writes per-prompt rows (the input must be readable
    again); ``silent``: silent's options, whose whole-dataset sums are made while streamed rows are checked.
    ``outputs``: the other files the command writes, as (option, path). With --grader-error's FP, FN, every
    value is read through the grader, and the answer's headline starts with what it moves. What the answers
    leave to say (fitted priors, cells not identified) is noted on stderr when the block ends. --pass-at's
    K (a list where ``credits_many``: silent, budget) must be at most every G asked, or every size of the
    groups ``trained`` trains on (its flag and sizes: preflight's --n)."""
    inputs, beyond, grader = given.inputs, given.beyond, given.grader
    # Counts are checked once read: a rate column on a 1/n grid is read as counts of n.
    beyond.check(has_counts=True, estimator=estimator, per_prompt=per_prompt)
    flag, trained_sizes = trained or ("--G", sizes)
    credits = checked_credits(
        given.pass_at, trained_sizes, many=credits_many, bounds=beyond.bounds, flag=flag
    )
    _check_denoise(given)
    if per_prompt:
        inputs.check_rows_readable()
    check(inputs, given.out, given.plot.output, *outputs, imports=imports)
    from sigmatool import load
    from sigmatool.run import Run

    plain = estimator in ("auto", "plugin") and not (
        beyond.prior.active or beyond.dataset_level or grader or credits or given.denoise
    )
    totals = None
    if plain and silent is not None:
        from sigmatool.silent import totals_asked

        totals = totals_asked(silent, inputs.groups)
    with load.dataset(inputs) as ds:
        streamed = stream and plain and load.streams(ds)
        loaded = load.rows(ds, totals=totals) if streamed else _histogram(ds)
        note(loaded.notes)
        made = Run.of(loaded, inputs.groups, estimator, beyond, sizes=sizes, grader=grader, pass_at=credits,
                      denoise=given.denoise)  # fmt: skip
        yield made
        note(made.valued_notes())


def _check_denoise(given: Analysed) -> None:
    """--bounds range the rates as the counts read them: none beside --denoise."""
    if given.beyond.bounds and given.denoise is not None:
        from sigmatool.errors import UsageError

        raise UsageError(
            "--bounds ranges the rates as the counts read them; with --denoise use --ci or --prior"
        )


def raw_rewards(given: Analysed, silent: SilentOptions) -> None:
    """``silent --invalid`` or ``--resolution``: the answer from a rollout log's raw rewards, read once
    (without the checks of rewards that a histogram of right and wrong needs)."""
    from sigmatool.errors import UsageError

    inputs = given.inputs
    if silent.resolution is not None and inputs.threshold is not None:
        raise UsageError(
            "--resolution reads the raw rewards; --threshold grades them right or wrong: give one"
        )
    if (
        given.beyond.prior.active
        or given.beyond.dataset_level
        or given.grader
        or given.denoise
        or given.pass_at
    ):
        raise UsageError(
            "--invalid and --resolution give the silent share from raw rewards: without --prior, --bounds, "
            "--ci, --grader-error, --denoise or --pass-at"
        )
    check(inputs, given.out, imports=("sigmatool.rewards",))
    from sigmatool import load, rewards

    with load.dataset(inputs) as ds:
        note(ds.notes)
        result = rewards.answer(ds, silent)
    show(result, given.out)


def checked_credits(
    pass_at: Sequence[int], sizes: Sequence[float], *, many: bool, bounds: bool = False, flag: str = "--G"
) -> tuple[int, ...]:
    """--pass-at's K, checked before anything is read: one K unless ``many``; each at most every G asked;
    --bounds, which ranges over pass@1's quantities, refused beside a K > 1."""
    from sigmatool.errors import UsageError
    from sigmatool.options.curriculum import check_pass_at

    if not many and len(pass_at) > 1:
        raise UsageError(
            f"--pass-at: this command answers for one K, not {', '.join(map(str, pass_at))} "
            "(silent and budget take a list)"
        )
    check_pass_at(pass_at, sizes, flag)
    if bounds and any(K > 1 for K in pass_at):
        raise UsageError("--bounds ranges pass@1's quantities; with --pass-at K > 1 use --ci or --prior")
    return tuple(pass_at)


def show(
    result: Shown,
    out: OutputOptions,
    plot: PlotOptions = PlotOptions(),
    source: str = "",
    run: Run | None = None,
) -> None:
    """Write a command's answer as the result shows itself (:mod:`sigmatool.shown`): its table view or its
    frame in a data format (per-prompt rows streamed), its warnings in the table's headline or on stderr;
    when --plot names a file, its figure is drawn first. The headline starts with what the ``run`` says of
    itself: how its input was read where a misreading is likely, and what --grader-error's grader moves."""
    from sigmatool.render import write_any

    if plot.path is not None:  # the figure (only then is matplotlib imported)
        drawn = result.figure(source, caption=plot.caption, style=plot.style)
        if drawn is not None:
            drawn.save(plot.path)
    view = result.view()
    reading = () if run is None else run.reading
    lines = [*reading]
    if run is not None and run.grader is not None and not getattr(result, "says_grader", False):
        lines.append(run.grader_line())
    if run is not None and run.denoise is not None:
        lines.append(run.denoise_line())
    warnings = result.warnings()
    if view is not None and is_table(out):
        from dataclasses import replace

        from sigmatool.render.notes import headed

        said = headed(view.headline or "", warnings)
        if lines or said != (view.headline or ""):
            view = replace(view, headline="\n".join([*lines, *([said] if said else [])]))
    else:  # the data formats have no headline; the reading is a note already
        note([*lines[len(reading) :], *warnings])
    write_any(result.frame(), out, view, getattr(result, "record", None))


def answer(result: Shown, given: Analysed, s: Run) -> None:
    """Show an analysis's answer (:func:`show`) as ``given`` asks, its figure captioned with its input."""
    show(result, given.out, given.plot, source_of(s), s)


def is_table(out: OutputOptions) -> bool:
    """Whether the output is the table view (on a terminal, or asked for)."""
    from sigmatool.render import resolve_format

    return resolve_format(out.fmt, out.output) == "table"


def source_of(hist: Histogram | Rows | Run) -> str:
    """The input's files as a figure's caption names them."""
    dataset = hist.dataset
    return "" if dataset is None else ", ".join(source.label for source in dataset.sources)


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


def write_rows(
    frame: pl.DataFrame | pl.LazyFrame, path: str, record: Mapping[str, Any] | None = None
) -> None:
    """Rows written to a file of their own (``--export-order``), in the format its extension names,
    atomically, with the ``record`` of what made them."""
    from sigmatool.render import write_any

    write_any(frame, OutputOptions(output=path), record=record)

"""The table view, for people: rounded numbers, shares as percentages, bars, a leading sentence.

A table must read at any terminal width. When it does not fit, bars go first, then headers wrap word by
word, then the value columns are shown in several blocks, each repeating the identifying columns (``G``,
``segment``, ``p_lo``/``p_hi``, ``method``, …), which never shrink; numbers are never cut. Long tables show
their first rows and say how many were left out.

Before that, a view makes its table narrow: ``p_lo``/``p_hi`` read as one range column, and so do the bounds
or the interval of a rate the view names (``42.9–43.5%``); columns the same in every row (and the ``given``
settings of a one-row table) go to a line above it; a view may show fewer rows than the data (repeats
merged) and hide columns, naming them in a footnote (:func:`also_in_data`). The commands' views choose these
so that their default table, and the common variants, are one block at 80 columns.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:  # rich loads only when a table is drawn: data formats never need it
    from rich.text import Text

from sigmatool.render.spark import Sparkline, spark_lines

BAR_WIDTH = 12
BAR_GLYPHS = "█·"  # a bar's full and empty cells; "#." where the output cannot show them
TABLE_ROWS = 40
# Columns that say which row this is: kept in every block, never abbreviated.
KEY_COLUMNS = ("step", "method", "G", "segment", "p_lo", "p_hi", "id", "p", "bin")
# Between two columns rich draws " │ " (padding, rule, padding).
GAP = 3


@dataclass
class View:
    """What the table view adds to a frame: a headline, notes under the table, and how to show columns.

    Plain values only: whatever a view shows was computed by the analysis beforehand.
    """

    headline: str = ""
    footer: list[str] = field(default_factory=list)
    percent: Sequence[str] = ()
    bars: Sequence[str] = ()
    bar_full: float = 1.0  # the value that fills a whole bar; larger values are drawn full
    hide: Sequence[str] = ()
    title: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    keys: Sequence[str] = ()  # identifying columns besides KEY_COLUMNS (the --by columns)
    bar_note: str = ""  # a footer line about the bars, shown only when they are drawn
    spark: Sparkline | None = None  # a sparkline under the headline
    rows: pl.DataFrame | None = None  # the rows shown, when fewer than the data's (repeated rows merged)
    given: Sequence[str] = ()  # columns that restate the request: on the line above the table when constant
    # With several pass-rate columns: the rows that compare them at a glance, shown unless --full asks for
    # every row; ``compact_note`` says where the rest are.
    compact: pl.DataFrame | None = None
    compact_note: str = ""
    spans: Sequence[tuple[str, str, str]] = ()  # (name, low, high): two columns shown as one, ``lo–hi``


DATA_FORMATS = "--format csv, tsv, json or parquet"


def also_in_data(names: Sequence[str]) -> str:
    """The footnote naming columns that the table leaves to the data formats, to fit the terminal."""
    return f"more columns in {DATA_FORMATS}: {', '.join(names)}"


def compared_note(by: Sequence[str]) -> str:
    """The footer of a compact comparison (several columns or --by groups): where the rows it leaves are."""
    whose = "column" if list(by) == ["column"] else "group"
    return f"each {whose}'s bins of p: --full, or the data formats"


# Columns that give a range around a rate (its low end, its high end, the word after the rate's label).
RANGE_ENDS = (("_ci_lo", "_ci_hi", "CI"), ("_lo", "_hi", "allowed"))


def ranges(view: View, columns: Sequence[str], show: Sequence[str]) -> View:
    """``view`` showing the range of each rate in ``show`` (``{rate}_lo``/``_hi`` under --bounds,
    ``{rate}_ci_lo``/``_ci_hi`` under --ci) as one column, ``lo–hi``, labelled after the rate; the ranges of
    the other rates it labels are left to the data formats, to keep the table readable."""
    labels, percent, spans = dict(view.labels), list(view.percent), list(view.spans)
    hide: list[str] = []
    for name in columns:
        for low, high, word in RANGE_ENDS:
            base = name[: -len(low)]
            if not name.endswith(low) or not (base in view.labels or base in view.percent):
                continue
            if base in show and base + high in columns:
                joined = f"{base}{low[:-3]}_range"
                spans.append((joined, name, base + high))
                labels[joined] = " ".join([*view.labels.get(base, base.replace("_", " ")).split(), word])
                if base in view.percent:
                    percent.append(joined)
            else:
                hide += [name, base + high]
            break
    view.labels, view.percent, view.hide, view.spans = (
        labels,
        tuple(percent),
        (*view.hide, *hide),
        tuple(spans),
    )
    if hide:
        view.footer.append(f"the ranges of the other columns are in {DATA_FORMATS}")
    return view


SIGNIFICANT = 4  # digits of a column's largest value below 10,000


def _number(value: Any, name: str, view: View, decimals: int | None = None) -> str:
    """A value for people: shares as percentages, one number of ``decimals`` per column, yes/no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if name in view.percent:
            return percentage(value)
        if abs(value) >= 1e4:
            return f"{value:,.0f}"
        if decimals is None:
            return f"{value:.4g}"
        text = f"{value:,.{decimals}f}"
        if value != 0 and float(text.replace(",", "")) == 0:
            return _below(value, max(decimals, TINY_DECIMALS))
        return text
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


# A number that is not 0 but whose column shows it as 0 reads as below this many decimals' last digit.
TINY_DECIMALS = 3


def _below(value: float, decimals: int) -> str:
    """``<0.001`` (``>-0.001`` below 0): a value too small for ``decimals`` decimals that is not 0."""
    step = f"{10.0**-decimals:.{decimals}f}"
    return f"<{step}" if value > 0 else f">-{step}"


def chance(p: float) -> str:
    """A probability in a sentence, read as the table view reads it: three significant digits, and one
    that the table's three decimals show as 0 but is not 0, as ``<0.001``.

    >>> [chance(v) for v in (0.0, 1.16e-188, 0.0004, 0.0123, 1.0)]
    ['0', '<0.001', '<0.001', '0.0123', '1']
    """
    if p != 0 and abs(p) < 0.5 * 10.0**-TINY_DECIMALS:
        return _below(p, TINY_DECIMALS)
    return f"{p:.3g}"


def percentage(share: float, unit: str = "%") -> str:
    """A share as a percentage of two decimals; one that is not 0 but rounds to it says so (the table view
    and the report write shares this way).

    >>> [percentage(v) for v in (0.0, 3e-17, -3e-17, 0.25)]
    ['0%', '<0.01%', '>-0.01%', '25.00%']
    """
    text = f"{100 * share:.2f}"
    if share == 0:
        return f"0{unit}"
    if text.lstrip("-") == "0.00":
        return f"<0.01{unit}" if share > 0 else f">-0.01{unit}"
    return f"{text}{unit}"


def decimals_of(values: Sequence[Any]) -> int:
    """One number of decimals for a column of floats: the fewest that show every value as it is, at most
    enough for :data:`SIGNIFICANT` digits of the largest value below 10,000.

    >>> decimals_of([1.19, 1.074, 0.93, 0.9056])
    3
    >>> decimals_of([0.0, 0.1, 0.5, 1.0])
    1
    """
    finite = [abs(v) for v in values if isinstance(v, float) and math.isfinite(v) and abs(v) < 1e4]
    if not finite:
        return 0
    largest = max(finite)
    most = max(0, SIGNIFICANT - (math.floor(math.log10(largest)) + 1 if largest >= 1 else 1))
    for d in range(most + 1):
        if all(math.isclose(round(v, d), v, rel_tol=0, abs_tol=1e-12) for v in finite):
            return d
    return most


def _cell(value: Any, name: str, view: View, bars: str, decimals: int | None = None) -> Text:
    """One cell; ``bars`` is the bar's full and empty character, or '' for no bar."""
    from rich.text import Text

    if value is None:
        return Text("–", style="dim")
    text = _number(value, name, view, decimals)
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return Text(text, style="dim")
    if bars and name in view.bars and isinstance(value, float):
        filled = round(max(0.0, min(1.0, value / view.bar_full)) * BAR_WIDTH)
        return (
            Text(f"{text:>7} ")
            + Text(bars[0] * filled, style="cyan")
            + Text(bars[1] * (BAR_WIDTH - filled), style="dim")
        )
    return Text(text)


def _header(name: str, view: View, wrap: int) -> str:
    """The column's label; with ``wrap``, its words re-flowed to about that width (never cutting a word)."""
    label = view.labels.get(name, name.replace("_", " "))
    if not wrap:
        return label
    words = label.split()
    text = " ".join(words)
    width = max(wrap, *(len(w) for w in words))
    while len(textwrap.wrap(text, width)) > 2:  # a header of at most two lines
        width += 1
    return "\n".join(textwrap.wrap(text, width))


def _width(header: str, cells: Sequence[Text]) -> int:
    return max([len(line) for line in header.splitlines()] + [c.cell_len for c in cells] + [1])


@dataclass
class _Layout:
    headers: dict[str, str]
    cells: dict[str, list[Text]]
    blocks: list[list[str]]
    bars: bool


def _blocks(keys: list[str], values: list[str], widths: dict[str, int], limit: int) -> list[list[str]]:
    """Value columns in consecutive blocks that fit within ``limit`` beside the key columns."""
    base = sum(widths[c] + GAP for c in keys)
    blocks: list[list[str]] = [[]]
    used = base
    for name in values:
        need = widths[name] + GAP
        if blocks[-1] and used + need - GAP > limit:
            blocks.append([])
            used = base
        blocks[-1].append(name)
        used += need
    return [keys + block for block in blocks]


def layout(df: pl.DataFrame, view: View, width: int, glyphs: str = BAR_GLYPHS) -> _Layout:
    """Choose bars, header wrapping and blocks so that the table fits ``width`` columns; ``glyphs`` are
    the bars' full and empty characters."""
    columns = [c for c in df.columns if c not in view.hide]
    rows = list(df.select(columns).iter_rows(named=True))
    keys = [c for c in columns if c in KEY_COLUMNS or c in view.keys]
    values = [c for c in columns if c not in keys]
    places = {c: decimals_of([r[c] for r in rows]) for c in columns}
    for bars, wrap in ((True, False), (False, False), (False, True)):
        cells = {c: [_cell(r[c], c, view, glyphs if bars else "", places[c]) for r in rows] for c in columns}
        fit = {c: _width("", cells[c]) if wrap and c not in keys else 0 for c in columns}
        headers = {c: _header(c, view, fit[c]) for c in columns}
        widths = {c: _width(headers[c], cells[c]) for c in columns}
        if sum(widths.values()) + GAP * (len(columns) - 1) <= width:
            return _Layout(headers, cells, [columns], bars)
    return _Layout(headers, cells, _blocks(keys, values, widths, width), bars)


# The pass-rate range of a bin: always one column, ``p``.
RANGE = ("p", "p_lo", "p_hi")


def joined_ranges(df: pl.DataFrame, view: View) -> pl.DataFrame:
    """``df`` with each range (``p_lo`` and ``p_hi`` as ``p``, and the view's spans) shown as one column,
    ``0.1–0.2`` or ``42.9–43.5%``: a range reads as one value, in less width than two columns."""
    for name, low, high in (RANGE, *view.spans):
        if name in df.columns or any(c not in df.columns or c in view.hide for c in (low, high)):
            continue
        texts = span_texts(df[low].to_list(), df[high].to_list(), name in view.percent)
        at = df.columns.index(low)
        df = df.drop(low, high).insert_column(at, pl.Series(name, texts, dtype=pl.String))
    return df


def span_texts(lows: Sequence[Any], highs: Sequence[Any], share: bool) -> list[str | None]:
    """Each ``lo–hi``, in one precision for the column: shares as percentages with the fewest decimals (from
    one, at most two) that keep apart the ends that differ, other numbers as :func:`decimals_of` shows them;
    ends that show the same, once.

    >>> span_texts([0.4287, 1.0], [0.4352, 1.0], True)
    ['42.9–43.5%', '100.0%']
    >>> span_texts([0.4287, 0.0, None], [0.4352, 0.00004, 0.5], True)
    ['42.87–43.52%', '0.00%', None]
    >>> span_texts([0.1, 0.25], [0.2, 0.5], False)
    ['0.10–0.20', '0.25–0.50']
    """
    pairs = [(lo, hi) for lo, hi in zip(lows, highs, strict=True) if lo is not None and hi is not None]
    if share:
        scale, unit = 100.0, "%"
        apart = [(lo, hi) for lo, hi in pairs if lo != hi]
        places = next(
            (d for d in (1, 2) if all(f"{100 * lo:.{d}f}" != f"{100 * hi:.{d}f}" for lo, hi in apart)), 2
        )
    else:
        scale, unit = 1.0, ""
        places = decimals_of([float(v) for pair in pairs for v in pair])
    texts: list[str | None] = []
    for lo, hi in zip(lows, highs, strict=True):
        ends = [] if lo is None or hi is None else [f"{scale * v:.{places}f}" for v in (lo, hi)]
        texts.append(
            None if not ends else f"{ends[0]}{unit}" if ends[0] == ends[1] else f"{'–'.join(ends)}{unit}"
        )
    return texts


def constant_columns(df: pl.DataFrame, view: View) -> tuple[pl.DataFrame, list[str]]:
    """``df`` without the shown columns whose value is the same in every row (two rows or more; one row for
    the columns the view calls ``given``, which leave the table even when unset), and those columns as
    ``label value`` for a line above the table."""
    same, texts = [], []
    for name in df.columns:
        unset = name in view.given and df[name].null_count() == df.height
        if name in view.hide or not (unset or _constant(df, name, name in view.given)):
            continue
        same.append(name)
        if unset:
            continue
        value = df[name][0]
        label = " ".join(view.labels.get(name, name.replace("_", " ")).split())
        texts.append(f"{label} {_number(value, name, view, decimals_of([value]))}")
    return df.drop(same), texts


def _constant(df: pl.DataFrame, name: str, given: bool) -> bool:
    """One value in every row, none of them null; of two rows or more unless the column is ``given``."""
    return df.height >= (1 if given else 2) and not df[name].null_count() and df[name].n_unique() == 1


# A name in a key column (a --col or --by value) longer than this is shortened when the table would not fit
# in one block otherwise, and written out in full under the table.
KEY_WIDTH = 16


def short_names(names: Sequence[str], limit: int = KEY_WIDTH) -> dict[str, str]:
    """A shorter name for each of ``names`` longer than ``limit``, all of them still apart: its start and
    ``…``; else its start, ``…`` and its end; else ``#1``, ``#2`` … in order.

    >>> short_names(["Qwen2.5-Math-7B-Instruct-pass-rate", "DeepSeek-R1-Distill-Qwen-1.5B-pass-rate", "base"])
    {'Qwen2.5-Math-7B-Instruct-pass-rate': 'Qwen2.5-Math-7B…', 'DeepSeek-R1-Distill-Qwen-1.5B-pass-rate': 'DeepSeek-R1-Dis…'}
    >>> short_names(["checkpoint-final-step-1200", "checkpoint-final-step-1400"])
    {'checkpoint-final-step-1200': 'checkpoi…ep-1200', 'checkpoint-final-step-1400': 'checkpoi…ep-1400'}
    >>> short_names(["run-checkpoint-step-1200-rate", "run-checkpoint-step-1400-rate"])
    {'run-checkpoint-step-1200-rate': '#1', 'run-checkpoint-step-1400-rate': '#2'}
    """
    long = [n for n in dict.fromkeys(names) if len(n) > limit]
    kept = {n for n in names if len(n) <= limit}
    tail = (limit - 1) // 2
    for start, end in ((limit - 1, 0), (limit - 1 - tail, tail)):
        found = {n: n[:start] + "…" + (n[-end:] if end else "") for n in long}
        if len(set(found.values())) == len(long) and not kept & set(found.values()):
            return found
    return {n: f"#{i}" for i, n in enumerate(long, 1)}


def _shortened(df: pl.DataFrame, view: View) -> tuple[pl.DataFrame, list[str]]:
    """``df`` with the long names of its key columns shortened (:func:`short_names`), and the lines that
    say what each short name stands for."""
    lines = []
    for name in view.keys:
        if name not in df.columns or df.schema[name] != pl.String:
            continue
        found = short_names([v for v in df[name].unique(maintain_order=True).to_list() if v is not None])
        if not found:
            continue
        df = df.with_columns(pl.col(name).replace(found))
        label = " ".join(view.labels.get(name, name.replace("_", " ")).split())
        lines.append(f"{label}: " + "; ".join(f"{short} = {full}" for full, short in found.items()))
    return df, lines


def print_table(df: pl.DataFrame, view: View, handle: IO[str], width: int) -> None:
    """A readable table with a leading sentence; rounding and colour live only here."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    shown = joined_ranges((df if view.rows is None else view.rows).head(TABLE_ROWS), view)
    console = Console(file=handle, highlight=False, soft_wrap=True, width=max(width, 20))
    # Each line of the headline (one per pass-rate column, with several) is wrapped on its own.
    for line in [part for text in view.headline.splitlines() for part in textwrap.wrap(text, width)]:
        console.print(Text(line, style="bold"))
    # Block characters need a UTF-8 stream, and a console whose fonts have them (not legacy Windows).
    unicode = console.encoding.startswith("utf") and not console.legacy_windows
    if not console.encoding.startswith("utf") and hasattr(handle, "reconfigure"):
        # An ASCII or Latin-1 stream: characters it cannot encode (bars, σ, …) become '?', not a crash.
        handle.reconfigure(errors="replace")
    if view.spark is not None:
        for line in spark_lines(view.spark, width, unicode):
            console.print(Text(line))
    shown, same = constant_columns(shown, view)
    if same:
        lead = "in every row: " if shown.height > 1 else "given: "
        for line in textwrap.wrap(lead + "; ".join(same), width):
            console.print(Text(line))
    plan = layout(shown, view, width, BAR_GLYPHS if unicode else "#.")
    names: list[str] = []
    if len(plan.blocks) > 1:  # long names in the key columns take the width: shortened, written out below
        short, names = _shortened(shown, view)
        if names:
            shown = short
            plan = layout(shown, view, width, BAR_GLYPHS if unicode else "#.")
    numeric = {c for c, dtype in shown.schema.items() if dtype.is_numeric()}
    for number, block in enumerate(plan.blocks):
        if number:
            console.print()
        table = Table(title=view.title or None, show_edge=False, header_style="bold", pad_edge=False)
        for name in block:
            table.add_column(plan.headers[name], justify="right" if name in numeric else "left", no_wrap=True)
        for i in range(shown.height):
            table.add_row(*[plan.cells[name][i] for name in block])
        natural = sum(_width(plan.headers[c], plan.cells[c]) for c in block) + GAP * (len(block) - 1)
        console.print(table, width=max(width, natural), crop=False)
    footer = [*names, *view.footer, *([view.bar_note] if view.bar_note and plan.bars and view.bars else [])]
    if (df if view.rows is None else view.rows).height > TABLE_ROWS:
        footer.append(
            f"first {TABLE_ROWS} of {df.height:,} rows shown; use --format csv or -o FILE for all of them"
        )
    for line in footer:
        for part in textwrap.wrap(line, width):
            console.print(Text(part, style="dim"))

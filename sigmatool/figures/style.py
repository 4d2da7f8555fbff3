"""The house style of sigmatool's figures: sizes for a paper column, a colour-blind-safe palette, captions.

Colours are the Okabe–Ito palette (M. Okabe and K. Ito, "Color Universal Design", 2008), distinguishable
under the common colour-vision deficiencies; lines differ by dash and marker as well as colour, so a figure
also reads in grey. Text is 8 pt at the printed size: a 3.4 in figure fits one column of a two-column paper,
a 7 in figure the full width, both readable at 100 %.

Two looks (:class:`Look`): ``screen``, the figures above, and ``paper``, every figure one column of a
two-column template wide (3.25 in), its panels stacked, serif text in 8–9 pt close to LaTeX's (Computer
Modern where CMU Serif or Latin Modern is installed, else matplotlib's bundled DejaVu Serif; no TeX needed),
thinner lines and legends above the axes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import matplotlib
import polars as pl
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from sigmatool.errors import UsageError
from sigmatool.options.figures import FigureStyle

SINGLE_COLUMN = 3.4  # inches
DOUBLE_COLUMN = 7.0
PANEL_HEIGHT = 2.3
FONT_SIZE = 8.0
SMALL_SIZE = 7.0
LABEL_MAX = 32  # characters of a group's name in a legend or panel title
# Groups (columns, --by values) one figure draws: past this, lines and panels stop being told apart and the
# drawing time grows with every panel; the first ones in the table's order are drawn, and the caption says so.
MAX_SERIES = 6
Inside = Literal["upper right", "upper center", "lower right"]  # where a legend sits inside the axes

BLACK = "#000000"
ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
PURPLE = "#CC79A7"
GREY = "#7F7F7F"
LIGHT = "#E8E8E8"
# Groups take the palette in this order; yellow comes last, it is faint on white.
GROUP_COLOURS = (BLUE, VERMILLION, GREEN, PURPLE, ORANGE, SKY_BLUE, BLACK, YELLOW)
DASHES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
METHOD_COLOURS = {"grpo": BLUE, "drgrpo": VERMILLION, "dapo": GREEN}
METHOD_LABELS = {"grpo": "GRPO", "drgrpo": "Dr. GRPO", "dapo": "DAPO"}
ESTIMATOR_LABELS = {"plugin": "plug-in", "unbiased": "unbiased"}

RC: dict[Any, Any] = {
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica", "sans-serif"],
    "font.size": FONT_SIZE,
    "axes.titlesize": FONT_SIZE,
    "axes.labelsize": FONT_SIZE,
    "xtick.labelsize": SMALL_SIZE,
    "ytick.labelsize": SMALL_SIZE,
    "legend.fontsize": SMALL_SIZE,
    "legend.frameon": False,
    "legend.handlelength": 2.2,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.linewidth": 0.6,
    "axes.grid": True,
    "grid.color": "#DDDDDD",
    "grid.linewidth": 0.5,
    "axes.axisbelow": True,
    "axes.prop_cycle": cycler(color=GROUP_COLOURS),
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.minor.width": 0.4,
    "ytick.minor.width": 0.4,
    "lines.linewidth": 1.2,
    "lines.markersize": 3.5,
    "patch.linewidth": 0.0,
    "hatch.linewidth": 0.5,
    "figure.dpi": 100,
    "savefig.dpi": 200,
    "savefig.facecolor": "white",
    # Byte-identical files: SVG ids hash this salt instead of a random one; text stays text (smaller,
    # selectable, editable) and PDF fonts are embedded as TrueType.
    "svg.hashsalt": "sigmatool",
    "svg.fonttype": "none",
    "pdf.fonttype": 42,
    # User text (file names, column values) is shown as given: a '$' must not start mathtext.
    "axes.formatter.use_mathtext": False,
    "text.parse_math": False,
}


PAPER_COLUMN = 3.25  # inches: one column of the common two-column templates (ACM, IEEE, NeurIPS's two)
PAPER_FONT_SIZE = 9.0
PAPER_SMALL_SIZE = 8.0
PAPER_RC: dict[Any, Any] = {
    **RC,
    # Computer Modern where it is installed as a Unicode font (CMU Serif, Latin Modern), else DejaVu Serif
    # (bundled with matplotlib), which also draws any glyph the first lacks. Not matplotlib's cmr10: its
    # TeX encoding draws _ < > | { } " ² ± as other glyphs (a_b as a˙b, R² as Rffl). Math, if any, in cm.
    "font.family": ["serif", "DejaVu Serif"],
    "font.serif": ["CMU Serif", "Latin Modern Roman", "DejaVu Serif"],
    "mathtext.fontset": "cm",
    "text.usetex": False,
    "font.size": PAPER_FONT_SIZE,
    "axes.titlesize": PAPER_FONT_SIZE,
    "axes.labelsize": PAPER_FONT_SIZE,
    "xtick.labelsize": PAPER_SMALL_SIZE,
    "ytick.labelsize": PAPER_SMALL_SIZE,
    "legend.fontsize": PAPER_SMALL_SIZE,
    "legend.handlelength": 1.8,
    "legend.columnspacing": 1.0,
    "axes.linewidth": 0.5,
    "grid.linewidth": 0.35,
    "xtick.major.width": 0.5,
    "ytick.major.width": 0.5,
    "xtick.minor.width": 0.35,
    "ytick.minor.width": 0.35,
    "lines.linewidth": 0.9,
    "lines.markersize": 2.8,
    "hatch.linewidth": 0.35,
    "savefig.dpi": 300,
}


@dataclass(frozen=True)
class Look:
    """How a figure is drawn: its rcParams, its width (``None``: as the figure asks), the factor on its
    height, the size of its caption and of the notes inside its axes, and whether its panels are stacked
    and its legends set above the axes (paper) or side by side and inside (screen)."""

    name: str
    rc: Mapping[Any, Any]
    width: float | None
    scale: float
    small: float
    note: float
    stacked: bool

    def size(self, width: float, height: float, panels: int = 1) -> tuple[float, float]:
        """The (width, height) in inches of a figure that asks for ``width`` × ``height`` on screen, with
        ``panels`` panels side by side."""
        return (width, height) if self.width is None else (self.width, height * self.scale * panels)

    def grid(self, panels: int) -> tuple[int, int]:
        """(rows, columns) of ``panels`` panels that the screen draws side by side."""
        return (panels, 1) if self.stacked else (1, panels)

    def captions(self, caption: bool | None) -> bool:
        """Whether a figure draws its caption: as asked, else on screen and not on paper, whose captions
        LaTeX sets."""
        return not self.stacked if caption is None else caption

    @property
    def sides(self) -> tuple[str, str]:
        """How a caption names the first and the second of two panels."""
        return ("top", "bottom") if self.stacked else ("left", "right")


SCREEN = Look("screen", RC, None, 1.0, SMALL_SIZE, SMALL_SIZE - 1, stacked=False)
# On paper every panel is one column wide, with the aspect of the screen's one-column figure (height by
# aspect), and panels that the screen draws side by side are stacked.
PAPER = Look(
    "paper", PAPER_RC, PAPER_COLUMN, PAPER_COLUMN / SINGLE_COLUMN, PAPER_SMALL_SIZE, PAPER_SMALL_SIZE, True
)
LOOKS = {FigureStyle.screen: SCREEN, FigureStyle.paper: PAPER}


def look_of(style: str) -> Look:
    """The look a ``--style`` names: ``screen`` or ``paper``."""
    try:
        return LOOKS[FigureStyle(style)]
    except ValueError:
        raise UsageError(f"a figure's style is screen or paper, not {style!r}") from None


@contextmanager
def house_style(look: Look = SCREEN) -> Iterator[None]:
    """Apply the look's rcParams for the duration of the block."""
    with matplotlib.rc_context(dict(look.rc)):
        yield


def new_figure(width: float, height: float, look: Look = SCREEN, panels: int = 1) -> Figure:
    """A figure with constrained layout on the Agg canvas, outside pyplot's global state; ``width`` ×
    ``height`` are the screen's inches for ``panels`` panels side by side, which ``look`` maps to its own."""
    with house_style(look):
        fig = Figure(figsize=look.size(width, height, panels), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def wrap_caption(text: str, width: float, size: float = SMALL_SIZE) -> list[str]:
    """The caption in lines that fit a figure ``width`` inches wide at ``size`` points, each line measured
    in the font it is drawn in (a count of characters overflowed on names and digits, which are wider)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    measure, font = TextToPath().get_text_width_height_descent, FontProperties(size=size)
    room = 0.97 * width * 72  # points: the caption starts at 1 % of the width
    lines: list[str] = []
    line = ""
    for word in text.split():
        longer = f"{line} {word}" if line else word
        if line and measure(longer, font, ismath=False)[0] > room:
            lines.append(line)
            longer = word
        line = longer
    return [*lines, line] if line else lines


def add_caption(fig: Figure, text: str, look: Look = SCREEN) -> None:
    """Draw ``text`` under the axes: the figure grows by the caption's height and keeps its axes' size."""
    width, height = fig.get_size_inches()
    lines = wrap_caption(text, width, look.small)
    if not lines:
        return
    extra = (len(lines) * look.small * 1.3 + 6) / 72
    fig.set_size_inches(width, height + extra)
    share = extra / (height + extra)
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.set(rect=(0.0, share, 1.0, 1.0 - share))  # type: ignore[call-arg]
    fig.text(0.01, share - 3 / 72 / (height + extra), "\n".join(lines), va="top", ha="left", size=look.small)


def legend_above(ax: Axes, ncols: int = 2, **kwargs: Any) -> None:
    """The axes' legend in a block above them, clear of the data (constrained layout makes room)."""
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.01), ncols=ncols, borderaxespad=0.0, **kwargs)


def legend_at(ax: Axes, loc: Inside, look: Look = SCREEN, beside: bool = False, **kwargs: Any) -> None:
    """The axes' legend outside them, never on the data: above them (``beside``: to their right, for axes
    that carry a title). ``loc`` is kept for the callers that once placed it inside; with several series a
    legend inside the axes sat on the lines."""
    labels = kwargs.get("labels") or ax.get_legend_handles_labels()[1]
    narrow = len(labels) <= 3 and max((len(str(x)) for x in labels), default=0) <= LABEL_MAX // 2
    if beside and (narrow or not look.stacked):
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kwargs)
    elif beside:  # on paper, many or long names beside the axes leave them no room: one per line above
        legend_above(ax, int(kwargs.pop("ncols", 1)), **kwargs)
    else:
        legend_above(ax, int(kwargs.pop("ncols", 2 if look.stacked else 1)), **kwargs)


def percent_axis(ax: Axes, which: str = "y", decimals: int = 0) -> None:
    """Ticks of a [0, 1] share shown as percentages (the label says '(%)'), each the value it marks: at
    least ``decimals`` decimals, and as many more as the tick needs (2.5, not 2, at a 2.5 % step)."""

    def label(v: float, _pos: int | None = None) -> str:
        exact = f"{round(100 * v, 9):g}"
        fixed = f"{100 * v:.{decimals}f}"
        return fixed if float(fixed) == float(exact) else exact

    (ax.yaxis if which == "y" else ax.xaxis).set_major_formatter(FuncFormatter(label))


def log2_axis(ax: Axes, values: Sequence[float]) -> None:
    """A base-2 log x axis with whole-number ticks at the powers of two inside ``values``' range."""
    ax.set_xscale("log", base=2)
    finite = [v for v in values if math.isfinite(v) and v > 0]
    if finite:
        lo, hi = math.floor(math.log2(min(finite))), math.ceil(math.log2(max(finite)))
        ax.set_xticks([2.0**e for e in range(lo, hi + 1)])
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.xaxis.set_minor_locator(NullLocator())


def log_count_axis(ax: Axes) -> None:
    """A base-10 log y axis with plain whole-number tick labels (2, 10, 100, …)."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.yaxis.set_minor_locator(NullLocator())


def g_text(label: object) -> str:
    """A group size for people: ``inf`` is ∞."""
    text = str(label)
    return "∞" if text in ("inf", "infinity") else text


def require(frame: pl.DataFrame, columns: Sequence[str], figure: str) -> None:
    """Every column the figure reads is present; else one line naming the missing and the present ones."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise UsageError(
            f"the {figure} figure needs column(s) {', '.join(missing)}; the frame has: {', '.join(frame.columns)}"
        )
    if frame.height == 0:
        raise UsageError(f"the {figure} figure needs at least one row")


def shorten(label: str, most: int = LABEL_MAX) -> str:
    """A label of at most ``most`` characters: a long one keeps its end (a file's name) after an ellipsis.

    >>> shorten("/data/runs/2025-06/bigmath_solve_rates.parquet", 30)
    '…6/bigmath_solve_rates.parquet'
    """
    return label if len(label) <= most else "…" + label[-(most - 1) :]


def groups(frame: pl.DataFrame, by: Sequence[str]) -> list[tuple[str, pl.DataFrame]]:
    """(label, rows) per ``by`` group in order of first appearance; one unlabelled group without ``by``.

    Labels longer than :data:`LABEL_MAX` characters are shortened (:func:`shorten`), so that legends and
    panel titles leave room for the axes.
    """
    require(frame, by, "grouped")
    if not by:
        return [("", frame)]
    out = []
    for keys, part in frame.group_by(list(by), maintain_order=True):
        out.append((shorten(_named(keys)), part))
    return out


def _named(keys: Sequence[object]) -> str:
    """A group's name from its ``by`` values: ``geometry · 2024``."""
    return " · ".join("null" if k is None else str(k) for k in keys)


def drawn(frame: pl.DataFrame, by: Sequence[str]) -> tuple[pl.DataFrame, str]:
    """The rows of the first :data:`MAX_SERIES` ``by`` groups (in order of first appearance: the order the
    columns were given, the table's order), and the caption's sentence naming what is drawn ("" when every
    group is).

    >>> rows = pl.DataFrame({"column": [f"m{i}" for i in range(8)], "x": range(8)})
    >>> part, said = drawn(rows, ["column"])
    >>> part.height, said
    (6, ' Drawn: the first 6 of 8 columns in the order given (m0, m1, m2, m3, m4, m5); the tables hold all 8.')
    """
    if not by:
        return frame, ""
    parts = frame.partition_by(list(by), maintain_order=True)
    if len(parts) <= MAX_SERIES:
        return frame, ""
    kept = parts[:MAX_SERIES]
    names = ", ".join(_named(part.select(by).row(0)) for part in kept)
    given = {"column": "columns", "input": "inputs"}.get(by[0]) if len(by) == 1 else None
    noun = f"{given} in the order given" if given else f"groups of {' · '.join(by)} as the table lists them"
    sentence = (
        f" Drawn: the first {MAX_SERIES} of {len(parts)} {noun} ({names}); the tables hold all {len(parts)}."
    )
    return pl.concat(kept), sentence


def group_looks(labels: Sequence[str]) -> dict[str, tuple[str, str, str]]:
    """The colour, dash and marker of each group, by its name: one mapping for every figure. The names,
    sorted, take the palette in turn (past its end, with another dash), so that every figure that draws the
    same groups (a report's) gives each the same colour, whatever order it draws them in.

    >>> looks = group_looks(["Qwen", "DeepSeek"])
    >>> looks["DeepSeek"] == (BLUE, "-", "o"), looks["Qwen"] == (VERMILLION, "-", "s")
    (True, True)
    """
    ordered = sorted(dict.fromkeys(labels))
    colours, dashes = len(GROUP_COLOURS), len(DASHES)
    return {
        name: (GROUP_COLOURS[i % colours], DASHES[(i // colours) % dashes], MARKERS[i % len(MARKERS)])
        for i, name in enumerate(ordered)
    }

"""Figure and report files: ``--plot FILE`` beside a command's output, and ``sigmatool report``'s page.

Formats follow the file's extension (any case). Nothing here imports polars, numpy or matplotlib.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from enum import Enum
from pathlib import PurePath

from sigmatool.errors import UsageError
from sigmatool.options.inputs import InputOptions

FIGURE_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
REPORT_FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md"}


def figure_format(path: str, option: str = "--plot") -> str:
    """``png``, ``svg`` or ``pdf`` from the file's extension; else a usage error."""
    fmt = FIGURE_FORMATS.get(os.path.splitext(path)[1].lower())
    if fmt is None:
        raise UsageError(f"{option} {path}: give a file name ending in .png, .svg or .pdf")
    return fmt


class FigureStyle(str, Enum):
    """How a figure looks: ``screen`` (sized for reading at 100 %) or ``paper`` (one column of a two-column
    template, serif text like LaTeX's, no caption unless asked)."""

    screen = "screen"
    paper = "paper"


@dataclass(frozen=True)
class PlotOptions:
    """Where to draw the command's figure (None: no figure), in which style, and whether its caption is drawn
    into it (None: as the style has it, on screen figures and not on paper ones); the extension is checked
    here."""

    path: str | None = None
    caption: bool | None = None
    style: FigureStyle = FigureStyle.screen

    def __post_init__(self) -> None:
        if self.path is not None:
            figure_format(self.path)
        if self.style not in tuple(FigureStyle):
            raise UsageError(f"--style is screen or paper, not {self.style!r}")
        object.__setattr__(self, "style", FigureStyle(self.style))

    @property
    def output(self) -> tuple[str, str | None]:
        """The (option, path) pair that :func:`sigmatool.options.check_outputs` keeps apart from the rest."""
        return ("--plot", self.path)


@dataclass(frozen=True)
class ReportFile:
    """``sigmatool report``'s output: a file (never stdout) and its format, ``html`` or ``md``."""

    path: str
    fmt: str | None = None  # None: from the extension

    def __post_init__(self) -> None:
        if self.path in ("", "-"):
            raise UsageError(
                "-o FILE: the report is a file, FILE.html (one page) or FILE.md (with its figures); give its name"
            )
        if self.fmt is not None and self.fmt not in ("html", "md"):
            raise UsageError(f"a report's format is html or md, not {self.fmt!r}")
        if self.fmt is None:
            suffix = os.path.splitext(self.path)[1].lower()
            if suffix not in REPORT_FORMATS:
                raise UsageError(
                    f"-o {self.path}: cannot tell the format from {suffix or 'no extension'!r}; "
                    "end the name in .html or .md"
                )
            object.__setattr__(self, "fmt", REPORT_FORMATS[suffix])

    def check_plan(
        self, plan_budget: float | None, inputs: InputOptions, preflight: str | None = None
    ) -> None:
        """--plan-budget and --preflight-config describe one input: one DATA, one --col and no --by."""
        one = inputs.by or len(inputs.paths) > 1 or inputs.cols
        if plan_budget is not None and one:
            raise UsageError("--plan-budget plans one input: give one DATA, one --col and no --by")
        if preflight is not None and one:
            raise UsageError(
                "--preflight-config describes the loop over one input: give one DATA, one --col and no --by"
            )

    @property
    def format(self) -> str:
        return self.fmt or "html"


def report_labels(paths: tuple[str, ...]) -> list[str | None]:
    """Each input's name in the report: its file name (a glob as given); where names repeat, as many of
    the path's last parts as tell them apart. None for stdin (the report calls it <stdin>)."""
    if not paths:
        return []
    files = [p if p == "-" or glob.has_magic(p) else os.path.realpath(p) for p in paths]
    if len(set(files)) != len(files):
        raise UsageError(
            "a DATA is given twice: each DATA is one input of the report, compared with the others"
        )
    parts = [(p,) if glob.has_magic(p) else PurePath(p).parts or (p,) for p in paths]
    for depth in range(1, max(len(x) for x in parts) + 1):
        names = [str(PurePath(*x[-depth:])) for x in parts]
        if len(set(names)) == len(names):
            break
    return [None if p == "-" else name for name, p in zip(names, paths, strict=True)]

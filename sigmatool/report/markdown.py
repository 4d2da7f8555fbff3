"""The report as Markdown (CommonMark with pipe tables), its figures as files in a folder beside it."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

from sigmatool.errors import OutputError, UsageError
from sigmatool.figures import write_atomic
from sigmatool.options import check_folder
from sigmatool.report.page import Page, Table

FIGURE_FORMATS = ("svg", "png")
# Every ASCII punctuation mark that can start Markdown or HTML markup; a backslash makes it literal.
_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~&$-])")


def md(text: object) -> str:
    """User text as literal Markdown on one line."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def table_md(caption: str, t: Table) -> str:
    align = "|".join("--:" if num else ":--" for num in t.numeric)
    lines = [f"*{md(caption)}*", "", "| " + " | ".join(md(h) for h in t.headings) + " |", f"|{align}|"]
    for i, row in enumerate(t.rows):
        if t.omitted and i == len(t.rows) // 2:
            lines.append(
                "| " + " | ".join([f"… {t.omitted:,} rows not shown …", *[""] * (len(row) - 1)]) + " |"
            )
        lines.append("| " + " | ".join(md(v) for v in row) + " |")
    return "\n".join(lines)


def render_markdown(page: Page, figures: dict[str, str]) -> str:
    """The report's text; ``figures`` maps a plot's key to the relative link of its file."""
    out = [
        f"# {md(page.title)}",
        "",
        page.lede,
        "",
        "## Input",
        "",
        table_md("Inputs", page.inputs),
        "",
    ]
    out += [f"- {k}: {md(v)}" for k, v in page.settings]
    out += [f"- note: {md(label)}: {md(note)}" for label, note in page.notes]
    out += ["", "## In short", ""]
    for h in page.headlines:
        out += [f"### {md(h.label)}", "", *(f"- {s}" for s in h.sentences), ""]
    for section in page.sections:
        out += [f"## {section.title}", "", section.intro, ""]
        if section.plot is not None:
            plot = page.plots[section.plot]
            out += [f"![{section.title}]({figures[section.plot]})", "", f"*{md(plot.caption)}*", ""]
        for caption, t in section.tables:
            out += [table_md(caption, t), ""]
    out += ["---", "", page.footer, ""]
    return "\n".join(out)


def write_markdown(page: Page, path: Path, figure_format: str = "svg") -> Path:
    """Write ``path`` and its figures into ``<stem>_figures/`` beside it (created if needed), atomically each."""
    if figure_format not in FIGURE_FORMATS:
        raise UsageError(f"Markdown figures are svg or png, not {figure_format!r}")
    check_folder(str(path), "-o")
    folder = path.with_name(f"{path.stem}_figures")
    try:
        folder.mkdir(exist_ok=True)
    except OSError as exc:
        raise OutputError(f"-o {path}: cannot make the figures' folder {folder}: {exc.strerror}") from None
    links = {}
    for key, plot in page.plots.items():
        plot.save(folder / f"{key}.{figure_format}", option="-o")
        links[key] = quote(f"{folder.name}/{key}.{figure_format}")
    write_atomic(path, render_markdown(page, links).encode("utf-8"), option="-o")
    return path

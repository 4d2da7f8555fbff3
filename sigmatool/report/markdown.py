"""The report as Markdown (CommonMark with pipe tables), its figures as files in a folder beside it."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

from sigmatool.errors import OutputError, UsageError
from sigmatool.figures import write_atomic
from sigmatool.options import check_folder
from sigmatool.report.page import Page, Table, provenance_table

FIGURE_FORMATS = ("png", "svg")
# What can start markup in the middle of a line (CommonMark, and GitHub's ~strike~ and $math$): emphasis,
# code, links, HTML and autolinks, a backslash itself. A line never starts with user text here, so the
# marks that matter only at a line's start (#, -, +, 1.) need nothing; () and - stay as they are.
_SPECIAL = re.compile(r"([\\`*\[\]<>~$])")
# An underscore is emphasis only at a word's edge (snake_case inside a word is literal text).
_EDGE_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")


def md(text: object, cell: bool = False) -> str:
    """User text as literal Markdown on one line; ``cell``: in a pipe table, where ``|`` ends the cell."""
    out = _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))
    out = _ENTITY.sub(r"\\&", _EDGE_UNDERSCORE.sub(r"\\_", out))
    return out.replace("|", "\\|") if cell else out


def table_md(caption: str, t: Table) -> str:
    align = "|".join("--:" if num else ":--" for num in t.numeric)
    lines = [f"*{md(caption)}*", "", "| " + " | ".join(md(h, True) for h in t.headings) + " |", f"|{align}|"]
    for i, row in enumerate(t.rows):
        if t.omitted and i == len(t.rows) // 2:
            lines.append(
                "| " + " | ".join([f"… {t.omitted:,} rows not shown …", *[""] * (len(row) - 1)]) + " |"
            )
        lines.append("| " + " | ".join(md(v, True) for v in row) + " |")
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
    out += [f"- note: {md(note)}" for note in page.notes]
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
    out += _provenance(page)
    out += ["---", "", page.footer, ""]
    return "\n".join(out)


def _provenance(page: Page) -> list[str]:
    """The version, command line, time and input files (with sizes and checksums) that made the page."""
    made = page.provenance
    if made is None:
        return []
    out = ["## Provenance", ""]
    for name, value in made.rows():
        out.append(
            f"- {name}: `{value}`" if name == "command" and "`" not in value else f"- {name}: {md(value)}"
        )
    return [*out, "", table_md("Input files", provenance_table(made)), ""]


def write_markdown(page: Page, path: Path, figure_format: str = "png") -> Path:
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

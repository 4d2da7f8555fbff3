"""The report as one self-contained HTML page: inline SVG figures, inline styles, no script, nothing fetched.

Every user-provided string (labels, file names, column names and values) is escaped where it is written.
"""

from __future__ import annotations

import html
import re

from sigmatool.figures import Plot
from sigmatool.report.build import Report
from sigmatool.report.css import CSS
from sigmatool.report.sections import LEDE, Section, footer_text, input_table, sections, settings
from sigmatool.report.tables import Table

_PROLOGUE = re.compile(r"\A.*?(?=<svg\b)", re.DOTALL)
_ID = re.compile(r'\bid="([^"]+)"')
_HREF = re.compile(r'xlink:href="#([^"]+)"')
_URL = re.compile(r"url\(#([^)]+)\)")
_SIZE = re.compile(r'<svg\b[^>]*?\bwidth="([0-9.]+)pt"')
PX_PER_PT = 4 / 3
# Wide figures keep at least this width on a phone (their box scrolls sideways), so text stays legible.
MIN_WIDE_PX = 520
ENLARGE = 1.35  # on a wide screen a figure may grow to this much of its printed size
_NUM = ' class="num"'
_WRAP = ' class="wrap"'


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def inline_svg(svg: str, prefix: str, label: str) -> str:
    """An SVG file's text for embedding in HTML: no XML prologue, ids prefixed (several figures share
    one document), sized to the page and labelled for screen readers."""
    body = _PROLOGUE.sub("", svg, count=1)
    body = _ID.sub(lambda m: f'id="{prefix}-{m.group(1)}"', body)
    body = _HREF.sub(lambda m: f'xlink:href="#{prefix}-{m.group(1)}"', body)
    body = _URL.sub(lambda m: f"url(#{prefix}-{m.group(1)})", body)
    size = _SIZE.search(body)
    natural = float(size.group(1)) * PX_PER_PT if size else 600.0
    style = f"max-width:{ENLARGE * natural:.0f}px;min-width:{min(0.92 * natural, MIN_WIDE_PX):.0f}px"
    return body.replace("<svg ", f'<svg role="img" aria-label="{esc(label)}" style="{style}" ', 1)


def figure_html(key: str, plot: Plot) -> str:
    svg = inline_svg(plot.svg(), f"fig-{key}", plot.caption)
    return (
        f'<figure class="plot" id="figure-{key}"><div class="plot-frame">{svg}</div>'
        f"<figcaption>{esc(plot.caption)}</figcaption></figure>"
    )


def table_html(caption: str, t: Table) -> str:
    """A table in a box that scrolls sideways on a narrow screen; long cells wrap."""
    head = "".join(
        f'<th scope="col"{_NUM if num else ""} title="{esc(col)}">{esc(name)}</th>'
        for col, name, num in zip(t.columns, t.headings, t.numeric, strict=True)
    )
    lines = []
    for i, row in enumerate(t.rows):
        if t.omitted and i == len(t.rows) // 2:
            gap = f"… {t.omitted:,} rows not shown …"
            lines.append(f'<tr class="gap"><td colspan="{len(t.columns)}">{gap}</td></tr>')
        cells = "".join(
            f"<td{_NUM if num else _WRAP if len(value) > 40 else ''}>{esc(value)}</td>"
            for value, num in zip(row, t.numeric, strict=True)
        )
        lines.append(f"<tr>{cells}</tr>")
    return (
        f'<div class="scroll" role="region" aria-label="{esc(caption)}" tabindex="0"><table>'
        f"<caption>{esc(caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(lines)}</tbody></table></div>"
    )


def _input_section(report: Report) -> str:
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in settings(report))
    notes = [f"{i.label}: {note}" for i in report.inputs for note in i.notes]
    listed = "".join(f"<li>{esc(n)}</li>" for n in notes)
    return (
        '<section id="input"><h2>Input</h2>'
        + table_html("Inputs", input_table(report))
        + f'<dl class="settings">{rows}</dl>'
        + (f'<ul class="notes">{listed}</ul>' if notes else "")
        + "</section>"
    )


def _headline_section(report: Report) -> str:
    cards = "".join(
        f'<article class="card"><h3>{esc(h.label)}</h3><ul>'
        + "".join(f"<li>{esc(s)}</li>" for s in h.sentences)
        + "</ul></article>"
        for h in report.headlines
    )
    return f'<section id="summary"><h2>In short</h2><div class="cards">{cards}</div></section>'


def _section(report: Report, section: Section) -> str:
    parts = [f'<section id="{section.key}"><h2>{esc(section.title)}</h2><p>{esc(section.intro)}</p>']
    if section.plot is not None:
        parts.append(figure_html(section.key, report.plots[section.plot]))
    parts += [table_html(caption, t) for caption, t in section.tables]
    parts.append("</section>")
    return "".join(parts)


def render_html(report: Report) -> str:
    """The whole page."""
    body = sections(report)
    links = [("input", "Input"), ("summary", "In short"), *((s.key, s.title) for s in body)]
    nav = "".join(f'<a href="#{key}">{esc(title)}</a>' for key, title in links)
    title = esc(report.options.title)
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="color-scheme" content="light">',
            # An empty icon: without it a browser asks the server for /favicon.ico.
            '<link rel="icon" href="data:,">',
            f"<title>{title}: {esc(', '.join(i.label for i in report.inputs))}</title>",
            f"<style>{CSS}</style>",
            "</head>",
            "<body>",
            f'<header><h1>{title}</h1><p class="lede">{esc(LEDE)}</p><nav aria-label="Sections">{nav}</nav></header>',
            "<main>",
            _input_section(report),
            _headline_section(report),
            *(_section(report, s) for s in body),
            "</main>",
            f"<footer><p>{esc(footer_text())}</p></footer>",
            "</body>",
            "</html>",
            "",
        ]
    )

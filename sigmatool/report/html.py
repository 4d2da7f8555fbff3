"""The report as one self-contained HTML page: inline SVG figures, inline styles, no script, nothing fetched.

Every user-provided string (labels, file names, column names and values) is escaped where it is written.
The style sheet uses system fonts only (nothing is fetched), one column that fits a phone, tables that
scroll sideways, and a print layout without navigation or scroll boxes.
"""

from __future__ import annotations

import html
import re

from sigmatool.figures import Plot
from sigmatool.report.page import Page, Section, Table, provenance_table

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

CSS = """
:root { color-scheme: light; --ink: #1b1b1b; --muted: #5a5a5a; --rule: #d9d9d9; --tint: #f4f6f8;
  --accent: #0072b2; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body { margin: 0 auto; max-width: 62rem; padding: 1rem 1.25rem 3rem; color: var(--ink); background: #fff;
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "DejaVu Sans", sans-serif; }
h1 { font-size: 1.7rem; line-height: 1.2; margin: 1rem 0 0.25rem; }
h2 { font-size: 1.3rem; margin: 2.25rem 0 0.5rem; padding-top: 0.5rem; border-top: 1px solid var(--rule); }
h3 { font-size: 1.05rem; margin: 0 0 0.4rem; overflow-wrap: anywhere; }
p, li { max-width: 46rem; }
.lede { color: var(--muted); margin-top: 0; }
nav { font-size: 0.95rem; margin: 0.75rem 0; display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; }
nav a { color: var(--accent); text-decoration: none; }
nav a:hover { text-decoration: underline; }
dl.settings { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; margin: 0.75rem 0; }
dl.settings dt { color: var(--muted); }
dl.settings dd { margin: 0; overflow-wrap: anywhere; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(17rem, 1fr)); gap: 1rem; }
.card { background: var(--tint); border-radius: 0.5rem; padding: 0.9rem 1rem; }
.card ul { margin: 0; padding-left: 1.1rem; }
.card li + li { margin-top: 0.4rem; }
.notes { color: var(--muted); font-size: 0.9rem; }
figure.plot { margin: 1rem 0 1.25rem; }
.plot-frame { overflow-x: auto; }
.plot-frame svg { display: block; width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: 0.9rem; margin-top: 0.4rem; max-width: 46rem; }
.scroll { overflow-x: auto; margin: 0.5rem 0 1rem; border: 1px solid var(--rule); border-radius: 0.35rem; }
.scroll:focus { outline: 2px solid var(--accent); }
table { border-collapse: collapse; font-size: 0.85rem; font-variant-numeric: tabular-nums; width: 100%; }
th, td { padding: 0.3rem 0.6rem; text-align: left; white-space: nowrap; border-bottom: 1px solid var(--rule); }
th { background: var(--tint); font-weight: 600; vertical-align: bottom; }
td.num, th.num { text-align: right; }
caption { caption-side: top; text-align: left; padding: 0.35rem 0.6rem; color: var(--muted); font-size: 0.85rem; }
tbody tr:nth-child(even) td { background: #fafbfc; }
tr.gap td { text-align: center; color: var(--muted); font-style: italic; }
td.wrap { white-space: normal; min-width: 12rem; overflow-wrap: anywhere; }
footer { margin-top: 3rem; color: var(--muted); font-size: 0.85rem; border-top: 1px solid var(--rule);
  padding-top: 0.75rem; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace;
  font-size: 0.9em; }
@media (max-width: 40rem) {
  body { padding: 0.5rem 0.75rem 2rem; font-size: 15px; }
  h1 { font-size: 1.4rem; }
  dl.settings { grid-template-columns: 1fr; }
  dl.settings dd { margin-bottom: 0.4rem; }
}
@media print {
  @page { margin: 14mm 12mm; }
  body { max-width: none; padding: 0; font-size: 10pt; }
  nav { display: none; }
  h2 { break-after: avoid; }
  figure.plot, .card, tr { break-inside: avoid; }
  .plot-frame, .scroll { overflow: visible; border: none; }
  /* On paper a figure keeps its printed size (3.4 or 7 in), as in a paper. */
  .plot-frame svg { width: auto; min-width: 0 !important; max-width: 100% !important; }
  h2 + p { break-after: avoid; }
  table { font-size: 8pt; }
  th, td { white-space: normal; padding: 0.15rem 0.35rem; }
  .card { background: none; border: 1px solid var(--rule); }
  a { color: inherit; text-decoration: none; }
}
"""


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


def _input_section(page: Page) -> str:
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in page.settings)
    listed = "".join(f"<li>{esc(n)}</li>" for n in page.notes)
    return (
        '<section id="input"><h2>Input</h2>'
        + table_html("Inputs", page.inputs)
        + f'<dl class="settings">{rows}</dl>'
        + (f'<ul class="notes">{listed}</ul>' if page.notes else "")
        + "</section>"
    )


def _headline_section(page: Page) -> str:
    cards = "".join(
        f'<article class="card"><h3>{esc(h.label)}</h3><ul>'
        + "".join(f"<li>{esc(s)}</li>" for s in h.sentences)
        + "</ul></article>"
        for h in page.headlines
    )
    return f'<section id="summary"><h2>In short</h2><div class="cards">{cards}</div></section>'


def _section(page: Page, section: Section) -> str:
    parts = [f'<section id="{section.key}"><h2>{esc(section.title)}</h2><p>{esc(section.intro)}</p>']
    if section.plot is not None:
        parts.append(figure_html(section.key, page.plots[section.plot]))
    parts += [table_html(caption, t) for caption, t in section.tables]
    parts.append("</section>")
    return "".join(parts)


def _provenance_section(page: Page) -> str:
    """The version, command line, time and input files (with sizes and checksums) that made the page."""
    made = page.provenance
    if made is None:
        return ""
    rows = "".join(
        f"<dt>{esc(k)}</dt><dd>{f'<code>{esc(v)}</code>' if k == 'command' else esc(v)}</dd>"
        for k, v in made.rows()
    )
    return (
        '<section id="provenance"><h2>Provenance</h2>'
        f'<dl class="settings">{rows}</dl>' + table_html("Input files", provenance_table(made)) + "</section>"
    )


def render_html(page: Page) -> str:
    """The whole page."""
    body = page.sections
    links = [("input", "Input"), ("summary", "In short"), *((s.key, s.title) for s in body)]
    if page.provenance is not None:
        links.append(("provenance", "Provenance"))
    nav = "".join(f'<a href="#{key}">{esc(title)}</a>' for key, title in links)
    title = esc(page.title)
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
            f"<title>{title}: {esc(', '.join(page.labels))}</title>",
            f"<style>{CSS}</style>",
            "</head>",
            "<body>",
            f'<header><h1>{title}</h1><p class="lede">{esc(page.lede)}</p><nav aria-label="Sections">{nav}</nav></header>',
            "<main>",
            _input_section(page),
            _headline_section(page),
            *(_section(page, s) for s in body),
            _provenance_section(page),
            "</main>",
            f"<footer><p>{esc(page.footer)}</p></footer>",
            "</body>",
            "</html>",
            "",
        ]
    )

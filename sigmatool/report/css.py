"""The report page's style sheet: system fonts only (nothing is fetched), one column that fits a phone,
tables that scroll sideways, and a print layout without navigation or scroll boxes."""

from __future__ import annotations

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

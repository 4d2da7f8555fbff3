"""What the report shows, in order: its texts, its tables as rows of display text, its figures; the HTML and
Markdown writers lay out the same :class:`Page`.

Numbers are rounded for reading only here; the full-precision frames are the analyses' own output.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import polars as pl

from sigmatool import __version__, preflight
from sigmatool.columns import PASS_RATE, column
from sigmatool.figures import Plot
from sigmatool.figures.style import ESTIMATOR_LABELS, g_text
from sigmatool.render.table import percentage
from sigmatool.report.model import ReportInput, ReportOptions
from sigmatool.report.provenance import Provenance

SILENT = (
    "G",
    "prompts",
    "silent_rate",
    "all_right_rate",
    "all_wrong_rate",
    "always_silent_share",
    "dapo_draws_per_group",
)
LONG_TABLE = 30  # longer frames show their first and last rows
EDGE_ROWS = 10


@dataclass(frozen=True)
class Table:
    """Headings (with the output column each shows), rows of text, and which columns are numbers."""

    columns: tuple[str, ...]
    headings: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]
    omitted: int = 0  # rows left out of the middle of a long frame


def cell(value: object, name: str) -> str:
    """One value for people: percentages, thousands separators, ∞, and '–' for a missing value."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        declared = column(name)
        if declared.percent:
            return percentage(value, " %")
        if declared.unit == PASS_RATE:
            return f"{value:g}"
        if value.is_integer() and abs(value) >= 1e4:
            return f"{value:,.0f}"
        return f"{value:,.4g}" if abs(value) < 1e15 else f"{value:.4g}"
    text = str(value)
    return "∞" if name == "G" and text == "inf" else text


def table(frame: pl.DataFrame, columns: Sequence[str] | None = None, *, shorten: bool = False) -> Table:
    """``frame``'s ``columns`` (all by default) as display text; with ``shorten``, a long frame keeps its
    first and last rows (for per-step traces; the analyses' own tables are shown whole)."""
    names = tuple(c for c in (columns or frame.columns) if c in frame.columns)
    shown = frame.select(names)
    omitted = 0
    if shorten and shown.height > LONG_TABLE:
        omitted = shown.height - 2 * EDGE_ROWS
        shown = pl.concat([shown.head(EDGE_ROWS), shown.tail(EDGE_ROWS)])
    rows = tuple(tuple(cell(v, c) for v, c in zip(row, names, strict=True)) for row in shown.iter_rows())
    numeric = tuple(frame.schema[c].is_numeric() or c == "G" for c in names)
    return Table(names, tuple(column(c).heading for c in names), rows, numeric, omitted)


def silent_table(frames: dict[str, pl.DataFrame], by: Sequence[str]) -> Table:
    """The silent summaries, each row led by the estimator behind it (a summary's own ``estimator`` column,
    or the name it is given)."""
    parts = [
        f if "estimator" in f.columns else f.with_columns(pl.lit(name).alias("estimator"))
        for name, f in frames.items()
    ]
    return table(pl.concat(parts, how="diagonal_relaxed"), ["estimator", *by, *SILENT])


def inputs_table(inputs: Sequence[ReportInput]) -> Table:
    """One row per input: label, files, rows, prompts, distinct rates, columns used, --by columns."""
    rows = tuple(
        (
            i.label,
            i.source or "–",
            f"{i.rows:,}",
            cell(int(i.prompts) if i.prompts.is_integer() else i.prompts, "prompts"),
            f"{i.hist.select('p').n_unique():,}",
            ", ".join(i.columns) or "–",
            ", ".join(i.by) or "–",
        )
        for i in inputs
    )
    names = ("input", "files", "rows", "prompts", "distinct p", "columns used", "by")
    return Table(names, names, rows, (False, False, True, True, True, False, False))


# --------------------------------------------------------------------------------------------- the page

LEDE = "What this prompt set will do to GRPO, Dr. GRPO and DAPO training, from its pass rates."
REFERENCE = (
    "Y. Y. Bay and K. A. Yearick, “GRPO, Dr. GRPO, and DAPO Are Three Operations on One Number: "
    "The Group-Standard-Deviation Identity”, arXiv:2607.00152 (2026)"
)
INTROS = {
    "difficulty": "Each prompt's pass rate p is the share of its sampled answers that were right. A prompt at "
    "p = 0 or p = 1 gives groups whose answers all agree: their reward std σ is 0 at every group size, so "
    "they never move the policy.",
    "silent": "A group of G answers whose rewards are all equal has σ = 0: GRPO and Dr. GRPO get no gradient "
    "from it, DAPO discards it and draws again. For a prompt of pass rate p that happens with probability "
    "p^G + (1 − p)^G; larger groups are silent less often, down to the floor of prompts at p = 0 or 1.",
    "budget": "For 0/1 rewards GRPO's update of a prompt is σ times a direction, so it weighs E[σ] "
    "(→ √(p(1−p)) as G grows); Dr. GRPO does not divide by σ, so it weighs E[σ²] (→ p(1−p)) and gives less "
    "to very easy and very hard prompts. DAPO's shares equal GRPO's: it changes the cost, not the direction.",
    "groupsize": "Fidelity φ(G, p) = E[σ]/√(p(1−p)) is the share of its large-group update that a group of G "
    "answers gives a prompt. Each prompt needs the smallest G with φ ≥ φ*: exact here, where the closed-form "
    "law 1/(8εp(1−p)), ε = 1 − φ*, falls short near p = 0 and 1.",
    "track": "A training run as it went: the share of silent groups measured at each step against what the "
    "prompts' pass rates predict.",
    "plan": "A per-prompt rollout plan: the group size it gives each pass rate, and what it reaches against "
    "the uniform G that costs as many rollouts.",
    "preflight": "What the trainer's batch loop (its DAPO filter of silent groups) will do with this "
    "dataset: how often a step runs out of generation batches, and how many rollouts are thrown away.",
}
TITLES = {
    "difficulty": "Difficulty",
    "silent": "Silent groups",
    "budget": "Gradient budget",
    "groupsize": "Group size",
    "track": "Tracking a run",
    "plan": "Rollout plan",
    "preflight": "Batch loop",
}


@dataclass(frozen=True)
class Section:
    """One section: its anchor, title, introduction, figure (key into ``Page.plots``) and tables."""

    key: str
    title: str
    intro: str
    plot: str | None
    tables: tuple[tuple[str, Table], ...]


@dataclass(frozen=True)
class Headline:
    """The sentences that sum one input up."""

    label: str
    sentences: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class Page:
    """Everything the report shows, in order; the writers only lay it out."""

    title: str
    labels: tuple[str, ...]  # the inputs' labels
    inputs: Table
    settings: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]  # each led by the input it is about
    headlines: tuple[Headline, ...]
    sections: tuple[Section, ...]
    plots: Mapping[str, Plot]
    provenance: Provenance | None = None
    lede: str = LEDE
    footer: str = f"Made with sigmatool {__version__}. Formulas: {REFERENCE}."


def _prior_setting(options: ReportOptions, estimators: Sequence[str]) -> str:
    """The prior in words; ``auto`` (the default rule) says where the NPMLE prior answers."""
    prior = options.prior
    if prior.active:
        return f"{prior.label}: each prompt's posterior mean given its k of n, fitted per input and group"
    if prior.kind == "auto" and options.estimator == "auto" and any("npmle" in e for e in estimators):
        return (
            "auto: the NPMLE prior (each prompt's posterior mean given its k of n) answers the G beyond a "
            "prompt's n samples, where its input identifies one, as the commands do"
        )
    if any(e.startswith("unbiased") for e in estimators):
        return "none: each prompt's values from its own k of n, to G = n; beyond its n, not identified"
    return "none: each prompt's pass rate as measured"


def settings(options: ReportOptions, estimators: Sequence[str], by: Sequence[str]) -> list[tuple[str, str]]:
    """The options behind the numbers, as (name, value) pairs; ``estimators`` those of the silent table."""
    o, g = options, options.groupsize
    shown = ", ".join(ESTIMATOR_LABELS.get(e, e) for e in estimators)
    return [
        ("estimator", shown + (" (unbiased: G ≤ n only)" if o.estimator == "unbiased" else "")),
        ("prior", _prior_setting(o, estimators)),
        ("silent groups at G", ", ".join(str(G) for G in o.sizes)),
        ("gradient budget at G", ", ".join(g_text(f"{G:g}") for G in o.budget_sizes)),
        (
            "group size",
            f"fidelity φ* = {g.target:g} ({g.method}, {g.std} std), G from {g.min_size} to {g.max_size}, compared with uniform G = {g.uniform}",
        ),
        ("compared by", ", ".join(by) or "–"),
        *(
            [("credit", f"pass@{o.pass_at}: silence and weights of pass@K training (docs/passk.md)")]
            if o.pass_at > 1
            else []
        ),
        *(
            [("de-noised", f"counts read back through a grader of FP {o.denoise.fp:g}, FN {o.denoise.fn:g}")]
            if o.denoise is not None
            else []
        ),
    ]


def provenance_table(provenance: Provenance) -> Table:
    """The input files read, with their sizes in bytes and SHA-256 checksums."""
    rows = [
        (f.name, "–" if f.size is None else f"{f.size:,}", f.sha256 or "– (remote)")
        for f in provenance.inputs
    ]
    names = ("file", "bytes", "sha256")
    return Table(names, names, tuple(rows), (False, True, False))


def _section(key: str, tables: tuple[tuple[str, Table], ...]) -> Section:
    return Section(key, TITLES[key], INTROS[key], key, tables)


def sections(
    silent: dict[str, pl.DataFrame],
    budget: pl.DataFrame,
    groupsize: pl.DataFrame,
    by: Sequence[str],
    options: ReportOptions,
) -> list[Section]:
    """The report's sections after the input and headline ones, in order; the run's track, the rollout plan
    and the batch loop when ``options`` hold them."""
    out = [
        _section("difficulty", ()),
        _section("silent", (("Silent groups by G", silent_table(silent, by)),)),
        _section("budget", (("Share of the update per segment", table(budget)),)),
        _section("groupsize", (("Group size needed, all prompts and by bin of p", table(groupsize)),)),
    ]
    if options.track is not None:
        tracked = _section("track", (("Per step", table(options.track, shorten=True)),))
        if options.track_headline:
            tracked = replace(tracked, intro=f"{tracked.intro} {options.track_headline}")
        out.append(tracked)
    if (plan := options.plan) is not None:
        tables = (
            ("Plan against uniform G", table(plan.comparison)),
            ("Allocation", table(plan.allocation, shorten=True)),
        )
        out.append(_section("plan", tables))
    if (result := options.preflight) is not None:
        loop = _section("preflight", (("The loop's settings and what they give", table(result.summary)),))
        # A figure only where the loop has a crash curve (a filter and a cap).
        drawn = loop.plot if result.curve is not None else None
        out.append(replace(loop, intro=f"{loop.intro} {preflight.headline(result)}", plot=drawn))
    return out

"""What the report says, section by section, for the HTML and Markdown writers alike."""

from __future__ import annotations

from dataclasses import dataclass

from sigmatool import __version__
from sigmatool.figures.style import ESTIMATOR_LABELS, g_text
from sigmatool.report.build import Report
from sigmatool.report.tables import Table, inputs_table, silent_table, table

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
}
TITLES = {
    "difficulty": "Difficulty",
    "silent": "Silent groups",
    "budget": "Gradient budget",
    "groupsize": "Group size",
    "track": "Tracking a run",
    "plan": "Rollout plan",
}


@dataclass(frozen=True)
class Section:
    """One section: its anchor, title, introduction, figure (key into ``report.plots``) and tables."""

    key: str
    title: str
    intro: str
    plot: str | None
    tables: tuple[tuple[str, Table], ...]


def settings(report: Report) -> list[tuple[str, str]]:
    """The options behind the numbers, as (name, value) pairs."""
    o, g = report.options, report.options.groupsize
    estimators = ", ".join(ESTIMATOR_LABELS.get(e, e) for e in report.silent)
    return [
        ("estimator", estimators + (" (unbiased: G ≤ n only)" if "unbiased" in report.silent else "")),
        ("prior", o.prior or "none: each prompt's pass rate as measured"),
        ("silent groups at G", ", ".join(str(G) for G in o.sizes)),
        ("gradient budget at G", ", ".join(g_text(f"{G:g}") for G in o.budget_sizes)),
        (
            "group size",
            f"fidelity φ* = {g.target:g} ({g.method}, {g.std} std), G from {g.min_size} to {g.max_size}, compared with uniform G = {g.uniform}",
        ),
        ("compared by", ", ".join(report.by) or "–"),
    ]


def sections(report: Report) -> list[Section]:
    """The report's sections after the input and headline ones, in order; track and plan when given."""
    by = list(report.by)
    out = [
        Section("difficulty", TITLES["difficulty"], INTROS["difficulty"], "difficulty", ()),
        Section(
            "silent",
            TITLES["silent"],
            INTROS["silent"],
            "silent",
            (("Silent groups by G", silent_table(report.silent, by)),),
        ),
        Section(
            "budget",
            TITLES["budget"],
            INTROS["budget"],
            "budget",
            (("Share of the update per segment", table(report.budget)),),
        ),
        Section(
            "groupsize",
            TITLES["groupsize"],
            INTROS["groupsize"],
            "groupsize",
            (("Group size needed, all prompts and by bin of p", table(report.groupsize)),),
        ),
    ]
    o = report.options
    if o.track is not None:
        out.append(
            Section(
                "track",
                TITLES["track"],
                INTROS["track"],
                "track",
                (("Per step", table(o.track, shorten=True)),),
            )
        )
    if o.plan is not None:
        tables = (
            ("Plan against uniform G", table(o.plan.comparison)),
            ("Allocation", table(o.plan.allocation, shorten=True)),
        )
        out.append(Section("plan", TITLES["plan"], INTROS["plan"], "plan", tables))
    return out


def input_table(report: Report) -> Table:
    return inputs_table(report.inputs)


def footer_text() -> str:
    return f"Made with sigmatool {__version__}. Formulas: {REFERENCE}."

"""``sigmatool groupsize``."""

from __future__ import annotations

from typing import Annotated

import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.beyond import Analysed, analysed_options
from sigmatool.cli.params import (
    Bins,
    EstimatorOpt,
    Fidelity,
    MaxG,
    MinG,
    PerPrompt,
    StdConvention,
    UpdateRule,
    renamed,
    uses,
)
from sigmatool.options import Estimator, GroupSizeOptions, Method, check_prior, summary_bins
from sigmatool.options.analyses import GroupSizeTarget, check_sizing_estimator, groupsize_options
from sigmatool.shown import RowsResult
from sigmatool.trainers.std import groupsize_std

# What the command runs once its options are checked (imported before the garbage collector resumes).
ANALYSIS = ("sigmatool.estimators", "sigmatool.groupsize", "sigmatool.render")

MaxSilentOpt = Annotated[
    float | None,
    typer.Option(
        "--max-silent",
        metavar="S",
        help="Also require P_silent = p^G + (1−p)^G ≤ S, S in (0, 1]; the answer is the larger of the two G.",
    ),
]
LawOpt = Annotated[
    bool,
    typer.Option(
        "--law", help="Also give the closed-form law ⌈1/(8εp(1−p))⌉, ε = 1 − φ*, beside the exact G."
    ),
]
UniformOpt = Annotated[
    int, typer.Option("--uniform", help="The uniform G compared against (share_at_target_uniform).")
]
OldObjective = Annotated[
    str | None,
    renamed(
        "--objective",
        now="groupsize's update rule (grpo or drgrpo) is --method, as in plan, whose --objective is what a "
        "plan maximises",
    ),
]


def target_options(
    fidelity: Fidelity = None,
    method: UpdateRule = Method.grpo,
    max_silent: MaxSilentOpt = None,
    min_size: MinG = None,
    max_size: MaxG = None,
    std: StdConvention = None,
    law: LawOpt = False,
    uniform: UniformOpt = 8,
    old_objective: OldObjective = None,
) -> GroupSizeTarget:
    """The target fidelity (or silent cap), the update rule and its std, the G range, the law, uniform G."""
    options = groupsize_options(
        fidelity=fidelity, method=method.value, std=std.value if std else "population", min_G=min_size,
        max_G=max_size, max_silent=max_silent, uniform=uniform, law=law,
    )  # fmt: skip
    return GroupSizeTarget(options, std is not None)


@app.command("groupsize")
@uses(given=analysed_options, target=target_options)
def groupsize_command(
    target: GroupSizeTarget = GroupSizeTarget(GroupSizeOptions(), False),
    bins: Bins = None,
    per_prompt: PerPrompt = False,
    given: Analysed = Analysed(),
    estimator: EstimatorOpt = Estimator.auto,
) -> None:
    """The group size each prompt needs to reach a target fidelity, and what a per-prompt schedule saves.

    Fidelity is the share of its large-group update that a group of G answers gives a prompt: for GRPO
    φ(G, p) = E[σ]/√(p(1−p)), which rises with G, fastest at p = ½ (φ(8, 0.5) = 0.93, φ(8, 0.05) = 0.54).
    Each prompt gets the smallest G ≥ --min-G with φ ≥ φ*, exact (not the law 1/(8εp(1−p))); p̂ = 0 or 1,
    or G > --max-G, is unreachable: counted, never given a number. Rows: all prompts, then bins of p, per
    --by group; --per-prompt: one row per prompt. With counts k of n, each size is decided by the one rule
    of docs/prior.md: a G ≤ n at p̂; a G beyond n under the NPMLE prior of the prompt's group, where the
    group identifies one, else not identified (counted, never a number; --prior none: every size beyond n).
    --prior npmle|beta|A,B sizes every prompt by its posterior (docs/theory.md §7); --estimator plugin
    sizes every prompt at p̂. --plot draws G against p (with counts, each count's G).

    Example:

        sigmatool groupsize sample_data/bigmath_solve_rates.parquet --fidelity 0.9

        sigmatool groupsize sample_data/toy_pass_rates.csv --plot groupsize.png
    """
    sizes, std_notes = groupsize_std(target, given.inputs.trainer)
    check_sizing_estimator(estimator.value)
    # The counts are checked once read (a rate column on a 1/n grid is counts).
    check_prior(given.beyond.prior, has_counts=True, law=sizes.law)
    cut = summary_bins(bins, per_prompt)
    with run.session(given, estimator=estimator.value, stream=not given.beyond.prior.active,
                     imports=ANALYSIS, per_prompt=per_prompt) as s:  # fmt: skip
        run.note([*std_notes, *(s.id_notes() if per_prompt else [])])
        if per_prompt:
            rows = RowsResult(s.groupsize_rows(sizes), s.curve_for(given.plot, sizes))
            run.answer(rows, given, s)
        else:
            run.answer(s.groupsize(sizes, bins=cut, figure=bool(given.plot.path)), given, s)

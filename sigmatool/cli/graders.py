"""``sigmatool graders``."""

from __future__ import annotations

from typing import Annotated

import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.params import (
    DataArg,
    GroupSizes,
    PerPrompt,
    PromptColOpt,
    RewardColOpt,
    RolloutColOpt,
    RolloutsOpt,
    ThresholdOpt,
    output_options,
    uses,
)
from sigmatool.errors import UsageError
from sigmatool.options import OutputOptions
from sigmatool.options.common import parse_group_sizes
from sigmatool.options.verifier import GradersOptions

RewardColBOpt = Annotated[
    str | None,
    typer.Option(
        "--reward-col-b",
        metavar="COL",
        help="Grader B's reward column in the same log as --reward-col's (grader A); with two logs, B's "
        "column in the second.",
        show_default="--reward-col's",
    ),
]
TrustedOpt = Annotated[
    str | None,
    typer.Option(
        "--trusted",
        metavar="[a|b]",
        help="The grader taken as the truth: the other's false-pass and false-fail rates with their trials "
        "and 95% intervals (the file --denoise-from reads).",
        show_default=False,
    ),
]


def graders_options(
    data: DataArg = None,
    rollouts: RolloutsOpt = False,
    prompt_col: PromptColOpt = None,
    reward_col: RewardColOpt = None,
    reward_col_b: RewardColBOpt = None,
    rollout_col: RolloutColOpt = None,
    threshold: ThresholdOpt = None,
    group_sizes: GroupSizes = None,
    trusted: TrustedOpt = None,
    per_prompt: PerPrompt = False,
) -> GradersOptions:
    """The logs, their reward columns and how they pair, the G asked, the trusted grader (checked)."""
    del rollouts  # the input is a rollout log whether or not --rollouts says so
    sizes = tuple(int(G) for G in parse_group_sizes(group_sizes or ["8"]))
    if prompt_col is not None and len(prompt_col) > 1:
        raise UsageError("graders pairs rollouts by one --prompt-col: give one column")
    prompt = prompt_col[0] if prompt_col else None
    return GradersOptions.parsed(list(data or []), prompt, reward_col, reward_col_b,
                                 rollout_col=rollout_col, threshold=threshold, sizes=sizes,
                                 trusted=trusted, per_prompt=per_prompt)  # fmt: skip


@app.command("graders")
@uses(options=graders_options, out=output_options)
def graders_command(
    options: GradersOptions = GradersOptions((), "", ("", "")), out: OutputOptions = OutputOptions()
) -> None:
    """Two graders of one rollout set: where they disagree, and what each does to the silent share.

    One rollout log with both graders' rewards (--reward-col A --reward-col-b B), or two logs of the same
    rollouts with one --reward-col each, paired on (prompt, --rollout-col) or by order within each prompt.
    Per G: paired rollouts, those right under one grader only, the exact McNemar p, the silent share under
    each, and the share silent under one and not the other (exact from each prompt's four paired counts);
    prompts whose answers all agree under one grader only. --trusted a|b adds the other's false-pass and
    false-fail rates with Clopper–Pearson intervals, which --denoise-from reads (docs/verifiers.md).

    Example:

        sigmatool graders sample_data/graded.csv --reward-col a --reward-col-b b
    """
    from sigmatool import graders

    result = graders.analyse(options)
    run.note(result.notes)
    run.show(result, out)

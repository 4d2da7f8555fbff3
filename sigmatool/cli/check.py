"""``sigmatool check``."""

from __future__ import annotations

from typing import Annotated

import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.params import input_options, output_options, uses
from sigmatool.options import InputOptions, OutputOptions

ANALYSIS = ("sigmatool.check", "sigmatool.render")

StrictOpt = Annotated[bool, typer.Option("--strict", help="Exit 1 when a check is not ok (for CI).")]


@app.command("check")
@uses(inputs=input_options, out=output_options)
def check_command(
    inputs: InputOptions = InputOptions(), out: OutputOptions = OutputOptions(), strict: StrictOpt = False
) -> None:
    """Whether the input is what the analyses take it for: a row per check (rows, selection,
    singleton_groups, group_size, mixed_groups, shared_keys) with its status (ok, warn, fail), the items
    affected of the total, what was found and the way out.

    A rollout log's groups are checked as read: groups of one rollout (and the --prompt-mask that merges
    them), groups holding several prompt texts (--rollout-col), keys shared by several prompts (a second
    --prompt-col), groups of another size than --rollouts-per-group. Exit 0, or 1 under --strict when a
    check is not ok.

    Example:

        sigmatool check sample_data/example_run --from verl --strict
    """
    run.check(inputs, out, imports=ANALYSIS)
    from sigmatool.check import check

    result = check(inputs)
    run.show(result, out)
    if strict and not result.ok:
        raise typer.Exit(1)

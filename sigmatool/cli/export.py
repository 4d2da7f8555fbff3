"""``sigmatool export``."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.params import input_options, output_options, uses
from sigmatool.errors import UsageError
from sigmatool.options import InputOptions, OutputOptions

# What the command runs once its options are checked (imported before the garbage collector resumes).
ANALYSIS = ("sigmatool.integrations.schedule", "sigmatool.integrations.exports", "sigmatool.render")


class Trainer(str, Enum):
    verl = "verl"
    trl = "trl"
    prime_rl = "prime-rl"
    open_instruct = "open-instruct"


ForOpt = Annotated[
    Trainer,
    typer.Option(
        "--for",
        help="The trainer: verl's overrides, TRL's lines, prime-rl's pools table (a schedule FILE), or "
        "open-instruct's difficulty rows (any DATA with counts).",
    ),
]
TrainerVersionOpt = Annotated[
    str | None,
    typer.Option(
        "--trainer-version",
        metavar="V",
        help="verl's version: up to 0.7 a sampler plugs in; from 0.8 an order is read in sequence.",
    ),
]


@app.command("export")
@uses(inputs=input_options, out=output_options)
def export_command(
    to: ForOpt,
    trainer_version: TrainerVersionOpt = None,
    inputs: InputOptions = InputOptions(),
    out: OutputOptions = OutputOptions(),
) -> None:
    """A schedule handed to the trainer, in the trainer's own terms.

    FILE is a schedule sigmatool wrote (curriculum --export-order or --per-prompt -o FILE, plan --per-prompt
    -o FILE: each records what made it). verl: the overrides that plug sigmatool's sampler in (verl 0.5 to
    0.7), or read an order in sequence (0.8 on); trl: the lines that make GRPOTrainer draw from it; prime-rl:
    the difficulty_pool sampler table of a pools or band schedule, per-task weights scaled to mean 1.
    open-instruct: each row of DATA with the difficulty object its create_difficulty_map.py makes from pass
    counts (ties by --id-col). docs/trainers.md says each line and its limits.

    Example:

        sigmatool export --for open-instruct sample_data/shapes/polaris_like.jsonl
    """
    if trainer_version is not None and to is not Trainer.verl:
        raise UsageError(f"--trainer-version chooses between verl's two forms; {to.value} has one")
    run.check(inputs, out, imports=ANALYSIS)
    if to is Trainer.open_instruct:
        _difficulty(inputs, out)
        return
    from sigmatool.render.files import target

    text = _lines(to, inputs, trainer_version)
    with target(out.output, binary=False) as handle:
        handle.write(text)


def _lines(to: Trainer, inputs: InputOptions, version: str | None) -> str:
    """What the trainer reads from one schedule FILE: verl's overrides, TRL's lines or prime-rl's table."""
    from sigmatool.integrations import exports
    from sigmatool.integrations.schedule import read_schedule

    if len(inputs.paths) != 1:
        raise UsageError(f"export --for {to.value} takes one schedule FILE that sigmatool wrote")
    schedule = read_schedule(inputs.paths[0])
    if to is Trainer.verl:
        return exports.verl(schedule, version)
    if to is Trainer.trl:
        return exports.trl(schedule)
    text, moved, differ = exports.prime_rl(schedule)
    notes = [f"one group of G = {schedule.G} moves a drawn task to another pool with chance {moved:.1%}"]
    if differ:
        notes.append(
            f"{differ:,} prompts are in or out of the pools by their rate as the file shows it (prime-rl's "
            "view) but not by the schedule's estimate of p"
        )
    run.note(notes)
    return text


def _difficulty(inputs: InputOptions, out: OutputOptions) -> None:
    """open-instruct's rows: every column and ``difficulty``; JSON lines unless -o or --format say else."""
    from dataclasses import replace

    from sigmatool import load
    from sigmatool.integrations.difficulty import difficulty_rows
    from sigmatool.render import write_any

    with load.dataset(inputs) as ds:
        frame, notes = difficulty_rows(ds)
    run.note(notes)
    if out.fmt == "auto" and (not out.output or out.output == "-"):
        out = replace(out, fmt="jsonl")
    write_any(frame, out)

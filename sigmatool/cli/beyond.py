"""The options that predict beyond the logged samples, declared once: ``--prior`` alone (``groupsize``), and
with ``--bounds`` and ``--ci`` (``silent``, ``budget``); and with them the options of every analysis of
DATA (:class:`Analysed`). Nothing here imports polars or numpy."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Annotated

import typer

from sigmatool.cli.params import (
    Grader,
    Seed,
    denoise_option,
    grader_option,
    input_options,
    output_options,
    pass_at_option,
    plot_options,
    uses,
)
from sigmatool.options import (
    DEFAULT_REPLICATES,
    BeyondOptions,
    InputOptions,
    OutputOptions,
    PlotOptions,
    PriorSpec,
    parse_prior,
)
from sigmatool.options.verifier import Measured

BEYOND = "Beyond the samples (counts k of n)"
_beyond = functools.partial(typer.Option, rich_help_panel=BEYOND)  # an option of that panel


def prior_option(
    prior: Annotated[
        str,
        _beyond(
            "--prior",
            metavar="[auto|none|beta|npmle|A,B]",
            help="Read each prompt by its posterior mean under a prior on p fitted to each --by group's counts. "
            "beta: one Beta; npmle: nonparametric; A,B: a fixed Beta(A, B). auto: the NPMLE answers only "
            "the cells beyond a prompt's n samples, where its group identifies one; none: no prior (those "
            "cells are not identified; --estimator plugin gives p̂).",
        ),
    ] = "auto",
) -> PriorSpec:
    """``--prior``: how p̂ = 0 and 1 and other few-sample rates are read (docs/prior.md)."""
    return parse_prior(prior)


@uses(prior=prior_option)
def beyond_options(
    prior: PriorSpec,
    bounds: Annotated[
        bool,
        _beyond(
            "--bounds",
            help="Add the lowest and highest value of each rate that the counts allow. They range over every "
            "pass-rate distribution that reproduces the counts' histogram (95% χ² region).",
        ),
    ] = False,
    ci: Annotated[
        float | None,
        _beyond(
            "--ci",
            metavar="LEVEL",
            help="Add bootstrap intervals at this level in (0, 1), e.g. 0.95; prompts redrawn with "
            "replacement, the prior refitted each time.",
        ),
    ] = None,
    replicates: Annotated[
        int | None,
        _beyond(
            "--replicates",
            metavar="N",
            help="Bootstrap replicates of --ci (2–1,000,000).",
            show_default=str(DEFAULT_REPLICATES),
        ),
    ] = None,
    seed: Seed = None,
) -> BeyondOptions:
    """``--prior``, ``--bounds`` and ``--ci``: estimates beyond the samples and how far the data support them."""
    return BeyondOptions(prior, bounds, ci, replicates, seed)


@dataclass(frozen=True)
class Analysed:
    """What every analysis of DATA is given: the input, the output, what is asked beyond the samples, the
    figure, the grader and the credit the trainer trains on (``pass_at``: --pass-at's K, () for pass@1), and
    the verifier the data were graded by (``denoise``: --denoise, None when the counts are the truth)."""

    inputs: InputOptions = field(default_factory=InputOptions)
    out: OutputOptions = field(default_factory=OutputOptions)
    beyond: BeyondOptions = field(default_factory=BeyondOptions)
    plot: PlotOptions = field(default_factory=PlotOptions)
    grader: Grader = None
    pass_at: tuple[int, ...] = ()
    denoise: Measured | None = None


@uses(
    inputs=input_options,
    out=output_options,
    beyond=beyond_options,
    plot=plot_options,
    grader=grader_option,
    pass_at=pass_at_option,
    denoise=denoise_option,
)
def analysed_beyond_options(
    inputs: InputOptions,
    out: OutputOptions,
    beyond: BeyondOptions,
    plot: PlotOptions,
    grader: Grader,
    pass_at: tuple[int, ...],
    denoise: Measured | None,
) -> Analysed:
    """The options of an analysis of DATA with --prior, --bounds and --ci, beside the command's own."""
    return Analysed(inputs, out, beyond, plot, grader, pass_at, denoise)


@uses(
    inputs=input_options,
    out=output_options,
    prior=prior_option,
    plot=plot_options,
    grader=grader_option,
    pass_at=pass_at_option,
    denoise=denoise_option,
)
def analysed_options(
    inputs: InputOptions,
    out: OutputOptions,
    prior: PriorSpec,
    plot: PlotOptions,
    grader: Grader,
    pass_at: tuple[int, ...],
    denoise: Measured | None,
) -> Analysed:
    """The options of an analysis of DATA with --prior, beside the command's own."""
    return Analysed(inputs, out, BeyondOptions(prior), plot, grader, pass_at, denoise)

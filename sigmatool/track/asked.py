"""A run's track as ``sigmatool track`` asks for it (:class:`~sigmatool.options.TrackOptions`): the step table
or the run's summary, its expectation checked against the pass-rate table, and the export of the run's
per-prompt counts, each refusing what would be an empty answer."""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from sigmatool.errors import DataError
from sigmatool.options import PriorSpec, TrackOptions
from sigmatool.track import TrackResult, pass_rates_of, track_groups


def tracked(
    groups: pl.DataFrame,
    rates: pl.DataFrame | None,
    options: TrackOptions,
    estimate: tuple[str, PriorSpec],
    pass_at: int = 1,
) -> TrackResult:
    """The step table (or the run's summary) of the run's ``groups``, expected from the pass-rate table
    ``rates`` when given; silent under pass@``pass_at`` credit."""
    rule = {"z_threshold": options.z_threshold, "min_gap": options.min_gap, "window": options.window}
    result = track_groups(groups, rates, **rule, estimate=estimate, pass_at=pass_at)  # type: ignore[arg-type]
    _check_matched(result, options)
    if options.invalid is not None:
        result = replace(result, steps=with_invalid(result.steps, groups, options.invalid))
    return replace(result, run_only=options.summary)


def with_invalid(steps: pl.DataFrame, groups: pl.DataFrame, mode: str) -> pl.DataFrame:
    """The step table with each step's ``invalid`` rollouts (a reward missing or that cannot be graded) and
    their ``invalid_share``; with ``--invalid zero``, ``silent_fraction_zero``: the share of its groups
    silent when invalid rewards read 0 (all valid wrong, or all right and none invalid). A logged group
    read with ``skip`` or ``mask`` is silent as the step's ``silent_fraction`` says (its valid rewards agree)."""
    invalid = pl.col("bad") + pl.col("missing")
    zero = ((pl.col("k") == 0) | ((pl.col("k") == pl.col("G")) & (invalid == 0))).cast(pl.Float64)
    per_step = groups.group_by("step").agg(
        invalid.sum().cast(pl.Int64).alias("invalid"),
        (invalid.sum() / (pl.col("G") + invalid).sum()).alias("invalid_share"),
        *([zero.filter(pl.col("G") >= 1).mean().alias("silent_fraction_zero")] if mode == "zero" else []),
    )
    return steps.join(per_step, on="step", how="left", maintain_order="left")


def _check_matched(result: TrackResult, options: TrackOptions) -> None:
    """A pass-rate table that matches none of the run's prompts is keyed by something else."""
    if options.pass_rates is None or int(result.run["compared_groups"].item()):
        return
    raise DataError(
        f"--pass-rates {options.pass_rates}: none of the run's prompts has a rate there (matched on column "
        f"{options.rates_key or 'prompt'!r}: text is hashed as the dumps' prompt text is, whole numbers are "
        "taken as such hashes); --pass-rates-key names the column with the prompt text the dumps hold"
    )


def exported(groups: pl.DataFrame, options: TrackOptions) -> pl.DataFrame:
    """--export-pass-rates: the run's per-prompt counts over the --export-steps window (or the whole run)."""
    counts = pass_rates_of(groups, options.steps)
    if counts.height == 0:
        window = f"steps {options.steps[0]}..{options.steps[1]}" if options.steps else "the run"
        raise DataError(f"--export-pass-rates: no usable rollout in {window}")
    return counts

"""``preflight``'s analysis: the one-row summary of a loop on a dataset, the curve ``--plot`` draws, and
:func:`analyse`, which returns them as a :class:`~sigmatool.preflight.result.PreflightResult`.

Columns (:data:`COLUMNS`), one row per setting: ``train_batch_size``, ``gen_batch_size``, ``n``,
``max_gen_batches``, ``filter``, ``steps``, ``epochs``, ``prompts``, ``keep_rate`` (q̄),
``expected_gen_batches``, ``p_crash_step``, ``p_crash_run``, ``expected_steps`` and
``expected_run_gen_batches`` (the optimizer steps the run takes and the generation batches they cost, a
crash ending it: what warm-up and cosine schedules need, as verl counts ``total_training_steps`` in
batches), ``steps_per_epoch``, ``rollouts_generated``, ``rollouts_kept``, ``rollouts_silent``, ``rollouts_surplus``, ``rollouts_lost_in_crash``,
``rollouts_trained`` (all expected, per step), ``share_trained``, ``min_safe_gen_batch_size``,
``min_safe_gen_batch_size_rollouts``, ``min_safe_max_gen_batches``, ``min_safe_max_gen_batches_rollouts``,
``variance_ratio_without_replacement``; then ``p_batches_1`` … ``p_batches_M`` (the chance a step ends after
exactly k batches); with no filter, :data:`PLAIN_COLUMNS` instead of the filter's.

**Other trainers** (``LoopSettings.trainer``): NeMo-RL's, SkyRL's, slime's and AReaL's loops are verl's
step and run under their own rules (:func:`sigmatool.preflight.runs.step_of`,
:func:`sigmatool.preflight.runs.run_outcome_of`); slime's and AReaL's streamed loops have a row of their own
(:func:`_streamed_row`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import polars as pl

from sigmatool.errors import DataError
from sigmatool.estimators import Valuation
from sigmatool.preflight import logged, others, pilot, retire, streams
from sigmatool.preflight.model import (
    Keep,
    Step,
    keep_probabilities,
    lost_shares,
    replace_step,
    silent_over,
    step,
)
from sigmatool.preflight.result import PreflightResult
from sigmatool.preflight.rows import (
    REFILLED,
    areal_dynamic_row,
    open_instruct_row,
    openrlhf_row,
    pilot_commit_row,
    prime_rl_row,
    slime_fallback_row,
    streamed_steps,
)
from sigmatool.preflight.runs import batches_of_run, crash_of, run_of, step_of
from sigmatool.preflight.safe import min_safe_gen_batch_size, min_safe_max_gen_batches
from sigmatool.trainers.settings import STREAMED, LoopSettings

COLUMNS = (
    "train_batch_size",
    "gen_batch_size",
    "n",
    "max_gen_batches",
    "filter",
    "steps",
    "epochs",
    "prompts",
    "keep_rate",
    "expected_gen_batches",
    "p_crash_step",
    "p_crash_run",
    "expected_steps",
    "expected_run_gen_batches",
    "steps_per_epoch",
    "rollouts_generated",
    "rollouts_kept",
    "rollouts_silent",
    "rollouts_surplus",
    "rollouts_lost_in_crash",
    "rollouts_trained",
    "share_trained",
    "min_safe_gen_batch_size",
    "min_safe_gen_batch_size_rollouts",
    "min_safe_max_gen_batches",
    "min_safe_max_gen_batches_rollouts",
    "variance_ratio_without_replacement",
    "p_crash_step_without_replacement",
)
REFILLED_ROWS = {
    "open-instruct": open_instruct_row,
    "openrlhf": openrlhf_row,
    "prime-rl": prime_rl_row,
    "pilot-commit": pilot_commit_row,
}
# The loops whose crash chance --plot draws against the generation batch (the others have no such knob).
CURVED = ("verl", "nemo-rl")
PLAIN_COLUMNS = (
    "silent_share_mean",
    "silent_over",
    "p_silent_over",
    "lost_token_mean",
    "lost_seq_mean_token_mean",
    "lost_seq_mean_token_sum",
)


def _shuffled_crash(keep: Keep, settings: LoopSettings) -> float | None:
    """The first step's crash chance without replacement, where the loop fills on kept groups."""
    law = keep.law
    if law is None or settings.replace or keep.short_rate > 0:
        return None
    M = max(settings.max_gen_batches, 0) + 1 if settings.trainer == "nemo-rl" else settings.max_gen_batches
    return step(keep.rate, settings.gen, settings.train_batch_size, settings.n, M, law).p_crash


def _filtered_row(keep: Keep, settings: LoopSettings) -> tuple[dict[str, object], Step]:
    B, M = settings.gen, settings.max_gen_batches
    s, p_run, run_steps, run_batches = run_of(keep, settings)
    if not math.isfinite(s.expected_batches):  # no cap, and no batch can fill the step: it runs forever
        raise DataError(never_fills(settings))
    # SkyRL's generation batch is its train batch: no gen batch size of its own to advise.
    safe_B = min_safe_gen_batch_size(keep, settings) if settings.trainer != "skyrl" else None
    safe_M = min_safe_max_gen_batches(keep, settings)
    per_epoch = int(keep.prompts // B) / s.expected_batches if s.expected_batches > 0 else math.nan
    row: dict[str, object] = {
        "expected_gen_batches": s.expected_batches,
        "p_crash_step": s.p_crash,
        "p_crash_run": p_run,
        "expected_steps": run_steps,
        "expected_run_gen_batches": run_batches,
        "steps_per_epoch": per_epoch,
        "rollouts_generated": s.generated,
        "rollouts_kept": s.kept,
        "rollouts_silent": s.silent,
        "rollouts_surplus": s.surplus,
        "rollouts_lost_in_crash": s.lost_in_crash,
        "rollouts_trained": s.trained,
        "share_trained": s.trained / s.generated if s.generated > 0 else math.nan,
        "min_safe_gen_batch_size": safe_B,
        "min_safe_gen_batch_size_rollouts": None
        if safe_B is None
        else step_of(keep, settings, safe_B, M).generated,
        "min_safe_max_gen_batches": safe_M,
        "min_safe_max_gen_batches_rollouts": None
        if safe_M is None
        else step_of(keep, settings, B, safe_M).generated,
        "variance_ratio_without_replacement": keep.variance_ratio(B),
        "p_crash_step_without_replacement": _shuffled_crash(keep, settings),
    }
    if settings.replace:  # SkyRL's replace: a batch fails on its own; a passing one's silent groups copied
        row["p_batch_fails"] = 1.0 - others.replace_pass(keep.rate, B, settings.min_replace_ratio)[0]
        row["copied_share"] = replace_step(keep.rate, B, settings.n, M, settings.min_replace_ratio)[1]
    last = s.batches.size if M > 0 or settings.trainer == "nemo-rl" else 0
    row.update({f"p_batches_{k}": float(v) for k, v in enumerate(s.batches[:last], start=1)})
    return row, s


def _streamed_row(keep: Keep, settings: LoopSettings) -> tuple[dict[str, object], Step]:
    """slime's and AReaL's step: groups taken as they finish until T are accepted; no cap, no crash, so the
    cap's columns are empty. Generated rollouts are the completed groups'; slime's aborted groups (begun,
    not finished) are counted apart, and their prompts are drawn, lost but with --partial-rollout."""
    T, n, a = settings.train_batch_size, settings.n, keep.rate
    if a <= 0:
        raise DataError(never_fills(settings))  # a loop that runs forever: one line
    slime = settings.trainer == "slime"
    figures = others.streamed(a, T, settings.gen if slime else None)
    if settings.partial_rollout:  # the aborted groups resume next step: a step's fresh prompts are those done
        figures["submitted"] = figures["completed"]
    steps = streamed_steps(keep, settings)
    generated, silent = n * figures["completed"], n * (figures["completed"] - T)
    row: dict[str, object] = dict.fromkeys(COLUMNS[COLUMNS.index("expected_gen_batches") :])
    row.update(
        {
            "expected_gen_batches": figures["rounds"] if slime else None,
            "expected_steps": float(steps),
            "expected_run_gen_batches": steps * figures["rounds"] if slime else None,
            "rollouts_generated": generated,
            "rollouts_kept": n * T,
            "rollouts_silent": silent,
            "rollouts_trained": n * T,
            "share_trained": n * T / generated,
            "prompts_per_step": figures["submitted"],
            "data_passes": steps * figures["submitted"] / keep.prompts,
            "rollouts_aborted": n * figures["aborted"] if slime else None,
        }
    )
    return row, Step(a, np.zeros(0), 0.0, figures["completed"] / T, generated, n * T, silent, n * T, 0.0)


def never_fills(settings: LoopSettings) -> str:
    """The one line a loop that can never fill its batch gets (no cap, so it would draw forever)."""
    why = {
        "slime": "slime's filter drops every group of one rollout (torch's std of one value is NaN)",
        "areal": "AReaL's filter (0 < mean reward < 1) accepts no group of one rollout",
    }
    if settings.n == 1 and settings.trainer in why:
        reason, fix = why[settings.trainer], "give n > 1 or drop the filter"
    elif settings.replace:
        reason = f"no batch can have more than {settings.min_replace_ratio:.0%} of its groups differ"
        fix = f"check the grader and the data, or set {settings.key('max_gen_batches')}"
    else:
        reason = "every group's rewards agree (each prompt never or always right)"
        fix = "check the grader and the data, or drop the filter"
    return f"{settings.name}'s loop never fills a step: {reason}, so it draws prompts forever (no cap); {fix}"


def _plain_steps(keep: Keep, settings: LoopSettings) -> int:
    """The plain loop's steps: one batch each, until the steps or the epochs' batches run out."""
    batches = batches_of_run(settings, keep.prompts, settings.gen)
    limits = [x for x in (settings.steps, batches) if x is not None]
    return min(limits) if limits else 0


def _plain_row(keep: Keep, settings: LoopSettings) -> tuple[dict[str, object], Step]:
    B = settings.gen
    s = step(1.0, B, B, settings.n, 1)  # every prompt trains: one batch, nothing cut
    row: dict[str, object] = {
        "expected_gen_batches": 1.0,
        "p_crash_step": 0.0,
        "p_crash_run": 0.0,
        "expected_steps": float(_plain_steps(keep, settings)),
        "expected_run_gen_batches": float(_plain_steps(keep, settings)),
        "rollouts_generated": s.generated,
        "rollouts_trained": s.trained,
        "silent_share_mean": 1.0 - keep.rate,
        "silent_over": settings.silent_over,
        "p_silent_over": silent_over(keep.rate, B, settings.silent_over),
        **lost_shares(keep.rate, B),
    }
    return row, replace(s, rate=keep.rate, silent=s.generated * (1 - keep.rate))


def summarize(keep: Keep, settings: LoopSettings) -> tuple[pl.DataFrame, Step]:
    """The one-row summary of ``settings`` on these keep probabilities, and the step it describes."""
    capped = settings.trainer not in (*STREAMED, *REFILLED) or settings.trainer == "pilot-commit"
    head: dict[str, object] = {
        "train_batch_size": settings.train_batch_size,
        "gen_batch_size": settings.gen,
        "n": settings.n,
        "max_gen_batches": settings.max_gen_batches if capped else None,
        "filter": settings.filter,
        "steps": settings.steps,
        "epochs": settings.epochs,
        "prompts": keep.prompts,
        "keep_rate": keep.rate,
        **logged.columns(keep, settings),
    }
    if settings.trainer in REFILLED and (settings.filter or settings.trainer == "pilot-commit"):
        rest, s = REFILLED_ROWS[settings.trainer](keep, settings)
    elif settings.filter and settings.trainer == "slime" and settings.fallback:
        rest, s = slime_fallback_row(keep, settings)
    elif settings.filter and settings.trainer == "areal" and settings.dynamic_bs:
        rest, s = areal_dynamic_row(keep, settings)
    elif settings.filter and settings.trainer in STREAMED:
        rest, s = _streamed_row(keep, settings)
    else:
        rest, s = (_filtered_row if settings.filter else _plain_row)(keep, settings)
    return pl.DataFrame([{**head, **rest}], infer_schema_length=None), s


def curve(keep: Keep, settings: LoopSettings) -> pl.DataFrame:
    """P(crash over the run) and the share of generation thrown away against the multiplier B / T."""
    T = settings.train_batch_size
    top = max(4.0, 2.0 * settings.gen / T)
    rows = []
    for m in np.arange(0.25, top + 1e-9, 0.25).tolist():
        B = max(round(m * T), 1)
        s, p_run = crash_of(keep, settings, B, settings.max_gen_batches)
        waste = 1.0 - s.trained / s.generated if s.generated > 0 and math.isfinite(s.generated) else math.nan
        rows.append({"multiplier": B / T, "gen_batch_size": B, "p_crash_run": p_run, "waste_share": waste})
    return pl.DataFrame(rows)


def analyse(
    hist: pl.DataFrame, settings: LoopSettings, val: Valuation, figure: bool = False
) -> PreflightResult:
    """The loop's figures for ``settings`` on the histogram ``hist`` (``p``, [``k``, ``n``], ``prompts``)."""
    keep = keep_probabilities(hist, settings.n, val, settings)
    if np.isnan(keep.q).any():
        raise DataError(
            f"the chance that a group of n = {settings.n} rollouts is kept is not identified by these counts "
            f"(some prompts have fewer than {settings.n} samples, and no prior is identified for them: "
            f"{'; '.join(val.why_not()) or 'see the notes'}); give --prior npmle or --estimator plugin to "
            "assume one"
        )
    summary, s = summarize(keep, settings)
    drawn = curve(keep, settings) if figure and settings.filter and settings.trainer in CURVED else None
    estimator = val.label_at(hist, settings.n)
    summary = summary.with_columns(pl.lit(estimator).alias("estimator"))
    trust = tuple(line for line in (val.bias_note(),) if line)
    per_epoch = None
    if settings.retire is not None:
        per_epoch, below, before = retire.epochs(keep, settings, lambda pool: epoch_steps(pool, settings))
        if settings.epochs is not None:  # a run of epochs: their steps on the shrinking pool
            total = float(per_epoch["steps_in_epoch"].sum())
            limit = total if settings.steps is None else min(total, float(settings.steps))
            summary = summary.with_columns(pl.lit(limit, dtype=pl.Float64).alias("expected_steps"))
        summary = summary.with_columns(
            pl.lit(below, dtype=pl.Int64).alias("epoch_pool_below_batch"),
            pl.lit(before, dtype=pl.Float64).alias("steps_until_pool_below_batch"),
        )
    return PreflightResult(summary, settings, s, estimator, drawn, trust, per_epoch)


def epoch_steps(keep: Keep, settings: LoopSettings) -> float:
    """The expected steps of one epoch over the pool ``keep`` holds, as the trainer's loop runs it."""
    one = replace(settings, epochs=1, steps=None, retire=None)
    if keep.rate <= 0 and (settings.filter or settings.trainer == "pilot-commit"):
        return 0.0
    if settings.trainer == "pilot-commit":
        return pilot.pilot_epoch(keep.rate, one.gen, one.train_batch_size, one.max_gen_batches,
                                 int(keep.prompts // one.gen)).steps  # fmt: skip
    if settings.trainer == "openrlhf" and settings.filter:
        return streams.episode_steps(keep.rate, int(keep.prompts), one.gen, one.train_batch_size)
    if settings.trainer in (*REFILLED, *STREAMED) and settings.filter:
        row, _ = summarize(keep, replace(one, steps=1))
        return keep.prompts / float(row["prompts_per_step"][0])
    if not settings.filter:
        return float(int(keep.prompts // one.gen))
    return run_of(keep, one)[2]

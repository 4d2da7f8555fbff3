"""The sentences a person acts on: ``preflight``'s headline, with each trainer's knobs named as the
trainer names them (:meth:`sigmatool.trainers.settings.LoopSettings.key`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from sigmatool.render import chance
from sigmatool.trainers.settings import STREAMED, LoopSettings


def sentence(row: Mapping[str, Any], st: LoopSettings) -> str:
    """The sentence a person acts on, from the summary's row and the loop's settings."""
    if not st.filter and st.trainer != "pilot-commit":
        return (
            f"Without the filter, {row['silent_share_mean']:.1%} of each batch's groups are silent on average "
            f"(P(more than {st.silent_over:.0%} silent) = {chance(row['p_silent_over'])}); with equal response "
            f"lengths that share of every update is lost under each loss aggregation. The run takes "
            f"{row['expected_steps']:,.0f} steps ({run_words(st)})."
        )
    if st.trainer in STREAMED:
        return streamed_headline(row, st)
    if st.trainer in ("open-instruct", "openrlhf", "prime-rl", "pilot-commit"):
        return refilled_headline(row, st)
    batch, cap, knob, safe_key = loop_words(st)
    safe = row[safe_key]
    safe_words = (
        f"{safe:,} is the smallest {knob} that keeps it under {st.risk:.0%}"
        if safe is not None
        else f"no {knob} keeps it under {st.risk:.0%}"
    )
    if st.trainer == "nemo-rl" and safe_key == "min_safe_gen_batch_size" and safe is not None:
        # int(P × m) ≥ safe exactly when m ≥ safe / P: rounded up, so that the multiplier said gives it
        multiplier = math.ceil(safe / st.train_batch_size * 1e4) / 1e4
        safe_words = (
            f"{safe:,} prompts a batch ({st.key('batch_multiplier')} ≥ {multiplier:g}) is the smallest "
            f"that keeps it under {st.risk:.0%}"
        )
    thrown = 1.0 - row["share_trained"] if row["share_trained"] is not None else math.nan
    said = (
        f"With {batch} and {cap}, this run crashes with probability "
        f"{chance(row['p_crash_run'])} within {run_words(st)} ({chance(row['p_crash_step'])} per step); "
        f"{safe_words}, and {thrown:.0%} of generated rollouts will be thrown away."
    )
    said += loop_more(row, st)
    if st.epochs is not None:  # the optimizer's schedule needs its real step count (verl counts batches)
        said += (
            f" The run takes {row['expected_steps']:,.1f} optimizer steps on average, for "
            f"{row['expected_run_gen_batches']:,.1f} generation batches."
        )
    return said


def run_words(settings: LoopSettings) -> str:
    """The run's length as the settings give it: steps, epochs, or the first of both."""
    epochs = (
        None if settings.epochs is None else f"{settings.epochs} epoch{'s' if settings.epochs != 1 else ''}"
    )
    steps = None if settings.steps is None else f"{settings.steps:,} step{'s' if settings.steps != 1 else ''}"
    if settings.trainer == "slime" and steps:
        return steps  # num_rollout takes precedence over num_epoch
    if epochs and steps:
        return f"the first of {epochs} and {steps}"
    return epochs or steps or ""


def loop_words(st: LoopSettings) -> tuple[str, str, str, str]:
    """A filtered loop's words: its batch, its cap, the knob its headline advises on, and that column."""
    endless, cap_key = st.max_gen_batches <= 0, st.key("max_gen_batches")
    if st.trainer == "skyrl":
        cap = "endless batches" if endless else f"{cap_key} {st.max_gen_batches}"
        ratio = st.key("min_replace_ratio")
        strategy = f"replace, {ratio} {st.min_replace_ratio:g}" if st.replace else "filter"
        batch = f"{st.key('train_batch_size')} {st.train_batch_size:,} (SkyRL's {strategy})"
        return batch, cap, cap_key, "min_safe_max_gen_batches"
    if st.trainer == "nemo-rl":
        cap = (
            f"{cap_key} ≤ 0 (it fails at the first short batch)"
            if endless
            else f"{cap_key} {st.max_gen_batches} ({st.max_gen_batches + 1} batches a step)"
        )
        batch = f"NeMo-RL's {st.key('train_batch_size')} {st.train_batch_size:,}, {st.gen:,} prompts a batch"
        return batch, cap, "gen batch size", "min_safe_gen_batch_size"
    cap = "endless batches" if endless else f"{cap_key} {st.max_gen_batches}"
    return f"{st.key('gen_batch_size')} {st.gen:,}", cap, "gen batch size", "min_safe_gen_batch_size"


def loop_more(row: Mapping[str, Any], st: LoopSettings) -> str:
    """What a loop adds to the headline: SkyRL's failing batches and copies, NeMo-RL's rows."""
    if st.replace:
        fails, copied = float(row["p_batch_fails"]), row["copied_share"]
        said = f" A batch fails with probability {chance(fails)} (no more than {st.min_replace_ratio:.0%} of its groups differ)"
        if isinstance(copied, float) and not math.isnan(copied):
            said += f"; {copied:.0%} of a trained batch's groups are copies of others"
        return said + "."
    if st.trainer == "nemo-rl" and st.leave_one_out:
        return (
            " With the leave-one-out baseline a group with 1 or n − 1 right keeps n − 1 rows (none at n ≤ 2); "
            f"a step needs {st.key('train_batch_size')} × n rows."
        )
    return ""


def streamed_headline(row: Mapping[str, Any], st: LoopSettings) -> str:
    """slime's and AReaL's loops: no cap and no crash, so what a step costs and what the run draws."""
    prompts, passes = float(row["prompts_per_step"]), float(row["data_passes"])
    thrown = 1.0 - float(row["share_trained"])  # of the completed groups' rollouts
    if st.trainer == "slime":
        size = f"{st.key('train_batch_size')} {st.train_batch_size:,}, rounds of {st.gen:,} prompts"
        aborted = float(row["rollouts_aborted"]) / st.n
        extra = (
            f" new to it, and resumes the {aborted:,.1f} the step before left in flight "
            f"({st.argument('partial_rollout')})"
            if st.partial_rollout
            else f", {aborted:,.1f} of them aborted in flight when the batch fills"
        )
    else:
        size, extra = f"{st.key('train_batch_size')} {st.train_batch_size:,}", ""
    return (
        f"{st.name}'s loop has no cap and never crashes: with {size}, a step draws {prompts:,.1f} prompts on "
        f"average{extra}, and {thrown:.0%} of completed rollouts will be thrown away. The run "
        f"({row['expected_steps']:,.0f} steps) passes over the data {passes:,.2f} times."
    )


def refilled_headline(row: Mapping[str, Any], st: LoopSettings) -> str:
    """open-instruct's, OpenRLHF's, prime-rl's and Pilot-Commit's loops: what a step draws and throws away,
    and the crash where the loop has one."""
    prompts, thrown = float(row["prompts_per_step"]), 1.0 - float(row["share_trained"])
    steps = float(row["expected_steps"])
    if st.trainer == "pilot-commit":
        return (
            f"Pilot-Commit's loop (gen {st.gen:,}, pilot {st.pilot_n}, commit {st.n}, kept when "
            f"{st.keep_lo:g} ≤ k/{st.pilot_n} ≤ {st.keep_hi:g}) keeps {row['keep_rate']:.1%} of pilots and "
            f"takes {row['expected_gen_batches']:,.2f} rounds a step; this run crashes with probability "
            f"{chance(row['p_crash_run'])} ({chance(row['p_crash_first_step'])} for an epoch's first step, "
            f"which commits nothing in its first round), over {steps:,.1f} steps on average."
        )
    said = (
        f"{st.name}'s loop keeps {row['keep_rate']:.1%} of groups: a step reads {prompts:,.1f} prompts on "
        f"average, and {thrown:.0%} of generated rollouts do not train"
    )
    if st.trainer == "openrlhf":
        said += f"; an episode takes {float(row['steps_per_episode']):,.1f} steps"
    if st.trainer == "prime-rl" and st.refill:
        said += (
            f"; the run raises with probability {chance(row['p_crash_run'])} (10 batches rejected in a row)"
        )
    return said + f". The run takes {steps:,.0f} steps."

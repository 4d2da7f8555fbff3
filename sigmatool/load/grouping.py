"""Is a rollout log grouped by prompt the way it was sampled? Notes on keys that cannot be right.

A rollout log is pooled into k right of n per prompt key. Three findings say the key does not tell the
prompts apart, or that there is too little per prompt to tell anything, and each gets one line:

- one key for the whole log (not checked per ``by`` group, where one prompt is normal): the prompts collapsed to one text (a vision-language run dumps the decoded
  prompt text without its image, so every prompt of a step reads the same);
- one key with far more rollouts than the rest (≥ 8 × the median, and ≥ 64): several prompts share it;
- prompts with one usable rollout (n = 1): their p̂ is 0 or 1, so they read as silent at every G.

The input is the per-key counts as a histogram: an ``n`` column and a ``prompts`` column (how many keys have
that n), per ``by`` group when there are any.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

POOLED_FACTOR = 8
POOLED_MIN = 64
# The field each trainer's reader keys prompts by, as the notes name it.
PROMPT_FIELDS = {
    "verl": "'input' (the decoded prompt text; a vision-language run's images are not in it)",
    "trl": "'prompt' (the decoded prompt text; a vision-language run's images are not in it)",
    "nemo-rl": "the message texts of 'content'",
    "areal": "'prompt'",
    "skyrl": "'input_prompt'",
    "roll": "'domain' and 'id'",
    "verifiers": "(env, 'example_id')",
    "nemo-gym": "(agent_ref.name, '_ng_task_index')",
    "open-instruct": "'prompt_tokens'",
}


def _weighted_median(n: pl.Series, weight: pl.Series) -> float:
    order = n.arg_sort()
    values, weights = n.gather(order).to_list(), weight.gather(order).cast(pl.Float64).to_list()
    half, seen = sum(weights) / 2, 0.0
    for value, w in zip(values, weights, strict=True):
        seen += w
        if seen >= half:
            return float(value)
    return float(values[-1])


def _way_out(trainer: str | None) -> str:
    if trainer is None:
        return "give --prompt-col a column that tells the prompts apart"
    return (
        f"read the {trainer} files with --rollouts --prompt-col COL (and --reward-col) naming a field that "
        "tells the prompts apart"
    )


def key_notes(
    counts: pl.DataFrame,
    by: Sequence[str] = (),
    *,
    trainer: str | None = None,
    key: str = "",
    singles: bool = True,
) -> list[str]:
    """One line per finding (module docstring) on per-key counts ``n`` and ``prompts``; ``key`` names the
    prompt key as people know it (default: the trainer's field, else "the prompt key"). Without ``singles``
    the prompts of one rollout are left to the group checks (a mask that merges them)."""
    if counts.height == 0:
        return []
    who = f"{trainer}: " if trainer else ""
    field = key or PROMPT_FIELDS.get(trainer or "", "") or "the prompt key"
    prompts = float(counts["prompts"].sum())
    rollouts = int((counts["n"] * counts["prompts"]).sum())
    notes = []
    # Per --by group one key is normal (a run with one prompt per step); over the whole log it is not.
    if not by and prompts == 1 and rollouts > 1:
        notes.append(
            f"{who}every rollout has the same prompt key {field} ({rollouts:,} rollouts read as one prompt): "
            f"if they came from several prompts, the key does not tell them apart; {_way_out(trainer)}"
        )
    else:
        top, median = int(counts["n"].max()), _weighted_median(counts["n"], counts["prompts"])  # type: ignore[arg-type]
        if top >= POOLED_MIN and top >= POOLED_FACTOR * median:
            notes.append(
                f"{who}a prompt key of {field} holds {top:,} rollouts against a median of {median:g}: prompts "
                f"that share one key are pooled into one; {_way_out(trainer)}"
            )
    single = float(counts.filter(pl.col("n") == 1)["prompts"].sum()) if singles else 0.0
    if single and single == prompts:
        notes.append(
            f"{who}every prompt has one usable rollout (n = 1): each p̂ is 0 or 1, so every prompt reads as "
            "silent at every G; sample several rollouts per prompt to measure its pass rate"
        )
    elif single:
        notes.append(
            f"{who}{single:,.0f} of {prompts:,.0f} prompts have one usable rollout (n = 1): their p̂ is 0 or 1, "
            "silent at every G"
        )
    return notes


# Columns that hold a prompt's text in rollout logs (eval harnesses, trainers, exports), checked against the key.
TEXT_NAMES = ("prompt", "question", "problem", "input", "query", "instruction", "messages", "input_prompt")


def text_column(names: Sequence[str], key: str, by: Sequence[str] = ()) -> str | None:
    """The column that holds the prompt text beside the prompt key, if the log has one."""
    for name in names:
        if name.lower() in TEXT_NAMES and name != key and name not in by:
            return name
    return None


def text_key_notes(frames: Sequence[pl.LazyFrame], key: str, text: str, fix: str = "") -> list[str]:
    """Whether the key tells the prompts apart as their text does: keys holding several different texts
    (their prompts pooled), texts spanning several keys (one prompt split). One pass over the two columns;
    a log whose text cannot be read (a column polars cannot type) is not checked, nor one whose every text is
    on one row (a rollout's own conversation)."""
    try:
        pairs = (
            pl.concat([f.select(pl.col(key).alias("k"), pl.col(text).hash().alias("t")) for f in frames])
            .group_by("k", "t")
            .agg(pl.len().alias("rows"))
            .collect(engine="streaming")
        )
    except (pl.exceptions.PolarsError, OSError):
        return []
    if bool((pairs["rows"] == 1).all()) and pairs["t"].n_unique() == pairs.height > pairs["k"].n_unique():
        # Every text on one row, keys holding several: the text is each rollout's own (its conversation,
        # new each rollout), not the prompt's; it says nothing of the key.
        return []
    per_key = pairs.group_by("k").agg(pl.len().alias("texts"))
    per_text = pairs.group_by("t").agg(pl.len().alias("keys"))
    worst = (
        per_key.sort("texts", "k", descending=[True, False], nulls_last=True).row(0)
        if per_key.height
        else None
    )
    counts = KeyTexts(
        keys=per_key.height,
        pooled=int((per_key["texts"] > 1).sum()),
        worst_key=None if worst is None else worst[0],
        worst_texts=0 if worst is None else int(worst[1]),
        split=int((per_text["keys"] > 1).sum()),
        most_keys=int(per_text["keys"].max() or 0),  # type: ignore[arg-type]
    )
    return key_texts_notes(counts, key, text, fix)


@dataclass(frozen=True)
class KeyTexts:
    """How a prompt key and a text column pair up: ``keys`` distinct keys, ``pooled`` of them holding several
    texts (``worst_key`` the most, ``worst_texts`` of them; ties to the smallest key), ``split`` texts under
    several keys (``most_keys`` at most)."""

    keys: int
    pooled: int
    worst_key: object
    worst_texts: int
    split: int
    most_keys: int


def key_texts_notes(counts: KeyTexts, key: str, text: str, fix: str = "") -> list[str]:
    """The notes of :func:`text_key_notes` from its counts (made by polars, or by an engine)."""
    notes = []
    if counts.pooled:
        notes.append(
            f"{counts.pooled:,} of {counts.keys:,} prompt keys of {key!r} hold several different {text!r} texts "
            f"(key {counts.worst_key!r}: {counts.worst_texts}): the rollouts of different prompts are pooled "
            "under one key" + (fix or f"; if {text!r} tells the prompts apart, --prompt-col {text}")
        )
    if counts.split:
        notes.append(
            f"{counts.split:,} {text!r} texts each appear under several keys of {key!r} (up to "
            f"{counts.most_keys}): if one text is one prompt, its rollouts are split (--prompt-col {text} pools "
            "them); an environment whose state is not in the text (a game's board) keys them apart rightly"
        )
    return notes

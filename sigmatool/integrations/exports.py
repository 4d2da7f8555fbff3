"""What ``sigmatool export --for verl|trl|prime-rl`` writes for a schedule file: the trainer's own lines.

- verl ≤ 0.7: the ``data.sampler`` overrides that plug :mod:`sigmatool.integrations.verl` in, over the input
  the schedule was made from, ``train_batch_size`` B, one epoch; verl ≥ 0.8 (no sampler plug): an order read
  in sequence (``data.train_files=ORDER data.shuffle=False``), same B and one epoch.
- TRL: the lines that make a GRPO trainer draw from the schedule (:mod:`sigmatool.integrations.trl`).
- prime-rl: a ``difficulty_pool`` sampler table for a pools or band schedule (:func:`prime_rl`).
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

from sigmatool.integrations.schedule import FloatArray, Schedule, ScheduleError
from sigmatool.trainers.settings import NOTED_KEYS, TRL_KEYS, VERL_KEYS

LAST_SAMPLER = (0, 7)  # verl's last minor version with data.sampler


def keys(table: dict[str, str]) -> dict[str, str]:
    """A trainer's config keys by sigmatool's name of each setting (the keys live in the trainers' wing)."""
    return {setting: key for key, setting in table.items()}


VERL, TRL = keys(VERL_KEYS), keys(TRL_KEYS)
VERL_SHUFFLE = next(key for key in NOTED_KEYS["verl"] if key.endswith(".shuffle"))


def _version(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    parts = text.strip().lstrip("v").split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        raise ScheduleError(f"--trainer-version: a version such as 0.7 or 0.8.1, not {text!r}") from None


def _input_files(schedule: Schedule) -> str:
    files = [f if not os.path.exists(f) else os.path.abspath(f) for f in schedule.record["input"]["files"]]
    return files[0] if len(files) == 1 else "[" + ",".join(files) + "]"


def verl(schedule: Schedule, version: str | None = None) -> str:
    """verl's command-line overrides for the schedule (``version``: verl's; default the sampler plug)."""
    at = _version(version)
    path, r = os.path.abspath(schedule.path), schedule.record
    head = [f"# verl overrides from {r['argv']}"]
    G = [f"{VERL['n']}={schedule.G}"] if schedule.G else []
    if at is not None and at > LAST_SAMPLER:
        if schedule.kind != "order":
            raise ScheduleError(
                f"{schedule.path}: verl {version} reads a dataset in order and has no sampler plug; a "
                f"{schedule.kind} file needs one: write an order (curriculum --export-order FILE.parquet) "
                "or use verl 0.7 (--trainer-version 0.7)"
            )
        if not schedule.path.lower().endswith((".parquet", ".pq")):
            raise ScheduleError(f"{schedule.path}: verl reads parquet: write --export-order FILE.parquet")
        body = [f"data.train_files={path}", f"{VERL_SHUFFLE}=False", f"{VERL['train_batch_size']}={schedule.batch}",
                f"{VERL['epochs']}=1", *G]  # fmt: skip
        return "\n".join([*head, "# verl >= 0.8: the order's T x B rows in sequence, B a step", *body]) + "\n"
    body = [
        f"data.train_files={_input_files(schedule)}",
        "data.dataloader_num_workers=0",
        "data.sampler.class_path=pkg://sigmatool.integrations.verl",
        "data.sampler.class_name=ScheduleSampler",
        f"+data.sampler.schedule={path}",
        *G,
    ]
    if schedule.kind == "plan":
        head.append(
            f"# a plan: each kept prompt once an epoch, at your {VERL['train_batch_size']} and epochs"
        )
    else:
        body[1:1] = [f"{VERL['train_batch_size']}={schedule.batch}", f"{VERL['epochs']}=1"]
    note = "# verl 0.5-0.7 (pip install 'sigmatool[verl]'); extra_info.index must be each row's place"
    return "\n".join([*head, note, *body]) + "\n"


def trl(schedule: Schedule) -> str:
    """The lines that make TRL's GRPO trainer draw from the schedule."""
    path, r = os.path.abspath(schedule.path), schedule.record
    G = schedule.G or "G"
    batch = (
        f"# generation_batch_size = {schedule.batch} x {TRL['n']} = {schedule.batch * schedule.G}"
        if schedule.batch and schedule.G
        else f"# generation_batch_size: any multiple of {TRL['n']} = {G}"
    )
    # One epoch of the sampler is the schedule's T chunks (a chunk feeds steps_per_generation steps).
    epochs = f", {TRL['epochs']}=1" if schedule.kind != "plan" else ""
    return "\n".join([
        f"# TRL GRPO from {r['argv']}",
        f"# train_dataset: the schedule's input, its {schedule.rows:,} rows in order",
        batch,
        "from trl import GRPOConfig, GRPOTrainer",
        "from sigmatool.integrations.trl import scheduled",
        f"Trainer = scheduled(GRPOTrainer, {json.dumps(path)})",
        f"config = GRPOConfig({TRL['n']}={G}{epochs})",
    ]) + "\n"  # fmt: skip


# ------------------------------------------------------------------------------------------------ prime-rl


def _label_of(schedule: Schedule) -> tuple[list[str], list[float], list[tuple[float, float]]]:
    """The schedule's pools: names, shares W and ranges (a band: one pool of share 1)."""
    s = schedule.record["schedule"]
    if s["schedule"] == "band":
        lo, hi = s["band"]
        return [f"{lo:g}-{hi:g}"], [1.0], [(float(lo), float(hi))]
    pools = [(float(lo), float(hi), float(w)) for lo, hi, w in s["pools"]]
    return (
        [f"{lo:g}-{hi:g}" for lo, hi, _ in pools],
        [w for *_, w in pools],
        [(lo, hi) for lo, hi, _ in pools],
    )


def _which(p: float, ranges: list[tuple[float, float]], s: dict[str, object]) -> int:
    """The first range that holds ``p`` (−1: none, or left out by --drop-solved/--drop-unsolved)."""
    if (s["drop_solved"] and p >= 1.0) or (s["drop_unsolved"] and p <= 0.0):
        return -1
    return next((j for j, (lo, hi) in enumerate(ranges) if lo <= p <= hi), -1)


def segments(schedule: Schedule) -> list[tuple[float, int]]:
    """prime-rl's pools for the schedule, ascending: (threshold, the sigmatool pool it holds, −1: none). A
    pool holds the scores above the previous threshold up to its own (inclusive); a point where the pool
    changes gets a threshold just below it (the float before), so each score lands where sigmatool puts it."""
    s = schedule.record["schedule"]
    _, _, ranges = _label_of(schedule)
    points = sorted({0.0, 1.0, *(x for r in ranges for x in r if 0.0 <= x <= 1.0)})
    pieces: list[tuple[float, int]] = []
    for i, b in enumerate(points):
        if i:
            pieces.append((math.nextafter(b, -math.inf), _which((points[i - 1] + b) / 2, ranges, s)))
        pieces.append((b, _which(b, ranges, s)))
    merged: list[tuple[float, int]] = []
    for threshold, label in pieces:
        if merged and merged[-1][1] == label:
            merged[-1] = (threshold, label)
        else:
            merged.append((threshold, label))
    return merged


def _pool_of(scores: FloatArray, thresholds: FloatArray) -> np.ndarray:
    """prime-rl's pool of each score: the first threshold ≥ it (the last pool catches the rest)."""
    return np.minimum(np.searchsorted(thresholds, scores, side="left"), thresholds.size - 1)


def move_chance(schedule: Schedule, G: int, thresholds: FloatArray) -> FloatArray:
    """Per input row, the chance that one group of G answers (Binomial(G, p)) has a mean in another pool
    than its pass rate p (NaN without p)."""
    from scipy.stats import binom

    assert schedule.p is not None
    p = schedule.p
    k = np.arange(G + 1)
    own = _pool_of(np.nan_to_num(p), thresholds)
    moved = _pool_of(k / G, thresholds)[None, :] != own[:, None]
    pmf = binom.pmf(k[None, :], G, np.nan_to_num(p)[:, None])
    return np.where(np.isfinite(p), (pmf * moved).sum(axis=1), np.nan)


def prime_rl(schedule: Schedule) -> tuple[str, float, int]:
    """The ``difficulty_pool`` sampler table for a pools or band schedule, the chance that one group moves a
    drawn prompt to another pool (weighed by the draws), and the prompts that prime-rl, pooling them by
    their rate as the file shows it, would draw where the schedule never does or the other way round (the
    schedule's estimate of p can differ from p̂ = k/n)."""
    kind = schedule.record["schedule"]["schedule"]
    if schedule.kind != "weights" or kind not in ("pools", "band"):
        raise ScheduleError(
            f"{schedule.path}: prime-rl's difficulty pools take a pools or band schedule's weights "
            f"(curriculum --schedule pools|band --per-prompt -o FILE), not a {kind} {schedule.kind} file"
        )
    if schedule.record["input"].get("by"):
        raise ScheduleError(f"{schedule.path}: one prime-rl source's pools: schedule it without --by")
    names, shares, _ = _label_of(schedule)
    assert schedule.p is not None
    assert schedule.weights is not None
    seg = segments(schedule)
    thresholds = np.array([t for t, _ in seg])
    usable = np.isfinite(schedule.p)
    label = np.array([lab for _, lab in seg])[_pool_of(np.nan_to_num(schedule.p), thresholds)]
    label = np.where(usable, label, -1)
    size = np.array([np.count_nonzero(label == j) for j in range(len(names))], dtype=np.float64)
    live = size > 0
    scale = np.count_nonzero(usable) / float(np.sum(np.array(shares)[live]))  # the mean task weighs 1
    chance = move_chance(schedule, int(schedule.G or 1), thresholds)
    drawn = float(np.nansum(schedule.weights * chance))
    lines = _toml(schedule, seg, names, shares, size, scale, drawn)
    weight = np.array([shares[j] if j >= 0 else 0.0 for j in range(-1, len(names))])[label + 1]
    differ = int(np.count_nonzero(usable & ((weight > 0) != (schedule.weights > 0))))
    return lines, drawn, differ


def _toml(
    schedule: Schedule,
    seg: list[tuple[float, int]],
    names: list[str],
    shares: list[float],
    size: FloatArray,
    scale: float,
    moved: float,
) -> str:
    r = schedule.record
    out = [
        f"# prime-rl difficulty pools from {r['argv']}",
        "# Under your [[orchestrator.train.source]], whose taskset is the schedule's input "
        f"({schedule.rows:,} tasks).",
        "# Each pool holds the tasks whose last group mean is at most its threshold; weight is per task",
        "# (the pool's share over its tasks, the mean task at 1.0, the weight prime-rl gives an unseen task).",
        f"# One group of G = {schedule.G} moves a drawn task to another pool with chance {moved:.1%}.",
        "[orchestrator.train.source.curriculum.sampler]",
        'type = "difficulty_pool"',
        f"seed = {int(r.get('seed') or 0)}",
    ]
    used: dict[str, int] = {}
    for threshold, label in seg:
        base = names[label] if label >= 0 else "none"
        used[base] = used.get(base, 0) + 1
        name = base if used[base] == 1 else f"{base} ({used[base]})"
        weight = float(scale * shares[label] / size[label]) if label >= 0 and size[label] > 0 else 0.0
        out += ["", f"[orchestrator.train.source.curriculum.sampler.pools.{json.dumps(name)}]",
                f"threshold = {float(threshold)!r}", f"weight = {weight!r}"]  # fmt: skip
    return "\n".join(out) + "\n"

"""The steps a trainer's sampler takes from a schedule, epoch after epoch, and where it is (to resume).

A step is B input rows: an order's step t as written; for weights, B distinct rows drawn with inclusion
probabilities π_i = min(1, c w_i), Σ π = B, by randomized systematic sampling, as ``curriculum
--export-order`` draws (:mod:`sigmatool.curriculum.sampling`); for a plan taken ``once`` an epoch, the kept
rows in a random order, B at a time (the rest of an epoch's rows, fewer than B, wait for the next). Epoch e
draws from ``numpy.random.default_rng([seed, e])``: every process with the same seed draws the same steps.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sigmatool.curriculum.sampling import inclusion, systematic
from sigmatool.integrations.schedule import FloatArray, IntArray, Schedule, ScheduleError


class Draws:
    """Steps of ``batch`` rows from ``schedule``; ``once``: a plan's kept rows each once an epoch (else a
    plan is drawn as weights 1/K on its K kept)."""

    def __init__(
        self, schedule: Schedule, batch: int, seed: int | None = None, *, once: bool = False
    ) -> None:
        self.schedule = schedule
        self.batch = int(batch)
        self.seed = int(schedule.record.get("seed") or 0) if seed is None else int(seed)
        self.once = once and schedule.kind == "plan"
        if self.batch < 1:
            raise ScheduleError(f"{schedule.path}: a step of {self.batch} prompts: give the batch size")
        if schedule.kind != "plan" and self.batch != schedule.batch:
            raise ScheduleError(
                f"{schedule.path}: the trainer's batch is {self.batch:,} prompts, the schedule's B is "
                f"{schedule.batch:,}: set the batch size to {schedule.batch:,}"
            )
        self.weights: FloatArray | None = None
        if schedule.weights is not None:
            self.set_weights(schedule.weights)
        self.epoch, self.step, self._perm = -1, 0, np.zeros(0, dtype=np.int64)
        self._rng = np.random.default_rng([self.seed, 0])

    @property
    def steps(self) -> int:
        """Steps an epoch: an order's or weights' T; a plan's kept rows // batch."""
        if self.schedule.kind == "plan":
            return self.schedule.kept // self.batch
        return int(self.schedule.total_steps or 0)

    def set_weights(self, weights: Any) -> None:
        """New weights per input row (≥ 0, finite; at least ``batch`` positive); an order has none."""
        if self.schedule.kind == "order":
            raise ScheduleError(f"{self.schedule.path}: an order's steps are fixed; it has no weights to set")
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        if w.size != self.schedule.rows:
            raise ScheduleError(f"{w.size:,} weights for a schedule of {self.schedule.rows:,} input rows")
        if not np.isfinite(w).all() or (w < 0).any():
            raise ScheduleError("weights are finite and ≥ 0")
        if np.count_nonzero(w) < self.batch:
            raise ScheduleError(
                f"{np.count_nonzero(w):,} rows have a positive weight, fewer than the {self.batch:,} a step draws"
            )
        self.weights = w / w.sum()

    def start(self, epoch: int) -> None:
        """Begin ``epoch`` at its first step."""
        self.epoch, self.step = epoch, 0
        self._rng = np.random.default_rng([self.seed, epoch])
        if self.once:
            assert self.weights is not None
            self._perm = np.asarray(self._rng.permutation(np.flatnonzero(self.weights > 0)), dtype=np.int64)

    def next(self) -> IntArray | None:
        """The next step's rows (None: the epoch is over)."""
        if self.step >= self.steps:
            return None
        t, B = self.step, self.batch
        self.step += 1
        if self.schedule.kind == "order":
            assert self.schedule.steps is not None
            return np.asarray(self.schedule.steps[t], dtype=np.int64)
        if self.once:
            return self._perm[t * B : (t + 1) * B]
        assert self.weights is not None
        pi = inclusion(self.weights, np.ones_like(self.weights), B)
        return systematic(pi, B, self._rng)

    def state(self) -> dict[str, Any]:
        """Where the draws are: epoch, step, the generator, a plan's order, the weights."""
        return {
            "epoch": self.epoch,
            "step": self.step,
            "rng": self._rng.bit_generator.state,
            "perm": self._perm.tolist(),
            "weights": None if self.weights is None else self.weights.tolist(),
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Back to a place :meth:`state` gave."""
        self.epoch, self.step = int(state["epoch"]), int(state["step"])
        self._rng = np.random.default_rng()
        self._rng.bit_generator.state = state["rng"]
        self._perm = np.asarray(state["perm"], dtype=np.int64)
        if state.get("weights") is not None:
            self.weights = np.asarray(state["weights"], dtype=np.float64)


def reweighed(schedule: Schedule, p: FloatArray) -> FloatArray:
    """The schedule's weights per input row (π / B, summing to 1) for the pass rates ``p`` (NaN: never
    drawn), by the schedule's own rule (:func:`sigmatool.curriculum.schedule.plan`); a ValueError when fewer
    than B rows can be drawn."""
    from sigmatool.curriculum.schedule import plan
    from sigmatool.options.curriculum import BucketWeight, CurriculumOptions, Pool
    from sigmatool.options.curriculum import Schedule as Kind

    s, r = schedule.record["schedule"], schedule.record
    options = CurriculumOptions(
        schedule=Kind(s["schedule"]),
        batch=int(r["B"]),
        steps=int(r["T"]),
        G=int(r["G"]),
        mean=(float(s["mean"][0]), float(s["mean"][1])),
        width=float(s["width"]),
        pools=tuple(Pool(*map(float, pool)) for pool in s["pools"]),
        band=(float(s["band"][0]), float(s["band"][1])),
        buckets=int(s["buckets"]),
        bucket_weight=BucketWeight(s["bucket_weight"]),
        drop_solved=bool(s["drop_solved"]),
        drop_unsolved=bool(s["drop_unsolved"]),
        blend=dict(s["blend"]),
        seed=int(r["seed"] or 0),
    )
    usable = np.isfinite(p)
    rate = np.where(usable, p, 0.0)
    assert schedule.group is not None
    made = plan(options, rate, usable.astype(np.float64), schedule.group, list(schedule.groups), rate)
    return np.asarray(made.step(0) / options.batch, dtype=np.float64)

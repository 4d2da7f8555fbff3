"""Each schedule's weights: per distinct value of the histogram, the chance that one of its prompts is
drawn at a step (docs/curriculum.md).

The histogram's rows are the prompts' distinct values (``--by`` group, pass rate, counts) with ``m`` prompts
each; a schedule only looks at a prompt's pass rate p (its estimate under the run's estimator) and group,
so prompts that share a row share a weight. :class:`Plan` holds what every step needs; :meth:`Plan.step`
gives the inclusion probabilities π of step t, per row (each of its prompts is drawn with chance π).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from sigmatool.curriculum.sampling import inclusion
from sigmatool.options.curriculum import BucketWeight, CurriculumOptions, Schedule

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class Plan:
    """A schedule on a histogram: ``p`` the pass rate that weighs each row, ``m`` its prompts (0 for rows
    the schedule drops), ``group`` its --by group, ``unit`` its pool or bucket (−1: in none), ``blend``
    each group's share of a step, ``order`` the easy-first order of the rows (highest p first)."""

    options: CurriculumOptions
    p: FloatArray
    m: FloatArray
    group: IntArray
    unit: IntArray
    units: tuple[str, ...]
    blend: FloatArray
    base: FloatArray  # the static part of each row's weight (pools, band, buckets); 1 for the others
    n: FloatArray | None = None  # each row's samples (counts), for easy-first's ties

    @property
    def prompts(self) -> float:
        """Prompts the schedule can draw (after --drop-solved and --drop-unsolved, and outside every pool)."""
        return float(self.m[self.base > 0].sum())

    def mean_at(self, t: int) -> float:
        """The Gaussian's mean μ(t) = START + (END − START) t / (T − 1) (START at T = 1)."""
        start, end = self.options.mean
        T = self.options.steps
        return start if T == 1 else start + (end - start) * t / (T - 1)

    def weights(self, t: int) -> FloatArray:
        """Each row's weight per prompt at step t, before the --by groups are blended."""
        if self.options.schedule is not Schedule.gaussian:
            return self.base
        S = self.options.width
        log_w = -((self.p - self.mean_at(t)) ** 2) / (2.0 * S * S)
        w = np.zeros_like(self.p)
        for g in range(self.blend.size):  # scaled per group: a far mean must not underflow all
            rows = (self.group == g) & (self.base > 0)
            if rows.any():
                w[rows] = np.exp(log_w[rows] - log_w[rows].max())
        return w * self.base

    def step(self, t: int) -> FloatArray:
        """π of step t per row: each group's weights normalised to its share of the step, then the B
        distinct draws' inclusion probabilities (:func:`~sigmatool.curriculum.sampling.inclusion`)."""
        if self.options.schedule is Schedule.easy_first:
            return self._in_order(t)
        w = self.weights(t)
        x = np.zeros_like(w)
        mass = np.bincount(self.group, weights=self.m * w, minlength=self.blend.size)
        live = self.blend * (mass > 0)
        for g in np.flatnonzero(live).tolist():
            rows = self.group == g
            x[rows] = w[rows] * live[g] / (live.sum() * mass[g])
        return inclusion(x, self.m, self.options.batch)

    def _in_order(self, t: int) -> FloatArray:
        """Easy-first: the stream of prompts in ``order``, epoch after epoch; step t takes positions
        tB … tB + B − 1 of it (each prompt once per epoch)."""
        B = self.options.batch
        m = self.m[self.order]
        N = float(m.sum())
        starts = np.concatenate([[0.0], np.cumsum(m)[:-1]])
        taken = np.zeros_like(m)
        first, last = t * B, (t + 1) * B
        for epoch in range(int(first // N), math.ceil(last / N)):
            lo, hi = first - epoch * N, last - epoch * N
            taken += np.clip(np.minimum(starts + m, hi) - np.maximum(starts, lo), 0.0, None)
        out = np.zeros_like(self.m)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[self.order] = np.where(m > 0, taken / m, 0.0)
        return out

    @cached_property
    def order(self) -> IntArray:
        """Rows by pass rate, highest first; ties by more samples first, then the histogram's order."""
        n = self.n if self.n is not None else np.zeros_like(self.p)
        keep = np.flatnonzero(self.m > 0)
        return np.asarray(keep[np.lexsort((keep, -n[keep], -self.p[keep]))], dtype=np.int64)


def plan(
    options: CurriculumOptions,
    p: FloatArray,
    m: FloatArray,
    group: IntArray,
    names: list[str],
    shown: FloatArray,
    n: FloatArray | None = None,
) -> Plan:
    """The schedule of ``options`` on rows of pass rate ``p`` (the estimate that weighs them), ``m`` prompts,
    --by ``group`` (named ``names``); ``shown`` is the rate as measured (p̂: 0 never solved, 1 always), for
    --drop-solved and --drop-unsolved (pools, bands and buckets cut ``p``)."""
    m = m.astype(np.float64).copy()
    if options.drop_solved:
        m[shown >= 1.0] = 0.0
    if options.drop_unsolved:
        m[shown <= 0.0] = 0.0
    unit, units, base = _static(options, p, m, group)
    counts = np.bincount(group, weights=m * (base > 0), minlength=len(names))
    blend = counts.copy()
    if options.blend:
        blend = np.array([float(options.blend.get(name, 0.0)) for name in names])
    return Plan(options, p, m, group, unit, units, blend, base, n)


def _static(
    options: CurriculumOptions, p: FloatArray, m: FloatArray, group: IntArray
) -> tuple[IntArray, tuple[str, ...], FloatArray]:
    """Each row's pool or bucket (−1: none), the units' names, and the static weight per prompt."""
    unit = np.zeros(p.size, dtype=np.int64)
    base = (m > 0).astype(np.float64)
    if options.schedule is Schedule.pools:
        unit[:] = -1
        for j, pool in enumerate(options.pools):
            unit[(unit < 0) & (p >= pool.lo) & (p <= pool.hi)] = j
        weight = np.array([pool.weight for pool in options.pools])
        # Uniform within a pool, pools in proportion to W: a prompt weighs W_j / (its pool's prompts).
        size = np.zeros((int(group.max(initial=0)) + 1, weight.size))
        inside = unit >= 0
        np.add.at(size, (group[inside], unit[inside]), m[inside])
        with np.errstate(divide="ignore", invalid="ignore"):
            per = np.where(size > 0, weight[None, :] / size, 0.0)
        base = np.where(inside & (m > 0), per[group, np.maximum(unit, 0)], 0.0)
        return unit, tuple(pool.name for pool in options.pools), base
    if options.schedule is Schedule.band:
        lo, hi = options.band
        inside = (p >= lo) & (p <= hi)
        unit[~inside] = -1
        return unit, (f"{lo:g}-{hi:g}",), np.where(inside, base, 0.0)
    if options.schedule is Schedule.buckets:
        return _buckets(options, p, m, group)
    return unit, ("all",), base


def _buckets(
    options: CurriculumOptions, p: FloatArray, m: FloatArray, group: IntArray
) -> tuple[IntArray, tuple[str, ...], FloatArray]:
    """K quantile buckets of p per group, of equal share; within each, weight ∝ 4p(1 − p) or 1 − p."""
    K = options.buckets
    unit = np.full(p.size, -1, dtype=np.int64)
    inner = 4.0 * p * (1.0 - p) if options.bucket_weight is BucketWeight.variance else 1.0 - p
    base = np.zeros_like(p)
    for g in np.unique(group).tolist():
        rows = np.flatnonzero((group == g) & (m > 0))
        if not rows.size:
            continue
        order = rows[np.argsort(p[rows], kind="stable")]
        # A value's prompts share its bucket: the bucket of the prompt in the middle of its run.
        middle = np.cumsum(m[order]) - m[order] / 2.0
        unit[order] = np.minimum((middle / m[order].sum() * K).astype(np.int64), K - 1)
        for b in range(K):
            at = rows[unit[rows] == b]
            mass = float((m[at] * inner[at]).sum())
            if mass > 0:
                base[at] = inner[at] / mass
    return unit, tuple(f"bucket {b + 1}" for b in range(K)), base

"""The ``fidelity`` objective: the most prompts reaching fidelity φ*, exactly, then signal as tie-break.

Its value is a step (0 below a prompt's reach size, 1 from it on), so the hull relaxation can be far from
integral. The count is maximised exactly instead: each prompt has one cost, the rollouts that take it from
its base to the smallest allowed size with ``φ ≥ φ*``, and taking prompts in order of rising cost (ties: the
larger signal at that size, then the order of p) reaches the most prompts any plan can. What is left, less than
any unreached prompt's cost, then goes by the signal greedy to prompts above their base (reached prompts may
grow, unreached ones may get a smaller group), so the count cannot change. The count is optimal; the signal
tie-break is the greedy's (within its own ``gap``), not proven optimal among count-optimal plans.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from sigmatool.options.plan import PlanOptions
from sigmatool.plan import curves
from sigmatool.plan.allocate import BLOCK, Assignment, build_hulls, freeze, greedy
from sigmatool.plan.compare import Uniform
from sigmatool.plan.hull import Index

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def reach_index(
    p: curves.Rows, counts: IntArray, base: Index, sizes: IntArray, options: PlanOptions, uniform: Uniform
) -> tuple[NDArray[np.int16], FloatArray]:
    """Per row, the smallest size index ≥ its base with ``φ ≥ φ*`` (−2: none) and the update weight there.

    One pass, one E[σ] per size and value, which also feeds the uniform strategies' sums.
    """
    reach = np.full(p.size, -2, dtype=np.int16)
    signal = np.zeros(p.size)
    for start in range(0, p.size, BLOCK):
        block = slice(start, start + BLOCK)
        q = p[block]
        weights = np.empty((q.size, sizes.size))
        values = np.empty((q.size, sizes.size))
        for j, G in enumerate(sizes.tolist()):
            weights[:, j] = curves.update_weight(q, G, options)
            values[:, j] = curves.value(q, G, options, weights[:, j])
        uniform.add(q, counts[block], values, weights)
        values[np.arange(sizes.size)[None, :] < base[block][:, None]] = 0.0
        hit = values.argmax(axis=1)
        found = values[np.arange(q.size), hit] > 0.0
        reach[block] = np.where(found, hit, -2)
        signal[block] = np.where(found, weights[np.arange(q.size), hit], 0.0)
    return reach, signal


def allocate(
    p: curves.Rows,
    counts: IntArray,
    base: Index,
    sizes: IntArray,
    options: PlanOptions,
    budget: int,
    uniform: Uniform,
) -> Assignment:
    """Reach φ* for the most prompts the budget allows, then spend the rest on signal."""
    reach, signal = reach_index(p, counts, base, sizes, options, uniform)
    base_x = np.where(base >= 0, sizes[np.maximum(base, 0)], 0)
    cost = np.where(reach >= 0, sizes[np.maximum(reach, 0)] - base_x, -1)
    del base_x
    # Whole cost classes are taken in order of cost; only the class where the budget runs out is sorted.
    classes = np.unique(cost[cost >= 0])
    spend = np.array([int(counts[cost == k].sum()) * int(k) for k in classes.tolist()], dtype=np.int64)
    taken = int(np.searchsorted(np.cumsum(spend), budget, side="right"))
    new_base = base.copy()
    within = cost >= 0
    if taken < classes.size:
        within &= cost < classes[taken]
    new_base[within] = reach[within]
    left = budget - int(spend[:taken].sum())
    boundary, moved = -1, 0
    if taken < classes.size and left >= classes[taken] > 0:
        k = int(classes[taken])
        members = np.flatnonzero(cost == k)
        members = members[np.lexsort((members, -signal[members]))]
        fit = int(np.searchsorted(np.cumsum(counts[members] * k), left, side="right"))
        new_base[members[:fit]] = reach[members[:fit]]
        left -= int(counts[members[:fit]].sum()) * k
        if fit < members.size and left >= k:
            boundary, moved = int(members[fit]), left // k
            left -= moved * k
    del cost, signal
    stage = replace(options, objective="signal")
    sized = tuple(sizes.tolist())
    hulls = build_hulls(p, counts, new_base, sizes, lambda q: curves.value_matrix(q, sized, stage), None)
    if boundary >= 0:
        # The boundary value is split between its base and its reach size; it takes no further rollouts.
        freeze(hulls, boundary, counts, sizes)
    result = greedy(hulls, counts, sizes, left)
    if boundary >= 0:
        result.split(boundary, int(reach[boundary]), moved)
    return result

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

from sigmatool.plan import curves
from sigmatool.plan.allocate import BLOCK, Assignment, build_hulls, greedy
from sigmatool.plan.hull import Index
from sigmatool.plan.options import PlanOptions

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def reach_index(p: FloatArray, base: Index, sizes: IntArray, options: PlanOptions) -> IntArray:
    """Per row, the smallest size index ≥ its base with ``φ ≥ φ*``; −2 when no allowed size reaches it."""
    reach = np.full(p.size, -2, dtype=np.int64)
    for j in range(sizes.size - 1, -1, -1):
        for start in range(0, p.size, BLOCK):
            block = slice(start, start + BLOCK)
            with np.errstate(invalid="ignore"):
                ok = curves.fidelity(p[block], int(sizes[j]), options) >= options.target
            ok &= j >= base[block]
            reach[block] = np.where(ok, j, reach[block])
    return reach


def reach_cost(reach: IntArray, base: Index, sizes: IntArray) -> IntArray:
    """Rollouts from the base to the reach size (−1 when unreachable)."""
    base_x = np.where(base >= 0, sizes[np.maximum(base, 0)], 0)
    return np.where(reach >= 0, sizes[np.maximum(reach, 0)] - base_x, -1)


def allocate(
    p: FloatArray, counts: IntArray, base: Index, sizes: IntArray, options: PlanOptions, budget: int
) -> Assignment:
    """Reach φ* for the most prompts the budget allows, then spend the rest on signal."""
    reach = reach_index(p, base, sizes, options)
    cost = reach_cost(reach, base, sizes)
    reachable = np.flatnonzero(reach >= 0)
    signal = np.zeros(reachable.size)
    for j in np.unique(reach[reachable]).tolist():
        at = reach[reachable] == j
        signal[at] = curves.update_weight(p[reachable[at]], int(sizes[j]), options)
    order = reachable[np.lexsort((reachable, -signal, cost[reachable]))]
    spend = np.cumsum(counts[order] * cost[order])
    whole = int(np.searchsorted(spend, budget, side="right"))
    left = budget - (int(spend[whole - 1]) if whole else 0)
    new_base = base.copy()
    new_base[order[:whole]] = reach[order[:whole]]
    boundary, moved = -1, 0
    if whole < order.size and left >= cost[order[whole]] > 0:
        boundary = int(order[whole])
        moved = left // int(cost[boundary])
        left -= moved * int(cost[boundary])
    stage = replace(options, objective="signal")
    sized = tuple(sizes.tolist())
    hulls = build_hulls(p, new_base, sizes, lambda q: curves.value_matrix(q, sized, stage), None)
    if boundary >= 0:
        # The boundary value is split between its base and its reach size; it takes no further rollouts.
        hulls.count[boundary] = 0
        hulls.end[boundary] = -1
    result = greedy(hulls, counts, sizes, left)
    if boundary >= 0:
        result.split(boundary, int(reach[boundary]), moved)
    return result

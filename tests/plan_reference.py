"""Reference answers for the plan tests: exhaustive dynamic programming and a sort-everything LP greedy."""

from __future__ import annotations

import itertools
import math

import numpy as np

from sigmatool.options.plan import PlanOptions
from sigmatool.plan import curves


def per_prompt_values(p: float, options: PlanOptions) -> list[tuple[int, float]]:
    """(G, v(p, G)) for every choice a prompt has: 0 unless keep_all, then every allowed size."""
    choices = [] if options.keep_all else [(0, 0.0)]
    for G in options.sizes:
        choices.append((G, float(curves.value(np.array([p]), G, options)[0])))
    return choices


def dp_optimum(rates: list[float], options: PlanOptions, budget: int) -> float:
    """Best Σ v(p_i, G_i) with Σ G_i ≤ budget over every prompt's choices, by DP over prompts × budget."""
    best = np.full(budget + 1, -math.inf)
    best[0] = 0.0
    for p in rates:
        nxt = np.full(budget + 1, -math.inf)
        for G, v in per_prompt_values(p, options):
            if G <= budget:
                nxt[G:] = np.maximum(nxt[G:], best[: budget + 1 - G] + v)
        best = nxt
    return float(best.max())


def upper_hull(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Upper concave hull of points sorted by x (the first is the start), cut where it stops rising."""
    hull: list[tuple[float, float]] = []
    for x, v in points:
        while len(hull) >= 2:
            (x0, v0), (x1, v1) = hull[-2], hull[-1]
            if (v1 - v0) * (x - x1) < (v - v1) * (x1 - x0):
                hull.pop()
            else:
                break
        hull.append((x, v))
    rising = [hull[0]]
    for x, v in hull[1:]:
        if v > rising[-1][1]:
            rising.append((x, v))
        else:
            break
    return rising


def lp_optimum(values: list[float], counts: list[int], options: PlanOptions, budget: int) -> float:
    """The LP relaxation: every hull segment of every prompt sorted by slope, the last taken fractionally."""
    segments: list[tuple[float, int]] = []
    total = 0.0
    for p, c in zip(values, counts, strict=True):
        points = per_prompt_values(p, options)
        start = points[0]
        total += c * start[1]
        if options.keep_all:
            budget -= c * start[0]
        hull = upper_hull(points)
        for (x0, v0), (x1, v1) in itertools.pairwise(hull):
            segments.extend([((v1 - v0) / (x1 - x0), int(x1 - x0))] * c)
    segments.sort(key=lambda s: -s[0])
    for slope, cost in segments:
        if cost <= budget:
            total += slope * cost
            budget -= cost
        else:
            total += slope * budget
            break
    return total

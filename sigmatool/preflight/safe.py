"""The smallest safe settings: the gen batch size and the cap whose run crashes with chance ≤ ``--risk``."""

from __future__ import annotations

import math
from collections.abc import Callable

from sigmatool.preflight.model import Keep
from sigmatool.preflight.runs import batches_of_run, crash_of, step_of
from sigmatool.trainers.settings import LoopSettings

SEARCH_LIMIT = 1 << 40


def _smallest(safe: Callable[[int], bool], low: int, high: int) -> int | None:
    """The smallest x in [low, high] with safe(x), doubling from low; safe is monotone (False then True)."""
    hi = low
    while not safe(hi):
        if hi >= high:
            return None
        hi = min(hi * 2, high)
    lo = max(low, hi // 2)
    if lo == hi or safe(lo):
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if safe(mid) else (mid, hi)
    return hi


def min_safe_gen_batch_size(keep: Keep, settings: LoopSettings) -> int | None:
    """The smallest gen batch size (at the given cap) whose run crashes with chance ≤ ``settings.risk``."""
    if (settings.max_gen_batches <= 0 and settings.trainer != "nemo-rl") or keep.rate <= 0:
        return 1 if keep.rate > 0 else None
    high = int(keep.prompts) if settings.epochs is not None and settings.steps is None else SEARCH_LIMIT
    return _smallest(lambda B: _safe(keep, settings, B, settings.max_gen_batches), 1, max(high, 1))


def _safe(keep: Keep, settings: LoopSettings, B: int, M: int) -> bool:
    """Whether the run at B and M crashes with chance ≤ ``settings.risk``: decided by bounds where they
    suffice (a run of at most m steps, each crashing with chance q, crashes with at most 1 − (1 − q)^m, and
    at least that for the steps that fit its batches surely), else by the renewal sums."""
    s = step_of(keep, settings, B, M)
    q = s.p_crash
    if q <= 0:
        return True
    per_epoch = int(keep.prompts // B)
    reset = settings.trainer == "nemo-rl"  # its epochs start afresh: only the first one's steps are sure
    batches = None if settings.epochs is None else settings.epochs * per_epoch
    room = None if batches is None else (per_epoch if reset else batches) // max(s.batches.size, 1)
    most = min(x for x in (settings.steps, batches) if x is not None)
    surely = min(x for x in (settings.steps, room) if x is not None)
    if -math.expm1(most * math.log1p(-q)) <= settings.risk if q < 1 else most == 0:
        return True
    if surely > 0 and (q >= 1 or -math.expm1(surely * math.log1p(-q)) > settings.risk):
        return False
    return crash_of(keep, settings, B, M)[1] <= settings.risk


def min_safe_max_gen_batches(keep: Keep, settings: LoopSettings) -> int | None:
    """The smallest cap (at the given gen batch size) whose run crashes with chance ≤ ``settings.risk``."""
    if keep.rate <= 0:
        return None
    B = settings.gen
    runs = batches_of_run(settings, keep.prompts, B)
    high = runs + 1 if runs is not None else SEARCH_LIMIT
    return _smallest(lambda M: _safe(keep, settings, B, M), 1, high)

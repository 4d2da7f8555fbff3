"""The NPMLE refitted to each bootstrap replicate, as :func:`sigmatool.prior.fit.fit_npmle` fits it.

Where the full data's NPMLE is unique (its fit does not reproduce the histogram), a replicate's is found by
support reduction from the full data's masses, a few steps each; a replicate whose fit reproduces its own
histogram, and every replicate of data whose fit does, takes the interior-point start and EM, as the
estimate does there (:func:`sigmatool.prior.batched.batched_masses`, all such replicates together).

Many warm refits are shared with a second process when the machine has a second core: the replicates go in
chunks, this process claiming them from the first and the helper from the last until they meet (each
replicate's fit is the same wherever it runs).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sigmatool.prior.batched import batched_masses
from sigmatool.prior.fit import refit_masses
from sigmatool.prior.model import Prior
from sigmatool.progress import nothing

FloatArray = NDArray[np.float64]

# Warm refits go to a second process only when there are at least this many (a process takes about 0.2 s
# to start, about a hundred refits' worth), in chunks of this size.
SHARED_FROM = 400
CHUNK = 50
# How long this process waits for the helper's next chunk before checking that it is still alive (seconds).
_WAIT = 1.0


Refits = tuple[FloatArray, NDArray[np.bool_]]


def warm_refits(L: FloatArray, weights: FloatArray, start: FloatArray) -> Refits:
    """Support reduction from ``start`` for each row of ``weights``: the masses, and which rows it could not
    fit as the NPMLE (:func:`sigmatool.prior.fit.refit_masses` gave None; their masses are zero)."""
    out = np.zeros((weights.shape[0], L.shape[1]), dtype=np.float64)
    failed = np.zeros(weights.shape[0], dtype=bool)
    for i, row in enumerate(weights):
        mass = refit_masses(L, row / row.sum(), start)
        if mass is None:
            failed[i] = True
        else:
            out[i] = mass
    return out, failed


def _fitted(refits: Refits) -> int:
    """How many rows :func:`warm_refits` fitted (for the progress count)."""
    return int((~refits[1]).sum())


def _chunk(weights: FloatArray, index: int, size: int) -> FloatArray:
    return weights[index * size : (index + 1) * size]


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _helper(L: FloatArray, weights: FloatArray, start: FloatArray, size: int, claims: Any, done: Any) -> None:
    """The second process: claim chunks from the last, refit them, and send each back, until the chunks
    meet the ones this process has claimed from the first. Ctrl-C is left to this process, which stops
    the helper on its way out (a helper of its own would print a traceback)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        with claims.get_lock():
            if claims[1] <= claims[0]:
                return
            claims[1] -= 1
            mine = int(claims[1])
        done.put((mine, warm_refits(L, _chunk(weights, mine, size), start)))


def _start_helper(
    L: FloatArray, weights: FloatArray, start: FloatArray, chunks: int
) -> tuple[Any, Any, Any] | None:
    """The helper process, started, with the shared claims and the queue it answers on; None where this
    system gives no second process or shared memory (then every chunk is refitted here)."""
    import multiprocessing

    try:
        context = multiprocessing.get_context("spawn")
        claims = context.Array("q", [0, chunks])  # the next chunk from the first, one past the helper's last
        done = context.Queue()
        helper = context.Process(target=_helper, args=(L, weights, start, CHUNK, claims, done), daemon=True)
        helper.start()
    except (OSError, ValueError, ImportError):
        return None
    return helper, claims, done


def _shared(
    L: FloatArray, weights: FloatArray, start: FloatArray, advance: Callable[[int], None]
) -> Refits | None:
    """:func:`warm_refits` in chunks, shared with one helper process working from the last chunk; None where
    no helper can start. The helper is a fresh interpreter (no threads or locks inherited) and is stopped on
    any way out; a chunk it claimed and never sent (it ended) is refitted here."""
    import queue

    chunks = -(-weights.shape[0] // CHUNK)
    started = _start_helper(L, weights, start, chunks)
    if started is None:
        return None
    helper, claims, done = started
    results: dict[int, Refits] = {}
    try:
        while True:
            with claims.get_lock():
                if claims[0] >= claims[1]:
                    break
                mine = int(claims[0])
                claims[0] += 1
            results[mine] = warm_refits(L, _chunk(weights, mine, CHUNK), start)
            advance(_fitted(results[mine]))
        while len(results) < chunks:
            try:
                mine, result = done.get(timeout=_WAIT)
            except queue.Empty:
                if helper.is_alive():
                    continue
                # The helper ended with a chunk claimed and never sent: the first one missing.
                mine = min(set(range(chunks)) - set(results))
                result = warm_refits(L, _chunk(weights, mine, CHUNK), start)
            results[mine] = result
            advance(_fitted(result))
        helper.join()
    finally:
        if helper.is_alive():
            helper.terminate()
            helper.join()
    order = range(chunks)
    return np.concatenate([results[c][0] for c in order]), np.concatenate([results[c][1] for c in order])


def npmle_refits(
    L: FloatArray, weights: FloatArray, full: Prior, advance: Callable[[int], None] = nothing
) -> FloatArray:
    """The NPMLE's masses (rows) for each row of ``weights`` (replicates × cells of ``L``, prompt counts),
    given the full data's fit ``full``; ``advance`` is told of each finished fit."""
    if full.reproduced:
        return batched_masses(L, weights, advance=advance)
    many = weights.shape[0] >= SHARED_FROM and _cores() > 1
    refits = _shared(L, weights, full.atom_mass, advance) if many else None
    if refits is None:
        refits = warm_refits(L, weights, full.atom_mass)
        advance(_fitted(refits))
    out, failed = refits
    if failed.any():
        out[failed] = batched_masses(L, weights[failed], advance=advance)
    return out

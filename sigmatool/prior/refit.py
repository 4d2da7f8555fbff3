"""The NPMLE refitted to each bootstrap replicate, as :func:`sigmatool.prior.fit.fit_npmle` fits it.

Where the full data's NPMLE is unique (its fit does not reproduce the histogram), a replicate's is found by
support reduction from the full data's masses, a few steps each. A replicate whose fit reproduces its own
histogram, and every replicate of data whose fit does, takes the analytic centre of its optimal face, the
point the estimate's interior-point start and EM approach there (:func:`sigmatool.prior.centre.face_centres`,
all such replicates together); one whose histogram turns out to lie outside the binomial mixtures has a
unique NPMLE, and takes support reduction's, to a tighter KKT gap than the estimate's (:func:`face_refits`).
On cells of several n the replicates take the interior-point start and EM, as the estimate does.

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
from sigmatool.prior.centre import applies, face_centres
from sigmatool.prior.fit import FIT_TOL, EMOptions, mixing_weights, refit_masses, support_reduction
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


# Support reduction of a replicate with no face centre stops at this KKT gap: its NPMLE is unique there, but
# at the estimate's gap (1e-6) the fit still moves by up to 0.007 in the silent rate at G = 64 with the start;
# at 1e-9, by 2e-5 (docs/prior.md, "Cost").
SPARSE_TOL = 1e-9


def _sparse(L: FloatArray, w: FloatArray) -> FloatArray:
    """Support reduction's NPMLE for weights ``w`` (summing to 1) to :data:`SPARSE_TOL`, from one grid point
    per cell, evenly spread (a first support no larger than the cells, whose Newton steps need no least
    squares); where it does not get there, support reduction from the estimate's start to the estimate's
    KKT gap, then EM from the interior-point start (:func:`sigmatool.prior.fit.fit_npmle`'s ways)."""
    start = np.zeros(L.shape[1])
    start[np.linspace(0, L.shape[1] - 1, min(L.shape)).round().astype(np.int64)] = 1.0 / min(L.shape)
    # A support that fits some cell 0 ends in NaN (then the estimate's way), silently.
    with np.errstate(divide="ignore", invalid="ignore"):
        reduced = support_reduction(L, w, start, tol=SPARSE_TOL)
    if reduced.gap <= SPARSE_TOL:
        return reduced.mass
    reduced = support_reduction(L, w, tol=FIT_TOL)
    if reduced.gap <= FIT_TOL:
        return reduced.mass
    keep = w > 0
    return mixing_weights(L[keep], w[keep], EMOptions())[0]


def face_refits(
    L: FloatArray, weights: FloatArray, advance: Callable[[int], None] = nothing, em: bool = False
) -> FloatArray:
    """The NPMLE's masses (rows) for each row of ``weights`` whose histogram the fit may reproduce: the
    analytic centre of its optimal face where it has one (its histogram a mixture of the grid's binomials);
    else the histogram lies outside the mixtures, or too near their boundary to tell, where the NPMLE is
    unique (or all but), and support reduction's is taken (:func:`_sparse`). With ``em``, and on cells
    that have no centres (:func:`sigmatool.prior.centre.applies`: several n, or many cells), each by the
    interior-point start and EM, as the estimate of such data is fitted
    (:func:`sigmatool.prior.batched.batched_masses`): slower, and what the default is measured against."""
    if em or not applies(L):
        return batched_masses(L, weights, advance=advance)
    shares = weights / weights.sum(axis=1, keepdims=True)
    out, found = face_centres(L, shares)
    advance(int(found.sum()))
    for i in np.flatnonzero(~found).tolist():
        out[i] = _sparse(L, shares[i])
        advance(1)
    return out


def npmle_refits(
    L: FloatArray,
    weights: FloatArray,
    full: Prior,
    advance: Callable[[int], None] = nothing,
    em: bool = False,
) -> FloatArray:
    """The NPMLE's masses (rows) for each row of ``weights`` (replicates × cells of ``L``, prompt counts),
    given the full data's fit ``full``; ``advance`` is told of each finished fit. ``em``: replicates whose
    fit may reproduce their histogram are fitted as the estimate is there (:func:`face_refits`)."""
    if full.reproduced:
        return face_refits(L, weights, advance, em)
    many = weights.shape[0] >= SHARED_FROM and _cores() > 1
    refits = _shared(L, weights, full.atom_mass, advance) if many else None
    if refits is None:
        refits = warm_refits(L, weights, full.atom_mass)
        advance(_fitted(refits))
    out, failed = refits
    if failed.any():
        out[failed] = face_refits(L, weights[failed], advance, em)
    return out

"""The plain group-size search: per prompt, double G until φ(G, p) ≥ φ*, then bisect (φ rises with G).

Two ways, both in Python on values pyarrow loaded (argument ``mode``):

- ``rows``: the search for every row, as the paper's scripts do;
- ``unique``: numpy's ``unique`` first (with counts), then the search once per distinct value.

The search (in the file's order, or over the distinct values in a random order) stops after
``subsample`` values or ``budget_s`` seconds; the caller extrapolates its time to
every value (``computed`` of ``units``). When every value was searched, the answer carries the summary of
the ``all`` row (as groupsize prints it) and, with ``per_prompt``, the per-prompt sizes are written to
``out`` as parquet. Argument: a JSON object. Prints one JSON line.
"""

import json
import math
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

args = json.loads(sys.argv[1])
TARGET, MAX_G = float(args["fidelity"]), int(args["max_G"])
HEAD = 1000  # rows whose sizes are reported for checking


def fidelity(p: float, G: int) -> float:
    """φ(G, p) = E[σ] / sqrt(p (1 − p)), the binomial sum in logs."""
    k = np.arange(1, G)
    log_fact = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, G + 1)))))
    log_pmf = log_fact[G] - log_fact[k] - log_fact[G - k] + k * math.log(p) + (G - k) * math.log1p(-p)
    return float(np.exp(log_pmf) @ np.sqrt(k * (G - k))) / G / math.sqrt(p * (1.0 - p))


def group_size(p: float) -> int:
    """The smallest G ≥ 2 with φ(G, p) ≥ φ*; -1 when p is 0 or 1 or G would pass MAX_G."""
    if p <= 0.0 or p >= 1.0:
        return -1
    lo, hi = 1, 2
    while fidelity(p, hi) < TARGET:
        if hi >= MAX_G:
            return -1
        lo, hi = hi, min(2 * hi, MAX_G)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fidelity(p, mid) >= TARGET else (mid, hi)
    return hi


def summary(sizes: np.ndarray, counts: np.ndarray) -> dict[str, float | None]:
    """The ``all`` row: counts, the weighted percentiles (smallest G with CDF ≥ q) and the mean."""
    reach = sizes > 0
    out: dict[str, float | None] = {"prompts": int(counts.sum()), "unreachable": int(counts[~reach].sum())}
    if not reach.any():
        return out
    G, w = sizes[reach], counts[reach]
    order = np.argsort(G, kind="stable")
    G, w = G[order], w[order]
    cdf = np.cumsum(w) / w.sum()
    return {
        **out,
        "g_min": int(G[0]),
        "g_median": int(G[np.searchsorted(cdf >= 0.5, True)]),
        "g_p90": int(G[np.searchsorted(cdf >= 0.9, True)]),
        "g_max": int(G[-1]),
        "mean_rollouts_schedule": float((G * w).sum() / w.sum()),
    }


p = pq.read_table(args["path"], columns=[args["col"]]).column(0).to_numpy()
if args["mode"] == "unique":
    values, counts = np.unique(p, return_counts=True)
    # Searched in a random order, so that the extrapolation from the values searched is unbiased.
    order = np.random.default_rng(0).permutation(values.size)
else:
    values, counts = p, np.ones(p.size, dtype=np.int64)
    order = np.arange(p.size)  # the file's order, which is random
start = time.perf_counter()
deadline = start + float(args["budget_s"])
found: dict[int, int] = {}  # index into values: its group size
for i in order[: int(args["subsample"])]:
    found[int(i)] = group_size(float(values[i]))
    if time.perf_counter() > deadline:
        break
answer = {"rows": int(p.size), "units": int(values.size), "computed": len(found)}
answer["compute_s"] = time.perf_counter() - start
# The first rows' sizes, where they were searched: [row id (from 1), size or -1].
index = np.arange(min(HEAD, p.size)) if args["mode"] == "rows" else np.searchsorted(values, p[:HEAD])
answer["head"] = [[i + 1, found[int(j)]] for i, j in enumerate(index) if int(j) in found]
if len(found) == values.size:
    sizes = np.array([found[i] for i in range(values.size)], dtype=np.int64)
    answer["summary"] = summary(sizes, counts)
    if args["per_prompt"]:
        per_row = sizes if args["mode"] == "rows" else sizes[np.searchsorted(values, p)]
        ids = pa.array(np.arange(1, p.size + 1, dtype=np.int64))
        table = pa.table({"id": ids, "p": p, "group_size": pa.array(per_row, mask=per_row < 0)})
        pq.write_table(table, args["out"])
print(json.dumps(answer))

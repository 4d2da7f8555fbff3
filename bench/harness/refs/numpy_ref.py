"""The plain approach: load the column(s) into memory, then numpy computes every row, vectorised.

pyarrow reads a pass-rate column; a rollout log or a --by column is read with pandas, whose group-by
aggregates per prompt or per group. Tasks: ``silent`` (p^G + (1−p)^G and p^G, averaged) and ``budget``
(E[σ] and Dr. GRPO's p(1−p)(1−1/G) per row, summed into shares). Argument: a JSON object (path, col, by,
rollouts, task, G). Prints one JSON line of answers, keyed as the checks read them.
"""

import json
import math
import sys

import numpy as np

args = json.loads(sys.argv[1])


def load() -> tuple[np.ndarray, np.ndarray | None]:
    """The pass rates, one per prompt, and the --by key of each (or None)."""
    if args["rollouts"]:
        import pandas as pd

        frame = pd.read_parquet(args["path"], columns=["prompt_id", "reward"])
        per_prompt = frame.groupby("prompt_id")["reward"].agg(["sum", "count"])
        del frame
        return (per_prompt["sum"] / per_prompt["count"]).to_numpy(dtype=np.float64), None
    if args["by"]:
        import pandas as pd

        frame = pd.read_parquet(args["path"], columns=[args["by"], args["col"]])
        return frame[args["col"]].to_numpy(dtype=np.float64), frame[args["by"]].to_numpy()
    import pyarrow.parquet as pq

    return pq.read_table(args["path"], columns=[args["col"]]).column(0).to_numpy(), None


def expected_sigma(p: np.ndarray, G: int) -> np.ndarray:
    """E[σ] of a group of G: Σ_k C(G, k) p^k (1−p)^(G−k) sqrt(k (G−k)) / G."""
    q = 1.0 - p
    total = np.zeros_like(p)
    for k in range(1, G):
        total += math.comb(G, k) * p**k * q ** (G - k) * math.sqrt(k * (G - k))
    return total / G


def per_group(keys: np.ndarray, columns: dict[str, np.ndarray], how: str) -> dict[str, np.ndarray]:
    """Each column's mean or sum per key, keys sorted; the sorted keys under "by"."""
    import pandas as pd

    grouped = pd.DataFrame(columns).groupby(keys, sort=True)
    result = grouped.mean() if how == "mean" else grouped.sum()
    return {"by": result.index.to_numpy(), **{c: result[c].to_numpy() for c in columns}}


def silent(p: np.ndarray, keys: np.ndarray | None, out: dict[str, object]) -> None:
    for G in args["G"]:
        right = p**G
        rates = {f"silent_rate {G}": right + (1.0 - p) ** G, f"all_right_rate {G}": right}
        if keys is None:
            out.update({name: float(np.mean(values)) for name, values in rates.items()})
        else:
            out.update({name: values.tolist() for name, values in per_group(keys, rates, "mean").items()})


def weights(p: np.ndarray, G: int | str) -> tuple[np.ndarray, np.ndarray]:
    """Each prompt's weight in GRPO's update (E[σ]) and in Dr. GRPO's (E[σ²]); their limits at G = inf."""
    if G == "inf":
        return np.sqrt(p * (1.0 - p)), p * (1.0 - p)
    return expected_sigma(p, int(G)), p * (1.0 - p) * (1.0 - 1.0 / int(G))


def budget(p: np.ndarray, keys: np.ndarray | None, out: dict[str, object]) -> None:
    extreme = (p < 0.1) | (p > 0.9)
    bins = np.clip(np.floor(p * 10), 0, 9).astype(np.int64)
    for G in args["G"]:
        grpo, drgrpo = weights(p, G)
        if keys is None:
            out[f"grpo extreme {G}"] = float(grpo[extreme].sum() / grpo.sum())
            out[f"drgrpo extreme {G}"] = float(drgrpo[extreme].sum() / drgrpo.sum())
            out[f"grpo bins {G}"] = (np.bincount(bins, weights=grpo, minlength=10) / grpo.sum()).tolist()
            continue
        sums = per_group(
            keys,
            {
                "g": grpo,
                "ge": np.where(extreme, grpo, 0.0),
                "d": drgrpo,
                "de": np.where(extreme, drgrpo, 0.0),
            },
            "sum",
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            out[f"grpo extreme {G}"] = (sums["ge"] / sums["g"]).tolist()
            out[f"drgrpo extreme {G}"] = (sums["de"] / sums["d"]).tolist()
        out["by"] = sums["by"].tolist()


p, keys = load()
answers: dict[str, object] = {"rows": int(p.size)}
(silent if args["task"] == "silent" else budget)(p, keys, answers)
print(json.dumps(answers))

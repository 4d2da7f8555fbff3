"""What the plug-in and unbiased estimators read, and when the unbiased one exists.

The plug-in estimator evaluates each formula at p̂ = k/n. The unbiased one draws the group of G from the n
logged samples without replacement (hypergeometric), which is unbiased for any G ≤ n and impossible beyond
(docs/theory.md §2).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from sigmatool.errors import UsageError
from sigmatool.options import Estimator, g_label


def value_keys(estimator: str) -> list[str]:
    """Distinct inputs a kernel needs: p̂ for the plug-in estimator, (k, n) for the unbiased one."""
    return ["k", "n"] if estimator == Estimator.unbiased else ["p"]


def check_estimator(hist: pl.DataFrame, sizes: Sequence[float], estimator: str) -> None:
    """The unbiased estimator needs counts, and a group no larger than the logged samples."""
    if estimator not in Estimator.__members__:
        raise UsageError(f"--estimator: one of {', '.join(Estimator.__members__)}, not {estimator!r}")
    if estimator != Estimator.unbiased:
        return
    if "n" not in hist.columns:
        raise UsageError(
            "--estimator unbiased needs counts: give --k-col/--n-col, --samples N (the samples behind each "
            "rate), or --rollouts"
        )
    n_min = int(hist["n"].min())  # type: ignore[arg-type]
    too_big = [g_label(G) for G in sizes if G > n_min]
    if too_big:
        short = int(hist.filter(pl.col("n") < max(sizes))["prompts"].sum())
        raise UsageError(
            f"--G {','.join(too_big)}: larger than the n = {n_min} logged samples of some prompts ({short:,}); "
            "no unbiased estimate exists for a group bigger than the samples it is drawn from. "
            "use --prior npmle, which predicts beyond the samples (docs/prior.md), or a G no larger than n"
        )

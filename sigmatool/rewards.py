"""What a rollout log's raw rewards say beyond right and wrong: invalid rewards (``--invalid``) and rewards
that differ by less than the grader's resolution (``--resolution``), for ``silent``.

**Invalid rewards** (null, NaN, ±inf, text such as ``error``): a prompt with R right, W wrong and I invalid of
n = R + W + I rollouts. A group is G of them drawn without replacement; it is silent when

- ``skip`` (invalid rows removed before grouping): its G rewards agree, ``[C(R, G) + C(W, G)] / C(R + W, G)``;
- ``mask`` (invalid rewards left out of the group's baseline and std; silent when the valid ones agree,
  fewer than two included): ``[C(R + I, G) + C(W + I, G) − C(I, G)] / C(n, G)``;
- ``zero`` (invalid read as 0): ``[C(R, G) + C(W + I, G)] / C(n, G)``.

The plug-in (``--estimator plugin``) draws with replacement at r = R/n, w = W/n, i = I/n:
``p^G + (1 − p)^G`` at p = R/(R + W), ``(r + i)^G + (w + i)^G − i^G`` and ``r^G + (w + i)^G``.

**Near ties**: with ``--resolution ε``, a group of raw rewards is silent when they are all equal or their range
is below ε, a range within 1e-12 of ε admitted (as a trainer's group filter with ``min_reward_range`` admits
it). Unbiased: the share of the logged rewards' G-subsets, ``Σ_i C(m_i, G − 1) / C(n, G)`` with the rewards
sorted and m_i the later ones within ε of the i-th; plug-in: G draws with replacement,
``Σ_v [F(v ≤ x < v + ε)^G − F(v < x < v + ε)^G]`` over the distinct values v. ``exact_tie_rate`` is the
share with all rewards equal, ``near_tie_rate`` the rest of the silent share. With 0/1 rewards and
0 < ε ≤ 1 the silent share is the plain one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.columns import labels, percent
from sigmatool.render import View

if TYPE_CHECKING:
    from sigmatool.load import Dataset
    from sigmatool.options import SilentOptions

FloatArray = NDArray[np.float64]

TOLERANCE = 1e-12  # a range this close to ε is admitted: not silent
MODES = ("skip", "mask", "zero")


def _choose(m: FloatArray, G: int) -> FloatArray:
    from scipy.special import comb

    return np.asarray(comb(m, G), dtype=np.float64)


def invalid_silent(
    R: FloatArray,
    W: FloatArray,
    I: FloatArray,  # noqa: E741
    G: int,
    plugin: bool = False,
) -> dict[str, FloatArray]:
    """Per prompt, the chance a group of G is silent under each way of reading invalid rewards (NaN where
    the prompt has fewer than G rollouts to draw from, or none valid).

    >>> one = np.array([1.0])
    >>> {m: round(float(x[0]), 4) for m, x in invalid_silent(2 * one, one, one, 2).items()}
    {'skip': 0.3333, 'mask': 0.6667, 'zero': 0.3333}
    """
    n = R + W + I
    with np.errstate(invalid="ignore", divide="ignore"):
        if plugin:
            r, w, i = R / n, W / n, I / n
            p = R / (R + W)
            skip = p**G + (1.0 - p) ** G
            mask = (r + i) ** G + (w + i) ** G - i**G
            zero = r**G + (w + i) ** G
        else:
            skip = (_choose(R, G) + _choose(W, G)) / _choose(R + W, G)
            mask = (_choose(R + I, G) + _choose(W + I, G) - _choose(I, G)) / _choose(n, G)
            zero = (_choose(R, G) + _choose(W + I, G)) / _choose(n, G)
    none = (R + W) == 0
    if not plugin:
        skip = np.where((R + W) < G, np.nan, skip)
        mask, zero = (np.where(n < G, np.nan, x) for x in (mask, zero))
    return {"skip": np.where(none, np.nan, skip), "mask": mask, "zero": zero}


def tie_shares(rewards: FloatArray, G: int, resolution: float, plugin: bool = False) -> tuple[float, float]:
    """(silent, all equal): the chance that G of these rewards are silent at ``resolution`` and that they are
    all equal (NaN where fewer than G rewards are logged and the groups are drawn without replacement).

    >>> [round(x, 4) for x in tie_shares(np.array([0.1, 0.5, 0.52, 0.9]), 2, 0.05)]  # only (0.5, 0.52)
    [0.1667, 0.0]
    """
    x = np.sort(np.asarray(rewards, dtype=np.float64))
    n = x.size
    if n == 0 or (not plugin and n < G):
        return float("nan"), float("nan")
    values, counts = np.unique(x, return_counts=True)
    width = resolution - TOLERANCE
    if plugin:
        f = counts / n
        exact = float((f**G).sum())
        if width <= 0:
            return exact, exact
        upto = np.searchsorted(values, values + width, side="left")  # values in [v, v + width)
        cum = np.concatenate([[0.0], np.cumsum(f)])
        within = cum[upto] - cum[np.arange(values.size)]
        return float((within**G - (within - f) ** G).sum()), exact
    total = float(_choose(np.array(float(n)), G))
    exact = float(_choose(counts.astype(np.float64), G).sum()) / total
    if width <= 0:
        return exact, exact
    later = np.searchsorted(x, x + width, side="left") - np.arange(n) - 1  # x_j − x_i < width, j > i
    return float(_choose(later.astype(np.float64), G - 1).sum()) / total, exact


@dataclass(frozen=True)
class RewardsResult:
    """``silent``'s answer from raw rewards (``--invalid``, ``--resolution``): the summary per --by group and
    G, or rows per prompt, with its headline."""

    table: pl.DataFrame
    headline: str = ""
    rows: bool = False

    def frame(self) -> pl.DataFrame:
        return self.table

    def view(self) -> View | None:
        if self.rows:
            return None
        names = self.table.columns
        shares = ("invalid_share", *(c for c in names if c.endswith("_rate")))
        return View(
            headline=self.headline,
            percent=(*percent(names), *(c for c in shares if c in names)),
            labels=labels(names),
            bars=("silent_rate",),
        )

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> None:
        return None

    def warnings(self) -> tuple[str, ...]:
        return ()


def _prompts(frame: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    return frame.group_by(list(by), maintain_order=True) if by else frame  # type: ignore[return-value]


def _pct(x: float | None) -> str:
    """A share for a headline: a percentage, or "no value" (no prompt holds G rewards to draw)."""
    return "no value" if x is None or x != x else f"{x:.1%}"


def invalid_answer(
    counts: pl.DataFrame, by: Sequence[str], sizes: Sequence[int], mode: str, plugin: bool, per_prompt: bool
) -> RewardsResult:
    """``silent --invalid``: ``counts`` holds per prompt its --by columns, ``id``, ``right``, ``wrong`` and
    ``invalid`` rollouts."""
    R, W, I = (counts[c].cast(pl.Float64).to_numpy() for c in ("right", "wrong", "invalid"))  # noqa: E741
    parts = []
    for G in sizes:
        silent = invalid_silent(R, W, I, int(G), plugin)
        parts.append(
            counts.with_columns(
                pl.lit(int(G), dtype=pl.Int64).alias("G"),
                (pl.col("right") + pl.col("wrong") + pl.col("invalid")).alias("n"),
                pl.Series("p_silent", silent[mode]),
                *(pl.Series(f"p_silent_{m}", silent[m]) for m in MODES),
            )
        )
    rows = pl.concat(parts).fill_nan(None)
    if per_prompt:
        return RewardsResult(
            rows.select(*by, "id", "G", "n", "invalid", "p_silent", *(f"p_silent_{m}" for m in MODES)),
            rows=True,
        )
    keys = [*by, "G"]
    summary = rows.group_by(keys, maintain_order=True).agg(
        pl.len().alias("prompts"),
        pl.col("invalid").sum().alias("invalid_rollouts"),
        (pl.col("invalid").sum() / pl.col("n").sum()).alias("invalid_share"),
        pl.col("p_silent").mean().alias("silent_rate"),
        *(pl.col(f"p_silent_{m}").mean().alias(f"silent_rate_{m}") for m in MODES),
        pl.lit("plug-in" if plugin else "unbiased").alias("estimator"),
    )
    first = summary.row(0, named=True)
    said = (
        f"{first['invalid_rollouts']:,} of the rollouts ({_pct(first['invalid_share'])}) have an invalid "
        f"reward; read as --invalid {mode}, {_pct(first['silent_rate'])} of groups of {first['G']} are "
        f"silent (skip {_pct(first['silent_rate_skip'])}, mask {_pct(first['silent_rate_mask'])}, "
        f"zero {_pct(first['silent_rate_zero'])})."
    )
    return RewardsResult(summary, said)


def resolution_answer(
    rewards: pl.DataFrame,
    by: Sequence[str],
    sizes: Sequence[int],
    resolution: float,
    plugin: bool,
    per_prompt: bool,
) -> RewardsResult:
    """``silent --resolution ε``: ``rewards`` holds per prompt its --by columns, ``id`` and ``rewards``, the
    list of its valid raw rewards."""
    rows = []
    for row in rewards.iter_rows(named=True):
        x = np.asarray(row["rewards"], dtype=np.float64)
        for G in sizes:
            silent, exact = tie_shares(x, int(G), resolution, plugin)
            rows.append({**{b: row[b] for b in by}, "id": row["id"], "G": int(G), "n": int(x.size),
                         "p_silent": silent, "p_exact_tie": exact, "p_near_tie": silent - exact})  # fmt: skip
    frame = pl.DataFrame(rows).fill_nan(None)
    if per_prompt:
        return RewardsResult(frame, rows=True)
    keys = [*by, "G"]
    summary = frame.group_by(keys, maintain_order=True).agg(
        pl.col("p_silent").is_not_null().sum().alias("prompts"),
        pl.col("p_silent").mean().alias("silent_rate"),
        pl.col("p_exact_tie").mean().alias("exact_tie_rate"),
        pl.col("p_near_tie").mean().alias("near_tie_rate"),
        pl.lit("plug-in" if plugin else "unbiased").alias("estimator"),
    )
    first = summary.row(0, named=True)
    said = (
        f"At resolution {resolution:g}, {_pct(first['silent_rate'])} of groups of {first['G']} are silent: "
        f"{_pct(first['exact_tie_rate'])} with every reward equal, {_pct(first['near_tie_rate'])} more "
        f"within {resolution:g}."
    )
    return RewardsResult(summary, said)


def answer(ds: Dataset, options: SilentOptions) -> RewardsResult:
    """``silent``'s answer from a rollout log's raw rewards: the per-prompt counts of right, wrong and
    invalid rewards (``--invalid``), or each prompt's valid rewards (``--resolution``)."""
    from sigmatool.errors import DataError, UsageError
    from sigmatool.load.names import BAD_REWARDS, NULL_REWARDS, RAW_ID, RAW_K, RAW_N, REWARD

    if ds.raw is None:
        raise UsageError("--invalid and --resolution read a rollout log's rewards: give --rollouts or --from")
    by = list(ds.by)
    sizes = [int(G) for G in options.sizes]
    plugin = options.estimator == "plugin"
    if options.invalid is not None:
        counts = ds.frame.select(
            *by,
            pl.col(RAW_ID).alias("id"),
            pl.col(RAW_K).cast(pl.Int64).alias("right"),
            (pl.col(RAW_N).cast(pl.Int64) - pl.col(RAW_K).cast(pl.Int64)).alias("wrong"),
            (pl.col(BAD_REWARDS).cast(pl.Int64) + pl.col(NULL_REWARDS).cast(pl.Int64)).alias("invalid"),
        ).collect()
        if counts.height == 0:
            raise DataError("--invalid: the log has no rollout")
        return invalid_answer(counts, by, sizes, options.invalid, plugin, options.per_prompt)
    assert options.resolution is not None
    x = pl.col(REWARD).cast(pl.Float64, strict=False)
    rewards = (
        ds.raw.select(*by, pl.col(RAW_ID).alias("id"), x.alias("x"))
        .group_by([*by, "id"], maintain_order=True)
        .agg(pl.col("x").filter(pl.col("x").is_finite()).alias("rewards"))
        .collect()
    )
    if rewards.height == 0:
        raise DataError("--resolution: the log has no rollout")
    return resolution_answer(rewards, by, sizes, options.resolution, plugin, options.per_prompt)


def track_ties(log: pl.LazyFrame, resolution: float) -> RewardsResult:
    """``track --resolution ε``: per step of a run's rollouts (``step``, ``group``, ``prompt``, ``reward``),
    the share of its groups silent at ε (all rewards equal, or spanning less than ε), their exact and near
    ties, and the share expected from each prompt's rewards in the other steps (leave-one-step-out: the
    unbiased share of their G-subsets), with z = (observed − expected) / √Σ e(1 − e) over the groups
    compared. Rewards that are not finite numbers are left out."""
    x = pl.col("reward").cast(pl.Float64, strict=False)
    groups = (
        log.select("step", "group", "prompt", x.alias("x"))
        .filter(pl.col("x").is_finite())
        .group_by("step", "group", maintain_order=True)
        .agg(pl.col("prompt").first(), pl.col("x").alias("rewards"))
        .collect()
    )
    if groups.height == 0:
        from sigmatool.errors import DataError

        raise DataError("--resolution: the run has no reward that is a finite number")
    frame = _group_rows(groups, resolution)
    compared = pl.col("expected").is_not_null()
    steps = (
        frame.group_by("step")
        .agg(
            pl.len().alias("groups"),
            pl.col("G").sum().alias("rollouts"),
            pl.col("silent").mean().alias("silent_fraction"),
            pl.col("exact").mean().alias("exact_tie_fraction"),
            (pl.col("silent") - pl.col("exact")).mean().alias("near_tie_fraction"),
            compared.sum().cast(pl.Int64).alias("compared_groups"),
            pl.col("silent").filter(compared).sum().alias("__observed"),
            pl.col("expected").filter(compared).sum().alias("__expected"),
            (pl.col("expected") * (1.0 - pl.col("expected"))).filter(compared).sum().alias("__variance"),
        )
        .sort("step")
    )
    n = pl.col("compared_groups")
    steps = steps.with_columns(
        pl.when(n > 0).then(pl.col("__expected") / n).alias("expected_silent_fraction"),
        pl.when(pl.col("__variance") > 0)
        .then((pl.col("__observed") - pl.col("__expected")) / pl.col("__variance").sqrt())
        .alias("silent_z"),
    ).drop("__observed", "__expected", "__variance")
    said = (
        f"At resolution {resolution:g}: each step's groups silent (all rewards equal or spanning less than "
        f"{resolution:g}) against the share expected from each prompt's rewards in the other steps."
    )
    return RewardsResult(steps, said)


def _group_rows(groups: pl.DataFrame, resolution: float) -> pl.DataFrame:
    """Per logged group (``step``, ``prompt``, ``rewards``): its size G, whether it is silent and an exact
    tie, and the chance a group of G of its prompt's rewards in the other steps is silent (null where they
    hold fewer than G)."""
    pools: dict[object, list[tuple[int, FloatArray]]] = {}
    for row in groups.iter_rows(named=True):
        pools.setdefault(row["prompt"], []).append(
            (row["step"], np.asarray(row["rewards"], dtype=np.float64))
        )
    rows = []
    for row in groups.iter_rows(named=True):
        x_g = np.asarray(row["rewards"], dtype=np.float64)
        G = x_g.size
        span = float(x_g.max() - x_g.min())
        others = [r for step, r in pools[row["prompt"]] if step != row["step"]]
        pool = np.concatenate(others) if others else np.zeros(0)
        expected = tie_shares(pool, G, resolution)[0] if pool.size >= G else float("nan")
        rows.append(
            {
                "step": row["step"],
                "G": G,
                "silent": float(span == 0 or span < resolution - TOLERANCE),
                "exact": float(span == 0),
                "expected": expected,
            }
        )
    return pl.DataFrame(rows).fill_nan(None)

"""Plain lines under a table that says what its bounds and intervals are, and what the data leave open; from
a summary's ``estimator`` column, which rows are not identified and what a headline says of how far to
trust the numbers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from sigmatool.estimators.value import NOT_IDENTIFIED, Valuation
from sigmatool.options import BOUNDS_LEVEL, COLUMN, BeyondOptions, g_label

# Each row of a summary names the estimator behind its numbers (docs/prior.md, "One rule for every cell").
ESTIMATOR = "estimator"


def said_once(summary: pl.DataFrame) -> tuple[str, ...]:
    """The estimator column when each G has one estimator in every row: the table's headline names it, per
    G (a --by group or bin whose estimator differs keeps the column)."""
    if ESTIMATOR not in summary.columns:
        return ()
    per_G = summary.group_by("G").agg(pl.col(ESTIMATOR).n_unique())[ESTIMATOR]
    return (ESTIMATOR,) if per_G.max() == 1 else ()


def unidentified(summary: pl.DataFrame) -> bool:
    """Whether some row of a summary is not identified by the data (its estimator column says so)."""
    return ESTIMATOR in summary.columns and bool((summary[ESTIMATOR] == NOT_IDENTIFIED).any())


def identification(hist: pl.DataFrame, summary: pl.DataFrame) -> list[str]:
    """Which rows' rates the logged samples pin down, from the summary's ``identified`` column."""
    if "identified" not in summary.columns or "n" not in hist.columns or hist["n"].max() is None:
        return []  # bare pass rates alone (a column of them beside columns of counts): exact, nothing to say
    n = int(hist["n"].max())  # type: ignore[arg-type]
    if "p_lo" in summary.columns:
        return [
            "within a bin of p̂ no rate is identified by the data, at any G: the bounds are what it can be"
        ]
    open_sizes = summary.filter(~pl.col("identified"))["G"].unique(maintain_order=True).to_list()
    if not open_sizes:
        return [f"identified: n = {n} samples per prompt pin these rates down up to sampling error (G ≤ n)"]
    sizes = ", ".join(g_label(float(G)) for G in open_sizes)
    return [
        f"G = {sizes} > n = {n}: these rates are not identified by the data; the bounds are what they can be"
    ]


def outside(row: dict[str, object], rate: str) -> bool:
    """Whether a summary row's ``rate`` lies outside its bounds (``{rate}_lo``, ``{rate}_hi``), beyond the
    last digits of the linear programs' solutions."""
    value, lo, hi = row.get(rate), row.get(f"{rate}_lo"), row.get(f"{rate}_hi")
    if not all(isinstance(x, float) for x in (value, lo, hi)):
        return False
    slack = 1e-7
    return bool(value < lo - slack or value > hi + slack)  # type: ignore[operator]


def contradiction(who: str, cure: bool = False) -> str:
    """What an estimate outside the identified bounds means, naming the estimator (``prior beta``); with
    ``cure``, what to use instead."""
    instead = " (--prior npmle fits any shape)" if cure and not who.startswith("prior npmle") else ""
    return f"the {who or 'estimate'} contradicts the data{instead}"


def contradictions(summary: pl.DataFrame, rate: str, who: str) -> list[str]:
    """One line naming the G at which ``rate`` lies outside the bounds the data allow, if any."""
    if f"{rate}_lo" not in summary.columns:
        return []
    sizes = [g_label(float(r["G"])) for r in summary.iter_rows(named=True) if outside(r, rate)]
    if not sizes:
        return []
    unique = ", ".join(dict.fromkeys(sizes))
    return [f"{rate} at G = {unique} lies outside what the data allow: {contradiction(who, cure=True)}"]


def _identified(hist: pl.DataFrame, summary: pl.DataFrame, val: Valuation) -> list[str]:
    """:func:`identification` and :func:`contradictions`; with several pass-rate columns, per column, named
    (each has its own n and its own estimator)."""
    if COLUMN not in summary.columns:
        return identification(hist, summary) + contradictions(summary, "silent_rate", val.label)
    lines = []
    for name in summary[COLUMN].unique(maintain_order=True).to_list():
        rows, part = summary.filter(pl.col(COLUMN) == name), val.part(name)
        found = identification(hist.filter(pl.col(COLUMN) == name), rows)
        found += contradictions(rows, "silent_rate", part.label)
        lines += [f"--col {name}: {line}" for line in found]
    return lines


def range_notes(
    hist: pl.DataFrame, summary: pl.DataFrame, beyond: BeyondOptions, val: Valuation | None
) -> list[str]:
    """Footer lines for --bounds and --ci."""
    lines = []
    if beyond.bounds:
        lines.append(
            "allowed (--bounds): lowest–highest over every pass-rate distribution whose k-histogram matches the "
            f"data's within sampling error ({100 * BOUNDS_LEVEL:g}% χ² region)"
        )
        lines += _identified(hist, summary, val or Valuation())
    if beyond.ci is not None:
        refit = "; the prior is refitted in each" if val is not None and val.posterior else ""
        lines.append(
            f"CI (--ci {beyond.ci:g}): percentile bootstrap over prompts, "
            f"{beyond.replicate_count:,} replicates with seed {beyond.seed_value}{refit}"
        )
    return lines


def warned(
    summary: pl.DataFrame,
    val: Valuation,
    rates: Sequence[str] = ("silent_rate",),
    hist: pl.DataFrame | None = None,
    size: str = "G",
) -> tuple[str, ...]:
    """What a headline says of how far to trust the numbers, as lines for stderr (the data formats have no
    headline): a biased estimator, ``rates`` outside the bounds the data allow, rates not identified. With
    the counts ``hist``, the plug-in's bias is said wherever the summary has a plug-in row whose ``size``
    (its G) is finite and beyond the fewest logged samples, whatever G the valuation was made for. With
    several pass-rate columns, each column's lines, led by its name (``name: …``)."""
    if COLUMN in summary.columns:
        names = summary[COLUMN].unique(maintain_order=True).to_list()
        return tuple(
            f"{name}: {line}"
            for name in names
            for line in warned(
                summary.filter(pl.col(COLUMN) == name).drop(COLUMN),
                val.part(name),
                rates,
                None if hist is None or COLUMN not in hist.columns else hist.filter(pl.col(COLUMN) == name),
                size,
            )
        )
    lines = [line for line in (val.bias_note() or plugin_beyond(summary, hist, size),) if line]
    lines += [line for rate in rates for line in contradictions(summary, rate, val.label)]
    if unidentified(summary) and rates:
        rate = rates[0]
        at = summary.filter(pl.col(ESTIMATOR) == NOT_IDENTIFIED)["G"].cast(pl.String)
        lines.append(
            f"not identified by the data at G = {', '.join(dict.fromkeys(at))} (estimator 'not identified'): "
            f"the {rate}_lo and {rate}_hi columns give the range the data allow"
        )
    return tuple(lines)


def plugin_beyond(summary: pl.DataFrame, hist: pl.DataFrame | None, size: str = "G") -> str:
    """:meth:`Valuation.bias_note` of the plug-in when some plug-in row of ``summary`` has a finite ``size``
    (its G) above the fewest samples n of the counts ``hist`` (else empty)."""
    if hist is None or "n" not in hist.columns or ESTIMATOR not in summary.columns:
        return ""
    counts = hist["n"].drop_nulls()  # bare rates (no n) are exact at every G
    if counts.is_empty():
        return ""
    n = int(counts.min())  # type: ignore[arg-type]
    G = pl.col(size).cast(pl.Float64)
    beyond = (pl.col(ESTIMATOR) == "plug-in") & (G > n) & G.is_finite()
    return Valuation(short=n).bias_note() if summary.filter(beyond).height else ""


def grader_line(hist: pl.DataFrame, exact: Valuation, graded: Valuation, sizes: Sequence[float]) -> str:
    """What ``--grader-error`` moves, for a headline: at each finite G asked (8 when none), the prompts'
    mean silent share and GRPO and Dr. GRPO signal per group through the grader, and with an exact one."""
    import numpy as np

    from sigmatool.kernels import Quantity

    assert graded.grader is not None
    finite = [int(G) for G in sizes if np.isfinite(G)] or [8]
    parts = []
    names = hist[COLUMN].unique(maintain_order=True).to_list() if COLUMN in hist.columns else [None]
    for name in names:
        rows = hist if name is None else hist.filter(pl.col(COLUMN) == name)
        w = rows["prompts"].cast(pl.Float64).to_numpy()

        def mean(val: Valuation, quantity: Quantity, G: int, rows: pl.DataFrame = rows, w: Any = w) -> float:
            f = val.values(rows, quantity, G)
            ok = np.isfinite(f)
            return float((w[ok] * f[ok]).sum() / w[ok].sum()) if ok.any() else float("nan")

        said = []
        for G in finite:
            silent = mean(graded, Quantity.SILENT, G), mean(exact, Quantity.SILENT, G)
            grpo = mean(graded, Quantity.SIGMA, G), mean(exact, Quantity.SIGMA, G)
            drgrpo = mean(graded, Quantity.SIGMA_SQUARED, G), mean(exact, Quantity.SIGMA_SQUARED, G)
            said.append(
                f"at G = {G}, {silent[0]:.1%} of groups silent ({silent[1]:.1%} with an exact grader), GRPO "
                f"signal {grpo[0]:.3f} per group ({grpo[1]:.3f}), Dr. GRPO {drgrpo[0]:.4f} ({drgrpo[1]:.4f})"
            )
        lead = "" if name is None else f"{name}: "
        parts.append(f"{lead}Through the grader ({graded.grader}), " + "; ".join(said) + ".")
    return "\n".join(parts)

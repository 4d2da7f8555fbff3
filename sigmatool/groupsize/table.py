"""Each prompt's group size: the table per distinct value, the rows of a dataset with their sizes, per-prompt rows."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool import kernels
from sigmatool.errors import UsageError
from sigmatool.estimators import NOT_IDENTIFIED, PerCell, Valuation, valuation
from sigmatool.groupsize.sizes import fidelity_at, group_sizes, law_group_sizes
from sigmatool.joins import join_frame, join_values
from sigmatool.kernels import Quantity
from sigmatool.kernels.grader import Grader
from sigmatool.load import Dataset, per_prompt_frame
from sigmatool.load.dataset import bare_key
from sigmatool.load.loaded import distinct as histogram_of
from sigmatool.options import COLUMN, GroupSizeOptions, PriorSpec
from sigmatool.segments import bin_index
from sigmatool.sums import batches

FloatArray = NDArray[np.float64]
DEFAULT_BINS = 10
# What sized a prompt (the table's ``sized_by``) when its size is decided at its own rate p̂.
PLUGIN = "plug-in"


def _posterior_fidelity(val: Valuation, rows: pl.DataFrame, G: FloatArray, o: GroupSizeOptions) -> FloatArray:
    """``E[E[σ](p, G) | k, n] / E[sqrt(p (1 − p)) | k, n]`` (GRPO) or ``1 − 1/G`` (Dr. GRPO); NaN where G is."""
    ok = np.isfinite(G)
    size = np.where(ok, G, 1.0).astype(np.int64)
    if o.method == "drgrpo":
        from sigmatool.prior.groupsize import credit_fidelity

        return np.asarray(np.where(ok, credit_fidelity(size, val.pass_at), np.nan), dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = val.values(rows, Quantity.SIGMA, size, o.std) / val.values(rows, Quantity.GRPO_LIMIT)
    return np.asarray(np.where(ok, ratio, np.nan), dtype=np.float64)


def _posterior_table(values: pl.DataFrame, o: GroupSizeOptions, detail: bool, val: Valuation) -> pl.DataFrame:
    """:func:`group_size_table` under a prior: per distinct (--by group, k, n), docs/theory.md §7."""
    distinct = values.select([*val.by, "k", "n", "p"]).unique(maintain_order=True)
    G = val.group_sizes(
        distinct,
        o.target,
        min_G=o.min_size,
        max_G=o.max_size,
        objective=o.method,
        std=o.std,
        max_silent=o.max_silent,
    )
    reachable = np.isfinite(G)
    if o.uniform >= o.min_size:
        at_uniform = reachable & (G <= o.uniform)
    else:
        uniform = np.full(G.shape, float(o.uniform))
        fine = _posterior_fidelity(val, distinct, uniform, o) >= o.target
        if o.max_silent is not None:
            fine &= val.values(distinct, Quantity.SILENT, o.uniform) <= o.max_silent
        at_uniform = reachable & fine
    columns = [
        _integers("group_size", G),
        pl.Series("reachable", reachable),
        pl.Series("at_uniform", at_uniform),
        pl.Series("identified", np.ones(G.size, dtype=np.bool_)),
        _labels(distinct, val),
    ]
    if detail:
        silent = val.values(distinct, Quantity.SILENT, np.where(reachable, G, 1.0).astype(np.int64))
        columns += [
            pl.Series("fidelity_at_group_size", _posterior_fidelity(val, distinct, G, o)).fill_nan(None),
            pl.Series("silent_at_group_size", np.where(reachable, silent, np.nan)).fill_nan(None),
        ]
    return distinct.with_columns(columns)


def _rule_table(values: pl.DataFrame, o: GroupSizeOptions, detail: bool, val: Valuation) -> pl.DataFrame:
    """:func:`group_size_table` under the one rule of each cell (counts, no prior named): per distinct
    (--by group, k, n), the sizes G ≤ n decided at p̂, the sizes beyond n by the NPMLE prior where the
    group identifies one, else not identified (``identified`` false, no size). docs/prior.md."""
    distinct = values.select([*val.by, "k", "n", "p"]).unique(maintain_order=True)
    parts = [(np.arange(distinct.height), val)] if COLUMN not in val.by else _column_parts(distinct, val)
    G = np.full(distinct.height, np.nan)
    at_uniform = np.zeros(distinct.height, dtype=np.bool_)
    identified = np.ones(distinct.height, dtype=np.bool_)
    sized_by = np.full(distinct.height, PLUGIN, dtype=object)
    fidelity = np.full(distinct.height, np.nan)
    silent = np.full(distinct.height, np.nan)
    law = np.full(distinct.height, np.nan)
    for rows, part in parts:
        found = _rule_sizes(distinct[rows], o, part, detail)
        G[rows], at_uniform[rows], identified[rows] = found["G"], found["at_uniform"], found["identified"]
        sized_by[rows], fidelity[rows], silent[rows] = found["sized_by"], found["fidelity"], found["silent"]
        law[rows] = found["law"]
    columns = [
        _integers("group_size", G),
        pl.Series("reachable", np.isfinite(G)),
        pl.Series("at_uniform", at_uniform),
        pl.Series("identified", identified),
        pl.Series("sized_by", sized_by.tolist(), dtype=pl.String),
    ]
    if o.law:
        columns.append(_integers("group_size_law", law))
    if detail:
        columns += [
            pl.Series("fidelity_at_group_size", fidelity).fill_nan(None),
            pl.Series("silent_at_group_size", silent).fill_nan(None),
        ]
    return distinct.with_columns(columns)


def _column_parts(distinct: pl.DataFrame, val: Valuation) -> list[tuple[NDArray[np.int64], Valuation]]:
    """Each pass-rate column's rows of ``distinct`` with that column's valuation."""
    names = distinct[COLUMN]
    out = []
    for name in names.unique(maintain_order=True).to_list():
        out.append((np.flatnonzero((names == name).to_numpy()), val.part(name)))
    return out


def _rule_sizes(
    cells: pl.DataFrame, o: GroupSizeOptions, val: Valuation, detail: bool
) -> dict[str, NDArray[np.generic]]:
    """The sizes of one column's distinct counts by the rule: each cell G ≤ n is decided at p̂ (the plug-in
    fidelity and silent rate; a group drawn from the logged answers would see less spread than fresh groups
    have, so the unbiased device does not decide a per-prompt size), each cell G > n by the posterior of the
    NPMLE prior where the prompt's group identifies one."""
    p = cells["p"].cast(pl.Float64).to_numpy()
    n = cells["n"].cast(pl.Int64).to_numpy() if "n" in cells.columns else None
    plug = credited_size_columns(p, o, val.grader)
    G = np.asarray(plug["group_size"], dtype=np.float64)
    at_uniform = np.asarray(plug["at_uniform"], dtype=np.bool_)
    identified = np.ones(p.size, dtype=np.bool_)
    sized_by = np.full(p.size, PLUGIN, dtype=object)
    law = np.asarray(plug.get("group_size_law", np.full(p.size, np.nan)), dtype=np.float64)
    fidelity = np.full(p.size, np.nan)
    silent = np.full(p.size, np.nan)
    if detail:
        fidelity, silent = credited_detail(p, G, o, val.grader)
    if n is None or not (isinstance(val, PerCell) and val.counts):
        return {"G": G, "at_uniform": at_uniform, "identified": identified, "sized_by": sized_by,
                "fidelity": fidelity, "silent": silent, "law": law}  # fmt: skip
    start = np.maximum(n + 1, o.min_size)
    # Beyond n: the prompts no size within their n samples brings to the target, where a larger one is asked.
    beyond = ~(np.isfinite(G) & (G <= n)) & (start <= o.max_size)
    G[beyond], at_uniform[beyond], fidelity[beyond], silent[beyond] = np.nan, False, np.nan, np.nan
    known = beyond & val.identified(cells)
    unknown = np.flatnonzero(beyond & ~known)
    identified[unknown], sized_by[unknown] = False, NOT_IDENTIFIED
    if unknown.size:
        val.values(cells[unknown], Quantity.GRPO_LIMIT)  # the G = ∞ update they need: noted as not identified
    rows = np.flatnonzero(known)
    if rows.size:
        fitted = val.fitted().with_grader(val.grader)
        sized_by[rows] = fitted.label
        for first in np.unique(start[rows]).tolist():
            at = rows[start[rows] == first]
            G[at] = fitted.group_sizes(
                cells[at], o.target, min_G=int(first), max_G=o.max_size, objective=o.method, std=o.std,
                max_silent=o.max_silent,
            )  # fmt: skip
        reach = rows[np.isfinite(G[rows])]
        uniform = float(o.uniform)
        if o.uniform >= o.min_size:
            at_uniform[reach] = G[reach] <= uniform
        elif reach.size:
            fine = _posterior_fidelity(fitted, cells[reach], np.full(reach.size, uniform), o) >= o.target
            if o.max_silent is not None:
                fine &= fitted.values(cells[reach], Quantity.SILENT, o.uniform) <= o.max_silent
            at_uniform[reach] = fine & (uniform > n[reach])
        if detail and reach.size:
            fidelity[reach] = _posterior_fidelity(fitted, cells[reach], G[reach], o)
            silent[reach] = fitted.values(cells[reach], Quantity.SILENT, G[reach].astype(np.int64))
    return {"G": G, "at_uniform": at_uniform, "identified": identified, "sized_by": sized_by,
            "fidelity": fidelity, "silent": silent, "law": law}  # fmt: skip


def _labels(distinct: pl.DataFrame, val: Valuation) -> pl.Series:
    """``sized_by`` of each row under a named prior: its column's prior."""
    if COLUMN not in distinct.columns:
        return pl.Series("sized_by", [val.label] * distinct.height, dtype=pl.String)
    names = {name: val.part(name).label for name in distinct[COLUMN].unique().to_list()}
    return pl.Series("sized_by", [names[name] for name in distinct[COLUMN].to_list()], dtype=pl.String)


def table_keys(table: pl.DataFrame) -> list[str]:
    """The columns a group-size table is joined on: ``p``, or under a prior the --by columns, k and n."""
    return list(table.columns[: table.columns.index("p")]) or ["p"]


def group_size_table(
    values: pl.DataFrame,
    options: GroupSizeOptions,
    *,
    detail: bool = False,
    prior: str | PriorSpec | Valuation | None = None,
) -> pl.DataFrame:
    """Per distinct ``p`` of ``values``: ``group_size`` (Int64, null if unreachable), ``reachable``,
    ``at_uniform``, with ``options.law`` also ``group_size_law``; with ``detail`` also
    ``fidelity_at_group_size`` and ``silent_at_group_size``. Under a ``prior`` (fitted to ``values``, a
    histogram, unless already a :class:`~sigmatool.estimators.Valuation`), per distinct (--by, k, n).
    """
    o = options
    val = valuation(values, (), prior=prior) if prior is not None else None
    if val is not None and val.posterior:
        return _posterior_table(values, o, detail, val)
    if val is not None and val.keyed and "n" in values.columns:
        return _rule_table(values, o, detail, val)
    distinct = values.select(pl.col("p").cast(pl.Float64)).unique().sort("p")
    p = distinct["p"].to_numpy()
    grader = None if val is None else val.grader
    sizes = credited_size_columns(p, o, grader)
    G, reachable = sizes["group_size"], sizes["reachable"]
    columns = [
        _integers("group_size", G),
        pl.Series("reachable", reachable),
        pl.Series("at_uniform", sizes["at_uniform"]),
    ]
    if o.law:
        columns.append(_integers("group_size_law", sizes["group_size_law"]))
    if detail:
        fidelity, silent = credited_detail(p, np.asarray(G, dtype=np.float64), o, grader)
        columns.append(pl.Series("fidelity_at_group_size", fidelity).fill_nan(None))
        columns.append(pl.Series("silent_at_group_size", silent).fill_nan(None))
    return distinct.with_columns(columns)


def credited_size_columns(
    p: FloatArray, o: GroupSizeOptions, grader: Grader | None
) -> dict[str, NDArray[np.generic]]:
    """:func:`size_columns` of pass rates p through the grader (every figure is a function of the reward
    rate); under pass@K credit by the search over G of each rate's pass@K weights (docs/passk.md)."""
    if grader is None or grader.pass_at == 1:
        return size_columns(p if grader is None else grader.rate(p), o)
    from sigmatool.prior.groupsize import rate_group_size

    G = rate_group_size(
        p, o.target, min_G=o.min_size, max_G=o.max_size, objective=o.method, std=o.std,
        max_silent=o.max_silent, grader=grader,
    )  # fmt: skip
    reachable = np.isfinite(G)
    if o.uniform >= o.min_size:
        at_uniform = reachable & (G <= o.uniform)
    else:
        fidelity, silent = credited_detail(p, np.full(p.shape, float(o.uniform)), o, grader)
        fine = fidelity >= o.target
        if o.max_silent is not None:
            fine &= silent <= o.max_silent
        at_uniform = reachable & fine
    if o.law:
        raise UsageError("--law is pass@1's normal-law size; with --pass-at K > 1 leave it out")
    return {"group_size": G, "reachable": reachable, "at_uniform": at_uniform}


def credited_detail(
    p: FloatArray, G: FloatArray, o: GroupSizeOptions, grader: Grader | None
) -> tuple[FloatArray, FloatArray]:
    """Each rate's fidelity and silent share at its G (NaN where G is), through the grader and its credit."""
    reach = np.isfinite(G)
    size = np.where(reach, G, 1.0)
    if grader is None or grader.pass_at == 1:
        r = p if grader is None else grader.rate(p)
        fidelity = fidelity_at(r, G, o.method, o.std)
        return fidelity, np.where(reach, kernels.silent_probability(r, size), np.nan)
    from sigmatool.prior.groupsize import credit_fidelity

    K = grader.pass_at
    size = np.maximum(size, K).astype(np.int64)
    inner = (p > 0.0) & (p < 1.0) & reach
    with np.errstate(invalid="ignore", divide="ignore"):
        if o.method == "drgrpo":
            fidelity = np.asarray(credit_fidelity(size, K), dtype=np.float64)
        else:
            fidelity = Quantity.SIGMA.plugin(p, size, o.std, grader) / Quantity.GRPO_LIMIT.plugin(
                p, None, o.std, grader
            )
    silent = Quantity.SILENT.plugin(p, size, o.std, grader)
    return np.where(inner, fidelity, np.nan), np.where(reach, silent, np.nan)


def size_columns(p: FloatArray, o: GroupSizeOptions) -> dict[str, NDArray[np.generic]]:
    """Each p's ``group_size`` (NaN if unreachable), ``reachable``, ``at_uniform`` and (with the law)
    ``group_size_law``."""
    G = group_sizes(
        p,
        o.target,
        objective=o.method,
        std=o.std,
        min_G=o.min_size,
        max_G=o.max_size,
        max_silent=o.max_silent,
    )
    reachable = np.isfinite(G)
    if o.uniform >= o.min_size:
        # φ and P_silent are monotone in G, so the uniform G reaches the target exactly when G ≤ uniform.
        at_uniform = reachable & (G <= o.uniform)
    else:
        fine = fidelity_at(p, o.uniform, o.method, o.std) >= o.target
        if o.max_silent is not None:
            fine &= kernels.silent_probability(p, o.uniform) <= o.max_silent
        at_uniform = reachable & fine
    out: dict[str, NDArray[np.generic]] = {"group_size": G, "reachable": reachable, "at_uniform": at_uniform}
    if o.law:
        out["group_size_law"] = law_group_sizes(p, o.target)
    return out


def _integers(name: str, values: NDArray[np.generic]) -> pl.Series:
    """Integer-valued floats as an Int64 column, NaN as null."""
    series: pl.Series = pl.Series(name, values, dtype=pl.Float64).fill_nan(None).cast(pl.Int64)
    return series


def _with_sizes(hist: pl.DataFrame, by: Sequence[str], table: pl.DataFrame, law: list[str]) -> pl.DataFrame:
    """The histogram's rows (--by, p, prompts) with their group sizes from ``table``, in the rows' order."""
    # Under a prior the rows meet the table on (--by, k, n) and the histogram's own p̂, which tells apart
    # the bare rates beside counts (k, n null); it is the same float in both, from the same histogram.
    keys = list(dict.fromkeys([*table_keys(table), "p"]))
    rule = [c for c in ("identified", "sized_by") if c in table.columns]
    return hist.select(list(dict.fromkeys([*by, *keys, "prompts"]))).join(
        table.select(*keys, "group_size", *law, "reachable", "at_uniform", *rule),
        on=keys,
        how="left",
        maintain_order="left",
        nulls_equal=True,
    )


def sized_rows(
    values: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str],
    options: GroupSizeOptions,
    table: pl.DataFrame | None = None,
    bins: int | None = DEFAULT_BINS,
    prior: str | PriorSpec | Valuation | None = None,
) -> pl.DataFrame:
    """Rows with their group sizes: a histogram's rows joined to its ``table`` (made if not given, under
    ``prior`` if any), or
    streamed rows gathered per (--by group, bin of ``bins``, group size, …), each with one of its pass rates
    (so summaries with those bins, or none, can be made from them)."""
    hist = histogram_of(values)
    if hist is None:
        return _streamed_sizes(values, by, options, bins or 1)
    table = group_size_table(hist, options, prior=prior) if table is None else table
    return _with_sizes(hist, by, table, ["group_size_law"] if options.law else [])


def _streamed_sizes(
    rows: pl.DataFrame | pl.LazyFrame, by: Sequence[str], options: GroupSizeOptions, bins: int
) -> pl.DataFrame:
    """Streamed rows gathered by what the summary needs of them: its --by group, its bin, its sizes, and
    whether p̂ is 0 or 1; ``p`` is one of the group's pass rates (all in one bin)."""
    law = ["group_size_law"] if options.law else []
    keys = [*by, "__key", *law]
    partials = []
    for batch in batches(rows):
        p = batch["p"].to_numpy()
        sizes = size_columns(p, options)
        keyed = batch.select(*by, "p", "prompts").with_columns(
            pl.Series("__key", _packed_key(sizes, bin_index(p, bins), p, options.max_size)),
            *[_integers(n, sizes[n]) for n in law],
        )
        partials.append(keyed.group_by(keys).agg(pl.col("prompts").sum(), pl.col("p").first()))
    merged = pl.concat(partials).group_by(keys).agg(pl.col("prompts").sum(), pl.col("p").first())
    return _unpacked(merged, by, law, options.max_size)


def _packed_key(
    sizes: dict[str, NDArray[np.generic]], cut: NDArray[np.int64], p: FloatArray, max_G: int
) -> NDArray[np.int64]:
    """(bin, group size or 0 if unreachable, at_uniform, p̂ ∈ {0, 1}) as one integer: one key column groups
    faster than five. Below 1000 bins × (2^31 + 2) sizes × 4, far inside int64."""
    size = np.where(
        sizes["reachable"].astype(np.bool_), np.nan_to_num(sizes["group_size"].astype(np.float64)), 0.0
    )
    key = cut.astype(np.int64) * (max_G + 2) + size.astype(np.int64)
    edge = ((p == 0.0) | (p == 1.0)).astype(np.int64)
    return np.asarray(key * 4 + sizes["at_uniform"].astype(np.int64) * 2 + edge, dtype=np.int64)


def _unpacked(merged: pl.DataFrame, by: Sequence[str], law: list[str], max_G: int) -> pl.DataFrame:
    """The gathered rows with :func:`_packed_key` taken apart, sorted by (--by, bin, sizes, flags)."""
    cell = pl.col("__key") // 4
    size = cell % (max_G + 2)
    merged = merged.with_columns(
        (cell // (max_G + 2)).alias("__cut"),
        pl.when(size > 0).then(size).otherwise(None).alias("group_size"),
        (size > 0).alias("reachable"),
        (pl.col("__key") // 2 % 2 == 1).alias("at_uniform"),
        (pl.col("__key") % 2 == 1).alias("__edge"),
    )
    order = [*by, "__cut", "group_size", *law, "reachable", "at_uniform", "__edge"]
    return merged.sort(order, nulls_last=False).select(
        *by, "group_size", *law, "reachable", "at_uniform", "prompts", "p"
    )


def per_prompt(
    ds: Dataset,
    values: pl.DataFrame | pl.LazyFrame,
    options: GroupSizeOptions,
    prior: str | PriorSpec | Valuation | None = None,
) -> pl.LazyFrame:
    """One row per input prompt, streamed: the distinct-value table (with ``detail``) of ``values``, a
    histogram, joined on the input's own value or, with counts, on (k, n) (under a prior on the --by
    group and counts); for streamed rows (a LazyFrame) each batch of rows gets its own table. A prompt
    that finds no value raises (:mod:`sigmatool.joins`)."""
    detail = [*(["group_size_law"] if options.law else []), "fidelity_at_group_size", "silent_at_group_size"]
    rows = per_prompt_frame(ds)
    columns = [*ds.by, "id", "p", "group_size", *detail, "reachable"]
    hist = histogram_of(values)
    if hist is None:

        def sized(batch: pl.DataFrame) -> pl.DataFrame:
            table = group_size_table(batch.select(pl.col("__p").alias("p")), options, detail=True)
            return join_frame(batch, table.rename({"p": "__p"}), ["__p"]).select(columns)

        schema = _per_prompt_schema(rows, detail, ds.by)
        # ``sized`` reads __p, which it drops: no projection pushdown into it (polars 1.x's default).
        return rows.map_batches(
            sized,
            streamable=True,
            schema=schema,
            predicate_pushdown=False,
            projection_pushdown=False,
            slice_pushdown=False,
        )
    table = group_size_table(hist, options, detail=True, prior=prior)
    keys = table_keys(table)
    if keys == ["p"] and ds.has_counts:
        # The table holds the histogram's p̂ of each (k, n): the rows meet it on those integers.
        counts = hist.select("k", "n", "p").unique()
        table, keys = counts.join(table, on="p", how="left"), ["k", "n"]
    elif keys == ["p"]:
        table, keys = table.rename({"p": "__p"}), ["__p"]
    if ds.gridded:  # a rate off the grid beside counts: looked up by its own rate too
        table, keys = bare_key(table, ds), [*keys, "__p"]
    table = table.drop("p", strict=False)
    return join_values(rows, table.select(*keys, "group_size", *detail, "reachable"), keys).select(columns)


def _per_prompt_schema(rows: pl.LazyFrame, detail: Sequence[str], by: Sequence[str]) -> pl.Schema:
    schema = rows.collect_schema()
    out = {c: schema[c] for c in (*by, "id", "p")} | {"group_size": pl.Int64()}
    out |= {c: pl.Int64() if c == "group_size_law" else pl.Float64() for c in detail}
    return pl.Schema(out | {"reachable": pl.Boolean()})

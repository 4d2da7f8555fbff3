"""The per-step table: a schedule's exact expectations at each step of the run, and what it leaves out
(:func:`analyse`)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import polars as pl

from sigmatool.curriculum.result import CurriculumResult, Dry
from sigmatool.curriculum.schedule import FloatArray, IntArray, Plan, plan
from sigmatool.errors import DataError, UsageError
from sigmatool.estimators import Valuation
from sigmatool.kernels import Quantity, dapo_expected_draws
from sigmatool.options.curriculum import CurriculumOptions, Schedule

COLUMNS = (
    "step",
    "mean",
    "pass_rate",
    "silent_rate",
    "all_right_rate",
    "all_wrong_rate",
    "dapo_draws_per_group",
    "grpo_signal",
    "drgrpo_signal",
    "effective_prompts",
    "repeat_rate",
)
RATES = ("pass_rate", "silent_rate", "all_right_rate", "all_wrong_rate", "grpo_signal", "drgrpo_signal")
# Each rate's per-prompt quantity and group size (None: the run's G).
QUANTITIES = {
    "pass_rate": (Quantity.ALL_RIGHT, 1),
    "silent_rate": (Quantity.SILENT, None),
    "all_right_rate": (Quantity.ALL_RIGHT, None),
    "all_wrong_rate": (Quantity.ALL_WRONG, None),
    "grpo_signal": (Quantity.SIGMA, None),
    "drgrpo_signal": (Quantity.SIGMA_SQUARED, None),
}


def values(hist: pl.DataFrame, val: Valuation, G: int) -> dict[str, FloatArray]:
    """Each rate's per-prompt value for every histogram row, under the valuation; NaN raises."""
    out = {}
    for name, (quantity, size) in QUANTITIES.items():
        # The prompts' own pass rate is pass@1's, whatever credit the trainer trains on.
        out[name] = (val if size is None else val.one()).values(hist, quantity, G if size is None else size)
        if np.isnan(out[name]).any():
            raise DataError(
                f"the {name.replace('_', ' ')} at G = {G} is not identified for some prompts (fewer than "
                f"{G} samples and no prior identified for them: {'; '.join(val.why_not()) or 'see the notes'}"
                "); give --prior npmle or --estimator plugin to assume one"
            )
    return out


def analyse(
    hist: pl.DataFrame,
    by: tuple[str, ...],
    options: CurriculumOptions,
    val: Valuation,
    clean: Valuation | None = None,
) -> CurriculumResult:
    """The schedule of ``options`` on the histogram (``p``, [``k``, ``n``], ``prompts``, --by columns),
    valued under ``val``; ``clean``, with --grader-error, the same valuation with an exact grader. A prompt's
    weight is read from its pass rate under ``clean`` (the grader changes rewards, not which prompts are
    drawn)."""
    clean = clean or val
    f = values(hist, val, options.G)
    exact = f if clean is val else values(hist, clean, options.G)
    f = {**f, "pass_rate": exact["pass_rate"]}  # the prompts' own pass rate, whatever the grader reads
    m = hist["prompts"].cast(pl.Float64).to_numpy()
    group, names = _groups(hist, by)
    n = hist["n"].cast(pl.Float64).to_numpy() if "n" in hist.columns else None
    shown = hist["p"].cast(pl.Float64).to_numpy()
    schedule = plan(options, exact["pass_rate"], m, group, names, shown, n)
    _check_blend(options, names, schedule)
    options = replace(options, steps=steps_of(options, schedule.prompts))
    schedule = replace(schedule, options=options)
    rows, means, dry = _steps(schedule, f, exact if clean is not val else None, names)
    uniform = _summary({k: float((m * v).sum() / m.sum()) for k, v in f.items()})
    clean_means = {}
    if clean is not val:
        clean_means = {k[len("clean_") :]: v for k, v in means.items() if k.startswith("clean_")}
        clean_means["uniform_silent_rate"] = float((m * exact["silent_rate"]).sum() / m.sum())
        clean_means["uniform_grpo_signal"] = float((m * exact["grpo_signal"]).sum() / m.sum())
        means = {k: v for k, v in means.items() if not k.startswith("clean_")}
    frame = pl.DataFrame(rows, infer_schema_length=None)
    if options.schedule is not Schedule.gaussian:
        frame = frame.drop("mean")
    weights = None
    if options.static:
        weights = hist.with_columns(pl.Series("weight", schedule.step(0) / options.batch))
    return CurriculumResult(
        frame,
        options,
        means,
        uniform,
        val.label_at(hist, options.G),
        float(m.sum()),
        schedule.prompts,
        tuple(names),
        tuple(dry),
        tuple(_notes(schedule, m, names)),
        clean_means,
        weights,
        schedule,
    )


def steps_of(options: CurriculumOptions, prompts: float) -> int:
    """The run's steps: --steps, or --epochs of the scheduled prompts at B a step (rounded up)."""
    if options.epochs is None:
        return options.steps
    return max(1, math.ceil(options.epochs * prompts / options.batch - 1e-9))


def _groups(hist: pl.DataFrame, by: tuple[str, ...]) -> tuple[IntArray, list[str]]:
    """Each row's --by group (0 without --by) and the groups' names, in order of first appearance."""
    if not by:
        return np.zeros(hist.height, dtype=np.int64), ["all"]
    keys = hist.select(
        pl.concat_str([pl.col(c).cast(pl.String).fill_null("null") for c in by], separator="/")
    ).to_series()
    names = keys.unique(maintain_order=True).to_list()
    index = {name: i for i, name in enumerate(names)}
    return np.array([index[x] for x in keys.to_list()], dtype=np.int64), names


def _check_blend(options: CurriculumOptions, names: list[str], schedule: Plan) -> None:
    """--blend names groups that exist; no pool is empty; the schedule has a batch's worth of prompts."""
    for j, pool in enumerate(options.pools):
        if not schedule.m[(schedule.unit == j) & (schedule.base > 0)].sum():
            raise UsageError(
                f"--pools: {pool.name} holds no prompt (an earlier pool takes them, or none has such a p)"
            )
    unknown = [name for name in options.blend if name not in names]
    if unknown:
        raise DataError(
            f"--blend names {', '.join(map(repr, unknown))}, not a --by group (groups: {', '.join(names)})"
        )
    if schedule.prompts < options.batch:
        raise DataError(
            f"the schedule can draw {schedule.prompts:,.0f} prompts, fewer than --batch-size {options.batch:,}"
        )


def _mean(drawn: FloatArray, f: FloatArray) -> float:
    """``Σ m π f / Σ m π``: a rate's expectation over one step's B draws (``drawn`` = m π per row), summed
    pairwise (numpy's sum; math.fsum over 10^5 distinct rates a step cost 20 s a run)."""
    return float(np.sum(drawn * f) / np.sum(drawn))


def _summary(rates: dict[str, float]) -> dict[str, float]:
    return {**rates, "dapo_draws_per_group": float(dapo_expected_draws(rates["silent_rate"]))}


def _steps(
    schedule: Plan, f: dict[str, FloatArray], exact: dict[str, FloatArray] | None, names: list[str]
) -> tuple[list[dict[str, object]], dict[str, float], list[Dry]]:
    """Each shown step's row, each rate's mean over every step (with ``exact``, also the exact grader's,
    keyed ``clean_…``), and where each pool runs dry."""
    options = schedule.options
    B, m, T = options.batch, schedule.m, options.steps
    never = np.ones_like(m)  # per row: P(a prompt of it is not drawn before this step)
    demand = np.zeros_like(m)  # per row: its prompts drawn so far, expected
    rows: list[dict[str, object]] = []
    totals: dict[str, float] = {}
    sizes = _unit_sizes(schedule)
    dry_at: dict[tuple[int, int], int] = {}
    pi = np.zeros(0)
    for t in range(T):
        if t == 0 or not options.static:  # a static schedule's π is every step's
            pi = schedule.step(t)
        drawn = m * pi
        demand += drawn
        for key, size in sizes.items():
            if key not in dry_at and _unit_demand(schedule, demand, key) > size + 1e-6:
                dry_at[key] = t
        rates = _summary({k: _mean(drawn, f[k]) for k in RATES})
        for k, v in rates.items():
            totals[k] = totals.get(k, 0.0) + v
        for k in RATES if exact is not None else ():
            totals["clean_" + k] = totals.get("clean_" + k, 0.0) + _mean(drawn, exact[k])  # type: ignore[index]
        if t % options.every == 0 or t == T - 1:
            if options.schedule is Schedule.easy_first:
                repeat = min(max(t * B + B - schedule.prompts, 0.0), B) / B
            else:
                repeat = float((drawn * (1.0 - never)).sum() / B)
            rows.append(
                {
                    "step": t,
                    "mean": schedule.mean_at(t),
                    **rates,
                    "effective_prompts": B * B / float((m * pi * pi).sum()),
                    "repeat_rate": repeat,
                }
            )
        never = never * (1.0 - pi)
    ordered = [{k: row[k] for k in COLUMNS} for row in rows]
    dry = [
        Dry(_unit_name(schedule, key), names[key[0]], size, dry_at.get(key)) for key, size in sizes.items()
    ]
    return ordered, {k: v / T for k, v in totals.items()}, dry


def _unit_sizes(schedule: Plan) -> dict[tuple[int, int], float]:
    """Prompts per (group, unit) that the schedule draws from."""
    sizes: dict[tuple[int, int], float] = {}
    live = (schedule.m > 0) & (schedule.base > 0)
    for g, u, m in zip(
        schedule.group[live].tolist(), schedule.unit[live].tolist(), schedule.m[live].tolist(), strict=True
    ):
        sizes[(g, u)] = sizes.get((g, u), 0.0) + m
    return dict(sorted(sizes.items()))


def _unit_demand(schedule: Plan, demand: FloatArray, key: tuple[int, int]) -> float:
    rows = (schedule.group == key[0]) & (schedule.unit == key[1]) & (schedule.base > 0)
    return float(demand[rows].sum())


def _unit_name(schedule: Plan, key: tuple[int, int]) -> str:
    return schedule.units[key[1]] if 0 <= key[1] < len(schedule.units) else "all"


def _notes(schedule: Plan, m: FloatArray, names: list[str]) -> list[str]:
    """What the schedule leaves out: dropped prompts, prompts in no pool, groups with nothing to draw."""
    options = schedule.options
    out = []
    dropped = float(m.sum() - schedule.m.sum())
    if dropped:
        which = " and ".join(
            words
            for words, on in (("always solved", options.drop_solved), ("never solved", options.drop_unsolved))
            if on
        )
        out.append(f"left out {dropped:,.0f} of {m.sum():,.0f} prompts ({which})")
    outside = float(schedule.m[schedule.base <= 0].sum())
    if outside and options.schedule in (Schedule.pools, Schedule.band):
        where = "in no pool" if options.schedule is Schedule.pools else "outside the band"
        out.append(f"{outside:,.0f} prompts lie {where} and are never drawn")
    live = np.bincount(schedule.group, weights=schedule.m * schedule.base, minlength=len(names))
    empty = [names[g] for g in range(len(names)) if schedule.blend[g] > 0 and live[g] <= 0]
    if empty and len(names) > 1:
        out.append(f"--by group(s) {', '.join(empty)} have no prompt to draw; their share goes to the others")
    return out

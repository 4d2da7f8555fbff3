"""The options of each analysis, checked before any data is read or any heavy module imported."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from sigmatool.errors import UsageError
from sigmatool.options.common import (
    DEFAULT_BINS,
    DEFAULT_FIDELITY,
    DEFAULT_G,
    DEFAULT_MAX_G,
    DEFAULT_MIN_G,
    DEFAULT_SEED,
    MAX_G,
    Estimator,
    Method,
    Std,
    check_bins,
    check_count,
    check_dapo_cap,
    check_fraction,
    check_g_range,
    check_seed,
    parse_group_sizes,
)
from sigmatool.options.inputs import InputOptions

UPDATE_RULES = tuple(m.value for m in Method)
STD_CONVENTIONS = tuple(s.value for s in Std)
DEFAULT_EXTREME = 0.1
DEFAULT_MEDIUM = (0.4, 0.6)
METHODS = ("grpo", "drgrpo", "dapo")
SIMULATE_DAPO_CAP = 4  # a simulated run must end: DAPO's redraws of a prompt in a step are capped
SIMULATE_MAX_G = 100_000
EXPORT_EXTENSIONS = (".csv", ".tsv", ".json", ".jsonl", ".ndjson", ".parquet", ".pq")


def check_estimator(estimator: str) -> str:
    if estimator not in Estimator.__members__:
        raise UsageError(f"--estimator: one of {', '.join(Estimator.__members__)}, not {estimator!r}")
    return estimator


@dataclass(frozen=True)
class SilentOptions:
    """``silent``: group sizes, estimator, DAPO's cap, bins, and per-prompt rows instead of a summary."""

    sizes: tuple[float, ...] = (8.0,)
    estimator: str = "auto"
    cap: int | None = None
    bins: int | None = None
    per_prompt: bool = False
    invalid: str | None = None  # --invalid skip|mask|zero: how a rollout log's invalid rewards are read
    resolution: float | None = None  # --resolution ε: raw rewards that differ by less than ε tie

    @property
    def raw(self) -> bool:
        """Whether the answer comes from a rollout log's raw rewards (--invalid, --resolution)."""
        return self.invalid is not None or self.resolution is not None

    def __post_init__(self) -> None:
        check_estimator(self.estimator)
        if self.resolution is not None and (not math.isfinite(self.resolution) or self.resolution < 0):
            raise UsageError(f"--resolution: ε must be a finite number ≥ 0, not {self.resolution:g}")
        if self.invalid is not None and self.resolution is not None:
            raise UsageError("--invalid and --resolution: give one (--resolution reads every valid reward)")
        if self.raw and (self.bins is not None or self.cap is not None):
            raise UsageError(
                "--invalid and --resolution give the silent share alone: without --by-bins or --dapo-cap"
            )
        if self.cap is not None:
            check_dapo_cap(self.cap)
        if self.bins is not None:
            check_bins(self.bins, "--by-bins", low=1)
            if self.per_prompt:
                raise UsageError(
                    "--by-bins summarises by bin; with --per-prompt there is no summary to break down"
                )


@dataclass(frozen=True)
class Segments:
    """How p is cut: ``bins`` equal-width bins, extreme = p < x or p > 1 − x, medium = lo ≤ p ≤ hi."""

    bins: int = DEFAULT_BINS
    extreme: float = DEFAULT_EXTREME
    medium: tuple[float, float] = DEFAULT_MEDIUM

    def __post_init__(self) -> None:
        if self.bins == 0:
            raise UsageError("--bins 0: the budget's shares are per bin of p; give 1 to 1,000 bins")
        check_bins(self.bins)
        if not (math.isfinite(self.extreme) and 0.0 < self.extreme < 0.5):
            raise UsageError(
                f"--extreme: give x with 0 < x < 0.5 (extreme = p < x or p > 1 − x), not {self.extreme:g}"
            )
        lo, hi = self.medium
        if not 0.0 <= lo < hi <= 1.0:
            raise UsageError(f"--medium: give lo,hi with 0 ≤ lo < hi ≤ 1, not {lo:g},{hi:g}")


def parse_medium(text: str) -> tuple[float, float]:
    """``"0.4,0.6"`` → ``(0.4, 0.6)``; the range itself is checked by :class:`Segments`."""
    parts = [part.strip() for part in text.split(",")]
    try:
        if len(parts) != 2:
            raise ValueError
        lo, hi = float(parts[0]), float(parts[1])
    except ValueError:
        raise UsageError(f"--medium: give two numbers lo,hi such as 0.4,0.6, not {text!r}") from None
    return lo, hi


@dataclass(frozen=True)
class BudgetOptions:
    """``budget``: group sizes (``inf`` for the large-group limits), estimator and segments."""

    sizes: tuple[float, ...] = (8.0,)
    estimator: str = "auto"
    segments: Segments = Segments()

    def __post_init__(self) -> None:
        check_estimator(self.estimator)
        if 1.0 in self.sizes:
            raise UsageError(
                "--G 1: a group of one answer always has σ = 0, so there is no budget; use G ≥ 2"
            )
        if self.estimator == "unbiased" and math.inf in self.sizes:
            raise UsageError(
                "--G inf: the large-group limit has no unbiased estimate from n logged samples; "
                "use --prior npmle, which predicts beyond the samples (docs/prior.md), or a G no larger than n"
            )


@dataclass(frozen=True)
class GroupSizeOptions:
    """The target and the rules: fidelity φ*, update rule, std convention, G range, silent cap, uniform G."""

    target: float = DEFAULT_FIDELITY
    method: str = "grpo"
    std: str = "population"
    min_size: int = DEFAULT_MIN_G
    max_size: int = DEFAULT_MAX_G
    max_silent: float | None = None
    uniform: int = 8
    law: bool = False

    def __post_init__(self) -> None:
        check_fraction("--fidelity", self.target)
        problems = rule_problems(self.method, self.std)
        if problems:
            raise UsageError("; ".join(problems))
        if self.method == "drgrpo" and self.law:
            raise UsageError(
                "--law is GRPO's closed form; with --method drgrpo the exact answer ⌈1/ε⌉ is closed-form"
            )
        check_g_range(self.min_size, self.max_size)
        if self.max_silent is not None:
            check_fraction("--max-silent", self.max_silent, high_open=False)
        check_count("--uniform", self.uniform, 1, MAX_G)


def groupsize_options(
    *,
    fidelity: float | None = None,
    method: str = "grpo",
    std: str = "population",
    min_G: int | None = None,
    max_G: int | None = None,
    max_silent: float | None = None,
    uniform: int = 8,
    law: bool = False,
) -> GroupSizeOptions:
    """``groupsize``'s options as the flags give them: None takes the glossary's default."""
    return GroupSizeOptions(
        DEFAULT_FIDELITY if fidelity is None else fidelity,
        method,
        std,
        DEFAULT_MIN_G if min_G is None else min_G,
        DEFAULT_MAX_G if max_G is None else max_G,
        max_silent,
        uniform,
        law,
    )


def check_sizing_estimator(estimator: str) -> None:
    """``groupsize --estimator``: ``auto`` (the one rule) or ``plugin``; a size is a per-prompt decision, and
    the unbiased device, a group drawn from the logged answers, sees less spread than fresh groups have."""
    if estimator not in ("auto", "plugin"):
        raise UsageError(
            f"--estimator {estimator} has no group size of its own: a group drawn from a prompt's logged "
            "answers varies less than a fresh group, so it would size too small; give auto or plugin"
        )


def rule_problems(method: str, std: str) -> list[str]:
    """What is wrong with ``--method`` and ``--std`` (the update rule and the std it divides by), if anything."""
    problems = []
    if method not in UPDATE_RULES:
        problems.append(f"--method: one of {', '.join(UPDATE_RULES)}, not {method!r}")
    if std not in STD_CONVENTIONS:
        problems.append(f"--std: one of {', '.join(STD_CONVENTIONS)}, not {std!r}")
    elif std == "bessel" and method == "drgrpo":
        problems.append("--std bessel applies to --method grpo only: Dr. GRPO does not divide by the std")
    return problems


def check_one_loop(inputs: InputOptions, plotted: bool) -> None:
    """What ``preflight``'s loop over one dataset cannot take: --by groups, or --plot of several --col."""
    if inputs.by:
        raise UsageError("preflight describes one loop over the whole dataset: --by does not apply")
    if inputs.cols and plotted:
        raise UsageError("preflight --plot draws the loop on one pass-rate column: give one --col")


def summary_bins(bins: int | None, per_prompt: bool) -> int:
    """``--bins`` of a summary (None: the default 10); refused with --per-prompt, which has no summary."""
    if bins is None:
        return DEFAULT_BINS
    check_bins(bins)
    if per_prompt:
        raise UsageError("--bins summarises by bin; with --per-prompt there is no summary to break down")
    return bins


def parse_methods(values: str | Sequence[str]) -> tuple[str, ...]:
    """``"dapo,grpo"`` (or a list of such) → the methods in canonical order (grpo, drgrpo, dapo)."""
    parts = [values] if isinstance(values, str) else list(values)
    chosen: set[str] = set()
    for value in parts:
        for part in value.split(","):
            name = part.strip().lower()
            if not name:
                continue
            if name not in METHODS:
                raise UsageError(
                    f"--methods: unknown method {part.strip()!r}; choose from {', '.join(METHODS)}"
                )
            chosen.add(name)
    if not chosen:
        raise UsageError(f"--methods: give at least one of {', '.join(METHODS)}")
    return tuple(m for m in METHODS if m in chosen)


@dataclass(frozen=True)
class SimulateOptions:
    """``simulate``: the controlled run's size, group size, steps, learning rate, seed, methods, DAPO cap."""

    prompts: int = 6000
    group_size: int = 8
    steps: int = 150
    lr: float = 0.5
    seed: int = DEFAULT_SEED
    methods: tuple[str, ...] = METHODS
    dapo_cap: int = SIMULATE_DAPO_CAP
    pass_at: int = 1  # --pass-at: the credit the trainer trains on (docs/passk.md)

    def __post_init__(self) -> None:
        check_count("--prompts", self.prompts, 1, 100_000_000)
        check_count("--G", self.group_size, 2, SIMULATE_MAX_G)
        if self.pass_at > self.group_size:
            raise UsageError(
                f"--pass-at {self.pass_at} > --G {self.group_size}: a group of fewer than K answers has no pass@K"
            )
        check_count("--steps", self.steps, 1, 10_000_000)
        if not (math.isfinite(self.lr) and self.lr > 0):
            raise UsageError(f"--lr: give a positive number, not {self.lr:g}")
        check_seed(self.seed)
        object.__setattr__(self, "methods", parse_methods(self.methods))
        check_dapo_cap(self.dapo_cap)


def parse_steps(text: str) -> tuple[int, int]:
    """``"3..7"`` → ``(3, 7)``, ``"5"`` → ``(5, 5)``: an inclusive window of training steps."""
    first, sep, last = text.partition("..")
    try:
        window = (int(first), int(last if sep else first))
    except ValueError:
        raise UsageError(
            f"--export-steps: give a window of steps A..B such as 1..20 (or one step), not {text!r}"
        ) from None
    if window[0] > window[1]:
        raise UsageError(f"--export-steps {text}: the window is empty (the first step is after the last)")
    return window


@dataclass(frozen=True)
class TrackOptions:
    """``track``: the drift rule (|z| ≥ z and a gap ≥ min_gap), the run summary view, the export window."""

    z_threshold: float = 4.0
    min_gap: float = 0.02
    summary: bool = False
    export: str | None = None
    steps: tuple[int, int] | None = None
    pass_rates: str | None = None
    rates_key: str | None = None
    rates_col: str | None = None
    window: int | None = None  # --expect window --window K; None: leave-one-step-out (or --pass-rates)
    per_prompt: bool = False  # one row per prompt over the run instead of the step table
    invalid: str | None = None  # --invalid: rewards that cannot be graded are counted per step, not refused
    resolution: float | None = None  # --resolution ε: the steps' silent groups from their raw rewards

    def __post_init__(self) -> None:
        if self.per_prompt and self.summary:
            raise UsageError("--per-prompt and --summary are two views of the run: give one")
        if self.resolution is not None and (not math.isfinite(self.resolution) or self.resolution < 0):
            raise UsageError(f"--resolution: ε must be a finite number ≥ 0, not {self.resolution:g}")
        if self.resolution is not None and (self.invalid is not None or self.per_prompt or self.summary):
            raise UsageError("--resolution gives the step table from raw rewards: without --invalid, "
                             "--per-prompt or --summary")  # fmt: skip
        if self.window is not None and self.pass_rates is not None:
            raise UsageError("--expect window and --pass-rates are two sources of the expectation: give one")
        if self.window is not None and self.window < 1:
            raise UsageError(f"--window: give a whole number of steps ≥ 1, not {self.window}")
        if not (math.isfinite(self.z_threshold) and self.z_threshold > 0):
            raise UsageError(f"--z: give a positive number, not {self.z_threshold:g}")
        check_fraction("--min-gap", self.min_gap, low_open=False, high_open=False)
        if self.export is not None and not self.export.lower().endswith(EXPORT_EXTENSIONS):
            raise UsageError(
                f"--export-pass-rates {self.export}: give a file name ending in {', '.join(EXPORT_EXTENSIONS)}"
            )
        if self.steps is not None and self.export is None:
            raise UsageError(
                "--export-steps chooses the window that --export-pass-rates writes; give that too"
            )
        if self.pass_rates is None and (self.rates_key or self.rates_col):
            raise UsageError(
                "--pass-rates-key and --pass-rates-col describe --pass-rates FILE; give that too"
            )


@dataclass(frozen=True)
class SimulateRequest:
    """``simulate`` as typed: G and the methods may be left to their defaults, which depend on a plan."""

    prompts: int = 6000
    group_sizes: tuple[str, ...] = ()
    steps: int = 150
    lr: float = 0.5
    seed: int | None = None
    methods: str | None = None
    dapo_cap: int | None = None

    def options(self, planned: bool = False) -> SimulateOptions:
        """The checked options; ``planned``: each prompt has its own G and one rule trains every strategy."""
        if planned and self.group_sizes:
            raise UsageError("--G: with a plan each prompt has its own group size; leave --G out")
        methods = parse_methods(self.methods or ("grpo" if planned else ",".join(METHODS)))
        if planned and len(methods) > 1:
            raise UsageError(
                f"--methods: a run with a plan trains every strategy with one rule; give one of "
                f"{', '.join(METHODS)}, not {','.join(methods)}"
            )
        sizes = parse_group_sizes(self.group_sizes or [str(DEFAULT_G)])
        if len(sizes) > 1:
            raise UsageError(f"--G: a run trains at one group size, not {len(sizes)}; give one G")
        seed = DEFAULT_SEED if self.seed is None else self.seed
        cap = SIMULATE_DAPO_CAP if self.dapo_cap is None else self.dapo_cap
        return SimulateOptions(self.prompts, int(sizes[0]), self.steps, self.lr, seed, methods, cap)


class Expect(str, Enum):
    """Where ``track`` expects each step from without --pass-rates: the run's other steps, or a window."""

    leave_one_step_out = "leave-one-step-out"
    window = "window"


DEFAULT_WINDOW = 2  # steps before and after each step, with --expect window


def expect_window(expect: Expect, window: int | None) -> int | None:
    """The window of --expect window (--window K, else :data:`DEFAULT_WINDOW`); None: leave-one-step-out."""
    if expect is Expect.window:
        return DEFAULT_WINDOW if window is None else window
    if window is not None:
        raise UsageError("--window K sets the window of --expect window; give that too")
    return None


def parsed_track_options(
    *, steps: str | None, expect: Expect, window: int | None, **fields: Any
) -> TrackOptions:
    """``track``'s options from its flags as given (each by its field's name): --export-steps A..B parsed,
    the window of --expect window decided, checked."""
    exported = parse_steps(steps) if steps is not None else None
    return TrackOptions(steps=exported, window=expect_window(expect, window), **fields)


@dataclass(frozen=True)
class GroupSizeTarget:
    """``groupsize``'s target and rules as the flags give them (checked), and whether --std was given:
    without it, the std is the trainer's with --from (:func:`sigmatool.trainers.std.groupsize_std`)."""

    options: GroupSizeOptions
    std_given: bool


BETA_MIX = "beta-mix"  # --init's name of the paper's fallback mixture, which reads no data


def simulate_start(init: str | None, read: InputOptions, plan_file: str | None) -> InputOptions | None:
    """The input ``simulate`` draws its start population from: a --plan file's pass rates by group size, or
    --init DATA (stdin only as '-'), or with neither, ``read`` without paths, for the bundled sample; None
    for the beta mixture (--init beta-mix)."""
    if plan_file is not None:
        if init is not None:
            raise UsageError("--plan is the start population (its p_used); --init does not apply")
        if replace(read, input_format=None, separator=None) != InputOptions():
            raise UsageError(
                "--plan reads the plan's p_used and group_size columns: the input options do not apply"
            )
        return replace(read, paths=(plan_file,), col="p_used", by=("group_size",))
    if init == BETA_MIX:
        if read != InputOptions():
            raise UsageError(
                "--init beta-mix reads no data: the input options (--col, --weight-col, …) do not apply"
            )
        return None
    if read.cols:
        raise UsageError("simulate draws its start population from one pass-rate column: give one --col")
    if read.trainer is not None and not init:
        raise UsageError(f"--from {read.trainer}: give the dump files or their folder with --init")
    return replace(read, paths=(init,) if init else ())

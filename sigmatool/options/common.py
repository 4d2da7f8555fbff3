"""Choices, ranges and group sizes: the checks every option goes through, with one message each."""

from __future__ import annotations

import math
from collections.abc import Iterable
from enum import Enum

from sigmatool.errors import UsageError

# The largest group size the kernels evaluate: beyond it a sum over the outcomes of one group would not fit
# in memory, and the group sizes of any real trainer are far below it.
MAX_G = 2**31
INF = math.inf

# The one default of each flag that several commands share (sigmatool/cli/params.py declares the flags).
DEFAULT_G = 8
DEFAULT_BINS = 10  # equal-width bins of p: deciles of difficulty
MAX_BINS = 1000
DEFAULT_FIDELITY = 0.9  # at most a tenth of a prompt's large-group update lost to its group's noise
DEFAULT_MIN_G = 2  # a group of one has σ = 0
DEFAULT_MAX_G = 4096  # far above any trainer's group size
DEFAULT_SEED = 7
MAX_SEED = 2**63 - 1
MAX_DAPO_CAP = 1_000_000


class InputFormat(str, Enum):
    csv = "csv"
    tsv = "tsv"
    parquet = "parquet"
    jsonl = "jsonl"
    json = "json"


class OutputFormat(str, Enum):
    auto = "auto"
    table = "table"
    csv = "csv"
    tsv = "tsv"
    json = "json"
    jsonl = "jsonl"
    parquet = "parquet"


class Trainer(str, Enum):
    verl = "verl"
    trl = "trl"
    nemo_rl = "nemo-rl"
    areal = "areal"
    skyrl = "skyrl"
    roll = "roll"
    # Rollout logs that are not a trainer's dumps: eval harnesses and rollout collectors users train from.
    verifiers = "verifiers"
    nemo_gym = "nemo-gym"
    open_instruct = "open-instruct"
    # Logs written beside a run: W&B tables, rlprobe's flight recorder, miles' --dump-details trajectories.
    wandb_table = "wandb-table"
    rlprobe = "rlprobe"
    miles = "miles"


class Counts(str, Enum):
    right = "right"
    wrong = "wrong"


class Estimator(str, Enum):
    """``auto``: the one rule of docs/prior.md, cell by cell (exact rates, unbiased where G ≤ n, a prior
    beyond n where one is identified); ``plugin``: p̂ as p everywhere; ``unbiased``: only where G ≤ n."""

    auto = "auto"
    plugin = "plugin"
    unbiased = "unbiased"


class Std(str, Enum):
    population = "population"
    bessel = "bessel"


class Method(str, Enum):
    """The update rule: GRPO divides each group's advantages by its std σ, Dr. GRPO does not."""

    grpo = "grpo"
    drgrpo = "drgrpo"


# --------------------------------------------------------------------------------------------- checks


def check_fraction(option: str, value: float, *, low_open: bool = True, high_open: bool = True) -> float:
    """A number in (0, 1), or with closed ends as asked; the message states the range as the help does."""
    lo, hi = ("(" if low_open else "["), (")" if high_open else "]")
    low_ok = value > 0 if low_open else value >= 0
    high_ok = value < 1 if high_open else value <= 1
    if not (math.isfinite(value) and low_ok and high_ok):
        raise UsageError(f"{option}: give a number in {lo}0, 1{hi}, not {value:g}")
    return value


def check_count(option: str, value: int, low: int = 1, high: int | None = None) -> int:
    """A whole number in [low, high]."""
    if value < low or (high is not None and value > high):
        bound = f"between {low:,} and {high:,}" if high is not None else f"at least {low:,}"
        raise UsageError(f"{option}: give a whole number {bound}, not {value:,}")
    return value


def check_bins(bins: int, option: str = "--bins", low: int = 0) -> int:
    """A number of equal-width bins of p: ``low`` (0: none) to 1000."""
    return check_count(option, bins, low, MAX_BINS)


def check_seed(seed: int) -> int:
    return check_count("--seed", seed, 0, MAX_SEED)


def check_dapo_cap(cap: int) -> int:
    return check_count("--dapo-cap", cap, 1, MAX_DAPO_CAP)


def check_g_range(min_G: int, max_G: int) -> tuple[int, int]:
    """``--min-G`` and ``--max-G``: 1 ≤ min ≤ max ≤ 2^31."""
    check_count("--min-G", min_G, 1, MAX_G)
    check_count("--max-G", max_G, min_G, MAX_G)
    return min_G, max_G


def parse_group_sizes(values: Iterable[str], *, allow_inf: bool = False, option: str = "--G") -> list[float]:
    """``["4,8", "16"]`` → ``[4, 8, 16]`` in the order given, without repeats; ``inf`` where allowed."""
    sizes: list[float] = []
    for value in values:
        for part in str(value).split(","):
            text = part.strip().lower()
            if not text:
                continue
            if text in ("inf", "infinity", "∞"):
                if not allow_inf:
                    raise UsageError(f"{option}: 'inf' is not allowed here; give whole numbers ≥ 1")
                size = INF
            else:
                try:
                    number = int(text)
                except ValueError:
                    hint = ", or inf" if allow_inf else ""
                    raise UsageError(
                        f"{option}: {part.strip()!r} is not a group size (whole numbers ≥ 1{hint})"
                    ) from None
                size = float(check_count(option, number, 1, MAX_G))
            if size not in sizes:
                sizes.append(size)
    if not sizes:
        raise UsageError(f"{option}: give at least one group size")
    return sizes


def g_label(G: float) -> str:
    return "inf" if math.isinf(G) else str(int(G))


def parse_number(option: str, text: str, what: str) -> float:
    """A finite number given to ``option`` (``what`` names it in the error), else one line (exit 2)."""
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{option}: {what} must be a number, not {text!r}") from None
    if not math.isfinite(value):
        raise UsageError(f"{option}: {what} must be a finite number, not {text!r}")
    return value

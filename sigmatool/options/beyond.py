"""Predictions beyond the logged samples: ``--prior``, ``--bounds``, ``--ci`` as typed values, checked once.

Nothing here imports polars or numpy: a bad value is refused before any data is read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from sigmatool.errors import UsageError
from sigmatool.options.common import DEFAULT_SEED, check_count, check_fraction, check_seed

PRIOR_KINDS = ("auto", "none", "beta", "npmle")
DEFAULT_REPLICATES = 1000
# The χ² level of the tolerance region behind --bounds (docs/prior.md).
BOUNDS_LEVEL = 0.95
NEEDS_COUNTS = (
    "give --k-col/--n-col, --samples N (the samples behind each rate), or --rollouts (a rate column whose "
    "values lie on a 1/n grid, n ≤ 128, is read as counts of n by itself, row by row)"
)


@dataclass(frozen=True)
class PriorSpec:
    """``auto`` (the default: no prior is named, and the one rule of :class:`sigmatool.estimators.PerCell`
    fits the NPMLE prior only for the cells beyond a prompt's n samples, where the data identify one),
    ``none`` (no prior at all: those cells are not identified), ``beta`` or ``npmle`` (fitted, for every
    cell), or ``fixed`` Beta(a, b). ``default`` marks the prior the rule fits, for the notes that say why.
    """

    kind: str = "auto"
    a: float = math.nan
    b: float = math.nan
    default: bool = False

    def __post_init__(self) -> None:
        if self.kind not in (*PRIOR_KINDS, "fixed"):
            raise UsageError(f"--prior: one of none, beta, npmle or A,B, not {self.kind!r}")
        if self.kind == "fixed" and not (_positive(self.a) and _positive(self.b)):
            raise UsageError(
                f"--prior {self.a:g},{self.b:g}: a Beta(A, B) prior needs two finite numbers A > 0 and B > 0"
            )

    @property
    def active(self) -> bool:
        """Whether per-prompt quantities become posterior means."""
        return self.kind not in ("none", "auto")

    @property
    def label(self) -> str:
        """How the prior is named in notes: ``npmle``, ``beta`` or ``Beta(0.5, 2)``."""
        return f"Beta({self.a:g}, {self.b:g})" if self.kind == "fixed" else self.kind

    @property
    def fit_kind(self) -> str | tuple[float, float]:
        """The ``kind`` argument of :func:`sigmatool.prior.fit_prior`."""
        return (self.a, self.b) if self.kind == "fixed" else self.kind


def _positive(x: float) -> bool:
    return math.isfinite(x) and x > 0


def parse_prior(text: str) -> PriorSpec:
    """``none``, ``beta``, ``npmle`` or ``A,B`` (a fixed Beta(A, B) prior) → a :class:`PriorSpec`."""
    name = text.strip().lower()
    if name in PRIOR_KINDS:
        return PriorSpec(name)
    parts = [part.strip() for part in name.split(",")]
    try:
        if len(parts) != 2:
            raise ValueError
        a, b = float(parts[0]), float(parts[1])
    except ValueError:
        raise UsageError(
            f"--prior: none, beta, npmle, or A,B for a Beta(A, B) prior such as 0.5,0.5, not {text!r}"
        ) from None
    return PriorSpec("fixed", a, b)


@dataclass(frozen=True)
class BeyondOptions:
    """A prior, identified bounds, and a bootstrap interval at level ``ci`` (None: none)."""

    prior: PriorSpec = PriorSpec()
    bounds: bool = False
    ci: float | None = None
    replicates: int | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.ci is not None:
            check_fraction("--ci", self.ci)
        elif self.replicates is not None or self.seed is not None:
            raise UsageError("--replicates and --seed set up the bootstrap of --ci; give --ci LEVEL too")
        if self.replicates is not None:
            check_count("--replicates", self.replicates, 2, 1_000_000)
        if self.seed is not None:
            check_seed(self.seed)

    @property
    def replicate_count(self) -> int:
        return DEFAULT_REPLICATES if self.replicates is None else self.replicates

    @property
    def seed_value(self) -> int:
        return DEFAULT_SEED if self.seed is None else self.seed

    def bounding(self, unidentified: bool) -> BeyondOptions:
        """These options, with the bounds added where some rate has no value (it is not identified by the
        data): the range they allow is then what is printed in its place."""
        return replace(self, bounds=True) if unidentified and not self.bounds else self

    @property
    def dataset_level(self) -> bool:
        """Whether bounds or intervals are asked for (they describe a summary, not single prompts)."""
        return self.bounds or self.ci is not None

    def check(self, *, has_counts: bool, estimator: str = "auto", per_prompt: bool = False) -> None:
        """The combinations with the input and the other options of the command."""
        check_prior(self.prior, has_counts=has_counts, estimator=estimator)
        if self.bounds and not has_counts:
            raise UsageError(f"--bounds works from the histogram of counts k of n: {NEEDS_COUNTS}")
        if per_prompt and self.dataset_level:
            option = "--bounds" if self.bounds else "--ci"
            raise UsageError(
                f"{option} describes the dataset-level rates of a summary; with --per-prompt there is none"
            )


def check_prior(prior: PriorSpec, *, has_counts: bool, estimator: str = "auto", law: bool = False) -> None:
    """A prior needs counts and takes the place of --estimator (and of --law's closed form)."""
    if not prior.active:
        return
    if not has_counts:
        raise UsageError(f"--prior {prior.label} is fitted to counts k of n: {NEEDS_COUNTS}")
    if estimator not in ("auto", "plugin"):
        raise UsageError(
            f"--prior gives every prompt its posterior mean in place of --estimator {estimator}; give one of them"
        )
    if law:
        raise UsageError("--law is the closed form at p̂; with --prior the exact posterior G is given")

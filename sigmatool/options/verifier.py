"""The verifier options as typed values: ``--denoise FP,FN`` (the grader the counts were measured through),
``--invalid`` (how invalid rewards are read) and ``graders``' options. Nothing here imports polars or numpy."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from sigmatool.errors import UsageError
from sigmatool.options.common import parse_number


class InvalidRewards(str, Enum):
    """``--invalid``: how a rollout log's invalid rewards are read (:mod:`sigmatool.rewards`)."""

    skip = "skip"
    mask = "mask"
    zero = "zero"


@dataclass(frozen=True)
class Measured:
    """A verifier's error rates as measured: it marks a wrong answer right with probability ``fp`` and a
    right one wrong with ``fn``, from ``fp_trials`` known-wrong and ``fn_trials`` known-right answers (∞ when
    typed); ``source`` names where they come from, ``notes`` what people should know of them (an adversarial
    FP, a rate not measured)."""

    fp: float
    fn: float
    fp_trials: float = math.inf
    fn_trials: float = math.inf
    source: str = "--denoise"
    notes: tuple[str, ...] = ()

    @property
    def rates(self) -> tuple[float, float]:
        """(FP, FN)."""
        return self.fp, self.fn

    @property
    def gap(self) -> float:
        """``1 − FP − FN``: what a right answer's reward exceeds a wrong one's on average."""
        return 1.0 - self.fp - self.fn


def parse_rates(option: str, text: str) -> tuple[float, float]:
    """``FP,FN`` of ``option``: both in [0, 1) and FP + FN < 1 (else the reward carries no signal)."""
    fp, comma, fn = text.partition(",")
    if not comma:
        raise UsageError(f"{option}: give FP,FN (e.g. 0.05,0.1), not {text!r}")
    a, b = parse_number(option, fp.strip(), "FP"), parse_number(option, fn.strip(), "FN")
    if not (0 <= a < 1 and 0 <= b < 1):
        raise UsageError(f"{option}: FP and FN are probabilities in [0, 1), not {a:g},{b:g}")
    if a + b >= 1:
        raise UsageError(
            f"{option}: FP + FN = {a + b:g} ≥ 1: such a grader's reward says nothing of the answer"
        )
    return a, b


def parse_denoise(text: str | None) -> Measured | None:
    """``--denoise FP,FN``: the counts were graded by a verifier of these rates (typed: no trials)."""
    if text is None:
        return None
    return Measured(*parse_rates("--denoise", text))


@dataclass(frozen=True)
class GradersOptions:
    """``sigmatool graders``: the rollout logs (one with two reward columns, or two with one each), the
    prompt and rollout columns that pair them, the threshold that grades both, the G asked, the trusted
    grader (``a``, ``b`` or None) and whether rows are per prompt."""

    paths: tuple[str, ...]
    prompt_col: str
    reward_cols: tuple[str, str]
    rollout_col: str | None = None
    threshold: float | None = None
    sizes: tuple[int, ...] = (8,)
    trusted: str | None = None
    per_prompt: bool = False

    @classmethod
    def parsed(
        cls,
        paths: list[str],
        prompt_col: str | None,
        reward_col: str | None,
        reward_col_b: str | None,
        **rest: object,
    ) -> GradersOptions:
        """The options checked: one or two logs, two reward sources, a trusted grader a or b."""
        if not paths or len(paths) > 2:
            raise UsageError("graders: give one rollout log with two reward columns, or two logs")
        if reward_col is None:
            raise UsageError("graders: name grader A's reward column (--reward-col)")
        if len(paths) == 1 and reward_col_b is None:
            raise UsageError(
                "graders: one reward source; give B's column (--reward-col-b) or a second log of the rollouts"
            )
        if rest.get("trusted") not in (None, "a", "b"):
            raise UsageError(f"--trusted: a or b, not {rest['trusted']!r}")
        cols = (reward_col, reward_col_b or reward_col)
        return cls(tuple(paths), prompt_col or "prompt", cols, **rest)  # type: ignore[arg-type]

"""One rollout's reward into three flags: right, usable (present and gradeable) and bad (present, not gradeable).

Rules, the same for every trainer once its reward field is chosen:

* a Boolean field: true is right, false is wrong, null is missing;
* a number, by default: 1 is right, 0 and -1 are wrong (0/1 scores as they are, DAPO's ±1 scores as
  they are); any other number is bad, since the identity holds for binary rewards only;
* a number with a threshold T: reward ≥ T is right, any other number wrong;
* text is read as a number where it is one and is bad otherwise; null and NaN are missing (TRL writes
  NaN for a reward function that returned None).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from sigmatool.errors import DataError

REWARD = "__reward_raw"
BINARY_VALUES = (-1.0, 0.0, 1.0)


@dataclass(frozen=True)
class RewardRule:
    """Which field gives the reward and how it is read; ``says`` is the note shown to the user."""

    field: str
    threshold: float | None
    dtype: pl.DataType
    says: str
    right: tuple[float, ...] = (1.0,)  # without a threshold: the values that are right, and those wrong
    wrong: tuple[float, ...] = (0.0, -1.0)


def describe(
    trainer: str,
    field: str,
    dtype: pl.DataType,
    threshold: float | None,
    why: str,
    values: tuple[tuple[float, ...], tuple[float, ...]] = ((1.0,), (0.0, -1.0)),
) -> RewardRule:
    """The rule for one reward field of a given dtype, with its one-line note; ``values`` are the right and
    the wrong rewards without a threshold (1; 0 and -1 unless the trainer scales its reward)."""
    right, wrong = values
    if dtype == pl.Null:
        # A file whose reward is null throughout says nothing about the rule; its rows count as missing.
        return RewardRule(field, threshold, dtype, "", right, wrong)
    if dtype == pl.Boolean:
        how = f"the boolean {field!r} field (true = right)"
    elif threshold is not None:
        how = f"{field!r}: a reward ≥ {threshold:g} counts as right (threshold)"
    else:
        how = f"{field!r}: {_listed(right)} is right, {_listed(wrong)} wrong"
    if dtype != pl.Boolean and not (dtype.is_numeric() or dtype == pl.String):
        raise DataError(f"{trainer}: field {field!r} holds {dtype}, not a reward")
    return RewardRule(field, threshold, dtype, f"{trainer}: reward from {how}{why}", right, wrong)


def _listed(values: tuple[float, ...]) -> str:
    return " or ".join(f"{v:g}" for v in values)


def flags(rule: RewardRule) -> list[pl.Expr]:
    """``reward`` (Float64), ``right``, ``usable`` and ``bad`` from the raw column ``REWARD``."""
    raw = pl.col(REWARD)
    if rule.dtype == pl.Boolean:
        present = raw.is_not_null()
        return [
            raw.cast(pl.Float64).alias("reward"),
            raw.fill_null(False).alias("right"),
            present.alias("usable"),
            pl.lit(False).alias("bad"),
        ]
    value = raw.cast(pl.Float64, strict=False)
    value = pl.when(value.is_nan()).then(None).otherwise(value)
    present = raw.is_not_null() & ~(raw.cast(pl.Float64, strict=False).is_nan().fill_null(False))
    if rule.threshold is not None:
        usable = value.is_not_null()
        right = (value >= rule.threshold).fill_null(False)
    else:
        usable = value.is_in([*rule.right, *rule.wrong]).fill_null(False)
        right = value.is_in(list(rule.right)).fill_null(False)
    return [
        value.alias("reward"),
        right.alias("right"),
        usable.alias("usable"),
        (present & ~usable).alias("bad"),
    ]


def bad_reason(rule: RewardRule) -> str:
    """What a bad reward is, for the error message."""
    if rule.threshold is not None:
        return "not a number"
    if (rule.right, rule.wrong) != ((1.0,), (0.0, -1.0)):
        return (
            f"not {_listed(rule.right)} (right) or {_listed(rule.wrong)} (wrong) (the identity holds for binary "
            "rewards; --threshold T counts reward ≥ T as right)"
        )
    return "not 0/1 or ±1 (the identity holds for binary rewards; --threshold T counts reward ≥ T as right)"

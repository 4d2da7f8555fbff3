"""A verifier audit read for its false-pass (FP) and false-fail (FN) rates and the trials behind them
(``--denoise-from FILE``, ``--grader-error-from FILE``), known by content (docs/verifiers.md):

- falsepass 0.11.0 ``audits/ENV/probe-results.json``: ``results[]`` with ``expected`` ``full`` or ``zero``,
  ``score`` and ``passed``; FN the unpassed share of scored ``full`` rows, FP of scored ``zero`` rows
  (rows marked ``same_as_good`` or ``no_control`` left out). Its known-bad answers are adversarial: FP is a
  worst case, and the note says so. ``falsepass results ENV --json``: ``headline.false_fail_rate`` over
  ``headline.known_good`` answers; FP 0, said.
- reward-doctor 0.2.0 (alias rewardlint) ``audit T --format json``: ``false_positive_rate`` and
  ``false_negative_rate``; trials = the count of ``failures[].mode`` of that kind (``false positive``,
  ``false negative``) over the rate, or at a rate of 0 the ``total`` of ``by_category``'s cases that should be
  rejected (``exploit``, ``distinction``) or accepted (``equivalence``, ``format``), errored cases (a failure
  with no mode) out.
- evalproof 0.2.1 ``calibrate … --json F``: ``confusion`` {tp, fp, fn, tn}; FP = fp/(fp + tn),
  FN = fn/(tp + fn).
- ``sigmatool graders --trusted … --format json``: rows with ``fp``, ``fn``, ``fp_trials``, ``fn_trials``.

A file of none of these forms is a data error (exit 1), one line naming it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from sigmatool.errors import DataError
from sigmatool.options.verifier import Measured

REJECT = ("exploit", "distinction")  # reward-doctor's categories of answers that should fail: FP trials
ACCEPT = ("equivalence", "format")  # … and of answers that should pass: FN trials


def read_audit(path: str, option: str) -> Measured:
    """The measured rates of an audit file (:mod:`sigmatool.audits`)."""
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise DataError(f"{option}: no such file: {path}") from None
    except (OSError, ValueError) as e:
        raise DataError(f"{option}: {path} is no JSON audit ({str(e).splitlines()[0]})") from None
    for reader in (_falsepass_probes, _falsepass_results, _reward_doctor, _evalproof, _graders):
        found = reader(data, path)
        if found is not None:
            return _checked(found, path, option)
    raise DataError(
        f"{option}: {path} is no verifier audit sigmatool knows (falsepass, reward-doctor, evalproof, "
        "sigmatool graders JSON; docs/verifiers.md)"
    )


def _checked(found: Measured, path: str, option: str) -> Measured:
    if not (0 <= found.fp < 1 and 0 <= found.fn < 1 and found.fp + found.fn < 1):
        raise DataError(
            f"{option}: {path} gives FP {found.fp:g}, FN {found.fn:g}: FP + FN ≥ 1, the reward says nothing"
        )
    return found


def _share(bad: float, total: float) -> float:
    return 0.0 if total <= 0 else bad / total


def _falsepass_probes(data: Any, path: str) -> Measured | None:
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        return None
    rows = [r for r in data["results"] if isinstance(r, dict) and r.get("expected") in ("full", "zero")]
    if not rows:
        return None
    kept = [
        r
        for r in rows
        if r.get("score") is not None and not r.get("same_as_good") and not r.get("no_control")
    ]
    full = [r for r in kept if r["expected"] == "full"]
    zero = [r for r in kept if r["expected"] == "zero"]
    fn_bad = sum(1 for r in full if not r.get("passed"))
    fp_bad = sum(1 for r in zero if not r.get("passed"))
    return Measured(
        _share(fp_bad, len(zero)),
        _share(fn_bad, len(full)),
        float(len(zero)) or math.inf,
        float(len(full)) or math.inf,
        f"falsepass probes, {path}",
        ("falsepass's known-bad answers are adversarial: its FP is a worst case.",),
    )


def _falsepass_results(data: Any, path: str) -> Measured | None:
    head = data.get("headline") if isinstance(data, dict) else None
    if not isinstance(head, dict) or "false_fail_rate" not in head:
        return None
    good = float(head.get("known_good") or math.inf)
    return Measured(
        0.0,
        float(head["false_fail_rate"]),
        math.inf,
        good,
        f"falsepass results, {path}",
        ("falsepass results measure no false passes: FP 0.",),
    )


def _reward_doctor(data: Any, path: str) -> Measured | None:
    if not isinstance(data, dict) or "false_positive_rate" not in data or "false_negative_rate" not in data:
        return None
    fp, fn = float(data["false_positive_rate"]), float(data["false_negative_rate"])
    failures = [f for f in data.get("failures") or [] if isinstance(f, dict)]
    categories = data.get("by_category") or {}

    def trials(rate: float, mode: str, kinds: tuple[str, ...]) -> float:
        if rate > 0:  # the rate is the failures of that mode over the graded cases
            return float(round(sum(1 for f in failures if f.get("mode") == mode) / rate))
        total = 0
        for kind in kinds:
            found = categories.get(kind)
            if isinstance(found, dict):
                errored = sum(1 for f in failures if f.get("category") == kind and f.get("mode") is None)
                total += int(found.get("total") or 0) - errored
        return float(total) or math.inf

    return Measured(
        fp,
        fn,
        trials(fp, "false positive", REJECT),
        trials(fn, "false negative", ACCEPT),
        f"reward-doctor audit, {path}",
    )


def _evalproof(data: Any, path: str) -> Measured | None:
    c = data.get("confusion") if isinstance(data, dict) else None
    if not isinstance(c, dict) or not all(key in c for key in ("tp", "fp", "fn", "tn")):
        return None
    tp, fp, fn, tn = (float(c[key]) for key in ("tp", "fp", "fn", "tn"))
    return Measured(
        _share(fp, fp + tn),
        _share(fn, tp + fn),
        (fp + tn) or math.inf,
        (tp + fn) or math.inf,
        f"evalproof calibration, {path}",
    )


def _graders(data: Any, path: str) -> Measured | None:
    rows = data if isinstance(data, list) else None
    if not rows or not isinstance(rows[0], dict):
        return None
    row = rows[0]
    if not all(key in row for key in ("fp", "fn", "fp_trials", "fn_trials")):
        return None
    return Measured(
        float(row["fp"]),
        float(row["fn"]),
        float(row["fp_trials"]) or math.inf,
        float(row["fn_trials"]) or math.inf,
        f"sigmatool graders, {path}",
    )

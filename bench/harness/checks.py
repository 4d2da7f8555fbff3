"""Answer checks: sigmatool's numbers against a reference's, to 1e-9 relative."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from harness.data import BY

RTOL, ATOL = 1e-9, 1e-12


def compare(name: str, got: Any, want: Any) -> list[str]:
    """Problems, if any, between two equally long sequences of numbers (NaN or null equal to each other)."""
    a = np.asarray(got, dtype=np.float64).ravel()
    b = np.asarray(want, dtype=np.float64).ravel()
    if a.size != b.size:
        return [f"{name}: sigmatool has {a.size} values, the reference {b.size}"]
    bad = ~np.isclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True)
    if not bad.any():
        return []
    i = int(np.argmax(bad))
    where = f" (first of {int(bad.sum())}, at {i})" if a.size > 1 else ""
    return [f"{name}: sigmatool {float(a[i])!r}, reference {float(b[i])!r}{where}"]


def _csv(stdout: str) -> pl.DataFrame:
    return pl.read_csv(io.StringIO(stdout), schema_overrides={"G": pl.String})


def _by(frame: pl.DataFrame, answer: dict[str, Any], names: dict[str, str]) -> list[str]:
    """Join per group on the --by column; compare each sigmatool column with the answer it names."""
    got = frame.select(BY, *names).sort(BY)
    if got[BY].to_list() != sorted(answer["by"]):
        return [f"--by groups differ: sigmatool has {got.height}, the reference {len(answer['by'])}"]
    want = pl.DataFrame({BY: answer["by"], **{col: answer[key] for col, key in names.items()}})
    joined = got.join(want, on=BY, suffix="_ref")
    return [p for col, key in names.items() for p in compare(key, joined[col], joined[f"{col}_ref"])]


def silent(frame: pl.DataFrame, answer: dict[str, Any]) -> list[str]:
    problems = []
    for G in frame["G"].unique(maintain_order=True).to_list():
        at_G = frame.filter(pl.col("G") == G)
        names = {col: f"{col} {G}" for col in ("silent_rate", "all_right_rate")}
        if "by" in answer:
            problems += _by(at_G, answer, names)
            continue
        problems += [p for col, key in names.items() for p in compare(key, at_G[col], [answer[key]])]
    return problems


def budget(frame: pl.DataFrame, answer: dict[str, Any]) -> list[str]:
    problems = []
    for G in frame["G"].unique(maintain_order=True).to_list():
        at_G = frame.filter(pl.col("G") == G)
        extreme = at_G.filter(pl.col("segment") == "extreme")
        names = {f"{m}_share": f"{m} extreme {G}" for m in ("grpo", "drgrpo")}
        if "by" in answer:
            problems += _by(extreme, answer, names)
            continue
        problems += [p for col, key in names.items() for p in compare(key, extreme[col], [answer[key]])]
        bins = at_G.filter(pl.col("segment") == "bin")["grpo_share"]
        problems += compare(f"grpo bins {G}", bins, answer[f"grpo bins {G}"])
    return problems


def groupsize(frame: pl.DataFrame, answer: dict[str, Any]) -> list[str] | None:
    """The ``all`` row, when the reference searched every value; None otherwise."""
    if "summary" not in answer:
        return None
    row = frame.filter(pl.col("segment") == "all").row(0, named=True)
    return [p for key, want in answer["summary"].items() for p in compare(key, [row[key]], [want])]


def per_prompt(out: Path, answer: dict[str, Any]) -> list[str] | None:
    """The group sizes of the first rows that the reference searched; None if it searched none of them."""
    if not answer["head"]:
        return None
    ids, want = zip(*answer["head"], strict=True)
    got = pl.read_parquet(out, columns=["id", "group_size"]).filter(pl.col("id").is_in(list(ids))).sort("id")
    if got["id"].to_list() != sorted(ids):
        return [f"per-prompt ids: sigmatool wrote {got.height} of the {len(ids)} first rows"]
    expected = (w for _, w in sorted(zip(ids, want, strict=True)))
    sizes = got["group_size"].fill_null(-1)
    wrong = [
        f"id {i}: sigmatool {g}, reference {w}"
        for i, g, w in zip(got["id"], sizes, expected, strict=True)
        if g != w
    ]
    if wrong:
        return [f"per-prompt group_size (-1: unreachable) differs in {len(wrong)} rows, first {wrong[0]}"]
    return []


def check(kind: str, stdout: str, out: Path, answer: dict[str, Any]) -> list[str] | None:
    """Problems found (an empty list when all agree), or None when there was nothing to compare."""
    if kind == "silent":
        return silent(_csv(stdout), answer)
    if kind == "budget":
        return budget(_csv(stdout), answer)
    if kind == "groupsize":
        return groupsize(_csv(stdout), answer)
    if kind == "per-prompt":
        return per_prompt(out, answer)
    return None

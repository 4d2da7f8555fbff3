"""One difficulty column of a known or detected form, the datasets whose n or count direction is known,
and notes naming bad rows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from sigmatool.errors import UsageError
from sigmatool.load.forms.paths import Leaf, detect_form, resolve_leaf
from sigmatool.load.forms.values import (
    MAX_ROWS_NAMED,
    Counts,
    Form,
    ListNulls,
    NanPolicy,
    Parsed,
    check_samples,
    count_form,
    fraction_form,
    list_form,
    rate_form,
)

# ------------------------------------------------------------------------------------------ one column


@dataclass(frozen=True)
class KnownColumn:
    """What a public dataset's difficulty column means where the values alone do not say (docs/datasets.md)."""

    dataset: str
    samples: int | None
    counts: Counts = "right"
    nan_means_missing: bool = False
    note: str = ""


# Keyed by the path as the dataset stores it. Only facts the form cannot carry: the n behind a rate or a
# count, what a count counts, and whether NaN means "not measured". Sources are in docs/datasets.md.
KNOWN_COLUMNS: dict[str, KnownColumn] = {
    "llama8b_solve_rate": KnownColumn("Big-Math (SynthLabsAI)", samples=64),
    "qwen2.5_7b_pass_rate": KnownColumn("Guru (LLM360)", samples=16, nan_means_missing=True),
    **{
        f"extra_info.model_difficulty.DeepSeek-R1-Distill-Qwen-{size}": KnownColumn(
            "Skywork-OR1-RL-Data",
            samples=16,
            counts="wrong",
            note="read as a count of wrong answers out of 16 (k = 16 − value); the publisher's scripts do not "
            "settle the direction (docs/datasets.md): --counts right reads it the other way",
        )
        for size in ("1.5B", "7B", "32B")
    },
}


@dataclass(frozen=True)
class ColumnSpec:
    """A resolved difficulty column and how to read it."""

    leaf: Leaf
    form: Form
    samples: int | None = None
    counts: Counts = "right"
    known: KnownColumn | None = None

    def parse(self, *, nan: NanPolicy = "error", nulls: ListNulls = "skip") -> Parsed:
        """The canonical expressions for this column."""
        value = self.leaf.expr
        if self.form == "rate":
            return rate_form(value, nan=nan, samples=self.samples)
        if self.form == "fraction":
            return fraction_form(value)
        if self.form == "list":
            return list_form(value, nulls=nulls)
        if self.samples is None:
            raise UsageError(
                f"column {self.leaf.path!r} holds counts: give --samples N, how many answers they count "
                "out of (and --counts right or wrong)"
            )
        return count_form(value, samples=self.samples, counts=self.counts)


def column_spec(
    schema: Mapping[str, pl.DataType],
    path: str,
    *,
    sample: pl.Series | None = None,
    samples: int | None = None,
    counts: Counts | None = None,
    label: str = "input",
) -> ColumnSpec:
    """Resolve ``path`` and detect its form.

    ``samples`` (n) turns a rate into counts and is required for a count column unless KNOWN_COLUMNS has it;
    ``counts`` says whether a count column counts right (default) or wrong answers, overriding KNOWN_COLUMNS.
    A rate keeps its value as given unless ``samples`` is given here: a dataset's few off-grid rates (Big-Math
    has six on a 1/9 grid) should not turn into errors by default.
    """
    leaf = resolve_leaf(schema, path, label)
    form = detect_form(leaf.dtype, sample, path, label)
    known = KNOWN_COLUMNS.get(path)
    if form in ("fraction", "list") and samples is not None:
        raise UsageError(f"{path!r} holds {form} values that carry their own n; drop --samples")
    n = samples
    if form == "count" and n is None and known is not None:
        n = known.samples
    direction = counts if counts is not None else (known.counts if known else "right")
    return ColumnSpec(leaf=leaf, form=form, samples=check_samples(n, form), counts=direction, known=known)


def bad_row_notes(frame: pl.LazyFrame, parsed: Parsed, label: str, limit: int = MAX_ROWS_NAMED) -> list[str]:
    """One line per kind of bad value: how many rows, and the first row numbers (1-based). Reads the frame."""
    rows = (
        frame.with_row_index("__row", offset=1)
        .select(pl.col("__row"), parsed.problem, parsed.bad.alias("__bad"))
        .filter(pl.col("__bad"))
        .group_by("problem", maintain_order=True)
        .agg(pl.len().alias("rows"), pl.col("__row").head(limit).alias("first"))
        .collect()
    )
    notes = []
    for problem, count, first in rows.iter_rows():
        shown = ", ".join(str(r) for r in first)
        more = "" if count <= len(first) else f" and {count - len(first)} more"
        notes.append(f"{label}: {problem}: {count} row(s) ({shown}{more})")
    return notes

"""Difficulty columns in the shapes public RL datasets use, as polars expressions.

A column holds one of four forms (docs/datasets.md lists which public dataset uses which):

- ``rate``: a pass rate in [0, 1] (Big-Math ``llama8b_solve_rate``, Guru ``qwen2.5_7b_pass_rate``);
- ``fraction``: text ``"k/n"`` (Polaris ``difficulty``);
- ``list``: one grade per answer, booleans or 0/1 (OpenR1-Math ``correctness_math_verify``);
- ``count``: a whole number of right, or of wrong, answers out of a known n (Skywork-OR1 ``model_difficulty``).

A column may sit inside nested structs: :func:`resolve_path` finds it from a dotted path whose names may
themselves contain dots. :func:`column_spec` resolves and detects a column; its ``parse`` gives the canonical
``k``, ``n``, ``p`` expressions with ``missing`` and ``problem`` flags. This package imports only polars and
``sigmatool.errors``.
"""

from __future__ import annotations

from sigmatool.load.forms.columns import KNOWN_COLUMNS, ColumnSpec, KnownColumn, bad_row_notes, column_spec
from sigmatool.load.forms.paths import Leaf, detect_form, leaf_paths, resolve_leaf, resolve_path
from sigmatool.load.forms.values import (
    COUNTS,
    FORMS,
    LIST_NULLS,
    NAN_POLICIES,
    Counts,
    Form,
    ListNulls,
    NanPolicy,
    Parsed,
    count_form,
    counts_direction,
    fraction_form,
    list_form,
    nan_policy,
    rate_form,
)

__all__ = [
    "COUNTS",
    "FORMS",
    "KNOWN_COLUMNS",
    "LIST_NULLS",
    "NAN_POLICIES",
    "ColumnSpec",
    "Counts",
    "Form",
    "KnownColumn",
    "Leaf",
    "ListNulls",
    "NanPolicy",
    "Parsed",
    "bad_row_notes",
    "column_spec",
    "count_form",
    "counts_direction",
    "detect_form",
    "fraction_form",
    "leaf_paths",
    "list_form",
    "nan_policy",
    "rate_form",
    "resolve_leaf",
    "resolve_path",
]

"""The histogram of (k, n) from a rollout log, as one SQL query for the engine where the log lives.

A rollout log of 10^9 rows reduces to a few hundred rows: how many prompts got k right answers out of n.
:func:`histogram_query` writes that reduction (a ``GROUP BY`` per prompt, then per (k, n)) once, as a
sqlglot expression tree, and prints it in the engine's dialect. Its result is what
``sigmatool <command> RESULT --k-col k --n-col n --weight-col prompts`` reads, and it counts exactly what
``--rollouts --prompt-col P --reward-col R [--threshold T]`` counts on the log itself:

- a reward is right when it equals 1 (with a threshold: when it is ≥ T);
- it is usable when it is 0 or 1 (with a threshold: any number but NaN); a boolean reward is usable unless
  null, and right when true;
- a null reward is skipped (and counted in ``null_rewards``).

A reward that sigmatool would reject (neither 0 nor 1, or NaN with a threshold) is left out of k and n, as
``--skip-invalid`` does, and counted in the ``bad_rewards`` column: its sum over the result is the number of
rows ``--rollouts`` would stop on; ``null_rewards`` counts the rows skipped for a null reward. A prompt with
no usable reward keeps a row with null ``k`` and ``n`` (sigmatool skips it with a note) so that its rejected
and null rewards are counted too.

Output columns, in order: the ``by`` columns, the step column, ``k``, ``n`` (BIGINT), ``prompts`` (BIGINT,
prompts with these counts), ``bad_rewards`` and ``null_rewards`` (BIGINT).

``sigmatool <command> --engine duckdb|spark`` runs this query (and, for ``track``, its per-prompt part,
:func:`prompt_counts_expression`) inside the engine: :mod:`sigmatool.load.engine`.

Identifiers are always quoted, so names with spaces, reserved words and mixed case work; they must be the
names as stored (Snowflake stores unquoted names in upper case: pass ``PROMPT_ID``).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sigmatool.errors import UsageError
from sigmatool.options.sql import (
    BAD,
    DIALECTS,
    GRADED,
    MISSING,
    OUTPUT_COLUMNS,
    RIGHT,
    ROWS,
    USABLE,
    SqlOptions,
)

if TYPE_CHECKING:
    from sqlglot import exp

__all__ = [
    "DIALECTS",
    "OUTPUT_COLUMNS",
    "SqlOptions",
    "histogram_args",
    "histogram_expression",
    "histogram_query",
    "prompt_counts_expression",
    "query_text",
    "sigmatool_command",
    "spelled",
    "table_name",
]

# Engines that compare NaN as a value equal to itself and have no NaN test function that sqlglot can spell.
NAN_EQUAL_DIALECTS = ("postgres", "snowflake")
ROW_ALIAS = "r"


def histogram_args(by: Sequence[str] = (), step_col: str | None = None) -> list[str]:
    """The input options that make a sigmatool command read the query's result."""
    args = ["--k-col", "k", "--n-col", "n", "--weight-col", "prompts"]
    for name in [*by, *([step_col] if step_col else [])]:
        args += ["--by", name]
    return args


def sigmatool_command(
    command: str = "silent", result: str = "hist.csv", by: Sequence[str] = (), step_col: str | None = None
) -> str:
    """The shell command line that runs ``command`` on the exported result of :func:`histogram_query`.

    >>> sigmatool_command("budget", "hist.csv", by=["data source"])
    "sigmatool budget hist.csv --k-col k --n-col n --weight-col prompts --by 'data source'"
    """
    return shlex.join(["sigmatool", command, result, *histogram_args(by, step_col)])


def histogram_query(
    table: str,
    prompt_col: str,
    reward_col: str,
    *,
    dialect: str = "duckdb",
    threshold: float | None = None,
    by: Sequence[str] = (),
    step_col: str | None = None,
    reward_type: str = "number",
    command: str = "silent",
    result: str = "hist.csv",
) -> str:
    """The query in ``dialect``, ending with a comment that gives the sigmatool command for its result.

    The options are those of ``sigmatool sql`` (see :class:`~sigmatool.options.sql.SqlOptions`).
    """
    options = SqlOptions(
        table, prompt_col, reward_col, dialect, threshold, tuple(by), step_col, reward_type, command, result
    )
    return query_text(options)


def query_text(options: SqlOptions) -> str:
    """The query for ``options`` in its dialect, every identifier quoted, with the closing comment."""
    return "\n".join([spelled(histogram_expression(options), options.dialect), *_footer(options)])


def spelled(tree: exp.Expr, dialect: str) -> str:
    """An expression tree of this module as ``dialect``'s text, every identifier quoted."""
    said: exp.Expr = tree.transform(_nan_as_comparison) if dialect in NAN_EQUAL_DIALECTS else tree
    return said.sql(dialect=dialect, pretty=True, identify=True)


def _footer(options: SqlOptions) -> list[str]:
    rejected = "NaN" if options.threshold is not None else "neither 0 nor 1"
    line = sigmatool_command(options.command, options.result, options.by, options.step_col)
    return [
        f"-- bad_rewards: rewards that are {rejected}; sigmatool --rollouts stops on them, this query leaves",
        "-- them out of k and n (as --skip-invalid does). Check SUM(bad_rewards) = 0, export the result, run:",
        f"-- {line}",
    ]


def histogram_expression(options: SqlOptions) -> exp.Select:
    """The query as a sqlglot expression tree, independent of any dialect but the table name's."""
    from sqlglot import exp

    keys = [*[exp.column(g, quoted=True) for g in options.groups], exp.column("k"), exp.column("n")]
    return (
        exp.select(*keys)
        .select(
            exp.Count(this=exp.Star()).as_("prompts"),
            _bigint(exp.Sum(this=exp.column(BAD))).as_("bad_rewards"),
            _bigint(exp.Sum(this=exp.column(MISSING))).as_("null_rewards"),
        )
        .from_("kept")
        .group_by(*[k.copy() for k in keys])
        .order_by(*[k.copy() for k in keys])
        .with_("per_prompt", as_=_per_prompt(options, keep_prompt=False))
        .with_("kept", as_=_kept(options, keep_prompt=False))
    )


def prompt_counts_expression(options: SqlOptions) -> exp.Select:
    """One row per prompt in each ``by``/step group, before the histogram: the groups, the prompt column as
    stored, ``k`` and ``n`` (null when the prompt has no usable reward), ``rejected_rewards`` and
    ``missing_rewards`` (null ones). What ``--engine`` runs for ``track``, which follows each prompt across steps."""
    from sqlglot import exp

    return (
        exp.select(exp.Star())
        .from_("kept")
        .with_("per_prompt", as_=_per_prompt(options, keep_prompt=True))
        .with_("kept", as_=_kept(options, keep_prompt=True))
    )


def _per_prompt(options: SqlOptions, keep_prompt: bool) -> exp.Select:
    """Per prompt: right, usable, graded (non-null) and all rewards."""
    from sqlglot import exp

    right, usable = _reward_flags(options)
    names = [*options.groups, *([options.prompt_col] if keep_prompt else [])]
    # COUNT(reward) counts the non-null rewards; those not usable are the ones sigmatool rejects.
    return (
        exp.select(*[exp.column(g, ROW_ALIAS, quoted=True).as_(g, quoted=True) for g in names])
        .select(
            _count_where(right).as_(RIGHT),
            _count_where(usable).as_(USABLE),
            exp.Count(this=exp.column(options.reward_col, ROW_ALIAS, quoted=True)).as_(GRADED),
            exp.Count(this=exp.Star()).as_(ROWS),
        )
        .from_(exp.alias_(_table(options.table, options.dialect), ROW_ALIAS))
        .group_by(*[exp.column(c, ROW_ALIAS, quoted=True) for c in (*options.groups, options.prompt_col)])
    )


def _kept(options: SqlOptions, keep_prompt: bool) -> exp.Select:
    """Per prompt: k and n (null without a usable reward), the rejected and the null rewards. Every prompt
    keeps its row, so that the rewards it lost are counted."""
    from sqlglot import exp

    names = [*options.groups, *([options.prompt_col] if keep_prompt else [])]
    # Distinct names in and out of this step: engines that resolve select-list aliases (DuckDB, Spark,
    # Snowflake) then cannot mistake the nulled k and n for the counts.
    has_usable = exp.column(USABLE) > 0
    bad = exp.Sub(this=exp.column(GRADED), expression=exp.column(USABLE))
    nulls = exp.Sub(this=exp.column(ROWS), expression=exp.column(GRADED))
    return (
        exp.select(*[exp.column(g, quoted=True) for g in names])
        .select(
            _bigint(exp.case().when(has_usable.copy(), exp.column(RIGHT))).as_("k"),
            _bigint(exp.case().when(has_usable.copy(), exp.column(USABLE))).as_("n"),
            _bigint(bad).as_(BAD),
            _bigint(nulls).as_(MISSING),
        )
        .from_("per_prompt")
    )


def _reward_flags(options: SqlOptions) -> tuple[exp.Expr, exp.Expr]:
    """(right, usable) for one rollout row, as sigmatool.load decides them; both false on a null."""
    from sqlglot import exp

    reward = exp.column(options.reward_col, ROW_ALIAS, quoted=True)
    threshold = options.threshold
    if options.reward_type == "boolean":
        return reward, reward.is_(exp.null()).not_()
    if threshold is None:
        return reward.eq(1), reward.isin(0, 1)
    as_double = exp.cast(reward.copy(), exp.DataType.build("double"))
    usable = exp.and_(reward.is_(exp.null()).not_(), exp.not_(exp.IsNan(this=as_double)))
    return exp.and_(usable.copy(), reward.copy() >= _double(threshold)), usable


def _count_where(condition: exp.Expr) -> exp.Expr:
    from sqlglot import exp

    return exp.Sum(this=exp.case().when(condition.copy(), exp.Literal.number(1)).else_(exp.Literal.number(0)))


def _bigint(value: exp.Expr) -> exp.Expr:
    from sqlglot import exp

    return exp.cast(value, exp.DataType.build("bigint"))


def _double(value: float) -> exp.Expr:
    """A float literal that every engine reads as the same binary64 (shortest round-trip digits)."""
    from sqlglot import exp

    return exp.cast(exp.Literal.number(repr(float(value))), exp.DataType.build("double"))


def _nan_as_comparison(node: exp.Expr) -> exp.Expr:
    """NaN test for engines where NaN equals itself: x = CAST('NaN' AS DOUBLE)."""
    from sqlglot import exp

    if isinstance(node, exp.IsNan):
        nan = exp.cast(exp.Literal.string("NaN"), exp.DataType.build("double"))
        return exp.EQ(this=node.this, expression=nan)
    return node


def table_name(table: str, dialect: str) -> str:
    """``table`` checked and quoted as ``dialect`` spells a table name."""
    return _table(table, dialect).sql(dialect=dialect, identify=True)


def _table(table: str, dialect: str) -> exp.Table:
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    try:
        parsed = exp.to_table(table, dialect=dialect)
    except (SqlglotError, ValueError) as error:
        raise UsageError(f"--table {table!r} is not a table name in {dialect}: {error}") from None
    if not isinstance(parsed, exp.Table) or not parsed.name:
        raise UsageError(f"--table {table!r} is not a table name in {dialect}")
    return parsed

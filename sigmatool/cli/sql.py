"""``sigmatool sql``."""

from __future__ import annotations

import functools
from typing import Annotated

import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.params import (
    STEP_COL_HELP,
    TABLE_HELP,
    ByOpt,
    OutputFile,
    PromptColOpt,
    RewardColOpt,
    ThresholdOpt,
)
from sigmatool.errors import UsageError
from sigmatool.options import Dialect, HistogramCommand, OutputOptions, RewardType, SqlOptions

LOG = "The rollout log"
_log = functools.partial(typer.Option, rich_help_panel=LOG)  # an option of that panel
RESULT = "Result"
_result = functools.partial(typer.Option, rich_help_panel=RESULT)  # an option of that panel

DialectOpt = Annotated[Dialect, typer.Option("--dialect", help="The engine's SQL dialect.")]
TableOpt = Annotated[str | None, _log("--table", metavar="NAME", help=TABLE_HELP)]
RewardTypeOpt = Annotated[
    RewardType,
    _log("--reward-type", help="boolean: the reward column holds true/false."),
]
StepColOpt = Annotated[str | None, _log("--step-col", metavar="COL", help=STEP_COL_HELP)]
CommandOpt = Annotated[
    HistogramCommand,
    _result("--command", help="The command the last line runs on the result."),
]
ResultOpt = Annotated[
    str,
    _result("--result", metavar="FILE", help="The exported result's name in the last line."),
]


@app.command("sql")
def sql_command(
    dialect: DialectOpt = Dialect.duckdb,
    table: TableOpt = None,
    prompt_col: PromptColOpt = None,
    reward_col: RewardColOpt = None,
    threshold: ThresholdOpt = None,
    reward_type: RewardTypeOpt = RewardType.number,
    by: ByOpt = None,
    step_col: StepColOpt = None,
    command: CommandOpt = HistogramCommand.silent,
    result: ResultOpt = "hist.csv",
    output: OutputFile = None,
) -> None:
    """The SQL that reduces a rollout log to its (k, n) histogram where the log lives: Spark, DuckDB, Trino,
    BigQuery, Postgres or Snowflake.

    The result, a few hundred rows however long the log, gives every command exactly what --rollouts gives
    on the log itself; its last line says how to run one. Rewards sigmatool would reject (neither 0 nor 1;
    NaN with --threshold) are counted in bad_rewards instead of k and n: check that their sum is 0.

    Example:

        sigmatool sql --dialect spark --table rollouts --prompt-col q --reward-col r
    """
    if prompt_col is not None and len(prompt_col) > 1:
        raise UsageError("sql keys prompts by one --prompt-col: give one column")
    options = SqlOptions(table or "", (prompt_col or [""])[0], reward_col or "", dialect.value, threshold,
                         tuple(by or ()), step_col, reward_type.value, command.value, result)  # fmt: skip
    run.check(None, OutputOptions("auto", output))
    from sigmatool.render.files import target
    from sigmatool.sql import query_text

    with target(output, binary=False) as handle:
        handle.write(query_text(options) + "\n")

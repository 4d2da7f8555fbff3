"""``sigmatool sql``: the query's dialect, table and columns, checked without importing sqlglot."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from sigmatool.errors import UsageError
from sigmatool.options.inputs import RESERVED


class Dialect(str, Enum):
    duckdb = "duckdb"
    spark = "spark"
    trino = "trino"
    bigquery = "bigquery"
    postgres = "postgres"
    snowflake = "snowflake"


class RewardType(str, Enum):
    number = "number"
    boolean = "boolean"


class HistogramCommand(str, Enum):
    """The commands that read the query's result (a histogram of k, n with its prompts as weights)."""

    silent = "silent"
    budget = "budget"
    groupsize = "groupsize"
    plan = "plan"


DIALECTS = tuple(d.value for d in Dialect)
COMMANDS = tuple(c.value for c in HistogramCommand)
OUTPUT_COLUMNS = ("k", "n", "prompts", "bad_rewards", "null_rewards")
# The query's intermediate columns.
RIGHT, USABLE, GRADED, BAD, ROWS = (
    "right_rewards",
    "usable_rewards",
    "graded_rewards",
    "rejected_rewards",
    "rollout_rows",
)
MISSING = "missing_rewards"
# Names a by or step column cannot have: the query's own columns, and those sigmatool refuses for --by.
TAKEN = frozenset(
    name.lower() for name in (*OUTPUT_COLUMNS, RIGHT, USABLE, GRADED, BAD, ROWS, MISSING, *RESERVED, "rows")
)


@dataclass(frozen=True)
class SqlOptions:
    """The histogram query for a rollout log: where it is, how its rewards are graded, how it is grouped.

    ``command`` and ``result`` only word the query's last line: the sigmatool command to run on its result.
    """

    table: str = ""
    prompt_col: str = ""
    reward_col: str = ""
    dialect: str = "duckdb"
    threshold: float | None = None
    by: tuple[str, ...] = ()
    step_col: str | None = None
    reward_type: str = "number"
    command: str = "silent"
    result: str = "hist.csv"

    def __post_init__(self) -> None:
        if self.dialect not in DIALECTS:
            raise UsageError(f"--dialect: one of {', '.join(DIALECTS)}, not {self.dialect!r}")
        if self.reward_type not in RewardType.__members__:
            raise UsageError(f"--reward-type: number or boolean, not {self.reward_type!r}")
        if self.command not in COMMANDS:
            raise UsageError(f"--command: one of {', '.join(COMMANDS)}, not {self.command!r}")
        named = {"--table": self.table, "--prompt-col": self.prompt_col, "--reward-col": self.reward_col}
        missing = [option for option, value in named.items() if not value]
        if missing:
            raise UsageError(f"give {' and '.join(missing)}: the rollout log's table and columns")
        if not all(self.by) or self.step_col == "" or not self.result:
            raise UsageError("--by, --step-col and --result: names must not be empty")
        self._check_groups()
        if self.threshold is not None:
            if self.reward_type == "boolean":
                raise UsageError("--threshold grades numeric rewards, not a boolean reward column")
            if not math.isfinite(self.threshold):
                raise UsageError(f"--threshold: give a finite number, not {self.threshold}")

    def _check_groups(self) -> None:
        """The by and step columns become columns of the result: distinct, and not one of its own."""
        groups = self.groups
        taken = [g for g in groups if g.lower() in TAKEN]
        if taken:
            raise UsageError(
                f"--by/--step-col {', '.join(map(repr, taken))}: the result has columns of that name "
                f"({', '.join(OUTPUT_COLUMNS)}) or sigmatool reserves it; rename the column in the engine"
            )
        folded = [g.lower() for g in groups]
        if len(set(folded)) < len(folded):
            raise UsageError(
                "--by/--step-col: each column may be given once (names are compared without case)"
            )

    @property
    def groups(self) -> list[str]:
        """The result's grouping columns: the by columns, then the step column."""
        return [*self.by, *([self.step_col] if self.step_col else [])]

"""The generated datasets: numpy from a fixed seed, written in chunks into parquet row groups."""

from __future__ import annotations

import dataclasses
import math
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.csv as pacsv  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

SEED = 20260607
SAMPLES = 64  # k/64 pass rates, as Big-Math's: 65 distinct values
CHUNK = 4_000_000  # rows generated at a time, so that the generator stays small
ROW_GROUP = 1_000_000
PER_PROMPT = {"rollouts": 32, "rollouts4": 4}  # rollouts per prompt of each rollout-log kind
GROUP = 8  # the old log is written as epochs of one group of 8 per prompt
BY = "topic"  # the --by column ("id" is one of sigmatool's output columns, which --by refuses)
KINDS = ("rates", "continuous", "rollouts", "rollouts4", "topics_rates", "topics_continuous", "ten_rows")


def power(n: int) -> str:
    """10^7 for 10_000_000; digits with separators otherwise."""
    exponent = round(math.log10(n)) if n > 0 else 0
    return f"10^{exponent}" if 10**exponent == n else f"{n:,}"


@dataclasses.dataclass(frozen=True)
class Data:
    """One generated dataset."""

    kind: str  # one of KINDS
    rows: int
    groups: int = 0  # distinct values of the --by column (topics_* kinds)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown dataset kind {self.kind!r}")

    @property
    def file(self) -> str:
        if self.kind == "ten_rows":
            return "ten_rows.csv"
        topics = f"_{self.groups}topics" if self.groups else ""
        return f"{self.kind}_{self.rows}{topics}.parquet"

    @property
    def rollouts(self) -> bool:
        return self.kind in PER_PROMPT

    @property
    def discrete(self) -> bool:
        """Few distinct pass rates (k/64): the floor counts them instead of only reading the column."""
        return self.kind in ("rates", "topics_rates")

    @property
    def by(self) -> str | None:
        return BY if self.kind.startswith("topics") else None

    @property
    def prompts(self) -> int:
        return self.rows // PER_PROMPT.get(self.kind, 1)

    def describe(self) -> str:
        if self.rollouts:
            return f"{power(self.rows)} rollout rows ({self.prompts:,} prompts × {PER_PROMPT[self.kind]})"
        rates = "k/64 p" if self.discrete else "continuous p"
        if self.by:
            return f"{power(self.rows)} {rates} in {self.groups:,} {BY}s"
        return f"{power(self.rows)} {rates}" if self.kind != "ten_rows" else "a 10-row CSV"


def _true_rates(rng: np.random.Generator, size: int) -> np.ndarray:
    """A U-shaped mix of hard and easy prompts, like Big-Math's."""
    hard = rng.random(size) < 0.5
    return np.where(hard, rng.beta(0.7, 1.6, size), rng.beta(1.6, 0.7, size))


def _rate_tables(data: Data, rng: np.random.Generator) -> Iterator[pa.Table]:
    for start in range(0, data.rows, CHUNK):
        size = min(CHUNK, data.rows - start)
        p = _true_rates(rng, size)
        if data.discrete:
            p = rng.binomial(SAMPLES, p) / SAMPLES
        columns = {"pass_rate": p}
        if data.by:
            columns = {BY: rng.integers(0, data.groups, size, dtype=np.int64), "pass_rate": p}
        yield pa.table(columns)


def _rollout_tables(data: Data, rng: np.random.Generator) -> Iterator[pa.Table]:
    """rollouts: 4 epochs, each visiting every prompt once in a random order with a group of 8.

    rollouts4: every prompt once, in a random order, with its 4 rollouts next to each other.
    """
    prompts, per_prompt = data.prompts, PER_PROMPT[data.kind]
    group = GROUP if data.kind == "rollouts" else per_prompt
    p_true = _true_rates(rng, prompts)
    step = CHUNK // group
    for _ in range(per_prompt // group):
        order = rng.permutation(prompts)
        for start in range(0, prompts, step):
            ids = np.repeat(order[start : start + step], group)
            reward = (rng.random(ids.size) < p_true[ids]).astype(np.int8)
            yield pa.table({"prompt_id": ids.astype(np.int64), "reward": reward})


def generate(data: Data, folder: Path) -> Path:
    """Write one dataset (kept if a file with as many rows is already there)."""
    path = folder / data.file
    rng = np.random.default_rng([SEED, zlib.crc32(data.file.encode())])
    if data.kind == "ten_rows":
        pacsv.write_csv(pa.table({"pass_rate": _true_rates(rng, data.rows)}), path)
        return path
    if path.exists() and pq.ParquetFile(path).metadata.num_rows == data.rows:
        return path
    tables = _rollout_tables(data, rng) if data.rollouts else _rate_tables(data, rng)
    partial = path.with_suffix(".partial")
    first = next(tables)
    with pq.ParquetWriter(partial, first.schema) as writer:
        writer.write_table(first, row_group_size=ROW_GROUP)
        for table in tables:
            writer.write_table(table, row_group_size=ROW_GROUP)
    partial.replace(path)
    return path

"""A sparkline for the table view: one line of block characters, or plain text where they cannot be shown.

Each value is a bar whose height is in proportion to it, the largest a full block (``█``), so that the
heights compare like a bar chart's. Terminals whose encoding is not UTF-8, and the legacy Windows console
(whose fonts often lack the blocks), get the values written out instead.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

BLOCKS = "▁▂▃▄▅▆▇█"


@dataclass(frozen=True)
class Sparkline:
    """Values (shares in [0, 1]) against their labelled x, e.g. the silent share against G."""

    label: str  # what is drawn against what: "silent vs G"
    x_name: str  # "G"
    x: tuple[str, ...]
    y: tuple[float, ...]


def blocks(values: Sequence[float]) -> str:
    """One block per value, its height in eighths of the largest value (at least the lowest block).

    >>> blocks([0.6, 0.45, 0.3, 0.15])
    '█▆▄▂'
    """
    top = max(values, default=0.0)
    if top <= 0:
        return BLOCKS[0] * len(values)
    return "".join(BLOCKS[min(7, max(0, round(8 * v / top) - 1))] for v in values)


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def spark_lines(spark: Sparkline, width: int, unicode: bool) -> list[str]:
    """The sparkline in the longest form that fits ``width`` columns; without ``unicode``, plain text.

    >>> spark = Sparkline("silent vs G", "G", ("4", "8", "16"), (0.6, 0.45, 0.3))
    >>> spark_lines(spark, 60, True)
    ['silent vs G: █▆▄ from 60.0% at G=4 to 30.0% at G=16']
    >>> spark_lines(spark, 60, False)
    ['silent vs G: 60.0% at G=4, 45.0% at G=8, 30.0% at G=16']
    """
    if not spark.y:
        return []
    first, last = f"{spark.x_name}={spark.x[0]}", f"{spark.x_name}={spark.x[-1]}"
    if unicode:
        bars = blocks(spark.y)
        for line in (
            f"{spark.label}: {bars} from {_percent(spark.y[0])} at {first} to {_percent(spark.y[-1])} at {last}",
            f"{spark.label}: {bars} ({spark.x_name} = {spark.x[0]}…{spark.x[-1]})",
            f"{spark.label}: {bars}",
        ):
            if len(line) <= width:
                return [line]
    points = ", ".join(f"{_percent(y)} at {spark.x_name}={x}" for x, y in zip(spark.x, spark.y, strict=True))
    return textwrap.wrap(f"{spark.label}: {points}", max(width, 20))

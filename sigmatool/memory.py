"""The memory budget of polars' streaming engine, which the command line sets and the rollout reader reads.

Above its budget, polars' streaming engine (2.1 and later) works to free memory before it takes more.
Without a budget it allows itself a share of the machine: one pass over a rollout log of 25,000,000 prompts
peaks at 2.1 GiB. With 1 GiB the same pass peaks at 1.2 to 1.3 GiB and runs faster (measured in
``bench/``), so the console script sets that much unless the user has chosen a budget. Above its budget
polars may also write part of its work to a temporary folder. A program that imports sigmatool keeps
polars' settings as they are.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, MutableMapping

BUDGET_MB = "POLARS_OOC_MEMORY_BUDGET_MB"
BUDGET_FRACTION = "POLARS_OOC_MEMORY_BUDGET_FRACTION"
DEFAULT_MB = 1024


def set_default(environ: MutableMapping[str, str] | None = None) -> None:
    """Give polars a budget of :data:`DEFAULT_MB` MiB unless one is set; call it before polars is imported
    (polars reads its settings when it first needs them)."""
    env = os.environ if environ is None else environ
    if not budgeted(env):
        env[BUDGET_MB] = str(DEFAULT_MB)


def budgeted(environ: Mapping[str, str] | None = None) -> bool:
    """Whether polars' streaming engine is given a memory budget that someone chose (the user or the
    console script), rather than its default share of the machine."""
    env = os.environ if environ is None else environ
    return bool(env.get(BUDGET_MB) or env.get(BUDGET_FRACTION))


def honoured(polars_version: str) -> bool:
    """Whether this polars keeps a group-by near its budget: 2.1 does (1.2 GiB for the log above), 2.0
    barely (1.8 GiB), 1.44.2 not at all (measured on that log)."""
    found = re.match(r"(\d+)\.(\d+)", polars_version)
    return found is not None and (int(found[1]), int(found[2])) >= (2, 1)

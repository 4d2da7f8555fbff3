"""Internal names of the raw columns every input is projected to, chosen not to clash with user columns."""

from __future__ import annotations

RAW_P, RAW_K, RAW_N, RAW_W, RAW_ID, ROW, REWARD = "__rate", "__k", "__n", "__w", "__id", "__row", "__reward"
RIGHT, USABLE, BAD = "__right", "__usable", "__bad"
BAD_REWARDS, NULL_REWARDS = "__bad_rewards", "__null_rewards"
# A counted form's first problem with a row (null when the row is fine) and its ungraded list elements.
PROBLEM, UNGRADED = "__problem", "__ungraded"
# A log's sampled group, its prompt text as keyed (masked), and a rollout's id (sigmatool.load.integrity).
GROUP, TEXT, ROLLOUT = "__group", "__text", "__rollout"
# Every internal name: a user's column may not be called so when its columns are kept (plan's export).
INTERNAL = (RAW_P, RAW_K, RAW_N, RAW_W, RAW_ID, ROW, REWARD, RIGHT, USABLE, BAD, PROBLEM, UNGRADED, GROUP, TEXT,
            ROLLOUT)  # fmt: skip
# Pass-rate columns found by name: these names, or a name ending in one of the suffixes.
RATE_NAMES = ("pass_rate", "solve_rate", "pass@1", "accuracy")
RATE_SUFFIXES = ("solve_rate", "pass_rate")

"""The floor: polars reading the needed column(s), and for k/64 pass rates counting their values.

For a rollout log: grouping the two columns to (k, n) per prompt, then counting the (k, n) pairs. With few
distinct pass rates (k/64) the floor counts them (with the --by column: each (topic, p) pair); with
continuous pass rates it reads the column(s) into memory. Argument: a JSON object (path, col, by,
rollouts, discrete). Prints the number of rows it ended with.
"""

import json
import sys

import polars as pl

args = json.loads(sys.argv[1])
frame = pl.scan_parquet(args["path"])
if args["rollouts"]:
    per_prompt = frame.group_by("prompt_id").agg(k=pl.col("reward").sum(), n=pl.len())
    result = per_prompt.group_by("k", "n").len()
else:
    columns = [args["by"], args["col"]] if args["by"] else [args["col"]]
    result = frame.group_by(columns).len() if args["discrete"] else frame.select(columns)
print(result.collect(engine="streaming").height)

"""One machine or an engine? Time the routes from a rollout log to `sigmatool silent`.

    python bench/sql_route.py --rows 10000000 [--rows 100000000] [--engines duckdb,spark] [--shuffled]
                              [--in-engine duckdb,spark] [--spark-remote sc://host:port] [--data DIR]

For each size it writes a rollout log as Spark does (``step=N/part-i.parquet``, 4 files per step, columns
``prompt_id`` and a 0/1 ``reward``; 10 steps, 32 rollouts per prompt and step), then times, each as its own process with its peak memory:

- ``sigmatool silent LOG --rollouts``: sigmatool reads the log itself;
- DuckDB: the query ``sigmatool sql`` prints, run over the files, the result copied to a CSV, then
  ``sigmatool silent`` on it;
- Spark: a local SparkSession on every core (start-up included) runs the same query in Spark SQL and
  writes a CSV, then ``sigmatool silent`` on it; its peak memory adds the JVM's (from /proc) to Python's;
- ``sigmatool silent LOG --rollouts --engine duckdb|spark``: one command, the query run inside the engine
  (a local Spark, or the Spark Connect server of ``--spark-remote``); for a local Spark the peak is
  sigmatool's process tree as GNU time sees it.

It checks that every route prints the same CSV, and prints a markdown table. Needs the ``engines`` extras
and Java for Spark.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

BIN = Path(sys.executable).parent
ROLLOUTS, STEPS, FILES_PER_STEP = 32, 10, 4
COMMAND = ["silent", "--G", "4,8,16", "--format", "csv"]

DUCKDB = """
import sys, duckdb
log, out, query = sys.argv[1:4]
con = duckdb.connect()
con.execute(f"CREATE VIEW rollouts AS SELECT * FROM read_parquet('{log}/*/*.parquet', hive_partitioning = true)")
con.execute(f"COPY ({open(query).read()}) TO '{out}' (HEADER)")
"""

SPARK = """
import sys
from pyspark.sql import SparkSession
log, out, query = sys.argv[1:4]
spark = SparkSession.builder.master("local[*]").config("spark.ui.enabled", "false").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
spark.read.parquet(log).createOrReplaceTempView("rollouts")
spark.sql(open(query).read()).coalesce(1).write.mode("overwrite").option("header", True).csv(out)
# The JVM is not this process's child to wait for: report its peak resident memory from /proc.
jvm = spark.sparkContext._gateway.proc.pid
print("jvm-peak-kib", [line.split()[1] for line in open(f"/proc/{jvm}/status") if line.startswith("VmHWM")][0])
spark.stop()
"""


def write_log(folder: Path, rows: int, shuffled: bool = False, seed: int = 20260614) -> Path:
    """``rows`` rollouts: each step draws prompts from a pool twice its size, 32 answers each, so a prompt
    recurs in about half the steps."""
    rng = np.random.default_rng(seed)
    per_step = rows // (STEPS * ROLLOUTS)
    pool = 2 * per_step
    difficulty = np.where(rng.random(pool) < 0.5, rng.beta(0.7, 1.6, pool), rng.beta(1.6, 0.7, pool))
    for step in range(STEPS):
        # A step's prompts in random order, each with its group of answers together, as trainers log them.
        prompt = np.repeat(rng.choice(pool, size=per_step, replace=False), ROLLOUTS)
        reward = (rng.random(prompt.size) < difficulty[prompt]).astype(np.int8)
        if shuffled:  # the worst case: a prompt's answers scattered over the step
            order = rng.permutation(prompt.size)
            prompt, reward = prompt[order], reward[order]
        table = pa.table({"prompt_id": prompt, "reward": reward})
        part = folder / f"step={step}"
        part.mkdir(parents=True, exist_ok=True)
        for i, chunk in enumerate(np.array_split(np.arange(table.num_rows), FILES_PER_STEP)):
            pq.write_table(table.take(chunk), part / f"part-{i}.parquet")
    return folder


def measure(argv: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak MiB (GNU time) and stdout of one process."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        start = time.perf_counter()
        done = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", report.name, *argv],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr}")
        return wall, int(report.read().split()[-1]) / 1024, done.stdout


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def routes(
    log: Path, work: Path, engines: list[str], in_engine: list[str], spark_remote: str | None
) -> list[tuple[str, float, float, str, int]]:
    """(route, seconds, peak MiB, sigmatool's output, histogram rows) for each route."""
    sigmatool = str(BIN / "sigmatool")
    files = str(log / "step=*" / "*.parquet")
    rollouts = ["--rollouts", "--prompt-col", "prompt_id", "--reward-col", "reward"]
    wall, peak, out = measure([sigmatool, *COMMAND, files, *rollouts])
    found = [("sigmatool --rollouts", wall, peak, out, 0)]
    for engine in in_engine:
        remote = ["--spark-remote", spark_remote] if engine == "spark" and spark_remote else []
        wall, peak, out = measure([sigmatool, *COMMAND, files, *rollouts, "--engine", engine, *remote])
        where = " (Spark Connect)" if remote else ""
        found.append((f"sigmatool --engine {engine}{where}", wall, peak, out, 0))
    for engine in engines:
        target = work / f"{engine}-hist.csv"
        code = DUCKDB if engine == "duckdb" else SPARK
        query = work / f"{engine}.sql"
        measure(
            [sigmatool, "sql", "--dialect", engine, "--table", "rollouts", *rollouts[1:], "-o", str(query)]
        )
        wall, peak, printed = measure([sys.executable, "-c", code, str(log), str(target), str(query)])
        jvm = re.search(r"jvm-peak-kib (\d+)", printed)
        if jvm:
            peak += int(jvm.group(1)) / 1024  # the JVM's own peak, beside the Python driver
        hist = str(target) if engine == "duckdb" else str(target / "*.csv")
        args = ["--k-col", "k", "--n-col", "n", "--weight-col", "prompts"]
        wall2, peak2, out = measure([sigmatool, *COMMAND, hist, *args])
        rows = pl.read_csv(hist).height
        found.append((f"{engine} query, then sigmatool", wall + wall2, max(peak, peak2), out, rows))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", required=True)
    parser.add_argument("--engines", default="duckdb,spark", help="the query run by hand, then sigmatool")
    parser.add_argument("--in-engine", default="duckdb,spark", help="sigmatool --engine E")
    parser.add_argument("--spark-remote", help="--engine spark through this Spark Connect server")
    parser.add_argument("--data", type=Path, help="keep the logs here and reuse them")
    parser.add_argument("--shuffled", action="store_true", help="scatter each prompt's answers over its step")
    args = parser.parse_args()
    root = args.data or Path(tempfile.mkdtemp(prefix="sigmatool-sql-route-"))
    load = os.getloadavg()[0]
    print(f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load average {load:.1f} at the start\n")
    print("| log rows | log MiB | route | seconds | peak MiB | histogram rows |")
    print("|---:|---:|---|---:|---:|---:|")
    try:
        for rows in args.rows:
            log = root / f"log_{rows}{'_shuffled' if args.shuffled else ''}"
            if not log.exists():
                write_log(log, rows, args.shuffled)
            work = Path(tempfile.mkdtemp(dir=root))
            results = routes(
                log,
                work,
                [e for e in args.engines.split(",") if e],
                [e for e in args.in_engine.split(",") if e],
                args.spark_remote,
            )
            size = folder_bytes(log) / 2**20
            for route, wall, peak, _, hist_rows in results:
                shown = f"{hist_rows:,}" if hist_rows else "–"
                print(f"| {rows:,} | {size:,.0f} | {route} | {wall:.1f} | {peak:,.0f} | {shown} |")
            if len({r[3] for r in results}) != 1:
                raise SystemExit("the routes printed different results")
    finally:
        if args.data is None:
            shutil.rmtree(root, ignore_errors=True)
    print("\nEvery route printed the same CSV.")


if __name__ == "__main__":
    main()

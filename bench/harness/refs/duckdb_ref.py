"""DuckDB: the same silent rates and gradient shares in SQL, directly on the parquet file.

A pass-rate column: ``SELECT avg(pow(p, G) + pow(1 - p, G)) FROM read_parquet(…)`` (per --by group with
``GROUP BY``). A rollout log: two ``GROUP BY``s (per prompt to (k, n), then per (k, n)) and a weighted mean
over the (k, n) rows. Budget: E[σ] as its binomial sum written out in SQL, summed into shares. Argument: a
JSON object (path, col, by, rollouts, task, G). Prints one JSON line of answers, keyed as numpy_ref's.
"""

import json
import math
import sys
from pathlib import Path

import duckdb

args = json.loads(sys.argv[1])
path = args["path"].replace("'", "''")
by = f'"{args["by"]}"' if args["by"] else ""
if args["rollouts"]:
    SOURCE = (
        "(SELECT k::DOUBLE / n AS p, count(*)::DOUBLE AS w FROM (SELECT sum(reward) AS k, count(*) AS n "
        f"FROM read_parquet('{path}') GROUP BY prompt_id) GROUP BY k, n)"
    )
else:
    SOURCE = f"(SELECT {by + ', ' if by else ''}\"{args['col']}\" AS p FROM read_parquet('{path}'))"


def total(expr: str) -> str:
    return f"sum(w * ({expr}))" if args["rollouts"] else f"sum({expr})"


def mean(expr: str) -> str:
    return f"{total(expr)} / sum(w)" if args["rollouts"] else f"avg({expr})"


def share(expr: str, where: str) -> str:
    return f"{total(f'CASE WHEN {where} THEN {expr} ELSE 0 END')} / {total(expr)}"


def weights(G: int | str) -> tuple[str, str]:
    """GRPO's weight E[σ] (its binomial sum) and Dr. GRPO's E[σ²] as SQL; the limits at G = inf."""
    if G == "inf":
        return "sqrt(p * (1 - p))", "(p * (1 - p))"
    G = int(G)
    terms = [
        f"{math.comb(G, k)} * pow(p, {k}) * pow(1 - p, {G - k}) * {math.sqrt(k * (G - k))!r}"
        for k in range(1, G)
    ]
    return f"(({' + '.join(terms)}) / {G})", f"(p * (1 - p) * {1 - 1 / G!r})"


def columns() -> list[tuple[str, str]]:
    """(answer name, SQL expression) of every number the task answers."""
    out = []
    for G in args["G"]:
        if args["task"] == "silent":
            out.append((f"silent_rate {G}", mean(f"pow(p, {G}) + pow(1 - p, {G})")))
            out.append((f"all_right_rate {G}", mean(f"pow(p, {G})")))
            continue
        grpo, drgrpo = weights(G)
        out.append((f"grpo extreme {G}", share(grpo, "p < 0.1 OR p > 0.9")))
        out.append((f"drgrpo extreme {G}", share(drgrpo, "p < 0.1 OR p > 0.9")))
        if not by:
            bins = [share(grpo, f"least(greatest(floor(p * 10), 0), 9) = {b}") for b in range(10)]
            out += [(f"grpo bin {b} {G}", expr) for b, expr in enumerate(bins)]
    return out


named = columns()
select = ", ".join(expr for _, expr in named)
con = duckdb.connect()
# Spill, if it must, beside the reference's output file rather than into the current folder.
spill = str(Path(args["out"]).parent / "duckdb.tmp").replace("'", "''")
con.execute(f"SET temp_directory = '{spill}'")
answers: dict[str, object] = {}
if by:
    rows = con.execute(f"SELECT {by}, {select} FROM {SOURCE} GROUP BY {by} ORDER BY {by}").fetchall()
    answers["by"] = [row[0] for row in rows]
    for i, (name, _) in enumerate(named, start=1):
        answers[name] = [math.nan if row[i] is None else row[i] for row in rows]
else:
    row = con.execute(f"SELECT {select} FROM {SOURCE}").fetchone()
    answers.update({name: value for (name, _), value in zip(named, row, strict=True)})
    for G in args["G"] if args["task"] == "budget" else []:
        answers[f"grpo bins {G}"] = [answers.pop(f"grpo bin {b} {G}") for b in range(10)]
print(json.dumps(answers))

"""The markdown report: per section a table of sigmatool against each reference, then the targets."""

from __future__ import annotations

import math
import os
import platform
import subprocess
from pathlib import Path

import numpy as np
import polars as pl

from harness.cases import SIGMATOOL, Size
from harness.runner import Result

ROOT = Path(__file__).resolve().parents[2]
HEADER = (
    "| case | sigmatool s | sigmatool peak MiB | reference | reference s | reference peak MiB "
    "| sigmatool ÷ reference | min–max | pairs |\n|---|---:|---:|---|---:|---:|---:|---:|---:|"
)


def seconds(s: float) -> str:
    return f"{s:.3f}" if s < 1 else f"{s:.2f}" if s < 10 else f"{s:,.1f}"


def ratio(r: float) -> str:
    return f"{r:.2f}×" if r >= 0.1 or math.isnan(r) else f"{r:.2g}×"


def mib(m: float) -> str:
    return f"{m:,.0f}"


def _version() -> str:
    """sigmatool's version and the commit it was measured at."""
    try:
        out = subprocess.run(
            [*SIGMATOOL, "--version"], capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL
        )
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return "sigmatool (version unknown)"
    return f"{out.stdout.strip()} at commit {commit.stdout.strip() or 'unknown'}"


def _rows(result: Result) -> list[str]:
    label = result.case.label.replace("|", "\\|")
    if result.error:
        return [f"| {label} | **failed**: {result.error.replace('|', '/')} | | | | | | | |"]
    lines = []
    for i, v in enumerate(result.versus):
        star = "\\*" if v.note else ""
        lo, hi = min(v.ratios), max(v.ratios)
        head = f"| {label} | {seconds(result.seconds)} | {mib(result.peak_mib)} " if i == 0 else "| | | "
        lines.append(
            f"{head}| {v.ref.name} | {seconds(v.seconds)}{star} | {mib(v.peak_mib)} | {ratio(v.ratio)}{star} "
            f"| {ratio(lo)}–{ratio(hi)} | {len(v.pairs)} |"
        )
    return lines


def _measured(result: Result, kind: str, value: float) -> str:
    if kind == "wall":
        return f"{seconds(value)} s"
    if kind == "peak":
        return f"{mib(value)} MiB"
    return ratio(value)


def _targets(results: list[Result]) -> tuple[list[str], int, int]:
    lines = ["| case | target | measured | met? |", "|---|---|---:|---|"]
    met = total = 0
    for r in results:
        for target in r.case.targets:
            value = r.value(target)
            total += 1
            if value is None:
                lines.append(f"| {r.case.label} | {target.text()} | – | **no** (failed) |")
                continue
            ok = target.met(value)
            met += ok
            shown = _measured(r, target.kind, value)
            if target.kind == "ratio":
                v = next(v for v in r.versus if v.ref.name == target.ref)
                shown += f" ({ratio(min(v.ratios))}–{ratio(max(v.ratios))})"
            lines.append(f"| {r.case.label} | {target.text()} | {shown} | {'yes' if ok else '**no**'} |")
    return lines, met, total


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _rounds(size: Size) -> str:
    text = f"at most {_n(size.rounds, 'round')} a case, {size.startup_rounds} for start-up"
    if size.slow_pairs < size.rounds:
        text += f", {_n(size.slow_pairs, 'pair')} with the Python search and with numpy on 10^8 rows"
    if size.case_budget_s > 0:
        text += (
            f"; no new round once a case has run {size.case_budget_s:g} s and {_n(size.min_rounds, 'round')}"
        )
    return text


def _notes(results: list[Result], size: Size) -> list[str]:
    lines = [
        "Times are wall seconds of whole processes, interpreter start included, medians over their runs. "
        "Each reference runs right after a run of sigmatool, in turns, round after round "
        f"({_rounds(size)}); **sigmatool ÷ reference** is the median of the ratios of the pairs and **min–max** "
        "their range. Peak is the largest resident memory of any run.",
    ]
    extrapolated = [f"{r.case.label}, {v.ref.name}: {v.note}" for r in results for v in r.versus if v.note]
    if extrapolated:
        lines.append(
            "\\* extrapolated: the Python group-size search stops after "
            f"{size.search_rows:,} values or {size.search_s:g} s; its search time is scaled to every value "
            "and added to the rest of the measured run (" + "; ".join(extrapolated) + ")."
        )
    checked = [(r, v) for r in results for v in r.versus if v.problems is not None]
    bad = [f"{r.case.label} vs {v.ref.name}: {p}" for r, v in checked for p in v.problems or []]
    if checked:
        verdict = "all agree to 1e-9." if not bad else "**they disagree**: " + "; ".join(bad)
        cases = len({id(r) for r, _ in checked})
        lines.append(
            f"Answers checked against {_n(len(checked), 'reference answer')} in {_n(cases, 'case')}: {verdict}"
        )
    if not size.table_refs and any(r.case.check == "" and "(table)" in r.case.label for r in results):
        lines.append(f"In the {size.name} size the table-view --by cases are paired with the floor only.")
    failed = [r.case.label for r in results if r.error]
    if failed:
        lines.append("**Failed**: " + "; ".join(failed) + ".")
    return lines


def report(results: list[Result], size: Size, elapsed_s: float, load: tuple[float, float]) -> str:
    lines = [
        f"# sigmatool benchmark ({size.name})",
        "",
        f"{_version()}. {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, polars {pl.__version__}, numpy {np.__version__}. Load average "
        f"{load[0]:.1f} at the start, {load[1]:.1f} at the end; whole benchmark {elapsed_s:.0f} s.",
    ]
    for section in dict.fromkeys(r.case.section for r in results):
        lines += ["", f"## {section}", "", HEADER]
        lines += [row for r in results if r.case.section == section for row in _rows(r)]
    table, met, total = _targets(results)
    if total:
        lines += ["", f"## Targets: {met} of {total} met", "", *table]
    lines += ["", *_notes(results, size)]
    return "\n".join(lines) + "\n"

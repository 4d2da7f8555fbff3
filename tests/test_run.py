"""One run that every command and the report share (sigmatool.run): made in one place, its variants copies of
the whole run, and the report answering as the commands do, column by column."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import polars as pl
import pytest

from sigmatool.options import BeyondOptions, InputOptions, PriorSpec
from sigmatool.report import build_report, report_input
from sigmatool.run import Run
from tests.conftest import ROOT, csv_of, invoke

PACKAGE = ROOT / "sigmatool"
SIZES = (2, 4, 8, 16, 32, 64, 128, 256)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three pass-rate columns of 400 prompts: ``counted`` and ``other`` k of 8 (a 1/8 grid, read as counts),
    ``rates`` bare pass rates on no grid."""
    rng = random.Random(20261207)

    def eighths(a: float, b: float) -> list[float]:
        return [min(8, int(rng.betavariate(a, b) * 9)) / 8 for _ in range(400)]

    rates = [round(rng.betavariate(0.7, 0.9), 6) for _ in range(400)]
    path = tmp_path_factory.mktemp("mixed") / "models.csv"
    frame = {"counted": eighths(0.8, 0.9), "other": eighths(2.0, 1.0), "rates": rates}
    pl.DataFrame(frame).write_csv(path)
    return path


def test_a_run_is_made_in_one_module() -> None:
    # Run(...) is called only in sigmatool/run.py (Run.of, the one constructor; variants are replace()).
    makers = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "run.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Run":
                makers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert [] == makers


def test_the_wiring_takes_no_untyped_options() -> None:
    # From the options to the run, its results and their output, every value has its type: no parameter
    # is an ``object`` (or ``Any``) read with getattr.
    wiring = [
        PACKAGE / "run.py",
        PACKAGE / "shown.py",
        PACKAGE / "cli" / "run.py",
        PACKAGE / "report" / "build.py",
        PACKAGE / "report" / "model.py",
    ]
    loose = []
    for path in wiring:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                args = [*node.args.args, *node.args.kwonlyargs]
                loose += [
                    f"{path.name}:{node.name}({a.arg})"
                    for a in args
                    if isinstance(a.annotation, ast.Name) and a.annotation.id in ("object", "Any")
                ]
    assert [] == loose


def test_a_column_of_several_is_the_whole_run_with_its_values(mixed: Path) -> None:
    from sigmatool import load

    options = InputOptions(paths=(str(mixed),), cols=("counted", "other"))
    with load.dataset(options) as ds:
        read = load.histogram(ds)
    beyond = BeyondOptions(PriorSpec("none"))
    whole = Run.of(read, options.groups, "auto", beyond, sizes=(4.0,), grader=(0.1, 0.2))
    part = whole.column("counted")
    assert (whole.estimator, whole.beyond, whole.sizes, whole.grader) == (
        part.estimator,
        part.beyond,
        part.sizes,
        part.grader,
    )
    assert () == part.by
    assert part.val is not whole.val  # its own valuation, of its own values


def test_preflight_keeps_the_grader_beside_a_second_column(mixed: Path) -> None:
    grader = ("--grader-error", "0.1,0.1")
    alone = csv_of(invoke("preflight", mixed, "--col", "counted", *grader, "-f", "csv"))
    beside = csv_of(invoke("preflight", mixed, "--col", "counted", "--col", "other", *grader, "-f", "csv"))
    mine = beside.filter(pl.col("column") == "counted").drop("column")
    assert alone["keep_rate"].to_list() == pytest.approx(mine["keep_rate"].to_list(), rel=1e-12)


def test_the_grader_moves_preflight_on_a_column_of_several(mixed: Path) -> None:
    # The reach of --grader-error on the route with several columns: it changes the keep rate.
    args = ("preflight", mixed, "--col", "counted", "--col", "other", "-f", "csv")
    exact = csv_of(invoke(*args))
    graded = csv_of(invoke(*args, "--grader-error", "0.1,0.1"))
    assert exact["keep_rate"].to_list() != pytest.approx(graded["keep_rate"].to_list(), rel=1e-6)


@pytest.mark.parametrize("column", ["counted", "rates"])
def test_the_report_answers_as_silent_does_for_each_column(mixed: Path, column: str) -> None:
    # One column read as counts of 8, the other as bare rates: the report values each as silent does.
    items = [report_input(InputOptions(paths=(str(mixed),), col=c), label=c) for c in ("counted", "rates")]
    report = build_report(items)
    rows = next(iter(report.silent.values())).filter(pl.col("input") == column)
    alone = csv_of(invoke("silent", mixed, "--col", column, "--G", ",".join(map(str, SIZES)), "-f", "csv"))
    assert alone["G"].to_list() == rows["G"].to_list()
    assert alone["estimator"].to_list() == rows["estimator"].to_list()
    both = zip(alone["silent_rate"].to_list(), rows["silent_rate"].to_list(), strict=True)
    for expected, got in both:
        assert (expected is None) == (got is None)
        assert expected is None or expected == pytest.approx(got, rel=1e-12)


def test_the_report_says_the_plugin_is_biased_beyond_n(mixed: Path) -> None:
    from sigmatool.report import ReportOptions

    item = report_input(InputOptions(paths=(str(mixed),), col="counted"), label="counted")
    report = build_report([item], options=ReportOptions(estimator="plugin"))
    assert any("biased at G > n = 8" in note for note in report.page().notes)

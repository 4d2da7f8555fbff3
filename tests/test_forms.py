"""Difficulty-column forms: fixtures shaped like each public dataset, brute-force expectations, every bad value."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sigmatool.errors import DataError, UsageError
from sigmatool.load import forms

# ------------------------------------------------------------------------------------------ fixtures


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture
def polaris(tmp_path: Path) -> Path:
    """Polaris-Dataset-53K: JSON lines with problem, answer and a "k/8" difficulty string."""
    rows = [{"problem": f"p{i}", "answer": str(i), "difficulty": f"{i % 9}/8"} for i in range(20)]
    return write_jsonl(tmp_path / "polaris.jsonl", rows)


def skywork_rows() -> list[dict[str, object]]:
    sizes = ("1.5B", "7B", "32B")
    return [
        {
            "data_source": "train-math-numinamath1.5_olympiads",
            "prompt": [{"content": f"problem {i}", "role": "user"}],
            "ability": "math",
            "reward_model": {"ground_truth": '["1"]', "style": "rule"},
            "extra_info": {
                "index": i,
                "model_difficulty": {
                    f"DeepSeek-R1-Distill-Qwen-{s}": (i * (j + 3)) % 18 for j, s in enumerate(sizes)
                },
            },
        }
        for i in range(30)
    ]


@pytest.fixture
def skywork_parquet(tmp_path: Path) -> Path:
    path = tmp_path / "skywork.parquet"
    pl.DataFrame(skywork_rows()).write_parquet(path)
    return path


@pytest.fixture
def skywork_jsonl(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "skywork.jsonl", skywork_rows())


OPENR1_MATH_VERIFY = [[True, False], [True, True, False, True], [False, True], [True, None], [True]]
OPENR1_LLAMA = [None, [True, True, None, True], [False, False], [None, None], [True]]


@pytest.fixture
def openr1(tmp_path: Path) -> Path:
    """OpenR1-Math-220k: lists of booleans per generation, Llama judgements partly null."""
    path = tmp_path / "openr1.parquet"
    pl.DataFrame(
        {
            "problem": [f"p{i}" for i in range(5)],
            "generations": [["g"] * len(v) for v in OPENR1_MATH_VERIFY],
            "correctness_math_verify": OPENR1_MATH_VERIFY,
            "correctness_llama": OPENR1_LLAMA,
            "correctness_count": [sum(bool(x) for x in v) for v in OPENR1_MATH_VERIFY],
        },
        schema_overrides={"correctness_llama": pl.List(pl.Boolean)},
    ).write_parquet(path)
    return path


GURU_RATES = [0.0, 0.0625, float("nan"), 0.5, 1.0, float("nan"), 0.9375]


@pytest.fixture
def guru(tmp_path: Path) -> Path:
    """Guru: pass rates of two models, NaN where a model was not run."""
    path = tmp_path / "guru.parquet"
    pl.DataFrame(
        {
            "data_source": ["math"] * len(GURU_RATES),
            "qwen2.5_7b_pass_rate": GURU_RATES,
            "qwen3_30b_pass_rate": [0.5] * len(GURU_RATES),
        }
    ).write_parquet(path)
    return path


@pytest.fixture
def bigmath(tmp_path: Path) -> Path:
    path = tmp_path / "bigmath.parquet"
    pl.DataFrame({"llama8b_solve_rate": [k / 64 for k in range(65)]}).write_parquet(path)
    return path


def parse_frame(path: Path, col: str, **options: object) -> pl.DataFrame:
    """Read a fixture with polars and evaluate the detected column's canonical expressions."""
    frame = pl.read_parquet(path) if path.suffix == ".parquet" else pl.read_ndjson(path)
    spec_options = {key: options.pop(key) for key in ("samples", "counts") if key in options}
    spec = forms.column_spec(frame.schema, col, sample=frame.head(100).to_series(0), **spec_options)  # type: ignore[arg-type]
    parsed = spec.parse(**options)  # type: ignore[arg-type]
    return frame.select(parsed.k, parsed.n, parsed.p, parsed.missing, parsed.problem, parsed.nulls_skipped)


# ------------------------------------------------------------------------------------------ each dataset


def test_polaris_fraction_strings_give_their_k_and_n(polaris: Path) -> None:
    frame = pl.read_ndjson(polaris)
    spec = forms.column_spec(frame.schema, "difficulty", sample=frame["difficulty"])
    parsed = spec.parse()
    out = frame.select(parsed.k, parsed.n)
    expected = [tuple(int(x) for x in s.split("/")) for s in frame["difficulty"]]
    assert expected == list(out.iter_rows())


def test_polaris_column_is_detected_as_fraction(polaris: Path) -> None:
    frame = pl.read_ndjson(polaris)
    assert "fraction" == forms.column_spec(frame.schema, "difficulty", sample=frame["difficulty"]).form


@pytest.mark.parametrize("fixture", ["skywork_parquet", "skywork_jsonl"])
def test_skywork_counts_wrong_answers_of_16_by_default(fixture: str, request: pytest.FixtureRequest) -> None:
    path = request.getfixturevalue(fixture)
    out = parse_frame(path, "extra_info.model_difficulty.DeepSeek-R1-Distill-Qwen-7B")
    raw = [r["extra_info"]["model_difficulty"]["DeepSeek-R1-Distill-Qwen-7B"] for r in skywork_rows()]  # type: ignore[index]
    expected = [16 - v if 0 <= v <= 16 else None for v in raw]
    assert expected == out["k"].to_list()


def test_skywork_count_direction_can_be_given(skywork_parquet: Path) -> None:
    out = parse_frame(
        skywork_parquet, "extra_info.model_difficulty.DeepSeek-R1-Distill-Qwen-32B", counts="right"
    )
    raw = [r["extra_info"]["model_difficulty"]["DeepSeek-R1-Distill-Qwen-32B"] for r in skywork_rows()]  # type: ignore[index]
    expected = [v if 0 <= v <= 16 else None for v in raw]
    assert expected == out["k"].to_list()


def test_skywork_value_17_is_outside_the_count_range(skywork_parquet: Path) -> None:
    out = parse_frame(skywork_parquet, "extra_info.model_difficulty.DeepSeek-R1-Distill-Qwen-32B")
    raw = [r["extra_info"]["model_difficulty"]["DeepSeek-R1-Distill-Qwen-32B"] for r in skywork_rows()]  # type: ignore[index]
    expected = [forms.COUNT_RANGE if v > 16 else None for v in raw]
    assert expected == out["problem"].to_list()


def test_skywork_fixture_holds_an_out_of_range_count() -> None:
    raw = [r["extra_info"]["model_difficulty"]["DeepSeek-R1-Distill-Qwen-32B"] for r in skywork_rows()]  # type: ignore[index]
    assert 17 in raw


def test_openr1_math_verify_lists_count_trues_and_length(openr1: Path) -> None:
    out = parse_frame(openr1, "correctness_math_verify")
    expected = [(sum(x is True for x in v), sum(x is not None for x in v)) for v in OPENR1_MATH_VERIFY]
    assert expected == list(out.select("k", "n").iter_rows())


def test_openr1_llama_null_list_is_missing(openr1: Path) -> None:
    out = parse_frame(openr1, "correctness_llama")
    assert [True, False, False, False, False] == out["missing"].to_list()


def test_openr1_llama_all_null_list_has_no_graded_answers(openr1: Path) -> None:
    out = parse_frame(openr1, "correctness_llama")
    assert forms.LIST_EMPTY == out["problem"][3]


def test_openr1_skipped_null_elements_are_counted(openr1: Path) -> None:
    out = parse_frame(openr1, "correctness_llama")
    assert [0, 1, 0, 0, 0] == out["nulls_skipped"].to_list()


def test_openr1_null_elements_can_make_a_row_invalid(openr1: Path) -> None:
    out = parse_frame(openr1, "correctness_math_verify", nulls="invalid")
    assert forms.LIST_NULL == out["problem"][3]


def test_guru_nan_is_an_error_by_default(guru: Path) -> None:
    out = parse_frame(guru, "qwen2.5_7b_pass_rate")
    expected = [forms.NAN_RATE if math.isnan(v) else None for v in GURU_RATES]
    assert expected == out["problem"].to_list()


def test_guru_nan_can_mean_not_measured(guru: Path) -> None:
    out = parse_frame(guru, "qwen2.5_7b_pass_rate", nan="skip")
    assert [math.isnan(v) for v in GURU_RATES] == out["missing"].to_list()


def test_guru_skipped_nan_rows_raise_no_problem(guru: Path) -> None:
    out = parse_frame(guru, "qwen2.5_7b_pass_rate", nan="skip")
    assert [None] * len(GURU_RATES) == out["problem"].to_list()


def test_guru_dotted_column_name_resolves_as_one_name(guru: Path) -> None:
    leaf = forms.resolve_leaf(pl.read_parquet_schema(guru), "qwen2.5_7b_pass_rate")
    assert ("qwen2.5_7b_pass_rate",) == leaf.names


def test_guru_rate_with_16_samples_gives_counts(guru: Path) -> None:
    out = parse_frame(guru, "qwen2.5_7b_pass_rate", nan="skip", samples=16)
    expected = [None if math.isnan(v) else round(v * 16) for v in GURU_RATES]
    assert expected == out["k"].to_list()


def test_bigmath_rates_keep_their_value_without_samples(bigmath: Path) -> None:
    out = parse_frame(bigmath, "llama8b_solve_rate")
    assert [k / 64 for k in range(65)] == out["p"].to_list()


def test_bigmath_rates_with_64_samples_give_k_exactly(bigmath: Path) -> None:
    out = parse_frame(bigmath, "llama8b_solve_rate", samples=64)
    assert list(range(65)) == out["k"].to_list()


# ------------------------------------------------------------------------------------------ bad values


def problems_of(
    values: list[object], build: forms.Parsed, dtype: pl.DataType | None = None
) -> list[str | None]:
    frame = pl.DataFrame({"v": values}, schema={"v": dtype} if dtype is not None else None)
    return frame.select(build.problem)["problem"].to_list()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("x/8", forms.NOT_FRACTION),
        ("3/8.0", forms.NOT_FRACTION),
        ("-1/8", forms.NOT_FRACTION),
        ("", forms.NOT_FRACTION),
        ("3 8", forms.NOT_FRACTION),
        ("99999999999999999999/8", forms.NOT_FRACTION),
        ("9/8", forms.K_ABOVE_N),
        ("0/0", forms.N_ZERO),
        ("3/0", forms.N_ZERO),
    ],
)
def test_bad_fraction_is_named(text: str, problem: str) -> None:
    assert [problem] == problems_of([text], forms.fraction_form(pl.col("v")))


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("abc", forms.NOT_A_NUMBER),
        ("nan", forms.NAN_RATE),
        ("1.5", forms.RATE_RANGE),
        ("-0.1", forms.RATE_RANGE),
        ("inf", forms.RATE_RANGE),
    ],
)
def test_bad_rate_is_named(value: str, problem: str) -> None:
    assert [problem] == problems_of([value], forms.rate_form(pl.col("v")))


def test_rate_off_the_sample_grid_is_named() -> None:
    assert [forms.RATE_NOT_WHOLE] == problems_of([1 / 9], forms.rate_form(pl.col("v"), samples=64))


@pytest.mark.parametrize(
    ("value", "problem"),
    [(2.5, forms.COUNT_NOT_WHOLE), (-1.0, forms.COUNT_RANGE), (17.0, forms.COUNT_RANGE)],
)
def test_bad_count_is_named(value: float, problem: str) -> None:
    assert [problem] == problems_of([value], forms.count_form(pl.col("v"), samples=16))


@pytest.mark.parametrize(
    ("values", "problem"),
    [([0, 2], forms.LIST_VALUE), ([], forms.LIST_EMPTY), ([None], forms.LIST_EMPTY)],
)
def test_bad_list_is_named(values: list[int | None], problem: str) -> None:
    built = forms.list_form(pl.col("v"))
    assert [problem] == problems_of([values], built, pl.List(pl.Int64))


def test_bad_rows_are_named_by_row_number() -> None:
    frame = pl.LazyFrame({"difficulty": ["1/8", "9/8", "x", "2/8", "10/8", None]})
    notes = forms.bad_row_notes(frame, forms.fraction_form(pl.col("difficulty")), "polaris.jsonl")
    assert [
        "polaris.jsonl: k is larger than n: 2 row(s) (2, 5)",
        "polaris.jsonl: not of the form k/n: 1 row(s) (3)",
    ] == notes


def test_bad_row_notes_stop_after_the_limit() -> None:
    frame = pl.LazyFrame({"difficulty": ["9/8"] * 7})
    notes = forms.bad_row_notes(frame, forms.fraction_form(pl.col("difficulty")), "f", limit=2)
    assert ["f: k is larger than n: 7 row(s) (1, 2 and 5 more)"] == notes


def test_null_value_is_missing_not_bad() -> None:
    parsed = forms.fraction_form(pl.col("v"))
    out = pl.DataFrame({"v": [None]}, schema={"v": pl.String}).select(parsed.missing, parsed.bad.alias("bad"))
    assert (True, False) == out.row(0)


# ------------------------------------------------------------------------------------------ properties


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 10**6), st.text(" ", max_size=2), st.text(" ", max_size=2))
def test_fraction_parses_any_well_formed_text(k: int, extra: int, left: str, right: str) -> None:
    n = k + extra
    frame = pl.DataFrame({"v": [f"{left}{k}{right}/{left}{n}{right}"]})
    parsed = forms.fraction_form(pl.col("v"))
    out = frame.select(parsed.k, parsed.n, parsed.problem)
    expected = (k, n, None) if n >= 1 else (None, None, forms.N_ZERO)
    assert expected == out.row(0)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.booleans()), max_size=12))
def test_list_counts_trues_among_graded_answers(grades: list[bool | None]) -> None:
    frame = pl.DataFrame({"v": [grades]}, schema={"v": pl.List(pl.Boolean)})
    parsed = forms.list_form(pl.col("v"))
    out = frame.select(parsed.k, parsed.n)
    graded = [g for g in grades if g is not None]
    expected = (sum(graded), len(graded)) if graded else (None, None)
    assert expected == out.row(0)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 64), st.sampled_from(["right", "wrong"]))
def test_count_direction_maps_to_k(value: int, counts: forms.Counts) -> None:
    parsed = forms.count_form(pl.col("v"), samples=64, counts=counts)
    k = pl.DataFrame({"v": [value]}).select(parsed.k).item()
    assert (value if counts == "right" else 64 - value) == k


# ------------------------------------------------------------------------------------------ paths


NESTED = pl.Schema(
    {
        "a.b": pl.Int64,
        "a": pl.Struct({"b": pl.Struct({"c": pl.Float64}), "b.c": pl.Int64, "x": pl.String}),
    }
)


def test_longest_matching_name_is_tried_first() -> None:
    assert ("a", "b.c") == forms.resolve_leaf(NESTED, "a.b.c").names


def test_shorter_name_is_tried_when_the_longest_does_not_resolve() -> None:
    schema = pl.Schema({"a.b": pl.Int64, "a": pl.Struct({"b": pl.Struct({"c": pl.Float64})})})
    assert ("a", "b", "c") == forms.resolve_leaf(schema, "a.b.c").names


def test_resolved_expression_reads_the_nested_value() -> None:
    frame = pl.DataFrame({"a": [{"b": {"c": 0.25}, "b.c": 3, "x": "t"}], "a.b": [7]}, schema=NESTED)
    assert 3 == frame.select(forms.resolve_path(NESTED, "a.b.c")).item()


def test_unresolved_path_lists_the_fields_where_it_stopped() -> None:
    with pytest.raises(DataError, match=r"inside 'a' are: b, b\.c, x"):
        forms.resolve_leaf(NESTED, "a.y")


def test_unknown_top_level_column_lists_the_columns() -> None:
    with pytest.raises(DataError, match=r"at the top level are: a\.b, a"):
        forms.resolve_leaf(NESTED, "zz")


def test_path_into_a_non_struct_says_so() -> None:
    with pytest.raises(DataError, match=r"'a\.x' is String, not a struct"):
        forms.resolve_leaf(NESTED, "a.x.y")


def test_struct_column_asks_for_one_of_its_fields() -> None:
    with pytest.raises(DataError, match=r"a\.b\.c, a\.b\.c, a\.x"):
        forms.column_spec(NESTED, "a")


# ------------------------------------------------------------------------------------------ detection and options


@pytest.mark.parametrize(
    ("dtype", "form"),
    [
        (pl.Float64, "rate"),
        (pl.Float32, "rate"),
        (pl.Int64, "count"),
        (pl.UInt8, "count"),
        (pl.List(pl.Boolean), "list"),
        (pl.List(pl.Int64), "list"),
        (pl.Array(pl.Boolean, 4), "list"),
    ],
)
def test_form_is_detected_from_the_dtype(dtype: pl.DataType, form: str) -> None:
    assert form == forms.detect_form(dtype)


def test_text_of_numbers_is_a_rate() -> None:
    assert "rate" == forms.detect_form(pl.String(), pl.Series(["0.5", "0.25"]))


@pytest.mark.parametrize("dtype", [pl.Boolean(), pl.Null(), pl.Date(), pl.List(pl.String)])
def test_dtype_without_a_pass_rate_is_refused(dtype: pl.DataType) -> None:
    with pytest.raises(DataError):
        forms.detect_form(dtype)


def test_count_without_a_known_n_asks_for_one() -> None:
    spec = forms.column_spec(pl.Schema({"solved": pl.Int64}), "solved")
    with pytest.raises(UsageError, match="how many answers"):
        spec.parse()


def test_samples_for_a_fraction_column_are_refused() -> None:
    with pytest.raises(UsageError, match="carry their own n"):
        forms.column_spec(pl.Schema({"d": pl.String}), "d", sample=pl.Series(["1/8"]), samples=8)


@pytest.mark.parametrize("value", ["ignore", "", "Skip"])
def test_unknown_nan_policy_is_a_usage_error(value: str) -> None:
    with pytest.raises(UsageError, match="NaN handling"):
        forms.nan_policy(value)


def test_nan_policy_accepts_skip() -> None:
    assert "skip" == forms.nan_policy("skip")


def test_unknown_count_direction_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="right, wrong"):
        forms.counts_direction("correct")


def test_samples_below_one_are_a_usage_error() -> None:
    with pytest.raises(UsageError, match="at least 1"):
        forms.count_form(pl.col("v"), samples=0)


def test_a_misspelt_path_gets_the_close_field() -> None:
    schema = pl.Schema({"extra_info": pl.Struct({"model_difficulty": pl.Int64})})
    with pytest.raises(DataError, match=r"\(did you mean 'extra_info'\?\)"):
        forms.resolve_leaf(schema, "extra_inf.model_difficulty")

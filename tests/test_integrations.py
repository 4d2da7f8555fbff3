"""The trainers' plugs, run through the trainers' own code without torch, verl or TRL installed: verl
0.7's ``create_rl_sampler``, its loader's batching and ``update`` between steps; TRL's
``_get_train_sampler`` and ``RepeatSampler`` (copied in tests/trainer_excerpts.py with file, lines, commit)."""

from __future__ import annotations

import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from sigmatool.integrations import trl
from sigmatool.integrations.schedule import ScheduleError
from tests import trainer_excerpts as ref
from tests.conftest import TOY, invoke

ROWS = 20  # the toy data's rows


class Config(dict):  # type: ignore[type-arg]
    """An omegaconf DictConfig as verl reads it: items also as attributes (None when absent)."""

    __getattr__ = dict.get


class Dataset:
    def __init__(self, rows: int = ROWS) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return self.rows


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("schedules")
    runs = {
        "order": ["--schedule", "band", "--batch-size", "4", "--steps", "6", "--export-order"],
        "band": ["--schedule", "band", "--band", "0.2,0.8", "--batch-size", "2", "--steps", "4", "-o"],
        "pools": ["--schedule", "pools", "--pools", "0-0.3:1,0.3-1:3", "--batch-size", "3", "-o"],
    }
    out = {}
    for name, args in runs.items():
        out[name] = d / f"{name}.parquet"
        per_prompt = [] if name == "order" else ["--per-prompt"]
        shown = ["--format", "csv"] if name == "order" else []
        assert 0 == invoke("curriculum", TOY, *per_prompt, *args, out[name], *shown).exit_code
    out["plan"] = d / "plan.csv"
    assert 0 == invoke("plan", TOY, "--per-prompt", "--sizes", "8", "-o", out["plan"]).exit_code
    return out


def _module(name: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


@pytest.fixture
def verl07(monkeypatch: pytest.MonkeyPatch) -> None:
    """verl 0.7's sampler classes (copied) importable, and torch's names create_rl_sampler imports."""
    sampler = _module("verl.experimental.dataset.sampler", AbstractSampler=ref.AbstractSampler,
                      AbstractCurriculumSampler=ref.AbstractCurriculumSampler)  # fmt: skip
    data = _module("torch.utils.data", SequentialSampler=ref.SequentialSampler, Sampler=ref.Sampler)
    fakes = {
        "verl": _module("verl", __version__="0.7.0"),
        "verl.experimental": _module("verl.experimental"),
        "verl.experimental.dataset": _module("verl.experimental.dataset"),
        "verl.experimental.dataset.sampler": sampler,
        "torch": _module("torch"),
        "torch.utils": _module("torch.utils"),
        "torch.utils.data": data,
        "torchdata": _module("torchdata"),
        "torchdata.stateful_dataloader": _module("torchdata.stateful_dataloader"),
        "torchdata.stateful_dataloader.sampler": _module("x", RandomSampler=None),
    }
    for name, module in fakes.items():
        monkeypatch.setitem(sys.modules, name, module)


def _config(schedule: Path | None, batch: int, **sampler: Any) -> Config:
    """verl's data config: the overrides ``export --for verl`` writes."""
    if schedule is None:
        return Config(train_batch_size=batch, shuffle=False, sampler=None, dataloader_num_workers=0)
    plug = Config(class_path="pkg://sigmatool.integrations.verl", class_name="ScheduleSampler",
                  schedule=str(schedule), **sampler)  # fmt: skip
    return Config(train_batch_size=batch, shuffle=True, sampler=plug, dataloader_num_workers=0)


def _batch(rows: list[int], right: set[int] | None = None, G: int = 8) -> types.SimpleNamespace:
    """A DataProto after the rewards: each prompt's G answers (``index``), right where ``right`` says."""
    index = np.repeat(np.asarray(rows), G)
    scores = np.array([[1.0 if right is None or i in right else 0.0, 0.0] for i in index])
    return types.SimpleNamespace(non_tensor_batch={"index": index}, batch={"token_level_scores": scores})


def _run(sampler: Any, batch: int, right: set[int] | None = None) -> Iterator[list[int]]:
    """verl 0.7's fit loop: a batch from the loader, then ``update`` on a curriculum sampler."""
    for rows in ref.loader_batches(sampler, batch):
        yield rows
        if isinstance(sampler, ref.AbstractCurriculumSampler):
            sampler.update(batch=_batch(rows, right))


# ---------------------------------------------------------------------------------------------------- verl


def test_verl_builds_the_sampler_through_create_rl_sampler(verl07: None, made: dict[str, Path]) -> None:
    sampler = ref.create_rl_sampler(_config(made["order"], 4), Dataset())
    assert isinstance(sampler, ref.AbstractCurriculumSampler)


def test_verl_yields_the_orders_steps(verl07: None, made: dict[str, Path]) -> None:
    sampler = ref.create_rl_sampler(_config(made["order"], 4), Dataset())
    order = pl.read_parquet(made["order"])
    assert order["row"].to_list() == [i for rows in _run(sampler, 4) for i in rows]


def test_verl_08_overrides_run_the_same_steps_in_sequence(verl07: None, made: dict[str, Path]) -> None:
    # On verl 0.8 the loader reads the order file itself, shuffle off: its rows' own input row, step by step.
    order = pl.read_parquet(made["order"])
    sequential = ref.create_rl_sampler(_config(None, 4), Dataset(order.height))
    read = [order["row"][i] for rows in _run(sequential, 4) for i in rows]
    plugged = ref.create_rl_sampler(_config(made["order"], 4), Dataset())
    assert read == [i for rows in _run(plugged, 4) for i in rows]


def test_verl_runs_the_schedules_steps_of_weights(verl07: None, made: dict[str, Path]) -> None:
    sampler = ref.create_rl_sampler(_config(made["band"], 2), Dataset())
    assert 4 == len(list(_run(sampler, 2)))


def test_verl_draws_distinct_prompts_a_step(verl07: None, made: dict[str, Path]) -> None:
    sampler = ref.create_rl_sampler(_config(made["pools"], 3), Dataset())
    assert {3} == {len(set(rows)) for rows in _run(sampler, 3)}


def test_verl_draws_each_prompt_with_the_schedules_inclusion_probability(
    verl07: None, made: dict[str, Path]
) -> None:
    sampler = ref.create_rl_sampler(_config(made["pools"], 3), Dataset())
    seen = np.zeros(ROWS)
    steps = 0
    for _ in range(40):  # epochs of 150 steps, each drawn anew
        for rows in _run(sampler, 3):
            seen[rows] += 1
            steps += 1
    pi = 3 * pl.read_parquet(made["pools"])["weight"].fill_null(0).to_numpy()
    assert np.abs(seen / steps - pi).max() < 0.05


def test_verl_update_counts_each_rows_answers(verl07: None, made: dict[str, Path]) -> None:
    sampler = ref.create_rl_sampler(_config(made["order"], 4), Dataset())
    drawn = [i for rows in _run(sampler, 4) for i in rows]
    assert (8 * np.bincount(drawn, minlength=ROWS)).tolist() == sampler.answers.tolist()


def test_verl_refresh_every_1_stops_drawing_prompts_reported_solved(
    verl07: None, made: dict[str, Path]
) -> None:
    sampler = ref.create_rl_sampler(_config(made["band"], 2, refresh_every=1), Dataset())
    steps = list(_run(sampler, 2, right=set(range(ROWS))))  # every answer right: every drawn prompt solved
    later = [[i for i in rows if any(i in before for before in steps[:t])] for t, rows in enumerate(steps)]
    assert [[], [], [], []] == later


def test_verl_without_refresh_draws_solved_prompts_again(verl07: None, made: dict[str, Path]) -> None:
    sampler = ref.create_rl_sampler(_config(made["band"], 2), Dataset())
    drawn = [i for _ in range(5) for rows in _run(sampler, 2, right=set(range(ROWS))) for i in rows]
    assert len(drawn) > len(set(drawn))


def test_verl_resumes_where_its_state_says(verl07: None, made: dict[str, Path]) -> None:
    whole = ref.create_rl_sampler(_config(made["pools"], 3), Dataset())
    expected = list(_run(whole, 3))
    first = ref.create_rl_sampler(_config(made["pools"], 3), Dataset())
    steps = _run(first, 3)
    done = [next(steps), next(steps)]
    state = first.state_dict()
    again = ref.create_rl_sampler(_config(made["pools"], 3), Dataset())
    again.load_state_dict(state)
    assert expected == done + list(_run(again, 3))


def test_verl_takes_a_plans_kept_prompts_once_an_epoch(verl07: None, made: dict[str, Path]) -> None:
    sampler = ref.create_rl_sampler(_config(made["plan"], 2), Dataset())
    drawn = sorted(i for rows in _run(sampler, 2) for i in rows)
    kept = set(pl.read_csv(made["plan"]).with_row_index().filter(pl.col("keep"))["index"].to_list())
    assert (len(kept) // 2 * 2, set()) == (len(set(drawn)), set(drawn) - kept)


def test_verl_08_has_no_plug_and_names_the_export(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "verl", _module("verl", __version__="0.8.0"))
    import sigmatool.integrations.verl as plug

    with pytest.raises(ImportError, match="sigmatool export --for verl"):
        plug.ScheduleSampler  # noqa: B018


@pytest.mark.parametrize(
    ("name", "rows", "batch", "words"),
    [
        ("order", ROWS, 5, "the schedule's B is 4"),
        ("order", ROWS + 1, 4, "the dataset has 21 rows"),
    ],
)
def test_verl_bad_input_is_a_value_error(
    verl07: None, made: dict[str, Path], name: str, rows: int, batch: int, words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        ref.create_rl_sampler(_config(made[name], batch), Dataset(rows))


def test_verl_refresh_on_an_order_is_a_value_error(verl07: None, made: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match="refresh_every"):
        ref.create_rl_sampler(_config(made["order"], 4, refresh_every=1), Dataset())


def test_verl_a_plan_for_another_group_size_is_a_value_error(verl07: None, made: dict[str, Path]) -> None:
    sampler = ref.create_rl_sampler(_config(made["plan"], 2), Dataset())
    rows = next(ref.loader_batches(sampler, 2))
    with pytest.raises(ValueError, match="made for G = 8"):
        sampler.update(batch=_batch(rows, G=4))


# ----------------------------------------------------------------------------------------------------- TRL


def _shape(indexes: list[int], block: int) -> list[list[int]]:
    """Each block's indexes as their rank of first appearance in it: RepeatSampler's shape."""
    out = []
    for start in range(0, len(indexes), block):
        part = indexes[start : start + block]
        first = {i: r for r, i in reversed(list(enumerate(dict.fromkeys(part))))}
        out.append([first[i] for i in part])
    return out


@pytest.mark.parametrize(("G", "iterations", "steps_per_generation"), [(4, 2, 1), (2, 1, 3), (8, 1, 1)])
def test_trl_gives_repeatsamplers_shape_over_the_export(
    made: dict[str, Path], G: int, iterations: int, steps_per_generation: int
) -> None:
    args = {"num_generations": G, "generation_batch_size": 3 * G, "num_iterations": iterations,
            "steps_per_generation": steps_per_generation}  # fmt: skip
    theirs = ref.GRPOTrainer(list(range(ROWS)), **args)
    theirs.shuffle_dataset = False  # a shuffled order needs torch; the shape does not depend on it
    ours = trl.scheduled(ref.GRPOTrainer, str(made["pools"]))(Dataset(), **args)
    block = (
        3 * G * iterations * steps_per_generation
    )  # a chunk of 3 prompts, each G times, the chunk repeated
    expected = {tuple(s) for s in _shape(list(theirs._get_train_sampler()), block)}
    assert expected == {tuple(s) for s in _shape(list(ours._get_train_sampler()), block)}


def test_trl_sampler_length_is_the_chunks_it_yields(made: dict[str, Path]) -> None:
    sampler = trl.ScheduleSampler(Dataset(), str(made["pools"]), 4, 3, 2)
    assert len(sampler) == len(list(sampler))


def test_trl_takes_trls_own_arguments(made: dict[str, Path]) -> None:
    ours = trl.scheduled(ref.GRPOTrainer, str(made["pools"]))
    sampler = ours(
        Dataset(), num_generations=4, generation_batch_size=12, num_iterations=2
    )._get_train_sampler()
    assert (4, 3, 2) == (sampler.mini_repeat_count, sampler.batch_size, sampler.repeat_count)


def test_trl_weights_are_the_curriculums(made: dict[str, Path]) -> None:
    expected = pl.read_parquet(made["pools"])["weight"].fill_null(0).to_numpy()
    np.testing.assert_allclose(expected, trl.ScheduleSampler(Dataset(), str(made["pools"]), 4, 3).weights)


def test_trl_weights_set_to_0_stop_those_draws(made: dict[str, Path]) -> None:
    sampler = trl.ScheduleSampler(Dataset(), str(made["pools"]), 4, 3, seed=1)
    w = sampler.weights
    w[:10] = 0
    sampler.weights = w
    assert set() == {i for _ in range(20) for i in sampler if i < 10}


def test_trl_plan_weighs_its_kept_prompts_alike(made: dict[str, Path]) -> None:
    sampler = trl.ScheduleSampler(Dataset(), str(made["plan"]), 8, 2)
    kept = pl.read_csv(made["plan"])["keep"].to_numpy()
    np.testing.assert_allclose(kept / kept.sum(), sampler.weights)


def test_trl_callback_sets_the_weights_at_step_end(made: dict[str, Path]) -> None:
    zero = np.r_[np.zeros(10), np.ones(ROWS - 10)]
    callback = trl.ScheduleCallback(lambda step, sampler: zero if step == 3 else None)
    ours = trl.scheduled(ref.GRPOTrainer, str(made["pools"]))
    trainer = ours(Dataset(), num_generations=4, generation_batch_size=12, callbacks=[callback])
    sampler = trainer._get_train_sampler()
    callback.on_step_end(None, types.SimpleNamespace(global_step=3), None)
    np.testing.assert_allclose(zero / zero.sum(), sampler.weights)


def test_trl_a_plan_for_another_group_size_is_a_value_error(made: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match="made for G = 8"):
        trl.ScheduleSampler(Dataset(), str(made["plan"]), 4, 2)


def test_trl_an_order_at_another_batch_is_a_value_error(made: dict[str, Path]) -> None:
    with pytest.raises(ScheduleError, match="the schedule's B is 4"):
        trl.ScheduleSampler(Dataset(), str(made["order"]), 4, 3)


def test_trl_a_dataset_of_other_length_is_a_value_error(made: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match="the dataset has 19 rows"):
        trl.ScheduleSampler(Dataset(19), str(made["pools"]), 4, 3)


# ------------------------------------------------------------------------------------- without the trainers

BLOCKED = "import sys; [sys.modules.__setitem__(m, None) for m in ('torch', 'verl', 'trl', 'transformers')]; "


def test_both_modules_import_and_the_trl_sampler_runs_without_torch_verl_or_trl(
    made: dict[str, Path],
) -> None:
    code = BLOCKED + (
        "import sigmatool.integrations.verl, sigmatool.integrations.trl as t; "
        f"print(len(list(t.ScheduleSampler(range({ROWS}), {str(made['pools'])!r}, 4, 3))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert f"{150 * 3 * 4}\n" == done.stdout, done.stderr  # T = 150 steps of 3 prompts, 4 answers each

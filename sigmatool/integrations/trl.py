"""A schedule as TRL's GRPO sampler: :class:`ScheduleSampler` has ``RepeatSampler``'s arguments and shape,
:func:`scheduled` makes a trainer class that uses it, :class:`ScheduleCallback` sets its weights as training
goes.

TRL's ``GRPOTrainer._get_train_sampler`` (``trl/trainer/grpo_trainer.py``) builds ``RepeatSampler(data_source,
mini_repeat_count=num_generations, batch_size=generation_batch_size // num_generations,
repeat_count=num_iterations × steps_per_generation, shuffle, seed)`` (``trl/trainer/utils.py``): chunks of
``batch_size`` distinct prompts, each chunk repeated ``repeat_count`` times and each prompt in it
``mini_repeat_count`` times in a row, alike on every process. Here a chunk is a step of the schedule: an
order's step as written, or ``batch_size`` distinct prompts drawn with π_i = min(1, c w_i) from
:attr:`ScheduleSampler.weights` (a curriculum's weights, or 1/K on a plan's K kept prompts; settable). A
``WeightedRandomSampler`` from ``_get_train_sampler`` yields each index once, so every group of G would mix
G prompts: a sampler for GRPO repeats as this one does.

Weights set during training apply a batch late: accelerate's loader reads one batch ahead. Imports neither
torch nor TRL: with torch the sampler is a ``torch.utils.data.Sampler``, without it a plain iterable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sized
from typing import Any

from sigmatool.integrations.draws import Draws
from sigmatool.integrations.exports import TRL
from sigmatool.integrations.schedule import Schedule, ScheduleError, read_schedule

__all__ = ["ScheduleCallback", "ScheduleSampler", "scheduled"]

try:
    from torch.utils.data import Sampler as _SamplerBase
except ImportError:  # the sampler runs without torch
    _SamplerBase = object

try:
    from transformers.trainer_callback import TrainerCallback as _CallbackBase
except ImportError:
    _CallbackBase = object


def _loaded(schedule: Schedule | str) -> Schedule:
    return schedule if isinstance(schedule, Schedule) else read_schedule(schedule)


class ScheduleSampler(_SamplerBase):  # type: ignore[misc]
    """``RepeatSampler``'s shape over a schedule: ``data_source`` the input's rows in order, ``schedule`` a
    file sigmatool wrote (or a read :class:`~sigmatool.integrations.schedule.Schedule`); ``shuffle`` is taken
    for TRL's call and not used (the schedule orders the prompts); ``seed`` (default: the schedule's) seeds
    the draws, alike on every process."""

    def __init__(
        self,
        data_source: Sized,
        schedule: Schedule | str,
        mini_repeat_count: int,
        batch_size: int = 1,
        repeat_count: int = 1,
        shuffle: bool = True,
        seed: int | None = None,
    ) -> None:
        loaded = _loaded(schedule)
        if len(data_source) != loaded.rows:
            raise ScheduleError(
                f"{loaded.path}: the dataset has {len(data_source):,} rows, the schedule's input "
                f"{loaded.rows:,}: train on the file the schedule was made from, rows in order"
            )
        if loaded.kind == "plan" and mini_repeat_count != loaded.G:
            raise ScheduleError(
                f"{loaded.path}: the plan was made for G = {loaded.G}, the trainer's {TRL['n']} is "
                f"{mini_repeat_count}"
            )
        self.data_source = data_source
        self.mini_repeat_count = mini_repeat_count
        self.batch_size = batch_size
        self.repeat_count = repeat_count
        self.shuffle = shuffle
        self.draws = Draws(loaded, batch_size, seed)

    @property
    def schedule(self) -> Schedule:
        return self.draws.schedule

    @property
    def weights(self) -> Any:
        """Each input row's chance per draw (summing to 1); None for an order."""
        return None if self.draws.weights is None else self.draws.weights.copy()

    @weights.setter
    def weights(self, value: Any) -> None:
        self.draws.set_weights(value)

    def __iter__(self) -> Iterator[int]:
        self.draws.start(self.draws.epoch + 1)
        while (chunk := self.draws.next()) is not None:
            indexes = chunk.tolist()
            for _ in range(self.repeat_count):
                for index in indexes:
                    for _ in range(self.mini_repeat_count):
                        yield index

    def __len__(self) -> int:
        return self.draws.steps * self.batch_size * self.mini_repeat_count * self.repeat_count


class ScheduleCallback(_CallbackBase):  # type: ignore[misc]
    """At each ``on_step_end``, the sampler's weights become ``weights_at(global_step, sampler)`` (None:
    unchanged). :func:`scheduled`'s trainer hands it its sampler; or give ``sampler``."""

    def __init__(
        self, weights_at: Callable[[int, ScheduleSampler], Any], sampler: ScheduleSampler | None = None
    ) -> None:
        self.weights_at = weights_at
        self.sampler = sampler

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if self.sampler is None:
            raise ScheduleError(
                "ScheduleCallback has no sampler: train with scheduled(GRPOTrainer, FILE), or give sampler="
            )
        weights = self.weights_at(int(state.global_step), self.sampler)
        if weights is not None:
            self.sampler.weights = weights
        return control


def scheduled(trainer: type, schedule: Schedule | str) -> type:
    """``trainer`` (TRL's ``GRPOTrainer`` or a subclass) drawing its prompts from ``schedule``: its
    ``_get_train_sampler`` gives :class:`ScheduleSampler` TRL's own arguments, and hands the sampler to each
    :class:`ScheduleCallback` among the trainer's callbacks."""
    loaded = _loaded(schedule)

    def _get_train_sampler(self: Any, dataset: Any = None) -> ScheduleSampler:
        if dataset is None:
            dataset = self.train_dataset
        sampler = ScheduleSampler(
            data_source=dataset,
            schedule=loaded,
            mini_repeat_count=self.num_generations,
            batch_size=self.args.generation_batch_size // self.num_generations,
            repeat_count=self.num_iterations * self.args.steps_per_generation,
            shuffle=self.shuffle_dataset,
            seed=self.args.seed,
        )
        handler = getattr(self, "callback_handler", None)
        for callback in getattr(handler, "callbacks", []):
            if isinstance(callback, ScheduleCallback):
                callback.sampler = sampler
        return sampler

    name = f"Scheduled{trainer.__name__}"
    return type(name, (trainer,), {"_get_train_sampler": _get_train_sampler, "__qualname__": name})

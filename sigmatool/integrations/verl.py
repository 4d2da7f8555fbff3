"""A schedule as verl's own sampler, for verl 0.5 to 0.7 (``data.sampler``, removed in 0.8)::

    data.sampler.class_path=pkg://sigmatool.integrations.verl data.sampler.class_name=ScheduleSampler
    +data.sampler.schedule=FILE data.dataloader_num_workers=0

verl's ``create_rl_sampler`` (``verl/trainer/main_ppo.py``, 0.5.0–0.7.x) builds ``cls(data_source=dataset,
data_config=data_config)``, checks it is an ``AbstractSampler`` and that ``dataloader_num_workers`` is 0; the
loader takes ``gen_batch_size`` (else ``train_batch_size``) indices a step and after each step calls
``update(batch=batch)`` on an ``AbstractCurriculumSampler``. :class:`ScheduleSampler` is built on first
access (this module's ``__getattr__``) over that class, so the module imports without verl or torch; on verl
≥ 0.8 the access raises one line naming ``sigmatool export --for verl``, whose overrides read an order in
sequence instead.

What it yields (:mod:`.draws`): an order's rows step by step; for weights, B distinct rows a step with the
schedule's π, drawn anew each epoch; a one-size plan's kept rows each once an epoch. ``update`` counts each
row's answers (``non_tensor_batch["index"]``, verl's ``extra_info.index``: the row's place in the dataset)
and right answers (``token_level_scores.sum(-1) > 0``); with ``+data.sampler.refresh_every=K`` every K
updates the steps not yet drawn are drawn from weights the schedule gives the new pass rates (a row's counted
rate once it has answers, else the file's), for weights files. ``state_dict``/``load_state_dict`` keep its
place, counts and weights: torchdata's StatefulDataLoader replays only a sampler without them.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator, Sized
from typing import Any

import numpy as np

from sigmatool.integrations.draws import Draws, reweighed
from sigmatool.integrations.exports import VERL
from sigmatool.integrations.schedule import ScheduleError, read_schedule

__all__ = ["ScheduleSampler", "ScheduleSamplerCore"]  # noqa: F822 (ScheduleSampler: built on access)

_BUILT: dict[int, type] = {}
LAST_MINOR = (0, 7)  # the last verl with data.sampler


def _get(config: Any, key: str) -> Any:
    """``config[key]`` of a DictConfig or a dict (None when absent)."""
    if config is None:
        return None
    if hasattr(config, "get"):
        return config.get(key)
    return getattr(config, key, None)


def _version(text: str) -> tuple[int, int]:
    found = re.match(r"(\d+)\.(\d+)", text)
    return (int(found[1]), int(found[2])) if found else (0, 0)


def _scores(batch: Any) -> Any:
    scores = batch.batch["token_level_scores"].sum(-1) > 0
    return scores.cpu() if hasattr(scores, "cpu") else scores


class ScheduleSamplerCore:
    """What :class:`ScheduleSampler` does, over any base class (verl's, or a stand-in)."""

    def __init__(self, data_source: Sized, data_config: Any) -> None:
        config = _get(data_config, "sampler")
        path = _get(config, "schedule")
        if not path:
            raise ScheduleError("give the schedule file: +data.sampler.schedule=FILE")
        schedule = read_schedule(str(path))
        if len(data_source) != schedule.rows:
            raise ScheduleError(
                f"{schedule.path}: the dataset has {len(data_source):,} rows, the schedule's input "
                f"{schedule.rows:,}: give data.train_files the file the schedule was made from"
            )
        batch = _get(data_config, "gen_batch_size") or _get(data_config, "train_batch_size")
        self.draws = Draws(schedule, int(batch or schedule.batch or 0), once=True)
        self.refresh_every = int(_get(config, "refresh_every") or 0)
        if self.refresh_every and schedule.kind != "weights":
            raise ScheduleError(
                f"{schedule.path}: refresh_every redraws from per-prompt weights (curriculum --per-prompt); "
                f"a{'n order' if schedule.kind == 'order' else ' plan'} has none to redraw"
            )
        self.answers = np.zeros(schedule.rows, dtype=np.int64)
        self.right = np.zeros(schedule.rows, dtype=np.int64)
        self.updates = 0
        self._resume = False

    @property
    def schedule(self) -> Any:
        return self.draws.schedule

    def __len__(self) -> int:
        return self.draws.steps * self.draws.batch

    def __iter__(self) -> Iterator[int]:
        if not self._resume:
            self.draws.start(self.draws.epoch + 1)
        self._resume = False
        while (rows := self.draws.next()) is not None:
            yield from rows.tolist()

    def update(self, batch: Any) -> None:
        """Count each row's answers and right answers in ``batch`` (a DataProto); every ``refresh_every``
        updates, redraw the steps to come from the new counts."""
        index = np.asarray(batch.non_tensor_batch["index"]).astype(np.int64)
        right = np.asarray(_scores(batch)).astype(bool).reshape(-1)
        if index.size and (index.min() < 0 or index.max() >= self.answers.size):
            raise ScheduleError(
                f"a batch's extra_info.index runs {index.min()}..{index.max()}, outside the schedule's "
                f"{self.answers.size:,} rows: the index is the row's place in the dataset"
            )
        G = self.schedule.G
        if self.schedule.kind == "plan" and index.size and index.size != G * np.unique(index).size:
            raise ScheduleError(
                f"{self.schedule.path}: the plan was made for G = {G}; this batch has "
                f"{index.size / np.unique(index).size:g} answers a prompt ({VERL['n']})"
            )
        np.add.at(self.answers, index, 1)
        np.add.at(self.right, index, right.astype(np.int64))
        self.updates += 1
        if self.refresh_every and self.updates % self.refresh_every == 0:
            self.refresh()

    def refresh(self) -> None:
        """Weights from the pass rates now known: a row's counted rate once it has answers, else the file's."""
        assert self.schedule.p is not None
        seen = self.answers > 0
        p = np.where(seen, self.right / np.maximum(self.answers, 1), self.schedule.p)
        try:
            self.draws.set_weights(reweighed(self.schedule, p))
        except ValueError as exc:
            warnings.warn(f"sigmatool: kept the weights: {exc}", RuntimeWarning, stacklevel=2)

    def state_dict(self) -> dict[str, Any]:
        return {
            "draws": self.draws.state(),
            "answers": self.answers.tolist(),
            "right": self.right.tolist(),
            "updates": self.updates,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.draws.restore(state["draws"])
        self.answers = np.asarray(state["answers"], dtype=np.int64)
        self.right = np.asarray(state["right"], dtype=np.int64)
        self.updates = int(state["updates"])
        self._resume = True


def _base() -> type:
    """verl's ``AbstractCurriculumSampler``; one line naming what to do where it is not."""
    instead = "write verl's overrides with: sigmatool export --for verl --trainer-version VERSION FILE"
    try:
        import verl
    except ImportError:
        raise ImportError(
            "sigmatool.integrations.verl.ScheduleSampler plugs into verl 0.5-0.7, which is not installed "
            "(pip install 'sigmatool[verl]')"
        ) from None
    version = str(getattr(verl, "__version__", "0.0"))
    try:
        from verl.experimental.dataset.sampler import AbstractCurriculumSampler
    except ImportError:
        raise ImportError(f"verl {version} has no data.sampler plug (it left in 0.8): {instead}") from None
    if _version(version) > LAST_MINOR:
        raise ImportError(f"verl {version} has no data.sampler plug (it left in 0.8): {instead}")
    return AbstractCurriculumSampler  # type: ignore[no-any-return]


def build(base: type) -> type:
    """:class:`ScheduleSamplerCore` over ``base`` (made once per base)."""
    if id(base) not in _BUILT:
        _BUILT[id(base)] = type("ScheduleSampler", (ScheduleSamplerCore, base), {"__module__": __name__})
    return _BUILT[id(base)]


def __getattr__(name: str) -> Any:
    if name == "ScheduleSampler":
        return build(_base())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

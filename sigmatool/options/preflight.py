"""The settings of a trainer's batch loop, for ``preflight``: from flags, a verl config, or a TRL GRPOConfig.

A verl run is configured by a Hydra YAML file and ``key=value`` overrides on its command line
(``data.train_batch_size=512 algorithm.filter_groups.max_num_gen_batches=10``). The keys read here (:data:`VERL_KEYS`)
are those that the DAPO trainer's loop reads (``recipe/dapo/dapo_ray_trainer.py``, ``RayDAPOTrainer.fit``,
and the dataloader of ``verl/trainer/ppo/ray_trainer.py``, ``RayPPOTrainer._create_dataloader``):

- ``data.train_batch_size``: kept prompts per step (the loop's ``prompt_bsz``);
- ``data.gen_batch_size``: prompts per generation batch (the dataloader's batch size; when absent,
  ``data.train_batch_size``);
- ``actor_rollout_ref.rollout.n``: rollouts per prompt;
- ``algorithm.filter_groups.enable``: whether groups with reward std 0 are filtered;
- ``algorithm.filter_groups.max_num_gen_batches``: batches a step may draw before it raises (≤ 0: endless);
- ``trainer.total_epochs`` and ``trainer.total_training_steps``: the run's length.

A TRL ``GRPOConfig`` (YAML or JSON of its fields) has no filtering loop: it gives ``num_generations`` (n),
``per_device_train_batch_size`` (rollouts per device, so prompts per batch = that ÷ n on one device),
``num_train_epochs`` and ``max_steps``. The YAML read is the subset these configs use (nested ``key: value``
mappings, scalars, comments, ``${…}`` interpolations left unread); PyYAML is not needed. Nothing here imports
polars or numpy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from sigmatool.errors import DataError, UsageError

DEFAULT_RISK = 0.01
DEFAULT_SILENT_OVER = 0.5
VERL_KEYS = {
    "data.train_batch_size": "train_batch_size",
    "data.gen_batch_size": "gen_batch_size",
    "actor_rollout_ref.rollout.n": "n",
    "algorithm.filter_groups.enable": "filter",
    "algorithm.filter_groups.max_num_gen_batches": "max_gen_batches",
    "trainer.total_epochs": "epochs",
    "trainer.total_training_steps": "steps",
}
TRL_KEYS = {
    "num_generations": "n",
    "per_device_train_batch_size": "rollouts_per_batch",
    "num_train_epochs": "epochs",
    "max_steps": "steps",
}
Scalar = str | int | float | bool | None


@dataclass(frozen=True)
class LoopSettings:
    """A trainer's batch loop: prompts per step and per generation batch, rollouts per prompt, the filter,
    its cap on generation batches (0: endless), and the run's length in steps or epochs."""

    train_batch_size: int = 512
    gen_batch_size: int | None = None  # None: the train batch size, as verl's dataloader does
    n: int = 16
    max_gen_batches: int = 10
    filter: bool = True
    steps: int = 150
    epochs: int | None = None
    risk: float = DEFAULT_RISK
    silent_over: float = DEFAULT_SILENT_OVER

    @property
    def gen(self) -> int:
        """Prompts per generation batch."""
        return self.gen_batch_size if self.gen_batch_size is not None else self.train_batch_size

    @property
    def group_sizes(self) -> tuple[float, ...]:
        """The group size the estimator is asked about: n (none for a single rollout, always kept)."""
        return (float(self.n),) if self.n > 1 else ()

    def checked(self) -> LoopSettings:
        """These settings, or a usage error naming every bad one."""
        bad = [
            f"{flag} must be ≥ {low}, not {value}"
            for flag, value, low in (
                ("--train-batch-size", self.train_batch_size, 1),
                ("--gen-batch-size", self.gen, 1),
                ("--n", self.n, 1),
                ("--max-gen-batches", self.max_gen_batches, 0),
                ("--steps", self.steps, 1),
                ("--epochs", self.epochs if self.epochs is not None else 1, 1),
            )
            if value < low
        ]
        if not 0 < self.risk < 1:
            bad.append(f"--risk must be in (0, 1), not {self.risk}")
        if not 0 <= self.silent_over < 1:
            bad.append(f"--silent-over must be in [0, 1), not {self.silent_over}")
        if bad:
            raise UsageError("; ".join(bad))
        return self


def _scalar(text: str) -> Scalar:
    """A YAML scalar as verl's configs write them: null, booleans, integers, floats, quoted or bare strings."""
    text = text.strip()
    if text in ("", "null", "~", "None"):
        return None
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    for kind in (int, float):
        try:
            return kind(text.replace("_", ""))
        except ValueError:
            pass
    return text


def _uncomment(line: str) -> str:
    """The line without a ``#`` comment (one outside quotes)."""
    quote = ""
    for i, ch in enumerate(line):
        if ch in "'\"" and quote in ("", ch):
            quote = "" if quote else ch
        elif ch == "#" and not quote and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def read_yaml(text: str) -> dict[str, Scalar]:
    """The nested ``key: value`` mappings of a YAML config, flattened to dotted keys.

    >>> read_yaml("data:\\n  train_batch_size: 512  # prompts\\nalgorithm:\\n  filter_groups:\\n    enable: True\\n")
    {'data.train_batch_size': 512, 'algorithm.filter_groups.enable': True}
    """
    flat: dict[str, Scalar] = {}
    path: list[tuple[int, str]] = []
    for raw in text.splitlines():
        line = _uncomment(raw).rstrip()
        stripped = line.lstrip()
        if not stripped or stripped.startswith(("-", "---")) or ":" not in stripped:
            continue  # lists, documents markers and flow text hold no key this reader needs
        indent = len(line) - len(stripped)
        key, _, value = stripped.partition(":")
        while path and path[-1][0] >= indent:
            path.pop()
        dotted = ".".join([*(k for _, k in path), key.strip().strip("'\"")])
        if value.strip():
            flat[dotted] = _scalar(value)
        else:
            path.append((indent, key.strip().strip("'\"")))
    return flat


def overrides(items: Sequence[str]) -> dict[str, Scalar]:
    """verl's command-line overrides (``key=value``, Hydra's ``+key=value`` and ``++key=value`` too)."""
    out: dict[str, Scalar] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip("+"):
            raise UsageError(f"an override is key=value, as verl's command line writes it, not {item!r}")
        out[key.lstrip("+")] = _scalar(value)
    return out


def read_config(path: str, option: str = "--config") -> dict[str, Scalar]:
    """A trainer config file (YAML, or JSON for a TRL GRPOConfig) flattened to dotted keys; ``option``
    names the flag that gave it in the messages."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise DataError(f"{option} {path}: {exc.strerror or exc}") from exc
    if path.endswith(".json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"{option} {path}: not JSON ({exc.msg}, line {exc.lineno})") from exc
        values = _flatten(data) if isinstance(data, dict) else {}
    else:
        values = read_yaml(text)
    if not any(key in values for key in (*VERL_KEYS, *TRL_KEYS)):
        # Without one, the loop's defaults would stand in for the trainer's settings, unsaid.
        raise DataError(
            f"{option} {path}: none of the batch loop's keys is there (verl: {', '.join(VERL_KEYS)}; TRL: "
            f"{', '.join(TRL_KEYS)})"
        )
    return values


def _flatten(data: Mapping[str, object], prefix: str = "") -> dict[str, Scalar]:
    out: dict[str, Scalar] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            out.update(_flatten(value, f"{prefix}{key}."))
        elif value is None or isinstance(value, (str, int, float, bool)):
            out[f"{prefix}{key}"] = value
    return out


INTERPOLATION = re.compile(r"\$\{([^}]*)\}")
OVERRIDE = re.compile(r"^\+{0,2}[A-Za-z_][\w.]*=")


def resolved(values: Mapping[str, Scalar], key: str) -> Scalar:
    """``values[key]``, following an interpolation ``${other.key}`` to another key of the same config."""
    value, seen = values.get(key), {key}
    while isinstance(value, str) and (ref := INTERPOLATION.fullmatch(value.strip())) and ref[1] in values:
        if ref[1] in seen:
            break
        seen.add(ref[1])
        value = values[ref[1]]
    return value


def _setting(key: str, value: Scalar, source: str) -> int | bool | None:
    """A config value as the loop reads it; an unresolved interpolation or a non-number is refused by name."""
    if value is None:
        return None
    if isinstance(value, str) and INTERPOLATION.search(value):
        raise UsageError(
            f"{source}: {key} is {value!r}, an interpolation not resolved here; give {key}=VALUE"
        )
    if key.endswith("enable"):
        if isinstance(value, bool):
            return value
        raise UsageError(f"{source}: {key} must be True or False, not {value!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
        raise UsageError(f"{source}: {key} must be a whole number, not {value!r}")
    return int(value)


def from_config(
    values: Mapping[str, Scalar], base: LoopSettings, source: str
) -> tuple[LoopSettings, list[str]]:
    """``base`` with the loop's keys found in ``values`` (verl's or TRL's), and a note per key read."""
    found: dict[str, object] = {}
    read: list[str] = []
    keys = VERL_KEYS if any(k in values for k in VERL_KEYS) else TRL_KEYS
    for key, field in keys.items():
        if key in values and (value := _setting(key, resolved(values, key), source)) is not None:
            found[field] = value
            read.append(f"{key}={value}")
    rollouts = found.pop("rollouts_per_batch", None)
    if rollouts is not None:
        n = int(found.get("n", base.n))  # type: ignore[call-overload]
        found["gen_batch_size"] = found["train_batch_size"] = max(int(rollouts) // n, 1)  # type: ignore[call-overload]
        found["filter"] = False  # TRL's GRPOTrainer keeps silent groups in the loss
    if found.get("steps", 1) in (-1, 0):  # TRL's max_steps = -1: the length is in epochs
        found.pop("steps")
    if "steps" in found:  # a step count, when the config sets one, ends the run first (as verl's does)
        found["epochs"] = None
    return replace(base, **found), read  # type: ignore[arg-type]

"""The settings of a trainer's batch loop, for ``preflight``: from flags, a verl or SkyRL config, or a TRL
GRPOConfig.

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
- ``trainer.total_epochs`` and ``trainer.total_training_steps``: the run's length. The loop ends at whichever
  comes first: the epochs' generation batches run out, or ``total_training_steps`` optimizer steps are done
  (``is_last_step = global_steps >= total_training_steps``, ``global_steps`` counting train steps only);
  null: no step limit; ≤ 0: the first step is the last;
- ``algorithm.filter_groups.metric`` and ``data.shuffle`` are read for the note (the model's std is the 0/1
  reward's; without shuffling the dataloader reads the file in order).

A key the config leaves out takes verl's own default (:data:`VERL_DEFAULT_KEYS`, from verl-project/verl
``verl/trainer/config/ppo_trainer.yaml``, ``data/legacy_data.yaml``, ``rollout/rollout.yaml`` and
``algorithm.py``'s ``FilterGroupsConfig`` at 1dda039b): 1,024 prompts per step, one rollout each, no
filter, no cap, 30 epochs — never sigmatool's flag defaults. A Hydra ``defaults:`` list is followed: entries
found beside the file (``name.yaml``, or ``group/option.yaml`` for ``group: option``) are read in list order,
the file's own keys where ``_self_`` stands (last when absent); verl's own configs (``ppo_trainer`` …) are
its defaults.

A SkyRL config (:data:`SKYRL_KEYS`) is read as its ``filter`` strategy runs, verl's loop with the generation batch
the train batch; its absent keys take SkyRL's defaults (:data:`SKYRL_DEFAULT_KEYS`), and its ``replace``
strategy, another loop, is refused by name (docs/preflight.md).

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
# SkyRL (NovaSky-AI/SkyRL @ a9564572, skyrl/train/config/config.py): its ``filter`` strategy is verl's loop
# with the generation batch the train batch (docs/preflight.md, "Other trainers' loops").
SKYRL_KEYS = {
    "trainer.train_batch_size": "train_batch_size",
    "generator.n_samples_per_prompt": "n",
    "trainer.algorithm.dynamic_sampling.type": "filter",
    "trainer.algorithm.dynamic_sampling.max_sample_batches": "max_gen_batches",
    "trainer.epochs": "epochs",
    "trainer.max_training_steps": "steps",
}
Scalar = str | int | float | bool | None


VERL_DEFAULT_KEYS: dict[str, Scalar] = {
    "data.train_batch_size": 1024,
    "data.gen_batch_size": None,  # the train batch size
    "actor_rollout_ref.rollout.n": 1,
    "algorithm.filter_groups.enable": False,
    "algorithm.filter_groups.max_num_gen_batches": 0,
    "trainer.total_epochs": 30,
    "trainer.total_training_steps": None,
}
TRL_DEFAULT_KEYS: dict[str, Scalar] = {  # trl GRPOConfig and transformers TrainingArguments
    "num_generations": 8,
    "per_device_train_batch_size": 8,
    "num_train_epochs": 3,
    "max_steps": -1,
}
SKYRL_DEFAULT_KEYS: dict[str, Scalar] = {  # config.py l.716-723, 1225, 1382-1390 at a9564572
    "trainer.train_batch_size": 1024,
    "generator.n_samples_per_prompt": 5,
    "trainer.algorithm.dynamic_sampling.type": None,
    "trainer.algorithm.dynamic_sampling.max_sample_batches": 30,
    "trainer.epochs": 1,
    "trainer.max_training_steps": None,
}
# Each trainer's keys (key → setting) and their defaults, by the name trainer_of gives.
TRAINER_KEYS = {
    "verl": (VERL_KEYS, VERL_DEFAULT_KEYS),
    "SkyRL": (SKYRL_KEYS, SKYRL_DEFAULT_KEYS),
    "TRL": (TRL_KEYS, TRL_DEFAULT_KEYS),
}
VERL_OWN = ("ppo_trainer", "ppo_megatron_trainer", "dapo_trainer", "_self_")


@dataclass(frozen=True)
class LoopSettings:
    """A trainer's batch loop: prompts per step and per generation batch, rollouts per prompt, the filter,
    its cap on generation batches (0: endless), and the run's length in steps or epochs."""

    train_batch_size: int = 512
    gen_batch_size: int | None = None  # None: the train batch size, as verl's dataloader does
    n: int = 16
    max_gen_batches: int = 10
    filter: bool = True
    steps: int | None = 150  # None: no step limit (the run is counted in epochs)
    epochs: int | None = None  # with steps too, the run ends at whichever comes first
    risk: float = DEFAULT_RISK
    silent_over: float = DEFAULT_SILENT_OVER
    # Whose loop: "verl", or "SkyRL" (its filter: the generation batch is the train batch, no knob of its own).
    trainer: str = "verl"

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
                ("--steps", self.steps if self.steps is not None else 1, 1),
                ("--epochs", self.epochs if self.epochs is not None else 1, 1),
            )
            if value < low
        ]
        if self.steps is None and self.epochs is None:
            bad.append("the run needs a length: --steps or --epochs")
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
    """A trainer config file (YAML, or JSON for a TRL GRPOConfig) flattened to dotted keys, its Hydra
    ``defaults:`` list followed (:func:`read_config_sources`); ``option`` names the flag in the messages."""
    return read_config_sources(path, option)[0]


def read_config_sources(
    path: str, option: str = "--config"
) -> tuple[dict[str, Scalar], dict[str, str], list[str]]:
    """:func:`read_config`'s values, the file each key came from, and notes on ``defaults:`` entries that
    are neither beside the file nor verl's own."""
    values, sources, notes = _read_tree(Path(path), option, set())
    if not any(key in values for key in (*VERL_KEYS, *TRL_KEYS, *SKYRL_KEYS)):
        # Without one, the loop's defaults would stand in for the trainer's settings, unsaid.
        raise DataError(
            f"{option} {path}: none of the batch loop's keys is there (verl: {', '.join(VERL_KEYS)}; TRL: "
            f"{', '.join(TRL_KEYS)}; SkyRL: {', '.join(SKYRL_KEYS)})"
        )
    return values, sources, notes


def _read_tree(
    path: Path, option: str, seen: set[Path]
) -> tuple[dict[str, Scalar], dict[str, str], list[str]]:
    """One config file and the entries of its ``defaults:`` list, merged in Hydra's order."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise DataError(f"{option} {path}: {exc.strerror or exc}") from exc
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"{option} {path}: not JSON ({exc.msg}, line {exc.lineno})") from exc
        own = _flatten(data) if isinstance(data, dict) else {}
        return own, dict.fromkeys(own, str(path)), []
    own = read_yaml(text)
    entries = defaults_list(text)
    if "_self_" not in [name for _, name, _ in entries]:
        entries.append(("", "_self_", ""))  # Hydra puts the file's own keys last
    values: dict[str, Scalar] = {}
    sources: dict[str, str] = {}
    notes: list[str] = []
    for group, name, package in entries:
        if name == "_self_":
            values.update(own)
            sources.update(dict.fromkeys(own, str(path)))
            continue
        found = _entry_file(path.parent, group, name)
        if found is None or found.resolve() in seen:
            if name not in VERL_OWN and group not in VERL_GROUPS and found is None:
                where = f"{group}: {name}" if group else name
                notes.append(
                    f"{path}: defaults entry '{where}' is not beside the file; its keys take their defaults"
                )
            continue
        sub, sub_sources, sub_notes = _read_tree(found, option, {*seen, path.resolve()})
        prefix = f"{package}." if package else ""
        values.update({prefix + k: v for k, v in sub.items()})
        sources.update({prefix + k: src for k, src in sub_sources.items()})
        notes += sub_notes
    return values, sources, notes


# verl's own config groups: an entry of one of them is verl's default for it.
VERL_GROUPS = (
    "data",
    "actor",
    "ref",
    "rollout",
    "critic",
    "reward_model",
    "algorithm",
    "model",
    "npu_profile",
)


def defaults_list(text: str) -> list[tuple[str, str, str]]:
    """The entries of a top-level Hydra ``defaults:`` list as (group, name, package): ``- name`` gives
    ("", name, ""), ``- group@pkg: name`` (``override`` dropped) gives (group, name, pkg or group's path).

    >>> defaults_list("defaults:\\n  - ppo_trainer\\n  - data@data: my_data\\n  - _self_\\nx: 1\\n")
    [('', 'ppo_trainer', ''), ('data', 'my_data', 'data'), ('', '_self_', '')]
    """
    out: list[tuple[str, str, str]] = []
    inside = False
    for raw in text.splitlines():
        line = _uncomment(raw).rstrip()
        if not line.strip():
            continue
        if not line.startswith((" ", "-")):
            inside = line.split(":", 1)[0].strip() == "defaults"
            continue
        item = line.strip()
        if not inside or not item.startswith("- "):
            continue
        entry = item[2:].strip().removeprefix("override ").strip()
        if ":" in entry:
            key, _, name = entry.partition(":")
            group, _, package = key.strip().partition("@")
            out.append(
                (group.strip(), name.strip().strip("'\""), (package or group).strip().replace("/", "."))
            )
        else:
            out.append(("", entry.strip("'\""), ""))
    return out


def _entry_file(folder: Path, group: str, name: str) -> Path | None:
    """The YAML file a defaults entry names beside the config (``name.yaml``, ``group/name.yaml``)."""
    for suffix in (".yaml", ".yml"):
        candidate = folder / group / f"{name}{suffix}" if group else folder / f"{name}{suffix}"
        if candidate.is_file():
            return candidate
    return None


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


def trainer_of(values: Mapping[str, Scalar]) -> str:
    """Whose config ``values`` are, by their keys: ``SkyRL``, ``verl`` or (neither) ``TRL``."""
    if any(key in values for key in SKYRL_KEYS):
        return "SkyRL"
    return "verl" if any(key in values for key in VERL_KEYS) else "TRL"


def _skyrl_strategy(value: Scalar, source: str) -> bool:
    """SkyRL's ``dynamic_sampling.type`` as the loop: ``filter`` is verl's filtered loop, null none; its
    ``replace`` (POLARIS: a batch passes when enough of its groups differ, its silent groups then copies of
    good ones) is another loop, refused by name rather than answered as either."""
    if value is None or value in ("null", "None", ""):
        return False
    if value == "filter":
        return True
    if value == "replace":
        raise UsageError(
            f"{source}: trainer.algorithm.dynamic_sampling.type=replace (POLARIS) fills a step another way "
            'than the filter preflight models (docs/preflight.md, "Other trainers\' loops"); give '
            "type=filter or null to see those loops"
        )
    raise UsageError(
        f"{source}: trainer.algorithm.dynamic_sampling.type must be filter, replace or null, not {value!r}"
    )


def from_config(
    values: Mapping[str, Scalar],
    base: LoopSettings | None,
    source: str,
    sources: Mapping[str, str] | None = None,
) -> tuple[LoopSettings, list[str]]:
    """The loop's settings from a config's ``values`` (verl's keys, SkyRL's or TRL's), and a note per key:
    its value and where it came from (``sources``: key → file or ``key=value``; else ``source``). ``base``
    None: every key the config leaves out takes the trainer's own default (said so in the notes); else
    ``base``'s."""
    trainer = trainer_of(values)
    verl, skyrl = trainer == "verl", trainer == "SkyRL"
    keys, own = TRAINER_KEYS[trainer]
    defaults = own if base is None else {}
    found: dict[str, object] = {}
    read: list[str] = []
    for key, field in keys.items():
        given = key in values
        if not given and key not in defaults:
            continue
        raw = resolved(values, key) if given else defaults[key]
        nullable = ("steps", "epochs", "gen_batch_size", *(("filter",) if skyrl else ()))
        if raw is None and field not in nullable and key in defaults:
            raw = defaults[key]  # a null where the trainer needs a value: its default
        where = (sources or {}).get(key, source) if given else f"{trainer} default"
        value: int | bool | None
        if skyrl and field == "filter":
            value = _skyrl_strategy(raw, where)
            shown: object = "filter" if value else "null"
        else:
            value = _setting(key, raw, where)
            shown = "null" if value is None else value
        read.append(f"{key}={shown} ({where})")
        if field == "max_gen_batches" and isinstance(value, int) and value < 0:
            value = 0  # verl and SkyRL: non-positive values mean no upper limit
        if value is not None:
            found[field] = value
        elif field == "steps" and verl:
            found["steps"] = None  # total_training_steps: null, no step limit
    for key in ("algorithm.filter_groups.metric", "data.shuffle") if verl else ():
        if key in values:
            read.append(f"{key}={values[key]} ({(sources or {}).get(key, source)})")
    _as_the_trainer_runs(found, trainer, base or LoopSettings())
    return replace(base or LoopSettings(), **found), read  # type: ignore[arg-type]


def _as_the_trainer_runs(found: dict[str, object], trainer: str, base: LoopSettings) -> None:
    """``found``'s settings as the trainer's loop uses them: TRL's rollouts per device as prompts, SkyRL's
    generation batch its train batch, and each trainer's run length (its step limit and epochs)."""
    rollouts = found.pop("rollouts_per_batch", None)
    if rollouts is not None:
        n = int(found.get("n", base.n))  # type: ignore[call-overload]
        found["gen_batch_size"] = found["train_batch_size"] = max(int(rollouts) // n, 1)  # type: ignore[call-overload]
        found["filter"] = False  # TRL's GRPOTrainer keeps silent groups in the loss
    steps = found.get("steps")
    if trainer == "SkyRL":
        # One dataloader batch of train_batch_size prompts is each generation batch; max_training_steps
        # null or 0 sets no limit (``if max_training_steps and …``).
        found["trainer"] = "SkyRL"
        found["gen_batch_size"] = found.get("train_batch_size", base.train_batch_size)
        found["steps"] = steps if isinstance(steps, int) and steps > 0 else None
    elif trainer == "verl":
        if isinstance(steps, int) and steps <= 0:
            found["steps"] = 1  # verl's is_last_step holds at the first step: it runs one
        # verl ends at the first of its epochs and its steps; both stay.
    elif isinstance(steps, int) and steps > 0:
        found["epochs"] = None  # transformers: max_steps > 0 overrides num_train_epochs
    else:  # TRL's max_steps = -1: the length is in epochs
        found.pop("steps", None)
        if "epochs" in found:
            found["steps"] = None

"""A trainer's config values as its batch loop runs them: whose loop, each setting at the trainer's own
default where the config leaves it out, and the run's length as the trainer counts it.

The keys and defaults of each trainer are in :mod:`sigmatool.trainers.settings` (:data:`TRAINER_KEYS`);
docs/preflight.md ("Other trainers' loops") says what each loop does with them. Nothing here imports polars
or numpy.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from sigmatool.errors import UsageError
from sigmatool.trainers.scripts import INTERPOLATION, OVERRIDE, Scalar
from sigmatool.trainers.settings import (
    DETECTING,
    NOTED_KEYS,
    SLIME_STD_FILTER,
    TRAINER_KEYS,
    TRAINERS,
    LoopSettings,
    overrides,
    read_config_sources,
)

# Settings read as True/False, as a share, or as a filter's name; the rest are whole numbers.
BOOLEAN = ("filter", "leave_one_out", "dynamic_bs", "partial_rollout", "refill")
SHARES = ("batch_multiplier", "min_replace_ratio", "keep_lo", "keep_hi", "retire")
NULLABLE = ("steps", "epochs", "gen_batch_size", "retire")
# Settings read as text and parsed by the trainer's own rule (OpenRLHF's range, prime-rl's pools).
TEXTS = ("band", "pools")
# Whose keys decide the trainer when --trainer does not: the first whose key the config holds.
DETECTED = (
    "skyrl",
    "nemo-rl",
    "areal",
    "slime",
    "open-instruct",
    "openrlhf",
    "prime-rl",
    "pilot-commit",
    "verl",
)
# What --trainer without a config assumes of a trainer's own knobs: its defaults, said in a note.
OWN_KNOBS: dict[str, tuple[dict[str, object], str]] = {
    "nemo-rl": (
        {"leave_one_out": True},
        "NeMo-RL's leave-one-out baseline is on (its default; its DAPO recipes give "
        "grpo.use_leave_one_out_baseline=false)",
    ),
    "skyrl": ({}, "SkyRL's generation batch is its train batch"),
}
# The flags that say how the answer is judged, not how the loop runs.
JUDGED = ("risk", "silent_over")


def resolved(values: Mapping[str, Scalar], key: str) -> Scalar:
    """``values[key]``, following an interpolation ``${other.key}`` to another key of the same config."""
    value, seen = values.get(key), {key}
    while isinstance(value, str) and (ref := INTERPOLATION.fullmatch(value.strip())) and ref[1] in values:
        if ref[1] in seen:
            break
        seen.add(ref[1])
        value = values[ref[1]]
    return value


def _setting(key: str, field: str, value: Scalar, source: str) -> int | float | bool | None:
    """A config value as the loop reads it; an unresolved interpolation or a value of the wrong kind is
    refused by name."""
    if value is None:
        return None
    if isinstance(value, str) and INTERPOLATION.search(value):
        raise UsageError(
            f"{source}: {key} is {value!r}, an interpolation not resolved here; give {key}=VALUE"
        )
    if field in BOOLEAN:
        if isinstance(value, bool):
            return value
        raise UsageError(f"{source}: {key} must be True or False, not {value!r}")
    if field in TEXTS:
        return value  # type: ignore[return-value]
    if field in SHARES:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UsageError(f"{source}: {key} must be a number, not {value!r}")
        return float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
        raise UsageError(f"{source}: {key} must be a whole number, not {value!r}")
    return int(value)


def trainer_of(values: Mapping[str, Scalar], asked: str | None = None) -> str:
    """Whose config ``values`` are, by their keys (``TRL`` when no trainer's), or ``asked`` (--trainer),
    refused when the keys are another trainer's."""
    found = next(
        (t for t in (*DETECTED, "TRL") if any(key in values for key in DETECTING.get(t, TRAINER_KEYS[t][0]))),
        None,
    )
    if asked is None:
        return found or "TRL"
    if asked == "pilot-commit" and found == "verl":
        return asked  # Pilot-Commit's config is verl's keys and its own
    if found is not None and found != asked:
        keys = ", ".join(k for k in DETECTING.get(found, TRAINER_KEYS[found][0]) if k in values)
        raise UsageError(
            f"--trainer {asked}, but the settings given are {TRAINERS.get(found, found)}'s ({keys}): give "
            + ("no --trainer" if found == "TRL" else f"--trainer {found}")
            + f", or {TRAINERS[asked]}'s own keys"
        )
    return asked


def _skyrl_strategy(value: Scalar, source: str) -> tuple[bool, bool]:
    """SkyRL's ``dynamic_sampling.type`` as (filter, replace): ``filter`` is verl's filtered loop,
    ``replace`` POLARIS's (a batch passes when enough of its groups differ), null no dynamic sampling."""
    if value is None or value in ("null", "None", ""):
        return False, False
    if value in ("filter", "replace"):
        return True, value == "replace"
    raise UsageError(
        f"{source}: trainer.algorithm.dynamic_sampling.type must be filter, replace or null, not {value!r}"
    )


def _slime_filter(value: Scalar, source: str) -> tuple[bool, bool]:
    """slime's ``--dynamic-sampling-filter-path`` as (filter, fallback): none, its reward-std filter, or its
    ``_with_fallback`` variant (a refused group is kept when the batch would fall short); a filter of
    one's own is refused by name."""
    if value is None or value is False:
        return False, False
    text = str(value)
    if text.endswith("check_reward_nonzero_std"):
        return True, False
    if text.endswith("check_reward_nonzero_std_with_fallback"):
        return True, True
    raise UsageError(
        f"{source}: dynamic-sampling-filter-path={text}: preflight models slime's {SLIME_STD_FILTER} and "
        "its _with_fallback variant (or no filter); a filter of another rule fills the batch another way"
    )


def _interpreted(
    trainer: str, key: str, field: str, raw: Scalar, where: str
) -> tuple[dict[str, object], str]:
    """One config value as settings (field → value) and as the note shows it."""
    if trainer == "skyrl" and field == "filter":
        on, swap = _skyrl_strategy(raw, where)
        return {"filter": on, "replace": swap}, ("replace" if swap else "filter") if on else "null"
    if trainer == "slime" and field == "filter":
        on, fallback = _slime_filter(raw, where)
        return {"filter": on, "fallback": fallback}, str(raw) if on else "null"
    if field == "band" and raw is not None:
        return {"band": _pair(key, raw, where)}, str(raw)
    if field == "pools":
        pools = _pools(key, raw, where)
        return ({"pools": pools} if pools else {}), str(raw or "none")
    value = _setting(key, field, raw, where)
    if field == "max_gen_batches" and isinstance(value, int) and value < 0:
        return {field: 0}, str(value)  # verl and SkyRL: non-positive values mean no upper limit
    return ({field: value} if value is not None or field in NULLABLE else {}), (
        "null" if value is None else str(value)
    )


def _names(value: str, keys: Mapping[str, str], field: str) -> bool:
    """Whether ``value`` is an interpolation of the trainer's key for the setting ``field``."""
    ref = INTERPOLATION.fullmatch(value.strip())
    return ref is not None and keys.get(ref[1]) == field


def _pair(key: str, raw: Scalar, where: str) -> tuple[float, float]:
    """OpenRLHF's ``--algo.dynamic_filtering_range LO HI`` as two numbers."""
    try:
        lo, hi = (float(x) for x in str(raw).replace(",", " ").split())
    except ValueError:
        raise UsageError(f"{where}: {key} takes two numbers (LO HI), not {raw!r}") from None
    return lo, hi


def _pools(key: str, raw: Scalar, where: str) -> tuple[tuple[str, float, float], ...]:
    """prime-rl's pools, written ``name:threshold:weight,…``."""
    if not raw:
        return ()
    out = []
    for part in str(raw).split(","):
        bits = part.split(":")
        try:
            out.append((bits[0], float(bits[1]), float(bits[2])))
        except (IndexError, ValueError):
            raise UsageError(f"{where}: {key} takes NAME:MAX:WEIGHT,…, not {part!r}") from None
    return tuple(out)


def from_config(
    values: Mapping[str, Scalar],
    base: LoopSettings | None,
    source: str,
    sources: Mapping[str, str] | None = None,
    trainer: str | None = None,
    flagged: Collection[str] = (),
) -> tuple[LoopSettings, list[str]]:
    """The loop's settings from a config's ``values`` (a trainer's keys: ``trainer``'s, or whose the keys
    are), and a note per key: its value and where it came from (``sources``: key → file or ``key=value``;
    else ``source``). ``base`` None: every key the config leaves out takes the trainer's own default (said
    so in the notes); else ``base``'s. ``flagged``: the settings the command line's flags will give, so that
    a key the trainer requires may come from them."""
    trainer = trainer_of(values, trainer)
    keys, own = TRAINER_KEYS[trainer]
    defaults = own if base is None else {}
    found: dict[str, object] = {}
    read: list[str] = []
    for key, field in keys.items():
        given = key in values
        if not given and key not in defaults:
            continue
        raw = resolved(values, key) if given else defaults[key]
        if field == "gen_batch_size" and isinstance(raw, str) and _names(raw, keys, "train_batch_size"):
            raw = None  # ${data.train_batch_size} unresolved here: the train batch, whatever sets it
        if raw is None and field not in (*NULLABLE, "filter") and key in defaults:
            raw = defaults[key]  # a null where the trainer needs a value: its default
        where = (sources or {}).get(key, source) if given else f"{TRAINERS.get(trainer, trainer)} default"
        settings, shown = _interpreted(trainer, key, field, raw, where)
        found.update(settings)
        read.append(f"{key}={shown} ({where})")
    for key in NOTED_KEYS.get(trainer, ()):
        if key in values:
            read.append(f"{key}={values[key]} ({(sources or {}).get(key, source)})")
    if trainer == "areal" and base is None:  # its filter is code, not config: none unless --filter says so
        found["filter"] = False
        read.append("dynamic_filter_fn=None (AReaL default; --filter: 0 < mean reward < 1)")
    start = base or LoopSettings()
    _as_the_trainer_runs(found, trainer, start, source, flagged)
    return replace(start, **found), read  # type: ignore[arg-type]


def _as_the_trainer_runs(
    found: dict[str, object], trainer: str, base: LoopSettings, source: str, flagged: Collection[str] = ()
) -> None:
    """``found``'s settings as the trainer's loop uses them: TRL's rollouts per device as prompts, each
    trainer's generation batch, and its run length (its step limit and epochs)."""
    if trainer != "TRL":
        found["trainer"] = trainer
    steps = found.get("steps")
    if trainer == "TRL":
        _trl(found, base)
    elif trainer == "skyrl":
        # One dataloader batch of train_batch_size prompts is each generation batch; max_training_steps
        # null or 0 sets no limit (``if max_training_steps and …``).
        found["gen_batch_size"] = None  # the train batch, whatever sets it
        found["steps"] = steps if isinstance(steps, int) and steps > 0 else None
    elif trainer == "verl":
        if isinstance(steps, int) and steps <= 0:
            found["steps"] = 1  # verl's is_last_step holds at the first step: it runs one
        # verl ends at the first of its epochs and its steps; both stay.
    elif trainer == "nemo-rl":
        _nemo_rl(found, base, source)
    elif trainer == "slime":
        _slime(found, source, flagged)
    elif trainer == "open-instruct":
        _open_instruct(found, base)
    elif trainer == "openrlhf":
        found["steps"] = None  # the episodes' steps: each runs until the prompts are used up
    elif trainer == "prime-rl":
        _prime_rl(found, base, source, flagged)
    elif trainer == "pilot-commit":
        _pilot_commit(found)
    else:
        _areal(found, source)


def _trl(found: dict[str, object], base: LoopSettings) -> None:
    rollouts = found.pop("rollouts_per_batch", None)
    if rollouts is not None:
        n = int(found.get("n", base.n))  # type: ignore[call-overload]
        found["gen_batch_size"] = found["train_batch_size"] = max(int(rollouts) // n, 1)  # type: ignore[call-overload]
        found["filter"] = False  # TRL's GRPOTrainer keeps silent groups in the loss
    steps = found.get("steps")
    if isinstance(steps, int) and steps > 0:
        found["epochs"] = None  # transformers: max_steps > 0 overrides num_train_epochs
    else:  # TRL's max_steps = -1: the length is in epochs
        found.pop("steps", None)
        if "epochs" in found:
            found["steps"] = None


def _open_instruct(found: dict[str, object], base: LoopSettings) -> None:
    """open-instruct: the run is total_episodes // (T n) steps (grpo_fast.py l.1032-1034), no epochs."""
    episodes = found.pop("episodes", None)
    if episodes is not None:
        T = int(found.get("train_batch_size", base.train_batch_size))  # type: ignore[call-overload]
        n = int(found.get("n", base.n))  # type: ignore[call-overload]
        found["steps"] = int(episodes) // (T * n)  # type: ignore[call-overload]
        found["epochs"] = None


def _prime_rl(found: dict[str, object], base: LoopSettings, source: str, flagged: Collection[str]) -> None:
    """prime-rl: batch_size counts rollouts (a whole number of groups, orchestrator.py l.629-630); the run
    is max_steps steps (None: until it is stopped)."""
    rollouts = found.pop("rollouts_per_batch", None)
    if rollouts is not None:
        n = int(found.get("n", base.n))  # type: ignore[call-overload]
        if int(rollouts) % n:  # type: ignore[call-overload]
            raise UsageError(f"{source}: batch_size {rollouts} is no whole number of groups of {n}")
        found["train_batch_size"] = int(rollouts) // n  # type: ignore[call-overload]
    found["epochs"] = None
    if found.get("steps") is None and "steps" not in flagged:
        raise UsageError(
            f"{source}: max_steps is not set, so prime-rl runs until it is stopped: give --steps"
        )


def _pilot_commit(found: dict[str, object]) -> None:
    """Pilot-Commit: a pilot is kept when lower ≤ mean ≤ 1 − upper (filter_batch l.313-315); its filter is
    always on; the generation batch is the train batch unless set."""
    upper = found.pop("keep_hi", None)
    if upper is not None:
        found["keep_hi"] = 1 - float(upper)  # type: ignore[arg-type]
    found["filter"] = True


def _nemo_rl(found: dict[str, object], base: LoopSettings, source: str) -> None:
    """NeMo-RL (grpo.py l.559-573, 2801): a dynamic-sampling batch holds int(P × batch_multiplier) prompts;
    without it the multiplier must be 1 (an assert); the run ends at the first of its steps and epochs."""
    multiplier = float(found.get("batch_multiplier", base.batch_multiplier))  # type: ignore[arg-type]
    if not found.get("filter", base.filter) and multiplier != 1:
        raise UsageError(
            f"{source}: grpo.batch_multiplier={multiplier:g} without grpo.use_dynamic_sampling: NeMo-RL "
            "asserts batch_multiplier == 1 then"
        )
    found["gen_batch_size"] = None  # int(num_prompts_per_step × batch_multiplier), whatever sets them
    for field, key in (("steps", "grpo.max_num_steps"), ("epochs", "grpo.max_num_epochs")):
        value = found.get(field)
        if isinstance(value, int) and value <= 0:
            raise UsageError(f"{source}: {key}={value}: NeMo-RL's loop runs no step then")


def _slime(found: dict[str, object], source: str, flagged: Collection[str]) -> None:
    """slime: --rollout-batch-size is required; --num-rollout steps, or --num-epoch × ⌊N / T⌋ steps (the
    flags --train-batch-size, --steps and --epochs may give them)."""
    if "train_batch_size" not in found and "train_batch_size" not in flagged:
        raise UsageError(f"{source}: slime needs rollout-batch-size (its --rollout-batch-size is required)")
    # over-sampling-batch-size None: the rollout batch, whatever sets it
    if found.get("steps") is not None:
        found["epochs"] = None  # num_rollout takes precedence
    elif found.get("epochs") is None and not {"steps", "epochs"} & set(flagged):
        raise UsageError(f"{source}: slime needs num-rollout or num-epoch (one of them is required)")


def _areal(found: dict[str, object], source: str) -> None:
    """AReaL: a step takes train_dataset.batch_size accepted groups; the run is total_train_epochs ×
    ⌊N / batch⌋ steps, stopped at total_train_steps; dynamic_bs=True stops at batch_size attempts and
    trains the accepted ones, whatever their number (workflow_executor.py l.705-727)."""
    found["gen_batch_size"] = None  # a step's accepted groups: the train batch


def loop_settings(
    arguments: Sequence[str],
    config: str | None,
    flags: Mapping[str, object],
    trainer: str | None = None,
    option: str = "--config",
) -> tuple[LoopSettings, tuple[str, ...], list[str], list[str]]:
    """The loop's settings from a command line: ``arguments`` (DATA, where a ``key=value`` that is no file
    overrides a config key), ``config`` (--config), the loop's ``flags`` that were given (by setting name,
    with --risk and --silent-over always) and ``trainer`` (--trainer). With a config or overrides: the
    trainer's defaults ← the config (its defaults list followed) ← key=value ← flags; else sigmatool's
    defaults ← flags, a trainer's own knobs at its defaults. Returns the settings (checked), the arguments
    that are DATA, notes (the config's, the knobs assumed) and each setting read with where it came from.
    ``option`` names the config's flag in the messages."""
    given = [a for a in arguments if OVERRIDE.match(a) and not Path(a).exists()]
    values, sources, notes = read_config_sources(config, option) if config else ({}, {}, [])
    changed = overrides(given)
    values = {**values, **changed}
    sources = {**sources, **dict.fromkeys(changed, "command line")}
    cap = flags.get("max_gen_batches")
    if isinstance(cap, int) and cap < 0:
        flags = {**flags, "max_gen_batches": 0}  # -1, as verl, SkyRL and Pilot-Commit write an endless cap
    if "epochs" not in flags and "steps" in flags:
        flags = {**flags, "epochs": None}  # --steps alone counts the run in steps, whatever the config says
    base = None
    if not values:
        knobs, said = OWN_KNOBS.get(trainer or "verl", ({}, ""))
        base = replace(LoopSettings(), trainer=trainer or "verl", **knobs)  # type: ignore[arg-type]
        notes = [*notes, *([said] if said else [])]
    given_flags = [k for k in flags if k not in JUDGED]
    settings, read = from_config(
        values, base, config or "key=value", sources, trainer if values else None, given_flags
    )
    if "epochs" in flags and "steps" not in flags and not values:
        flags = {**flags, "steps": None}  # --epochs alone counts the run in epochs
    settings = replace(settings, **flags).checked()  # type: ignore[arg-type]
    return settings, tuple(a for a in arguments if a not in given), notes, read

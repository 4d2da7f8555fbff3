"""The settings of a trainer's batch loop, for ``preflight``: from flags, or a config of verl, NeMo-RL,
SkyRL, slime, AReaL or TRL (read as the trainer runs it by :mod:`sigmatool.trainers.loops`).

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

Each other trainer's keys and defaults are here too (:data:`TRAINER_KEYS`): SkyRL's YAML (its ``filter``
is verl's loop with the generation batch the train batch; ``replace`` passes batches one by one),
NeMo-RL's (``grpo.*``; a recipe's ``defaults:`` names the file it extends), slime's command-line arguments
(:func:`slime_arguments` reads them from a launch script) and AReaL's YAML; docs/preflight.md says how
each loop runs.

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
from dataclasses import dataclass
from pathlib import Path

from sigmatool.errors import DataError, UsageError
from sigmatool.trainers.scripts import (
    Scalar,
    hydra_overrides,
    prime_rl_toml,
    script_arguments,
)
from sigmatool.trainers.scripts import scalar as _scalar
from sigmatool.trainers.scripts import uncomment as _uncomment

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
    "trainer.algorithm.dynamic_sampling.min_replace_ratio": "min_replace_ratio",
    "trainer.epochs": "epochs",
    "trainer.max_training_steps": "steps",
}
# NeMo-RL (NVIDIA-NeMo/RL @ 7ea279ab, nemo_rl/algorithms/grpo.py l.241-289, GRPOConfig): its dynamic
# sampling draws int(num_prompts_per_step × batch_multiplier) prompts a batch and fills num_prompts_per_step
# × n rows; a recipe's ``defaults:`` names the file it extends.
NEMO_KEYS = {
    "grpo.num_prompts_per_step": "train_batch_size",
    "grpo.num_generations_per_prompt": "n",
    "grpo.use_dynamic_sampling": "filter",
    "grpo.dynamic_sampling_max_gen_batches": "max_gen_batches",
    "grpo.batch_multiplier": "batch_multiplier",
    "grpo.use_leave_one_out_baseline": "leave_one_out",
    "grpo.max_num_epochs": "epochs",
    "grpo.max_num_steps": "steps",
}
# slime (THUDM/slime @ 624b824a, slime/utils/arguments.py): command-line arguments, written without their
# dashes as keys (``rollout-batch-size=32``) or read from a launch script (``--rollout-batch-size 32``).
SLIME_KEYS = {
    "rollout-batch-size": "train_batch_size",
    "n-samples-per-prompt": "n",
    "over-sampling-batch-size": "gen_batch_size",
    "dynamic-sampling-filter-path": "filter",
    "partial-rollout": "partial_rollout",
    "num-rollout": "steps",
    "num-epoch": "epochs",
}
# AReaL (inclusionAI/AReaL @ 4aef98d8, areal/api/cli_args.py): its filter is a function passed in code
# (``dynamic_filter_fn``), so the config gives the batch and the run only.
AREAL_KEYS = {
    "train_dataset.batch_size": "train_batch_size",
    "gconfig.n_samples": "n",
    "dynamic_bs": "dynamic_bs",
    "total_train_epochs": "epochs",
    "total_train_steps": "steps",
}
# open-instruct (allenai/open-instruct @ e6c3044, open_instruct/data_loader.py l.409-452 and grpo_utils.py
# l.86): grpo_fast.py's arguments, read from a launch script (``--num_unique_prompts_rollout 64``).
OPEN_INSTRUCT_KEYS = {
    "num_unique_prompts_rollout": "train_batch_size",
    "num_samples_per_prompt_rollout": "n",
    "filter_zero_std_samples": "filter",
    "active_sampling": "refill",
    "async_steps": "async_steps",
    "no_resampling_pass_rate": "retire",
    "total_episodes": "episodes",
}
# OpenRLHF (OpenRLHF/OpenRLHF @ 3c3be62, openrlhf/cli/train_ppo_ray.py l.372-414, 562-565): its arguments.
OPENRLHF_KEYS = {
    "rollout.batch_size": "train_batch_size",
    "rollout.vllm_generate_batch_size": "gen_batch_size",
    "rollout.n_samples_per_prompt": "n",
    "algo.dynamic_filtering_enable": "filter",
    "algo.dynamic_filtering_range": "band",
    "train.num_episodes": "epochs",
    "data.max_samples": "max_samples",
}
# prime-rl (PrimeIntellect-ai/prime-rl @ 559b447, packages/prime-rl-configs/.../orchestrator.py l.164-270,
# 505-529): its TOML, flattened; the gate and the pools are read from a train source's curriculum.
PRIME_RL_KEYS = {
    "orchestrator.batch_size": "rollouts_per_batch",
    "orchestrator.group_size": "n",
    "orchestrator.max_steps": "steps",
    "orchestrator.train.filter_zero_advantages": "filter",
    "curriculum.gate": "refill",
    "curriculum.pools": "pools",
}
# Pilot-Commit (databricks/pilot-commit @ 6def20e, recipe/pc/config/pc_trainer.yaml and pc_ray_trainer.py):
# verl's keys and its own ``algorithm.*``.
PILOT_COMMIT_KEYS = {
    "data.train_batch_size": "train_batch_size",
    "data.gen_batch_size": "gen_batch_size",
    "actor_rollout_ref.rollout.n": "n",
    "algorithm.exploration.n": "pilot_n",
    "algorithm.diversity_threshold_lower": "keep_lo",
    "algorithm.diversity_threshold_upper": "keep_hi",
    "algorithm.buffer_max_off_steps": "evict",
    "algorithm.exclude_threshold_upper": "retire",
    "algorithm.max_num_gen_batches": "max_gen_batches",
    "trainer.total_epochs": "epochs",
    "trainer.total_training_steps": "steps",
}


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
    "trainer.algorithm.dynamic_sampling.min_replace_ratio": 0.3,
    "trainer.epochs": 1,
    "trainer.max_training_steps": None,
}
NEMO_DEFAULT_KEYS: dict[str, Scalar] = {  # GRPOConfig, grpo.py l.242-289 at 7ea279ab
    "grpo.num_prompts_per_step": 32,
    "grpo.num_generations_per_prompt": 16,
    "grpo.use_dynamic_sampling": False,
    "grpo.dynamic_sampling_max_gen_batches": 10,
    "grpo.batch_multiplier": 1.0,
    "grpo.use_leave_one_out_baseline": True,
    "grpo.max_num_epochs": 1,
    "grpo.max_num_steps": 1_000_000,
}
SLIME_DEFAULT_KEYS: dict[str, Scalar] = {  # arguments.py l.429-455, 608-624, 690-701 at 624b824a
    "n-samples-per-prompt": 1,
    "over-sampling-batch-size": None,  # the rollout batch size
    "dynamic-sampling-filter-path": None,  # no filter
    "partial-rollout": False,  # groups in flight at a step's end are aborted and lost
    "num-rollout": None,
    "num-epoch": None,
}
AREAL_DEFAULT_KEYS: dict[str, Scalar] = {  # cli_args.py l.166-168, 2589-2591, 2705-2713, 2867-2874
    "train_dataset.batch_size": 1,
    "gconfig.n_samples": 1,
    "dynamic_bs": False,
    "total_train_epochs": 1,
    "total_train_steps": None,
}
OPEN_INSTRUCT_DEFAULT_KEYS: dict[str, Scalar] = {  # StreamingDataLoaderConfig l.409-452, grpo_utils.py l.86
    "num_unique_prompts_rollout": 16,
    "num_samples_per_prompt_rollout": 4,
    "filter_zero_std_samples": True,
    "active_sampling": False,
    "async_steps": 8,
    "no_resampling_pass_rate": None,
    "total_episodes": 100_000,
}
OPENRLHF_DEFAULT_KEYS: dict[str, Scalar] = {  # train_ppo_ray.py l.372-414, 562-565 at 3c3be62
    "rollout.batch_size": 1024,
    "rollout.vllm_generate_batch_size": None,  # the rollout batch size (l.691-692)
    "rollout.n_samples_per_prompt": 1,
    "algo.dynamic_filtering_enable": False,
    "algo.dynamic_filtering_range": "0 1",
    "train.num_episodes": 1,
    "data.max_samples": 100_000_000,
}
PRIME_RL_DEFAULT_KEYS: dict[str, Scalar] = {  # orchestrator.py l.263-270, 505-529, 620-627 at 559b447
    "orchestrator.batch_size": 128,
    "orchestrator.group_size": 1,
    "orchestrator.max_steps": None,
    "orchestrator.train.filter_zero_advantages": True,
    "curriculum.gate": False,
    "curriculum.pools": "",
}
PILOT_COMMIT_DEFAULT_KEYS: dict[
    str, Scalar
] = {  # pc_trainer.yaml at 6def20e; verl's ppo_trainer for the rest
    "data.train_batch_size": 1024,
    "data.gen_batch_size": None,  # ${data.train_batch_size}
    "actor_rollout_ref.rollout.n": 1,
    "algorithm.exploration.n": 8,
    "algorithm.diversity_threshold_lower": 0.25,
    "algorithm.diversity_threshold_upper": 0.25,
    "algorithm.buffer_max_off_steps": 4,
    "algorithm.exclude_threshold_upper": None,
    "algorithm.max_num_gen_batches": 10,
    "trainer.total_epochs": 30,
    "trainer.total_training_steps": None,
}
# Each trainer's keys (key → setting) and their defaults, by the name trainer_of gives.
TRAINER_KEYS = {
    "verl": (VERL_KEYS, VERL_DEFAULT_KEYS),
    "nemo-rl": (NEMO_KEYS, NEMO_DEFAULT_KEYS),
    "skyrl": (SKYRL_KEYS, SKYRL_DEFAULT_KEYS),
    "slime": (SLIME_KEYS, SLIME_DEFAULT_KEYS),
    "areal": (AREAL_KEYS, AREAL_DEFAULT_KEYS),
    "open-instruct": (OPEN_INSTRUCT_KEYS, OPEN_INSTRUCT_DEFAULT_KEYS),
    "openrlhf": (OPENRLHF_KEYS, OPENRLHF_DEFAULT_KEYS),
    "prime-rl": (PRIME_RL_KEYS, PRIME_RL_DEFAULT_KEYS),
    "pilot-commit": (PILOT_COMMIT_KEYS, PILOT_COMMIT_DEFAULT_KEYS),
    "TRL": (TRL_KEYS, TRL_DEFAULT_KEYS),
}
# The keys that say a config is Pilot-Commit's (the rest of its keys are verl's).
DETECTING = {
    "pilot-commit": (
        "algorithm.exploration.n",
        "algorithm.diversity_threshold_lower",
        "algorithm.diversity_threshold_upper",
        "algorithm.exclude_threshold_upper",
        "algorithm.buffer_max_off_steps",
    )
}
# Keys read for the notes alone (the model's std is the 0/1 reward's; an unshuffled dataloader reads in order).
NOTED_KEYS = {"verl": ("algorithm.filter_groups.metric", "data.shuffle")}
# The loops --trainer names, and how the text writes each.
TRAINERS = {
    "verl": "verl",
    "nemo-rl": "NeMo-RL",
    "skyrl": "SkyRL",
    "slime": "slime",
    "areal": "AReaL",
    "open-instruct": "open-instruct",
    "openrlhf": "OpenRLHF",
    "prime-rl": "prime-rl",
    "pilot-commit": "Pilot-Commit",
}
# The loops that fill a step from a stream of prompts, with no cap and no crash.
STREAMED = ("slime", "areal")
SLIME_STD_FILTER = "slime.rollout.filter_hub.dynamic_sampling_filters.check_reward_nonzero_std"
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
    # Whose loop (a key of TRAINERS): verl's, NeMo-RL's, SkyRL's, slime's or AReaL's (docs/preflight.md).
    trainer: str = "verl"
    leave_one_out: bool = False  # NeMo-RL: the leave-one-out baseline's std decides row by row
    replace: bool = False  # SkyRL: the ``replace`` strategy (POLARIS) instead of ``filter``
    min_replace_ratio: float = 0.3  # SkyRL's replace: a batch passes with more than this share good
    batch_multiplier: float = 1.0  # NeMo-RL: a dynamic-sampling batch is int(train batch × this) prompts
    partial_rollout: bool = False  # slime: groups in flight when the batch fills resume the next step
    fallback: bool = False  # slime's _with_fallback filter: a refused group is kept when the batch is short
    dynamic_bs: bool = False  # AReaL: a step is batch_size attempts, training the accepted ones
    # open-instruct's active_sampling, prime-rl's advantage_range gate: a filtered group is replaced
    refill: bool = False
    async_steps: int = 8  # open-instruct: async_steps × T prompts in flight
    band: tuple[float, float] = (0.0, 1.0)  # OpenRLHF: a group is kept iff lo < mean reward < hi
    max_samples: int | None = None  # OpenRLHF: the dataset's first rows read (data.max_samples)
    pilot_n: int = 8  # Pilot-Commit: pilot rollouts per prompt (algorithm.exploration.n)
    keep_lo: float = 0.25  # Pilot-Commit: a pilot is kept iff keep_lo ≤ k / pilot_n ≤ keep_hi
    keep_hi: float = 0.75
    evict: int = 4  # Pilot-Commit: buffer entries older than this many steps are evicted
    pools: tuple[tuple[str, float, float], ...] = ()  # prime-rl: (name, max mean reward, weight) in order
    retire: float | None = None  # a prompt whose group scores k / n ≥ retire leaves later epochs
    recheck: float = 0.0  # a retired prompt returns with this chance at each epoch's start

    @property
    def name(self) -> str:
        """The trainer as its project writes it."""
        return TRAINERS.get(self.trainer, self.trainer)

    def key(self, field: str) -> str:
        """The trainer's own name of the setting ``field`` (a field of these settings), as its code reads it:
        the last part of its config key (verl's ``max_num_gen_batches`` for ``max_gen_batches``, slime's
        ``rollout_batch_size`` for ``train_batch_size``).

        >>> LoopSettings(trainer="nemo-rl").key("max_gen_batches")
        'dynamic_sampling_max_gen_batches'
        """
        keys = TRAINER_KEYS[self.trainer][0]
        named = [key for key, setting in keys.items() if setting == field]
        if not named:
            raise KeyError(f"{self.name} has no key for {field}")
        return named[0].rpartition(".")[2].replace("-", "_")

    def argument(self, field: str) -> str:
        """The setting ``field`` as the trainer's command line writes it (slime's ``--partial-rollout``)."""
        return "--" + self.key(field).replace("_", "-")

    @property
    def gen(self) -> int:
        """Prompts per generation batch: given, else the train batch (NeMo-RL's dynamic sampling: times its
        batch_multiplier, truncated, as ``int(num_prompts_per_step * batch_multiplier)``)."""
        if self.gen_batch_size is not None:
            return self.gen_batch_size
        if self.trainer == "nemo-rl" and self.filter:
            return max(int(self.train_batch_size * self.batch_multiplier), 1)
        return self.train_batch_size

    @property
    def group_sizes(self) -> tuple[float, ...]:
        """The group size the estimator is asked about: n (none for a single rollout, always kept)."""
        if self.trainer == "nemo-rl" and self.leave_one_out and self.n > 2:
            return (float(self.n - 1), float(self.n))  # the rows a group loses: P(k = 1 or n − 1)
        if self.needs_law:  # a band, pools or retirement read the law of k: every size up to the group's
            top = self.law_size + (1 if self.trainer == "pilot-commit" else 0)  # + 1: the commit's reward
            return tuple(float(g) for g in range(1, top + 1))
        return (float(self.n),) if self.n > 1 else ()

    @property
    def law_size(self) -> int:
        """The group whose law of k the loop reads: Pilot-Commit's pilot, else the group of n."""
        return self.pilot_n if self.trainer == "pilot-commit" else self.n

    @property
    def needs_law(self) -> bool:
        """Whether the loop reads the whole law of k (not only P(0 < k < n)): a keep band other than the
        std's, Pilot-Commit's pilots, prime-rl's pools or retirement."""
        return (
            self.trainer == "pilot-commit"
            or (self.trainer == "openrlhf" and self.band != (0.0, 1.0))
            or (self.trainer == "prime-rl" and bool(self.pools))
            or self.retire is not None
        )

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
        if self.trainer not in TRAINERS:
            bad.append(f"--trainer must be one of {', '.join(TRAINERS)}, not {self.trainer!r}")
        if not 0 <= self.min_replace_ratio < 1:
            bad.append(f"min_replace_ratio must be in [0, 1), not {self.min_replace_ratio}")
        if self.trainer in ("skyrl", "areal") and self.gen_batch_size not in (None, self.train_batch_size):
            bad.append(f"{self.name} draws its train batch: --gen-batch-size does not apply")
        bad += self._new_loops_checked()
        if self.trainer == "slime" and self.gen < self.train_batch_size:
            # slime asserts it (arguments.py l.1985-1991): a round must be able to fill the batch.
            bad.append(
                f"slime's over-sampling-batch-size ({self.gen}) must be ≥ rollout-batch-size "
                f"({self.train_batch_size})"
            )
        if bad:
            raise UsageError("; ".join(bad))
        return self

    def _new_loops_checked(self) -> list[str]:
        """The bad settings of open-instruct's, OpenRLHF's, prime-rl's and Pilot-Commit's loops, and of
        retirement, each said as the flag or the trainer says it."""
        bad = []
        if self.retire is not None and not 0 < self.retire <= 1:
            bad.append(f"--retire must be in (0, 1], not {self.retire:g}")
        if not 0 <= self.recheck <= 1:
            bad.append(f"--recheck must be in [0, 1], not {self.recheck:g}")
        if self.trainer == "pilot-commit":
            if self.pilot_n < 1:
                bad.append(f"--pilot must be ≥ 1, not {self.pilot_n}")
            if not 0 <= self.keep_lo <= self.keep_hi <= 1:
                bad.append(f"--keep LO,HI needs 0 ≤ LO ≤ HI ≤ 1, not {self.keep_lo:g},{self.keep_hi:g}")
            if self.evict < 0:
                bad.append(f"--evict must be ≥ 0, not {self.evict}")
        if self.refill and self.trainer not in ("open-instruct", "prime-rl"):
            bad.append(f"--refill is open-instruct's active_sampling or prime-rl's gate, not {self.name}'s")
        if self.pools and self.trainer != "prime-rl":
            bad.append(f"--difficulty-pools is prime-rl's DifficultyPoolSampler, not {self.name}'s")
        if self.trainer == "open-instruct" and self.filter and self.n == 1:
            # data_loader.py l.518-521: a ValueError at start-up
            bad.append(
                "open-instruct refuses filter_zero_std_samples with num_samples_per_prompt_rollout 1 (n = 1): "
                "give n > 1 or --no-filter"
            )
        if self.trainer == "openrlhf" and self.filter and self.n == 1:
            bad.append("OpenRLHF asserts n_samples_per_prompt > 1 with dynamic filtering: give n > 1")
        if self.trainer == "openrlhf" and not self.band[0] < self.band[1]:
            bad.append(
                f"OpenRLHF asserts dynamic_filtering_range lo < hi, not {self.band[0]:g} {self.band[1]:g}"
            )
        if self.trainer == "prime-rl" and self.pools and not any(w > 0 for _, _, w in self.pools):
            bad.append("--difficulty-pools: at least one pool needs a positive weight (prime-rl refuses it)")
        return bad


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
    if not any(key in values for keys, _ in TRAINER_KEYS.values() for key in keys):
        # Without one, the loop's defaults would stand in for the trainer's settings, unsaid.
        raise DataError(
            f"{option} {path}: none of the batch loop's keys is there (verl: {', '.join(VERL_KEYS)}; "
            f"NeMo-RL: grpo.num_prompts_per_step …; SkyRL: trainer.train_batch_size …; slime: "
            "--rollout-batch-size …; AReaL: train_dataset.batch_size …; TRL: num_generations …)"
        )
    return values, sources, notes


def slime_arguments(text: str) -> dict[str, Scalar]:
    """slime's command-line arguments in a launch script or a text file, as keys without their dashes.

    >>> slime_arguments("ROLLOUT_ARGS=(\\n  --rollout-batch-size 32 --n-samples-per-prompt=8 --partial-rollout\\n)")
    {'rollout-batch-size': 32, 'n-samples-per-prompt': 8, 'partial-rollout': True}
    """
    out: dict[str, Scalar] = {}
    tokens = [t for line in text.splitlines() for t in _uncomment(line).replace("\\", " ").split()]
    for i, token in enumerate(tokens):
        if not token.startswith("--") or len(token) < 3:
            continue
        key, eq, value = token[2:].partition("=")
        following = tokens[i + 1] if i + 1 < len(tokens) else "--"
        if eq:
            out[key] = _scalar(value.strip("'\""))
        elif following.startswith("--") or following in (")", "("):
            out[key] = True
        else:
            out[key] = _scalar(following.strip("'\""))
    return out


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
    if path.suffix == ".toml":  # prime-rl's rl.toml or orchestrator.toml
        own = prime_rl_toml(text, path, option)
        return own, dict.fromkeys(own, str(path)), []
    if "recipe.pc.main_pc" in text or "algorithm.exploration.n=" in text:  # a Pilot-Commit launch script
        own = hydra_overrides(text)
        return own, dict.fromkeys(own, str(path)), []
    if any(f"--{key}" in text for key in SLIME_KEYS):  # a slime launch script or arguments file
        own = slime_arguments(text)
        return own, dict.fromkeys(own, str(path)), []
    for keys in (OPEN_INSTRUCT_KEYS, OPENRLHF_KEYS):  # grpo_fast.py's or train_ppo_ray's arguments
        if any(re.search(rf"--{re.escape(key)}\b", text) for key in keys):
            own = {k: v for k, v in script_arguments(text).items() if k in keys}
            return own, dict.fromkeys(own, str(path)), []
    own = read_yaml(text)
    parent = own.pop("defaults", None)
    if isinstance(parent, str):  # NeMo-RL: ``defaults: ../../grpo_math_1B.yaml``, the file it extends
        return _extended(path, parent, own, option, seen)
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


def _extended(
    path: Path, parent: str, own: dict[str, Scalar], option: str, seen: set[Path]
) -> tuple[dict[str, Scalar], dict[str, str], list[str]]:
    """A NeMo-RL config that extends ``parent`` (a path beside it): the parent's keys, then its own
    (``nemo_rl/utils/config.py`` l.51-97, ``load_config_with_inheritance``)."""
    found = (path.parent / parent).resolve()
    if not found.is_file() or found in seen:
        note = f"{path}: the file it extends, {parent}, is not there; its keys take NeMo-RL's defaults"
        return own, dict.fromkeys(own, str(path)), [note]
    values, sources, notes = _read_tree(found, option, {*seen, path.resolve()})
    return {**values, **own}, {**sources, **dict.fromkeys(own, str(path))}, notes


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

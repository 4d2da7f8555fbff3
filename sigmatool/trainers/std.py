"""The std each trainer's GRPO advantage divides by, by default: what ``--from TRAINER`` sets ``--std`` to
when it is not given (groupsize, plan, report), and the note that says so."""

from __future__ import annotations

from dataclasses import replace

from sigmatool.options.analyses import GroupSizeOptions, GroupSizeTarget
from sigmatool.options.common import Std
from sigmatool.options.plan import PlanOptions

# The std each trainer's GRPO advantage divides by, by default (docs/trainers.md cites the code). None: a
# convention sigmatool does not model (NeMo-RL's leave-one-out std), so --std keeps its own default.
TRAINER_STD: dict[str, str | None] = {
    "verl": "bessel",  # core_algos.compute_grpo_outcome_advantage: torch.std
    "trl": "bessel",  # GRPOTrainer._generate_and_score_completions: trainer.utils.nanstd, Bessel-corrected
    "nemo-rl": None,  # algorithms/utils.calculate_baseline_and_std_per_prompt: leave-one-out by default
    "areal": "bessel",  # NormConfig.std_unbiased = True (since v0.3.4)
    "skyrl": "bessel",  # ppo_utils.compute_grpo_outcome_advantage: torch.std
    "roll": "bessel",  # utils/functionals.reward_norm: torch.std
}
TRAINER_STD_SAYS = {
    "bessel": "Bessel's std, {trainer}'s default (torch's .std()); --std population (groupsize, plan) gives "
    "the group's own",
    None: (
        "nemo-rl's default σ is a leave-one-out std (grpo.use_leave_one_out_baseline), neither convention: "
        "population is used; --std bessel is NeMo-RL's with use_leave_one_out_baseline=false"
    ),
}


def trainer_std(std: str | None, trainer: str | None, method: str = "grpo") -> tuple[str, str | None]:
    """The std convention to use, and a note when ``--from`` chose it: ``--std`` when given, else the
    trainer's default (GRPO only: Dr. GRPO divides by no std), else population.

    >>> trainer_std(None, "verl")
    ('bessel', "--from verl: σ is Bessel's std, verl's default (torch's .std()); --std population (groupsize, plan) gives the group's own")
    >>> trainer_std("population", "verl")
    ('population', None)
    """
    if std is not None:
        return std, None
    if trainer is None or trainer not in TRAINER_STD or method != "grpo":
        return Std.population.value, None
    chosen = TRAINER_STD[trainer]
    says = TRAINER_STD_SAYS[chosen].format(trainer=trainer)
    if chosen is None:
        return Std.population.value, f"--from {trainer}: {says}"
    return chosen, f"--from {trainer}: σ is {says}"


def groupsize_std(target: GroupSizeTarget, trainer: str | None) -> tuple[GroupSizeOptions, list[str]]:
    """``groupsize``'s options with the std the trainer divides by (when --std was not given), and a note
    saying so."""
    options = target.options
    std, note = trainer_std(options.std if target.std_given else None, trainer, options.method)
    return replace(options, std=std), [note] if note else []


def plan_std(request: PlanOptions, trainer: str | None) -> tuple[PlanOptions, list[str]]:
    """The plan's request with the trainer's std convention when --std was not given, and a note saying so."""
    if request.std_given:
        return request, []
    std, note = trainer_std(None, trainer, request.method)
    return replace(request, std=std, std_given=True), [note] if note else []

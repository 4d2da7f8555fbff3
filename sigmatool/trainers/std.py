"""The std each trainer's GRPO advantage divides by, by default: what ``--from TRAINER`` sets ``--std`` to
when it is not given (groupsize, plan, report), and the note that says so."""

from __future__ import annotations

from sigmatool.options.common import Std

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

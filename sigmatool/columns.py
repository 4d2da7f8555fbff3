"""The analyses' output columns, each declared once: its name, its label for people and its unit.

The table view (:mod:`sigmatool.render.table`) heads its columns with the labels and shows shares as
percentages; the report (:mod:`sigmatool.report.page`) does the same from the same declarations; data
formats keep the snake_case names at full precision. A ``\\n`` in a label is where the table view breaks
its header; everywhere else the label reads as one line (:attr:`Column.heading`). A ``short`` label is the
table view's header where the label would make an 80-column table wider than the terminal; the view's
footnotes say what it stands for.

Units: ``share`` is a fraction in [0, 1], shown as a percentage; ``pass rate`` a p, shown exactly;
``G`` a group size; ``prompts`` a (weighted) count of prompts; ``groups`` a count of groups; ``""`` a plain
number.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

SHARE = "share"
PASS_RATE = "pass rate"


@dataclass(frozen=True)
class Column:
    """One output column: ``name`` in every format, ``label`` for people, ``unit`` (see the module), and
    ``short``, the table view's header when it differs from the label."""

    name: str
    label: str
    unit: str = ""
    short: str = ""

    @property
    def heading(self) -> str:
        """The label on one line: ``"unreach-\\nable"`` → ``"unreachable"``, ``"G\\nmedian"`` → ``"G median"``."""
        return " ".join(self.label.replace("-\n", "").split())

    @property
    def percent(self) -> bool:
        return self.unit == SHARE


def _declare(*columns: Column) -> dict[str, Column]:
    named = {c.name: c for c in columns}
    if len(named) != len(columns):
        raise AssertionError("an output column is declared twice")
    return named


COLUMNS = _declare(
    # Identify a row.
    Column("column", "column"),  # the pass-rate column, with several --col
    Column("G", "G", "G"),
    Column("segment", "segment"),
    Column("p_lo", "p lo", PASS_RATE),
    Column("p_hi", "p hi", PASS_RATE),
    Column("p", "p", PASS_RATE),
    Column("prompts", "prompts", "prompts"),
    # What made a row's numbers: plug-in, unbiased, prior …, or not identified (docs/prior.md).
    Column("estimator", "estimator"),
    # silent
    Column("silent_rate", "silent groups", SHARE),
    Column("all_right_rate", "all right", SHARE),
    Column("all_wrong_rate", "all wrong", SHARE),
    Column("always_silent_share", "always\nsilent", SHARE),
    Column("pass_at", "pass@K\ncredit"),
    Column("pass_at_k", "pass@K", SHARE),
    Column("dapo_draws_per_group", "DAPO draws\nper group", "groups", "DAPO\ndraws"),
    Column("dapo_draws_per_group_learnable", "…learnable\nprompts only", "groups", "…learn-\nable"),
    Column("dapo_unfilled_rate", "DAPO\nunfilled", SHARE),
    # budget
    Column("prompt_share", "prompts\nshare", SHARE),
    Column("grpo_share", "GRPO\n(= DAPO)", SHARE),
    Column("drgrpo_share", "Dr. GRPO", SHARE),
    Column("grpo_over_drgrpo", "GRPO ÷\nDr. GRPO"),
    # groupsize
    Column("unreachable", "unreach-\nable", "prompts", "out of\nreach"),
    Column("not_identified", "not\nidentified", "prompts", "not\nident."),
    Column("g_min", "G\nmin", "G"),
    Column("g_median", "G\nmedian", "G"),
    Column("g_p90", "G\np90", "G"),
    Column("g_max", "G\nmax", "G"),
    Column("mean_rollouts_schedule", "mean G\nschedule", "G"),
    Column("uniform_g_needed", "uniform G\nneeded", "G"),
    Column("savings", "savings\n×"),
    Column("share_at_target_uniform", "at target\nuniform G", SHARE, "at\ntarget"),
    Column("g_median_law", "law G\nmedian", "G"),
    Column("g_p90_law", "law G\np90", "G"),
    # track, per step and per run
    Column("mean_group_size", "mean G", "G"),
    Column("min_group_size", "min G", "G"),
    Column("max_group_size", "max G", "G"),
    Column("mean_reward", "mean reward", SHARE),
    Column("silent_fraction", "silent", SHARE),
    Column("all_right_fraction", "all right", SHARE),
    Column("all_wrong_fraction", "all wrong", SHARE),
    Column("compared_groups", "compared groups", "groups"),
    Column("compared_silent_fraction", "silent (compared)", SHARE),
    Column("expected_silent_fraction", "expected silent", SHARE),
    Column("silent_z", "z"),
    Column("expected_mean_reward", "expected mean reward", SHARE),
    Column("expected_all_right_fraction", "expected all right", SHARE),
    Column("expected_all_wrong_fraction", "expected all wrong", SHARE),
    Column("reward_p", "reward p"),
    Column("all_right_p", "all right p"),
    Column("all_wrong_p", "all wrong p"),
    Column("mean_bias", "mean bias", SHARE),
    Column("min_gap", "min gap", SHARE),
    # track's figure: measured against expected silent share per step
    Column("measured_silent", "measured silent", SHARE),
    Column("expected_silent", "expected silent", SHARE),
    Column("expected_silent_lo", "expected silent\nlow", SHARE),
    Column("expected_silent_hi", "expected silent\nhigh", SHARE),
    # simulate, per method (and with --plan, per strategy)
    Column("observed_silent", "silent\nobserved", SHARE),
    Column("predicted_silent", "silent\npredicted", SHARE),
    Column("mean_observed_silent", "mean observed silent", SHARE, "mean\nsilent"),
    Column("final_observed_silent", "final observed silent", SHARE, "final\nsilent"),
    Column("q1_mean_p", "q1 mean p\n(hardest)", PASS_RATE),
    Column("silent_r2", "silent R²"),
    Column("start_hardest_quartile_mean_p", "hardest ¼\nstart p", PASS_RATE),
    Column("final_hardest_quartile_mean_p", "hardest ¼\nfinal p", PASS_RATE),
    Column("samples_vs_grpo", "samples\n÷ GRPO's"),
    Column("samples_vs_uniform", "samples\n÷ uniform's"),
    Column("extreme_share_measured", "extreme share\nmeasured", SHARE, "extreme\nmeasured"),
    Column("extreme_share_predicted", "extreme share\npredicted", SHARE, "extreme\npredicted"),
    Column("uniform_G", "uniform G", "G"),
    # plan, per strategy (and with --distribution, per group size)
    Column("objective_vs_plan", "÷ plan"),
    Column("plan_gain", "plan gain", SHARE),
    Column("expected_silent_rate", "silent groups", SHARE),
    Column("silent_rollout_share", "silent rollouts", SHARE),
    Column("extreme_gradient_share", "extreme share", SHARE),
    Column("rollouts_used", "rollouts used", "prompts"),
    Column("prompts_kept", "kept", "prompts"),
    Column("prompts_left_out", "left out", "prompts"),
    Column("group_size", "G", "G"),
    # preflight: the loop's settings, then what they give
    Column("train_batch_size", "train\nbatch size"),
    Column("gen_batch_size", "gen\nbatch size"),
    Column("n", "n", "G"),
    Column("max_gen_batches", "max gen\nbatches"),
    Column("filter", "filter"),
    Column("steps", "steps"),
    Column("epochs", "epochs"),
    Column("keep_rate", "keep\nrate", SHARE),
    Column("expected_gen_batches", "expected\ngen batches", "", "gen\nbatches"),
    Column("p_crash_step", "p crash\nstep"),
    Column("p_crash_run", "p crash\nrun"),
    Column("rollouts_generated", "rollouts\ngenerated"),
    Column("rollouts_trained", "rollouts\ntrained"),
    Column("share_trained", "share\ntrained", SHARE),
    Column("min_safe_gen_batch_size", "min safe gen\nbatch size", "", "safe gen\nbatch size"),
    Column("min_safe_max_gen_batches", "min safe max\ngen batches", "", "safe max\ngen batches"),
    Column("p_batch_fails", "p batch\nfails"),
    Column("copied_share", "copied\nshare", SHARE),
    Column("prompts_per_step", "prompts\nper step", "prompts"),
    Column("data_passes", "data\npasses"),
    Column("rollouts_aborted", "rollouts\naborted"),
    Column("silent_share_mean", "silent\nshare mean", SHARE),
    Column("silent_over", "silent\nover"),
    Column("p_silent_over", "p silent\nover", SHARE),
    Column("lost_token_mean", "lost\ntoken mean", SHARE),
    Column("lost_seq_mean_token_mean", "lost seq mean\ntoken mean", SHARE),
    Column("lost_seq_mean_token_sum", "lost seq mean\ntoken sum", SHARE),
    # curriculum, per step
    Column("step", "step"),
    Column("mean", "μ", PASS_RATE),
    Column("pass_rate", "mean p", PASS_RATE),
    Column("grpo_signal", "GRPO\nsignal"),
    Column("drgrpo_signal", "Dr. GRPO\nsignal"),
    Column("effective_prompts", "effective\nprompts", "prompts"),
    Column("repeat_rate", "drawn\nbefore", SHARE),
    # verifiers (docs/verifiers.md): --denoise, --invalid, --resolution, graders
    Column("measured_silent_rate", "silent\nas read", SHARE),
    Column("pass_rate_mean", "true\nmean p", PASS_RATE),
    Column("pass_rate_mean_lo", "true mean p\nlow", PASS_RATE),
    Column("pass_rate_mean_hi", "true mean p\nhigh", PASS_RATE),
    Column("invalid_rollouts", "invalid\nrollouts"),
    Column("invalid_share", "invalid\nshare", SHARE),
    Column("silent_rate_skip", "silent\nskip", SHARE),
    Column("silent_rate_mask", "silent\nmask", SHARE),
    Column("silent_rate_zero", "silent\nzero", SHARE),
    Column("exact_tie_rate", "exact\nties", SHARE),
    Column("near_tie_rate", "near\nties", SHARE),
    Column("exact_tie_fraction", "exact\nties", SHARE),
    Column("near_tie_fraction", "near\nties", SHARE),
    Column("agree_share", "agree", SHARE),
    Column("mcnemar_p", "McNemar\np"),
    Column("silent_rate_a", "silent\nunder A", SHARE),
    Column("silent_rate_b", "silent\nunder B", SHARE),
    Column("silent_a_not_b", "silent A\nnot B", SHARE),
    Column("silent_b_not_a", "silent B\nnot A", SHARE),
)


def column(name: str) -> Column:
    """The declaration of an output column; an undeclared one is labelled by its name."""
    return COLUMNS.get(name) or Column(name, name.replace("_", " "))


def labels(names: Iterable[str]) -> dict[str, str]:
    """The table view's header of each declared column among ``names``: its short label, else its label."""
    return {n: COLUMNS[n].short or COLUMNS[n].label for n in names if n in COLUMNS}


def percent(names: Iterable[str]) -> tuple[str, ...]:
    """Those of ``names`` that are shares, shown as percentages."""
    return tuple(n for n in names if n in COLUMNS and COLUMNS[n].percent)

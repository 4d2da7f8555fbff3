"""Curriculum: what a difficulty schedule does to each step of a run, predicted before the run.

A schedule (:mod:`.schedule`) gives each prompt a weight at each step from its pass rate; a step draws B
distinct prompts with inclusion probabilities π_i = min(1, c w_i), Σ π_i = B (:mod:`.sampling`), and each
prompt's group of G answers is silent with probability ``P_silent(p_i, G)`` under the run's estimator. So
each step's figures are exact expectations ``Σ_i π_i f_i / B`` of per-prompt quantities f: the pass rate,
the silent, all-right and all-wrong probabilities, GRPO's ``E[σ]`` and Dr. GRPO's ``E[σ²]`` per group
(as ``budget`` defines them). DAPO's draws per kept group are ``1 / (1 − silent_rate)`` (its redraws come
from the same step's sampler). ``effective_prompts`` is ``B² / Σ π_i²``, the number of equally likely
prompts that would spread a step as widely; ``repeat_rate`` the expected share of a step's prompts already
drawn at an earlier step (steps drawn independently). Pass rates do not move in this model: ``simulate``
follows them as training moves them.

The table is made in :mod:`.steps`; the answer and its views are in :mod:`.result`.

Columns of the per-step table (:data:`COLUMNS`): ``step``, ``mean`` (the Gaussian's μ, gaussian only),
``pass_rate``, ``silent_rate``, ``all_right_rate``, ``all_wrong_rate``, ``dapo_draws_per_group``,
``grpo_signal``, ``drgrpo_signal``, ``effective_prompts``, ``repeat_rate``.
"""

from __future__ import annotations

from sigmatool.curriculum.result import HIDDEN, SHOWN_ROWS, CurriculumResult, Dry, headline, shown_rows
from sigmatool.curriculum.steps import COLUMNS, QUANTITIES, RATES, analyse, steps_of, values

__all__ = [
    "COLUMNS",
    "HIDDEN",
    "QUANTITIES",
    "RATES",
    "SHOWN_ROWS",
    "CurriculumResult",
    "Dry",
    "analyse",
    "headline",
    "shown_rows",
    "steps_of",
    "values",
]

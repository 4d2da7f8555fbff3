"""The controlled training run of docs/theory.md §6: one-parameter Bernoulli-logit prompts trained by each rule.

Each prompt is a policy ``p = sigmoid(θ)`` whose score is ``y − p``, so ``s̄₊ − s̄₋ = 1`` and one step moves θ
by exactly ``lr · gain``: ``σ`` (GRPO), ``σ²`` (Dr. GRPO), or ``σ`` of the first non-silent group out of up to
T draws (DAPO; 0 when all T are silent), with ``σ = sqrt(k (G − k)) / G`` and ``k ~ Binomial(G, p)``.
The start population is drawn in :mod:`.start`, the steps are taken in :mod:`.dynamics`; :mod:`.run` runs it,
:mod:`.result` holds its answer and table view; :mod:`.planned` trains at a rollout plan's group sizes against
uniform G.

Randomness: ``np.random.SeedSequence(seed)`` is spawned into fixed streams (PCG64): one samples the start
population, one per method runs it, one per method measures its gradient shares. A method's stream does
not depend on which other methods run, so ``--methods dapo`` reproduces the DAPO rows of the full run.

Trace columns (one row per step and method, step-major): ``step``, ``method``, ``observed_silent`` (share
of the step's first groups that were silent), ``predicted_silent`` (mean ``P_silent(p, G)`` at the p before
the draw), ``mean_p``, ``q1_mean_p`` … ``q4_mean_p`` (after the step; quartiles of the start p, q1 the
hardest), ``samples_drawn`` (answers sampled in this step: G × groups drawn).

Summary columns (one row per method): ``method``, ``silent_r2``, ``start_mean_p``, ``final_mean_p``,
``start_hardest_quartile_mean_p``, ``final_hardest_quartile_mean_p``, ``samples_drawn`` (whole run),
``samples_vs_grpo``, ``extreme_share_measured``, ``extreme_share_predicted``.
"""

from __future__ import annotations

from sigmatool.simulate.dynamics import QUARTILES, TRACE_COLUMNS
from sigmatool.simulate.result import LABELS, SimulationRun, headline, view
from sigmatool.simulate.run import FROM_START, PROGRESS_WORK, SUMMARY_COLUMNS, planned_sizes, simulate
from sigmatool.simulate.start import BETA_MIX, CLIP, Start, start_population

__all__ = [
    "BETA_MIX",
    "CLIP",
    "FROM_START",
    "LABELS",
    "PROGRESS_WORK",
    "QUARTILES",
    "SUMMARY_COLUMNS",
    "TRACE_COLUMNS",
    "SimulationRun",
    "Start",
    "headline",
    "planned_sizes",
    "simulate",
    "start_population",
    "view",
]

"""Group size: the smallest G at which each prompt reaches a target fidelity, and what a per-prompt schedule saves.

Fidelity is the share of the large-group update that a group of G answers realises (docs/theory.md §3–4):
GRPO ``φ(G, p) = E[σ](p, G) / sqrt(p (1 − p))`` (times ``sqrt((G − 1)/G)`` with ``std="bessel"``), Dr. GRPO
``1 − 1/G`` at every p. A prompt's group size is the smallest integer G ≥ ``min_G`` with ``φ(G, p) ≥ φ*``
(and, with ``max_silent``, ``P_silent(p, G) ≤ S``: the larger of the two answers). A prompt is
*unreachable* when p̂ ∈ {0, 1} (no finite G gives it a signal) or when its answer exceeds ``max_G``; it is
counted, never given a number.

Columns of the summary, in order: [--by columns], ``segment``, ``p_lo``, ``p_hi``, ``prompts``,
``unreachable``, ``not_identified``, ``g_min``, ``g_median``, ``g_p90``, ``g_max``, ``mean_rollouts_schedule``,
``uniform_g_needed``, ``savings``, ``share_at_target_uniform``.

- ``segment`` is ``all`` (p_lo 0, p_hi 1) and then ``bin`` (``p_lo ≤ p < p_hi``, the last bin closed; every
  bin appears, an empty one with ``prompts`` 0 and nulls), per ``--by`` group.
- ``prompts``, ``unreachable`` and ``not_identified`` are summed weights (prompt counts without
  ``--weight-col``), of the histogram's dtype (whole numbers unless the weights are fractional).
- ``g_min``, ``g_max`` and the weighted percentiles are over the segment's reachable prompts, each weighted
  by its ``prompts``: the q-percentile is the smallest G whose weighted CDF ``Σ_{G_i ≤ G} w_i / Σ w_i`` is
  ≥ q (``g_median``: q = 0.5, ``g_p90``: q = 0.9). All are null when no prompt of the segment is reachable.
- ``mean_rollouts_schedule`` is the weighted mean G over reachable prompts: rollouts per prompt under the
  per-prompt schedule. ``uniform_g_needed`` is the smallest uniform G that brings every reachable prompt
  to the target; fidelity rises with G, so it is ``g_max``. ``savings`` = ``uniform_g_needed`` /
  ``mean_rollouts_schedule`` (uniform rollouts ÷ schedule rollouts).
- ``share_at_target_uniform`` is the weighted share of reachable prompts that the uniform G of ``uniform``
  (``--uniform``) already brings to the target, with the silent constraint if given.
- With ``law`` (``--law``) two more columns follow: ``g_median_law`` and ``g_p90_law``, the same weighted
  percentiles of the closed-form law over the same reachable prompts.

Per-prompt columns: [--by columns], ``id``, ``p``, ``group_size`` (null when unreachable),
[``group_size_law``], ``fidelity_at_group_size``, ``silent_at_group_size`` (both null when unreachable),
``reachable``. ``group_size_law`` is ``⌈1/(8 ε p (1 − p))⌉`` with ε = 1 − φ* (rounded *up*, after a
1e-9 relative allowance so that the binary rounding of 1 − 0.9 does not turn 5 into 6); null at
p ∈ {0, 1}. It is the population-std law of the paper, also when ``std="bessel"``.

Counts k of n with no prior named follow the one rule of each cell (docs/prior.md): a size G ≤ n is decided at
p̂ (a group drawn from the logged answers varies less than a fresh one, so the unbiased device would size too
small); a prompt no G ≤ n brings to the target is sized beyond n by the posterior under the NPMLE prior of
its --by group where the group identifies one, else it is *not identified* (``not_identified``; never a
number). The table is then keyed by (--by columns, k, n) and says what sized each row (``sized_by``).

Under a prior (``group_size_table(..., prior=)``) the group size is that of the posterior given (k, n)
(docs/theory.md §7): the table is keyed by (--by columns, k, n), p̂ ∈ {0, 1} is reachable wherever the
posterior puts p inside (0, 1), fidelity and silent rate are posterior means, and ``--law`` does not apply.
"""

from __future__ import annotations

from sigmatool.groupsize.curve import GroupSizeCurve, curve, groupsize_curve, interior_span
from sigmatool.groupsize.sizes import fidelity_at, group_sizes, law_group_sizes
from sigmatool.groupsize.summary import (
    COLUMNS,
    LAW_COLUMNS,
    GroupSizeResult,
    analyse,
    footer,
    headline,
    plotted,
    summarize,
    summarize_sized,
    summary_columns,
)
from sigmatool.groupsize.table import group_size_table, per_prompt, sized_rows, table_keys
from sigmatool.options import GroupSizeOptions

__all__ = [
    "COLUMNS",
    "LAW_COLUMNS",
    "GroupSizeCurve",
    "GroupSizeOptions",
    "GroupSizeResult",
    "analyse",
    "curve",
    "fidelity_at",
    "footer",
    "group_size_table",
    "group_sizes",
    "groupsize_curve",
    "headline",
    "interior_span",
    "law_group_sizes",
    "per_prompt",
    "plotted",
    "sized_rows",
    "summarize",
    "summarize_sized",
    "summary_columns",
    "table_keys",
]

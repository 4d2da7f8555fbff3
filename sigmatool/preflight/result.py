"""What ``preflight`` shows: :class:`PreflightResult` (the summary row, the step, the curve) with its table
view, figure and warnings, and :class:`PreflightColumns`, the loop on several pass-rate columns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import polars as pl

from sigmatool.columns import labels, percent
from sigmatool.options import COLUMN
from sigmatool.preflight.model import Step
from sigmatool.preflight.words import sentence
from sigmatool.render import View, also_in_data
from sigmatool.trainers.settings import STREAMED, LoopSettings

if TYPE_CHECKING:
    from sigmatool.figures.plot import Plot

# The settings, on a line above the table; then the figures the table shows, with and without the filter
# (at most 80 columns wide: share_trained gives rollouts_generated, and the rest is in the data formats).
GIVEN = ("train_batch_size", "gen_batch_size", "n", "max_gen_batches", "filter", "steps", "epochs", "prompts")
SHOWN = (
    "keep_rate",
    "expected_gen_batches",
    "p_crash_run",
    "rollouts_trained",
    "share_trained",
    "min_safe_gen_batch_size",
    "min_safe_max_gen_batches",
)
PLAIN_SHOWN = ("keep_rate", "silent_share_mean", "silent_over", "p_silent_over", "lost_token_mean")


def headline(result: PreflightResult) -> str:
    """The sentence a person acts on (:func:`sigmatool.preflight.words.sentence`)."""
    return sentence(result.summary.row(0, named=True), result.settings)


@dataclass(frozen=True)
class PreflightResult:
    """What ``preflight`` shows: the summary row, the step it describes, and the curve ``--plot`` draws."""

    summary: pl.DataFrame
    settings: LoopSettings
    step: Step
    estimator: str
    curve: pl.DataFrame | None = None
    trust: tuple[str, ...] = ()  # what the headline says of the numbers' trust, for every format
    epochs: pl.DataFrame | None = None  # --retire: one row per epoch (sigmatool.preflight.retire)

    def frame(self) -> pl.DataFrame:
        """The summary row; with --retire, one row per epoch, the summary's columns repeated on each."""
        if self.epochs is None:
            return self.summary
        return self.summary.join(self.epochs, how="cross")

    def view(self) -> View:
        """The table view: the headline, the settings on one line, the figures a person acts on in one row (the
        rest named in a footnote), shares as percentages, notes on what is assumed."""
        names = self.frame().columns
        st = self.settings
        shown = loop_shown(st) or (SHOWN if st.filter else PLAIN_SHOWN)
        if self.epochs is not None:
            shown = ("epoch", "prompts_start", "retired", "steps_in_epoch", "keep_rate")
        hidden = [c for c in names if c not in GIVEN and c not in shown]
        footer = [
            f"{self.estimator} keep probabilities 1 − P_silent(p, n); prompts sampled with replacement "
            "(variance_ratio_without_replacement: the shuffled dataloader's correction, docs/preflight.md)."
        ]
        if st.trainer in REFILLED_SHOWN and (st.filter or st.trainer == "pilot-commit"):
            footer = [
                f"{self.estimator} keep probabilities; prompts drawn with replacement, each group kept on its "
                f"own ({st.name}'s loop: docs/preflight.md).",
                "prompts per step, rollouts trained: expected per step; p crash run: over the whole run",
            ]
        elif st.filter and st.trainer in STREAMED:
            footer = [
                f"{self.estimator} keep probabilities; prompts drawn with replacement, groups finishing in an "
                "order that does not depend on their rewards (docs/preflight.md).",
                "prompts per step, rollouts trained: expected per step; data passes: the run's prompts ÷ the "
                "dataset's; no cap and no crash in this loop",
            ]
        elif st.filter:
            footer.append(
                "gen batches, rollouts trained: expected per step; safe gen batch size, safe max gen batches: the smallest that keep "
                f"the run's crash chance under {self.settings.risk:.0%} (--risk)"
            )
        else:
            footer.append(
                "lost token mean: the update's share in silent rows under token-mean, responses of equal length "
                "assumed; the lost_seq_* columns, the other aggregations, equal it then."
            )
        frame = self.frame()
        said = [c for c in hidden if frame[c].null_count() < frame.height]  # not all empty
        footer.append(also_in_data(_batches(said)))
        return View(
            headline=headline(self),
            footer=footer,
            percent=percent(names),
            labels=labels(names),
            hide=hidden,
            given=GIVEN,
        )

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot | None:
        """P(crash over the run) against the oversampling multiplier, and the wasted share of generation
        (None: the loop has no such curve)."""
        if self.curve is None:
            return None
        from sigmatool.figures.preflight import preflight_figure

        return preflight_figure(
            self.curve, self.settings, source=source, estimator=self.estimator, caption=caption, style=style
        )

    def warnings(self) -> tuple[str, ...]:
        return self.trust


@dataclass(frozen=True)
class PreflightColumns:
    """``preflight`` on several pass-rate columns: one loop each, shown side by side (no figure)."""

    results: Mapping[str, PreflightResult]

    def frame(self) -> pl.DataFrame:
        """The summaries, one row per column, keyed by it."""
        keyed = [
            r.summary.select(pl.lit(c, dtype=pl.String).alias(COLUMN), pl.all())
            for c, r in self.results.items()
        ]
        return pl.concat(keyed, how="vertical_relaxed")

    def view(self) -> View:
        """Each column's headline, named, then the summaries side by side."""
        first = next(iter(self.results.values())).view()
        lines = [f"{column}: {headline(result)}" for column, result in self.results.items()]
        return replace(first, headline="\n".join(lines), keys=(COLUMN,))

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot | None:
        return None

    def warnings(self) -> tuple[str, ...]:
        """Each column's warnings, named by it."""
        return tuple(f"{c}: {line}" for c, result in self.results.items() for line in result.warnings())


def _batches(names: list[str]) -> list[str]:
    """``names`` with ``p_batches_1`` … ``p_batches_M`` written as one range."""
    batches = [c for c in names if c.startswith("p_batches_")]
    if len(batches) < 3:
        return names
    rest = [c for c in names if c not in batches]
    return [*rest, f"{batches[0]} … {batches[-1]}"]


# The figures the table shows for a loop whose columns differ from verl's (80 columns wide at most).
STREAMED_SHOWN = ("keep_rate", "prompts_per_step", "data_passes", "rollouts_trained", "share_trained")
REPLACE_SHOWN = (
    "keep_rate",
    "expected_gen_batches",
    "p_crash_run",
    "p_batch_fails",
    "copied_share",
    "share_trained",
    "min_safe_max_gen_batches",
)


REFILLED_SHOWN = {
    "open-instruct": ("keep_rate", "prompts_per_step", "rollouts_trained", "share_trained", "expected_steps"),
    "openrlhf": ("keep_rate", "prompts_per_step", "steps_per_episode", "rollouts_trained", "share_trained"),
    "prime-rl": ("keep_rate", "prompts_per_step", "rollouts_trained", "share_trained", "p_crash_run"),
    "pilot-commit": (
        "keep_rate",
        "expected_gen_batches",
        "p_crash_first_step",
        "p_crash_run",
        "rollouts_trained",
        "share_trained",
    ),
}


def loop_shown(st: LoopSettings) -> tuple[str, ...]:
    """The columns the table view shows for this loop, or () for verl's."""
    if st.trainer == "pilot-commit":
        return REFILLED_SHOWN[st.trainer]
    if not st.filter:
        return ()
    if st.trainer in REFILLED_SHOWN:
        return REFILLED_SHOWN[st.trainer]
    if st.trainer == "slime":
        return (*STREAMED_SHOWN, "rollouts_aborted")
    if st.trainer == "areal":
        return STREAMED_SHOWN
    return REPLACE_SHOWN if st.replace else ()

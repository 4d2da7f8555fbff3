"""One run: the input read once, its options checked once, and the one valuation every answer comes from.

Every command and the report analyse through a :class:`Run`, and this module is the only place one is
made (:meth:`Run.of`, from what :mod:`sigmatool.load` read). A run holds what was loaded (a histogram of
distinct values, or the streamed rows of many distinct pass rates), the ``--by`` groups, the estimator, what
is asked beyond the samples, the grader, how the input was read and what reading it noted, and builds the
valuation (:func:`sigmatool.estimators.valuation`) once, here and nowhere else. The default values each
(prompt, G) cell by one rule (:class:`sigmatool.estimators.PerCell`), so no number depends on the other G
asked, on the command that prints it or on other groups' rows.

A variant (one pass-rate column of several) is the whole run with its values replaced
(:func:`dataclasses.replace`): every other field, the grader included, comes along, and its valuation is
built afresh. Its methods return the analyses' results; views and figures only format them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import polars as pl

from sigmatool.load.loaded import Values
from sigmatool.options import BeyondOptions
from sigmatool.options.verifier import Measured

if TYPE_CHECKING:
    from sigmatool.budget import BudgetResult
    from sigmatool.curriculum import CurriculumResult
    from sigmatool.estimators import Valuation
    from sigmatool.groupsize.curve import GroupSizeCurve
    from sigmatool.groupsize.summary import GroupSizeResult
    from sigmatool.kernels.grader import Grader
    from sigmatool.load import Dataset, Histogram, Rows
    from sigmatool.options import BudgetOptions, GroupSizeOptions, PlotOptions, SilentOptions
    from sigmatool.options.curriculum import CurriculumOptions
    from sigmatool.options.plan import PlanOptions
    from sigmatool.plan.groups import Plans
    from sigmatool.preflight import PreflightResult
    from sigmatool.silent import SilentCurve, SilentResult
    from sigmatool.trainers.settings import LoopSettings


@dataclass(frozen=True, eq=False)
class Run:
    """What was read (``values``: a histogram, or streamed rows), by which ``--by`` columns, with which
    estimator and ``beyond`` options; ``sizes`` the G asked (the unbiased estimator must exist at each),
    ``dataset`` the loaded input (for per-prompt rows), ``totals`` what the pass that checked streamed rows
    summed, ``grader`` --grader-error's FP and FN, ``pass_at`` the K of the pass@K credit the trainer trains on
    (--pass-at; 1: each answer's own reward), ``reading`` the headline's first lines where the input
    could be misread, ``notes`` what reading it noted, ``label`` its name in a report, ``denoise`` the
    verifier the counts were graded by (--denoise: every valuation reads them back to the true p)."""

    values: Values
    by: tuple[str, ...] = ()
    estimator: str = "auto"
    beyond: BeyondOptions = field(default_factory=BeyondOptions)
    sizes: tuple[float, ...] = ()
    dataset: Dataset | None = None
    totals: pl.DataFrame | None = None
    grader: tuple[float, float] | None = None
    reading: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    label: str = ""
    pass_at: int = 1
    credits: tuple[int, ...] = ()  # --pass-at's list (silent, budget): one answer per K, stacked
    denoise: Measured | None = None
    as_read: Values | None = None  # with --denoise, the values as read (their rates not mapped back)
    # The valuations, built on first use: made afresh (never copied) for each variant of the run, but for
    # the variants of another credit (:meth:`passing`), which share the first, the one every other reads.
    _val: list[Valuation] = field(default_factory=list, init=False, repr=False)

    @classmethod
    def of(
        cls,
        loaded: Histogram | Rows,
        by: Sequence[str] = (),
        estimator: str = "auto",
        beyond: BeyondOptions | None = None,
        *,
        sizes: Sequence[float] = (),
        grader: tuple[float, float] | None = None,
        label: str = "",
        pass_at: Sequence[int] = (),
        denoise: Measured | None = None,
    ) -> Run:
        """The run of what :mod:`sigmatool.load` read, its options checked against it (a prior, bounds or
        an interval need counts): the one place a run is made."""
        from sigmatool.load import Histogram

        beyond = beyond or BeyondOptions()
        beyond.check(has_counts=loaded.dataset.has_counts, estimator=estimator)
        notes = tuple(loaded.notes)
        if denoise is not None and grader is not None and tuple(grader) == denoise.rates:
            # Measured and trained through one grader: the counts already read its rewards.
            denoise, grader = None, None
            notes = (
                *notes,
                "--grader-error and --denoise name one grader: the figures are the counts as read",
            )
        made = cls(
            loaded.frame,
            tuple(by),
            estimator,
            beyond,
            tuple(sizes),
            loaded.dataset,
            loaded.totals,
            grader,
            loaded.reading if isinstance(loaded, Histogram) else (),
            notes,
            label,
            pass_at[0] if len(pass_at) == 1 else 1,
            tuple(pass_at),
        )
        return made.denoised(denoise)

    def denoised(self, measured: Measured | None) -> Run:
        """The same input read back through the grader that graded it (--denoise): every rate the analyses
        read (bins, weights, the plug-in) is the true one, p̂, and every valuation de-noises the counts."""
        if measured is None:
            return self
        values = self.values if self.as_read is None else self.as_read
        if isinstance(values, pl.DataFrame):
            from sigmatool.denoise import true_rates

            return replace(self, values=true_rates(values, measured), denoise=measured, as_read=values)
        return replace(self, denoise=measured, as_read=values)

    def under(self, estimator: str, beyond: BeyondOptions, sizes: Sequence[float] = ()) -> Run:
        """The same input under another estimator, prior or G asked, checked as :meth:`of` checks them."""
        beyond.check(has_counts=self.dataset is None or self.dataset.has_counts, estimator=estimator)
        return replace(self, estimator=estimator, beyond=beyond, sizes=tuple(sizes))

    def passing(self, K: int) -> Run:
        """The same run under pass@K credit: its valuation shares this run's (a prior fitted once)."""
        if K == self.pass_at:
            return self
        out = replace(self, pass_at=K, credits=self.credits or (K,))
        out._val.append(self._base)
        return out

    @property
    def _base(self) -> Valuation:
        """The valuation of each answer's own reward through an exact grader (built on first use)."""
        if not self._val:
            from sigmatool import estimators

            measured = None if self.denoise is None else self.denoise.rates
            self._val.append(
                estimators.valuation(
                    self.values, self.by, self.sizes, self.estimator, self.beyond.prior, measured
                )
            )
        return self._val[0]

    def _grader(self, trained: tuple[float, float] | None, K: int) -> Grader:
        """The grader every value reads: --grader-error's rates (``trained``), pass@K credit and, with
        --denoise, the verifier the counts were measured through."""
        from sigmatool.kernels.grader import Grader

        fp, fn = trained or (0.0, 0.0)
        measured = (0.0, 0.0) if self.denoise is None else self.denoise.rates
        return Grader(fp, fn, K, *measured)

    @property
    def exact(self) -> Valuation:
        """The valuation with an exact grader, under the run's credit (without --grader-error, :attr:`val`);
        with --denoise, of the true pass rates."""
        if len(self._val) < 2:
            base, graded = self._base, self._grader(None, self.pass_at)
            self._val.append(base._graded_by(graded) if self.by_credit else base.with_grader(graded))
        return self._val[1]

    @property
    def val(self) -> Valuation:
        """The one valuation of this run: every value read through --grader-error's grader when given, and
        as the pass@K credit when --pass-at K > 1; with --denoise, of the true pass rates."""
        if self.grader is None:
            return self.exact
        if len(self._val) < 3:
            graded = self._grader(self.grader, self.pass_at)
            self._val.append(
                self.exact._graded_by(graded) if self.by_credit else self.exact.with_grader(graded)
            )
        return self._val[2]

    def as_measured(self) -> Run:
        """The run of the counts as they were read, through --grader-error's grader, not de-noised."""
        if self.denoise is None or self.as_read is None:
            return self
        return replace(self, denoise=None, values=self.as_read)

    def denoise_line(self) -> str:
        """With --denoise, a headline line: the grader the counts are read back through."""
        if self.denoise is None:
            return ""
        from sigmatool.denoise import denoise_line

        return denoise_line(self.denoise, ci=self.beyond.ci is not None)

    def grader_line(self) -> str:
        """With --grader-error, the headline's first line: what the grader moves of the silent share and of
        GRPO's and Dr. GRPO's signal per group at each G asked, against an exact grader (empty otherwise)."""
        hist = self.histogram
        if self.grader is None or hist is None:
            return ""
        if self.val.grader is None or self.val.grader.exact:
            return "The grader is the one that graded the counts (--denoise): the figures are the counts as read."
        from sigmatool.estimators.report import grader_line

        return grader_line(hist, self.exact, self.val, self.sizes)

    @property
    def histogram(self) -> pl.DataFrame | None:
        """The histogram of distinct values, or None when the rows stream."""
        from sigmatool.load.loaded import distinct

        return distinct(self.values)

    def valued_notes(self) -> list[str]:
        """What people should know once the answers are made: each prior fitted, and why the cells that have
        no value are not identified."""
        if not self._val:
            return []
        return [*self.exact.notes(), *(f"not identified beyond n: {line}" for line in self.val.why_not())]

    @property
    def by_credit(self) -> bool:
        """Whether the answers are given per pass@K credit (--pass-at other than absent or 1)."""
        return self.credits not in ((), (1,))

    def silent(self, options: SilentOptions, *, spark: bool = False, figure: bool = False) -> SilentResult:
        """``silent``'s summary, headline, notes and curves; under --pass-at, one answer per K, stacked."""
        if self.by_credit:
            from sigmatool.credit import stacked

            one = len(self.credits) == 1
            return stacked(
                [self.passing(K)._silent(options, spark and one, figure and one) for K in self.credits],
                self.credits,
            )
        return self._silent(options, spark, figure)

    def _silent(self, options: SilentOptions, spark: bool, figure: bool) -> SilentResult:
        from sigmatool import silent

        result = silent.analyse(
            self.values,
            self.by,
            options,
            self.val,
            self.beyond,
            spark=spark,
            figure=figure,
            totals=self.totals,
        )
        if self.denoise is None or self.as_read is None or self.histogram is None:
            return result
        from sigmatool import denoise
        from sigmatool.estimators import ESTIMATOR
        from sigmatool.frames import last

        read = self.as_measured()
        as_read = silent.analyse(read.values, self.by, options, read.val, self.beyond)
        hist = read.histogram
        assert hist is not None
        summary = denoise.silent_columns(result.summary, as_read.summary, hist, self.by, self.denoise)
        return replace(
            result,
            summary=last(summary, ESTIMATOR),
            notes=(*result.notes, *denoise.outside_note(result.summary)),
            trust=(*result.trust, *denoise.contradictions(hist, self.denoise)),
        )

    def curve_for(
        self, plot: PlotOptions, options: SilentOptions | GroupSizeOptions
    ) -> SilentCurve | GroupSizeCurve | None:
        """Beside per-prompt rows, what ``--plot`` draws (a second pass over the rows), only when it is asked
        for (None otherwise): the silent share over a grid of G around the asked sizes, per --by group, or
        the exact G against p (under a prior, each count's posterior G)."""
        if plot.path is None:
            return None
        from sigmatool import groupsize, silent
        from sigmatool.options import SilentOptions

        if isinstance(options, SilentOptions):
            return silent.curve(self.values, options, self.by, self.val)
        return groupsize.plotted(self.values, self.by, options, self.val)

    def id_notes(self) -> list[str]:
        """For per-prompt output: the input's own prompt-id column, when the output's ``id`` is a row number."""
        from sigmatool import load

        return [] if self.dataset is None else load.id_notes(self.dataset)

    def silent_rows(self, options: SilentOptions) -> pl.LazyFrame:
        """``silent --per-prompt``: one row per prompt and G, streamed."""
        from sigmatool import silent

        assert self.dataset is not None
        if self.by_credit:
            from sigmatool.credit import CREDIT

            return pl.concat(
                [
                    silent.per_prompt(self.dataset, r.values, options.sizes, cap=options.cap, prior=r.val)
                    .with_columns(pl.lit(K, dtype=pl.Int64).alias(CREDIT))
                    .select(["G", CREDIT, pl.exclude("G", CREDIT)])
                    for K, r in ((K, self.passing(K)) for K in self.credits)
                ]
            )
        return silent.per_prompt(
            self.dataset, self.values, options.sizes, cap=options.cap, prior=self.val, measured=self.denoise
        )

    def budget(self, options: BudgetOptions) -> BudgetResult:
        """``budget``'s summary, headline and notes; under --pass-at, one answer per K, stacked."""
        from sigmatool import budget

        if self.by_credit:
            from sigmatool.credit import stacked

            answers = [
                budget.analyse(r.values, r.by, options, r.val, r.beyond)
                for r in map(self.passing, self.credits)
            ]
            return stacked(answers, self.credits)

        return budget.analyse(self.values, self.by, options, self.val, self.beyond)

    def groupsize(
        self, target: GroupSizeOptions, *, bins: int | None, figure: bool = False
    ) -> GroupSizeResult:
        """``groupsize``'s summary, headline, notes and curve; under pass@K credit, sizes from K + 1."""
        from sigmatool import groupsize

        target = self._credited_sizes(target)
        return groupsize.analyse(self.values, self.by, target, self.val, bins=bins, figure=figure)

    def groupsize_rows(self, target: GroupSizeOptions) -> pl.LazyFrame:
        """``groupsize --per-prompt``: one row per prompt, streamed."""
        from sigmatool import groupsize

        target = self._credited_sizes(target)
        assert self.dataset is not None
        return groupsize.per_prompt(self.dataset, self.values, target, prior=self.val)

    def _credited_sizes(self, target: GroupSizeOptions) -> GroupSizeOptions:
        """The sizes searched under pass@K credit: from K + 1 (a group of K or fewer never learns)."""
        if self.pass_at == 1 or target.min_size > self.pass_at:
            return target
        return replace(target, min_size=self.pass_at + 1)

    def plans(self, request: PlanOptions) -> Plans:
        """``plan``: one plan per --by group."""
        from sigmatool.plan import groups
        from sigmatool.progress import working

        assert self.histogram is not None
        with working("planning"):
            return groups.plan_histogram(self.histogram, self.by, request, self.val)

    def plan_rows(self, plans: Plans) -> pl.LazyFrame:
        """``plan --per-prompt``: the input's rows with each one's group size, streamed."""
        from sigmatool.load import Histogram
        from sigmatool.plan import rows

        assert self.histogram is not None
        assert self.dataset is not None
        return rows.dataset_rows(Histogram(self.histogram, self.dataset), plans)

    def plan_notes(self, plans: Plans) -> list[str]:
        """Which prompts get which size where prompts that share a value split between two sizes."""
        from sigmatool.plan import rows

        return rows.split_notes(plans, None if self.dataset is None else self.dataset.options.id_col)

    def preflight(self, settings: LoopSettings, *, figure: bool = False) -> PreflightResult:
        """``preflight``: the batch loop on this run's one pass-rate column."""
        from sigmatool import preflight

        assert self.histogram is not None
        return preflight.analyse(self.histogram, settings, self.val, figure=figure)

    def curriculum(self, options: CurriculumOptions) -> CurriculumResult:
        """``curriculum``: the schedule's steps on this run's one pass-rate column."""
        from sigmatool import curriculum

        assert self.histogram is not None
        return curriculum.analyse(self.histogram, self.by, options, self.val, self.exact)

    def curriculum_rows(self, result: CurriculumResult, *, order: bool) -> pl.DataFrame:
        """The input's rows with their weights (``--per-prompt``), or the T × B rows the run draws."""
        from sigmatool.curriculum import rows

        assert self.dataset is not None
        assert self.histogram is not None
        if order:
            return rows.order(self.dataset, self.histogram, result)
        return rows.weighted(self.dataset, result)

    def column(self, name: str) -> Run:
        """The run of one pass-rate column of several, as a run with that one --col makes it: the whole run
        with that column's values (its notes and reading lines, those that name it)."""
        from sigmatool.options import COLUMN

        assert self.histogram is not None
        part = self.histogram.filter(pl.col(COLUMN) == name).drop(COLUMN)
        mine = f"--col {name}: "
        return replace(
            self,
            values=part,
            as_read=None
            if not isinstance(self.as_read, pl.DataFrame)
            else self.as_read.filter(pl.col(COLUMN) == name).drop(COLUMN),
            by=tuple(c for c in self.by if c != COLUMN),
            totals=None,
            reading=tuple(line[len(mine) :] for line in self.reading if line.startswith(mine)),
            notes=tuple(n for n in self.notes if repr(name) in n or n.startswith(mine)),
            label=self.label or name,
        )

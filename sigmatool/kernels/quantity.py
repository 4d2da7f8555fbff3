"""The vocabulary of per-prompt quantities: every f(p) an analysis averages over prompts, defined once.

Each member of :class:`Quantity` knows whether it needs a group size G, its degree as a polynomial in p
(which decides whether n samples identify its dataset mean, docs/theory.md §7), and its three forms:

- :meth:`Quantity.plugin`: ``f(p)`` at a pass rate (the plug-in estimate at p = p̂, or a prior's point mass);
- :meth:`Quantity.unbiased`: the unbiased estimate from k of n logged samples (NaN where none exists);
- :meth:`Quantity.beta`: ``E[f(p)]`` for p ~ Beta(A, B) (a Beta prior's posterior after k of n right).

Each form takes a :class:`~sigmatool.kernels.grader.Grader` (``--grader-error``, ``--pass-at``): f then reads
the rewards a noisy verifier gives, ``f(FP + (1 − FP − FN) p)``, in the same three forms (:mod:`.grader`), and
a group's pass@K credit where the grader trains on pass@K (:mod:`.passk`): each quantity of a group of G is
then a function h of its right count c, and its three forms are ``Σ_c Bin(c; G, p) h(c)``,
``Σ_c Hyp(c; n, k, G) h(c)`` and ``Σ_c BetaBin(c; G, A, B) h(c)`` (:meth:`Quantity.group`).

Every estimator (plug-in, unbiased, a prior's posterior mean), every bound and every bootstrap asks these
methods for its numbers, so a quantity added here reaches every command.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sigmatool.kernels import beta as forms
from sigmatool.kernels import grader as noisy
from sigmatool.kernels import passk
from sigmatool.kernels._common import distinct_rows, window, window_mean
from sigmatool.kernels.grader import Grader
from sigmatool.kernels.silent import (
    all_right_probability,
    all_right_probability_unbiased,
    all_wrong_probability,
    all_wrong_probability_unbiased,
    bessel_factor,
    silent_probability,
    silent_probability_unbiased,
)
from sigmatool.kernels.update import (
    drgrpo_weight_limit,
    expected_sigma,
    expected_sigma_squared,
    expected_sigma_squared_unbiased,
    expected_sigma_unbiased,
    grpo_weight_limit,
)

FloatArray = NDArray[np.float64]


class Quantity(str, Enum):
    """A per-prompt quantity f(p); ``G`` is the group size where :attr:`needs_size`.

    >>> Quantity("silent").needs_size, Quantity.SILENT.degree(8), Quantity.GRPO_LIMIT.degree(8)
    (True, 8, None)
    >>> float(Quantity.SILENT.plugin(0.5, 2))
    0.5
    >>> f"{Quantity.SILENT}", str(Quantity.SILENT)  # the name, wherever it is written
    ('silent', 'silent')
    """

    ALL_RIGHT = "all_right"  # p^G
    ALL_WRONG = "all_wrong"  # (1 − p)^G
    SILENT = "silent"  # p^G + (1 − p)^G
    SIGMA = "sigma"  # E[σ](p, G): GRPO's update weight
    SIGMA_SQUARED = "sigma_squared"  # E[σ²](p, G) = p (1 − p)(1 − 1/G): Dr. GRPO's update weight
    GRPO_LIMIT = "grpo_limit"  # sqrt(p (1 − p)): GRPO's weight at G = ∞
    DRGRPO_LIMIT = "drgrpo_limit"  # p (1 − p): Dr. GRPO's weight at G = ∞
    INTERIOR = "interior"  # 1{0 < p < 1}
    KNAPSACK_RL = "knapsack_rl"  # (1 − p^G − (1 − p)^G) p (1 − p)²: Knapsack RL's value (arXiv:2509.25849)

    def __str__(self) -> str:
        return str(self.value)

    @property
    def needs_size(self) -> bool:
        """Whether f depends on the group size."""
        return self not in (Quantity.GRPO_LIMIT, Quantity.DRGRPO_LIMIT, Quantity.INTERIOR)

    def degree(self, G: int | None, K: int = 1) -> int | None:
        """f's degree as a polynomial in p under pass@K (None: not a polynomial); n samples identify E[f] iff
        degree ≤ n."""
        size = int(G or 1)
        fixed = {Quantity.SIGMA_SQUARED: K + 1, Quantity.DRGRPO_LIMIT: K + 1, Quantity.KNAPSACK_RL: size + 3}
        if self in (Quantity.GRPO_LIMIT, Quantity.INTERIOR):
            return None
        return fixed.get(self, size)

    def plugin(
        self, p: ArrayLike, G: ArrayLike | None = None, std: str = "population", grader: Grader | None = None
    ) -> FloatArray:
        """f at p (broadcast with G); NaN outside the domain, as the kernels. With a grader, f at r(p), under
        its pass@K credit."""
        size = 0 if G is None else G
        if grader is not None and not grader.exact:
            p = grader.rate(p)
        if grader is not None and grader.pass_at > 1 and self is not Quantity.INTERIOR:
            return self._pass_plugin(p, size, std, grader.pass_at)
        if self is Quantity.ALL_RIGHT:
            return all_right_probability(p, size)
        if self is Quantity.ALL_WRONG:
            return all_wrong_probability(p, size)
        if self is Quantity.SILENT:
            return silent_probability(p, size)
        if self is Quantity.SIGMA:
            return expected_sigma(p, size, std)
        if self is Quantity.SIGMA_SQUARED:
            return expected_sigma_squared(p, size)
        if self is Quantity.GRPO_LIMIT:
            return grpo_weight_limit(p)
        if self is Quantity.DRGRPO_LIMIT:
            return drgrpo_weight_limit(p)
        q = np.asarray(p, dtype=np.float64)
        if self is Quantity.INTERIOR:
            return np.asarray((q > 0.0) & (q < 1.0), dtype=np.float64)
        learnable = 1.0 - silent_probability(q, size)
        return np.asarray(learnable * q * (1.0 - q) ** 2, dtype=np.float64)

    @property
    def has_unbiased(self) -> bool:
        """Whether an unbiased estimate from k of n exists (for G, and the degree, ≤ n)."""
        return self.needs_size

    def unbiased(
        self,
        k: ArrayLike,
        n: ArrayLike,
        G: ArrayLike,
        std: str = "population",
        grader: Grader | None = None,
    ) -> FloatArray:
        """The unbiased estimate of f from k right of n samples (a group drawn from the logged samples);
        NaN where G > n (or the degree exceeds n) and for the quantities that have none.

        >>> float(Quantity.KNAPSACK_RL.unbiased(2, 4, 1))  # p (1 − p)² · 0 at G = 1
        0.0
        """
        if grader is not None and not grader.plain:
            form = lambda h: noisy.unbiased(h, k, n, grader)  # noqa: E731
            return self._graded(form, np.broadcast(k, n).shape, G, std, grader.pass_at)
        k_all, n_all, G_all = np.broadcast_arrays(np.asarray(k), np.asarray(n), np.asarray(G))
        if k_all.ndim == 1:
            # Each distinct (k, n, G) checked and summed once: a 200,000-group histogram of k/64 rates holds
            # 5·10⁶ rows of 65 counts (budget --by's three quantities at G = 8: 2.7 s of CPU row by row, 1.7 s).
            (k_u, n_u, G_u), cell = distinct_rows(k_all, n_all, G_all)
            if k_u.size < k_all.size:
                return np.asarray(self.unbiased(k_u, n_u, G_u, std)[cell], dtype=np.float64)
        if self is Quantity.ALL_RIGHT:
            return all_right_probability_unbiased(k, n, G)
        if self is Quantity.ALL_WRONG:
            return all_wrong_probability_unbiased(k, n, G)
        if self is Quantity.SILENT:
            return silent_probability_unbiased(k, n, G)
        if self is Quantity.SIGMA:
            return expected_sigma_unbiased(k, n, G, std)
        if self is Quantity.SIGMA_SQUARED:
            return expected_sigma_squared_unbiased(k, n, G)
        if self is Quantity.KNAPSACK_RL:
            return _knapsack_unbiased(k, n, G)
        shape = np.broadcast(np.asarray(k), np.asarray(n)).shape
        return np.full(shape, np.nan)

    def beta(
        self,
        A: ArrayLike,
        B: ArrayLike,
        G: int | None = None,
        std: str = "population",
        grader: Grader | None = None,
    ) -> FloatArray:
        """``E[f(p)]`` for p ~ Beta(A, B), elementwise (A, B > 0); one whole G.

        >>> round(float(Quantity.SILENT.beta(1.0, 1.0, 2)), 4)  # E[p² + (1 − p)²] under Uniform(0, 1)
        0.6667
        """
        size = int(G or 0)
        if grader is not None and not grader.plain:
            if self is Quantity.GRPO_LIMIT:
                return noisy.beta_sqrt_variance(A, B, grader)
            if self is Quantity.INTERIOR:
                return np.ones(np.broadcast(np.asarray(A), np.asarray(B)).shape)
            form = lambda h: noisy.beta(h, A, B, grader)  # noqa: E731
            return self._graded(form, np.broadcast(A, B).shape, size, std, grader.pass_at)
        if self is Quantity.ALL_RIGHT:
            return forms.beta_all_right(A, B, size)
        if self is Quantity.ALL_WRONG:
            return forms.beta_all_wrong(A, B, size)
        if self is Quantity.SILENT:
            return forms.beta_all_right(A, B, size) + forms.beta_all_wrong(A, B, size)
        if self is Quantity.SIGMA:
            factor = float(bessel_factor(size)) if std == "bessel" else 1.0
            return np.asarray(forms.beta_expected_sigma(A, B, size) * factor, dtype=np.float64)
        if self is Quantity.SIGMA_SQUARED:
            return forms.beta_variance_weight(A, B) * (1.0 - 1.0 / float(size or 1))
        if self is Quantity.GRPO_LIMIT:
            return forms.beta_sqrt_variance(A, B)
        if self is Quantity.DRGRPO_LIMIT:
            return forms.beta_variance_weight(A, B)
        if self is Quantity.INTERIOR:
            return np.ones(np.broadcast(np.asarray(A), np.asarray(B)).shape)
        return np.asarray(
            forms.beta_moment(A, B, 1, 2)
            - forms.beta_moment(A, B, size + 1, 2)
            - forms.beta_moment(A, B, 1, size + 2),
            dtype=np.float64,
        )

    def group(self, G: int, std: str = "population", K: int = 1) -> FloatArray | None:
        """h with ``f(q) = Σ_m Bin(m; d, q) h(m)``, d = the degree at G under pass@K (None: f is no
        polynomial)."""
        d = self.degree(G, K)
        if d is None:
            return None
        m = np.arange(d + 1, dtype=np.float64)
        if K > 1:
            return self._pass_group(m, G, std, K)
        if self is Quantity.ALL_RIGHT:
            return np.asarray(m == d, dtype=np.float64)
        if self is Quantity.ALL_WRONG:
            return np.asarray(m == 0, dtype=np.float64)
        if self is Quantity.SILENT:
            return np.asarray((m == 0) | (m == d), dtype=np.float64)
        if self is Quantity.SIGMA:
            factor = float(bessel_factor(G)) if std == "bessel" else 1.0
            return np.sqrt(m * (G - m)) / G * factor
        if self is Quantity.SIGMA_SQUARED:
            return noisy.moment(2, 1, 1) * (1.0 - 1.0 / G)
        if self is Quantity.DRGRPO_LIMIT:
            return noisy.moment(2, 1, 1)
        return noisy.moment(d, 1, 2) - noisy.moment(d, G + 1, 2) - noisy.moment(d, 1, G + 2)

    def _pass_group(self, m: FloatArray, G: int, std: str, K: int) -> FloatArray:
        """:meth:`group` under pass@K: the function of a group's right count c = m (docs/passk.md)."""
        if self is Quantity.ALL_RIGHT:
            return np.asarray(m > G - K, dtype=np.float64)
        if self is Quantity.ALL_WRONG:
            return np.asarray(m == 0, dtype=np.float64)
        if self is Quantity.SILENT:
            return np.asarray(passk.silent_at(m, G, K), dtype=np.float64)
        if self is Quantity.SIGMA:
            factor = float(bessel_factor(G)) if std == "bessel" else 1.0
            return passk.grpo_at(m, G, K) * factor
        if self is Quantity.SIGMA_SQUARED:  # (1 − K/G) p (1 − p)^K, over K + 1 draws
            return noisy.moment(K + 1, 1, K) * (1.0 - K / G)
        if self is Quantity.DRGRPO_LIMIT:
            return noisy.moment(K + 1, 1, K)
        # Knapsack RL: E[(1 − s(C)) X₁ (1 − X₂)(1 − X₃)] over G + 3 draws with m right: the first G hold
        # c = m − 1 right with chance m C(G + 3 − m, 2)/C(G + 3, 3), and then (1, 0, 0) is one of 3 orders.
        d = G + 3
        first = m * (d - m) * (d - m - 1) / 2.0 / (d * (d - 1) * (d - 2) / 6.0) / 3.0
        learns = 1.0 - np.asarray(passk.silent_at(np.maximum(m - 1, 0), G, K), dtype=np.float64)
        return np.asarray(np.where(m >= 1, first * learns, 0.0), dtype=np.float64)

    def _pass_plugin(self, p: ArrayLike, G: ArrayLike, std: str, K: int) -> FloatArray:
        """f at p under pass@K: ``Σ_c Bin(c; G, p) h(c)``, or its closed form (NaN where G < K)."""
        pp, sizes = np.broadcast_arrays(np.asarray(p, dtype=np.float64), np.asarray(G, dtype=np.float64))
        if self is Quantity.GRPO_LIMIT:
            return passk.grpo_limit(pp, K)
        if self is Quantity.DRGRPO_LIMIT:
            return passk.drgrpo_limit(pp, K)
        if self is Quantity.ALL_WRONG:
            return all_wrong_probability(pp, sizes)
        out = np.full(pp.shape, np.nan)
        for g in np.unique(sizes).tolist():
            at = (sizes == g) & (pp >= 0.0) & (pp <= 1.0)
            if not (g >= K and g == int(g)) or not at.any():
                continue
            out[at] = self._pass_plugin_at(pp[at], int(g), std, K)
        return out

    def _pass_plugin_at(self, p: FloatArray, G: int, std: str, K: int) -> FloatArray:
        if self is Quantity.SIGMA_SQUARED:
            return passk.expected_drgrpo(p, G, K)
        if self is Quantity.KNAPSACK_RL:
            learns = 1.0 - Quantity.SILENT._pass_plugin_at(p, G, std, K)
            return np.asarray(learns * p * (1.0 - p) ** 2, dtype=np.float64)
        if self is Quantity.SILENT and G == K:
            return np.ones(p.shape)  # every K-subset is the whole group: it never learns
        if self in (Quantity.ALL_RIGHT, Quantity.SILENT):
            from scipy.stats import binom

            right = np.asarray(binom.cdf(K - 1, G, 1.0 - p), dtype=np.float64)  # fewer than K wrong
            return right + (all_wrong_probability(p, G) if self is Quantity.SILENT else 0.0)
        # GRPO's weight: Σ_c Bin(c; G, p) h(c) over the window of the pmf that holds its mass.
        factor = float(bessel_factor(G)) if std == "bessel" else 1.0
        out = np.zeros(p.shape)
        inner = (p > 0.0) & (p < 1.0)
        if inner.any():
            q = p[inner]
            lo, hi = window(
                G * q, np.sqrt(G * q * (1.0 - q)), np.zeros(q.shape, np.int64), np.full(q.shape, G)
            )
            odds = np.log(q) - np.log1p(-q)
            out[inner] = window_mean(
                lo,
                hi,
                lambda rows, c: np.log((G - c) / (c + 1.0)) + odds[rows, None],
                lambda rows, c: passk.grpo_at(c, G, K),
            )
        return out * factor

    def _graded(
        self,
        form: Callable[[FloatArray], FloatArray],
        shape: tuple[int, ...],
        G: ArrayLike,
        std: str,
        K: int = 1,
    ) -> FloatArray:
        """A form through the grader, for each distinct G: NaN for the quantities that are no polynomial."""
        sizes = np.broadcast_to(np.asarray(0 if G is None else G, dtype=np.int64), shape)
        out = np.full(shape, np.nan)
        for g in np.unique(sizes).tolist():
            if self.needs_size and g < K:
                continue
            h = self.group(int(g), std, K)
            if self is Quantity.SILENT and g == K > 1:
                out[sizes == g] = 1.0  # silent whatever the answers: a sum of the pmf would round
                continue
            if h is not None:
                at = sizes == g
                out[at] = np.broadcast_to(form(h), shape)[at]
        return out


def _falling(x: FloatArray, m: int) -> FloatArray:
    """The falling factorial ``x (x − 1) … (x − m + 1)``."""
    out = np.ones_like(x)
    for i in range(m):
        out = out * (x - i)
    return out


def _moment_unbiased(k: FloatArray, n: FloatArray, a: int, b: int) -> FloatArray:
    """Unbiased ``p^a (1 − p)^b`` from k of n: ``[k]_a [n − k]_b / [n]_(a+b)`` (falling factorials)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        out = _falling(k, a) * _falling(n - k, b) / _falling(n, a + b)
    return np.asarray(np.where(a + b <= n, out, np.nan), dtype=np.float64)


def _knapsack_unbiased(k: ArrayLike, n: ArrayLike, G: ArrayLike) -> FloatArray:
    """Unbiased ``p (1 − p)² − p^(G+1) (1 − p)² − p (1 − p)^(G+2)``: defined where G + 3 ≤ n."""
    kk, nn, gg = np.broadcast_arrays(
        np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64), np.asarray(G, dtype=np.int64)
    )
    out = np.full(kk.shape, np.nan)
    for g in np.unique(gg).tolist():
        at = gg == g
        out[at] = (
            _moment_unbiased(kk[at], nn[at], 1, 2)
            - _moment_unbiased(kk[at], nn[at], g + 1, 2)
            - _moment_unbiased(kk[at], nn[at], 1, g + 2)
        )
    return out


QUANTITIES = tuple(q.value for q in Quantity)

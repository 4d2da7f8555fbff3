"""A prior for the pass rate p: point masses and Beta components, and what it says about one (k, n) cell."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from sigmatool.prior.cells import Cells

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# An atom lighter than this share of the heaviest one is not counted in the support size of a summary.
SUPPORT_FLOOR = 1e-9


@dataclass(frozen=True)
class Prior:
    """A mixture ``Σ_i mass_i δ(p_i) + Σ_m mass_m Beta(a_m, b_m)`` over p, with how it was fitted.

    ``kind`` is ``beta`` (one Beta by maximum likelihood), ``fixed`` (a user's Beta(a, b)) or ``npmle`` (point
    masses on a grid, Kiefer–Wolfowitz); other mixtures of atoms and Beta components work the same way. The
    fit fields hold the data's log-likelihood ``Σ_c w_c log m(k_c; n_c)``, the EM iterations and history,
    the largest KKT gap ``max_i D(p_i) − 1`` (grid priors), whether the fit reproduces the data's histogram
    (``reproduced``: the data lie inside the set of mixtures, and NPMLEs of equal likelihood differ beyond
    it), and the expected number of prompts with p̂ = 0 (or 1) whose posterior puts p inside (0, 1).
    """

    kind: str
    atoms: FloatArray
    atom_mass: FloatArray
    beta_a: FloatArray
    beta_b: FloatArray
    beta_mass: FloatArray
    log_likelihood: float = math.nan
    prompts: float = math.nan
    never_solved: float = math.nan
    always_solved: float = math.nan
    moved_off_zero: float = math.nan
    moved_off_one: float = math.nan
    iterations: int = 0
    kkt_gap: float = math.nan
    reproduced: bool = False
    history: tuple[float, ...] = field(default=(), repr=False)

    @property
    def components(self) -> int:
        """Point masses plus Beta components."""
        return int(self.atoms.size + self.beta_a.size)

    def log_joint(self, k: IntArray, n: IntArray) -> FloatArray:
        """``log mass_m + log P(k | n, component m)`` for 1-D cells (rows) and components (columns)."""
        from scipy.special import betaln, gammaln, xlog1py, xlogy

        kk, nn = k[:, None].astype(np.float64), n[:, None].astype(np.float64)
        p = self.atoms[None, :]
        with np.errstate(divide="ignore"):
            # scipy.stats.binom.logpmf's own formula, term for term (the same bits), without the 0.4 s that
            # importing scipy.stats costs.
            combiln = gammaln(nn + 1) - (gammaln(kk + 1) + gammaln(nn - kk + 1))
            atom = combiln + xlogy(kk, p) + xlog1py(nn - kk, -p) + np.log(self.atom_mass)[None, :]
            choose = gammaln(nn + 1) - gammaln(kk + 1) - gammaln(nn - kk + 1)
            a, b = self.beta_a[None, :], self.beta_b[None, :]
            beta = choose + betaln(a + kk, b + nn - kk) - betaln(a, b) + np.log(self.beta_mass)[None, :]
        return np.asarray(np.concatenate([atom, beta], axis=1), dtype=np.float64)

    def log_marginal(self, k: IntArray, n: IntArray) -> FloatArray:
        """``log m(k; n) = log Σ_m mass_m P(k | n, m)`` per cell."""
        from scipy.special import logsumexp

        return np.asarray(logsumexp(self.log_joint(k, n), axis=1), dtype=np.float64)

    def responsibilities(self, k: IntArray, n: IntArray) -> FloatArray:
        """Posterior weight of each component given each cell (rows sum to 1)."""
        joint = self.log_joint(k, n)
        top = joint.max(axis=1, keepdims=True)
        weights = np.exp(joint - top)
        return np.asarray(weights / weights.sum(axis=1, keepdims=True), dtype=np.float64)

    def interior_probability(self, k: IntArray, n: IntArray) -> FloatArray:
        """``P(0 < p < 1 | k, n)``: the posterior mass off the atoms at 0 and 1."""
        r = self.responsibilities(k, n)
        at_edge = np.concatenate(
            [(self.atoms == 0.0) | (self.atoms == 1.0), np.zeros(self.beta_a.size, bool)]
        )
        return np.asarray(1.0 - r[:, at_edge].sum(axis=1), dtype=np.float64)

    def summary(self) -> dict[str, float | int | str]:
        """Parameters or support size, log-likelihood and how the prior treats p̂ ∈ {0, 1}."""
        top = float(self.atom_mass.max()) if self.atom_mass.size else 0.0
        out: dict[str, float | int | str] = {
            "kind": self.kind,
            "components": self.components,
            "support_size": int((self.atom_mass > SUPPORT_FLOOR * top).sum()) + int(self.beta_a.size),
            "mass_at_zero": float(self.atom_mass[self.atoms == 0.0].sum()),
            "mass_at_one": float(self.atom_mass[self.atoms == 1.0].sum()),
            "log_likelihood": self.log_likelihood,
            "log_likelihood_per_prompt": self.log_likelihood / self.prompts,
            "prompts": self.prompts,
            "never_solved": self.never_solved,
            "always_solved": self.always_solved,
            "moved_off_zero": self.moved_off_zero,
            "moved_off_one": self.moved_off_one,
            "iterations": self.iterations,
            "kkt_gap": self.kkt_gap,
        }
        if self.beta_a.size == 1 and self.atoms.size == 0:
            out["a"], out["b"] = float(self.beta_a[0]), float(self.beta_b[0])
        return out

    def describe(self, c: Cells) -> Prior:
        """This prior with its fit fields filled in from the cells it describes."""
        from dataclasses import replace

        loglik = float(c.weight @ self.log_marginal(c.k, c.n))
        interior = self.interior_probability(c.k, c.n)
        zero, one = c.k == 0, c.k == c.n
        return replace(
            self,
            log_likelihood=loglik,
            prompts=c.total,
            never_solved=float(c.weight[zero].sum()),
            always_solved=float(c.weight[one].sum()),
            moved_off_zero=float(c.weight[zero] @ interior[zero]),
            moved_off_one=float(c.weight[one] @ interior[one]),
        )


def beta_prior(a: float, b: float, kind: str = "fixed") -> Prior:
    """One Beta(a, b) component."""
    empty = np.zeros(0, dtype=np.float64)
    return Prior(kind, empty, empty, np.array([a]), np.array([b]), np.array([1.0]))


def grid_prior(atoms: FloatArray, mass: FloatArray, kind: str = "npmle") -> Prior:
    """Point masses ``mass`` at ``atoms``."""
    empty = np.zeros(0, dtype=np.float64)
    return Prior(kind, np.asarray(atoms, np.float64), np.asarray(mass, np.float64), empty, empty, empty)

"""Beyond the samples: priors on the pass rate, identified bounds and the bootstrap (docs/prior.md).

Imported only when a prior, a bound or an interval is asked for: it needs scipy (imported inside functions).
"""

from __future__ import annotations

from sigmatool.kernels import QUANTITIES
from sigmatool.prior.bootstrap import Interval, bootstrap, bootstrap_rate
from sigmatool.prior.bounds import Bounds, Region, bounds, identified, region
from sigmatool.prior.cells import Cells, cells, p_grid
from sigmatool.prior.fit import EMOptions, fit_prior
from sigmatool.prior.groupsize import posterior_group_size
from sigmatool.prior.model import Prior
from sigmatool.prior.posterior import (
    expected_rate,
    posterior_expected_sigma,
    posterior_expected_sigma_squared,
    posterior_mean,
    posterior_silent,
    posterior_weight_limits,
)

__all__ = [
    "QUANTITIES",
    "Bounds",
    "Cells",
    "EMOptions",
    "Interval",
    "Prior",
    "Region",
    "bootstrap",
    "bootstrap_rate",
    "bounds",
    "cells",
    "expected_rate",
    "fit_prior",
    "identified",
    "p_grid",
    "posterior_expected_sigma",
    "posterior_expected_sigma_squared",
    "posterior_group_size",
    "posterior_mean",
    "posterior_silent",
    "posterior_weight_limits",
    "region",
]

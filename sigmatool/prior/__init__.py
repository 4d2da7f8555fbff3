"""Beyond the samples: priors on the pass rate, identified bounds and the bootstrap (docs/prior.md).

Imported only when a prior, a bound or an interval is asked for: it needs scipy.
"""

from __future__ import annotations

from sigmatool.prior.cells import Cells, cells, p_grid
from sigmatool.prior.fit import EMOptions, fit_prior
from sigmatool.prior.model import Prior

__all__ = ["Cells", "EMOptions", "Prior", "cells", "fit_prior", "p_grid"]

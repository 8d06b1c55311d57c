"""Result and error types of :mod:`solvers.lcp` (private; import them from
:mod:`solvers.lcp`)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LCPResult", "LCPSolveError", "LCPFallbackWarning", "STATUSES"]

STATUSES = ("solved", "fallback", "ray_termination", "inconclusive", "max_iterations",
            "singular", "unbounded", "inaccurate")
"""Possible values of :attr:`LCPResult.status`."""


@dataclass(frozen=True)
class LCPResult:
    """Outcome of an LCP solve.

    Attributes
    ----------
    z : ndarray, shape (n,)
        Solution (``x`` for boxed problems; :attr:`x` is an alias).
    w : ndarray, shape (n,)
        ``M z + q`` (``A x + b``).
    status : str
        One of :data:`STATUSES`.  ``"solved"``: verified solution.
        ``"fallback"``: the requested method failed and the fallback method's
        verified solution is returned.  ``"ray_termination"``: Lemke ended on a secondary
        ray, which proves the problem infeasible for a copositive-plus ``M``;
        ``"inconclusive"``: the same ending for a positive-definite ``M``, whose LCP always
        has a solution, so it is a numerical failure (badly conditioned ``M``), not a
        proof.  Anything else is a failure.
    residual : float
        Natural-map residual (module docstring) of ``z``.
    iterations : int
        Pivots (Lemke, Dantzig) or sweeps (PGS), summed over fallback and
        friction rounds.
    method : str
        Method that produced ``z``.
    message : str
        Human-readable detail.
    """

    z: np.ndarray
    w: np.ndarray
    status: str
    residual: float
    iterations: int
    method: str
    message: str = ""

    @property
    def success(self) -> bool:
        """True when ``z`` is a verified solution (status "solved" or "fallback")."""
        return self.status in ("solved", "fallback")

    @property
    def x(self) -> np.ndarray:
        """Alias of :attr:`z` for boxed problems."""
        return self.z


class LCPSolveError(RuntimeError):
    """An LCP solve failed and the caller asked for an exception.

    Attributes ``result`` (the failed :class:`LCPResult`) and ``context``.
    """

    def __init__(self, result: LCPResult, context: str = "") -> None:
        where = f"{context}: " if context else ""
        super().__init__(
            f"{where}LCP solve failed with status '{result.status}' "
            f"(method {result.method}, n={result.z.shape[0]}, residual "
            f"{result.residual:.3e}, {result.iterations} iterations): {result.message}")
        self.result = result
        self.context = context


class LCPFallbackWarning(RuntimeWarning):
    """Emitted when a front door falls back to another method."""

"""Result and error types of :mod:`solvers.lcp` (private; import them from
:mod:`solvers.lcp`)."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from .errors import LCPFallbackWarning, LCPSolveError

__all__ = ["LCPResult", "LCPSolveError", "LCPFallbackWarning", "STATUSES", "verified", "finish",
           "front_door"]

STATUSES = {
    "solved": "success: the natural-map residual of z is at most residual_tol * max(1, "
              "||q||_inf) (tol for PGS; ||b||_inf for boxed problems)",
    "fallback": "success: the requested method failed and the fallback method's z has a "
                "residual within the same bound",
    "infeasible": "failure, proven: the problem has no solution; certificate holds a Farkas "
                  "vector y (y >= 0, M^T y <= 0, q^T y < 0 to within a relative change of "
                  "M's entries of 64 n eps) that was checked",
    "inaccurate": "failure, near miss: the method ended normally but the residual is above "
                  "the acceptance and at most 1e-6 * max(1, ||q||_inf)",
    "breakdown": "failure: the method ended normally but the residual is above "
                 "1e-6 * max(1, ||q||_inf) (rounding destroyed the answer, e.g. a nearly "
                 "singular pivoting basis); nothing is proven about the problem",
    "inconclusive": "failure: Lemke ended on a secondary ray and neither a solution nor a "
                    "certificate of infeasibility could be checked",
    "singular": "failure: a pivoting basis (or PGS's diagonal) was singular; nothing is "
                "proven about the problem",
    "unbounded": "failure: Dantzig's pivoting found no blocking row for a driving variable; "
                 "nothing is proven about the problem",
    "max_iterations": "failure: the pivot, sweep or friction-round limit was reached with "
                      "the residual above the acceptance; nothing is proven",
}
"""Every value of :attr:`LCPResult.status`, mapped to what it guarantees.  Only
"solved" and "fallback" are successes (:attr:`LCPResult.success`); only "infeasible"
is a proof about the problem."""


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
        A key of :data:`STATUSES`, which says what each guarantees: ``"solved"`` and
        ``"fallback"`` a residual bound, ``"infeasible"`` a checked certificate of
        infeasibility (:attr:`certificate`); every other status is a failure that
        proves nothing about the problem (``"inaccurate"`` still bounds the residual
        by ``1e-6 * max(1, ||q||_inf)``).
    residual : float
        Natural-map residual (module docstring) of ``z``.
    iterations : int
        Pivots (Lemke, Dantzig) or sweeps (PGS), summed over fallback and
        friction rounds.
    method : str
        Method that produced ``z``.
    message : str
        Human-readable detail.
    certificate : ndarray or None
        With status ``"infeasible"``: the checked Farkas vector ``y`` (``y >= 0``,
        ``sum(y) = 1``, ``M^T y <= 0`` and ``q^T y < 0`` to rounding level; see
        :mod:`solvers._lcp_certify`).  For boxed problems it certifies the equivalent
        standard LCP ``boxed_lcp_to_lcp(A, b, lo, hi, findex)``.  None otherwise.
    """

    z: np.ndarray
    w: np.ndarray
    status: str
    residual: float
    iterations: int
    method: str
    message: str = ""
    certificate: np.ndarray | None = None

    @property
    def success(self) -> bool:
        """True when ``z`` is a verified solution (status "solved" or "fallback")."""
        return self.status in ("solved", "fallback")

    @property
    def x(self) -> np.ndarray:
        """Alias of :attr:`z` for boxed problems."""
        return self.z


def verified(z: np.ndarray, w: np.ndarray, status: str, residual: float, accept: float,
             near: float, iterations: int, method: str, message: str,
             certificate: np.ndarray | None = None) -> LCPResult:
    """The residual decides.  "solved" only if ``residual <= accept`` (a method that
    stopped early (ray, iteration limit) on a point that passes is "solved" too); a
    method that claims a solution above it is "inaccurate" up to ``near`` and
    "breakdown" beyond; other statuses are kept (:data:`STATUSES`)."""
    if residual <= accept and np.all(np.isfinite(z)):
        if status != "solved":
            message += (f"; the returned point verifies (residual {residual:.3e} <= "
                        f"{accept:.3e}) although the method ended with {status}")
        return LCPResult(z, w, "solved", residual, iterations, method, message)
    if status == "solved":
        status = "inaccurate" if residual <= near else "breakdown"
        message += (f"; residual {residual:.3e} exceeds the acceptance {accept:.3e}"
                    + ("" if status == "inaccurate" else
                       f" and the near-miss bound {near:.3e}: the pivoting broke down"))
    return LCPResult(z, w, status, residual, iterations, method, message,
                     certificate if status == "infeasible" else None)


def finish(result: LCPResult, raise_on_failure: bool, context: str) -> LCPResult:
    """``result``, or :class:`LCPSolveError` naming ``context`` if it failed and
    ``raise_on_failure``."""
    if raise_on_failure and not result.success:
        raise LCPSolveError(result, context)
    return result


def front_door(fname: str, solvers: dict[str, Callable[..., LCPResult]],
               method: str, fallback: str | None, options: dict[str, Any],
               raise_on_failure: bool, context: str) -> LCPResult:
    """Run ``solvers[method]``; on a failure that is not a proof of infeasibility run
    ``solvers[fallback]`` (with an :class:`LCPFallbackWarning`) and return its verified
    result as "fallback", else the failed result with the smaller residual."""
    if method not in solvers:
        raise ValueError(f"{fname}: method must be one of {sorted(solvers)}; got {method!r}")
    if fallback is not None and (fallback not in solvers or fallback == method):
        raise ValueError(f"{fname}: fallback must be None or one of "
                         f"{sorted(set(solvers) - {method})}; got {fallback!r}")
    first = solvers[method](**options)
    if first.success or fallback is None or first.status == "infeasible":
        return finish(first, raise_on_failure, context)
    where = f"{context}: " if context else ""
    warnings.warn(f"{where}{method} failed with status '{first.status}' (residual "
                  f"{first.residual:.3e}, n={first.z.shape[0]}); falling back to {fallback}",
                  LCPFallbackWarning, stacklevel=3)
    second = solvers[fallback]()
    its = first.iterations + second.iterations
    if second.success:
        return replace(second, status="fallback", iterations=its,
                       message=f"{method} failed ({first.status}: {first.message}); "
                               f"{fallback}: {second.message}")
    best = first if first.residual <= second.residual else second
    best = replace(best, iterations=its,
                   message=f"{method} failed ({first.status}: {first.message}); "
                           f"fallback {fallback} failed ({second.status}: {second.message})")
    return finish(best, raise_on_failure, context)

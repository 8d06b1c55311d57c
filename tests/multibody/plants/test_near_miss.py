"""When every method ends a hair above the step's tolerance (Lemke's 'breakdown' on the 98-row
LCP of a standing human model at t = 0.325 s, residual 1.5e-6 against 1e-7), the step keeps the
solution with a TimeSteppingWarning if its residual is within the near-miss bound, and raises
LCPSolveError beyond it: never a silent wrong step, never a crash on a real scene."""
from __future__ import annotations

import numpy as np
import pytest

import multibody.plants._time_stepping_solve as ts
from multibody.constraints import FRICTION_CONE, UNILATERAL
from multibody.errors import TimeSteppingWarning
from solvers.lcp import LCPResult, LCPSolveError


def _problem():
    """One contact: a normal row and four friction-cone rows (two opposite pairs)."""
    rng = np.random.default_rng(0)
    J = rng.normal(size=(5, 3))
    A = J @ J.T + 1e-3 * np.eye(5)
    b = np.array([-1.0, 0.2, -0.1, -0.2, 0.1])
    kind = np.array([UNILATERAL] + [FRICTION_CONE] * 4)
    lo, hi = np.zeros(5), np.array([np.inf] + [0.5] * 4)
    normal = np.array([-1, 0, 0, 0, 0])
    return A, b, kind, lo, hi, normal


def _broken(residual):
    """A Lemke that returns its true solution but reports a breakdown with ``residual``."""
    real = ts.solve_lcp

    def lemke(M, q, *args, **kw):
        r = real(M, q, *args, **kw)
        assert r.success
        return LCPResult(r.z, r.w, "breakdown", residual, r.iterations, r.method, "forced")
    return lemke


def test_a_near_miss_is_kept_with_a_warning(monkeypatch):
    A, b, kind, lo, hi, normal = _problem()
    exact, report, _ = ts.solve_impulses(A, b, kind, lo, hi, normal, "plant at t=0")
    monkeypatch.setattr(ts, "solve_lcp", _broken(2e-6))
    monkeypatch.setattr(ts, "_pyramid_fallback", lambda *a, **k: None)
    with pytest.warns(TimeSteppingWarning, match=r"breakdown.*residual 2\.000e-06.*near-miss"):
        p, report, _ = ts.solve_impulses(A, b, kind, lo, hi, normal, "plant at t=0")
    assert report.status == "near_miss"
    np.testing.assert_array_equal(p, exact)      # the solver's own impulses, not a substitute


def test_beyond_the_near_miss_bound_the_step_raises(monkeypatch):
    A, b, kind, lo, hi, normal = _problem()
    monkeypatch.setattr(ts, "solve_lcp", _broken(10 * ts.NEAR_MISS))
    monkeypatch.setattr(ts, "_pyramid_fallback", lambda *a, **k: None)
    with pytest.raises(LCPSolveError, match="plant at t=0"):
        ts.solve_impulses(A, b, kind, lo, hi, normal, "plant at t=0")

"""Lemke's method on positive-definite matrices so badly conditioned (eigenvalues from 1 down
to 1e-12 .. 1e-17) that the pivoting may end on a numerical ray: the verdict is whatever can
be checked, never a guess from the conditioning.  In exact arithmetic these LCPs have a
(unique) solution, so:

- "solved" comes with its residual bound;
- "infeasible" needs a certificate y >= 0 with M^T y <= tau |M|^T y (tau = 64 n eps) and
  q^T y < 0, which is impossible when the smallest eigenvalue of the symmetric part exceeds
  tau || |M| ||_2 (y^T M y <= tau y^T |M| y), so above that level it must never appear;
- anything else is a documented failure status (``STATUSES``), not a claim either way.

Which of these a given seed gets depends on rounding (the LAPACK build); the tests assert
only the guarantees."""
import numpy as np
import pytest

from solvers.lcp import STATUSES, solve_lcp_lemke
from test_lcp import assert_farkas

TAU = 64 * np.finfo(float).eps


def _badly_conditioned(seed, n=None, low=(12, 17)):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 12)) if n is None else n
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    M = Q @ np.diag(np.logspace(0, -rng.uniform(*low), n)) @ Q.T
    return 0.5 * (M + M.T), rng.normal(size=n)


def _certificate_impossible(M):
    """True when no y >= 0 can pass the certificate check (see the module docstring)."""
    n = M.shape[0]
    lam = np.linalg.eigvalsh(0.5 * (M + M.T))[0]
    return lam > TAU * n * np.linalg.norm(np.abs(M), 2)


def _check_guarantees(M, q, r):
    assert r.status in STATUSES
    scale = max(1.0, np.max(np.abs(q)))
    if r.success:
        assert r.status == "solved" and r.residual <= 1e-8 * scale
    elif r.status == "infeasible":
        assert_farkas(M, q, r.certificate)
        assert not _certificate_impossible(M)
    else:
        assert r.certificate is None
        if r.status == "inaccurate":
            assert r.residual <= 1e-6 * scale


@pytest.mark.parametrize("n", [8, None])
def test_badly_conditioned_positive_definite_lcps_get_only_checked_verdicts(n):
    impossible = 0
    for seed in range(60):
        M, q = _badly_conditioned(seed, n)
        r = solve_lcp_lemke(M, q)
        _check_guarantees(M, q, r)
        if _certificate_impossible(M):
            impossible += 1
            assert r.status != "infeasible"
    assert 5 <= impossible <= 55          # both kinds of matrix are in the family


def test_the_old_inconclusive_seed_is_not_called_feasible_from_its_condition_number():
    """Seed 4 (cond > 1e12, positive definite) once gave "inconclusive ... M is positive
    definite so the LCP has a solution"; the message now says what was checked."""
    M, q = _badly_conditioned(4, 8, (12, 16))
    assert np.linalg.eigvalsh(M)[0] > 0 and np.linalg.cond(M) > 1e12
    r = solve_lcp_lemke(M, q)
    _check_guarantees(M, q, r)
    assert "positive definite" not in r.message and "condition number" not in r.message


def test_moderately_conditioned_positive_definite_lcps_are_solved():
    """cond <= 1e8: far from the rounding level, Lemke solves every one (a P-matrix LCP)."""
    for seed in range(30):
        M, q = _badly_conditioned(seed, 8, (2, 8))
        assert _certificate_impossible(M)
        r = solve_lcp_lemke(M, q)
        assert r.status == "solved" and r.residual <= 1e-8 * max(1.0, np.max(np.abs(q)))


def test_a_truly_infeasible_copositive_problem_is_proven_infeasible():
    # M = [[0, 1], [-1, 0]] is skew (copositive-plus, not PD); q = (-1, -1) has no solution:
    # w1 = z2 - 1 >= 0 needs z2 >= 1, then w2 = -z1 - 1 < 0.  y = (1, 1) / 2 is a certificate.
    M, q = np.array([[0.0, 1.0], [-1.0, 0.0]]), np.array([-1.0, -1.0])
    r = solve_lcp_lemke(M, q)
    assert r.status == "infeasible"
    assert_farkas(M, q, r.certificate)

"""What Lemke's method says when it does not end on a solution: "infeasible" only with a
Farkas certificate that this test checks on its own (y >= 0, M^T y <= 0 to rounding level,
q^T y < 0), "solved" only with a residual bound, and "inconclusive" when neither can be
certified; never the claim that an LCP has a solution because of a property of M.

The families are seeded and built so that the truth is known exactly: positive-semidefinite
integer matrices with an exact integer null vector y of M^T and q^T y < 0 (infeasible), the
same matrices with q = w* - M z* for integer complementary z*, w* (solvable), and the
issue-20 repro M = P A A^T P (P = I - d d^T / 5, d = 1), whose rounded copy is positive
definite to within roundoff but infeasible in exact arithmetic (d^T M = 0, d^T q = -1)."""
import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from solvers.lcp import STATUSES, lcp_residual, solve_lcp_lemke
from test_lcp import assert_farkas, enumerate_lcp


def _psd_with_null_vector(rng):
    """Integer positive-semidefinite M (symmetric part B B^T, plus a skew part half the
    time) and a 0/1 vector y with M^T y = 0 exactly."""
    n = int(rng.integers(3, 12))
    k = int(rng.integers(1, n))
    supp = rng.choice(n, size=int(rng.integers(2, n + 1)), replace=False)
    y = np.zeros(n)
    y[supp] = 1.0
    B = rng.integers(-3, 4, size=(n, k)).astype(float)
    B[supp[-1]] = -B[supp[:-1]].sum(axis=0)
    C = rng.integers(-2, 3, size=(n, k)).astype(float)
    C[supp[-1]] = -C[supp[:-1]].sum(axis=0)
    K = rng.integers(-2, 3, size=(k, k)).astype(float)
    M = B @ B.T + (C @ (K - K.T) @ C.T if rng.random() < 0.5 else 0.0)
    assert np.all(M.T @ y == 0) and np.linalg.eigvalsh(M + M.T)[0] > -1e-9
    return M, y, supp


def _infeasible(seed):
    rng = np.random.default_rng(seed)
    M, y, supp = _psd_with_null_vector(rng)
    q = rng.integers(-5, 6, size=M.shape[0]).astype(float)
    q[supp[0]] -= q @ y + float(rng.integers(1, 4))
    assert q @ y < 0                         # y is an exact certificate
    return M, q


def _solvable(seed):
    rng = np.random.default_rng(seed)
    M, _, _ = _psd_with_null_vector(rng)
    n = M.shape[0]
    z = np.where(rng.random(n) < 0.5, rng.integers(1, 4, n), 0).astype(float)
    w = np.where(z > 0, 0.0, rng.integers(0, 3, n)).astype(float)
    return M, w - M @ z                       # z solves it exactly


def _repro():
    n = 5
    d = np.ones(n)
    P = np.eye(n) - np.outer(d, d) / n
    A = np.random.default_rng(0).normal(size=(n, n))
    return P @ A @ A.T @ P, np.array([-1.0, 0.0, 0.0, 0.0, 0.0])


def test_the_issue_20_repro_is_infeasible_with_a_checked_certificate():
    M, q = _repro()
    d = np.ones(5)
    assert d @ q == -1.0 and np.max(np.abs(M @ d)) < 1e-14      # infeasible in exact arithmetic
    r = solve_lcp_lemke(M, q)
    assert r.status == "infeasible" and not r.success, r.message
    assert "positive definite" not in r.message
    assert_farkas(M, q, r.certificate)
    # M's null space is spanned by d (rank 4): the certificate is d, normalized
    assert np.linalg.matrix_rank(M) == 4
    np.testing.assert_allclose(r.certificate, d / 5, atol=1e-9)


@pytest.mark.parametrize("seed", range(40))
def test_infeasible_positive_semidefinite_problems_are_proven_infeasible(seed):
    M, q = _infeasible(seed)
    r = solve_lcp_lemke(M, q)
    assert not r.success and r.status == "infeasible", r.message
    assert_farkas(M, q, r.certificate)


@pytest.mark.parametrize("seed", range(40))
def test_solvable_positive_semidefinite_problems_are_solved_never_infeasible(seed):
    M, q = _solvable(seed)
    r = solve_lcp_lemke(M, q)
    assert r.status == "solved", r.message
    assert r.certificate is None
    assert lcp_residual(r.z, M @ r.z + q) <= 1e-8 * max(1.0, np.max(np.abs(q)))


def test_the_two_families_differ_only_in_q():
    """The solvable and infeasible problems of one seed share M (the verdict comes from q)."""
    for seed in range(5):
        np.testing.assert_array_equal(_infeasible(seed)[0], _solvable(seed)[0])


def test_every_verdict_on_small_integer_lcps_agrees_with_enumeration():
    """n <= 3, entries in -3..3, any M (most not monotone): "solved" has a solution,
    "infeasible" has an empty feasible set, "inconclusive" a nonempty one (from an
    independent LP); an empty feasible set is always proven."""
    rng = np.random.default_rng(1)
    seen = set()
    for _ in range(400):
        n = int(rng.integers(1, 4))
        M = rng.integers(-3, 4, size=(n, n)).astype(float)
        q = rng.integers(-3, 4, size=n).astype(float)
        r = solve_lcp_lemke(M, q)
        assert r.status in STATUSES
        seen.add(r.status)
        sols = enumerate_lcp(M, q)
        feasible = linprog(np.zeros(n), A_ub=-M, b_ub=q, bounds=(0, None),
                           method="highs").status == 0
        if r.status == "solved":
            assert sols and r.residual <= 1e-8 * max(1.0, np.max(np.abs(q)))
        elif r.status == "infeasible":
            assert not sols and not feasible
            assert_farkas(M, q, r.certificate)
        else:
            assert r.status == "inconclusive" and feasible, (M, q, r.message)
        if not feasible:
            assert r.status == "infeasible"
    assert seen == {"solved", "infeasible", "inconclusive"}


def test_a_feasible_lcp_without_a_solution_is_inconclusive():
    """M = [[2, 1], [1, -1]], q = (3, -3): z = (3, 0) is feasible (w = (9, 0)) but no
    complementary index set solves it, so neither verdict can be certified."""
    M, q = np.array([[2.0, 1.0], [1.0, -1.0]]), np.array([3.0, -3.0])
    assert enumerate_lcp(M, q) == []
    assert np.all(M @ [3.0, 0.0] + q >= 0)
    for S in itertools.product([0, 1], repeat=2):   # the same, written out
        z = np.zeros(2)
        idx = np.flatnonzero(S)
        if idx.size:
            z[idx] = np.linalg.solve(M[np.ix_(idx, idx)], -q[idx])
        assert np.any(z < 0) or np.any(M @ z + q < -1e-12)
    r = solve_lcp_lemke(M, q)
    assert r.status == "inconclusive" and r.certificate is None
    assert "no certificate of infeasibility" in r.message and "nonempty" in r.message

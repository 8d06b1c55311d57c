"""Tests of solvers.lcp: Lemke, Dantzig-style boxed pivoting, projected Gauss-Seidel.

References used here: brute-force enumeration of all complementary index sets
(standard LCP, n <= 8) and of all lower/upper/free partitions (boxed LCP, n <= 5);
the equivalent standard-LCP formulations of boxed and friction problems solved
by Lemke; the Coulomb box-friction conditions checked row by row.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from solvers.lcp import (
    STATUSES, LCPFallbackWarning, LCPResult, LCPSolveError, boxed_lcp_residual,
    boxed_lcp_to_lcp, lcp_residual, solve_boxed_lcp, solve_boxed_lcp_dantzig,
    solve_boxed_lcp_lemke, solve_boxed_lcp_pgs, solve_lcp, solve_lcp_lemke,
    solve_lcp_pgs)

TOL = 1e-8


def assert_farkas(M, q, y, tau=64.0):
    """Independent check of an infeasibility certificate of LCP(M, q): y >= 0, nonzero,
    M^T y <= tau n eps (|M|^T y) componentwise and q^T y < 0 (then no z >= 0 has
    M z + q >= 0 for some M + E, |E| <= tau n eps |M|)."""
    M, q = np.asarray(M, float), np.asarray(q, float)
    assert y is not None and y.shape == q.shape
    assert np.all(y >= 0) and y.sum() > 0
    y = y / y.sum()
    slack = tau * len(q) * np.finfo(float).eps
    assert np.all(M.T @ y <= slack * (np.abs(M).T @ y))
    assert q @ y < 0


# ------------------------------------------------------------ references --

def enumerate_lcp(M, q, tol=1e-9):
    """All basic solutions of LCP(M, q) over the 2^n complementary index sets."""
    n = len(q)
    sols = []
    for mask in itertools.product([False, True], repeat=n):
        S = np.flatnonzero(mask)
        z = np.zeros(n)
        if S.size:
            MSS = M[np.ix_(S, S)]
            zS, *_ = np.linalg.lstsq(MSS, -q[S], rcond=None)
            if np.max(np.abs(MSS @ zS + q[S])) > tol:
                continue
            z[S] = zS
        w = M @ z + q
        if np.all(z >= -tol) and np.all(w >= -tol):
            sols.append(np.maximum(z, 0.0))
    return sols


def enumerate_blcp(A, b, lo, hi, tol=1e-9):
    """All solutions of a boxed LCP (fixed bounds) over the 3^n partitions."""
    n = len(b)
    sols = []
    for part in itertools.product("LUF", repeat=n):
        part = np.array(part)
        if np.any(~np.isfinite(lo[part == "L"])) or np.any(~np.isfinite(hi[part == "U"])):
            continue
        x = np.where(part == "L", lo, np.where(part == "U", hi, 0.0))
        F = np.flatnonzero(part == "F")
        if F.size:
            O = np.flatnonzero(part != "F")
            AFF = A[np.ix_(F, F)]
            rhs = -(b[F] + A[np.ix_(F, O)] @ x[O])
            xF, *_ = np.linalg.lstsq(AFF, rhs, rcond=None)
            if np.max(np.abs(AFF @ xF - rhs)) > tol:
                continue
            x[F] = xF
        w = A @ x + b
        if (np.all(x >= lo - tol) and np.all(x <= hi + tol)
                and np.all(w[part == "L"] >= -tol) and np.all(w[part == "U"] <= tol)):
            sols.append(x)
    return sols


def random_pd(rng, n, shift=0.1):
    X = rng.standard_normal((n, n))
    return X @ X.T + shift * np.eye(n)


def problem_with_solution(rng, M, degenerate=0):
    """q such that LCP(M, q) has a known complementary solution; `degenerate`
    extra rows get z_i = w_i = 0."""
    n = M.shape[0]
    z = np.where(rng.random(n) < 0.5, rng.random(n) + 0.1, 0.0)
    w = np.where(z > 0, 0.0, rng.random(n) + 0.1)
    zero = rng.choice(n, size=min(degenerate, n), replace=False)
    z[zero] = 0.0
    w[zero] = 0.0
    return w - M @ z, z


def contact_problem(rng, n_contacts, n_friction, mu, nv=None, cfm=0.0):
    """Contact-like boxed LCP: per contact one normal row (lo=0, hi=inf) and
    `n_friction` friction rows (findex -> normal row, lo=-mu, hi=mu)."""
    m = n_contacts * (1 + n_friction)
    nv = nv or m + 3
    H = random_pd(rng, nv, shift=1.0)
    J = rng.standard_normal((m, nv))
    A = J @ np.linalg.solve(H, J.T) + cfm * np.eye(m)
    b = J @ rng.standard_normal(nv)
    lo = np.zeros(m)
    hi = np.full(m, np.inf)
    findex = -np.ones(m, dtype=int)
    for c in range(n_contacts):
        r = c * (1 + n_friction)
        b[r] = -abs(b[r]) - 0.5          # approaching: the contact is active
        lo[r + 1:r + 1 + n_friction] = -mu
        hi[r + 1:r + 1 + n_friction] = mu
        findex[r + 1:r + 1 + n_friction] = r
    return A, b, lo, hi, findex


def friction_as_lcp(A, b, mu, findex):
    """Standard LCP of the box-friction problem (normal rows lo=0, hi=inf,
    friction rows |x_i| <= mu x_j):  z = [x_N, b+, b-, lambda],
    x_T = b+ - b-;  w_N = A x + b;  (A x + b)_T + lambda ⟂ b+;
    -(A x + b)_T + lambda ⟂ b-;  mu x_j - b+ - b- ⟂ lambda."""
    N = np.flatnonzero(findex < 0)
    T = np.flatnonzero(findex >= 0)
    nN, nT = len(N), len(T)
    K = np.zeros((N.size + T.size, nN + 2 * nT))       # x = K @ [x_N, b+, b-]
    K[N, np.arange(nN)] = 1.0
    K[T, nN + np.arange(nT)] = 1.0
    K[T, nN + nT + np.arange(nT)] = -1.0
    AK = A @ K
    size = nN + 3 * nT
    M = np.zeros((size, size))
    q = np.zeros(size)
    M[:nN, :nN + 2 * nT] = AK[N]
    q[:nN] = b[N]
    M[nN:nN + nT, :nN + 2 * nT] = AK[T]
    M[nN:nN + nT, nN + 2 * nT:] = np.eye(nT)
    q[nN:nN + nT] = b[T]
    M[nN + nT:nN + 2 * nT, :nN + 2 * nT] = -AK[T]
    M[nN + nT:nN + 2 * nT, nN + 2 * nT:] = np.eye(nT)
    q[nN + nT:nN + 2 * nT] = -b[T]
    pos = {int(j): k for k, j in enumerate(N)}
    for k, i in enumerate(T):
        M[nN + 2 * nT + k, pos[int(findex[i])]] = mu[i]
        M[nN + 2 * nT + k, nN + k] = -1.0
        M[nN + 2 * nT + k, nN + nT + k] = -1.0
    return M, q, lambda z: K @ z[:nN + 2 * nT]


def check_coulomb(x, w, A, b, lo, hi, findex, tol=1e-7):
    """Row-by-row Coulomb box-friction conditions."""
    np.testing.assert_allclose(w, A @ x + b, atol=1e-12)
    for i in range(len(x)):
        j = findex[i]
        if j < 0:
            assert x[i] >= -tol and w[i] >= -tol and abs(x[i] * w[i]) <= tol
        else:
            bound = hi[i] * x[j]
            assert abs(x[i]) <= bound + tol
            if bound <= tol:
                continue                         # no normal force, no friction
            if abs(x[i]) < bound - tol:
                assert abs(w[i]) <= tol          # sticking
            elif x[i] > 0:
                assert w[i] <= tol               # sliding in -direction
            else:
                assert w[i] >= -tol


# ---------------------------------------------------------- standard LCP --

@pytest.mark.parametrize("n", range(1, 9))
def test_lemke_and_pgs_match_enumeration_positive_definite(n):
    rng = np.random.default_rng(100 + n)
    for _ in range(6):
        M = random_pd(rng, n)
        q = rng.standard_normal(n)
        ref = enumerate_lcp(M, q)
        assert len(ref) == 1                      # P-matrix: unique solution
        r = solve_lcp_lemke(M, q)
        assert r.status == "solved" and r.success
        np.testing.assert_allclose(r.z, ref[0], atol=1e-9)
        np.testing.assert_allclose(r.w, M @ r.z + q, atol=1e-12)
        assert r.residual <= 1e-10
        p = solve_lcp_pgs(M, q, max_iter=20000, tol=1e-11)
        assert p.status == "solved"
        np.testing.assert_allclose(p.z, ref[0], atol=1e-6)


@pytest.mark.parametrize("n", range(2, 9))
def test_lemke_positive_semidefinite_matches_enumeration(n):
    rng = np.random.default_rng(200 + n)
    for trial in range(6):
        r_rank = max(1, n // 2)
        B = rng.standard_normal((n, r_rank))
        M = B @ B.T
        if trial % 2:                              # nonsymmetric PSD: + skew
            S = rng.standard_normal((n, n))
            M = M + (S - S.T)
        q, _ = problem_with_solution(rng, M)
        r = solve_lcp_lemke(M, q)
        assert r.status == "solved", r.message
        assert r.residual <= 1e-9 and np.all(r.z >= 0) and np.all(r.w >= -1e-9)
        ref = enumerate_lcp(M, q)
        assert ref, "enumeration must find the constructed solution"
        if trial % 2 == 0:                         # symmetric PSD: w is unique
            np.testing.assert_allclose(r.w, M @ ref[0] + q, atol=1e-8)


@pytest.mark.parametrize("seed", range(12))
def test_lemke_degenerate_integer_problems(seed):
    """Integer data: many ties in the ratio test (lexicographic rule)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    B = rng.integers(-1, 2, size=(n, n)).astype(float)
    M = B @ B.T + np.eye(n)
    q = rng.integers(-2, 2, size=n).astype(float)
    ref = enumerate_lcp(M, q)
    r = solve_lcp_lemke(M, q)
    assert r.status == "solved"
    np.testing.assert_allclose(r.z, ref[0], atol=1e-10)


@pytest.mark.parametrize("seed", range(8))
def test_lemke_degenerate_constructed_solution(seed):
    """Solutions with z_i = w_i = 0 on several rows (degenerate vertex)."""
    rng = np.random.default_rng(300 + seed)
    n = 6
    M = random_pd(rng, n)
    q, z_true = problem_with_solution(rng, M, degenerate=3)
    r = solve_lcp_lemke(M, q)
    assert r.status == "solved"
    np.testing.assert_allclose(r.z, z_true, atol=1e-9)


def test_lemke_special_degenerate_cases():
    n = 5
    M = np.eye(n) + np.ones((n, n))
    # q = 0: z = 0 is the solution, no pivot.
    r = solve_lcp_lemke(M, np.zeros(n))
    assert r.status == "solved" and r.iterations == 0 and np.all(r.z == 0)
    # repeated entries: all rows tie in the first ratio test
    q = -np.ones(n)
    r = solve_lcp_lemke(M, q)
    np.testing.assert_allclose(r.z, np.full(n, 1.0 / (n + 1)), atol=1e-12)
    # zeros and repeated negatives mixed
    q = np.array([-1.0, 0.0, -1.0, 0.0, 2.0])
    ref = enumerate_lcp(M, q)
    r = solve_lcp_lemke(M, q)
    np.testing.assert_allclose(r.z, ref[0], atol=1e-12)


def test_lemke_covering_vector():
    rng = np.random.default_rng(15)
    for _ in range(5):
        M = random_pd(rng, 7)
        q = rng.standard_normal(7)
        ref = solve_lcp_lemke(M, q)
        r = solve_lcp_lemke(M, q, d=rng.random(7) + 0.1)
        assert r.status == "solved"
        np.testing.assert_allclose(r.z, ref.z, atol=1e-10)
    with pytest.raises(ValueError, match=r"d \(covering vector\) must be positive"):
        solve_lcp_lemke(np.eye(2), -np.ones(2), d=[1.0, 0.0])


def test_lemke_ray_termination_reported():
    # w = -z - 1 < 0 for every z >= 0: infeasible, y = 1 is a certificate
    r = solve_lcp_lemke(np.array([[-1.0]]), np.array([-1.0]))
    assert r.status == "infeasible" and not r.success
    assert r.residual == pytest.approx(1.0)
    assert_farkas([[-1.0]], [-1.0], r.certificate)
    # infeasible PSD problem: w_0 = -1 whatever z; the only certificate is y = e_0
    r = solve_lcp_lemke(np.array([[0.0, 0.0], [0.0, 1.0]]), np.array([-1.0, 0.5]))
    assert r.status == "infeasible"
    np.testing.assert_allclose(r.certificate, [1.0, 0.0])
    assert solve_lcp_lemke(np.eye(2), [-1.0, 0.5]).certificate is None
    with pytest.raises(LCPSolveError,
                       match=r"system 'plant' at t=0.125.*infeasible.*residual 1\.0"):
        solve_lcp(np.array([[-1.0]]), [-1.0], raise_on_failure=True,
                  context="system 'plant' at t=0.125")


def test_lemke_max_pivots_reported():
    rng = np.random.default_rng(5)
    M = random_pd(rng, 10)
    q = -rng.random(10) - 0.1
    r = solve_lcp_lemke(M, q, max_pivots=2)
    assert r.status == "max_iterations" and r.iterations == 2 and not r.success
    assert solve_lcp_lemke(M, q).iterations > 2


def test_lemke_warm_start_uses_no_pivots_at_the_solution():
    rng = np.random.default_rng(6)
    M = random_pd(rng, 20)
    q = rng.standard_normal(20)
    cold = solve_lcp_lemke(M, q)
    warm = solve_lcp_lemke(M, q, z0=cold.z)
    assert cold.iterations > 5 and warm.iterations == 0
    np.testing.assert_allclose(warm.z, cold.z, atol=1e-10)
    # a slightly perturbed problem needs fewer pivots from the old solution
    q2 = q + 0.01 * rng.standard_normal(20)
    w2 = solve_lcp_lemke(M, q2, z0=cold.z)
    c2 = solve_lcp_lemke(M, q2)
    assert w2.status == "solved" and w2.iterations < c2.iterations
    np.testing.assert_allclose(w2.z, c2.z, atol=1e-9)
    # a bad guess still gives the solution
    bad = solve_lcp_lemke(M, q, z0=np.ones(20))
    np.testing.assert_allclose(bad.z, cold.z, atol=1e-9)


def test_pgs_warm_start_and_sor():
    rng = np.random.default_rng(7)
    M = random_pd(rng, 15, shift=2.0)
    q = rng.standard_normal(15)
    exact = solve_lcp_lemke(M, q).z
    cold = solve_lcp_pgs(M, q, max_iter=5000)
    warm = solve_lcp_pgs(M, q, z0=exact + 1e-3 * rng.standard_normal(15), max_iter=5000)
    assert cold.status == warm.status == "solved"
    assert warm.iterations < cold.iterations
    sor = solve_lcp_pgs(M, q, omega=1.3, max_iter=5000)
    assert sor.status == "solved"
    np.testing.assert_allclose(sor.z, exact, atol=1e-6)
    short = solve_lcp_pgs(M, q, max_iter=1)
    assert short.status == "max_iterations" and not short.success
    assert short.residual > 1e-8


def test_pgs_refuses_zero_diagonal():
    r = solve_lcp_pgs(np.array([[0.0, 1.0], [-1.0, 0.0]]), np.array([-1.0, 1.0]))
    assert r.status == "singular" and "diagonal" in r.message


def test_front_door_fallback():
    rng = np.random.default_rng(8)
    M = random_pd(rng, 8, shift=1.0)
    q = rng.standard_normal(8) - 1.0
    with pytest.warns(LCPFallbackWarning, match="plant.*lemke failed"):
        r = solve_lcp(M, q, method="lemke", fallback="pgs", max_pivots=1, context="plant")
    assert r.status == "fallback" and r.success and r.method == "pgs"
    np.testing.assert_allclose(r.z, solve_lcp(M, q).z, atol=1e-6)
    # a proof of infeasibility is returned as is: no fallback, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", LCPFallbackWarning)
        r = solve_lcp([[-1.0]], [-1.0], fallback="pgs")
    assert r.status == "infeasible" and r.method == "lemke" and not r.success
    with pytest.raises(LCPSolveError, match="t=3.*infeasible"):
        solve_lcp([[-1.0]], [-1.0], fallback="pgs", raise_on_failure=True, context="t=3")
    # both fail (pivot limit, then a zero diagonal for PGS): not success, raised on request
    skew, qs = [[0.0, 1.0], [-1.0, 0.0]], [-1.0, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LCPFallbackWarning)
        r = solve_lcp(skew, qs, fallback="pgs", max_pivots=1)
        assert not r.success and r.status in ("max_iterations", "singular")
        with pytest.raises(LCPSolveError, match="t=3"):
            solve_lcp(skew, qs, fallback="pgs", max_pivots=1, raise_on_failure=True,
                      context="t=3")


def test_result_type_and_residual_helpers():
    r = solve_lcp(np.eye(2), [-1.0, 1.0], method="pgs")
    assert isinstance(r, LCPResult) and r.x is r.z and r.method == "pgs"
    with pytest.raises(AttributeError):
        r.status = "solved"
    assert lcp_residual([1.0, 0.0], [0.0, 2.0]) == 0.0
    assert lcp_residual([1.0, 0.5], [0.0, 2.0]) == 0.5
    assert boxed_lcp_residual([0.5], [1.0], [0.0], [1.0]) == 0.5
    assert boxed_lcp_residual([1.0, 0.5], [0.0, -1.0], [0.0, -0.5], [np.inf, 0.5],
                              [-1, 0]) == 0.0


# ------------------------------------------------------------- boxed LCP --

@pytest.mark.parametrize("n", range(1, 6))
def test_boxed_methods_match_enumeration(n):
    rng = np.random.default_rng(400 + n)
    for _ in range(5):
        A = random_pd(rng, n)
        b = 2 * rng.standard_normal(n)
        lo = -rng.random(n)
        hi = rng.random(n)
        lo[rng.random(n) < 0.3] = -np.inf
        hi[rng.random(n) < 0.3] = np.inf
        lo[rng.random(n) < 0.2] = 0.0
        ref = enumerate_blcp(A, b, lo, hi)
        assert len(ref) == 1
        for method, atol in (("dantzig", 1e-9), ("lemke", 1e-9), ("pgs", 1e-6)):
            r = solve_boxed_lcp(A, b, lo, hi, method=method, max_iter=20000) \
                if method == "pgs" else solve_boxed_lcp(A, b, lo, hi, method=method)
            assert r.status == "solved", (method, r.message)
            np.testing.assert_allclose(r.x, ref[0], atol=atol, err_msg=method)


@pytest.mark.parametrize("seed", range(10))
def test_boxed_degenerate_problems(seed):
    """Known solutions with rows that are on a bound and have w = 0, and
    integer data with ties everywhere."""
    rng = np.random.default_rng(800 + seed)
    n = 6
    A = random_pd(rng, n)
    lo, hi = -np.ones(n), np.ones(n)
    hi[0] = np.inf
    x = rng.choice([-1.0, 1.0, 0.3], size=n)
    x[0] = rng.choice([-1.0, 0.5])
    w = np.where(x == lo, rng.random(n), np.where(x == hi, -rng.random(n), 0.0))
    w[rng.choice(n, 3, replace=False)] = 0.0           # degenerate rows
    b = w - A @ x
    for method in ("dantzig", "lemke"):
        r = solve_boxed_lcp(A, b, lo, hi, method=method)
        assert r.status == "solved", (method, r.message)
        np.testing.assert_allclose(r.x, x, atol=1e-9)
    B = rng.integers(-1, 2, size=(n, n)).astype(float)
    A = B @ B.T + np.eye(n)
    b = rng.integers(-2, 3, size=n).astype(float)
    lo = -rng.integers(0, 2, size=n).astype(float)
    hi = rng.integers(0, 2, size=n).astype(float)
    hi[hi == lo] = np.inf
    ref = enumerate_blcp(A, b, lo, hi)
    for method in ("dantzig", "lemke"):
        r = solve_boxed_lcp(A, b, lo, hi, method=method)
        assert r.status == "solved"
        np.testing.assert_allclose(r.x, ref[0], atol=1e-9)


def test_boxed_nonsymmetric_positive_definite():
    """A = SPD + skew is a P-matrix: pivoting methods still match enumeration
    (PGS is only guaranteed for symmetric A and is not checked here)."""
    for seed in range(30):
        rng = np.random.default_rng(900 + seed)
        n = int(rng.integers(1, 6))
        S = rng.standard_normal((n, n))
        A = random_pd(rng, n) + (S - S.T)
        b = 2 * rng.standard_normal(n)
        lo, hi = -rng.random(n), rng.random(n)
        lo[rng.random(n) < 0.3] = -np.inf
        hi[rng.random(n) < 0.3] = np.inf
        ref = enumerate_blcp(A, b, lo, hi)
        assert len(ref) == 1
        for method in ("dantzig", "lemke"):
            r = solve_boxed_lcp(A, b, lo, hi, method=method)
            assert r.status == "solved"
            np.testing.assert_allclose(r.x, ref[0], atol=1e-9)


def test_boxed_bounds_not_containing_zero_and_fixed_rows():
    rng = np.random.default_rng(9)
    n = 5
    A = random_pd(rng, n)
    b = rng.standard_normal(n)
    lo = np.array([0.5, -3.0, 1.0, -np.inf, 0.2])
    hi = np.array([2.0, -1.0, 1.0, np.inf, np.inf])
    ref = enumerate_blcp(A, b, lo, hi)
    for method in ("dantzig", "lemke"):
        r = solve_boxed_lcp(A, b, lo, hi, method=method)
        assert r.status == "solved"
        np.testing.assert_allclose(r.x, ref[0], atol=1e-9)
    assert r.x[2] == 1.0


@pytest.mark.parametrize("seed", range(10))
def test_dantzig_agrees_with_lemke_on_standard_and_boxed_lcp(seed):
    rng = np.random.default_rng(500 + seed)
    n = 30
    A = random_pd(rng, n)
    b = rng.standard_normal(n)
    # lo = 0, hi = inf is the standard LCP
    d = solve_boxed_lcp(A, b, np.zeros(n), np.full(n, np.inf))
    lem = solve_lcp_lemke(A, b)
    assert d.status == lem.status == "solved"
    np.testing.assert_allclose(d.x, lem.z, atol=1e-9)
    # finite boxes through the equivalent standard LCP of size up to 2n
    lo, hi = -rng.random(n), rng.random(n)
    M, q, to_x = boxed_lcp_to_lcp(A, b, lo, hi)
    assert M.shape == (2 * n, 2 * n)
    lem = solve_lcp_lemke(M, q)
    d = solve_boxed_lcp_dantzig(A, b, lo, hi)
    assert lem.status == d.status == "solved"
    np.testing.assert_allclose(d.x, to_x(lem.z), atol=1e-9)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n_friction", [2, 4])
def test_friction_contact_problem(seed, n_friction):
    rng = np.random.default_rng(600 + seed)
    mu = 0.3 + 0.4 * rng.random()
    A, b, lo, hi, findex = contact_problem(rng, 3, n_friction, mu)
    d = solve_boxed_lcp(A, b, lo, hi, findex)
    assert d.status == "solved", d.message
    check_coulomb(d.x, d.w, A, b, lo, hi, findex)
    assert d.residual <= 1e-8
    # independent formulation: standard LCP with b+, b-, lambda solved by Lemke
    M, q, to_x = friction_as_lcp(A, b, hi, findex)
    lem = solve_lcp_lemke(M, q)
    assert lem.status == "solved", lem.message
    np.testing.assert_allclose(to_x(lem.z), d.x, atol=1e-7)
    # the final friction bounds as a fixed-bound BLCP: Lemke on its LCP
    fr = findex >= 0
    lo_f, hi_f = lo.copy(), hi.copy()
    lo_f[fr] = -mu * np.abs(d.x[findex[fr]])
    hi_f[fr] = mu * np.abs(d.x[findex[fr]])
    M2, q2, to_x2 = boxed_lcp_to_lcp(A, b, lo_f, hi_f)
    np.testing.assert_allclose(to_x2(solve_lcp_lemke(M2, q2).z), d.x, atol=1e-7)
    # PGS and the boxed Lemke path agree
    p = solve_boxed_lcp(A, b, lo, hi, findex, method="pgs", max_iter=20000)
    assert p.status == "solved"
    np.testing.assert_allclose(p.x, d.x, atol=1e-5)
    bl = solve_boxed_lcp(A, b, lo, hi, findex, method="lemke")
    assert bl.status == "solved"
    np.testing.assert_allclose(bl.x, d.x, atol=1e-7)


def test_friction_many_random_contact_problems():
    """Robustness sweep: 1-7 contacts, 2 or 4 friction rows, mu in [0.1, 1],
    with and without CFM; every solve is verified row by row."""
    lemke_stage = 0
    for seed in range(40):
        rng = np.random.default_rng(700 + seed)
        mu = 0.1 + 0.9 * rng.random()
        A, b, lo, hi, findex = contact_problem(rng, int(rng.integers(1, 8)),
                                               [2, 4][seed % 2], mu,
                                               cfm=1e-4 if seed % 3 == 0 else 0.0)
        r = solve_boxed_lcp(A, b, lo, hi, findex)
        assert r.status == "solved", (seed, r.message)
        check_coulomb(r.x, r.w, A, b, lo, hi, findex, tol=1e-6)
        lemke_stage += "Lemke" in r.message
    assert lemke_stage < 10       # the friction rounds settle most problems


def test_friction_asymmetric_bounds():
    """lo_i = -mu1, hi_i = mu2 with mu1 != mu2 (two multipliers in the LCP
    form): the three methods agree and the result satisfies both bounds."""
    for seed in range(6):
        rng = np.random.default_rng(950 + seed)
        A, b, lo, hi, findex = contact_problem(rng, 3, 2, 0.5)
        fr = findex >= 0
        lo[fr] = -0.2 - 0.6 * rng.random(fr.sum())
        d = solve_boxed_lcp(A, b, lo, hi, findex)
        lem = solve_boxed_lcp(A, b, lo, hi, findex, method="lemke")
        p = solve_boxed_lcp(A, b, lo, hi, findex, method="pgs", max_iter=20000)
        assert d.status == lem.status == p.status == "solved"
        np.testing.assert_allclose(lem.x, d.x, atol=1e-8)
        np.testing.assert_allclose(p.x, d.x, atol=1e-5)
        xn = d.x[findex[fr]]
        assert np.all(d.x[fr] >= lo[fr] * xn - 1e-9) and np.all(d.x[fr] <= hi[fr] * xn + 1e-9)
        at_lo = np.abs(d.x[fr] - lo[fr] * xn) < 1e-9
        at_hi = np.abs(d.x[fr] - hi[fr] * xn) < 1e-9
        inside = ~at_lo & ~at_hi
        assert np.all(d.w[fr][at_lo & ~at_hi] >= -1e-9)
        assert np.all(d.w[fr][at_hi & ~at_lo] <= 1e-9)
        assert np.all(np.abs(d.w[fr][inside]) <= 1e-9)


def test_friction_large_mu_both_stages():
    """mu = 1.6, 9 contacts: the friction rounds need 8 rounds; stopped after 2
    the Lemke stage runs.  Whatever each path returns as solved satisfies the
    Coulomb conditions; anything else is reported as a failure."""
    rng = np.random.default_rng(181)
    mu = 0.1 + 1.9 * rng.random()
    A, b, lo, hi, findex = contact_problem(rng, int(rng.integers(1, 10)), 4, mu)
    assert A.shape == (45, 45) and mu > 1.5
    full = solve_boxed_lcp(A, b, lo, hi, findex)
    assert full.status == "solved" and "8 friction rounds" in full.message
    check_coulomb(full.x, full.w, A, b, lo, hi, findex, tol=1e-6)
    short = solve_boxed_lcp(A, b, lo, hi, findex, max_friction_iter=2)
    assert "Lemke on the equivalent LCP" in short.message
    if short.success:
        check_coulomb(short.x, short.w, A, b, lo, hi, findex, tol=1e-6)
    else:
        assert short.residual > 1e-8 * np.max(np.abs(b))


def test_dantzig_partial_warm_start_matches_cold_solve():
    rng = np.random.default_rng(14)
    n = 25
    for _ in range(4):
        A = random_pd(rng, n)
        b = rng.standard_normal(n)
        lo, hi = -rng.random(n), rng.random(n)
        hi[:5] = np.inf
        cold = solve_boxed_lcp(A, b, lo, hi)
        b2 = b + 0.3 * rng.standard_normal(n)       # the partition changes
        warm = solve_boxed_lcp(A, b2, lo, hi, x0=cold.x)
        ref = solve_boxed_lcp(A, b2, lo, hi, method="lemke")
        assert warm.status == "solved" and warm.iterations < cold.iterations
        np.testing.assert_allclose(warm.x, ref.x, atol=1e-9)


def box_on_ground(v, mu, h=0.01, m=2.0, dims=(0.4, 0.3, 0.2), g=9.81):
    """One time step of a box resting on the ground on its 4 bottom corners:
    normal row + 2 friction rows (x, y) per corner.  v = [omega; v] (world
    axes, box frame aligned with them).  A = J H^-1 J^T has rank 6 < 12."""
    a, bb, c = (d / 2 for d in dims)
    H = np.diag([m / 3 * (bb**2 + c**2), m / 3 * (a**2 + c**2), m / 3 * (a**2 + bb**2), m, m, m])
    rows, lo, hi, findex = [], [], [], []
    for sx in (1, -1):
        for sy in (1, -1):
            p = np.array([sx * a, sy * bb, -c])
            r = len(rows)
            for d, bounds, f in ((np.array([0, 0, 1.0]), (0.0, np.inf), -1),
                                 (np.array([1.0, 0, 0]), (-mu, mu), r),
                                 (np.array([0, 1.0, 0]), (-mu, mu), r)):
                rows.append(np.r_[np.cross(p, d), d])    # d . (v + omega x p)
                lo.append(bounds[0])
                hi.append(bounds[1])
                findex.append(f)
    J = np.array(rows)
    Hinv = np.linalg.inv(H)
    v_free = v + h * Hinv @ np.r_[0, 0, 0, 0, 0, -m * g]
    A = J @ Hinv @ J.T
    return A, J @ v_free, np.array(lo), np.array(hi), np.array(findex), \
        lambda x: v_free + Hinv @ J.T @ x


@pytest.mark.parametrize("method", ["dantzig", "lemke", "pgs"])
def test_box_on_ground_time_step(method):
    """Analytic outcomes of one step (h = 0.01, mu = 0.3, mu g h = 0.02943):
    at rest it stays at rest; sliding at 1 m/s loses mu g h; sliding at
    0.01 m/s stops; the box-friction model brakes x and y separately.  The
    total normal impulse is m g h = 0.1962 in every case."""
    mu, h, g, m = 0.3, 0.01, 9.81, 2.0
    cases = [(np.zeros(6), np.zeros(6)),
             (np.r_[0, 0, 0, 1.0, 0, 0], np.r_[0, 0, 0, 1.0 - mu * g * h, 0, 0]),
             (np.r_[0, 0, 0, 0.01, 0, 0], np.zeros(6)),
             (np.r_[0, 0, 0, 0.6, 0.8, 0], np.r_[0, 0, 0, 0.6 - mu * g * h, 0.8 - mu * g * h, 0])]
    for v, v_expected in cases:
        A, b, lo, hi, findex, v_next = box_on_ground(v, mu, h=h, m=m, g=g)
        assert np.linalg.matrix_rank(A) == 6
        r = solve_boxed_lcp(A, b, lo, hi, findex, method=method, **(
            {"max_iter": 5000} if method == "pgs" else {}))
        assert r.success, r.message
        np.testing.assert_allclose(v_next(r.x), v_expected, atol=1e-6)
        assert r.x[::3].sum() == pytest.approx(m * g * h, abs=1e-7)
        check_coulomb(r.x, r.w, A, b, lo, hi, findex, tol=1e-6)


def test_sliding_spinning_box_comes_to_rest_with_warm_starts():
    """150 steps of a box sliding (2, 0.5) m/s and spinning 0.8 rad/s about z:
    kinetic energy never increases, the box ends at rest, and warm starts
    from the previous step's impulses make most steps pivot-free."""
    m, dims = 2.0, (0.4, 0.3, 0.2)
    a, bb, c = (d / 2 for d in dims)
    H = np.diag([m / 3 * (bb**2 + c**2), m / 3 * (a**2 + c**2), m / 3 * (a**2 + bb**2), m, m, m])
    v = np.r_[0, 0, 0.8, 2.0, 0.5, 0]
    x, energy, pivot_free = None, [0.5 * v @ H @ v], 0
    for _ in range(150):
        A, b, lo, hi, findex, v_next = box_on_ground(v, 0.4, m=m, dims=dims)
        r = solve_boxed_lcp(A, b, lo, hi, findex, x0=x)
        assert r.status == "solved", r.message
        x, v = r.x, v_next(r.x)
        energy.append(0.5 * v @ H @ v)
        pivot_free += r.iterations == 0
    assert np.all(np.diff(energy) <= 1e-12)
    np.testing.assert_allclose(v, np.zeros(6), atol=1e-9)
    assert pivot_free > 120


def test_friction_sliding_and_sticking_single_contact():
    """Unit mass point on a plane: A = I.  Normal push b_n < 0, tangential
    velocity b_t.  Sticking when |b_t| <= mu |b_n|, else sliding."""
    A = np.eye(2)
    lo, hi, fi = np.array([0.0, -0.5]), np.array([np.inf, 0.5]), [-1, 0]
    r = solve_boxed_lcp(A, [-2.0, 0.3], lo, hi, fi)        # sticks: f_t = -0.3
    np.testing.assert_allclose(r.x, [2.0, -0.3], atol=1e-12)
    np.testing.assert_allclose(r.w, [0.0, 0.0], atol=1e-12)
    r = solve_boxed_lcp(A, [-2.0, 3.0], lo, hi, fi)        # slides: f_t = -mu f_n
    np.testing.assert_allclose(r.x, [2.0, -1.0], atol=1e-12)
    np.testing.assert_allclose(r.w, [0.0, 2.0], atol=1e-12)
    r = solve_boxed_lcp(A, [1.0, 3.0], lo, hi, fi)         # separating: no force
    np.testing.assert_allclose(r.x, [0.0, 0.0], atol=1e-12)


def test_dantzig_warm_start():
    rng = np.random.default_rng(11)
    A, b, lo, hi, findex = contact_problem(rng, 4, 2, 0.4)
    cold = solve_boxed_lcp(A, b, lo, hi, findex)
    warm = solve_boxed_lcp(A, b, lo, hi, findex, x0=cold.x)
    assert cold.iterations > 0 and warm.iterations == 0 and warm.status == "solved"
    np.testing.assert_allclose(warm.x, cold.x, atol=1e-10)
    b2 = b + 0.01 * rng.standard_normal(b.size)
    w2 = solve_boxed_lcp(A, b2, lo, hi, findex, x0=cold.x)
    c2 = solve_boxed_lcp(A, b2, lo, hi, findex)
    assert w2.status == "solved"
    np.testing.assert_allclose(w2.x, c2.x, atol=1e-9)
    p_cold = solve_boxed_lcp_pgs(A, b, lo, hi, findex, max_iter=20000)
    p_warm = solve_boxed_lcp_pgs(A, b, lo, hi, findex, x0=cold.x, max_iter=20000)
    assert p_warm.iterations < p_cold.iterations


def test_boxed_positive_semidefinite():
    """Rank-deficient A (more contact rows than freedoms): Lemke path and PGS
    solve it; Dantzig either solves it or reports failure, never a wrong
    'solved'."""
    rng = np.random.default_rng(12)
    for seed in range(5):
        A, b, lo, hi, findex = contact_problem(np.random.default_rng(seed), 4, 2, 0.5, nv=6)
        assert np.linalg.matrix_rank(A) == 6 < A.shape[0]
        lo0, hi0 = np.zeros(4), np.full(4, np.inf)
        An, bn = A[::3, ::3], b[::3]
        lem = solve_boxed_lcp_lemke(An, bn, lo0, hi0)
        assert lem.status == "solved"
        d = solve_boxed_lcp(A, b, lo, hi, findex, fallback="lemke")
        if d.status == "solved":
            check_coulomb(d.x, d.w, A, b, lo, hi, findex, tol=1e-6)
        else:
            assert d.status == "fallback" or not d.success
    del rng


def test_boxed_failure_reporting():
    A = np.ones((2, 2))                      # singular, bilateral, infeasible
    b = np.array([-1.0, -2.0])
    free = np.full(2, np.inf)
    r = solve_boxed_lcp(A, b, -free, free)
    assert not r.success and r.status in STATUSES and r.certificate is None
    # Lemke on the equivalent LCP proves it: x_0 + x_1 cannot be 1 and 2
    r = solve_boxed_lcp(A, b, -free, free, method="lemke")
    assert r.status == "infeasible" and not r.success
    M, q, _ = boxed_lcp_to_lcp(A, b, -free, free)
    assert_farkas(M, q, r.certificate)
    with pytest.raises(LCPSolveError, match=r"system 'plant' at t=0.125.*residual"):
        solve_boxed_lcp(A, b, -free, free, raise_on_failure=True,
                        context="system 'plant' at t=0.125")
    rng = np.random.default_rng(13)
    A, b, lo, hi, findex = contact_problem(rng, 3, 2, 0.5)
    with pytest.warns(LCPFallbackWarning, match="dantzig failed"):
        r = solve_boxed_lcp(A, b, lo, hi, findex, fallback="pgs", max_pivots=1)
    assert r.status == "fallback" and r.method == "pgs"
    assert r.residual <= 1e-8 * max(1.0, np.max(np.abs(b)))
    r = solve_boxed_lcp(A, b, lo, hi, findex, max_friction_iter=1)
    assert r.status == "solved" and "Lemke on the equivalent LCP" in r.message
    lo2 = lo.copy()
    lo2[0] = -1.0                  # normal row with lo < 0: no LCP form
    r = solve_boxed_lcp(A, b, lo2, hi, findex, max_friction_iter=1)
    assert r.status in ("solved", "max_iterations")
    if r.status == "max_iterations":
        assert "no LCP form" in r.message and not r.success


# ------------------------------------------------------------ validation --

@pytest.mark.parametrize("call, match", [
    (lambda: solve_lcp(np.ones((2, 3)), np.ones(2)), r"M must be a square.*\(2, 3\)"),
    (lambda: solve_lcp(np.eye(2), np.ones(3)), r"q must have shape.*\(2,\).*\(3,\)"),
    (lambda: solve_lcp(np.eye(2), [1.0, np.nan]), r"q must be finite"),
    (lambda: solve_lcp(np.eye(2), np.ones(2), method="simplex"), r"method must be one of"),
    (lambda: solve_lcp(np.eye(2), np.ones(2), fallback="lemke"), r"fallback must be"),
    (lambda: solve_lcp_pgs(np.eye(2), np.ones(2), omega=2.5), r"omega must be in \(0, 2\)"),
    (lambda: solve_lcp_lemke(np.eye(2), np.ones(2), z0=np.ones(3)), r"z0 must have shape"),
    (lambda: solve_boxed_lcp(np.eye(2), np.ones(2), [0, 1], [1, 0]), r"lo must be <= hi; row 1"),
    (lambda: solve_boxed_lcp(np.eye(2), np.ones(2), [0, 0], [1]), r"hi must have shape"),
    (lambda: solve_boxed_lcp(np.eye(2), np.ones(2), [0, 0], [1, 1], [-1, 5]),
     r"findex\[1\] = 5 must be -1 or a row index"),
    (lambda: solve_boxed_lcp(np.eye(2), np.ones(2), [0, 0], [1, 1], [-1, 1]),
     r"findex\[1\] = 1"),
    (lambda: solve_boxed_lcp(np.eye(2), np.ones(2), [0, 0], [1, 1], [-1]), r"findex must be"),
    (lambda: solve_boxed_lcp(np.eye(2), np.ones(2), [0, -np.inf], [1, 1], [-1, 0]),
     r"friction rows.*finite"),
    (lambda: solve_boxed_lcp(np.ones((3, 2)), np.ones(3), np.zeros(3), np.ones(3)),
     r"A must be a square"),
    (lambda: boxed_lcp_to_lcp(np.eye(2), np.ones(2), [-1, -1], [1, 1], [-1, 0]),
     r"normal row of a friction row has lo < 0"),
])
def test_bad_input_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_type_error_and_empty_problem():
    with pytest.raises(TypeError, match="q must be a real array"):
        solve_lcp(np.eye(1), ["a"])
    ca = pytest.importorskip("casadi")
    with pytest.raises(TypeError, match="M is a CasADi symbolic value.*numeric only"):
        solve_lcp(ca.SX.sym("M", 2, 2), np.ones(2))
    with pytest.raises(TypeError, match="b is a CasADi symbolic value"):
        solve_boxed_lcp(np.eye(2), ca.SX.sym("b", 2), np.zeros(2), np.ones(2))
    for method in ("lemke", "pgs"):
        r = solve_lcp(np.zeros((0, 0)), np.zeros(0), method=method)
        assert r.success and r.z.shape == (0,)
    r = solve_boxed_lcp(np.zeros((0, 0)), [], [], [])
    assert r.success


def test_benchmark_script_quick_run(capsys, monkeypatch):
    import importlib.util
    import pathlib
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(var, "1")             # restored after the test
    path = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "bench_lcp.py"
    spec = importlib.util.spec_from_file_location("bench_lcp", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(["--quick"])
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["problem", "n", "method"]
    assert len(out) == 1 + 2 * 9 and all(" solved " in line for line in out[1:])


def test_every_public_parameter_is_documented_and_unknown_keywords_refused():
    import inspect
    import re

    import solvers.lcp as lcp
    for name in lcp.__all__:
        obj = getattr(lcp, name)
        if not inspect.isfunction(obj):
            continue
        doc = inspect.getdoc(obj) or ""
        assert "Parameters" in doc or name.endswith("residual"), name
        for p in inspect.signature(obj).parameters.values():
            pname = p.name if p.kind is not p.VAR_KEYWORD else "**" + p.name
            assert re.search(rf"(^|[\s,`]){re.escape(pname)}([\s,:`]|$)", doc), (name, pname)
    with pytest.raises(TypeError, match="max_pivot"):
        solve_lcp(np.eye(2), np.ones(2), max_pivot=3)
    with pytest.raises(TypeError, match="omega"):
        solve_boxed_lcp(np.eye(2), np.ones(2), np.zeros(2), np.ones(2), omega=1.2)


def test_lemke_long_run_with_refactorization():
    """n = 90: more pivots than the refactorization period of the basis
    inverse; Lemke, Dantzig and PGS agree."""
    rng = np.random.default_rng(16)
    n = 90
    M = random_pd(rng, n, shift=1.0)
    q = rng.standard_normal(n) - 0.5
    r = solve_lcp_lemke(M, q)
    assert r.status == "solved" and r.iterations > 50 and r.residual < 1e-10
    d = solve_boxed_lcp(M, q, np.zeros(n), np.full(n, np.inf))
    np.testing.assert_allclose(d.x, r.z, atol=1e-9)
    p = solve_lcp_pgs(M, q, z0=r.z + 0.01, max_iter=5000, tol=1e-12)
    np.testing.assert_allclose(p.z, r.z, atol=1e-7)


def test_lemke_warm_start_on_infeasible_problem_falls_back_to_cold():
    r = solve_lcp_lemke([[-1.0]], [-1.0], z0=[1.0])
    assert r.status == "infeasible" and "warm start ended with" in r.message
    assert_farkas([[-1.0]], [-1.0], r.certificate)


def test_dantzig_consistent_singular_bilateral_rows():
    """Duplicated equality rows (A singular, consistent): one row is frozen
    and the answer verifies."""
    A = np.ones((2, 2))
    r = solve_boxed_lcp(A, [-1.0, -1.0], [-np.inf] * 2, [np.inf] * 2)
    assert r.status == "solved" and r.residual == 0.0
    assert r.x.sum() == pytest.approx(1.0)


def test_friction_with_a_pulling_normal_row():
    """Normal row with lo = -1 (can pull): no LCP form of the friction
    problem, so the Lemke method runs friction rounds of fixed-bound solves."""
    rng = np.random.default_rng(17)
    A, b, lo, hi, findex = contact_problem(rng, 2, 2, 0.4)
    lo[0] = -1.0
    b[0] = 3.0                                   # pulls: x_0 < 0
    for method in ("dantzig", "lemke"):
        r = solve_boxed_lcp(A, b, lo, hi, findex, method=method)
        assert r.status == "solved", (method, r.message)
        assert r.x[0] < 0
        fr = findex >= 0
        assert np.all(np.abs(r.x[fr]) <= 0.4 * np.abs(r.x[findex[fr]]) + 1e-9)
    np.testing.assert_allclose(
        solve_boxed_lcp(A, b, lo, hi, findex, method="lemke").x,
        solve_boxed_lcp(A, b, lo, hi, findex).x, atol=1e-8)


def test_residual_tolerance_decides_status():
    rng = np.random.default_rng(18)
    M = random_pd(rng, 8)
    q = rng.standard_normal(8)
    r = solve_lcp_lemke(M, q, residual_tol=0.0)
    assert r.status == ("inaccurate" if r.residual > 0 else "solved")
    assert solve_lcp_lemke(M, q).status == "solved"


def test_statuses_are_documented_and_a_large_residual_is_a_breakdown(monkeypatch):
    """Every status has its guarantee written down; a pivoting run whose final basis
    solve is off (as a LAPACK build may leave it on a nearly singular basis) is
    'inaccurate' only within 1e-6 max(1, |q|), 'breakdown' beyond, never 'solved'."""
    assert set(STATUSES) == {"solved", "fallback", "infeasible", "inaccurate", "breakdown",
                             "inconclusive", "singular", "unbounded", "max_iterations"}
    assert all(isinstance(v, str) and len(v) > 40 for v in STATUSES.values())
    rng = np.random.default_rng(19)
    M = random_pd(rng, 6)
    q = -rng.random(6) - 1.0                      # every z_i basic at the solution
    scale = max(1.0, np.max(np.abs(q)))
    exact = solve_lcp_lemke(M, q)
    assert exact.status == "solved" and exact.residual <= 1e-8 * scale
    real = np.linalg.solve
    # z + o has the residual o max|M 1| (w = o M 1 on the basic z)
    near = 3e-7 * scale / np.max(np.abs(M @ np.ones(6)))
    for offset, status in [(1e4, "breakdown"), (near, "inaccurate")]:
        monkeypatch.setattr(np.linalg, "solve", lambda a, b, o=offset: real(a, b) + o)
        r = solve_lcp_lemke(M, q)
        monkeypatch.setattr(np.linalg, "solve", real)
        assert r.status == status and not r.success, r.message
        assert r.residual == pytest.approx(lcp_residual(r.z, M @ r.z + q))
        if status == "inaccurate":
            assert 1e-8 * scale < r.residual <= 1e-6 * scale
        else:
            assert r.residual > 1e-6 * scale and "broke down" in r.message
            assert r.certificate is None


def test_input_forms_accepted():
    r = solve_lcp(np.eye(2), np.array([[-1.0], [2.0]]))         # column q
    np.testing.assert_allclose(r.z, [1.0, 0.0])
    r = solve_boxed_lcp(np.eye(2), [1.0, -1.0], [0, -0.5], [np.inf, 0.5],
                        np.array([-1.0, 0.0]))                   # integral floats
    assert r.success
    with pytest.raises(ValueError, match=r"lo must not contain NaN; lo\[1\]"):
        solve_boxed_lcp(np.eye(2), np.ones(2), [0, np.nan], [1, 1])
    with pytest.raises(ValueError, match=r"lo must be < \+inf"):
        solve_boxed_lcp(np.eye(2), np.ones(2), [0, np.inf], [1, np.inf])
    with pytest.raises(ValueError, match="max_iter must be >= 0"):
        solve_lcp_pgs(np.eye(2), np.ones(2), max_iter=-1)

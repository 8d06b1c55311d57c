"""Lemke's ray termination on positive-definite matrices so badly conditioned (cond 1e16
and more) that their rounded copies are not positive definite any more (smallest eigenvalue
-1e-17): still "inconclusive", never the claim that the LCP has no solution (it has one in
exact arithmetic); exactly singular and skew problems keep the proof of infeasibility."""
import numpy as np
import pytest

from solvers.lcp import solve_lcp_lemke


def _pd(seed):
    """A positive-definite matrix (in exact arithmetic) with eigenvalues from 1 down to
    1e-12 .. 1e-17 and a random q, as in tests/solvers/test_lemke_conditioning.py."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 12))
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    M = Q @ np.diag(np.logspace(0, -rng.uniform(12, 17), n)) @ Q.T
    return 0.5 * (M + M.T), rng.normal(size=n)


@pytest.mark.parametrize("seed", [20, 198])
def test_a_ray_on_a_rounded_positive_definite_matrix_is_inconclusive(seed):
    M, q = _pd(seed)
    assert np.linalg.eigvalsh(M)[0] <= 0 and np.linalg.cond(M) > 1e16   # rounded: not PD
    r = solve_lcp_lemke(M, q)
    assert r.status == "inconclusive" and not r.success
    assert "positive definite to within roundoff" in r.message
    assert "not a proof of infeasibility" in r.message


def test_no_ray_on_badly_conditioned_positive_definite_matrices_claims_infeasibility():
    statuses = {solve_lcp_lemke(*_pd(seed)).status for seed in range(60)}
    assert "ray_termination" not in statuses
    assert "solved" in statuses and "inconclusive" in statuses


def test_exactly_singular_and_skew_infeasible_problems_keep_the_proof():
    # w_0 = -1 whatever z (cond(M) infinite)
    r = solve_lcp_lemke(np.array([[0.0, 0.0], [0.0, 1.0]]), np.array([-1.0, 0.5]))
    assert r.status == "ray_termination"
    # skew M (copositive-plus, well conditioned): w1 = z2 - 1 >= 0, then w2 = -z1 - 1 < 0
    r = solve_lcp_lemke(np.array([[0.0, 1.0], [-1.0, 0.0]]), np.array([-1.0, -1.0]))
    assert r.status == "ray_termination"

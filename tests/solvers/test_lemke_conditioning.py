"""Lemke's ray termination is a proof of infeasibility only for copositive-plus M that is not
positive definite and not numerically singular; for a badly conditioned positive-definite M
(whose LCP always has a solution) it is reported as "inconclusive" (tests/solvers/
test_lemke_rays.py covers the numerically singular cases)."""
import numpy as np

from solvers.lcp import solve_lcp_lemke


def _badly_conditioned(seed, n=8):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    ev = np.logspace(0, -rng.uniform(12, 16), n)
    M = Q @ np.diag(ev) @ Q.T
    return 0.5 * (M + M.T), rng.normal(size=n)


def test_ray_on_a_positive_definite_matrix_is_inconclusive():
    M, q = _badly_conditioned(4)
    assert np.linalg.eigvalsh(M)[0] > 0 and np.linalg.cond(M) > 1e12
    r = solve_lcp_lemke(M, q)
    assert r.status == "inconclusive"
    assert "positive definite" in r.message and "not a proof of infeasibility" in r.message


def test_a_truly_infeasible_copositive_problem_still_proves_infeasibility():
    # M = [[0, 1], [-1, 0]] is skew (copositive-plus, not PD); q = (-1, -1) has no solution:
    # w1 = z2 - 1 >= 0 needs z2 >= 1, then w2 = -z1 - 1 < 0.
    r = solve_lcp_lemke(np.array([[0.0, 1.0], [-1.0, 0.0]]), np.array([-1.0, -1.0]))
    assert r.status == "ray_termination"

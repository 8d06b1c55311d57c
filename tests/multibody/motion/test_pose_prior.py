"""gaussian_pose_prior: Schaefer-Strimmer's shrinkage against a plain-loop implementation and
its limits (uncorrelated data -> near 1, strongly correlated -> near 0); the posture is the
manifold mean (ball joint included), ``W^T W = s^2 Sigma^-1``; with a known motion of the
walker seen only through its pelvis and foot markers, the coupled prior learnt from 12 poses
recovers the unseen joints four times better than the per-axis stiffness (shrinkage 1);
MarkerFitter's matrix prior equals the per-axis one when diagonal; bad input."""
import numpy as np
import pytest

import _motion_models as W
from multibody.motion import MarkerFitError, MarkerFitter
from multibody.motion.pose_prior import gaussian_pose_prior, shrinkage_intensity


def _lambda_by_loops(D):
    """Schaefer and Strimmer's lambda* for target D, written out element by element."""
    n, p = D.shape
    Z = (D - D.mean(axis=0)) / D.std(axis=0, ddof=1)
    num = den = 0.0
    for i in range(p):
        for j in range(p):
            if i == j:
                continue
            w = Z[:, i] * Z[:, j]
            r = n / (n - 1) * w.mean()
            num += n / (n - 1) ** 3 * np.sum((w - w.mean()) ** 2)
            den += r * r
    return min(1.0, max(0.0, num / den))


def test_shrinkage_intensity():
    rng = np.random.default_rng(1)
    D = rng.normal(size=(15, 6)) @ rng.normal(size=(6, 6))
    assert shrinkage_intensity(D) == pytest.approx(_lambda_by_loops(D), rel=1e-12)
    # independent axes: the sample correlations are all noise -> shrink (almost) fully
    assert shrinkage_intensity(rng.normal(size=(400, 5))) > 0.7
    # one factor drives every axis: keep the correlations
    f = rng.normal(size=(30, 1))
    assert shrinkage_intensity(f @ np.ones((1, 5)) + 0.01 * rng.normal(size=(30, 5))) < 0.1
    # an axis that never moves has no correlation; it is left out
    Dz = np.column_stack([D, np.zeros(15)])
    assert shrinkage_intensity(Dz) == pytest.approx(shrinkage_intensity(D), rel=1e-12)
    assert shrinkage_intensity(D[:1]) == 1.0
    with pytest.raises(MarkerFitError, match="shrinkage_intensity: D must be a 2-D"):
        shrinkage_intensity(D[0])
    Dn = D.copy()
    Dn[4, 2] = np.inf
    with pytest.raises(MarkerFitError, match="D must be finite, not at row 4"):
        shrinkage_intensity(Dn)


@pytest.fixture(scope="module")
def case():
    tree = W.walker()
    t = np.arange(0.0, 2.0, 1.0 / 60)
    Q, _, _ = W.known_motion(tree, t, ankle_offset=(-0.2, 0.0))   # balance not needed
    X = np.array([MarkerFitter(tree, W.markers()).marker_positions(q) for q in Q])
    cal = np.unique(np.linspace(0, t.size - 1, 12).astype(int))
    return tree, t, Q, X, cal


def test_posture_covariance_and_matrix(case):
    tree, t, Q, X, cal = case
    prior = gaussian_pose_prior(tree, Q[cal], reference_q=Q[0], scale=0.02)
    # the root keeps the reference's coordinates; the joints' deviations average to zero
    # (the manifold mean, the ball joint's quaternion included)
    np.testing.assert_allclose(prior.posture[:7], Q[0, :7])
    dev = np.array([tree.difference(prior.posture, q) for q in Q[cal]])
    np.testing.assert_allclose(dev[:, 6:].mean(axis=0), 0.0, atol=1e-10)
    assert np.all(prior.matrix[:6] == 0) and np.all(prior.matrix[:, :6] == 0)
    J = slice(6, tree.nv)
    WtW = prior.matrix[J, J].T @ prior.matrix[J, J]
    np.testing.assert_allclose(WtW, 0.02 ** 2 * np.linalg.inv(prior.covariance[J, J]),
                               rtol=1e-8, atol=1e-8 * np.abs(WtW).max())
    np.testing.assert_allclose(prior.std[J], dev[:, 6:].std(axis=0), rtol=1e-12)
    assert 0.0 < prior.shrinkage < 1.0
    # Sigma rebuilt from the deviations: Schaefer-Strimmer's target D keeps the variances
    # (floored at min_std^2) and shrinks the covariances by (1 - lambda)
    S = dev[:, 6:].T @ dev[:, 6:] / len(cal)
    lam = shrinkage_intensity(dev[:, 6:])
    assert prior.shrinkage == pytest.approx(lam, rel=1e-12)
    expect = (1 - lam) * S
    np.fill_diagonal(expect, np.maximum(np.diag(S), np.radians(1.0) ** 2))
    np.testing.assert_allclose(prior.covariance[J, J], expect, rtol=1e-10, atol=1e-16)
    # shrinkage 1: the per-axis stiffness s / max(std, min_std)
    diag = gaussian_pose_prior(tree, Q[cal], reference_q=Q[0], scale=0.02, shrinkage=1.0)
    k = np.abs(diag.matrix[J, J])
    np.testing.assert_allclose(np.diag(k), 0.02 / np.maximum(prior.std[J], np.radians(1.0)))
    assert np.all(k - np.diag(np.diag(k)) == 0)


def test_coupled_prior_carries_the_unseen_joints(case):
    tree, t, Q, X, cal = case
    keep = [i for i, m in enumerate(W.markers()) if m[1] in ("pelvis", "l_foot", "r_foot")]
    seen = [W.markers()[i] for i in keep]

    def error(shrinkage):
        prior = gaussian_pose_prior(tree, Q[cal], reference_q=Q[0], scale=0.01,
                                    shrinkage=shrinkage)
        fit = MarkerFitter(tree, seen, preferred_q=prior.posture, prior_weight=prior.matrix
                           ).fit(X[:, keep], q0=Q[0])
        d = np.array([tree.difference(a, b) for a, b in zip(Q, fit.q)])[:, 6:]
        return float(np.degrees(np.sqrt(np.mean(d ** 2))))
    coupled, per_axis = error(None), error(1.0)
    # measured: 0.41 deg coupled, 1.60 deg per axis (spine and hips unseen)
    assert coupled < 0.6 and per_axis > 1.2 and coupled < 0.35 * per_axis


def test_marker_fitter_matrix_prior_equals_the_diagonal_one(case):
    tree, t, Q, X, cal = case
    lam = np.linspace(0.01, 0.05, tree.nv)
    a = MarkerFitter(tree, W.markers()[:10], prior_weight=lam)
    b = MarkerFitter(tree, W.markers()[:10], prior_weight=np.diag(lam))
    np.testing.assert_allclose(a.prior_matrix, b.prior_matrix)
    np.testing.assert_allclose(a.fit(X[:20, :10]).q, b.fit(X[:20, :10]).q, atol=1e-12)
    with pytest.raises(MarkerFitError, match=f"\\({tree.nv}, {tree.nv}\\) matrix"):
        MarkerFitter(tree, W.markers(), prior_weight=np.eye(3))


def test_bad_input_is_named(case):
    tree, t, Q, X, cal = case
    with pytest.raises(MarkerFitError, match="at least 2 finite configurations"):
        gaussian_pose_prior(tree, Q[:1])
    with pytest.raises(MarkerFitError, match="at least 2 finite configurations"):
        gaussian_pose_prior(tree, Q[:5, :10])
    with pytest.raises(MarkerFitError, match="reference_q"):
        gaussian_pose_prior(tree, Q[cal], reference_q=Q[0, :5])
    with pytest.raises(MarkerFitError, match="scale and min_std"):
        gaussian_pose_prior(tree, Q[cal], scale=0.0)
    with pytest.raises(MarkerFitError, match="shrinkage must be in"):
        gaussian_pose_prior(tree, Q[cal], shrinkage=1.5)
    with pytest.raises(MarkerFitError, match="not positive definite"):
        gaussian_pose_prior(tree, Q[cal[:4]], shrinkage=0.0)     # 4 poses, 15 axes


def test_an_axis_the_poses_do_not_move_is_held_at_min_std(case):
    """A joint coordinate constant over the poses: its variance is the floor min_std^2 at any
    shrinkage (not lambda min_std^2, a stiffer joint than asked for), and it is uncoupled."""
    tree, t, Q, X, cal = case
    P = Q[cal].copy()
    j = next(j for j in tree.joints if j.type == "revolute")
    P[:, j.q_start] = 0.1
    prior = gaussian_pose_prior(tree, P, reference_q=Q[0], scale=0.02, shrinkage=0.3)
    i = j.v_start
    assert prior.covariance[i, i] == pytest.approx(np.radians(1.0) ** 2, rel=1e-9)
    off = np.delete(prior.covariance[i], i)
    assert np.all(np.abs(off) < 1e-12)

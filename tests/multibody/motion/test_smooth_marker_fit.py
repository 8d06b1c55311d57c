"""SmoothMarkerFitter: a known smooth motion of the free-floating walker (ball, Euler, hinge
and universal joints) seen through a reduced marker set (no thigh or shank markers), 5 mm of
noise and the left foot's markers missing for 20 frames, is recovered far better by the
whole-trial fit with the acceleration penalty than frame by frame; with the penalty off it is
the per-frame fit; exact Jacobians of the configuration differences and gradient of the cost; bad input."""
import warnings

import numpy as np
import pytest

import _motion_models as W
from multibody.motion import MarkerFitError, MarkerFitter, MarkerSetError
from multibody.motion.smooth_marker_fit import SmoothMarkerFitResult, SmoothMarkerFitter

RATE = 120.0


@pytest.fixture(scope="module")
def case():
    tree = W.walker()
    t = np.arange(0.0, 1.0, 1.0 / RATE)
    Q, _, _ = W.known_motion(tree, t, ankle_offset=(-0.2, 0.0))   # balance not needed
    every = W.markers()
    exact = np.array([MarkerFitter(tree, every).marker_positions(q) for q in Q])
    keep = [i for i, m in enumerate(every) if "thigh" not in m[1] and "shank" not in m[1]]
    reduced = [every[i] for i in keep]
    X = exact[:, keep] + np.random.default_rng(0).normal(scale=0.005, size=(t.size, len(keep), 3))
    gap = [i for i, (n, _, _) in enumerate(reduced) if n in ("LHEE", "LTOE", "LMT5")]
    X[40:60, gap] = np.nan                      # the left foot unseen for 1/6 s
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # no held frame: four pelvis markers stay
        fitter = MarkerFitter(tree, reduced, prior_weight=0.01)
        per_frame = fitter.fit(X)
    return tree, t, Q, X, fitter, per_frame


def _rms_deg(tree, Qa, Qb, sl=slice(None)):
    d = np.array([tree.difference(a, b) for a, b in zip(Qa[sl], Qb[sl])])[:, 6:]
    return float(np.degrees(np.sqrt(np.mean(d ** 2))))


def test_reduced_noisy_markers_recovered_better_than_per_frame(case):
    tree, t, Q, X, fitter, per_frame = case
    res = SmoothMarkerFitter(fitter, 1e-3).fit(t, X, q0=per_frame.q)
    assert isinstance(res, SmoothMarkerFitResult) and res.converged
    e_frame, e_smooth = _rms_deg(tree, Q, per_frame.q), _rms_deg(tree, Q, res.q)
    # measured: 4.99 deg per frame, 0.56 deg smoothed (noise 5 mm, the foot's gap)
    assert e_frame > 4.0
    assert e_smooth < 0.8 and e_smooth < 0.2 * e_frame
    # in the gap the per-frame fit holds the left leg at the prior; the smooth fit bridges it
    gap = slice(40, 60)
    # (measured 9.9 -> 0.52 deg)
    assert _rms_deg(tree, Q, res.q, gap) < 1.0 < 5.0 < _rms_deg(tree, Q, per_frame.q, gap)
    # outside the gap too, noise alone (measured 3.3 -> 0.69 deg)
    rest = slice(0, 40)
    assert _rms_deg(tree, Q, res.q, rest) < 0.35 * _rms_deg(tree, Q, per_frame.q, rest)
    # the marker residual stays at the noise level (5 mm per coordinate: 8.7 mm in 3D)
    assert res.rms < 0.0095
    assert set(res.cost_terms) == {"markers", "prior", "acceleration"}
    assert res.cost == pytest.approx(sum(res.cost_terms.values()))
    assert not res.held.any() and np.all(res.iterations == res.iterations[0])
    assert res.acceleration.shape == (t.size, tree.nv)
    assert np.all(res.acceleration[[0, -1]] == 0)


def test_without_the_penalty_it_is_the_per_frame_fit(case):
    tree, t, Q, X, fitter, per_frame = case
    sl = slice(0, 30)                           # frames with every reduced marker
    res = SmoothMarkerFitter(fitter, 0.0).fit(t[sl], X[sl], q0=Q[sl])
    assert res.cost_terms["acceleration"] == 0.0
    # the same minima (the per-frame fitter's prior Jacobian on the ball joint is the
    # identity, here exact: the two agree to the prior's tiny curvature effect)
    assert _rms_deg(tree, per_frame.q[sl], res.q) < 1e-2


def test_difference_jacobians_are_exact_on_the_manifold(case):
    tree, t, Q, X, fitter, per_frame = case
    smooth = SmoothMarkerFitter(fitter, 1e-3)
    d, Ja, Jb = smooth.configuration_difference(Q[3], Q[40])
    assert d.shape == (tree.nv,) and Ja.shape == Jb.shape == (tree.nv, tree.nv)
    np.testing.assert_allclose(d, tree.difference(Q[3], Q[40]), atol=1e-12)
    h = 1e-6
    for J, which in ((Ja, 0), (Jb, 1)):
        cols = []
        for e in np.eye(tree.nv) * h:
            plus, minus = [Q[3], Q[40]], [Q[3], Q[40]]
            plus[which] = tree.integrate(plus[which], e, 1.0)
            minus[which] = tree.integrate(minus[which], -e, 1.0)
            cols.append((np.asarray(tree.difference(*plus)) -
                         np.asarray(tree.difference(*minus))).ravel() / (2 * h))
        np.testing.assert_allclose(J, np.column_stack(cols), atol=1e-7)
    # the root's log map is not the identity: the Jacobian is not +-I there
    assert np.abs(Jb[:6, :6] - np.eye(6)).max() > 1e-3


def test_gradient_matches_central_differences_of_the_cost(case):
    tree, t, Q, X, fitter, per_frame = case
    sl = slice(38, 43)                          # 5 frames, the left foot unseen in the last 3
    smooth = SmoothMarkerFitter(fitter, 1e-3)
    Qs = per_frame.q[sl]
    terms, g = smooth.cost_and_gradient(t[sl], X[sl], Qs)
    assert g.shape == (5, tree.nv) and all(v > 0 for v in terms.values())

    def cost(Qp):
        return sum(smooth.cost_and_gradient(t[sl], X[sl], Qp)[0].values())

    h = 1e-6
    fd = np.zeros_like(g)
    for k in range(5):
        for i in range(tree.nv):
            e = np.zeros(tree.nv)
            e[i] = h
            plus, minus = Qs.copy(), Qs.copy()
            plus[k] = tree.integrate(Qs[k], e, 1.0)
            minus[k] = tree.integrate(Qs[k], -e, 1.0)
            fd[k, i] = (cost(plus) - cost(minus)) / (2 * h)
    # every term (markers, prior, acceleration) contributes; the gradient is exact
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6 * np.abs(fd).max())


def test_a_joint_limit_is_respected(case):
    _, t, Q, X, fitter, _ = case
    tree = W.walker()                           # a fresh tree whose right knee stops early
    knee = [j for j in tree.joints if j.name == "r_knee"][0]
    cap = float(np.median(Q[:, knee.q_start]))  # the true knee bends past it half the time
    knee.upper[0] = cap
    limited = MarkerFitter(tree, list(zip(fitter.marker_names, fitter.marker_bodies,
                                          fitter.marker_offsets)), prior_weight=0.01)
    sl = slice(0, 40)
    res = SmoothMarkerFitter(limited, 1e-3).fit(t[sl], X[sl])
    qk = res.q[:, knee.q_start]
    assert np.all(qk <= cap + 1e-12)
    over = Q[sl, knee.q_start] > cap + 0.05
    assert over.any() and np.allclose(qk[over], cap, atol=1e-9)   # held at the stop


def test_bad_input_is_named(case):
    tree, t, Q, X, fitter, per_frame = case
    with pytest.raises(MarkerFitError, match="MarkerFitter"):
        SmoothMarkerFitter(object(), 1e-3)
    with pytest.raises(MarkerFitError, match="acceleration_weight"):
        SmoothMarkerFitter(fitter, -1.0)
    with pytest.raises(MarkerFitError, match=f"{tree.nv} \\(nv\\)"):
        SmoothMarkerFitter(fitter, np.ones(3))
    smooth = SmoothMarkerFitter(fitter, 1e-3)
    with pytest.raises(MarkerSetError, match="positions must have shape"):
        smooth.fit(t, X[:, :3])
    with pytest.raises(MarkerSetError, match="T >= 3"):
        smooth.fit(t[:2], X[:2])
    with pytest.raises(MarkerFitError, match="increase strictly \\(frame 5\\)"):
        tt = t.copy()
        tt[5] = tt[4]
        smooth.fit(tt, X)
    with pytest.raises(MarkerFitError, match="one per frame"):
        smooth.fit(t[:-1], X)
    with pytest.raises(MarkerFitError, match="no visible marker"):
        smooth.fit(t, np.full_like(X, np.nan))
    with pytest.raises(MarkerFitError, match="q0 must be finite"):
        smooth.fit(t, X, q0=Q[:5])
    with pytest.raises(MarkerFitError, match=f"qb must be {tree.nq} finite"):
        smooth.configuration_difference(Q[0], Q[0][:-1])

"""MarkerFitter: a known motion of a free-floating walker (ball, Euler, hinge and universal
joints), synthesized through sensors.MarkerSensor, is fitted back to 1e-3 rad (in fact to
solver precision); occlusions, joint limits, locked joints and bad input."""
import warnings

import numpy as np
import pytest

import _motion_models as W
from multibody.motion import (MarkerFitError, MarkerFitter, MarkerFitWarning, MarkerSetError)
from sensors import MarkerSensor

RATE = 120.0


@pytest.fixture(scope="module")
def case():
    tree = W.walker()
    t = np.arange(0.0, 1.0, 1.0 / RATE)
    Q, V, A = W.known_motion(tree, t)
    sensor = MarkerSensor(tree, W.markers(), name="mocap")
    ctx = sensor.create_default_context()
    X = []
    for q in Q:
        sensor.get_input_port("state").fix_value(ctx, np.concatenate([q, np.zeros(tree.nv)]))
        X.append(np.asarray(sensor.get_output_port("positions").eval(ctx), float).reshape(-1, 3))
    return tree, t, Q, np.array(X)


def _angle_errors(tree, Q1, Q2):
    """Largest |difference| per frame over the joint coordinates (rad), and the root's."""
    d = np.array([tree.difference(a, b) for a, b in zip(Q1, Q2)])
    return np.abs(d[:, 6:]).max(axis=1), np.abs(d[:, :6]).max(axis=1)


def test_round_trip_recovers_the_joint_angles(case):
    tree, t, Q, X = case
    fitter = MarkerFitter(tree, W.markers(), prior_weight=1e-4)
    np.testing.assert_allclose(fitter.marker_positions(Q[5]), X[5], atol=1e-12)
    res = fitter.fit(X)
    joints, root = _angle_errors(tree, Q, res.q)
    assert joints.max() < 1e-3 and root.max() < 1e-3
    assert joints.max() < 1e-5                      # the weak prior biases by ~1e-7 rad
    assert res.rms < 1e-6
    assert np.all(res.iterations[1:] <= 6)           # warm start: a few iterations
    assert not res.held.any() and np.all(res.visible == len(W.markers()))


def test_marker_jacobian_matches_finite_differences_on_the_manifold(case):
    tree, t, Q, X = case
    fitter = MarkerFitter(tree, W.markers())
    q = Q[17]
    J = fitter.marker_jacobian(q)
    h = 1e-6
    Jfd = np.column_stack([(fitter.marker_positions(tree.integrate(q, e * h, 1.0)) -
                            fitter.marker_positions(tree.integrate(q, -e * h, 1.0))).ravel() / (2 * h)
                           for e in np.eye(tree.nv)])
    np.testing.assert_allclose(J, Jfd, atol=1e-7)
    # the documented shapes of marker_kinematics, equal to the two separate calls
    p, Jk = fitter.marker_kinematics(q)
    assert p.shape == (len(W.markers()), 3) and Jk.shape == (3 * len(W.markers()), tree.nv)
    np.testing.assert_array_equal(p, fitter.marker_positions(q))
    np.testing.assert_array_equal(Jk, J)


def test_occluded_markers_drop_out(case):
    tree, t, Q, X = case
    rng = np.random.default_rng(3)
    Xo = X[:40].copy()
    bodies = np.array([b for _, b, _ in W.markers()])
    for k in range(40):        # hide three markers on three different segments in every frame
        segs = rng.choice(np.unique(bodies), 3, replace=False)
        for s in segs:
            Xo[k, rng.choice(np.flatnonzero(bodies == s))] = np.nan
    res = MarkerFitter(tree, W.markers(), prior_weight=1e-4).fit(Xo)
    joints, root = _angle_errors(tree, Q[:40], res.q)
    assert joints.max() < 1e-3 and root.max() < 1e-3
    assert np.all(np.isnan(res.marker_errors) == np.isnan(Xo[:, :, 0]))
    assert np.all(res.visible == X.shape[1] - 3)


def test_a_frame_with_too_few_markers_holds_the_pose_with_a_warning(case):
    tree, t, Q, X = case
    Xo = X[:5].copy()
    Xo[3, 2:] = np.nan                        # two markers left
    with pytest.warns(MarkerFitWarning, match="frame 3 has 2 visible markers"):
        res = MarkerFitter(tree, W.markers()).fit(Xo)
    assert res.held.tolist() == [False, False, False, True, False]
    np.testing.assert_array_equal(res.q[3], res.q[2])
    assert np.all(np.isfinite(res.q))
    Xo[0, 2:] = np.nan
    with pytest.raises(MarkerFitError, match="frame 0 has 2 visible markers"):
        MarkerFitter(tree, W.markers()).fit(Xo)


def test_joint_limits_hold_and_an_interior_pose_is_unaffected(case):
    tree, t, Q, X = case
    fitter = MarkerFitter(tree, W.markers(), prior_weight=0.0, cost_tolerance=1e-15)
    q = Q[0].copy()
    knee = tree.get_joint("r_knee").q_start
    q[knee] = 2.8                             # beyond the knee's upper limit 2.5
    target = fitter.marker_positions(q)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q_fit, _ = fitter.fit_frame(target, Q[0], max_iterations=200)
    assert q_fit[knee] == pytest.approx(2.5, abs=1e-12)
    lo, hi = tree.position_limits()
    for j in tree.joints:
        if j.type not in ("free", "ball"):
            s = slice(j.q_start, j.q_start + j.nq)
            assert np.all(q_fit[s] >= lo[s] - 1e-12) and np.all(q_fit[s] <= hi[s] + 1e-12)
    # the bounded optimum equals the fit with the knee locked on its bound
    pref = fitter.preferred_q.copy()
    pref[knee] = 2.5
    locked = MarkerFitter(tree, W.markers(), prior_weight=0.0, preferred_q=pref, cost_tolerance=1e-15,
                          locked_joints=["r_knee"])
    q_lock, _ = locked.fit_frame(target, Q[0], max_iterations=200)
    assert np.abs(tree.difference(q_lock, q_fit)).max() < 1e-6


def test_locked_joints_stay_at_the_preferred_pose(case):
    tree, t, Q, X = case
    pref = Q[0].copy()
    fitter = MarkerFitter(tree, W.markers(), preferred_q=pref, locked_joints=["r_knee"])
    res = fitter.fit(X[:30])
    k = tree.get_joint("r_knee").q_start
    assert np.all(res.q[:, k] == pref[k])
    assert res.rms > 1e-4                       # the right leg can no longer follow


def test_bad_input_is_named():
    tree = W.walker()
    with pytest.raises(MarkerSetError, match="'HEAD' is on 'skull'"):
        MarkerFitter(tree, W.markers() + [("HEAD", "skull", (0, 0, 0))])
    with pytest.raises(MarkerSetError, match="duplicate marker name 'LASI'"):
        MarkerFitter(tree, W.markers() + [("LASI", "pelvis", (0, 0, 0))])
    with pytest.raises(MarkerSetError, match="offset must be 3 finite"):
        MarkerFitter(tree, [("A", "pelvis", (0, np.nan, 0))])
    with pytest.raises(MarkerFitError, match="locked joint 'elbow'"):
        MarkerFitter(tree, W.markers(), locked_joints=["elbow"])
    fitter = MarkerFitter(tree, W.markers())
    with pytest.raises(MarkerSetError, match=r"shape \(T, 25, 3\)"):
        fitter.fit(np.zeros((4, 24, 3)))
    with pytest.raises(MarkerFitError, match="q0 must be 23 finite numbers"):
        fitter.fit(np.zeros((4, 25, 3)), q0=np.zeros(5))


def test_calibration_recovers_displaced_marker_offsets(case):
    tree, t, Q, X = case
    rng = np.random.default_rng(1)
    wrong = [(n, b, np.asarray(o) + rng.normal(scale=0.015, size=3)) for n, b, o in W.markers()]
    fitter = MarkerFitter(tree, wrong, prior_weight=1e-4)
    before = fitter.fit(X[::4]).rms
    calibrated = fitter.calibrate(X, iterations=8)
    after = calibrated.fit(X[::4])
    assert before > 0.01 and after.rms < 1e-3
    # (the offsets themselves are not identifiable one by one: a shift of all markers on a
    # segment trades with that segment's pose, so only the residual is checked)
    np.testing.assert_array_equal(fitter.marker_offsets,
                                  np.array([o for _, _, o in wrong]))   # unchanged
    with pytest.raises(MarkerSetError, match="offsets must be finite with shape"):
        fitter.with_offsets(np.zeros((3, 3)))


def test_reruns_are_bitwise_identical_and_progress_is_drawn(case, capsys):
    tree, t, Q, X = case
    fitter = MarkerFitter(tree, W.markers())
    a = fitter.fit(X[:20], progress=True)
    err = capsys.readouterr().err
    assert "marker fit [" in err and "20/20 frames" in err and err.endswith("\n")
    b = fitter.fit(X[:20])                       # stderr is not a terminal here: silent
    assert capsys.readouterr().err == ""
    assert np.array_equal(a.q, b.q) and np.array_equal(a.marker_errors, b.marker_errors)


def test_prior_weight_per_axis(case):
    """A prior weight per velocity coordinate: the same number everywhere is the scalar fit
    (bitwise); a stiff axis stays at the preferred pose (as if locked) while the rest follow;
    a weight vector of the wrong size is named."""
    tree, t, Q, X = case
    pref = Q[0].copy()
    scalar = MarkerFitter(tree, W.markers(), preferred_q=pref, prior_weight=0.05).fit(X[:20])
    same = MarkerFitter(tree, W.markers(), preferred_q=pref,
                        prior_weight=np.full(tree.nv, 0.05)).fit(X[:20])
    np.testing.assert_array_equal(scalar.q, same.q)
    j = tree.get_joint("r_knee")
    w = np.full(tree.nv, 1e-4)
    w[j.v_start] = 1e4
    stiff = MarkerFitter(tree, W.markers(), preferred_q=pref, prior_weight=w).fit(X[:30])
    locked = MarkerFitter(tree, W.markers(), preferred_q=pref, prior_weight=1e-4,
                          locked_joints=["r_knee"]).fit(X[:30])
    assert np.abs(stiff.q[:, j.q_start] - pref[j.q_start]).max() < 1e-5
    assert np.abs(Q[:30, j.q_start] - pref[j.q_start]).max() > 0.03      # the knee did move
    np.testing.assert_allclose(stiff.q, locked.q, atol=1e-4)
    with pytest.raises(MarkerFitError, match=f"one number or {tree.nv} \\(nv\\)"):
        MarkerFitter(tree, W.markers(), prior_weight=np.ones(3))

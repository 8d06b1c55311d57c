"""Contact inverse dynamics: the synthetic round trip (known motion with the left foot
planted -> markers -> MarkerFitter -> smooth_trajectory -> per-frame QP) recovers the known
joint torques to 1e-2 N m and the ground force, with a zero pelvis residual; Newton's law
for the centre of mass; torque limits; the floor fit; bad input."""
import numpy as np
import pytest

import _motion_models as W
from multibody.motion import (ContactError, ContactWarning, ContactInverseDynamics, Floor, JointTrajectory,
                              MarkerFitter, estimate_floor, smooth_trajectory)

RATE = 120.0


@pytest.fixture(scope="module")
def truth():
    """Known motion and its known forces: the root wrench the motion needs, carried by the
    planted left foot (minimum-norm point forces; torques are unique because the load is on
    one body)."""
    tree = W.walker()
    t = np.arange(0.0, 1.2, 1.0 / RATE)
    Q, V, A = W.known_motion(tree, t)
    cid = ContactInverseDynamics(tree, W.contact_points())
    tau, F = [], []
    for q, v, a in zip(Q, V, A):
        tid = tree.inverse_dynamics(q, v, a)
        _, J, _ = cid.contact_kinematics(q, v)
        Jl = J[:12]                                         # the four left-foot points
        f = np.linalg.lstsq(Jl[:, :6].T, tid[:6], rcond=None)[0]
        tau.append(tid - Jl.T @ f)
        F.append(f.reshape(4, 3).sum(axis=0))
    return tree, t, Q, V, A, np.array(tau), np.array(F)


def test_exact_motion_gives_the_known_torques_and_forces(truth):
    tree, t, Q, V, A, tau, F = truth
    assert np.abs(tau[:, :6]).max() < 1e-8                 # the known forces explain the motion
    cid = ContactInverseDynamics(tree, W.contact_points(), torque_weight=1e-9,
                                 force_weight=1e-9)
    res = cid.solve(JointTrajectory(t, Q, V, A))
    assert res.active[:, :4].all() and not res.active[:, 4:].any()
    assert np.abs(res.joint_torques - tau[:, 6:]).max() < 1e-4
    np.testing.assert_allclose(res.grf, F, atol=1e-3)
    assert res.residual_force_rms < 1e-3 and res.residual_torque_rms < 1e-3
    np.testing.assert_allclose(res.body_forces("l_foot"), res.grf)
    # unilateral and inside the friction cone at every point
    f = res.contact_forces[:, :4]
    assert np.all(f[..., 2] >= -1e-12)
    assert np.all(np.hypot(f[..., 0], f[..., 1]) <= cid.friction * f[..., 2] + 1e-9)


def test_round_trip_from_markers_recovers_torques_to_a_hundredth_of_a_newton_metre(truth):
    tree, t, Q, V, A, tau, F = truth
    fitter = MarkerFitter(tree, W.markers(), prior_weight=1e-5, tolerance=1e-12)
    X = np.array([fitter.marker_positions(q) for q in Q])
    fit = fitter.fit(X)
    d = np.array([tree.difference(a, b) for a, b in zip(Q, fit.q)])
    assert np.abs(d).max() < 1e-3
    traj = smooth_trajectory(tree, t, fit.q)
    cid = ContactInverseDynamics(tree, W.contact_points(), torque_weight=1e-9,
                                 force_weight=1e-9)
    res = cid.solve(traj)
    inner = slice(8, -8)                                   # away from the spline's ends
    assert np.abs(res.joint_torques - tau[:, 6:])[inner].max() < 1e-2
    assert np.abs(res.grf - F)[inner].max() < 2e-2
    assert np.linalg.norm(res.residual[inner, 3:], axis=1).max() < 1e-2


def test_vertical_ground_force_is_weight_plus_mass_times_com_acceleration(truth):
    """Newton's second law for the whole body, with the COM acceleration from an independent
    route (second differences of the centre of mass)."""
    tree, t, Q, V, A, tau, F = truth
    res = ContactInverseDynamics(tree, W.contact_points()).solve(JointTrajectory(t, Q, V, A))
    c = np.array([tree.center_of_mass(q) for q in Q])
    h = t[1] - t[0]
    acc = (c[2:] - 2 * c[1:-1] + c[:-2]) / h ** 2
    m = tree.total_mass()
    expected = m * (acc - tree.gravity)
    np.testing.assert_allclose(res.grf[1:-1], expected, atol=0.05)
    assert res.weight == pytest.approx(m * 9.81)


def test_torque_limits_are_respected_and_inactive_limits_change_nothing(truth):
    tree, t, Q, V, A, tau, F = truth
    traj = JointTrajectory(t[:20], Q[:20], V[:20], A[:20])
    free = ContactInverseDynamics(tree, W.contact_points()).solve(traj)
    nj = tree.nv - 6
    loose = ContactInverseDynamics(tree, W.contact_points(),
                                   torque_limits=np.full(nj, 1e4)).solve(traj)
    np.testing.assert_allclose(loose.tau, free.tau, atol=1e-3)
    # limits on the stance leg (what the ground force can change): met, and the pelvis
    # residual takes the rest
    peak = np.abs(free.joint_torques).max(axis=0)
    lim = np.full(nj, 1e4)
    stance = [tree.get_joint(n).v_start - 6 + k for n in ("l_hip", "l_knee") for k in
              range(tree.get_joint(n).nv)]
    lim[stance] = 0.7 * peak[stance]
    tight = ContactInverseDynamics(tree, W.contact_points(), torque_limits=lim).solve(traj)
    assert np.all(np.abs(tight.joint_torques) <= lim + 1e-6)
    assert tight.residual_force_rms > 1.0 > free.residual_force_rms
    # limits on the swing leg cannot be met by any ground force: a named warning
    lim = np.full(nj, 1e4)
    lim[tree.get_joint("r_knee").v_start - 6] = 1e-3
    with pytest.warns(ContactWarning, match="torque limits cannot be met"):
        ContactInverseDynamics(tree, W.contact_points(), torque_limits=lim).solve(traj)


def test_floor_is_fitted_to_points_at_rest():
    rng = np.random.default_rng(0)
    n = np.array([0.03, -0.02, 1.0])
    n /= np.linalg.norm(n)
    xy = rng.uniform(-2, 2, size=(200, 2))
    z = 0.015 - (n[0] * xy[:, 0] + n[1] * xy[:, 1]) / n[2]
    rest = np.column_stack([xy, z])
    moving = rest + np.array([0, 0, 0.3])                 # swinging feet, fast
    pts = np.stack([rest, moving], axis=1)
    speeds = np.column_stack([np.full(200, 0.01), np.full(200, 1.5)])
    floor = estimate_floor(pts, speeds)
    np.testing.assert_allclose(floor.normal, n, atol=1e-12)
    np.testing.assert_allclose(floor.height(rest), 0.0, atol=1e-12)
    assert floor.tilt_degrees == pytest.approx(np.degrees(np.arccos(n[2])))
    with pytest.raises(ContactError, match="at least 3 needed"):
        estimate_floor(pts, speeds + 1.0)


def test_bad_input_is_named():
    tree = W.walker()
    with pytest.raises(ContactError, match="'hand', which is not a body"):
        ContactInverseDynamics(tree, {"hand": [(0, 0, 0)]})
    for mu in (0.0, np.inf, np.nan):      # an infinite cone would give NaN generators
        with pytest.raises(ContactError, match="friction must be finite and > 0"):
            ContactInverseDynamics(tree, W.contact_points(), friction=mu)
    with pytest.raises(ContactError, match="torque_limits must be 15 numbers"):
        ContactInverseDynamics(tree, W.contact_points(), torque_limits=np.ones(3))
    cid = ContactInverseDynamics(tree, W.contact_points(), floor=Floor(np.array([0, 0, 1.0]),
                                                                        np.zeros(3)))
    Q = np.tile(tree.neutral_configuration(), (3, 1))
    V = np.zeros((3, 21))
    V[2, 4] = np.inf
    with pytest.raises(ContactError, match=r"v is not finite at frame 2 \(t = 2 s\)"):
        cid.solve(JointTrajectory(np.arange(3.0), Q, V, np.zeros((3, 21))))
    with pytest.raises(ContactError, match="do not match"):
        cid.solve(JointTrajectory(np.zeros(2), np.zeros((2, 5)), np.zeros((2, 21)),
                                  np.zeros((2, 21))))

"""The trajectory LQR of the forward pass (multibody.motion.trajectory_lqr): the Riccati
recursion against scipy's stationary gain and Drake's discrete finite-horizon regulator, the
constrained step's linearisation against finite differences, and a one-legged body on a
passive ankle that falls under the joint PD alone and stands with the LQR's correction."""
import numpy as np
import pytest
import scipy.linalg

from multibody.motion import Floor, MotionError
from multibody.motion.forward_pass import ForwardPass
from multibody.errors import JointError
from multibody.motion.trajectory_lqr import (ConstrainedStep, LQRWeights, finite_horizon_lqr,
                                             held_points, lift_fade_function,
                                             lqr_feedback_function)
from test_forward_pass_balance import FOOT, _monopod, _standing


def _double_integrators(dt=0.01):
    """Two coupled double integrators with one input each (discrete, exact ZOH)."""
    A = np.eye(4)
    A[0, 2] = A[1, 3] = dt
    A[2, 3] = 0.3 * dt
    B = np.zeros((4, 2))
    B[0, 0] = B[1, 1] = 0.5 * dt ** 2
    B[2, 0] = B[3, 1] = dt
    return A, B


def test_the_riccati_recursion_converges_to_the_discrete_algebraic_riccati_gain():
    A, B = _double_integrators()
    Q, R = np.diag([10.0, 5.0, 1.0, 0.5]), np.diag([0.1, 0.2])
    N = 3000
    K, S = finite_horizon_lqr(np.repeat(A[None], N, 0), np.repeat(B[None], N, 0), Q, R)
    P = scipy.linalg.solve_discrete_are(A, B, Q, R)
    Kinf = np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
    np.testing.assert_allclose(S[0], P, rtol=1e-8)
    np.testing.assert_allclose(K[0], Kinf, rtol=1e-8)
    # the last step's gain is the one-step problem's: (R + B'QB)^-1 B'QA
    np.testing.assert_allclose(K[-1], np.linalg.solve(R + B.T @ Q @ B, B.T @ Q @ A), rtol=1e-12)
    with pytest.raises(MotionError, match="not positive definite at step"):
        finite_horizon_lqr(A[None], B[None], Q, -np.eye(2))
    with pytest.raises(MotionError, match="A must be \\(N, nx, nx\\)"):
        finite_horizon_lqr(A, B, Q, R)


@pytest.mark.parametrize("cross", [None, [[0.2, 0.0], [-0.1, 0.3], [0.05, 0.0], [0.0, -0.05]]])
def test_the_recursion_matches_drakes_discrete_finite_horizon_regulator(cross):
    """Without and with a cross term ``N`` (Drake's ``options.N``)."""
    sysm = pytest.importorskip("pydrake.systems.primitives")
    ctl = pytest.importorskip("pydrake.systems.controllers")
    dt, N = 0.05, 40
    A, B = _double_integrators(dt)
    Q, R, Qf = np.diag([3.0, 1.0, 0.2, 0.1]), np.diag([0.5, 0.3]), np.diag([50.0, 40, 5, 5])
    plant = sysm.LinearSystem(A, B, np.eye(4), np.zeros((4, 2)), dt)
    ctx = plant.CreateDefaultContext()
    plant.get_input_port().FixValue(ctx, np.zeros(2))
    opts = ctl.FiniteHorizonLinearQuadraticRegulatorOptions()
    opts.Qf = Qf
    if cross is not None:
        opts.N = np.array(cross)
    res = ctl.FiniteHorizonLinearQuadraticRegulator(plant, ctx, 0.0, N * dt, Q, R, opts)
    K, S = finite_horizon_lqr(np.repeat(A[None], N, 0), np.repeat(B[None], N, 0), Q, R, Qf,
                              N=None if cross is None else np.repeat(
                                  np.array(cross)[None], N, 0))
    for n in (0, 7, 11, N - 1):
        np.testing.assert_allclose(K[n], res.K.value(n * dt), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(S[n], res.S.value(n * dt), rtol=1e-9, atol=1e-12)


def test_the_constrained_step_linearisation_matches_finite_differences():
    tree = _monopod()
    _, Q, _ = _standing(tree, frames=2)
    nv = tree.nv
    step = ConstrainedStep(tree, 1 / 240, np.arange(7, tree.nq), np.arange(6, nv),
                           np.full(4, 100.0), np.full(4, 10.0), {"r-foot": FOOT})
    rng = np.random.default_rng(0)
    q = Q[0].copy()
    q[:4] = [np.cos(0.1), 0.0, np.sin(0.1), 0.0]
    q[7:] = [0.05, -0.1, 0.1, 0.02]
    v, u, w = 0.1 * rng.normal(size=nv), np.array([1.0, 2, 3, 4]), np.array([1.0, 1, 0, 1])
    A, B = step.linearize(q, v, u, w)

    def err(dx, du):                                   # the exact maps of the tree
        q1, v1 = step.step(q, v, u, w)
        q2, v2 = step.step(tree.integrate(q, dx[:nv], 1.0), v + dx[nv:], u + du, w)
        d = tree.difference(np.asarray(q1, float).ravel(), np.asarray(q2, float).ravel())
        return np.r_[np.asarray(d, float).ravel(), np.asarray(v2 - v1, float).ravel()]
    e, z = 1e-6, np.zeros(4)
    Afd = np.array([(err(e * d, z) - err(-e * d, z)) / (2 * e) for d in np.eye(2 * nv)]).T
    Bfd = np.array([(err(np.zeros(2 * nv), e * d) - err(np.zeros(2 * nv), -e * d)) / (2 * e)
                    for d in np.eye(4)]).T
    np.testing.assert_allclose(A, Afd, atol=1e-7)
    np.testing.assert_allclose(B, Bfd, atol=1e-7)
    assert np.abs(B).max() > 1e-4
    # a held point does not move in the step (J(q) v_next = 0, up to the regularisation);
    # the foot turns about it, so the others do (three held points would fix the foot)
    vn = np.asarray(step.step(q, v, u, np.array([1.0, 0, 0, 0]))[1], float).ravel()
    speeds = [np.linalg.norm(np.asarray(tree.jacobian("r-foot", q, np.asarray(p)), float)[3:]
                             @ vn) for p in FOOT]
    assert speeds[0] < 1e-5 and min(speeds[1:]) > 1e-3


def _stand(lqr):
    tree = _monopod()
    times, Q, V = _standing(tree)
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    fp = ForwardPass(tree, times, {"r-foot": FOOT}, floor, time_step=1 / 240,
                     joint_gain_scale={"r-ankle_x": 0.0, "r-ankle_y": 0.0}, lqr=lqr,
                     lqr_reference=(Q, V, np.zeros_like(V)))
    v0 = V.copy()
    v0[0, 3:6] = [0.1, -0.05, 0.0]                      # a push: the pelvis starts moving
    return fp.run(Q, v0, np.zeros_like(V)), Q


def test_a_body_on_a_passive_ankle_falls_under_the_pd_and_stands_with_the_lqr():
    fell, Q = _stand(None)
    stood, _ = _stand(LQRWeights())
    h0 = Q[0, 6]
    assert fell.q[-1, 6] < h0 - 0.3                      # toppled over the foot's edge
    assert np.all(stood.q[:, 6] > h0 - 0.005)            # upright all along
    assert np.linalg.norm(stood.q[-1, 4:7] - Q[0, 4:7]) < 0.01
    assert np.linalg.norm(stood.v[-1]) < 0.01            # and at rest again


def test_lqr_needs_its_reference_and_tables_of_matching_shapes():
    tree = _monopod()
    times, Q, V = _standing(tree, frames=3)
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    with pytest.raises(MotionError, match="lqr needs lqr_reference"):
        ForwardPass(tree, times, {"r-foot": FOOT}, floor, lqr=LQRWeights())
    with pytest.raises(MotionError, match="K must be \\(3, n, 20\\)"):
        lqr_feedback_function(tree, times, np.zeros((3, 4, 10)), Q, V)


def test_the_feedback_looks_up_the_gain_and_reference_tables_linearly_in_time():
    tree = _monopod()
    times, Q, V = _standing(tree, frames=4)
    rng = np.random.default_rng(1)
    K = rng.normal(size=(4, 4, 2 * tree.nv))
    Q[:, 7:] = rng.normal(scale=0.1, size=(4, 4))
    V = rng.normal(size=V.shape)
    fn = lqr_feedback_function(tree, times, K, Q, V)
    q, v = Q[1].copy(), V[1] + 0.1
    q[4:] += 0.01
    for t, k, s in ((times[1], 1, 0.0), (0.25 * times[1] + 0.75 * times[2], 1, 0.75),
                    (times[-1] + 1.0, 3, 0.0)):        # held after the last frame
        Kt = (1 - s) * K[k] + s * K[min(k + 1, 3)]
        qr = (1 - s) * Q[k] + s * Q[min(k + 1, 3)]      # (the root's quaternion is constant)
        vr = (1 - s) * V[k] + s * V[min(k + 1, 3)]
        dx = np.r_[np.asarray(tree.difference(qr, q), float).ravel(), v - vr]
        np.testing.assert_allclose(np.asarray(fn(t, q, v), float).ravel(), -Kt @ dx,
                                   rtol=1e-10, atol=1e-10)
    du = np.asarray(fn(times[1], q, v), float).ravel()
    clamped = lqr_feedback_function(tree, times, K, Q, V, max_torque=0.2)
    assert np.abs(du).max() > 0.2 > np.abs(du).min()
    np.testing.assert_allclose(np.asarray(clamped(times[1], q, v), float).ravel(),
                               np.clip(du, -0.2, 0.2), rtol=1e-12)


def test_compiled_and_interpreted_runs_with_the_lqr_agree():
    tree = _monopod()
    times, Q, V = _standing(tree, frames=61)
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    outs = []
    for compiled in (True, False):
        fp = ForwardPass(_monopod(), times, {"r-foot": FOOT}, floor, time_step=1 / 240,
                         joint_gain_scale={"r-ankle_x": 0.0, "r-ankle_y": 0.0},
                         lqr=LQRWeights(), lqr_reference=(Q, V, np.zeros_like(V)),
                         compiled=compiled)
        v0 = V.copy()
        v0[0, 3:6] = [0.05, 0.05, 0.0]
        outs.append(fp.run(Q, v0, np.zeros_like(V)))
    assert fp.compiled is False
    np.testing.assert_allclose(outs[0].q, outs[1].q, atol=1e-9)
    assert np.abs(outs[0].q[10:, 4:6] - Q[10:, 4:6]).max() > 1e-4   # the push moved it


@pytest.mark.parametrize("kw", [{"torque": float("nan")}, {"torque": 0.0},
                                {"max_torque": -1.0}, {"root_position": -1.0}])
def test_bad_weights_are_named(kw):
    with pytest.raises(MotionError, match=f"LQRWeights: {next(iter(kw))}"):
        LQRWeights(**kw)


def test_riccati_rejects_bad_shapes_and_nan():
    A, B = np.zeros((3, 2, 2)), np.zeros((3, 2, 1))
    with pytest.raises(MotionError, match="Q and Qf must be"):
        finite_horizon_lqr(A, B, np.eye(3), np.eye(1))
    with pytest.raises(MotionError, match="Q and Qf must be"):
        finite_horizon_lqr(A, B, np.eye(2), np.eye(1), Qf=np.eye(3))
    A[1, 0, 0] = np.nan
    with pytest.raises(MotionError, match="A has non-finite"):
        finite_horizon_lqr(A, B, np.eye(2), np.eye(1))


def test_held_points_follow_the_loads_and_with_max_height_the_floor():
    tree = _monopod()
    times, Q, V = _standing(tree, frames=5)
    Q[2:4, 6] += 0.03                                    # the foot 3 cm up at frames 2 and 3
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    fp = ForwardPass(tree, times, {"r-foot": FOOT}, floor, compiled=False)
    F = np.zeros((5, 4, 3))
    F[:, :, 2] = 100.0                                   # every point loaded in every frame
    F[0, 1, 2] = 10.0                                    # under min_load (20 N)
    loads = held_points(fp, LQRWeights(), Q, F)
    expect = np.ones((5, 4), bool)
    expect[0, 1] = False
    np.testing.assert_array_equal(loads, expect)
    near = held_points(fp, LQRWeights(max_height=0.01), Q, F)
    expect[2:4] = False                                  # loaded but 3 cm above the floor
    np.testing.assert_array_equal(near, expect)
    np.testing.assert_array_equal(held_points(fp, LQRWeights(max_height=0.05), Q, F), loads)
    no_forces = held_points(fp, LQRWeights(), Q)         # within 5 mm of the floor
    np.testing.assert_array_equal(no_forces, np.repeat([[1], [1], [0], [0], [1]], 4, 1) > 0)
    with pytest.raises(MotionError, match="contact_forces must be \\(5, 4, 3\\)"):
        held_points(fp, LQRWeights(), Q, F[:, :3])


def test_joint_torque_scales_the_named_joints_entries_of_r():
    tree = _monopod()
    times, Q, V = _standing(tree, frames=3)
    fp = ForwardPass(tree, times, {"r-foot": FOOT},
                     Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3)), compiled=False)
    names = [j.name for j in tree.joints if j.nv and j.type != "free"]
    R = LQRWeights(torque=2e-3, joint_torque={"r-ankle_y": 5.0}).r_matrix(
        tree, fp.actuated_velocity_indices)
    expect = np.full(len(fp.actuated_velocity_indices), 2e-3)
    expect[names.index("r-ankle_y")] = 1e-2
    np.testing.assert_allclose(R, np.diag(expect), rtol=1e-15)
    with pytest.raises(JointError, match="no joint named 'knee'"):
        LQRWeights(joint_torque={"knee": 2.0}).r_matrix(tree, fp.actuated_velocity_indices)
    with pytest.raises(MotionError, match="joint_torque of joint 'r-hip_x' must be finite"):
        LQRWeights(joint_torque={"r-hip_x": 0.0})
    with pytest.raises(MotionError, match="max_height must be finite and >= 0"):
        LQRWeights(max_height=-0.01)


def test_lift_fade_removes_a_lifted_loaded_foots_feedforward_torque():
    tree = _monopod()
    times, Q, V = _standing(tree, frames=4)
    fp = ForwardPass(tree, times, {"r-foot": FOOT},
                     Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3)), compiled=False)
    tau = np.zeros((4, tree.nv))
    tau[:, 6:] = [1.0, 2.0, 3.0, 4.0]                    # hips, then the ankle's two axes
    held = np.ones((4, 4), bool)
    held[3] = False                                      # the reference lifts the foot
    fn = lift_fade_function(fp, tau, held, 0.01)
    ankle = [fp.joint_names.index(j.name) for j in tree.joints if j.child == "r-foot"]
    for dz, k, expect in ((0.005, 0, 0.0), (0.015, 0, 0.5), (0.04, 1, 1.0), (0.04, 3, 0.0)):
        q = Q[k].copy()
        q[6] += dz                                       # every foot point dz above the floor
        du = np.asarray(fn(times[k], q, V[k]), float).ravel()
        want = np.zeros(4)
        want[ankle] = -expect * tau[k, 6 + np.array(ankle)]
        np.testing.assert_allclose(du, want, atol=1e-12)
    with pytest.raises(MotionError, match="lift_fade must be finite and > 0"):
        LQRWeights(lift_fade=0.0)


def test_hold_body_holds_every_point_of_a_body_with_a_held_one():
    tree = _monopod()
    times, Q, V = _standing(tree, frames=3)
    fp = ForwardPass(tree, times, {"r-foot": FOOT},
                     Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3)), compiled=False)
    F = np.zeros((3, 4, 3))
    F[0, 2, 2] = 100.0                                   # one corner loaded at frame 0
    held = held_points(fp, LQRWeights(hold_body=True), Q, F)
    np.testing.assert_array_equal(held, [[1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(held_points(fp, LQRWeights(), Q, F)[0], [0, 0, 1, 0])

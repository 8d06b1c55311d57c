"""ConsistentMotion: the spline kinematics against finite differences on the manifold, and a
ground-truth recovery on the 25-DOF walker (examples/data): a standing body whose trunk and
arms move (feet at rest on the floor), markers synthesized from it; the optimisation started
from a perturbed motion must return the motion, a zero root residual, the trunk and arm
torques of the recursive Newton-Euler algorithm and the ground force ``m (c'' - g)``."""
from __future__ import annotations

import os

import casadi as ca
import numpy as np
import pytest

from multibody.models import human_model
from multibody.motion import (ConsistentMotion, ContactError, ContactInverseDynamics,
                              MarkerFitter, MarkerSetError, TrajectoryError)
from multibody.motion.spline_motion import UniformBSpline, spline_state

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "data")
RATE = 120.0
KNOT = 1 / 30


@pytest.fixture(scope="module")
def walker():
    return human_model(os.path.join(DATA, "walker_skeleton.txt"),
                       os.path.join(DATA, "walker_markers.txt"))


def _state(tree, spline, C, t):
    y, yd, ydd = (ca.SX.sym(n, tree.nq) for n in ("y", "yd", "ydd"))
    f = ca.Function("s", [y, yd, ydd], list(spline_state(tree, y, yd, ydd)))
    out = f.map(len(t))(*((spline.basis(t, d) @ C).T for d in (0, 1, 2)))
    return [np.asarray(o).T for o in out]


def test_spline_state_matches_manifold_finite_differences(walker):
    """v and vdot of a moving, turning free root and the joints against central differences
    of tree.difference (an independent path through the log map)."""
    tree = walker.tree
    rng = np.random.default_rng(1)
    sp = UniformBSpline(0.0, 1.0, 0.2)
    q0 = walker.reference_configuration()
    C = q0 + 0.3 * rng.standard_normal((sp.size, tree.nq))
    C[:, 0:4] = [1, 0, 0, 0] + 0.4 * rng.standard_normal((sp.size, 4))
    t = np.array([0.31, 0.52, 0.77])
    h = 1e-4
    q, v, a = _state(tree, sp, C, t)
    qm, vm, _ = _state(tree, sp, C, t - h)
    qp, vp, _ = _state(tree, sp, C, t + h)
    for k in range(len(t)):
        assert np.linalg.norm(q[k, 0:4]) == pytest.approx(1.0, abs=1e-12)
        v_fd = (np.asarray(tree.difference(qm[k], qp[k])).ravel()) / (2 * h)
        np.testing.assert_allclose(v[k], v_fd, atol=1e-5 * (1 + np.abs(v[k]).max()))
        np.testing.assert_allclose(a[k], (vp[k] - vm[k]) / (2 * h),
                                   atol=1e-4 * (1 + np.abs(a[k]).max()))


def _standing_motion(walker, T):
    """Trunk and arms on a spline of the optimiser's own space; pelvis and legs still."""
    tree = walker.tree
    t = np.arange(T) / RATE
    sp = UniformBSpline(t[0], t[-1], KNOT)
    rng = np.random.default_rng(7)
    C = np.tile(walker.reference_configuration(), (sp.size, 1))
    k = sp.degree                                         # a smooth swing at 1 Hz, control
    tau = np.array([sp.knots[i + 1:i + k + 1].mean() for i in range(sp.size)])  # points at
    # the Greville abscissae
    amp = {"torso_joint": 0.015, "r-arm_joint": 0.05, "l-arm_joint": 0.05}
    for name, a in amp.items():
        j = tree.get_joint(name)
        phase = rng.uniform(0, 2 * np.pi, j.nq)
        env = np.sin(np.pi * (tau - t[0]) / (t[-1] - t[0]))[:, None] ** 2
        C[:, j.q_start:j.q_start + j.nq] += a * env * np.sin(2 * np.pi * tau[:, None] + phase)
    q, v, a = _state(tree, sp, C, t)
    return t, q, v, a


def test_recovers_a_known_motion_its_torques_and_ground_force(walker):
    tree = walker.tree
    T = 48
    t, q, v, a = _standing_motion(walker, T)
    fitter = MarkerFitter(tree, walker.markers)
    X = np.array([fitter.marker_positions(qk) for qk in q])
    X[3, 5] = np.nan                                     # an occluded sample
    # the ground truth is consistent: contact inverse dynamics needs no residual
    from multibody.motion import JointTrajectory
    truth = ContactInverseDynamics(tree, walker.foot_contact_points, friction=0.8,
                                   torque_weight=1e-12, force_weight=1e-12).solve(
        JointTrajectory(t, q, v, a), progress=False)
    assert truth.residual_force_rms < 1e-4 and truth.residual_torque_rms < 1e-4
    # warm start: the motion with every coordinate perturbed smoothly (pelvis by 1 cm)
    rng = np.random.default_rng(3)
    dq = np.outer(np.sin(np.pi * t / t[-1]), rng.uniform(-1, 1, tree.nq))
    dq[:, 0:4] = 0.0
    dq[:, 4:7] *= 0.01
    dq[:, 7:] *= 0.05
    q_init = q + dq
    # (IPOPT's own convergence test: the stall rule off)
    cm = ConsistentMotion(tree, walker.markers, walker.foot_contact_points, knot_interval=KNOT,
                          max_iterations=100, tolerance=1e-8, prior_weight=0.0,
                          stall_tolerance=0.0)
    out = cm.solve(t, X, q_init, progress=False)
    assert out.success and out.status != "Stalled", out.status
    # the stall rule: a loose one stops earlier, where the best objective of the last
    # stall_iterations iterations improved on the best before them by at most the tolerance
    loose = ConsistentMotion(tree, walker.markers, walker.foot_contact_points,
                             knot_interval=KNOT, max_iterations=100, tolerance=1e-8,
                             prior_weight=0.0, stall_tolerance=0.05, stall_iterations=3)
    early = loose.solve(t, X, q_init, progress=False)
    f = early.objective_history
    assert early.status == "Stalled" and early.success
    assert len(f) == early.iterations + 1 and early.iterations < out.iterations
    assert min(f[:-3]) - min(f[-3:]) <= 0.05 * min(f[-3:])
    vh = early.violation_history    # not earlier: the objective test failed, or a
    assert all(min(f[:k - 3]) - min(f[k - 3:k]) > 0.05 * min(f[k - 3:k])  # contact was
               or vh[k - 1] > 1.0 for k in range(4, len(f)))          # violated > 1 N
    assert max(early.violation_history) >= 0.0 and early.violation_history[-1] <= 1.0
    assert out.objective_history[-1] < f[-1] < f[0]
    # the warm start is clearly off, the result is the motion
    assert out.marker_rms_before > 5e-3
    assert out.marker_rms < 2e-4
    err0 = np.array([tree.difference(a_, b_) for a_, b_ in zip(q, q_init)])
    err = np.array([tree.difference(a_, b_) for a_, b_ in zip(q, out.trajectory.q)])
    assert np.abs(err0).max() > 0.02 and np.abs(err).max() < 2e-3
    # no residual, in the optimiser and in the independent check
    assert np.abs(out.residual).max() < 0.05
    assert out.residual_force_rms < 0.05
    # trunk and arm torques (unique: their subtrees carry no contact) and the ground force
    upper = [i for j in tree.joints if j.name in ("torso_joint", "r-arm_joint", "l-arm_joint")
             for i in range(j.v_start, j.v_start + j.nv)]
    tau_true = np.array([np.asarray(tree.inverse_dynamics(*s)).ravel() for s in zip(q, v, a)])
    # (the accelerations of the first and last few frames rest on one side of data only)
    inner = slice(8, T - 8)
    assert np.abs(tau_true[inner][:, upper]).max() > 2.0
    np.testing.assert_allclose(out.tau[inner][:, upper], tau_true[inner][:, upper], atol=0.3)
    m = tree.total_mass()
    c = np.array([np.asarray(tree.center_of_mass(qk)).ravel() for qk in q])
    cdd = np.gradient(np.gradient(c, t, axis=0), t, axis=0)[inner]
    grf_true = m * (cdd - np.asarray(tree.gravity).ravel())
    grf = out.contact_forces.sum(axis=1)[inner]
    assert np.abs(grf - grf_true).max() < 0.02 * m * 9.81


def test_refuses_bad_arguments(walker):
    tree = walker.tree
    cm = ConsistentMotion(tree, walker.markers, walker.foot_contact_points)
    t = np.arange(10) / RATE
    q = np.tile(walker.reference_configuration(), (10, 1))
    M = len(walker.markers)
    with pytest.raises(MarkerSetError, match=r"\(T, M, 3\)"):
        cm.solve(t, np.zeros((10, M - 1, 3)), q)
    with pytest.raises(TrajectoryError, match="q_init"):
        cm.solve(t, np.zeros((10, M, 3)), q[:, :-1])
    with pytest.raises(TrajectoryError, match="increasing"):
        cm.solve(t[::-1], np.zeros((10, M, 3)), q)
    with pytest.raises(ContactError, match="contact_band"):
        ConsistentMotion(tree, walker.markers, walker.foot_contact_points,
                         contact_band=(0.05, 0.01))
    with pytest.raises(ContactError, match="'no-such-body'"):
        ConsistentMotion(tree, walker.markers, {"no-such-body": [np.zeros(3)]})
    with pytest.raises(MarkerSetError, match="marker_weights"):
        ConsistentMotion(tree, walker.markers, walker.foot_contact_points,
                         marker_weights=np.ones(3))


def test_contact_inverse_dynamics_given_active_points(walker):
    """With no point allowed to push, the residual is the whole root wrench of RNEA."""
    tree = walker.tree
    t, q, v, a = _standing_motion(walker, 12)
    from multibody.motion import JointTrajectory
    cid = ContactInverseDynamics(tree, walker.foot_contact_points)
    P = len(cid.points)
    res = cid.solve(JointTrajectory(t, q, v, a), active=np.zeros((12, P), bool))
    tau = np.array([np.asarray(tree.inverse_dynamics(*s)).ravel() for s in zip(q, v, a)])
    np.testing.assert_allclose(res.residual, tau[:, cid.root_v], atol=1e-9)
    assert not res.contact_forces.any()
    with pytest.raises(ContactError, match=r"active must have shape"):
        cid.solve(JointTrajectory(t, q, v, a), active=np.zeros((11, P), bool))


def test_warm_start_forces_within_the_contact_model(walker):
    """feasible_cone_coefficients: the standing body's weight carried by its feet (root residual
    force ~0, from zero coefficients), every coefficient >= 0, each point's normal force under
    the smoothed cap; a point lifted into the band (u = 0.5: cap F_max / 2) keeps its force
    under that cap, and the points not allowed to push carry none."""
    from multibody.motion import Floor, JointTrajectory
    from multibody.motion.consistent_motion_terms import feasible_cone_coefficients
    tree = walker.tree
    T = 48
    t, q, v, a = _standing_motion(walker, T)
    cm = ConsistentMotion(tree, walker.markers, walker.foot_contact_points)
    cid = cm.cid
    P, E = len(cid.points), cid.edges
    D = cid.cone_edges()
    p0, _, _ = cid.contact_kinematics(q[0], v[0])
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, p0[:, 2].min()]))
    cid.floor = floor
    warm = JointTrajectory(t, q, v, a)
    cand = np.ones((T, P), bool)
    cand[:, 0] = False
    beta = feasible_cone_coefficients(cm, warm, np.zeros((T, P, E)), cand, floor, D)
    assert beta.min() >= 0.0 and not beta[:, 0].any()
    h0, h1 = cm.contact_band
    for k in range(T):
        p, J, _ = cid.contact_kinematics(q[k], v[k])
        u = np.clip((floor.height(p) - h0) / (h1 - h0), 0, 1)
        cap = cm.max_force * (1 - 3 * u ** 2 + 2 * u ** 3)
        fn = cm.weight * beta[k] @ (D @ floor.normal)
        assert np.all(fn <= cap + 1e-9)
        f = cm.weight * beta[k] @ D                                       # (P, 3) world
        tau = np.asarray(tree.inverse_dynamics(q[k], v[k], a[k])).ravel()
        res = tau - J.T @ f.ravel()
        assert np.linalg.norm(res[cid.root_v][3:]) < 0.5        # N, of ~ W on the feet
        assert fn.sum() > 0.9 * cm.weight
    # all points lifted to the middle of the band: each carries at most F_max / 2
    up = q.copy()
    up[:, 6] += (h0 + h1) / 2 - (p0[:, 2].min() - floor.point[2])
    lifted = JointTrajectory(t, up, v, a)
    beta = feasible_cone_coefficients(cm, lifted, np.zeros((T, P, E)), np.ones((T, P), bool),
                                      floor, D)
    fn = cm.weight * beta @ (D @ floor.normal)
    p, _, _ = cid.contact_kinematics(up[0], v[0])
    assert np.all(fn <= cm.max_force * 0.5 + 1e-9) and fn.sum() > 0


def test_loaded_points_brought_onto_the_floor(walker):
    """The flat-foot terms (``penetration``, ``contact_height_scale``, a tight band): the
    standing motion with the right foot's markers occluded, warm-started with that foot
    rolled 12 deg (its edge points ~9 mm above and below the floor): the markers do not
    see the roll, so without the terms the foot stays rolled (a loaded point off the floor
    or a point in it); with them every loaded point is within 3 mm of the floor, none
    deeper than the bound, and the roll is gone."""
    from multibody.motion import Floor
    tree = walker.tree
    T = 24
    t, q, _, _ = _standing_motion(walker, T)
    fitter = MarkerFitter(tree, walker.markers)
    X = np.array([fitter.marker_positions(qk) for qk in q])
    names = [n for n, _, _ in walker.markers]
    X[:, [names.index(n) for n in ("RHEE", "RTOE", "RMT5")]] = np.nan
    foot = tree.get_joint("r-foot_joint")
    q_init = q.copy()
    roll = np.radians(12.0)
    q_init[:, foot.q_start + 1] += roll     # (universal joint: its 2nd axis rolls the foot)
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    cid = ContactInverseDynamics(tree, walker.foot_contact_points, floor=floor)

    def heights(Q):
        return np.array([floor.height(cid.contact_kinematics(qk, np.zeros(tree.nv))[0])
                         for qk in Q])
    h0 = heights(q_init)
    assert h0.max() > 5e-3 and h0.min() < -5e-3             # the warm start is rolled
    common = dict(floor=floor, knot_interval=KNOT, max_iterations=60, prior_weight=0.01)
    plain = ConsistentMotion(tree, walker.markers, walker.foot_contact_points, **common)
    # (IPOPT's own convergence test: the stall rule stops this one with 2 mm marker RMS)
    flat = ConsistentMotion(tree, walker.markers, walker.foot_contact_points,
                            contact_band=(0.0, 0.01), penetration=1e-3,
                            contact_height_scale=5e-3, stall_tolerance=0.0,
                            **{**common, "max_iterations": 150})
    # the soft non-penetration penalty instead of the bound
    soft = ConsistentMotion(tree, walker.markers, walker.foot_contact_points,
                            contact_band=(0.0, 0.01), penetration_scale=1e-3,
                            contact_height_scale=5e-3, stall_tolerance=0.0,
                            **{**common, "max_iterations": 150})
    for cm, is_flat in ((plain, False), (flat, True), (soft, True)):
        out = cm.solve(t, X, q_init, progress=False)
        h = heights(out.trajectory.q)
        fn = out.contact_forces @ floor.normal
        loaded = fn > 0.05 * cm.weight
        if is_flat:
            assert out.success, out.status
            assert loaded.any() and np.abs(h[loaded]).max() < 3e-3
            assert h.min() > (-1.1e-3 if cm.penetration is not None else -3e-3)
            assert out.marker_rms < 1e-3
        else:
            assert np.abs(h[loaded]).max() > 5e-3 or h.min() < -5e-3
    with pytest.raises(ContactError, match="penetration"):
        ConsistentMotion(tree, walker.markers, walker.foot_contact_points, penetration=-1.0)
    for name in ("contact_height_scale", "penetration_scale"):
        with pytest.raises(ContactError, match=name):
            ConsistentMotion(tree, walker.markers, walker.foot_contact_points, **{name: 0.0})

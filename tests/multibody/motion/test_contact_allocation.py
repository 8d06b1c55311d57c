"""Ground forces allocated inside the support (multibody.motion.contact_allocation): a wrench
inside the feet's support is met exactly, one beyond an edge is met as bounded least squares
(scipy's lsq_linear) puts it, friction cones hold, CasADi and numpy agree, and the whole-body
balance on a standing body reproduces the static torques (equal to the tree's inverse
dynamics with the ground force under the centre of mass) and holds it in a forward pass."""
import numpy as np
import pytest
from scipy.optimize import lsq_linear

import casadi as ca

from multibody.motion import Floor, MotionError
from multibody.motion.balance import leg_chains
from multibody.motion.contact_allocation import (WholeBodyBalance, WholeBodyGains,
                                                 allocate_forces)
from multibody.tree import RigidBodyTree
from multibody.tree.joints import Free, Revolute

N = np.array([0.0, 0.0, 1.0])
CORNERS = np.array([(-0.1, -0.05, 0.0), (-0.1, 0.05, 0.0), (0.15, -0.05, 0.0),
                    (0.15, 0.05, 0.0)])


def _wrench_map(points):
    """Rows [moment about the origin; force] (6, 3P) of point forces."""
    cols = []
    for p in points:
        S = np.array([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])
        cols.append(np.vstack([S, np.eye(3)]))
    return np.hstack(cols)


def test_a_wrench_inside_the_support_is_met_exactly():
    A = _wrench_map(CORNERS)
    f_true = np.array([[5, -3, 200], [0, 2, 150], [-4, 1, 120], [2, 0, 180]], float).ravel()
    b = A @ f_true
    f = allocate_forces(A, b, np.zeros(12), np.ones(4), N, eps=1e-10)
    np.testing.assert_allclose(A @ f, b, rtol=1e-7, atol=1e-6)
    assert np.all(f.reshape(4, 3) @ N >= 0)


def test_a_moment_beyond_the_edge_is_met_as_bounded_least_squares():
    # normal forces only: a vertical load with its centre of pressure 5 cm past the x = 0.15
    # edge; the optimum puts the whole load on the two edge points
    A = _wrench_map(CORNERS)[[0, 1, 5]][:, 2::3]                # mx, my, fz of normal forces
    b = np.array([0.0, -600.0 * 0.2, 600.0])
    opt = lsq_linear(A, b, bounds=(0, np.inf))
    A3 = np.zeros((3, 12))
    A3[:, 2::3] = A
    f = allocate_forces(A3, b, np.zeros(12), np.ones(4), N, mu=1e6, eps=1e-10, rounds=3)
    fz = f.reshape(4, 3)[:, 2]
    assert np.all(fz >= -1e-9)
    np.testing.assert_allclose(fz, opt.x, atol=1e-3)
    np.testing.assert_allclose(fz[:2], 0.0, atol=1e-9)        # the heel points let go
    assert np.linalg.norm(A @ fz - b) == pytest.approx(np.linalg.norm(A @ opt.x - b),
                                                       rel=1e-6)


def test_friction_cones_and_inactive_points_hold_and_casadi_agrees():
    A = _wrench_map(CORNERS)
    b = np.array([0.0, 0.0, 0.0, 900.0, 0.0, 500.0])          # more shear than mu allows
    act = np.array([1.0, 1.0, 1.0, 0.0])
    f = allocate_forces(A, b, np.zeros(12), act, N, mu=0.8)
    F = f.reshape(4, 3)
    np.testing.assert_allclose(F[3], 0.0)
    assert np.all(np.linalg.norm(F[:, :2], axis=1) <= 0.8 * F[:, 2] + 1e-9)
    As, bs = ca.SX.sym("A", 6, 12), ca.SX.sym("b", 6)
    fs = allocate_forces(As, bs, ca.DM.zeros(12), ca.DM(act), N, mu=0.8)
    g = ca.Function("g", [As, bs], [fs])
    np.testing.assert_allclose(np.asarray(g(A, b)).ravel(), f, rtol=1e-9, atol=1e-9)


def _standing_body(pelvis_x=0.05):
    """A pelvis (free, its centre of mass ``pelvis_x`` ahead of the hip) on one rigid leg
    (hip pitch, ankle pitch) and a foot; the foot's origin 0.9 m below the pelvis."""
    t = RigidBodyTree("stand")
    t.add_body("pelvis", 30.0, com=(pelvis_x, 0, 0.2), inertia=np.eye(3))
    t.add_joint(Free("floating_base", "world", "pelvis"))
    t.add_body("r-leg", 8.0, com=(0, 0, -0.45), inertia=0.5 * np.eye(3))
    t.add_joint(Revolute("r-hip", "pelvis", "r-leg", axis=(0, 1, 0)))
    X = np.eye(4)
    X[2, 3] = -0.9
    t.add_body("r-foot", 1.0, com=(0.03, 0, -0.03), inertia=0.01 * np.eye(3))
    t.add_joint(Revolute("r-ankle", "r-leg", "r-foot", axis=(0, 1, 0), origin=X))
    return t.finalize()


def _standing_on_the_foot():
    """The standing body at rest with its foot's corners on the floor: ``(tree, points, q,
    v, legs)``."""
    tree = _standing_body()
    pts = {"r-foot": CORNERS + [0, 0, -0.05]}
    q = tree.neutral_configuration()
    q[6] = 0.95
    return tree, pts, q, np.zeros(tree.nv), leg_chains(tree, pts, {6: 0, 7: 1})


@pytest.mark.parametrize("margin", [0.0, 0.02])
def test_the_whole_body_balance_of_a_standing_body_gives_the_static_torques(margin):
    tree, pts, q, v, legs = _standing_on_the_foot()
    m = sum(b.mass for b in tree.bodies)
    F = np.zeros((2, 4, 3))
    F[:, :, 2] = m * 9.81 / 4                                  # reference: COP at x = 0.025
    wb = WholeBodyBalance(tree, pts, legs, [6, 7], N, WholeBodyGains(margin=margin))
    ref = wb.reference(np.array([0.0, 0.01]), np.stack([q, q]), np.zeros((2, tree.nv)), F)[0]
    tau = np.asarray(wb.function()(q, v, ref)).ravel()
    # statics: the hip holds the pelvis's weight 5 cm ahead, the ankle the pelvis and the
    # leg above it (the same moment); the ground's centre of pressure sits under the centre
    # of mass (x = (30 * 0.05 + 1 * 0.03) / 39), inside the (shrunk) foot
    moment = 30.0 * 9.81 * 0.05
    np.testing.assert_allclose(np.abs(tau), [moment, moment], rtol=1e-6)
    assert np.sign(tau[0]) == np.sign(tau[1])
    # independent: the tree's inverse dynamics with the ground force at the centre of mass
    com = np.asarray(tree.center_of_mass(q), float)
    T = np.asarray(tree.body_pose("r-foot", q), float)
    wrench = np.r_[np.cross(np.r_[com[:2], 0.0] - T[:3, 3], [0, 0, m * 9.81]),
                   [0, 0, m * 9.81]]
    tid = np.asarray(tree.inverse_dynamics(q, v, np.zeros(tree.nv),
                                           external_wrenches={"r-foot": wrench}), float)
    np.testing.assert_allclose(tid[:6], 0.0, atol=1e-8)
    np.testing.assert_allclose(tau, tid[6:], rtol=1e-6, atol=1e-6)


def test_the_pelvis_wrench_allocated_equals_the_jacobian_transpose_sharing_of_one_leg():
    # one leg in stance, the centre of pressure inside the foot: the allocated correction
    # is the wrench moved to the foot, the torques those of the virtual model control
    from multibody.motion.balance import (BalanceGains, balance_reference_rows,
                                          pelvis_balance_function)
    tree, pts, q, v, legs = _standing_on_the_foot()
    F = np.zeros((2, 4, 3))
    F[:, :, 2] = 100.0
    qr = q.copy()
    qr[4] += 0.01                                             # reference 1 cm ahead
    Q = np.stack([qr, qr])
    gains = (1000.0, 300.0, 300.0, 60.0)
    taus = []
    for w in [(0.0, 0.0, 0.0, 0.0), gains]:
        wb = WholeBodyBalance(tree, pts, legs, [6, 7], N, WholeBodyGains(margin=0.0, wrench=w))
        ref = wb.reference(np.array([0.0, 0.01]), Q, np.zeros((2, tree.nv)), F)[0]
        ref[:tree.nv] = 0.0
        taus.append(np.asarray(wb.function()(q, v, ref)).ravel())
    bal = pelvis_balance_function(tree, legs, 2, BalanceGains(*gains))
    rows = np.r_[balance_reference_rows(tree, qr[None], v[None])[0],
                 balance_reference_rows(tree, qr[None], v[None], "r-foot")[0], 1.0]
    vmc = np.asarray(bal(q, v, rows)).ravel()
    assert np.abs(vmc).max() > 1.0                            # a real correction
    np.testing.assert_allclose(taus[1] - taus[0], vmc, rtol=1e-5, atol=1e-4)


def _stand(whole_body):
    """The standing body held 0.5 s by the forward pass's joint PD with no replayed torques:
    joint error RMS (deg) and the run."""
    from multibody.motion.forward_pass import ForwardPass
    tree = _standing_body()
    pts = {"r-foot": CORNERS + [0, 0, -0.05]}
    q = tree.neutral_configuration()
    q[6] = 0.95
    K = 61
    Q = np.repeat(q[None], K, 0)
    V = np.zeros((K, tree.nv))
    F = np.zeros((K, 4, 3))
    F[:, :, 2] = sum(b.mass for b in tree.bodies) * 9.81 / 4
    fp = ForwardPass(tree, np.arange(K) / 120.0, pts, Floor(N, np.zeros(3)),
                     time_step=1 / 240, contact_reference=Q, contact_forces=F,
                     refit_floor=False, whole_body=whole_body)
    out = fp.run(Q, V, np.zeros_like(V))
    return out.joint_angle_rms_deg, fp


def test_in_the_forward_pass_the_balance_supplies_the_static_torques():
    sag, fp0 = _stand(None)                      # the PD alone: it sags by tau / K_p
    assert fp0.whole_body is None
    expected = np.degrees(30.0 * 9.81 * 0.05 / fp0.kp[0])
    assert sag > 0.5 * expected
    held, fp1 = _stand(WholeBodyGains())
    assert fp1.whole_body is not None
    assert held < 0.05 * sag


def test_named_errors():
    tree = _standing_body()
    with pytest.raises(MotionError, match="'r-shoe' is not in tree"):
        WholeBodyBalance(tree, {"r-shoe": CORNERS}, [], [6, 7], N)
    pts = {"r-foot": CORNERS}
    wb = WholeBodyBalance(tree, pts, leg_chains(tree, pts, {6: 0, 7: 1}), [6, 7], N)
    with pytest.raises(MotionError, match="support_margin and whole_body need"):
        from multibody.motion.forward_pass import ForwardPass
        ForwardPass(tree, np.arange(3) / 120.0, pts, Floor(N, np.zeros(3)),
                    whole_body=WholeBodyGains())
    with pytest.raises(MotionError, match=r"contact_forces \(2, 4, 3\)"):
        wb.reference(np.arange(2.0), np.zeros((2, tree.nq)), np.zeros((2, tree.nv)),
                     np.zeros((2, 3, 3)))


@pytest.mark.parametrize("kw", [{"rounds": 0}, {"mu": -0.1}, {"margin": float("nan")},
                                {"wrench": (1.0, 2.0)}])
def test_bad_gains_are_named(kw):
    from multibody.motion.contact_allocation import WholeBodyGains
    with pytest.raises(MotionError, match=f"WholeBodyGains: {next(iter(kw))}"):
        WholeBodyGains(**kw)

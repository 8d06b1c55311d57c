"""Foot torques within the support (multibody.motion.support_limit): the bounds of a flat foot
are the analytic ``N x`` edge moments, a tilted leg's bounds match finite-difference
generalised forces, unloaded points and swing drop out, and in a forward pass an ankle torque
beyond the foot's edge (a PD correction) tips the foot without the limit and leaves it flat
with it."""
import numpy as np
import pytest

import _motion_models as W

from multibody.motion import Floor, MotionError
from multibody.motion.forward_pass import ForwardPass
from multibody.motion.support_limit import SupportLimit, shrunk_points, support_activity

from test_forward_pass_balance import FOOT, LEG, _monopod   # the same monopod and sole


def _standing_q(tree):
    q = tree.neutral_configuration()
    q[6] = LEG + 0.05                                    # foot points on z = 0
    return q


def _limit(tree, margin, **kw):
    cmd = {v: v - 6 for v in range(6, tree.nv)}
    return SupportLimit(tree, {"r-foot": FOOT}, cmd, margin=margin, **kw)


def _ref(N, loads=(1, 1, 1, 1), tau=0.0):
    """One group's rows: force, the four points' loads, the joint's reference torque."""
    return np.r_[0.0, 0.0, N, N / 4 * np.asarray(loads, float), tau]


def test_a_flat_foot_bounds_the_ankle_torques_by_the_shrunk_edges():
    tree = _monopod()
    q, v = _standing_q(tree), np.zeros(tree.nv)
    m, N = 0.01, 500.0
    lim = _limit(tree, m, joints=["r-ankle_y", "r-ankle_x"])
    assert [(g[0], g[1], g[3]) for g in lim.groups] == [("r-ankle_y", [2], ["r-foot"]),
                                                        ("r-ankle_x", [3], ["r-foot"])]
    f = lim.function(4)
    ref = np.r_[_ref(N), _ref(N)]
    hi = np.asarray(f(q, v, ref, [0, 0, 1e4, 1e4])).ravel()
    lo = np.asarray(f(q, v, ref, [0, 0, -1e4, -1e4])).ravel()
    # pitch about y at the ankle: tau = N x_cop, x in [-0.1 + m, 0.12 - m];
    # roll about x: tau = -N y_cop, y in [-0.08 + m, 0.08 - m]
    np.testing.assert_allclose(hi[2:], [N * (0.12 - m), N * (0.08 - m)], rtol=1e-9)
    np.testing.assert_allclose(lo[2:], [N * (-0.1 + m), -N * (0.08 - m)], rtol=1e-9)
    inside = [3.0, -4.0, 20.0, -30.0]
    np.testing.assert_allclose(np.asarray(f(q, v, ref, inside)).ravel(), inside)
    # the toe-side points (x = 0.12) unloaded: the pitch torque stops at the heel side
    # (the reference torque, -50, below it)
    ref2 = np.r_[_ref(N, (1, 1, 0, 0), -50.0), _ref(N)]
    hi2 = np.asarray(f(q, v, ref2, [0, 0, 1e4, 1e4])).ravel()
    assert hi2[2] == pytest.approx(N * (-0.1 + m), rel=1e-9)
    # a reference torque beyond the support is admitted, not further
    ref3 = np.r_[_ref(N), _ref(N, tau=-60.0)]
    lo3 = np.asarray(f(q, v, ref3, [0, 0, -1e4, -1e4])).ravel()
    assert lo3[3] == pytest.approx(-60.0)
    # swing (force below stance_load): nothing clamped
    swing = np.r_[_ref(10.0), _ref(10.0)]
    np.testing.assert_allclose(np.asarray(f(q, v, swing, [0, 0, 1e4, -1e4])).ravel(),
                               [0, 0, 1e4, -1e4])


def test_the_implicit_damping_shifts_the_bound_by_d_v():
    tree = _monopod()
    q, v = _standing_q(tree), np.zeros(tree.nv)
    v[9] = 0.5                                           # ankle roll velocity
    D = np.array([0.0, 0.0, 0.0, 40.0])
    f = _limit(tree, 0.0, damping=D).function(4)
    out = np.asarray(f(q, v, _ref(500.0), [0, 0, 0, 1e4])).ravel()
    assert out[3] == pytest.approx(500.0 * 0.08 + 40.0 * 0.5, rel=1e-9)


def test_the_bounds_match_finite_difference_generalised_forces_on_a_bent_leg():
    tree = W.six_joint_leg(body="r-{}").finalize()
    rng = np.random.default_rng(3)
    q = tree.neutral_configuration()
    q[7:] = rng.uniform(-0.4, 0.4, tree.nq - 7)
    v = np.zeros(tree.nv)
    pts = np.array([(-0.05, -0.04, -0.06), (-0.05, 0.04, -0.06), (0.15, -0.04, -0.06),
                    (0.15, 0.04, -0.06)])
    cmd = {v_: v_ - 6 for v_ in range(6, tree.nv)}
    m = 0.015
    lim = SupportLimit(tree, {"r-foot": pts}, cmd, margin=m, joints=["ay", "foot"])
    F = np.array([30.0, -20.0, 600.0])
    S = shrunk_points(pts, m)

    def world(qq):
        T = np.asarray(tree.body_pose("r-foot", qq), float)
        return S @ T[:3, :3].T + T[:3, 3]
    eps = 1e-6
    G = []                                              # generalised forces per point
    for name in ["ay", "foot"]:
        dq = np.zeros(tree.nq)
        dq[tree.get_joint(name).q_start] = eps
        G.append((world(q + dq) - world(q - dq)) @ F / (2 * eps))
    mid = [-(g.min() + g.max()) / 2 for g in G]         # a reference torque inside
    ref = np.r_[F, 100.0 * np.ones(4), mid[0], F, 100.0 * np.ones(4), mid[1]]
    f = lim.function(tree.nv - 6)
    big = np.zeros(tree.nv - 6)
    big[4:] = 1e5
    hi = np.asarray(f(q, v, ref, big)).ravel()[4:]
    lo = np.asarray(f(q, v, ref, -big)).ravel()[4:]
    for k, g in enumerate(G):
        assert np.ptp(g) > 5.0                          # a real interval
        assert hi[k] == pytest.approx(-g.min(), rel=1e-6, abs=1e-6)
        assert lo[k] == pytest.approx(-g.max(), rel=1e-6, abs=1e-6)


def _forward(margin, roll):
    """The monopod standing still, its ankle roll target stepped to ``roll`` (rad) after the
    first frame: the stiff PD asks the floor for a roll moment of about ``K_p roll``."""
    tree = _monopod()
    K = 121
    times = np.arange(K) / 120.0
    Q0 = np.repeat(_standing_q(tree)[None], K, 0)         # the feet placed flat
    Q = Q0.copy()
    Q[1:, tree.get_joint("r-ankle_x").q_start] = roll
    V = np.zeros((K, tree.nv))
    N = sum(b.mass for b in tree.bodies) * 9.81
    CF = np.zeros((K, 4, 3))
    CF[:, :, 2] = N / 4
    fp = ForwardPass(tree, times, {"r-foot": FOOT}, Floor(np.array([0.0, 0, 1]), np.zeros(3)),
                     time_step=1 / 240, contact_reference=Q0, contact_forces=CF,
                     refit_floor=False, support_margin=margin)
    out = fp.run(Q, V, np.zeros_like(V))
    tilt = [np.degrees(np.arccos(min(1.0, np.asarray(tree.body_pose("r-foot", qi), float)[2, 2])))
            for qi in out.q]
    return fp, out, np.max(tilt), fp.kp[3] * abs(roll) / N


def test_a_pd_roll_torque_beyond_the_edge_tips_the_foot_and_the_limit_keeps_it_flat():
    fp0, out0, tilt0, lever = _forward(None, 0.02)
    assert fp0.support_limit is None
    assert lever > 0.1                                      # the edge is at 8 cm
    assert tilt0 > 1.0
    fp1, out1, tilt1, _ = _forward(0.01, 0.02)
    assert [g[0] for g in fp1.support_limit.groups] == ["r-ankle_x"]
    assert tilt1 < 0.05
    assert np.all(out1.q[:, 6] > out1.q[0, 6] - 0.01)      # still standing
    _, _, tilt_in, lever_in = _forward(0.01, 0.005)          # inside the support: untouched
    assert lever_in < 0.07 and tilt_in < 0.05


def test_named_errors():
    tree = _monopod()
    with pytest.raises(MotionError, match="margin"):
        shrunk_points(FOOT, -0.01)
    with pytest.raises(MotionError, match="no joint 'ankle'"):
        _limit(tree, 0.01, joints=["ankle"])
    with pytest.raises(MotionError, match="'r-shoe' is not in tree"):
        SupportLimit(tree, {"r-shoe": FOOT}, {})
    with pytest.raises(MotionError, match="without a command"):
        SupportLimit(tree, {"r-foot": FOOT}, {})
    with pytest.raises(MotionError, match=r"\(frames, 4, 3\)"):
        _limit(tree, 0.01).reference(np.zeros((5, 3, 3)), [0, 0, 1])
    with pytest.raises(MotionError, match=r"tau must be \(5, 10\)"):
        _limit(tree, 0.01).reference(np.zeros((5, 4, 3)), [0, 0, 1], np.zeros((5, 4)))
    K = 3
    with pytest.raises(MotionError, match="support_margin and whole_body need"):
        ForwardPass(tree, np.arange(K) / 120.0, {"r-foot": FOOT},
                    Floor(np.array([0.0, 0, 1]), np.zeros(3)), support_margin=0.01)


def test_the_support_is_the_loaded_bodys_touching_points_not_its_loaded_ones():
    tree = _monopod()
    flat = _standing_q(tree)
    heel = flat.copy()
    heel[tree.get_joint("r-ankle_y").q_start] = -0.1           # toes (x = 0.12) up 2 cm
    heel[6] += 0.1 * 0.1                                       # the heel back on the floor
    Q = np.stack([flat, heel, flat])
    F = np.zeros((3, 4, 3))
    F[0, 0, 2] = 500.0                                         # all on one corner
    F[1, 0, 2] = 500.0
    floor = Floor(np.array([0.0, 0, 1]), np.zeros(3))
    act = support_activity(tree, {"r-foot": FOOT}, floor, Q, F)
    np.testing.assert_array_equal(act, [[1, 1, 1, 1], [1, 1, 0, 0], [0, 0, 0, 0]])
    with pytest.raises(MotionError, match=r"\(3, 4, 3\)"):
        support_activity(tree, {"r-foot": FOOT}, floor, Q, F[:, :3])


def test_shrunk_points_keep_the_flat_axis():
    S = shrunk_points(FOOT, 0.01)
    np.testing.assert_allclose(S[:, 2], -0.05)
    np.testing.assert_allclose(S[:, 0], [-0.09, -0.09, 0.11, 0.11])
    np.testing.assert_allclose(S[:, 1], [-0.07, 0.07, -0.07, 0.07])


def test_shrunk_points_never_grow_with_the_margin():
    """A margin past the half width puts the points on their centroid, never back at the
    corners (review: 0.046 on a 9 cm sole had given the full width)."""
    from multibody.motion.support_limit import shrunk_points
    P = np.array([[sx * 0.045, sy * 0.1, -0.03] for sx in (-1, 1) for sy in (-1, 1)])
    for m, half in ((0.0, 0.045), (0.044, 0.001), (0.046, 0.0), (0.2, 0.0)):
        S = shrunk_points(P, m)
        np.testing.assert_allclose(np.abs(S[:, 0]), half, atol=1e-15)
        np.testing.assert_allclose(S[:, 2], -0.03)            # the flat axis kept

"""ConsistentMotion's levelling term across the soles (``level_scale``): the pairs across a
box foot, the term's gradient and Gauss-Newton block against finite differences (heights
linear in the coordinates, where the block is the exact Hessian), and on the 25-DOF walker
(examples/data) a foot warm-started rolled onto one edge, carrying the whole weight, brought
level across its sole."""
from __future__ import annotations

from types import SimpleNamespace

import casadi as ca
import numpy as np
import pytest

from multibody.motion import (ConsistentMotion, ContactError, ContactInverseDynamics, Floor,
                              MarkerFitter)
from multibody.motion.consistent_motion_terms import add_level, level_cost, sole_pairs
from test_consistent_motion_support import KNOT, standing, walker  # noqa: F401 (fixtures)
SOLE = [(-0.042, -0.026, -0.062), (-0.042, 0.078, -0.062), (0.042, -0.026, -0.062),
        (0.042, 0.078, -0.062)]


def test_sole_pairs_across_a_box_foot():
    toe = [(-0.043, 0.0, 0.0), (-0.043, 0.108, 0.0), (0.043, 0.0, 0.0), (0.043, 0.108, 0.0)]
    bodies = ["foot"] * 4 + ["toes"] * 4 + ["stub"]
    pairs = sole_pairs(bodies, SOLE + toe + [(0.0, 0.0, 0.0)])
    np.testing.assert_array_equal(pairs, [[0, 2], [1, 3], [4, 6], [5, 7]])
    # a row of one point (a three-point sole's toe) has no pair
    np.testing.assert_array_equal(sole_pairs(["f"] * 3, SOLE[:3]), [[0, 2]])


def _cost_function(cm, A, b, T):
    y = ca.SX.sym("y", A.shape[1])
    c = level_cost(cm, ca.mtimes(ca.DM(A), y) + b, T)
    return ca.Function("c", [y], [c]), ca.Function("g", [y], [ca.gradient(c, y)])


def test_level_gradient_and_block_against_finite_differences():
    """Heights ``phi = A y + b`` (linear in ``y``): the cost written out, its gradient
    against central differences with heights inside the contact band (the smooth step's
    slope included), and the Gauss-Newton block (the weights held) against differences of
    the gradient with every point below ``h_0`` (weights 1 and flat: the block is then the
    exact Hessian)."""
    rng = np.random.default_rng(3)
    nq, P, T = 5, 8, 3
    bodies = ["r"] * 4 + ["l"] * 4
    cm = SimpleNamespace(level_scale=0.004, contact_band=(0.002, 0.01),
                         tree=SimpleNamespace(nq=nq),
                         cid=SimpleNamespace(point_bodies=bodies, points=np.array(SOLE * 2)))
    pairs = sole_pairs(bodies, cm.cid.points)
    A = rng.normal(size=(P, nq)) * 0.01
    y0 = rng.normal(size=nq) * 0.1
    b = rng.uniform(0.003, 0.009, P) - A @ y0                  # heights in the band at y0
    cost, grad = _cost_function(cm, A, b, T)
    phi = A @ y0 + b
    u = (phi - 0.002) / 0.008
    s, ds = 1 - 3 * u ** 2 + 2 * u ** 3, (6 * u ** 2 - 6 * u) / 0.008
    a_, b_ = pairs[:, 0], pairs[:, 1]
    d, k = phi[a_] - phi[b_], 1 / (2 * cm.level_scale ** 2 * T)
    assert float(cost(y0)) == pytest.approx(k * np.sum((s[a_] + s[b_]) * d ** 2), rel=1e-12)
    gphi = np.zeros(P)                                            # d cost / d phi
    np.add.at(gphi, a_, k * (2 * (s[a_] + s[b_]) * d + ds[a_] * d ** 2))
    np.add.at(gphi, b_, k * (-2 * (s[a_] + s[b_]) * d + ds[b_] * d ** 2))
    h = 1e-7
    g_fd = np.array([(float(cost(y0 + h * e)) - float(cost(y0 - h * e))) / (2 * h)
                     for e in np.eye(nq)])
    np.testing.assert_allclose(A.T @ gphi, g_fd, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(grad(y0)).ravel(), g_fd, rtol=1e-6)
    # the block: every point below h_0; per frame the same Jacobian; lam_f = 0.5; frame 1
    # above the band (weights 0)
    b = rng.uniform(-0.004, 0.0015, P) - A @ y0
    cost, grad = _cost_function(cm, A, b, T)
    Jphi = np.tile(A, (1, T))                                     # (P, T nq)
    phiT = np.tile((A @ y0 + b)[:, None], (1, T))
    phiT[:, 1] = 0.02
    H = np.zeros((T, nq + 2, nq + 2))
    add_level(cm, H, Jphi, phiT, 0.5)
    H_fd = np.array([(np.asarray(grad(y0 + h * e)) - np.asarray(grad(y0 - h * e))).ravel()
                     / (2 * h) for e in np.eye(nq)])
    np.testing.assert_allclose(H[0, :nq, :nq], 0.5 * H_fd, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(H[2], H[0])
    assert np.abs(H[0]).max() > 1.0 and not H[1].any() and not H[0, nq:].any()
    cm.level_scale = None                                         # off: nothing added
    H2 = np.zeros_like(H)
    add_level(cm, H2, Jphi, phiT, 0.5)
    assert not H2.any() and level_cost(cm, ca.DM(phi), T) == 0.0


def test_a_foot_on_its_edge_levelled(walker, standing):
    """The walker standing (24 frames, the trunk swaying), its right foot rolled 8 deg and
    the body raised 5.6 mm, so that the foot stands on its inner edge (the other side 12.5
    mm up) and carries the weight (the left foot 5.6 mm up, in the contact band); the
    markers are those of this motion, so they hold the roll. Without the term the foot stays
    on its edge (> 10 mm across the sole in every frame); with ``level_scale=0.003`` the
    foot is brought within 4 mm of level in every frame (against markers 2.5 mm RMS)."""
    tree = walker.tree
    t, q = standing
    q = q.copy()                                    # (the fixture is shared)
    q[:, tree.get_joint("r-foot_joint").q_start + 1] -= np.radians(8.0)
    q[:, 6] += 0.0056
    fitter = MarkerFitter(tree, walker.markers)
    X = np.array([fitter.marker_positions(qk) for qk in q])
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    cid = ContactInverseDynamics(tree, walker.foot_contact_points, floor=floor)
    right = [i for i, b in enumerate(cid.point_bodies) if b == "r-foot"]
    pairs = sole_pairs(cid.point_bodies, cid.points)
    pairs = pairs[np.isin(pairs[:, 0], right)]

    def across(Q):                                  # (T, 2) mm, the right foot's two pairs
        h = np.array([floor.height(cid.contact_kinematics(qk, np.zeros(tree.nv))[0])
                      for qk in Q])
        return 1e3 * np.abs(h[:, pairs[:, 0]] - h[:, pairs[:, 1]])
    assert across(q).min() > 12.0
    kw = dict(floor=floor, knot_interval=KNOT, max_iterations=60, contact_band=(0.0, 0.01),
              penetration_scale=1e-3)
    out = {}
    for lv in (None, 0.003):
        cm = ConsistentMotion(tree, walker.markers, walker.foot_contact_points,
                              level_scale=lv, **kw)
        out[lv] = cm.solve(t, X, q, progress=False)
        fn = out[lv].contact_forces[:, right] @ floor.normal
        assert np.all(fn.sum(axis=1) > 0.5 * cm.weight)      # the right foot is loaded
    assert across(out[None].trajectory.q).min() > 10.0
    assert across(out[0.003].trajectory.q).max() < 4.0
    assert out[0.003].marker_rms < 5e-3 and out[0.003].residual_force_rms < 3.0
    with pytest.raises(ContactError, match="level_scale"):
        ConsistentMotion(tree, walker.markers, walker.foot_contact_points, level_scale=0.0)

"""ConsistentMotion's levelling term across the soles (``level_scale``): the pairs across a
box foot, the term's gradient and Gauss-Newton block against finite differences (heights
linear in the coordinates, where the block is the exact Hessian), and on the 25-DOF walker
(examples/data) a foot warm-started rolled onto one edge, carrying the whole weight, brought
level across its sole."""
from __future__ import annotations

import os
from types import SimpleNamespace

import casadi as ca
import numpy as np
import pytest

from multibody.models import human_model
from multibody.motion import (ConsistentMotion, ContactError, ContactInverseDynamics, Floor,
                              MarkerFitter)
from multibody.motion.consistent_motion_terms import add_level, level_cost, sole_pairs
from multibody.motion.spline_motion import UniformBSpline

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "data")
RATE, KNOT = 120.0, 1 / 30
SOLE = [(-0.042, -0.026, -0.062), (-0.042, 0.078, -0.062), (0.042, -0.026, -0.062),
        (0.042, 0.078, -0.062)]


def test_sole_pairs_across_a_box_foot():
    toe = [(-0.043, 0.0, 0.0), (-0.043, 0.108, 0.0), (0.043, 0.0, 0.0), (0.043, 0.108, 0.0)]
    bodies = ["foot"] * 4 + ["toes"] * 4 + ["stub"]
    pairs = sole_pairs(bodies, SOLE + toe + [(0.0, 0.0, 0.0)])
    np.testing.assert_array_equal(pairs, [[0, 2], [1, 3], [4, 6], [5, 7]])
    # a row of one point (a three-point sole's toe) has no pair
    np.testing.assert_array_equal(sole_pairs(["f"] * 3, SOLE[:3]), [[0, 2]])


def test_level_gradient_and_block_against_finite_differences():
    """Heights ``phi = A y + b`` (linear): the cost's gradient in ``y`` and in the normal
    forces against central differences, and the Gauss-Newton block (the forces held) against
    differences of the ``y``-gradient -- exact here, the heights having no curvature."""
    rng = np.random.default_rng(3)
    nq, P, T = 5, 8, 3
    bodies = ["r"] * 4 + ["l"] * 4
    cm = SimpleNamespace(level_scale=0.004, weight=700.0, tree=SimpleNamespace(nq=nq),
                         cid=SimpleNamespace(point_bodies=bodies, points=np.array(SOLE * 2)))
    A = rng.normal(size=(P, nq)) * 0.05
    b = rng.normal(size=P) * 0.003
    fn0 = rng.uniform(0, 400, P)
    y, fn = ca.SX.sym("y", nq), ca.SX.sym("fn", P)
    cost = ca.Function("c", [y, fn], [level_cost(cm, ca.mtimes(ca.DM(A), y) + b, fn, T)])
    pairs = sole_pairs(bodies, cm.cid.points)
    y0 = rng.normal(size=nq) * 0.1

    def value(yv, fv):
        return float(cost(yv, fv))
    # the term written out
    phi = A @ y0 + b
    d = phi[pairs[:, 0]] - phi[pairs[:, 1]]
    w = (fn0[pairs[:, 0]] + fn0[pairs[:, 1]]) / (cm.weight * cm.level_scale ** 2 * T)
    assert value(y0, fn0) == pytest.approx(np.sum(w * d ** 2), rel=1e-12)
    h = 1e-6
    E = np.eye(nq)
    g_fd = np.array([(value(y0 + h * e, fn0) - value(y0 - h * e, fn0)) / (2 * h) for e in E])
    Jd = A[pairs[:, 0]] - A[pairs[:, 1]]
    g = 2 * Jd.T @ (w * d)
    np.testing.assert_allclose(g, g_fd, rtol=1e-6, atol=1e-9 * np.abs(g).max())
    gf_fd = np.array([(value(y0, fn0 + e) - value(y0, fn0 - e)) / 2   # (linear in fn)
                      for e in np.eye(P)])
    gf = np.zeros(P)
    np.add.at(gf, pairs[:, 0], d ** 2 / (cm.weight * cm.level_scale ** 2 * T))
    np.add.at(gf, pairs[:, 1], d ** 2 / (cm.weight * cm.level_scale ** 2 * T))
    np.testing.assert_allclose(gf, gf_fd, rtol=1e-8, atol=1e-12)
    # the block: per frame, the same Jacobian; frame 1 unloaded; lam_f = 0.5
    Jphi = np.tile(A, (1, T))                                     # (P, T nq)
    fnT = np.tile(fn0[:, None], (1, T))
    fnT[:, 1] = 0.0
    H = np.zeros((T, nq + 2, nq + 2))
    add_level(cm, H, Jphi, fnT, 0.5)
    grad = ca.Function("g", [y, fn], [ca.gradient(cost(y, fn), y)])
    H_fd = np.array([(np.asarray(grad(y0 + h * e, fn0)) - np.asarray(grad(y0 - h * e, fn0)))
                     .ravel() / (2 * h) for e in E])
    np.testing.assert_allclose(H[0, :nq, :nq], 0.5 * H_fd, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(H[2], H[0])
    assert not H[1].any() and not H[0, nq:].any()
    cm.level_scale = None                                         # off: nothing added
    H2 = np.zeros_like(H)
    add_level(cm, H2, Jphi, fnT, 0.5)
    assert not H2.any() and level_cost(cm, ca.DM(phi), ca.DM(fn0), T) == 0.0

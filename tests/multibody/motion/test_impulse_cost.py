"""The trajectory LQR's cost on its model's contact impulses (multibody.motion.impulse_cost):
the Riccati recursion with a cross term against scipy's stationary solution (against Drake's
regulator: test_trajectory_lqr), the constrained step's impulses against its momentum balance and their
linearisation against finite differences, and on a one-legged body standing on four held
points, the cost keeps the lightest-loaded point's impulse closer to its reference."""
import numpy as np
import pytest
import scipy.linalg

from multibody.motion import MotionError
from multibody.motion.impulse_cost import (contact_cost_rows, foot_rows, impulse_cost_terms,
                                           impulse_weights, point_rows)
from multibody.motion.trajectory_lqr import ConstrainedStep, LQRWeights, finite_horizon_lqr
from test_forward_pass_balance import FOOT, _monopod, _standing
from test_trajectory_lqr import _double_integrators, _stand

H = 1 / 240


def test_the_recursion_with_a_cross_term_converges_to_scipys_are_solution():
    A, B = _double_integrators()
    Q, R = np.diag([10.0, 5.0, 1.0, 0.5]), np.diag([0.1, 0.2])
    N = np.array([[0.3, -0.1], [0.0, 0.2], [0.1, 0.05], [-0.05, 0.1]])
    assert np.linalg.eigvalsh(np.block([[Q, N], [N.T, R]])).min() > 0
    K, S = finite_horizon_lqr(np.repeat(A[None], 3000, 0), np.repeat(B[None], 3000, 0), Q, R,
                              N=N)
    P = scipy.linalg.solve_discrete_are(A, B, Q, R, s=N)
    np.testing.assert_allclose(S[0], P, rtol=1e-8)
    np.testing.assert_allclose(K[0], np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A + N.T),
                               rtol=1e-8)
    K0, _ = finite_horizon_lqr(np.repeat(A[None], 3000, 0), np.repeat(B[None], 3000, 0), Q, R)
    assert np.abs(K[0] - K0[0]).max() > 0.1                # the cross term changes the gain
    with pytest.raises(MotionError, match="N \\(4, 2\\)"):
        finite_horizon_lqr(A[None], B[None], Q, R, N=np.zeros((2, 4)))


def _step():
    tree = _monopod()
    _, Q, _ = _standing(tree, frames=2)
    kp = np.array([300.0, 300.0, 0.0, 0.0])              # hips held, ankles passive
    step = ConstrainedStep(tree, H, np.arange(7, tree.nq), np.arange(6, tree.nv), kp,
                           np.array([30.0, 30.0, 0.0, 0.0]) + H * kp, {"r-foot": FOOT})
    return tree, step, Q[0], kp


def test_the_impulses_balance_the_steps_momentum_and_linearise_exactly():
    tree, step, q0, kp = _step()
    nv = tree.nv
    rng = np.random.default_rng(3)
    q = q0.copy()
    q[:4] = [np.cos(0.05), np.sin(0.05), 0.0, 0.0]
    q[7:] = [0.03, -0.05, 0.04, 0.01]
    v, u, w = 0.1 * rng.normal(size=nv), np.array([5.0, -3, 2, 1]), np.array([1.0, 1, 0, 1])
    p = np.asarray(step.impulses(q, v, u, w), float).ravel()
    vn = np.asarray(step.step(q, v, u, w)[1], float).ravel()
    # (H + h D) v' = H v + h (S c - C) + sum_i J_i^T p_i, c = u - K_p q_j
    M = np.asarray(tree.mass_matrix(q), float)
    D = np.r_[np.zeros(6), 30.0 + H * kp[:2], 0.0, 0.0]
    tau = np.r_[np.zeros(6), u - kp * q[7:]]
    Jt = sum(np.asarray(tree.jacobian("r-foot", q, np.asarray(pt)), float)[3:].T @ p[3 * i:3 * i + 3]
             for i, pt in enumerate(FOOT))
    lhs = (M + np.diag(H * D)) @ vn
    rhs = M @ v + H * (tau - np.asarray(tree.bias_forces(q, v), float).ravel()) + Jt
    np.testing.assert_allclose(lhs, rhs, atol=1e-9)
    assert np.all(p[6:9] == 0) and p[2::3].sum() > 1.0   # the free point carries nothing
    A, B, Px, Pu = step.linearize(q, v, u, w, impulses=True)

    def imp(dx, du):
        return np.asarray(step.impulses(tree.integrate(q, dx[:nv], 1.0), v + dx[nv:], u + du,
                                        w), float).ravel()
    e = 1e-4                     # the KKT system's conditioning is ~1/epsilon: a larger step
    Pxfd = np.array([(imp(e * d, np.zeros(4)) - imp(-e * d, np.zeros(4))) / (2 * e)
                     for d in np.eye(2 * nv)]).T
    Pufd = np.array([(imp(np.zeros(2 * nv), d) - imp(np.zeros(2 * nv), -d)) / 2
                     for d in np.eye(4)]).T            # affine in u: exact at any step
    np.testing.assert_allclose(Px, Pxfd, atol=1e-6 * np.abs(Pxfd).max())
    np.testing.assert_allclose(Pu, Pufd, atol=1e-6 * np.abs(Pufd).max())
    assert np.abs(Pu).max() > 1e-4


def test_the_weights_and_cost_terms_are_the_relative_normal_load_change():
    n = np.array([0.0, 0.0, 1.0])
    F = np.array([480.0, -120.0, 240.0])                 # the second point pulls
    W = impulse_weights(F, [1, 1, 0], H, 2.0, 60.0)
    np.testing.assert_allclose(W, [2.0 / (H * 540.0) ** 2, 2.0 / (H * 60.0) ** 2, 0.0])
    rng = np.random.default_rng(0)
    Px, Pu, dx, du = (rng.normal(size=s) for s in ((9, 5), (9, 2), 5, 2))
    dQ, dR, dN = impulse_cost_terms(Px, Pu, point_rows(W, n, tangential=0.5))
    dp = (Px @ dx + Pu @ du).reshape(3, 3)
    want = W @ (dp[:, 2] ** 2 + 0.5 * (dp[:, :2] ** 2).sum(1))
    np.testing.assert_allclose(dx @ dQ @ dx + 2 * dx @ dN @ du + du @ dR @ du, want, rtol=1e-12)
    with pytest.raises(MotionError, match="loads must be \\(3,\\)"):
        impulse_weights(F[:2], [1, 1, 0], H, 2.0, 60.0)
    with pytest.raises(MotionError, match="contact_force_offset must be finite and > 0"):
        LQRWeights(contact_force=1.0, contact_force_offset=0.0)
    with pytest.raises(MotionError, match="contact_force must be finite and >= 0"):
        LQRWeights(contact_force=-1.0)


def _closed_loop(tree, step, q, u, cost):
    """The linear model standing on its four held points, pushed (pelvis 0.1 m/s forward,
    rolled 0.02 rad/s), under the finite-horizon gains with or without the impulse cost:
    the normal impulses' changes per step (steps, points)."""
    nv, w = tree.nv, np.ones(4)
    v = np.zeros(nv)
    A, B, Px, Pu = step.linearize(q, v, u, w, impulses=True)
    Q = LQRWeights().q_matrix(nv, True)
    R = 1e-3 * np.eye(4)
    F = np.asarray(step.impulses(q, v, u, w), float)[2::3].ravel() / H
    dQ, dR, dN = (impulse_cost_terms(Px, Pu, point_rows(impulse_weights(F, w, H, cost, 50.0),
                                                          (0, 0, 1)))
                  if cost else (0, 0, None))
    T = 240
    K, _ = finite_horizon_lqr(np.repeat(A[None], T, 0), np.repeat(B[None], T, 0), Q + dQ,
                              R + dR, Q, dN)
    x = np.zeros(2 * nv)
    x[nv:nv + 6] = [0.02, 0, 0, 0.1, 0, 0]
    dpn, xs = [], []
    for n in range(T):
        du = -K[n] @ x
        dpn.append((Px @ x + Pu @ du)[2::3])
        x = A @ x + B @ du
        xs.append(x)
    return np.array(dpn), np.array(xs)


def test_the_impulse_cost_keeps_the_held_points_loads_closer_to_the_reference():
    tree, step, q, kp = _step()
    u = kp * q[7:]                                       # the PD holds the neutral pose
    p_ref = np.asarray(step.impulses(q, np.zeros(tree.nv), u, np.ones(4)), float)[2::3].ravel()
    assert p_ref.min() > 0                               # all four push at the reference
    plain, xs0 = _closed_loop(tree, step, q, u, 0.0)
    priced, xs1 = _closed_loop(tree, step, q, u, 10.0)
    worst0, worst1 = (np.abs(d / (p_ref + 50 * H)).max() for d in (plain, priced))
    assert worst1 < 0.75 * worst0, (worst0, worst1)
    # still a regulator: the push is taken out
    assert np.linalg.norm(xs1[-1]) < 0.1 * np.linalg.norm(xs1[0])


def test_the_feet_rows_are_each_feet_relative_load_change_and_pressure_centre_shift():
    rng = np.random.default_rng(5)
    x = np.c_[rng.uniform(-0.1, 0.2, (6, 2)), np.zeros(6)]
    F = np.array([300.0, 100.0, 0.0, 50.0, 400.0, 250.0])
    held = np.array([1, 1, 1, 0, 1, 1])
    groups = np.array(["a", "a", "a", "a", "b", "b"])     # point 3 not held: not priced
    E = foot_rows(x, F, held, groups, (0, 0, 1), H, 40.0, 0.05)
    assert E.shape == (6, 18)
    dp = 1e-3 * rng.normal(size=(6, 3))
    dp[3] = 1.0                                          # ignored: not held
    f = E @ dp.ravel()
    for g, (idx, r) in enumerate((([0, 1, 2], f[:3]), ([4, 5], f[3:]))):
        F1 = F[idx] + dp[idx, 2] / H
        cop0, cop1 = F[idx] @ x[idx] / F[idx].sum(), F1 @ x[idx] / F1.sum()
        assert r[0] == pytest.approx((F1.sum() - F[idx].sum()) / (F[idx].sum() + 40.0))
        shift = (cop1 - cop0)[:2] * F1.sum() / (F[idx].sum() + 40.0) / 0.05
        # the two tangent rows span the floor plane: the shift's length and the exact one's
        # agree to first order (the exact shift scaled by the new load, F1/F)
        assert np.linalg.norm(r[1:]) == pytest.approx(np.linalg.norm(shift), rel=1e-9)


def test_the_pushed_body_on_a_passive_ankle_still_stands_with_the_feet_cost():
    stood, Q = _stand(LQRWeights(contact_force=3.0, contact_feet=True))
    assert np.all(stood.q[:, 6] > Q[0, 6] - 0.005)
    assert np.linalg.norm(stood.q[-1, 4:7] - Q[0, 4:7]) < 0.01
    assert np.linalg.norm(stood.v[-1]) < 0.01


def test_the_rows_per_frame_price_the_held_points_and_the_foot_in_the_world():
    """contact_cost_rows on the one-legged body: frame 0 holds three of the foot's four points,
    frame 1 none (zero rows, padded to frame 0's shape); the points' cost against the relative
    normal loads written out, the foot's against its load and its centre of pressure in the
    world (the points placed by the foot's pose)."""
    tree = _monopod()
    _, Q, _ = _standing(tree, frames=2)
    Q[:, 1], Q[:, 3] = 0.2, 0.3                          # the body tilted and turned: the
    Q[:, :4] /= np.linalg.norm(Q[:, :4], axis=1, keepdims=True)   # sole's width foreshortened
    F = np.array([[300.0, 100.0, 50.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    held = np.array([[1, 1, 1, 0], [0, 0, 0, 0]])
    rng = np.random.default_rng(7)
    dp = rng.normal(size=(4, 3))
    c, F0 = 3.0, 40.0
    E = contact_cost_rows(tree, {"r-foot": FOOT}, Q, F, held, (0, 0, 1), H,
                          LQRWeights(contact_force=c, contact_force_offset=F0))
    assert E.shape == (2, 12, 12) and not E[1].any()
    want = c * np.sum(held[0] * (dp[:, 2] / (H * (F[0] + F0))) ** 2)
    assert np.sum((E[0] @ dp.ravel()) ** 2) == pytest.approx(want, rel=1e-12)
    E = contact_cost_rows(tree, {"r-foot": FOOT}, Q, F, held, (0, 0, 1), H,
                          LQRWeights(contact_force=c, contact_force_offset=F0, contact_feet=True,
                                     contact_cop_length=0.05))
    assert E.shape == (2, 3, 12) and not E[1].any()
    T = np.asarray(tree.body_pose("r-foot", Q[0]), float)
    x = (np.asarray(FOOT) @ T[:3, :3].T + T[:3, 3])[:3]  # the held points in the world
    Ft, dF = F[0, :3].sum(), dp[:3, 2] / H
    cop = F[0, :3] @ x / Ft
    f = E[0] @ dp.ravel()
    assert f[0] == pytest.approx(np.sqrt(c) * dF.sum() / (Ft + F0), rel=1e-12)
    shift = dF @ (x - cop) / (Ft + F0) / 0.05            # first-order shift times F / (F + F0)
    assert np.linalg.norm(f[1:]) == pytest.approx(np.sqrt(c) * np.linalg.norm(shift[:2]),
                                                  rel=1e-9)
    with pytest.raises(MotionError, match="loads and held must be \\(2, 4\\)"):
        contact_cost_rows(tree, {"r-foot": FOOT}, Q, F[:, :3], held, (0, 0, 1), H,
                          LQRWeights(contact_force=c))

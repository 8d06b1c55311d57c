"""Tests of multibody.tree.spatial: rotations, quaternions, exponential maps, Plucker transforms,
cross products and spatial inertias, numerically and symbolically."""
import casadi as ca
import numpy as np
import pytest

from multibody import spatial as sp

rng = np.random.default_rng(42)


def _rand_rot():
    return sp.exp_so3(rng.normal(size=3))


def _is_rotation(R):
    return np.allclose(R.T @ R, np.eye(3), atol=1e-12) and np.isclose(np.linalg.det(R), 1.0)


def test_coordinate_rotations_match_rodrigues():
    a = 0.7
    for R, ax in ((sp.rotation_x(a), (1, 0, 0)), (sp.rotation_y(a), (0, 1, 0)),
                  (sp.rotation_z(a), (0, 0, 1))):
        assert _is_rotation(R)
        np.testing.assert_allclose(R, sp.axis_angle_to_rotation(ax, a), atol=1e-15)
    # rotating x by 90 degrees about z gives y
    np.testing.assert_allclose(sp.rotation_z(np.pi / 2) @ [1, 0, 0], [0, 1, 0], atol=1e-15)


def test_rpy_convention_and_roundtrip():
    r, p, y = 0.3, -0.4, 1.2
    np.testing.assert_allclose(sp.rpy_to_rotation([r, p, y]),
                               sp.rotation_z(y) @ sp.rotation_y(p) @ sp.rotation_x(r))
    np.testing.assert_allclose(sp.rotation_to_rpy(sp.rpy_to_rotation([r, p, y])), [r, p, y],
                               atol=1e-14)


@pytest.mark.parametrize("angle", [1e-12, 1e-5, 0.5, 2.0, np.pi - 1e-6, np.pi])
def test_quaternion_rotation_roundtrip(angle):
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    R = sp.axis_angle_to_rotation(axis, angle)
    q = sp.rotation_to_quaternion(R)
    assert q[0] >= 0 and np.isclose(np.linalg.norm(q), 1.0)
    np.testing.assert_allclose(sp.quaternion_to_rotation(q), R, atol=1e-12)
    np.testing.assert_allclose(sp.quaternion_to_rotation(sp.quaternion_exp(axis * angle)), R,
                               atol=1e-12)
    if angle < np.pi - 1e-3:
        np.testing.assert_allclose(sp.log_so3(R), axis * angle, atol=1e-9)
        np.testing.assert_allclose(sp.quaternion_log(q), axis * angle, atol=1e-9)
    ax2, ang2 = sp.rotation_to_axis_angle(R)
    np.testing.assert_allclose(sp.axis_angle_to_rotation(ax2, ang2), R, atol=1e-9)


def test_quaternion_multiply_composes_rotations():
    a, b = sp.quaternion_exp(rng.normal(size=3)), sp.quaternion_exp(rng.normal(size=3))
    np.testing.assert_allclose(sp.quaternion_to_rotation(sp.quaternion_multiply(a, b)),
                               sp.quaternion_to_rotation(a) @ sp.quaternion_to_rotation(b),
                               atol=1e-14)
    np.testing.assert_allclose(sp.quaternion_multiply(a, sp.quaternion_conjugate(a)),
                               [1, 0, 0, 0], atol=1e-15)


def test_exp_so3_small_angle_series_and_matrix_exponential():
    from scipy.linalg import expm
    for w in (np.array([1e-9, -2e-9, 3e-9]), np.array([1e-4, 0, 2e-4]), rng.normal(size=3)):
        np.testing.assert_allclose(sp.exp_so3(w), expm(sp.skew(w)), atol=1e-15)
    tw = rng.normal(size=6)
    E = np.zeros((4, 4))
    E[:3, :3], E[:3, 3] = sp.skew(tw[:3]), tw[3:]
    np.testing.assert_allclose(sp.exp_se3(tw), expm(E), atol=1e-13)
    np.testing.assert_allclose(sp.log_se3(sp.exp_se3(tw * 0.5)), tw * 0.5, atol=1e-12)
    np.testing.assert_allclose(sp.log_se3(sp.exp_se3(tw * 1e-7)), tw * 1e-7, atol=1e-18)


def test_symbolic_matches_numeric_and_derivative_finite_at_zero():
    w = ca.SX.sym("w", 3)
    fR = ca.Function("R", [w], [sp.exp_so3(w)])
    fq = ca.Function("q", [w], [sp.quaternion_exp(w)])
    fl = ca.Function("l", [w], [sp.quaternion_log(sp.quaternion_exp(w))])
    for x in (np.zeros(3), np.array([1e-5, 2e-5, 0]), rng.normal(size=3)):
        np.testing.assert_allclose(fR(x).full(), sp.exp_so3(x), atol=1e-15)
        np.testing.assert_allclose(fq(x).full().ravel(), sp.quaternion_exp(x), atol=1e-15)
        np.testing.assert_allclose(fl(x).full().ravel(), x, atol=1e-12)
    J = ca.Function("J", [w], [ca.jacobian(ca.vec(sp.exp_so3(w)), w)])(np.zeros(3)).full()
    assert np.all(np.isfinite(J))
    # d exp(w)/dw at 0 is the generator: column k = vec(skew(e_k))
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1
        np.testing.assert_allclose(J[:, k], sp.skew(e).ravel(order="F"), atol=1e-15)
    R = ca.SX.sym("R", 3, 3)
    fq2 = ca.Function("q2", [R], [sp.rotation_to_quaternion(R)])
    for _ in range(5):
        Rn = _rand_rot()
        np.testing.assert_allclose(fq2(Rn).full().ravel(), sp.rotation_to_quaternion(Rn),
                                   atol=1e-12)


def test_plucker_transforms_and_power_invariance():
    T = sp.pose(_rand_rot(), rng.normal(size=3))
    X, Xf = sp.motion_transform(T), sp.force_transform(T)
    np.testing.assert_allclose(Xf, np.linalg.inv(X).T, atol=1e-12)
    np.testing.assert_allclose(sp.motion_transform(sp.pose_inverse(T)), np.linalg.inv(X),
                               atol=1e-12)
    m, f = rng.normal(size=6), rng.normal(size=6)
    assert np.isclose((X @ m) @ (Xf @ f), m @ f)
    # velocity of a rigid body given at B's origin, seen at A's origin
    w, v = m[:3], m[3:]
    R, p = T[:3, :3], T[:3, 3]
    vA = X @ m
    np.testing.assert_allclose(vA[3:], R @ v + np.cross(p, R @ w), atol=1e-12)


def test_cross_products_and_inertia():
    m, u, f = rng.normal(size=6), rng.normal(size=6), rng.normal(size=6)
    np.testing.assert_allclose(sp.motion_cross(m) @ u, sp.cross_motion(m, u), atol=1e-14)
    np.testing.assert_allclose(sp.force_cross(m) @ f, sp.cross_force(m, f), atol=1e-14)
    np.testing.assert_allclose(sp.force_cross(m), -sp.motion_cross(m).T)
    # duality (Featherstone eq. 2.33): (m x u) . f = -u . (m x* f)
    assert np.isclose(sp.cross_motion(m, u) @ f, -(u @ sp.cross_force(m, f)))
    mass, com = 2.5, rng.normal(size=3)
    A = rng.normal(size=(3, 3))
    Ic = A @ A.T
    I6 = sp.spatial_inertia(mass, com, Ic)
    assert np.allclose(I6, I6.T) and np.all(np.linalg.eigvalsh(I6) > 0)
    m2, c2, I2 = sp.inertia_parameters(I6)
    assert np.isclose(m2, mass)
    np.testing.assert_allclose(c2, com, atol=1e-14)
    np.testing.assert_allclose(I2, Ic, atol=1e-13)
    # kinetic energy of a translating body: 1/2 m |v|^2
    V = np.r_[0, 0, 0, 1.0, 2.0, 3.0]
    assert np.isclose(0.5 * V @ I6 @ V, 0.5 * mass * 14.0)
    # symbolic inertia equals numeric
    ms = ca.SX.sym("m")
    f6 = ca.Function("I", [ms], [sp.spatial_inertia(ms, com, Ic)])
    np.testing.assert_allclose(f6(mass).full(), I6, atol=1e-14)


def test_against_pinocchio_se3_action():
    pin = pytest.importorskip("pinocchio")
    R, p = _rand_rot(), rng.normal(size=3)
    M = pin.SE3(R, p)
    X = sp.motion_transform(sp.pose(R, p))
    Xp = M.action  # [linear; angular] ordering
    P = np.block([[np.zeros((3, 3)), np.eye(3)], [np.eye(3), np.zeros((3, 3))]])
    np.testing.assert_allclose(P @ Xp @ P, X, atol=1e-14)
    q = sp.rotation_to_quaternion(R)
    qp = pin.Quaternion(R).coeffs()  # x, y, z, w
    s = np.sign(q[0] * qp[3]) or 1.0
    np.testing.assert_allclose(q, s * np.r_[qp[3], qp[:3]], atol=1e-12)

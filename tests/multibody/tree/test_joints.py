"""Tests of the joint types: transforms, motion subspaces and biases against finite
differences along the manifold, qdot/integrate/difference consistency, limits, validation."""
import casadi as ca
import numpy as np
import pytest

from multibody import (JOINT_TYPES, Ball, Euler, Free, JointError, Planar, Prismatic, Revolute,
                       Screw, Translational, Universal, Weld, spatial)

rng = np.random.default_rng(7)


def _joints():
    return [
        Revolute("r", "a", "b", axis=(1, 2, 3)),
        Prismatic("p", "a", "b", axis=(0, 1, 1)),
        Screw("s", "a", "b", axis=(1, 0, 1), pitch=0.2),
        Universal("u", "a", "b", axis1=(1, 0, 0), axis2=(0, 0, 1)),
        Euler("e", "a", "b", axes="zyx"),
        Euler("e2", "a", "b", axes="xzx"),
        Ball("ba", "a", "b"),
        Planar("pl", "a", "b", axis=(0, 1, 1)),
        Translational("t", "a", "b"),
        Free("f", "a", "b"),
    ]


@pytest.mark.parametrize("j", _joints(), ids=lambda j: j.type + "_" + j.name)
def test_motion_subspace_and_bias_match_finite_differences(j):
    q = j.random_configuration(rng)
    v = rng.normal(size=j.nv)
    h = 1e-6
    qp, qm = j.integrate(q, v, h), j.integrate(q, v, -h)
    T, Tp, Tm = j.joint_transform(q), j.joint_transform(qp), j.joint_transform(qm)
    Tdot = (Tp - Tm) / (2 * h)
    body = np.linalg.inv(T) @ Tdot  # [[w]x, v] in the child frame
    tw = np.r_[spatial.unskew(body[:3, :3]), body[:3, 3]]
    np.testing.assert_allclose(j.motion_subspace(q) @ v, tw, atol=1e-7)
    # c_J = (dS/dt) v (apparent derivative in the child frame)
    Sdot = (j.motion_subspace(qp) - j.motion_subspace(qm)) / (2 * h)
    np.testing.assert_allclose(j.bias_acceleration(q, v), Sdot @ v, atol=1e-7)
    # qdot = N(q) v and agrees with the derivative of integrate
    np.testing.assert_allclose(j.velocity_to_qdot(q) @ v, j.qdot(q, v), atol=1e-14)
    np.testing.assert_allclose((qp - qm) / (2 * h), j.qdot(q, v), atol=1e-7)
    # difference inverts integrate
    np.testing.assert_allclose(j.difference(q, j.integrate(q, v, 0.3)), 0.3 * v, atol=1e-10)


@pytest.mark.parametrize("j", _joints(), ids=lambda j: j.type + "_" + j.name)
def test_symbolic_equals_numeric(j):
    qs, vs = ca.SX.sym("q", j.nq), ca.SX.sym("v", j.nv)
    f = ca.Function("f", [qs, vs], [j.joint_transform(qs), j.motion_subspace(qs),
                                    j.bias_acceleration(qs, vs), j.qdot(qs, vs),
                                    j.integrate(qs, vs, 0.1)])
    q, v = j.random_configuration(rng), rng.normal(size=j.nv)
    T, S, c, qd, qn = f(q, v)
    np.testing.assert_allclose(T.full(), j.joint_transform(q), atol=1e-14)
    np.testing.assert_allclose(S.full(), j.motion_subspace(q), atol=1e-14)
    np.testing.assert_allclose(c.full().ravel(), j.bias_acceleration(q, v), atol=1e-14)
    np.testing.assert_allclose(qd.full().ravel(), j.qdot(q, v), atol=1e-14)
    np.testing.assert_allclose(qn.full().ravel(), j.integrate(q, v, 0.1), atol=1e-14)


def test_neutral_is_identity_and_counts():
    expected = {"weld": (0, 0), "revolute": (1, 1), "prismatic": (1, 1), "screw": (1, 1),
                "universal": (2, 2), "euler": (3, 3), "ball": (4, 3), "planar": (3, 3),
                "translational": (3, 3), "free": (7, 6)}
    assert set(JOINT_TYPES) == set(expected)
    for t, cls in JOINT_TYPES.items():
        j = cls("j", "a", "b")
        assert (j.type, j.nq, j.nv) == (t, *expected[t])
        np.testing.assert_allclose(j.joint_transform(j.neutral_configuration()), np.eye(4),
                                   atol=1e-15)


def test_quaternions_stay_unit_under_integration():
    for j in (Ball("b", "a", "c"), Free("f", "a", "c")):
        q = j.random_configuration(rng)
        for _ in range(200):
            q = j.integrate(q, rng.normal(size=j.nv) * 5, 0.05)
        assert abs(np.linalg.norm(q[:4]) - 1) < 1e-13


def test_free_integrate_is_se3_exponential():
    j = Free("f", "a", "c")
    q, v = j.random_configuration(rng), rng.normal(size=6)
    T = j.joint_transform(q) @ spatial.exp_se3(v * 0.7)
    np.testing.assert_allclose(j.joint_transform(j.integrate(q, v, 0.7)), T, atol=1e-13)


def test_euler_orders_and_known_transforms():
    a = np.array([0.3, -0.5, 0.9])
    for axes in ("xyz", "zyx", "zyz", "xzx", "yxz"):
        R = Euler("e", "p", "c", axes=axes).joint_transform(a)[:3, :3]
        rot = {"x": spatial.rotation_x, "y": spatial.rotation_y, "z": spatial.rotation_z}
        np.testing.assert_allclose(R, rot[axes[0]](a[0]) @ rot[axes[1]](a[1]) @
                                   rot[axes[2]](a[2]), atol=1e-15)
    s = Screw("s", "p", "c", axis=(0, 0, 1), pitch=0.5)
    np.testing.assert_allclose(s.joint_transform([np.pi])[:3, 3], [0, 0, 0.5 * np.pi])
    pl = Planar("pl", "p", "c")
    np.testing.assert_allclose(pl.joint_transform([1.0, 2.0, 0.0])[:3, 3], [1, 2, 0])
    assert np.allclose(pl.e1, [1, 0, 0]) and np.allclose(pl.e2, [0, 1, 0])


def test_limits_random_and_neutral():
    j = Revolute("r", "a", "b", lower=0.5, upper=1.5, velocity_limit=2, effort_limit=3,
                 damping=0.1, friction=0.2, stiffness=4.0, rest_position=1.0)
    assert j.neutral_configuration()[0] == 1.0  # 0 is outside the limits: midpoint
    qs = np.array([j.random_configuration(rng)[0] for _ in range(100)])
    assert qs.min() >= 0.5 and qs.max() <= 1.5
    assert j.velocity_limit[0] == 2 and j.effort_limit[0] == 3
    np.testing.assert_allclose(j.passive_force([1.2], [0.5]), [-0.1 * 0.5 - 4.0 * 0.2])
    b = Ball("b", "a", "c", stiffness=2.0)
    q = spatial.quaternion_exp([0.1, 0, 0])
    np.testing.assert_allclose(b.passive_force(q, np.zeros(3)), [-0.2, 0, 0], atol=1e-14)


@pytest.mark.parametrize("make, match", [
    (lambda: Revolute("elbow", "a", "b", axis=(0, 0, 0)), "joint 'elbow': axis must be nonzero"),
    (lambda: Revolute("elbow", "a", "b", lower=1, upper=0), "joint 'elbow': lower limit 1"),
    (lambda: Prismatic("slide", "a", "b", damping=-1), "joint 'slide': damping must be >= 0"),
    (lambda: Euler("wrist", "a", "b", axes="xxy"), "joint 'wrist': axes must be one of"),
    (lambda: Universal("u", "a", "b", axis1=(1, 0, 0), axis2=(2, 0, 0)), "must not be parallel"),
    (lambda: Weld("w", "a", "a"), "parent and child are the same body 'a'"),
    (lambda: Revolute("r", "a", "b", origin=np.ones((4, 4))), "joint 'r': origin is not a rigid"),
    (lambda: Ball("b", "a", "c", lower=[0, 0]), "joint 'b' \\(ball\\): lower must be a scalar or"
                                                 " have size 4"),
])
def test_invalid_joints_name_the_joint(make, match):
    with pytest.raises(JointError, match=match):
        make()

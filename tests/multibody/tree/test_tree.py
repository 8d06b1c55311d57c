"""Tests of RigidBodyTree: building, ordering, validation errors, frames, kinematics
semantics (relative transforms, frame velocities/accelerations, Jacobians) by finite
differences, and the numeric/symbolic dispatch."""
import casadi as ca
import numpy as np
import pytest

import models as M
from multibody import (Ball, BodyError, FrameError, Free, InputSizeError, JointError, Prismatic,
                       Revolute, RigidBodyTree, TreeError, Weld, spatial)

rng = np.random.default_rng(11)


def _small_tree():
    t = RigidBodyTree("t", backend="casadi")
    for n in ("a", "b", "c", "d"):
        t.add_body(n, 1.0, (0.1, 0, 0), np.eye(3) * 0.1)
    t.add_joint(Revolute("ja", "world", "a"))
    t.add_joint(Prismatic("jc", "a", "c", axis=(1, 0, 0)))
    t.add_joint(Ball("jb", "a", "b"))
    t.add_joint(Weld("jd", "b", "d"))
    return t


def test_depth_first_order_and_offsets():
    t = _small_tree()
    assert [j.name for j in t.joints] == ["ja", "jc", "jb", "jd"]
    assert [b.name for b in t.bodies] == ["world", "a", "c", "b", "d"]
    assert [(j.q_start, j.nq, j.v_start, j.nv) for j in t.joints] == \
        [(0, 1, 0, 1), (1, 1, 1, 1), (2, 4, 2, 3), (6, 0, 5, 0)]
    assert (t.nq, t.nv) == (6, 5)
    assert t.total_mass() == 4.0 and t.subtree_mass("b") == 2.0 and t.subtree_mass("a") == 4.0
    np.testing.assert_allclose(t.neutral_configuration(), [0, 0, 1, 0, 0, 0])
    q = t.random_configuration(np.random.default_rng(0))
    assert q.shape == (6,) and np.isclose(np.linalg.norm(q[2:6]), 1)
    assert t.get_joint("jb").type == "ball" and t.get_body("d").mass == 1.0


@pytest.mark.parametrize("action, exc, match", [
    (lambda t: t.add_joint(Revolute("j", "world", "nope")), JointError,
     "joint 'j': unknown child body 'nope' in tree 't'"),
    (lambda t: t.add_joint(Revolute("ja", "world", "d")), JointError,
     "duplicate joint name 'ja'"),
    (lambda t: t.add_body("a", 1.0), BodyError, "duplicate body or frame name 'a'"),
    (lambda t: t.add_joint(Revolute("j2", "c", "b")), JointError,
     "body 'b' already has parent joint 'jb'"),
    (lambda t: t.add_body("x", -1.0), BodyError, "body 'x': mass must be finite and >= 0"),
    (lambda t: t.add_body("x", 1.0, inertia=[[1, 2, 0], [0, 1, 0], [0, 0, 1]]), BodyError,
     "body 'x': inertia is not symmetric"),
    (lambda t: t.add_body("x", 1.0, inertia=np.diag([1, 1, 3])), BodyError,
     "body 'x': inertia violates the triangle inequality"),
    (lambda t: t.add_body("x", 1.0, inertia=np.diag([1, 1, -1])), BodyError,
     "body 'x': inertia is not positive semidefinite"),
    (lambda t: t.add_frame("a", "b"), FrameError, "duplicate frame or body name 'a'"),
    (lambda t: t.add_frame("f", "zz"), BodyError, "tree 't' has no body named 'zz'"),
    (lambda t: t.body_pose("zz", np.zeros(6)), FrameError, "tree 't' has no frame or body"),
])
def test_invalid_input_names_the_object(action, exc, match):
    with pytest.raises(exc, match=match):
        action(_small_tree())


def test_topology_errors():
    t = _small_tree()
    t.add_body("lonely", 1.0)
    with pytest.raises(TreeError, match="body 'lonely' has no parent joint"):
        t.finalize()
    t = RigidBodyTree("loop")
    t.add_body("a", 1.0)
    t.add_body("b", 1.0)
    t.add_joint(Revolute("ab", "a", "b"))
    t.add_joint(Revolute("ba", "b", "a"))
    with pytest.raises(TreeError, match=r"bodies \['a', 'b'\] are not connected to 'world'"):
        t.finalize()
    with pytest.raises(JointError, match="the world cannot be a child"):
        _small_tree().add_joint(Revolute("w", "a", "world"))


def test_argument_size_and_nan_errors():
    t = M.arm7(backend="casadi")
    with pytest.raises(InputSizeError, match="q has size 6 but tree 'arm7' has nq = 7"):
        t.mass_matrix(np.zeros(6))
    with pytest.raises(InputSizeError, match="tau has size 3 but tree 'arm7' has nv = 7"):
        t.forward_dynamics(np.zeros(7), np.zeros(7), np.zeros(3))
    with pytest.raises(ValueError, match="q passed to tree 'arm7' contains NaN"):
        t.mass_matrix([np.nan] * 7)
    with pytest.raises(InputSizeError, match="external wrench on body 'link3' has size 3"):
        t.inverse_dynamics(np.zeros(7), np.zeros(7), np.zeros(7), {"link3": np.zeros(3)})
    # lists are accepted and give numpy
    assert t.mass_matrix([0.0] * 7).shape == (7, 7)


def test_symbolic_calls_return_expressions():
    t = M.arm7(backend="casadi")
    q = ca.SX.sym("q", 7)
    H = t.mass_matrix(q)
    assert isinstance(H, ca.SX) and H.shape == (7, 7)
    qm = ca.MX.sym("q", 7)
    assert isinstance(t.forward_dynamics(qm, np.zeros(7), np.zeros(7)), ca.MX)
    qn = t.random_configuration(rng)
    np.testing.assert_allclose(ca.Function("H", [q], [H])(qn).full(), t.mass_matrix(qn))
    assert isinstance(t.kinetic_energy(qn, np.ones(7)), float)


def test_frames_and_relative_transform():
    t = M.arm7(backend="casadi")
    q = t.random_configuration(rng)
    T7 = t.body_pose("link7", q)
    np.testing.assert_allclose(t.body_pose("tool", q), T7 @ t.get_frame("tool").pose)
    T37 = t.relative_transform("link3", "link7", q)
    np.testing.assert_allclose(T37, np.linalg.inv(t.body_pose("link3", q)) @ T7, atol=1e-12)
    np.testing.assert_allclose(t.relative_transform("link7", "link3", q), np.linalg.inv(T37),
                               atol=1e-12)
    np.testing.assert_allclose(t.body_pose("world", q), np.eye(4))


def _fd(fun, q, v, h=1e-6, tree=None):
    return (fun(tree.integrate(q, v, h)) - fun(tree.integrate(q, v, -h))) / (2 * h)


def test_frame_velocity_semantics_by_finite_differences():
    t = M.humanoid(30, backend="casadi")
    q, v = t.random_configuration(rng), rng.normal(size=t.nv)
    A, B, C = "larm3", "rleg2", "neck1"
    # observed in B, expressed in B: derivative of the pose of A in B
    T = t.relative_transform(B, A, q)
    dT = _fd(lambda x: t.relative_transform(B, A, x), q, v, tree=t)
    w_expected = spatial.unskew(dT[:3, :3] @ T[:3, :3].T)
    Vab = t.frame_velocity(A, q, v, relative_to=B, expressed_in=B)
    np.testing.assert_allclose(Vab, np.r_[w_expected, dT[:3, 3]], atol=1e-7)
    # expressed in C: the same vectors in C's axes
    RBC = t.relative_transform(C, B, q)[:3, :3]
    Vc = t.frame_velocity(A, q, v, relative_to=B, expressed_in=C)
    np.testing.assert_allclose(Vc, np.r_[RBC @ Vab[:3], RBC @ Vab[3:]], atol=1e-12)
    # relative to world: the Jacobian
    np.testing.assert_allclose(t.frame_velocity(A, q, v), t.jacobian(A, q) @ v, atol=1e-12)
    np.testing.assert_allclose(t.frame_velocity(A, q, v, expressed_in=A),
                               t.jacobian(A, q, expressed_in=A) @ v, atol=1e-12)
    # acceleration: derivative (observed in B) of the B-expressed relative velocity
    vdot = rng.normal(size=t.nv)
    h = 1e-6

    def vel(s):
        return t.frame_velocity(A, t.integrate(q, v, s), v + s * vdot, relative_to=B,
                                expressed_in=B)
    np.testing.assert_allclose(t.frame_acceleration(A, q, v, vdot, relative_to=B,
                                                    expressed_in=B),
                               (vel(h) - vel(-h)) / (2 * h), atol=1e-6)


def test_point_jacobian_and_jdot_v_by_finite_differences():
    t = M.all_joints(backend="casadi")
    q, v = t.random_configuration(rng), rng.normal(size=t.nv)
    body, point = "body9", np.array([0.2, -0.1, 0.05])

    def world_point(x):
        T = t.body_pose(body, x)
        return T[:3, :3] @ point + T[:3, 3]
    J = t.jacobian(body, q, point)
    np.testing.assert_allclose(J[3:] @ v, _fd(world_point, q, v, tree=t), atol=1e-7)
    Jd = _fd(lambda x: t.jacobian(body, x, point) @ v, q, v, tree=t)
    np.testing.assert_allclose(t.jacobian_dot_times_v(body, q, v, point), Jd, atol=1e-6)


def test_center_of_mass_and_momentum_consistency():
    t = M.humanoid(30, backend="casadi")
    q, v = t.random_configuration(rng), rng.normal(size=t.nv)
    c = t.center_of_mass(q)
    manual = sum(b.mass * (t.body_pose(b.name, q)[:3, :3] @ b.com + t.body_pose(b.name, q)[:3, 3])
                 for b in t.bodies[1:]) / t.total_mass()
    np.testing.assert_allclose(c, manual, atol=1e-12)
    np.testing.assert_allclose(t.center_of_mass_jacobian(q) @ v,
                               _fd(t.center_of_mass, q, v, tree=t), atol=1e-7)
    h = t.momentum_matrix(q) @ v
    np.testing.assert_allclose(h[3:], t.total_mass() * t.center_of_mass_jacobian(q) @ v,
                               atol=1e-10)


def test_from_urdf_delegates_to_parser():
    pytest.importorskip("multibody.parsing")
    urdf = """<robot name="r"><link name="base"><inertial><mass value="1"/>
      <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
      <link name="l1"><inertial><mass value="2"/>
      <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
      <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
      <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      </robot>"""
    t = RigidBodyTree.from_urdf(urdf, floating_base=True)
    assert isinstance(t, RigidBodyTree)
    assert t.nq == 8 and t.nv == 7 and np.isclose(t.total_mass(), 3.0)
    assert isinstance(t.joints[0], Free)


def test_casadi_function_access_and_names():
    t = M.arm7(backend="casadi")
    f = t.casadi_function("forward_dynamics")
    assert f.name_in() == ["q", "v", "tau"] and f.name_out() == ["vdot"]
    q = t.random_configuration(rng)
    np.testing.assert_allclose(f(q, np.zeros(7), np.zeros(7)).full().ravel(),
                               t.forward_dynamics(q, np.zeros(7), np.zeros(7)), atol=1e-12)
    with pytest.raises(KeyError, match="no prebuilt function"):
        t.casadi_function("jacobian", "link1", "world")
    t.jacobian("link1", q)
    assert t.casadi_function("jacobian", "link1", "world").size_out(0) == (6, 7)


def test_frame_added_after_building_functions():
    t = M.arm7(backend="casadi")
    q = t.random_configuration(rng)
    t.mass_matrix(q)
    fc = t._functions
    T = spatial.pose(spatial.rotation_x(0.3), [0.1, 0.2, 0.3])
    t.add_frame("camera", "link4", T)
    assert t._functions is fc  # built functions kept
    np.testing.assert_allclose(t.body_pose("camera", q), t.body_pose("link4", q) @ T,
                               atol=1e-12)
    with pytest.raises(TypeError, match="frame arguments are body or frame names"):
        t.jacobian(3, q)


def test_joint_moving_no_mass_is_reported():
    t = RigidBodyTree("s")
    t.add_body("a", 1.0, inertia=np.eye(3))
    t.add_body("b", 0.0)
    t.add_joint(Revolute("j1", "world", "a"))
    t.add_joint(Revolute("j2", "a", "b"))
    with pytest.warns(RuntimeWarning, match=r"tree 's': joints \['j2'\] move no mass"):
        t.finalize()

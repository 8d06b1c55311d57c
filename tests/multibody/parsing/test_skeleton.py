"""The HDM / pagoda skeleton reader, the marker-set reader and the URDF writer, on the small
skeleton shipped in tests/data (same format as cooper-skeleton.txt)."""
import math
import pathlib

import numpy as np
import pytest
from scipy.integrate import quad

from multibody.parsing import (SkeletonError, configuration_from_urdf_order,
                               configuration_to_urdf_order, marker_offsets,
                               velocity_from_urdf_order,
                               parse_marker_set, parse_skeleton, parse_urdf, read_marker_set,
                               read_skeleton, skeleton_tree, urdf_joint_order,
                               velocity_to_urdf_order, write_urdf)
from multibody.tree import spatial

DATA = pathlib.Path(__file__).resolve().parents[2] / "data"
SKEL = DATA / "hdm_small_skeleton.txt"
MARK = DATA / "hdm_small_markers.txt"


@pytest.fixture(scope="module")
def built():
    sk = read_skeleton(SKEL)
    tree, info = skeleton_tree(sk)
    tree.finalize()
    return sk, tree, info


def _capsule_by_quadrature(rho, L, r):
    """Mass and inertia (about the centre, axis z) of a capsule by integrating discs."""
    def radius(z):
        if abs(z) <= L / 2:
            return r
        d = abs(z) - L / 2
        return math.sqrt(max(r * r - d * d, 0.0))
    zmax = L / 2 + r
    pts = [-L / 2, L / 2]
    m = quad(lambda z: rho * math.pi * radius(z) ** 2, -zmax, zmax, points=pts)[0]
    # disc of radius a at height z: Izz = m a^2 / 2, Ixx = m a^2 / 4 + m z^2
    izz = quad(lambda z: rho * math.pi * radius(z) ** 4 / 2, -zmax, zmax, points=pts)[0]
    ixx = quad(lambda z: rho * math.pi * radius(z) ** 2 * (radius(z) ** 2 / 4 + z * z),
               -zmax, zmax, points=pts)[0]
    return m, np.diag([ixx, ixx, izz])


def test_segments_masses_and_inertias(built):
    sk, tree, _ = built
    assert list(sk.segments) == ["torso", "pelvis", "r-thigh", "r-shank", "r-foot", "l-thigh",
                                 "l-arm"]
    torso = sk.segments["torso"]
    m = 900 * 0.26 * 0.20 * 0.40
    assert torso.mass == pytest.approx(m, rel=1e-14)
    np.testing.assert_allclose(np.diag(torso.inertia), m / 12 * np.array(
        [0.2 ** 2 + 0.4 ** 2, 0.26 ** 2 + 0.4 ** 2, 0.26 ** 2 + 0.2 ** 2]), rtol=1e-14)
    # capsules: ODE's closed form against an integral over discs; "R* L" order accepted
    for name, rho, L, r in (("r-thigh", 1000, 0.35, 0.07), ("r-shank", 1100, 0.30, 0.05)):
        seg = sk.segments[name]
        m_ref, I_ref = _capsule_by_quadrature(rho, L, r)
        assert seg.dims == (L, r)
        assert seg.mass == pytest.approx(m_ref, rel=1e-9)
        np.testing.assert_allclose(seg.inertia, I_ref, rtol=1e-9, atol=1e-14)
        np.testing.assert_allclose(seg.half_extents, [r, r, r + L / 2])
    # 'mass' overrides density, inertia scales with it
    arm = sk.segments["l-arm"]
    m1, I1 = _capsule_by_quadrature(1.0, 0.25, 0.04)
    assert arm.mass == 2.5
    np.testing.assert_allclose(arm.inertia, I1 * 2.5 / m1, rtol=1e-9)
    assert tree.total_mass() == pytest.approx(sk.total_mass, rel=1e-14)


def test_dof_and_joint_types(built):
    sk, tree, info = built
    assert sk.dof == 12
    assert (tree.nq, tree.nv) == (12 + 7, 12 + 6)
    types = {j.name: j.type for j in tree.joints}
    assert types == {"floating_base": "free", "torso_joint": "euler", "r-thigh_joint": "euler",
                     "r-shank_joint": "revolute", "r-foot_joint": "universal",
                     "l-thigh_joint": "revolute", "l-arm_joint": "universal"}
    assert tree.get_joint("floating_base").child == "pelvis"
    # the spine line is written torso <- pelvis: the joint is reversed for a pelvis root
    assert info["torso_joint"]["reversed"] and not info["r-thigh_joint"]["reversed"]


def test_reference_pose_anchors_meet(built):
    """In the reference pose every segment centre is where pagoda's move_next_to puts it, and
    both sides of every joint anchor coincide."""
    sk, tree, _ = built
    q = tree.neutral_configuration()
    root = tree.get_joint("floating_base")
    pel = sk.segments["pelvis"]
    q[root.q_start + 4:root.q_start + 7] = pel.position - pel.center
    torso, pelvis = sk.segments["torso"], sk.segments["pelvis"]
    np.testing.assert_allclose(torso.position, [0, 0, 1.3])
    np.testing.assert_allclose(pelvis.position, [0, 0, 1.3 - 0.2 - 0.08])
    for name, seg in sk.segments.items():
        T = np.asarray(tree.body_pose(name, q))
        np.testing.assert_allclose(T[:3, :3], np.eye(3), atol=1e-15)
        np.testing.assert_allclose(T[:3, 3] + seg.center, seg.position, atol=1e-14)
    for j in sk.joints:
        s1, s2 = sk.segments[j.body1], sk.segments[j.body2]
        np.testing.assert_allclose(s1.position + j.offset1 * s1.half_extents,
                                   s2.position + j.offset2 * s2.half_extents, atol=1e-14)


def _rotation_angle_about(R, axis):
    """Angle of the rotation R about a unit axis (R must be a rotation about that axis)."""
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]) / 2
    c = (np.trace(R) - 1) / 2
    return math.atan2(w @ axis, c)


@pytest.mark.parametrize("joint, body1, body2, axis", [
    ("r-shank_joint", "r-thigh", "r-shank", np.array([1.0, 0, 0])),   # written parent <- child
    ("l-thigh_joint", "pelvis", "l-thigh", np.array([0, 1.0, 0])),    # a given axis
])
def test_hinge_angle_is_odes_with_the_sign_converted(built, joint, body1, body2, axis):
    """ODE's hinge angle measures BODY1's rotation relative to BODY2 about the axis (its rate is
    axis . (w1 - w2)); our q is the child's rotation relative to the parent, so q = -angle and
    the file's stops LO~HI become [-HI, -LO]."""
    sk, tree, _ = built
    j = tree.get_joint(joint)
    q = tree.neutral_configuration()
    q[j.q_start] = 0.4
    R1 = np.asarray(tree.body_pose(body1, q))[:3, :3]
    R2 = np.asarray(tree.body_pose(body2, q))[:3, :3]
    ode_angle = _rotation_angle_about(R2.T @ R1, axis)
    assert ode_angle == pytest.approx(-0.4, abs=1e-12)
    line = next(s for s in sk.joints if s.body2 == body2)
    lo, hi = line.stops[0]
    assert j.lower[0] == pytest.approx(-math.radians(hi))
    assert j.upper[0] == pytest.approx(-math.radians(lo))


def test_ball_joints_as_euler_angles(built):
    """A ball is ODE's Euler motor: first axis fixed in BODY1, last (z) fixed in BODY2, middle
    a2 x a0 = y. pelvis <- r-thigh: R_parent_child = Rx(-t0) Ry(-t1) Rz(-t2) (axes 'xyz',
    q = -theta); torso <- pelvis written child first: R = Rz(t2) Ry(t1) Rx(t0) (axes 'zyx',
    q = theta, stops unchanged but reordered)."""
    sk, tree, _ = built
    hip, spine = tree.get_joint("r-thigh_joint"), tree.get_joint("torso_joint")
    assert hip.axes == "xyz" and spine.axes == "zyx"
    np.testing.assert_allclose(np.degrees(hip.lower), [-70, -70, -150])
    np.testing.assert_allclose(np.degrees(hip.upper), [150, 70, 30])
    np.testing.assert_allclose(np.degrees(spine.lower), [-10, -30, -20])
    np.testing.assert_allclose(np.degrees(spine.upper), [10, 30, 20])
    q = tree.neutral_configuration()
    q[hip.q_start:hip.q_start + 3] = [0.3, -0.2, 0.5]
    R = np.asarray(tree.relative_transform("pelvis", "r-thigh", q))[:3, :3]
    Rx = spatial.axis_angle_to_rotation(np.array([1.0, 0, 0]), 0.3)
    Ry = spatial.axis_angle_to_rotation(np.array([0, 1.0, 0]), -0.2)
    Rz = spatial.axis_angle_to_rotation(np.array([0, 0, 1.0]), 0.5)
    np.testing.assert_allclose(R, np.asarray(Rx) @ np.asarray(Ry) @ np.asarray(Rz), atol=1e-14)


def _ode_euler_motor_angles(R1, R2, a0, a2):
    """ODE's AMotor in Euler mode (amotor.cpp, computeEulerAngles), written from its geometry:
    axis 0 fixed in body 1, axis 2 fixed in body 2, axis 1 = ax2 x ax0; the reference vectors
    are axis 2 seen by body 1 and axis 0 seen by body 2 when the motor is set up (here the
    reference pose, both bodies unrotated)."""
    ax0, ax2 = R1 @ a0, R2 @ a2
    ax1 = np.cross(ax2, ax0)
    ax1 /= np.linalg.norm(ax1)
    ref1, ref2 = R1 @ a2, R2 @ a0
    t0 = -math.atan2(ax2 @ np.cross(ax0, ref1), ax2 @ ref1)
    t1 = -math.atan2(ax2 @ ax0, ax2 @ np.cross(ax0, ax1))
    t2 = -math.atan2(ref2 @ ax1, ref2 @ np.cross(ax1, ax2))
    return np.array([t0, t1, t2])


@pytest.mark.parametrize("joint, body1, body2", [("r-thigh_joint", "pelvis", "r-thigh"),
                                                 ("torso_joint", "torso", "pelvis")])
def test_ball_stops_are_odes_euler_motor_angles(built, joint, body1, body2):
    """Our Euler angles map to ODE's Euler-motor angles exactly as the stops were converted:
    theta_k = q_j / c for the coordinate j holding the file's k-th stop (reversed order for the
    spine line written child first), so a configuration inside our limits is inside the file's
    stops and vice versa."""
    sk, tree, info = built
    j = tree.get_joint(joint)
    line = next(s for s in sk.joints if {s.body1, s.body2} == {body1, body2})
    rng = np.random.default_rng(1)
    for _ in range(5):
        q = tree.neutral_configuration()
        q[j.q_start:j.q_start + 3] = rng.uniform(j.lower, j.upper)
        R1 = np.asarray(tree.body_pose(body1, q))[:3, :3]
        R2 = np.asarray(tree.body_pose(body2, q))[:3, :3]
        theta = _ode_euler_motor_angles(R1, R2, np.array([1.0, 0, 0]), np.array([0, 0, 1.0]))
        ours = q[j.q_start:j.q_start + 3] * np.array(info[joint]["ode_sign"])
        if info[joint]["reversed"]:
            ours = ours[::-1]
        np.testing.assert_allclose(theta, ours, atol=1e-12)
        lo, hi = np.radians(np.array(line.stops)).T
        assert np.all(theta >= lo - 1e-12) and np.all(theta <= hi + 1e-12)


def test_universal_with_given_axes(built):
    sk, tree, _ = built
    arm = tree.get_joint("l-arm_joint")
    np.testing.assert_allclose(arm.axis1, [1, 0, 0])
    np.testing.assert_allclose(arm.axis2, [0, 0, 1])
    np.testing.assert_allclose(np.degrees(arm.lower), [-1, -70])
    np.testing.assert_allclose(np.degrees(arm.upper), [150, 70])
    foot = tree.get_joint("r-foot_joint")  # default axes x then y, stops -70~70 -60~50
    np.testing.assert_allclose(foot.axis2, [0, 1, 0])
    np.testing.assert_allclose(np.degrees(foot.lower), [-70, -50])
    np.testing.assert_allclose(np.degrees(foot.upper), [70, 60])


def test_scaled_skeleton():
    sk = read_skeleton(SKEL)
    s, k = 1.1, 0.9
    sc = sk.scaled(s, k)
    for n, seg in sk.segments.items():
        g = sc.segments[n]
        assert g.mass == pytest.approx(seg.mass * k * s ** 3, rel=1e-12)
        np.testing.assert_allclose(g.inertia, seg.inertia * k * s ** 5, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(g.position, seg.position * s, atol=1e-14)


def test_segment_scales_move_the_anchors_with_the_segments():
    sk = read_skeleton(SKEL)
    sc = sk.scaled(segment_scales={"r-shank": 1.1})
    shank, shank0 = sc.segments["r-shank"], sk.segments["r-shank"]
    assert shank.dims == pytest.approx((0.33, 0.055))
    assert shank.mass == pytest.approx(shank0.mass * 1.1 ** 3, rel=1e-12)
    assert sc.segments["torso"].mass == sk.segments["torso"].mass
    for j in sc.joints:  # the reference pose is placed again: anchors still meet
        s1, s2 = sc.segments[j.body1], sc.segments[j.body2]
        np.testing.assert_allclose(s1.position + j.offset1 * s1.half_extents,
                                   s2.position + j.offset2 * s2.half_extents, atol=1e-14)
    # the foot hangs lower by the shank's extra length between its two anchors (0.9 + 1 of
    # the half extent)
    dz = 1.9 * (shank.half_extents[2] - shank0.half_extents[2])
    assert sc.segments["r-foot"].position[2] == pytest.approx(
        sk.segments["r-foot"].position[2] - dz, abs=1e-14)
    with pytest.raises(SkeletonError, match="segment_scales names unknown segment 'tail'"):
        sk.scaled(segment_scales={"tail": 1.0})
    with pytest.raises(SkeletonError, match="scale of segment 'torso' must be positive"):
        sk.scaled(segment_scales={"torso": 0.0})


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("text, line, words", [
    ("a box 1 1 1\nb box 1 1\n", 2, ["box side Z"]),
    ("a box 1 1 1\nb sphere 0.2\n", 2, ["'R*'"]),
    ("a box 1 1 1\nb cap 0.3 0.1\n", 2, ["exactly one radius"]),
    ("a box 1 1 1\nb blob 1\n", 2, ["expected a shape", "'blob'"]),
    ("a box 1 x 1\n", 1, ["box side Y", "'x'"]),
    ("a box 1 1 1 density\n", 1, ["expected a density", "end of the line"]),
    ("a box 1 1 1 colour 3\n", 1, ["expected density, mass, position or root"]),
    ("a box 1 1 1\nb box 1 1 1\nhinge a(0 0 1) <- c(0 0 -1)\n", 3, ["unknown segment 'c'"]),
    ("a box 1 1 1\nb box 1 1 1\nball a(0 0 1) <- b(0 0 -1) stops -1~1 -2~2\n", 3,
     ["expected 3 stop ranges"]),
    ("a box 1 1 1\nb box 1 1 1\nhinge a(0 0 1) <- b(0 0 -1) stops 5~1\n", 3, ["lower 5.0 > upper"]),
    ("a box 1 1 1\nb box 1 1 1\nhinge a(0 0) <- b(0 0 -1)\n", 3, ["three numbers"]),
    ("a box 1 1 1\nb box 1 1 1\nhinge a(0 0 1) <- b(0 0 -1) axes <0 0 0>\n", 3, ["is zero"]),
    ("a box 1 1 1\nb box 1 1 1\nhinge a(0 0 1) <- b(0 0 -1)\nhinge b(0 0 1) <- a(0 0 1)\n", 4,
     ["closes a loop"]),
    ("a box 1 1 1\na box 1 1 1\n", 2, ["duplicate segment 'a'"]),
])
def test_unparsable_line_names_file_line_and_expectation(text, line, words):
    with pytest.raises(SkeletonError) as exc:
        parse_skeleton(text, "body.txt")
    msg = str(exc.value)
    assert msg.startswith(f"body.txt, line {line}:"), msg
    for w in words:
        assert w in msg, msg
    assert isinstance(exc.value, ValueError)


def test_tree_errors():
    sk = parse_skeleton("a box 1 1 1\nb box 1 1 1\nc box 1 1 1\nhinge a <- b\n", "t.txt")
    with pytest.raises(SkeletonError, match="c are not connected to the root segment 'a'"):
        skeleton_tree(sk)
    with pytest.raises(SkeletonError, match="root segment 'zz' is not declared"):
        skeleton_tree(sk, root="zz")
    sk = parse_skeleton("a box 1 1 1\nb box 1 1 1\nball a <- b axes <1 1 0> <0 0 1>\n", "t.txt")
    with pytest.raises(SkeletonError, match="t.txt, line 3: ball joint axes must be coordinate"):
        skeleton_tree(sk)


def test_marker_set_reader_and_errors(built):
    sk, tree, _ = built
    marks = read_marker_set(MARK)
    assert len(marks) == 16 and marks[0].name == "Sub:STRN" and marks[0].short_name == "STRN"
    out = marker_offsets(marks, sk)
    name, body, off = out[0]
    assert (name, body) == ("STRN", "torso")
    seg = sk.segments["torso"]
    np.testing.assert_allclose(off, seg.center + np.array([0, 1, 0.5]) * seg.half_extents)
    with pytest.raises(SkeletonError, match=r"m.txt, line 2: expected 'NAME SEGMENT X Y Z'"):
        parse_marker_set("# c\nA head 1 2\n", "m.txt")
    with pytest.raises(SkeletonError, match="duplicate marker 'A'"):
        parse_marker_set("A head 1 2 3\nA head 1 2 3\n", "m.txt")
    bad = parse_marker_set("A torso 0 0 0\nSub:B nose 1 0 0\n", "m.txt")
    with pytest.raises(SkeletonError) as exc:
        marker_offsets(bad, sk, source="m.txt")
    assert "m.txt, line 2: marker 'Sub:B' is attached to unknown segment 'nose'" in str(exc.value)


# ------------------------------------------------------------------ URDF export
def _map(tree, tree2, x, kind="q"):
    """Our q (kind "q") or v/tau (kind "v") -> the reloaded URDF tree's, joint by joint by name
    (chains named <joint>_<axis> or _1/_2), independently of the writer's own order maps."""
    start, base = ("q_start", 7) if kind == "q" else ("v_start", 6)
    x2 = np.zeros(tree2.nq if kind == "q" else tree2.nv)
    fb, fb2 = tree.get_joint("floating_base"), tree2.get_joint("floating_base")
    s, s2 = getattr(fb, start), getattr(fb2, start)
    x2[s2:s2 + base] = x[s:s + base]
    for j in tree.joints:
        if j.type == "free":
            continue
        names = ([j.name] if j.type == "revolute" else
                 [f"{j.name}_1", f"{j.name}_2"] if j.type == "universal" else
                 [f"{j.name}_{a}" for a in j.axes])
        for k, n in enumerate(names):
            x2[getattr(tree2.get_joint(n), start)] = x[getattr(j, start) + k]
    return x2


def test_urdf_export_loads_back(built, tmp_path):
    sk, tree, _ = built
    path = tmp_path / "small.urdf"
    text = write_urdf(tree, path)
    assert path.read_text() == text
    tree2 = parse_urdf(path, floating_base=True)
    tree2.finalize()
    assert (tree2.nq, tree2.nv) == (tree.nq, tree.nv)
    for b in tree.bodies:
        b2 = tree2.get_body(b.name)
        assert b2.mass == pytest.approx(b.mass, rel=1e-15)
        np.testing.assert_allclose(b2.inertia, b.inertia, rtol=1e-15, atol=1e-18)
        np.testing.assert_allclose(b2.com, b.com, atol=1e-15)
    extra = [b for b in tree2.bodies if b.name not in {x.name for x in tree.bodies}]
    assert extra and all(b.mass == 0 and not b.inertia.any() for b in extra)
    # axes and limits of the exported chains
    hip = tree.get_joint("r-thigh_joint")
    for k, a in enumerate("xyz"):
        j2 = tree2.get_joint(f"r-thigh_joint_{a}")
        np.testing.assert_allclose(j2.axis, np.eye(3)["xyz".index(a)])
        assert (j2.lower[0], j2.upper[0]) == pytest.approx((hip.lower[k], hip.upper[k]),
                                                           abs=1e-15)
    arm = tree.get_joint("l-arm_joint")
    np.testing.assert_allclose(tree2.get_joint("l-arm_joint_2").axis, arm.axis2)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = tree.random_configuration(rng)
        q2 = _map(tree, tree2, q)
        for b in tree.bodies:
            np.testing.assert_allclose(np.asarray(tree2.body_pose(b.name, q2)),
                                       np.asarray(tree.body_pose(b.name, q)), atol=1e-12)
        v = rng.normal(size=tree.nv)
        a = rng.normal(size=tree.nv)
        tau = np.ravel(tree.inverse_dynamics(q, v, a))
        tau2 = np.ravel(tree2.inverse_dynamics(q2, _map(tree, tree2, v, "v"),
                                               _map(tree, tree2, a, "v")))
        np.testing.assert_allclose(_map(tree, tree2, tau, "v"), tau2, atol=1e-10)


def test_urdf_export_matches_pinocchio(built, tmp_path):
    """Pinocchio reads the export with a free-flyer root; after converting q, v (base first as
    [x y z qx qy qz qw], [v; w]) its CRBA and RNEA equal ours."""
    pin = pytest.importorskip("pinocchio", reason="Pinocchio (pin) is not installed")
    sk, tree, _ = built
    path = tmp_path / "small.urdf"
    write_urdf(tree, path)
    model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    data = model.createData()
    assert (model.nq, model.nv) == (tree.nq, tree.nv)
    assert list(model.names)[2:] == urdf_joint_order(tree)
    P = velocity_to_urdf_order(tree, np.eye(tree.nv)).T  # v_pin = P v
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = tree.random_configuration(rng)
        v, a = rng.normal(size=tree.nv), rng.normal(size=tree.nv)
        qp = configuration_to_urdf_order(tree, q)
        np.testing.assert_allclose(qp[3:7], [q[1], q[2], q[3], q[0]])
        np.testing.assert_array_equal(configuration_from_urdf_order(tree, qp), q)
        np.testing.assert_array_equal(
            velocity_from_urdf_order(tree, velocity_to_urdf_order(tree, v)), v)
        Hp = pin.crba(model, data, qp)
        Hp = np.triu(Hp) + np.triu(Hp, 1).T
        H = np.asarray(tree.mass_matrix(q))
        np.testing.assert_allclose(P @ H @ P.T, Hp, atol=1e-12)
        tau = np.ravel(tree.inverse_dynamics(q, v, a))
        taup = pin.rnea(model, data, qp, velocity_to_urdf_order(tree, v),
                        velocity_to_urdf_order(tree, a))
        np.testing.assert_allclose(velocity_to_urdf_order(tree, tau), taup, atol=1e-10)
        # forward kinematics of every link
        pin.forwardKinematics(model, data, qp)
        pin.updateFramePlacements(model, data)
        for b in tree.bodies[1:]:
            fid = model.getFrameId(b.name)
            np.testing.assert_allclose(data.oMf[fid].homogeneous,
                                       np.asarray(tree.body_pose(b.name, q)), atol=1e-12)


def test_urdf_export_refuses_ball_joints():
    from multibody.errors import JointError
    from multibody.tree import RigidBodyTree
    from multibody.tree.joints import Ball, Free
    t = RigidBodyTree("b")
    t.add_body("a", 1.0, inertia=np.eye(3))
    t.add_body("c", 1.0, inertia=np.eye(3))
    t.add_joint(Free("fb", "world", "a"))
    t.add_joint(Ball("ball", "a", "c"))
    with pytest.raises(JointError, match="joint 'ball'.*not 'ball'.*Euler joint instead"):
        write_urdf(t)


def test_urdf_order_maps_are_permutations_with_named_size_errors(built):
    """The maps move coordinates (no arithmetic): batches of (T, n) round-trip bitwise, the
    free-flyer block comes first in Pinocchio's layout, and a wrong size is InputSizeError."""
    from multibody.errors import InputSizeError
    _, tree, _ = built
    Q = np.random.default_rng(2).normal(size=(4, tree.nq))
    V = np.random.default_rng(3).normal(size=(4, tree.nv))
    Qp, Vp = configuration_to_urdf_order(tree, Q), velocity_to_urdf_order(tree, V)
    assert Qp.shape == Q.shape and sorted(Qp[1]) == sorted(Q[1])
    fb = tree.get_joint("floating_base")
    np.testing.assert_array_equal(Qp[:, :7], Q[:, fb.q_start + np.array([4, 5, 6, 1, 2, 3, 0])])
    np.testing.assert_array_equal(Vp[:, :6], V[:, fb.v_start + np.array([3, 4, 5, 0, 1, 2])])
    np.testing.assert_array_equal(configuration_from_urdf_order(tree, Qp), Q)
    np.testing.assert_array_equal(velocity_from_urdf_order(tree, Vp), V)
    with pytest.raises(InputSizeError, match=r"configuration_to_urdf_order: q must have shape "
                                             rf"\({tree.nq},\).*got shape \(3,\)"):
        configuration_to_urdf_order(tree, np.zeros(3))
    with pytest.raises(InputSizeError, match="velocity_from_urdf_order: v"):
        velocity_from_urdf_order(tree, 1.0)


@pytest.mark.parametrize("model", ["acrobot", "arm7", "branching"])
def test_urdf_export_of_fixed_base_models(model, tmp_path):
    """Shipped URDF models written back and read again give the same mass matrix and
    kinematics (a welded root at the identity is left out; elsewhere a world link is written)."""
    from multibody.models import model_path
    tree = parse_urdf(model_path(model))
    tree.finalize()
    tree2 = parse_urdf(write_urdf(tree, tmp_path / "m.urdf"))
    tree2.finalize()
    assert (tree2.nq, tree2.nv) == (tree.nq, tree.nv)
    assert [j.name for j in tree2.joints if j.nv] == [j.name for j in tree.joints if j.nv]
    rng = np.random.default_rng(0)
    for _ in range(3):
        q = tree.random_configuration(rng)
        np.testing.assert_allclose(np.asarray(tree2.mass_matrix(q)),
                                   np.asarray(tree.mass_matrix(q)), atol=1e-12)
        for b in tree.bodies[1:]:
            np.testing.assert_allclose(np.asarray(tree2.body_pose(b.name, q)),
                                       np.asarray(tree.body_pose(b.name, q)), atol=1e-12)
    for j in tree.joints:
        if j.nv:
            j2 = tree2.get_joint(j.name)
            np.testing.assert_allclose(j2.lower, j.lower)
            np.testing.assert_allclose(j2.upper, j.upper)

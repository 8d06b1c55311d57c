"""MJCF reader: small hand-written fixtures of each feature with analytic values, and the
dynamics (mass matrix with armature, inverse and forward dynamics) and kinematics against
MuJoCo and Pinocchio where they are installed."""
from __future__ import annotations

import math
import pathlib
import sys
import warnings

import numpy as np
import pytest

from multibody import RigidBodyTree
from multibody import geometry as G
from multibody.parsing import (MJCFError, MJCFWarning, mjcf_actuators, mjcf_collision_filter,
                               mjcf_contact, parse_mjcf, read_mjcf_model)

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import mjcf_reference as ref  # noqa: E402

DATA = pathlib.Path(__file__).parent / "data" / "mjcf"
FEATURES = DATA / "features.xml"


def _one_body(body: str, compiler: str = "", extra: str = "") -> str:
    return (f"<mujoco>{compiler}{extra}<worldbody>{body}</worldbody></mujoco>")


def _pendulum(joint: str = '<joint name="j" axis="0 1 0"/>', geom: str =
              '<geom type="sphere" size="0.1" pos="0 0 -1" mass="2"/>', compiler: str = "") -> str:
    return _one_body(f'<body name="b">{joint}{geom}</body>', compiler)


# ---------------------------------------------------------------- frames and joints
@pytest.mark.parametrize("attr", ['quat="0.7071067811865476 0 0 0.7071067811865476"',
                                  'axisangle="0 0 2 90"', 'euler="0 0 90"',
                                  'xyaxes="0 1 0 -1 0 0"', 'zaxis="0 0 1" euler="0 0 90"'])
def test_orientations_give_a_quarter_turn_about_z(attr):
    text = _one_body(f'<body name="b" pos="1 2 3" {attr}><geom size="0.1"/></body>')
    if attr.startswith("zaxis"):
        with pytest.raises(MJCFError, match="several orientations"):
            parse_mjcf(text)
        return
    X = np.asarray(parse_mjcf(text).body_pose("b", np.zeros(0)))
    Rz = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]])
    np.testing.assert_allclose(X[:3, :3], Rz, atol=1e-12)
    np.testing.assert_allclose(X[:3, 3], [1, 2, 3])


def test_euler_sequences_and_radians():
    a, b = 0.3, -0.5
    # intrinsic "xyz" (default): R = Rx(a) Ry(b); extrinsic "XYZ": R = Ry(b) Rx(a)
    Rx = np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])
    Ry = np.array([[math.cos(b), 0, math.sin(b)], [0, 1, 0], [-math.sin(b), 0, math.cos(b)]])
    for seq, R in (("xyz", Rx @ Ry), ("XYZ", Ry @ Rx)):
        text = _one_body(f'<body name="b" euler="{a} {b} 0"><geom size="0.1"/></body>',
                         f'<compiler angle="radian" eulerseq="{seq}"/>')
        X = np.asarray(parse_mjcf(text).body_pose("b", np.zeros(0)))
        np.testing.assert_allclose(X[:3, :3], R, atol=1e-12)


def test_zaxis_is_the_shortest_rotation():
    X = np.asarray(parse_mjcf(_one_body('<body name="b" zaxis="1 0 0"><geom size="0.1"/></body>'))
                   .body_pose("b", np.zeros(0)))
    np.testing.assert_allclose(X[:3, :3], [[0, 0, 1], [0, 1, 0], [-1, 0, 0]], atol=1e-12)


def test_hinge_range_in_degrees_and_autolimits():
    tree = parse_mjcf(_pendulum('<joint name="j" axis="0 1 0" range="-30 60" damping="0.3" '
                                'frictionloss="0.2" armature="0.05" stiffness="4" springref="10"/>'))
    j = tree.get_joint("j")
    assert j.type == "revolute"
    np.testing.assert_allclose([j.lower[0], j.upper[0]], [-math.pi / 6, math.pi / 3])
    assert (j.damping[0], j.friction[0], j.armature[0], j.stiffness[0]) == (0.3, 0.2, 0.05, 4.0)
    assert j.rest_position[0] == pytest.approx(math.radians(10))
    # limited="false" and autolimits="false" without a range: unlimited
    j2 = parse_mjcf(_pendulum('<joint name="j" range="-1 1" limited="false"/>')).get_joint("j")
    assert np.isinf(j2.upper[0])
    with pytest.raises(MJCFError, match="autolimits"):
        parse_mjcf(_pendulum('<joint name="j" range="-1 1"/>', compiler='<compiler autolimits="false"/>'))


def test_armature_adds_to_the_mass_matrix_diagonal():
    # point mass 2 kg at 1 m plus a sphere of radius 0.1: H = m l^2 + 2/5 m r^2 + armature
    tree = parse_mjcf(_pendulum('<joint name="j" axis="0 1 0" armature="0.25"/>'))
    H = float(np.asarray(tree.mass_matrix([0.3]))[0, 0])
    assert H == pytest.approx(2 * 1.0 + 0.4 * 2 * 0.01 + 0.25, rel=1e-12)


def test_ref_shifts_the_zero_of_a_hinge():
    # with ref = 90 degrees, q = 90 degrees is the pose in the file (the mass hangs below)
    tree = parse_mjcf(_pendulum('<joint name="j" axis="0 1 0" ref="90"/>'))
    com = np.asarray(tree.center_of_mass([math.pi / 2])).ravel()
    np.testing.assert_allclose(com, [0, 0, -1], atol=1e-12)
    model = read_mjcf_model(_pendulum('<joint name="j" axis="0 1 0" ref="90"/>'))
    np.testing.assert_allclose(model.qpos0, [math.pi / 2])


def test_several_joints_become_a_chain_through_massless_links():
    tree = parse_mjcf(_pendulum('<joint name="a" axis="1 0 0"/><joint name="b" axis="0 1 0" '
                                'pos="0 0 -0.5"/>'))
    # joint b is 0.5 m below the body origin: a massless link after it, welded back to "b"
    assert [j.name for j in tree.joints] == ["a", "b", "b_weld"]
    assert [b.name for b in tree.bodies] == ["world", "b_a_link", "b_b_link", "b"]
    assert tree.get_body("b_a_link").mass == tree.get_body("b_b_link").mass == 0.0
    np.testing.assert_allclose(tree.get_joint("b_weld").origin[:3, 3], [0, 0, 0.5])
    # the second hinge turns the mass about a point 0.5 m above it: H_bb = m 0.5^2 + I
    H = np.asarray(tree.mass_matrix([0.0, 0.0]))
    assert H[1, 1] == pytest.approx(2 * 0.25 + 0.4 * 2 * 0.01, rel=1e-12)
    assert H[0, 0] == pytest.approx(2 * 1.0 + 0.4 * 2 * 0.01, rel=1e-12)


def test_free_joint_starts_at_the_pose_in_the_file():
    model = read_mjcf_model(_one_body('<body name="b" pos="1 2 3" euler="0 0 90"><freejoint/>'
                                      '<geom size="0.1"/></body>'))
    s = math.sqrt(0.5)
    np.testing.assert_allclose(model.qpos0, [s, 0, 0, s, 1, 2, 3], atol=1e-12)
    assert model.tree.joints[0].type == "free"


# ---------------------------------------------------------------- mass properties
def test_capsule_cylinder_box_ellipsoid_inertias():
    r, h, rho = 0.1, 0.3, 500.0     # half length h
    def body(geom):
        t = parse_mjcf(_one_body(f'<body name="b"><freejoint/><geom density="{rho}" {geom}/></body>'))
        b = t.get_body("b")
        return b.mass, np.diag(b.inertia)
    m, I = body(f'type="cylinder" size="{r} {h}"')
    mc = rho * math.pi * r * r * 2 * h
    assert m == pytest.approx(mc)
    np.testing.assert_allclose(I, [mc * (3 * r * r + 4 * h * h) / 12] * 2 + [mc * r * r / 2])
    m, I = body(f'type="capsule" fromto="0 0 {-h} 0 0 {h}" size="{r}"')
    ms = rho * 4 / 3 * math.pi * r ** 3
    assert m == pytest.approx(mc + ms)
    # two hemispheres at their centroids h + 3r/8, own transverse inertia 83/320 m r^2
    d = h + 3 * r / 8
    ix = mc * (3 * r * r + 4 * h * h) / 12 + ms * (83 / 320 * r * r + d * d)
    np.testing.assert_allclose(I, [ix, ix, mc * r * r / 2 + 0.4 * ms * r * r], rtol=1e-12)
    m, I = body('type="box" size="0.1 0.2 0.3"')
    assert m == pytest.approx(rho * 0.048)
    np.testing.assert_allclose(I, m / 3 * np.array([0.13, 0.10, 0.05]))
    m, I = body('type="ellipsoid" size="0.1 0.2 0.3" mass="3"')
    np.testing.assert_allclose(I, 3 / 5 * np.array([0.13, 0.10, 0.05]))


def test_settotalmass_scales_masses_and_inertias():
    text = _one_body('<body name="a"><freejoint/><geom size="0.1" mass="1"/>'
                     '<body name="b" pos="0 0 1"><joint/><geom size="0.1" mass="3"/></body></body>',
                     '<compiler settotalmass="8"/>')
    tree = parse_mjcf(text)
    assert tree.get_body("a").mass == pytest.approx(2.0)
    assert tree.get_body("b").inertia[0, 0] == pytest.approx(6 * 0.4 * 0.01)


def test_mesh_inertia_is_refused_and_mesh_geoms_warn():
    text = ('<mujoco><asset><mesh name="m" file="part.stl"/></asset><worldbody><body name="b">'
            '<joint/><geom type="mesh" mesh="m"/></body></worldbody></mujoco>')
    with pytest.raises(MJCFError, match="line 1: body 'b': the inertia of mesh geom"):
        parse_mjcf(text)
    text = text.replace("<joint/>", '<joint/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>')
    with pytest.warns(MJCFWarning, match="visual geometry only"):
        tree = parse_mjcf(text)
    assert isinstance(tree.get_body("b").visual_geometries[0].shape, G.Mesh)


# ---------------------------------------------------------------- document structure
def test_defaults_childclass_and_include():
    model = read_mjcf_model(FEATURES)
    tree = model.tree
    assert tree.get_joint("shoulder_x").damping[0] == 0.4         # class "limb" (childclass)
    assert tree.get_joint("elbow").damping[0] == 0.7              # class "soft" inherits limb
    assert tree.get_joint("elbow").friction[0] == 0.2
    assert tree.get_joint("slider").armature[0] == 0.01
    assert tree.get_joint("root").damping[0] == 0.0    # <freejoint> takes no joint defaults
    assert model.options.timestep == 0.005
    np.testing.assert_allclose(tree.gravity, [0.3, -0.2, -9.7])
    # geoms: density from the classes; the sphere with contype=conaffinity=0 is visual only
    finger = tree.get_body("finger")
    assert finger.collision_geometries == [] and len(finger.visual_geometries) == 1
    floor = tree.get_body("world").collision_geometries[0]
    assert isinstance(floor.shape, G.Halfspace)
    assert {g.margin for _, g, _ in model.geoms} == {0.002}
    assert tree.get_frame("hand").body == "arm"


def test_include_cycles_and_missing_files(tmp_path):
    (tmp_path / "a.xml").write_text('<mujoco>\n<include file="b.xml"/>\n</mujoco>')
    (tmp_path / "b.xml").write_text('<mujoco>\n\n<include file="a.xml"/>\n</mujoco>')
    with pytest.raises(MJCFError, match=r"b\.xml, line 3: include 'a.xml': include cycle"):
        parse_mjcf(tmp_path / "a.xml")
    (tmp_path / "c.xml").write_text('<mujoco><include file="nowhere.xml"/></mujoco>')
    with pytest.raises(MJCFError, match="cannot read the included file"):
        parse_mjcf(tmp_path / "c.xml")
    with pytest.raises(MJCFError, match="needs a model file"):
        parse_mjcf('<mujoco><include file="x.xml"/></mujoco>')


@pytest.mark.parametrize("text, match", [
    ('<mujoco><compiler coordinate="global"/></mujoco>', r"line 1: compiler: coordinate=\"global\""),
    (_pendulum('<joint class="nope"/>'), "unknown default class 'nope'"),
    (_pendulum(geom='<geom type="sphere" fromto="0 0 0 0 0 1" size="0.1"/>'), "fromto needs"),
    (_one_body('<body><body name="c"><freejoint/><geom size="1"/></body></body>'),
     "free joint is only allowed"),
    (_pendulum('<joint type="hinge" range="2 1"/>'), "lower limit must be below"),
    (_pendulum(geom='<geom type="capsule" size="0.1"/>'), r"capsule size \[0.1, 0.0\] must be positive"),
    (_pendulum('<joint/><inertial mass="1" diaginertia="1 1 1"/>'), "missing the required attribute 'pos'"),
    (_pendulum('<joint/><inertial pos="0 0 0" mass="1" diaginertia="1 1 3"/>'), "triangle"),
    (_pendulum(geom='<geom type="plane" size="1 1 1"/>'), "plane is only allowed"),
    ('<robot name="x"/>', "no <mujoco> element"),
    (_one_body('<body name="a"><geom size="1"/></body><body name="a"><geom size="1"/></body>'),
     "duplicate body name"),
])
def test_errors_name_file_line_and_element(text, match):
    with pytest.raises(MJCFError, match=match) as info:
        parse_mjcf(text)
    assert info.value.source == "<string>" and info.value.line == 1
    assert str(info.value).startswith("<string>, line 1: ")
    # one element per line: the line named is the culprit's (the element, or for a body's
    # own fault the <body> start tag)
    lines = text.replace("><", ">\n<").split("\n")
    with pytest.raises(MJCFError, match=match.removeprefix("line 1: ")) as info:
        parse_mjcf("\n".join(lines))
    culprit = lines[info.value.line - 1]
    assert str(info.value).startswith(f"<string>, line {info.value.line}: ")
    tag = culprit.split()[0].strip("<>/")
    assert tag in str(info.value) or (tag == "robot" and "<robot>" in str(info.value)), \
        (culprit, str(info.value))


def test_unsupported_elements_warn_once_per_kind():
    text = ('<mujoco><tendon/><tendon/><worldbody><body name="b"><joint/><geom size="1"/>'
            '<composite/><composite/></body></worldbody><equality/></mujoco>')
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        parse_mjcf(text)
    msgs = sorted(str(w.message).split(": ", 2)[-1] for w in rec if w.category is MJCFWarning)
    assert len(msgs) == 3 and any("<tendon>" in m for m in msgs) and any("<composite>" in m for m in msgs)


def test_from_mjcf_and_from_file():
    t1 = RigidBodyTree.from_mjcf(str(FEATURES))
    t2 = RigidBodyTree.from_file(FEATURES)
    assert t1.nq == t2.nq == 14 and t1.nv == 12


# ---------------------------------------------------------------- actuators and contact
def test_actuators_become_blocks():
    model = read_mjcf_model(FEATURES)
    motor, servo = mjcf_actuators(model)
    assert motor.name == "m_shoulder"
    np.testing.assert_allclose(motor.gear_ratio, [40.0])
    np.testing.assert_allclose(motor.effort_limit, [40.0])
    assert servo.gain[0] == pytest.approx(50.0)                  # kp
    np.testing.assert_allclose(servo.bias[0], [0.0, -50.0, -2.0])   # 0, -kp, -kv


def test_collision_filter_and_contact_block():
    model = read_mjcf_model(FEATURES)
    f, friction = mjcf_collision_filter(model)
    assert f.is_filtered("torso", "forearm")              # <contact><exclude>
    assert f.is_filtered("torso", "arm")                  # parent and child (MuJoCo's filterparent)
    assert not f.is_filtered("world", "torso")            # a child of the world touches the floor
    assert friction[("torso", "world")] == [0.9]
    c = mjcf_contact(model)
    assert float(c.mu) == 0.9 and c.max_geometry_margin == 0.002


def test_contact_margin_offsets_the_signed_distance():
    text = _one_body('<geom name="floor" type="plane" size="1 1 1" margin="0.01"/>'
                     '<body name="ball" pos="0 0 0.105"><freejoint/><geom name="s" size="0.1" '
                     'margin="0.004"/></body>')
    model = read_mjcf_model(text)
    c = mjcf_contact(model)
    q = model.qpos0
    site = [i for i, (a, b) in enumerate(c.site_pairs)][0]
    assert c.gap(q, site) == pytest.approx(0.005 - 0.014, abs=1e-12)   # MuJoCo adds margins


# ---------------------------------------------------------------- references
def _mujoco():
    return pytest.importorskip("mujoco")


def test_features_fixture_matches_mujoco_dynamics():
    mujoco = _mujoco()
    tree = parse_mjcf(FEATURES)
    m = ref.mujoco_model(mujoco, FEATURES)
    np.testing.assert_allclose(np.asarray(m.body_mass)[1:],
                               [tree.get_body(n).mass for n in
                                ("torso", "arm", "forearm", "finger", "tail")], rtol=1e-12)
    err = ref.compare(mujoco, tree, m, np.random.default_rng(1), states=4)
    assert np.all(err < 1e-9), err


def test_features_fixture_matches_mujoco_kinematics():
    mujoco = _mujoco()
    tree = parse_mjcf(FEATURES)
    m = ref.mujoco_model(mujoco, FEATURES)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(2)
    for _ in range(3):
        qpos = ref.random_state(mujoco, m, rng)[0]
        d.qpos[:] = qpos
        mujoco.mj_kinematics(m, d)
        q = ref.q_from_mujoco(tree, qpos)
        for name in ("torso", "arm", "forearm", "finger", "tail"):
            X = np.asarray(tree.body_pose(name, q))
            i = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)
            np.testing.assert_allclose(X[:3, 3], d.xpos[i], atol=1e-12)
            np.testing.assert_allclose(X[:3, :3], d.xmat[i].reshape(3, 3), atol=1e-12)
        hand = tree.get_frame("hand")
        Xh = np.asarray(tree.body_pose(hand.body, q)) @ hand.pose
        i = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "hand")
        np.testing.assert_allclose(Xh[:3, 3], d.site_xpos[i], atol=1e-12)


@pytest.mark.parametrize("joint", ['<joint name="j" axis="0 1 1" ref="30" armature="0.2" damping="1"/>',
                                   '<joint name="j" type="slide" axis="1 0 1" ref="0.2" stiffness="5"/>',
                                   '<joint name="j" type="ball" pos="0 0 0.3" armature="0.1"/>'])
def test_single_joints_match_mujoco(joint):
    mujoco = _mujoco()
    text = _pendulum(joint, '<geom type="box" size="0.1 0.2 0.05" pos="0.1 0 -1" euler="10 0 5"/>')
    tree = parse_mjcf(text)
    m = ref.mujoco_model(mujoco, text, is_file=False)
    err = ref.compare(mujoco, tree, m, np.random.default_rng(3), states=3)
    assert np.all(err < 1e-9), err


def test_double_pendulum_matches_pinocchio(tmp_path):
    pin = pytest.importorskip("pinocchio")
    text = _one_body('<body name="a" pos="0 0 1"><joint name="j1" axis="0 1 0" armature="0.1"/>'
                     '<geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>'
                     '<body name="b" pos="0 0 -0.5" euler="0 20 0"><joint name="j2" axis="1 0 1"/>'
                     '<geom type="box" size="0.05 0.05 0.2" pos="0 0 -0.2"/></body></body>')
    path = tmp_path / "double.xml"
    path.write_text(text)
    tree = parse_mjcf(path)
    model = pin.buildModelFromMJCF(str(path))     # reads the armature into CRBA and RNEA
    data = model.createData()
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, v, a = rng.normal(size=2), rng.normal(size=2), rng.normal(size=2)
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        np.testing.assert_allclose(np.asarray(tree.mass_matrix(q)), M, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(np.asarray(tree.inverse_dynamics(q, v, a)).ravel(),
                                   pin.rnea(model, data, q, v, a), rtol=1e-9, atol=1e-12)

"""SDFormat reader: hand-written fixtures of each feature with values computed by hand, the same
robot as SDFormat and as URDF (and Pinocchio on the URDF twin: this Pinocchio build has no
SDFormat reader), error locations and warnings."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from multibody import RigidBodyTree
from multibody.geometry import Box, Ellipsoid, Halfspace, Mesh
from multibody.parsing import ModelParseError, SDFError, SDFWarning, parse_sdf, parse_urdf


def _rpy(r, p, y):
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y),
                              math.sin(y))
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    return Rz @ Ry @ Rx


def _X(xyz, rpy=(0, 0, 0)):
    X = np.eye(4)
    X[:3, :3] = _rpy(*rpy)
    X[:3, 3] = xyz
    return X


def _sdf(body: str, version="1.9") -> str:
    return f'<?xml version="1.0"?>\n<sdf version="{version}">\n{body}\n</sdf>\n'


def _quiet(text, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SDFWarning)
        return parse_sdf(text, **kw)


# -- poses and frames -------------------------------------------------------------------------
POSES = _sdf("""<model name="m">
  <pose>1 0 0 0 0 1.5707963267948966</pose>
  <link name="a"><pose>0 0 1 0 0 0</pose></link>
  <frame name="f" attached_to="a"><pose relative_to="a" degrees="true">0 2 0 90 0 0</pose></frame>
  <frame name="g"><pose relative_to="f">0 0 0.5 0 0 0</pose></frame>
  <link name="b"><pose relative_to="g" rotation_format="quat_xyzw">0.1 0 0 0 0 0.7071067811865476 0.7071067811865476</pose></link>
  <joint name="j" type="revolute"><parent>a</parent><child>b</child>
    <axis><xyz>1 0 0</xyz></axis></joint>
</model>""")


def test_relative_to_chains_equal_hand_computed_transforms():
    tree = parse_sdf(POSES)
    X_WM = _X((1, 0, 0), (0, 0, math.pi / 2))
    X_WA = X_WM @ _X((0, 0, 1))
    X_WF = X_WA @ _X((0, 2, 0), (math.pi / 2, 0, 0))
    X_WG = X_WF @ _X((0, 0, 0.5))                   # g: default relative_to = attached_to = model
    Rq = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1.0]])   # quaternion (0, 0, s, s): 90 deg about z
    X_WB = X_WG @ np.block([[Rq, np.array([[0.1], [0], [0]])], [np.zeros((1, 3)), np.ones((1, 1))]])
    q0 = tree.neutral_configuration()
    assert tree.nq == 7 + 1                         # a floats (Free, at its file pose) + j
    assert np.allclose(tree.body_pose("a", q0), X_WA, atol=1e-12)
    assert np.allclose(tree.body_pose("b", q0), X_WB, atol=1e-12)
    # frame f is on a, g (attached to the model frame) on the canonical link a
    assert tree.get_frame("f").body == "a" and tree.get_frame("g").body == "a"
    assert np.allclose(tree.body_pose("g", q0), X_WG, atol=1e-12)
    # the revolute axis x of the joint frame (= b's frame) turns b about its own x
    q = q0.copy()
    q[tree.get_joint("j").q_start] = 0.3
    assert np.allclose(tree.body_pose("b", q), X_WB @ _X((0, 0, 0), (0.3, 0, 0)), atol=1e-12)


def test_joint_pose_is_relative_to_the_child_and_axis_expressed_in():
    # the joint sits 0.5 m above the child origin along the child's z, axis y of the model frame
    text = _sdf("""<model name="m">
      <link name="p"/>
      <link name="c"><pose>0 0 -1 0 0.4 0</pose>
        <inertial><mass>2</mass><pose>0.1 0 -0.2 0 0 0</pose></inertial></link>
      <joint name="j" type="revolute"><pose>0 0 0.5 0 0 0</pose><parent>p</parent><child>c</child>
        <axis><xyz expressed_in="__model__">0 1 0</xyz></axis></joint>
      <joint name="w" type="fixed"><parent>world</parent><child>p</child></joint>
    </model>""")
    tree = parse_sdf(text)
    X_WC = _X((0, 0, -1), (0, 0.4, 0))
    X_WJ = X_WC @ _X((0, 0, 0.5))
    q = np.array([0.7])
    T = _X((0, 0, 0), (0, 0.7, 0))                   # rotation about world y through the joint
    T[:3, 3] = X_WJ[:3, 3] - T[:3, :3] @ X_WJ[:3, 3]
    expected = T @ X_WC
    assert np.allclose(tree.body_pose("c", q), expected, atol=1e-12)
    assert any(b.name == "j__joint_frame" for b in tree.bodies)   # joint off the child origin
    # gravity torque about the joint axis from the mass 2 at the COM, by hand
    com_W = (tree.body_pose("c", q) @ np.array([0.1, 0, -0.2, 1]))[:3]
    arm = com_W - X_WJ[:3, 3]
    expected_tau = -np.cross(arm, 2 * np.array([0, 0, -9.81]))[1]
    assert tree.inverse_dynamics(q, [0.0], [0.0])[0] == pytest.approx(expected_tau, rel=1e-12)


# -- dynamics in closed form ----------------------------------------------------------------
def _double_pendulum(m1=1.3, m2=0.7, l1=0.9, c1=0.4, c2=0.35, I1=0.02, I2=0.01):
    return _sdf(f"""<model name="dp">
      <link name="l1"><inertial><mass>{m1}</mass><pose>0 0 {-c1} 0 0 0</pose>
        <inertia><ixx>{I1}</ixx><iyy>{I1}</iyy><izz>0.001</izz></inertia></inertial></link>
      <link name="l2"><pose relative_to="l1">0 0 {-l1} 0 0 0</pose>
        <inertial><mass>{m2}</mass><pose>0 0 {-c2} 0 0 0</pose>
        <inertia><ixx>{I2}</ixx><iyy>{I2}</iyy><izz>0.001</izz></inertia></inertial></link>
      <joint name="shoulder" type="continuous"><parent>world</parent><child>l1</child>
        <axis><xyz>0 1 0</xyz></axis></joint>
      <joint name="elbow" type="revolute"><parent>l1</parent><child>l2</child>
        <axis><xyz>0 1 0</xyz><limit><lower>-2</lower><upper>2</upper><effort>5</effort>
        <velocity>3</velocity></limit><dynamics><damping>0.1</damping><friction>0.2</friction>
        </dynamics></axis></joint>
    </model>""")


def test_double_pendulum_mass_matrix_equals_closed_form():
    m1, m2, l1, c1, c2, I1, I2 = 1.3, 0.7, 0.9, 0.4, 0.35, 0.02, 0.01
    tree = parse_sdf(_double_pendulum())
    rng = np.random.default_rng(0)
    for _ in range(5):
        q = rng.uniform(-2, 2, 2)
        c = math.cos(q[1])
        M11 = I1 + m1 * c1 ** 2 + I2 + m2 * (l1 ** 2 + c2 ** 2 + 2 * l1 * c2 * c)
        M12 = I2 + m2 * (c2 ** 2 + l1 * c2 * c)
        M22 = I2 + m2 * c2 ** 2
        assert np.allclose(tree.mass_matrix(q), [[M11, M12], [M12, M22]], rtol=1e-13, atol=0)
    e = tree.get_joint("elbow")
    assert (e.lower[0], e.upper[0], e.effort_limit[0], e.velocity_limit[0]) == (-2, 2, 5, 3)
    assert (e.damping[0], e.friction[0]) == (0.1, 0.2)
    s = tree.get_joint("shoulder")
    assert np.isinf(s.lower[0]) and np.isinf(s.upper[0]) and np.isinf(s.effort_limit[0])


ARM_SDF = _sdf("""<model name="arm">
  <link name="base"><inertial><mass>3</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial></link>
  <link name="upper"><pose>0 0 0.3 0.2 0 0</pose>
    <inertial><mass>1.5</mass><pose>0 0.02 0.2 0.1 0.2 0.3</pose>
      <inertia><ixx>0.03</ixx><ixy>0.001</ixy><iyy>0.025</iyy><izz>0.01</izz></inertia></inertial></link>
  <link name="fore"><pose relative_to="upper">0.05 0 0.4 0 0.3 0</pose>
    <inertial><mass>0.8</mass><pose>0 0 0.15 0 0 0</pose>
      <inertia><ixx>0.01</ixx><iyy>0.012</iyy><izz>0.004</izz></inertia></inertial></link>
  <link name="slider"><pose relative_to="fore">0 0 0.3 0 0 0</pose>
    <inertial><mass>0.3</mass><inertia><ixx>0.001</ixx><iyy>0.001</iyy><izz>0.001</izz></inertia></inertial></link>
  <joint name="fix" type="fixed"><parent>world</parent><child>base</child></joint>
  <joint name="j1" type="revolute"><parent>base</parent><child>upper</child>
    <axis><xyz>1 0 0</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis></joint>
  <joint name="j2" type="revolute"><parent>upper</parent><child>fore</child>
    <axis><xyz expressed_in="upper">0 1 1</xyz></axis></joint>
  <joint name="j3" type="prismatic"><parent>fore</parent><child>slider</child>
    <axis><xyz>0 0 1</xyz><limit><lower>0</lower><upper>0.2</upper></limit></axis></joint>
</model>""")


def _arm_urdf() -> str:
    """The same robot as ARM_SDF, written by hand in URDF (joint frames = child link frames)."""
    R_fore = _rpy(0, 0.3, 0)
    a2 = R_fore.T @ (np.array([0, 1, 1]) / math.sqrt(2))  # j2's axis in fore's (= joint) frame
    return f"""<robot name="arm">
  <link name="base"><inertial><mass value="3"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <link name="upper"><inertial><origin xyz="0 0.02 0.2" rpy="0.1 0.2 0.3"/><mass value="1.5"/>
    <inertia ixx="0.03" ixy="0.001" ixz="0" iyy="0.025" iyz="0" izz="0.01"/></inertial></link>
  <link name="fore"><inertial><origin xyz="0 0 0.15"/><mass value="0.8"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.012" iyz="0" izz="0.004"/></inertial></link>
  <link name="slider"><inertial><mass value="0.3"/><inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.3" rpy="0.2 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="0.05 0 0.4" rpy="0 0.3 0"/><axis xyz="{' '.join(repr(float(x)) for x in a2)}"/>
    <limit lower="-10" upper="10" effort="1" velocity="1"/></joint>
  <joint name="j3" type="prismatic"><parent link="fore"/><child link="slider"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 0 1"/><limit lower="0" upper="0.2" effort="1" velocity="1"/></joint>
</robot>"""


def test_sdf_and_urdf_of_one_robot_have_identical_dynamics():
    ts, tu = parse_sdf(ARM_SDF), parse_urdf(_arm_urdf())
    assert [j.name for j in ts.joints if j.nv] == [j.name for j in tu.joints if j.nv]
    rng = np.random.default_rng(1)
    for _ in range(5):
        q, v, vd = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
        assert np.allclose(ts.mass_matrix(q), tu.mass_matrix(q), rtol=1e-12, atol=1e-14)
        assert np.allclose(ts.inverse_dynamics(q, v, vd), tu.inverse_dynamics(q, v, vd),
                           rtol=1e-12, atol=1e-13)
        for b in ("upper", "fore", "slider"):
            assert np.allclose(ts.body_pose(b, q), tu.body_pose(b, q), atol=1e-13)


def test_pinocchio_on_the_urdf_twin_agrees_with_the_sdf():
    pin = pytest.importorskip("pinocchio")
    model = pin.buildModelFromXML(_arm_urdf())
    data = model.createData()
    ts = parse_sdf(ARM_SDF)
    rng = np.random.default_rng(2)
    for _ in range(5):
        q, v, vd = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        assert np.allclose(ts.mass_matrix(q), M, rtol=1e-12, atol=1e-14)
        assert np.allclose(ts.inverse_dynamics(q, v, vd), pin.rnea(model, data, q, v, vd),
                           rtol=1e-12, atol=1e-13)


def test_off_axis_joint_through_a_massless_frame_body_matches_a_urdf():
    # revolute joint about z placed 0.2 m beside the child's origin: needs the frame body
    sdf = _sdf("""<model name="m">
      <link name="c"><pose>0 0 1 0 0 0</pose><inertial><mass>2</mass><pose>0.3 0 0 0 0 0</pose>
        <inertia><ixx>0.01</ixx><iyy>0.02</iyy><izz>0.03</izz></inertia></inertial></link>
      <joint name="j" type="revolute"><pose>0.2 0 0 0 0 0</pose><parent>world</parent><child>c</child>
        <axis><xyz>0 0 1</xyz></axis></joint></model>""")
    urdf = """<robot name="m"><link name="c"><inertial><origin xyz="0.1 0 0"/><mass value="2"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial></link>
      <joint name="j" type="continuous"><parent link="world"/><child link="c"/>
      <origin xyz="0.2 0 1"/><axis xyz="0 0 1"/></joint></robot>"""
    ts, tu = parse_sdf(sdf), parse_urdf(urdf)
    q = np.array([0.4])
    assert np.allclose(ts.mass_matrix(q), tu.mass_matrix(q), rtol=1e-13)
    assert ts.mass_matrix(q)[0, 0] == pytest.approx(0.03 + 2 * 0.1 ** 2, rel=1e-13)
    # the body frame stays the SDFormat link frame: origin rotates about the joint axis
    p = ts.body_pose("c", q)[:3, 3]
    assert np.allclose(p, [0.2 - 0.2 * math.cos(0.4), -0.2 * math.sin(0.4), 1.0], atol=1e-13)


# -- joint types, drake: extensions, static and floating ---------------------------------------
def _one_joint(jtype, extra="", axis="<axis><xyz>0 0 1</xyz></axis>"):
    return _sdf(f"""<model name="m"><link name="c"><inertial><mass>1</mass><pose>0.1 0.2 0 0 0 0</pose>
      <inertia><ixx>0.1</ixx><iyy>0.2</iyy><izz>0.25</izz></inertia></inertial></link>
      <joint name="j" type="{jtype}"><parent>world</parent><child>c</child>{axis}{extra}</joint>
      </model>""", version="1.10")


@pytest.mark.parametrize("jtype,cls,nq,nv", [("ball", "ball", 4, 3), ("fixed", "weld", 0, 0),
                                             ("continuous", "revolute", 1, 1),
                                             ("prismatic", "prismatic", 1, 1)])
def test_joint_types(jtype, cls, nq, nv):
    tree = parse_sdf(_one_joint(jtype))
    j = tree.get_joint("j")
    assert (j.type, j.nq, j.nv) == (cls, nq, nv)


def test_universal_and_screw_joints():
    tree = parse_sdf(_one_joint("universal", axis="<axis><xyz>1 0 0</xyz></axis>"
                                                  "<axis2><xyz>0 1 0</xyz></axis2>"))
    j = tree.get_joint("j")
    assert j.type == "universal" and np.allclose(j.axis1, [1, 0, 0]) and np.allclose(j.axis2, [0, 1, 0])
    tree = parse_sdf(_one_joint("screw", "<screw_thread_pitch>0.02</screw_thread_pitch>"))
    j = tree.get_joint("j")
    assert j.pitch == pytest.approx(0.02 / (2 * math.pi), rel=1e-15)
    q = np.array([2 * math.pi])                     # one turn advances one thread pitch
    assert tree.body_pose("c", q)[2, 3] == pytest.approx(0.02, rel=1e-12)
    old = parse_sdf(_one_joint("screw", "<thread_pitch>-314.1592653589793</thread_pitch>"))
    assert old.get_joint("j").pitch == pytest.approx(1 / 314.1592653589793, rel=1e-15)


def test_rotor_inertia_and_gear_ratio_give_the_armature():
    extra = "<drake:rotor_inertia>0.002</drake:rotor_inertia><drake:gear_ratio>10</drake:gear_ratio>"
    tree = parse_sdf(_one_joint("revolute", extra))
    plain = parse_sdf(_one_joint("revolute"))
    assert tree.get_joint("j").armature[0] == pytest.approx(0.2)
    q = np.zeros(1)
    assert tree.mass_matrix(q)[0, 0] == pytest.approx(plain.mass_matrix(q)[0, 0] + 0.2, rel=1e-14)
    # Drake: no reflected inertia on a joint without an actuator (effort limit 0)
    unact = parse_sdf(_one_joint("revolute", extra, "<axis><xyz>0 0 1</xyz><limit><effort>0</effort>"
                                                    "</limit></axis>"))
    assert unact.get_joint("j").armature[0] == 0


def test_floating_base_choices_and_static_models():
    text = _sdf("""<model name="m"><pose>0 0 2 0 0 0</pose><link name="a"/></model>""")
    free = parse_sdf(text)
    j = free.joints[0]
    assert j.type == "free" and j.name == "floating_base" and free.nq == 7
    assert np.allclose(free.body_pose("a", free.neutral_configuration())[:3, 3], [0, 0, 2])
    welded = parse_sdf(text, floating_base=False)
    assert welded.joints[0].type == "weld" and welded.nq == 0
    assert np.allclose(welded.body_pose("a", np.zeros(0))[:3, 3], [0, 0, 2])
    static = parse_sdf(text.replace("<link", "<static>true</static><link"))
    assert static.nq == 0
    with pytest.raises(SDFError, match="floating_base=True but the model is <static>"):
        parse_sdf(text.replace("<link", "<static>true</static><link"), floating_base=True)
    assert RigidBodyTree.from_sdf(text).nq == 7


def test_geometry_shapes():
    text = _sdf("""<model name="m"><static>true</static><link name="g">
      <collision name="floor"><pose>0 0 0.5 0 0 0</pose><geometry><plane><normal>1 0 0</normal>
        <size>1 1</size></plane></geometry></collision>
      <collision name="e"><geometry><ellipsoid><radii>0.1 0.2 0.3</radii></ellipsoid></geometry>
        <surface><friction><ode><mu>0.7</mu></ode></friction></surface></collision>
      <visual name="v"><pose>1 0 0 0 0 0</pose><geometry><box><size>1 2 3</size></box></geometry>
        <material><diffuse>1 0 0 1</diffuse></material></visual>
      <visual name="m"><geometry><mesh><uri>package://pkg/x.obj</uri><scale>2 2 2</scale></mesh></geometry></visual>
      <visual name="nothing"><geometry><empty/></geometry></visual>
    </link></model>""")
    with pytest.warns(SDFWarning, match="friction"):
        tree = parse_sdf(text)
    body = tree.get_body("g")
    (plane, ell), (box, mesh) = body.collision_geometries, body.visual_geometries
    assert isinstance(plane.shape, Halfspace) and np.allclose(plane.pose[:3, 2], [1, 0, 0])
    assert np.allclose(plane.pose[:3, 3], [0, 0, 0.5])
    assert ell.shape == Ellipsoid((0.1, 0.2, 0.3)) and box.shape == Box((1, 2, 3))
    assert box.material["rgba"] == (1, 0, 0, 1) and np.allclose(box.pose[:3, 3], [1, 0, 0])
    assert mesh.shape == Mesh("package://pkg/x.obj", (2, 2, 2))
    floating = text.replace("<static>true</static>", "")
    with pytest.raises(SDFError, match=r"line 4: link 'g': a <plane>"):
        _quiet(floating)


# -- errors and warnings -----------------------------------------------------------------------
@pytest.mark.parametrize("body,line,pattern", [
    ('<model name="m">\n<link name="a"/>\n<joint name="j" type="revolute2"><parent>world</parent>'
     '<child>a</child></joint></model>', 5, "joint 'j': joint type 'revolute2' is not supported"),
    ('<model name="m">\n<link name="a"/>\n<joint name="j" type="fixed"><parent>nope</parent>'
     '<child>a</child></joint></model>', 5, "parent 'nope' names no frame"),
    ('<model name="m">\n<link name="a"><pose relative_to="f"/></link>\n'
     '<frame name="f"><pose relative_to="a"/></frame></model>', 4, "is a cycle"),
    ('<model name="m">\n<link name="a"/>\n<model name="inner"/></model>', 5, "nested <model>"),
    ('<model name="m">\n<link name="a">\n<inertial><mass>1_0</mass></inertial></link></model>', 5,
     "not a number"),
    ('<model name="m">\n<link name="a"/>\n<link name="a"/></model>', 5, "name already used"),
    ('<model name="m">\n<link name="a"/>\n<link name="b"/>\n<joint name="j1" type="fixed">'
     '<parent>a</parent><child>b</child></joint>\n<joint name="j2" type="fixed"><parent>b</parent>'
     '<child>a</child></joint></model>', 6, "kinematic cycle"),
])
def test_errors_name_the_line(body, line, pattern):
    with pytest.raises(SDFError) as info:
        _quiet(_sdf(body))
    assert isinstance(info.value, ModelParseError) and isinstance(info.value, ValueError)
    assert info.value.line == line, str(info.value)
    assert pattern in str(info.value)
    assert str(info.value).startswith(f"<string>, line {line}: ")


def test_unsupported_elements_warn_once_per_kind():
    text = _sdf("""<model name="m"><link name="a"><sensor name="s1"/><sensor name="s2"/>
      <collision name="c"><geometry><sphere><radius>0.1</radius></sphere></geometry>
        <drake:proximity_properties><drake:hydroelastic_modulus>1e7</drake:hydroelastic_modulus>
        <drake:mu_dynamic>0.5</drake:mu_dynamic></drake:proximity_properties></collision>
      <collision name="d"><geometry><sphere><radius>0.1</radius></sphere></geometry>
        <drake:proximity_properties><drake:hydroelastic_modulus>1e7</drake:hydroelastic_modulus>
        </drake:proximity_properties></collision></link>
      <plugin name="p" filename="x"/><drake:ball_constraint/></model>""")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        parse_sdf(text)
    msgs = [str(w.message) for w in rec]
    assert all(issubclass(w.category, SDFWarning) for w in rec)
    for tag in ("<sensor>", "<drake:hydroelastic_modulus>", "<plugin>", "<drake:ball_constraint>"):
        assert sum(tag in m for m in msgs) == 1, (tag, msgs)


def test_file_loading_and_from_file(tmp_path):
    p = tmp_path / "dp.sdf"
    p.write_text(_double_pendulum())
    t1 = RigidBodyTree.from_file(p)
    t2 = RigidBodyTree.from_sdf(str(p))
    assert t1.nq == t2.nq == 2
    with pytest.raises(FileNotFoundError):
        parse_sdf(str(tmp_path / "missing.sdf"))
    bad = tmp_path / "bad.sdf"
    bad.write_text(_sdf('<model name="m">\n<link name="a"><pose>1 2</pose></link></model>'))
    with pytest.raises(SDFError, match=rf"{bad}, line 4: link 'a': <pose>"):
        parse_sdf(bad)

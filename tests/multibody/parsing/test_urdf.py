"""Tests of multibody.parsing: URDF parsing, error reporting, shipped models.

Cross-checks: hand-computed inertia rotations, the acrobot's closed-form mass matrix
(Spong 1995) and Pinocchio's mass matrix for the same URDF text.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from multibody.models import available_models, model_path
from multibody.parsing import URDFError, URDFWarning, parse_urdf, read_urdf_model

try:  # the tree is written by another helper; its tests are skipped until it exists
    from multibody.tree import RigidBodyTree  # noqa: F401
    HAVE_TREE = True
except ImportError:  # pragma: no cover - only while multibody.tree is missing
    HAVE_TREE = False

needs_tree = pytest.mark.skipif(not HAVE_TREE, reason="multibody.tree cannot be imported yet")

GOOD = """<?xml version="1.0"?>
<robot name="two_link">
  <link name="base"/>
  <link name="upper">
    <inertial>
      <origin xyz="0 0 -0.5" rpy="0 0 0"/>
      <mass value="1"/>
      <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.01"/>
    </inertial>
  </link>
  <link name="forearm">
    <inertial>
      <origin xyz="0 0 -0.5"/>
      <mass value="2"/>
      <inertia ixx="0.2" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.02"/>
    </inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/>
    <child link="upper"/>
    <axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="5"/>
  </joint>
  <joint name="elbow" type="continuous">
    <parent link="upper"/>
    <child link="forearm"/>
    <origin xyz="0 0 -1" rpy="0 0 0"/>
    <axis xyz="0 1 0"/>
  </joint>
</robot>
"""


def line_of(text: str, marker: str) -> int:
    """1-based line number where the first occurrence of ``marker`` in ``text`` starts."""
    assert marker in text, f"marker {marker!r} not in text"
    return text[:text.index(marker)].count("\n") + 1


def mutate(old: str, new: str, text: str = GOOD) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def check_error(text, line, element, fragment, source="<string>", **kwargs):
    with pytest.raises(URDFError) as info:
        parse_urdf(text, **kwargs)
    err = info.value
    msg = str(err)
    prefix = f"{source}, line {line}: {element}: "
    assert msg.startswith(prefix), f"{msg!r} does not start with {prefix!r}"
    assert fragment in msg, f"{fragment!r} not in {msg!r}"
    assert isinstance(err, ValueError)
    assert (err.source, err.line, err.element) == (source, line, element)
    return msg


# ---------------------------------------------------------------------------------------
# Malformed documents: every message names the source, the line and the element.
# ---------------------------------------------------------------------------------------
_LIMIT = '<limit lower="-1" upper="1" effort="10" velocity="5"/>'
_INERTIA_UPPER = '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.01"/>'

MALFORMED = {
    # name: (text, marker of the offending line, element, message fragment)
    "unknown joint type": (mutate('type="continuous"', 'type="hinge"'), 'name="elbow"',
                           "joint 'elbow'", "unknown joint type 'hinge'"),
    "undeclared parent": (mutate('<parent link="upper"/>', '<parent link="uper"/>'), 'name="elbow"',
                          "joint 'elbow'", "parent link 'uper' is not declared"),
    "undeclared child": (mutate('<child link="forearm"/>', '<child link="fore"/>'), 'name="elbow"',
                         "joint 'elbow'", "child link 'fore' is not declared"),
    "missing parent element": (mutate('<parent link="upper"/>', ''), 'name="elbow"',
                               "joint 'elbow'", "<joint> has no <parent> element"),
    "missing child element": (mutate('<child link="upper"/>', ''), 'name="shoulder"',
                              "joint 'shoulder'", "<joint> has no <child> element"),
    "two parent joints": (mutate('<parent link="upper"/>\n    <child link="forearm"/>',
                                 '<parent link="base"/>\n    <child link="upper"/>'), 'name="elbow"',
                          "joint 'elbow'", "link 'upper' has two parent joints: 'shoulder' (line 18) and 'elbow'"),
    "negative mass": (mutate('<mass value="2"/>', '<mass value="-2"/>'), 'value="-2"',
                      "link 'forearm'", "negative mass -2"),
    "inertia not PSD": (mutate(_INERTIA_UPPER, _INERTIA_UPPER.replace('ixy="0"', 'ixy="0.5"')), 'ixy="0.5"',
                        "link 'upper'", "not positive semidefinite"),
    "lower > upper": (mutate(_LIMIT, _LIMIT.replace('lower="-1" upper="1"', 'lower="2" upper="1"')),
                      'lower="2"', "joint 'shoulder'", "lower limit 2 > upper limit 1"),
    "duplicate link": (mutate('<link name="forearm">', '<link name="upper">'),
                       'name="upper">\n    <inertial>\n      <origin xyz="0 0 -0.5"/>', "link 'upper'",
                       "duplicate link name (first declared at line 4)"),
    "duplicate joint": (mutate('name="elbow"', 'name="shoulder"'), 'type="continuous"',
                        "joint 'shoulder'", "duplicate joint name (first declared at line 18)"),
    "missing joint name": (mutate('<joint name="elbow" type="continuous">', '<joint type="continuous">'),
                           'type="continuous"', "joint", "missing the required attribute 'name'"),
    "missing link name": (mutate('<link name="base"/>', '<link/>'), '<link/>', "link",
                          "missing the required attribute 'name'"),
    "missing mass value": (mutate('<mass value="2"/>', '<mass/>'), '<mass/>', "link 'forearm'",
                           "<mass> is missing the required attribute 'value'"),
    "missing inertia entry": (mutate(_INERTIA_UPPER, _INERTIA_UPPER.replace('iyz="0" ', '')), 'izz="0.01"',
                              "link 'upper'", "<inertia> is missing the required attribute 'iyz'"),
    "missing effort": (mutate(_LIMIT, _LIMIT.replace(' effort="10"', '')), 'velocity="5"', "joint 'shoulder'",
                       "<limit> is missing the required attribute 'effort'"),
    "missing joint type": (mutate(' type="continuous"', ''), '<joint name="elbow">', "joint 'elbow'",
                           "missing the required attribute 'type'"),
    "non-numeric mass": (mutate('<mass value="2"/>', '<mass value="heavy"/>'), 'heavy', "link 'forearm'",
                         'attribute value="heavy" is not a number'),
    "non-numeric xyz": (mutate('<origin xyz="0 0 -1" rpy="0 0 0"/>', '<origin xyz="0 0 minus1"/>'), 'minus1',
                        "joint 'elbow'", 'attribute xyz="0 0 minus1" is not a number'),
    "non-finite value": (mutate('<mass value="2"/>', '<mass value="nan"/>'), 'nan', "link 'forearm'",
                         "is not finite"),
    "xyz with two numbers": (mutate('<axis xyz="0 1 0"/>', '<axis xyz="0 1"/>'), 'xyz="0 1"',
                             "joint 'shoulder'", "must hold 3 numbers, found 2"),
    "zero axis": (mutate('<axis xyz="0 1 0"/>\n    <limit', '<axis xyz="0 0 0"/>\n    <limit'), 'xyz="0 0 0"',
                  "joint 'shoulder'", "joint axis is the zero vector"),
    "revolute without limit": (mutate(_LIMIT, ''), 'name="shoulder"', "joint 'shoulder'",
                               "a revolute joint needs a <limit> element"),
    "negative velocity limit": (mutate(_LIMIT, _LIMIT.replace('velocity="5"', 'velocity="-5"')), 'velocity="-5"',
                                "joint 'shoulder'", "negative velocity limit -5"),
    "negative damping": (mutate('<axis xyz="0 1 0"/>\n  </joint>',
                                '<axis xyz="0 1 0"/>\n    <dynamics damping="-1"/>\n  </joint>'),
                         'damping="-1"', "joint 'elbow'", "negative damping -1"),
    "mimic of unknown joint": (mutate('<axis xyz="0 1 0"/>\n  </joint>',
                                      '<axis xyz="0 1 0"/>\n    <mimic joint="wrist"/>\n  </joint>'),
                               'mimic', "joint 'elbow'", "<mimic> refers to joint 'wrist', which is not declared"),
    "two inertials": (mutate('</inertial>\n  </link>\n  <link name="forearm">',
                             '</inertial>\n    <inertial><mass value="1"/></inertial>\n  </link>\n'
                             '  <link name="forearm">'),
                      '<inertial><mass', "link 'upper'", "more than one <inertial> in <link> (first at line 5)"),
    "inertial without inertia": (mutate(_INERTIA_UPPER, ''), '<inertial>', "link 'upper'",
                                 "<inertial> has no <inertia> element"),
    "world as child": (mutate('<child link="forearm"/>', '<child link="world"/>'), 'name="elbow"',
                       "joint 'elbow'", "the world link cannot be the child of a joint"),
    "parent is child": (mutate('<parent link="upper"/>', '<parent link="forearm"/>'), 'name="elbow"',
                        "joint 'elbow'", "link 'forearm' is both parent and child"),
    "robot without name": (mutate('<robot name="two_link">', '<robot>'), '<robot>', "robot",
                           "missing the required attribute 'name'"),
    "box with negative size": (mutate('<link name="base"/>', '<link name="base"><collision><geometry>'
                                      '<box size="1 -1 1"/></geometry></collision></link>'),
                               'size="1 -1 1"', "link 'base'", "<box> dimensions must be positive"),
    "unknown geometry": (mutate('<link name="base"/>', '<link name="base"><visual><geometry>'
                                '<cone radius="1"/></geometry></visual></link>'),
                         '<cone', "link 'base'", "unknown geometry <cone>"),
    "empty geometry": (mutate('<link name="base"/>', '<link name="base"><visual><geometry>'
                              '</geometry></visual></link>'),
                       '<geometry>', "link 'base'", "must hold exactly one shape, found 0"),
    "color out of range": (mutate('<link name="base"/>', '<link name="base"><visual><geometry><sphere '
                                  'radius="1"/></geometry><material name="m"><color rgba="2 0 0 1"/>'
                                  '</material></visual></link>'),
                           'rgba', "link 'base'", "rgba values must lie in [0, 1]"),
    "xacro macro": (mutate('<link name="base"/>', '<xacro:property name="a" value="1"/>\n  <link name="base"/>'),
                    'xacro:', "document", "expand the file with xacro"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_document_reports_line_and_element(case):
    text, marker, element, fragment = MALFORMED[case]
    check_error(text, line_of(text, marker), element, fragment)


def test_not_xml():
    text = GOOD.replace('<link name="base"/>', '<link name="base">')   # unclosed element
    msg = check_error(text, line_of(text, "</robot>"), "document", "not well-formed XML")
    assert "mismatched tag" in msg


def test_no_robot_element():
    check_error('<?xml version="1.0"?>\n<model name="x"/>\n', 2, "document",
                "no <robot> element: the root element is <model>")


def test_robot_without_links():
    check_error('<robot name="empty">\n</robot>', 1, "robot 'empty'", "the robot has no links")


def test_cycle_is_reported_with_its_joints():
    text = mutate('<link name="base"/>', '').replace(  # base removed; close a loop upper <-> forearm
        '<parent link="base"/>', '<parent link="forearm"/>')
    msg = check_error(text, line_of(text, 'name="elbow"'), "joint 'elbow'", "form a kinematic cycle")
    assert "the joints 'elbow' -> 'shoulder' form" in msg


def test_cycle_below_a_valid_root():
    text = mutate('</robot>', '  <link name="a"/>\n  <link name="b"/>\n'
                  '  <joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>\n'
                  '  <joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint>\n</robot>')
    check_error(text, line_of(text, 'name="ab"'), "joint 'ab'", "the joints 'ab' -> 'ba' form a kinematic cycle")


def test_several_roots():
    text = mutate('<link name="base"/>', '<link name="base"/>\n  <link name="stray"/>')
    msg = check_error(text, line_of(text, "<robot"), "robot 'two_link'", "several root links")
    assert "'base' (line 3), 'stray' (line 4)" in msg


def test_several_roots_with_world():
    text = mutate('<parent link="base"/>', '<parent link="world"/>')   # base is now a second root
    msg = check_error(text, 2, "robot 'two_link'", "several root links 'world', 'base' (line 3)")
    assert "every link but one must be the child of a joint" in msg


def test_world_link_inertial_is_ignored_with_a_warning():
    """Pinocchio and Drake load a world link with <inertial> (Drake's Pendulum.urdf has one)."""
    text = mutate('<link name="base"/>', '<link name="world"><inertial><mass value="1"/>'
                  '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>')
    text = text.replace('<parent link="base"/>', '<parent link="world"/>')
    with pytest.warns(URDFWarning, match=r"<string>, line 3: link 'world': .*<inertial> is ignored"):
        model, _ = read_urdf_model(text)
    assert model.world.mass == 0.0 and not model.world.has_inertial
    assert [lk.name for lk in model.links] == ["upper", "forearm"]


def test_floating_base_refused_when_file_attaches_world():
    text = mutate('<link name="base"/>', '<link name="base"/>\n  <joint name="fix" type="fixed">'
                  '<parent link="world"/><child link="base"/></joint>')
    check_error(text, 4, "joint 'fix'", "floating_base=True but the file already attaches its root link 'base'",
                floating_base=True)


def test_errors_name_the_file(tmp_path):
    path = tmp_path / "broken_arm.urdf"
    text = MALFORMED["lower > upper"][0]
    path.write_text(text)
    check_error(str(path), line_of(text, 'lower="2"'), "joint 'shoulder'", "lower limit 2 > upper limit 1",
                source=str(path))
    check_error(path, line_of(text, 'lower="2"'), "joint 'shoulder'", "lower limit", source=str(path))


def test_missing_file_and_bad_argument():
    with pytest.raises(FileNotFoundError, match="does not exist"):
        parse_urdf("/nonexistent/robot.urdf")
    with pytest.raises(TypeError, match="a file path or a URDF XML string"):
        parse_urdf(42)


# ---------------------------------------------------------------------------------------
# Parsed values (library independent): read_urdf_model
# ---------------------------------------------------------------------------------------
def test_inertial_origin_rpy_rotates_inertia_into_the_body_frame():
    # Principal inertia diag(1, 2, 3) in a frame yawed by +90 deg about z then pitched:
    # hand computation for yaw 90 deg: the inertia frame's x axis is the body y axis, so
    # I_body = diag(2, 1, 3).
    text = mutate('<origin xyz="0 0 -0.5" rpy="0 0 0"/>\n      <mass value="1"/>\n      ' + _INERTIA_UPPER,
                  f'<origin xyz="0.1 0.2 0.3" rpy="0 0 {math.pi / 2!r}"/>\n      <mass value="1"/>\n      '
                  '<inertia ixx="1" ixy="0" ixz="0" iyy="2" iyz="0" izz="3"/>')
    model, _ = read_urdf_model(text)
    upper = next(lk for lk in model.links if lk.name == "upper")
    np.testing.assert_allclose(upper.inertia, np.diag([2.0, 1.0, 3.0]), atol=1e-12)
    np.testing.assert_allclose(upper.com, [0.1, 0.2, 0.3])
    # roll of 90 deg about x: y -> z, z -> -y; I_body = diag(1, 3, 2).  A general rpy:
    # compare with R I R^T built from elementary rotations written out by hand.
    r, p, y = 0.3, -0.7, 1.1
    text = text.replace(f'rpy="0 0 {math.pi / 2!r}"', f'rpy="{r} {p} {y}"')
    model, _ = read_urdf_model(text)
    upper = next(lk for lk in model.links if lk.name == "upper")
    Rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    Ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    Rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    R = Rz @ Ry @ Rx
    np.testing.assert_allclose(upper.inertia, R @ np.diag([1.0, 2.0, 3.0]) @ R.T, atol=1e-12)
    np.testing.assert_allclose(np.linalg.eigvalsh(upper.inertia), [1, 2, 3], atol=1e-12)


def test_axis_is_normalized_and_defaults_to_x():
    text = mutate('<axis xyz="0 1 0"/>\n    <limit', '<axis xyz="0 3 -4"/>\n    <limit')
    text = text.replace('<axis xyz="0 1 0"/>\n  </joint>', '</joint>')   # elbow: default axis
    model, _ = read_urdf_model(text)
    shoulder, elbow = model.joints
    np.testing.assert_allclose(shoulder.axis, [0, 0.6, -0.8])
    np.testing.assert_allclose(elbow.axis, [1, 0, 0])


def test_joint_origin_pose():
    text = mutate('<origin xyz="0 0 -1" rpy="0 0 0"/>', f'<origin xyz="1 2 3" rpy="0 0 {math.pi / 2!r}"/>')
    model, _ = read_urdf_model(text)
    X = model.joints[1].origin
    np.testing.assert_allclose(X, [[0, -1, 0, 1], [1, 0, 0, 2], [0, 0, 1, 3], [0, 0, 0, 1]], atol=1e-15)


def test_limits_dynamics_and_defaults():
    text = mutate(_LIMIT, '<limit upper="0.5" effort="10" velocity="5"/>\n    '
                          '<dynamics damping="0.7" friction="0.2"/>')
    model, _ = read_urdf_model(text)
    shoulder, elbow = model.joints
    assert (shoulder.lower, shoulder.upper, shoulder.effort, shoulder.velocity) == (0.0, 0.5, 10.0, 5.0)
    assert (shoulder.damping, shoulder.friction) == (0.7, 0.2)
    assert (elbow.lower, elbow.upper, elbow.effort, elbow.velocity) == (None, None, None, None)
    assert (elbow.damping, elbow.friction) == (0.0, 0.0)


def test_geometry_and_materials_parsed():
    text = mutate('<link name="base"/>', """<material name="red"><color rgba="1 0 0 1"/></material>
  <link name="base">
    <visual name="shell">
      <origin xyz="0 0 0.1" rpy="1.5707963267948966 0 0"/>
      <geometry><cylinder radius="0.05" length="0.3"/></geometry>
      <material name="red"/>
    </visual>
    <collision>
      <geometry><box size="0.1 0.2 0.3"/></geometry>
    </collision>
    <collision>
      <origin xyz="0 0 -1"/>
      <geometry><sphere radius="0.02"/></geometry>
    </collision>
    <visual>
      <geometry><mesh filename="package://my_robot/meshes/base.stl" scale="0.001 0.001 0.001"/></geometry>
    </visual>
    <visual>
      <geometry><mesh filename="meshes/cover.obj"/></geometry>
      <material name="inline"><color rgba="0 0.5 1 0.5"/></material>
    </visual>
  </link>""")
    model, _ = read_urdf_model(text, package_map={"my_robot": "/opt/robot"})
    base = model.links[0]
    assert base.name == "base"
    kinds = [(g.kind, g.params) for g in base.collisions]
    assert kinds == [("box", {"size": (0.1, 0.2, 0.3)}), ("sphere", {"radius": 0.02})]
    np.testing.assert_allclose(base.collisions[1].pose[:3, 3], [0, 0, -1])
    cyl, mesh, cover = base.visuals
    assert (cyl.kind, cyl.params, cyl.name) == ("cylinder", {"radius": 0.05, "length": 0.3}, "shell")
    np.testing.assert_allclose(cyl.pose[:3, :3], [[1, 0, 0], [0, 0, -1], [0, 1, 0]], atol=1e-15)
    assert cyl.material == {"name": "red", "rgba": (1.0, 0.0, 0.0, 1.0), "texture": None}
    assert mesh.params == {"filename": "/opt/robot/meshes/base.stl", "scale": (0.001, 0.001, 0.001)}
    assert cover.params["filename"] == "meshes/cover.obj"     # a string has no directory
    assert cover.material["rgba"] == (0.0, 0.5, 1.0, 0.5)
    # package:// kept verbatim without a package_map; unknown package refused with one
    model, _ = read_urdf_model(text)
    assert model.links[0].visuals[1].params["filename"] == "package://my_robot/meshes/base.stl"
    with pytest.raises(URDFError, match="package 'my_robot' is not in package_map"):
        read_urdf_model(text, package_map={"other": "/x"})


def test_relative_mesh_resolved_against_file_directory(tmp_path):
    text = mutate('<link name="base"/>', '<link name="base"><visual><geometry>'
                  '<mesh filename="meshes/base.stl"/></geometry></visual></link>')
    path = tmp_path / "robot.urdf"
    path.write_text(text)
    model, _ = read_urdf_model(path)
    assert model.links[0].visuals[0].params["filename"] == str(tmp_path.resolve() / "meshes" / "base.stl")


def test_mimic_kept_in_model():
    model, _ = read_urdf_model(model_path("branching"))
    mim = {j.name: j.mimic for j in model.joints if j.mimic is not None}
    assert mim == {"finger_right": ("finger_left", 1.0, 0.0)}


def test_dfs_order_and_world_convention():
    text = mutate('<link name="base"/>', '<link name="base"/>\n  <joint name="to_world" type="fixed">'
                  '<parent link="world"/><child link="base"/><origin xyz="0 0 2"/></joint>')
    model, _ = read_urdf_model(text)
    assert model.root == "world" and model.world is None
    assert [j.name for j in model.joints] == ["to_world", "shoulder", "elbow"]
    assert [lk.name for lk in model.links] == ["base", "upper", "forearm"]


def test_model_path_and_available_models():
    names = available_models()
    assert names == ["acrobot", "arm7", "branching", "cart_pole", "humanoid", "pendulum", "quadruped"]
    assert model_path("acrobot") == model_path("acrobot.urdf")
    assert model_path("acrobot").is_file() and model_path("acrobot").suffix == ".urdf"
    with pytest.raises(ValueError, match="no shipped URDF model named 'acrobat'; available: acrobot, arm7"):
        model_path("acrobat")


@pytest.mark.parametrize("name,links,dofs,mass", [
    ("pendulum", 2, 1, 1.0), ("acrobot", 3, 2, 2.0), ("arm7", 9, 7, 20.8), ("branching", 10, 8, 7.0),
    ("humanoid", 33, 31, 59.9), ("quadruped", 17, 12, 17.84)])
def test_shipped_models_read(name, links, dofs, mass):
    model, _ = read_urdf_model(model_path(name))
    assert len(model.links) == links
    assert sum(j.type != "fixed" for j in model.joints) == dofs
    assert sum(lk.mass for lk in model.links) == pytest.approx(mass, rel=1e-12)


# ---------------------------------------------------------------------------------------
# Trees built from URDF (need multibody.tree)
# ---------------------------------------------------------------------------------------
SHIPPED = {
    # name: (floating_base, nq, nv, joints in DFS order with types, total mass)
    "pendulum": (False, 1, 1, [("world_weld", "weld"), ("theta", "revolute")], 1.0),
    "acrobot": (False, 2, 2, [("world_weld", "weld"), ("shoulder", "revolute"), ("elbow", "revolute")], 2.0),
    "arm7": (False, 7, 7, [("world_weld", "weld")] + [(f"joint{i}", "revolute") for i in range(1, 8)]
             + [("tool_mount", "weld")], 20.8),
    "branching": (False, 8, 8, [("world_weld", "weld"), ("a_yaw", "revolute"), ("a_slide", "prismatic"),
                                ("b_roll", "revolute"), ("b_mount", "weld"), ("b_tilt", "revolute"),
                                ("finger_left", "prismatic"), ("finger_right", "prismatic"),
                                ("c_lift", "prismatic"), ("c_pitch", "revolute")], 7.0),
    "humanoid": (True, 38, 37, None, 59.9),
    "quadruped": (True, 19, 18, None, 17.84),
}


@needs_tree
@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_models_load(name):
    floating, nq, nv, joints, mass = SHIPPED[name]
    tree = parse_urdf(model_path(name), floating_base=floating)
    assert (tree.nq, tree.nv) == (nq, nv)
    assert tree.total_mass() == pytest.approx(mass, rel=1e-12)
    got = [(j.name, j.type) for j in tree.joints]
    if joints is not None:
        assert got == joints
    else:
        assert got[0] == ("floating_base", "free")
        assert sum(t == "revolute" for _, t in got) == nv - 6
    assert tree.joints[0].parent == "world"
    # the child of the root joint is the URDF's root link
    assert tree.joints[0].child == read_urdf_model(model_path(name))[0].links[0].name


@needs_tree
def test_humanoid_and_quadruped_names():
    tree = parse_urdf(model_path("quadruped"), floating_base=True)
    names = {j.name for j in tree.joints if j.type == "revolute"}
    assert names == {f"{leg}_{part}_joint" for leg in ("FL", "FR", "RL", "RR") for part in ("hip", "thigh", "calf")}
    tree = parse_urdf(model_path("humanoid"))
    assert (tree.nq, tree.nv) == (31, 31) and tree.joints[0].type == "weld"


@needs_tree
def test_joint_attributes_transferred():
    tree = parse_urdf(model_path("arm7"))
    j1 = tree.get_joint("joint1")
    np.testing.assert_allclose([j1.lower[0], j1.upper[0], j1.velocity_limit[0], j1.effort_limit[0]],
                               [-2.96, 2.96, 1.48, 176])
    np.testing.assert_allclose([j1.damping[0], j1.friction[0]], [0.5, 0.0])
    np.testing.assert_allclose(tree.get_joint("joint4").axis, [0, -1, 0])
    np.testing.assert_allclose(tree.get_joint("joint3").origin[:3, :3],
                               [[math.cos(0.3), -math.sin(0.3), 0], [math.sin(0.3), math.cos(0.3), 0], [0, 0, 1]],
                               atol=1e-15)
    tree = parse_urdf(model_path("acrobot"))
    elbow = tree.get_joint("elbow")            # continuous -> revolute without limits
    assert elbow.lower[0] == -np.inf and elbow.upper[0] == np.inf and elbow.effort_limit[0] == np.inf
    np.testing.assert_allclose(elbow.origin[:3, 3], [0, 0, -1])
    tree = parse_urdf(model_path("branching"))
    np.testing.assert_allclose(tree.get_joint("b_tilt").axis, [2 ** -0.5, 2 ** -0.5, 0])


@needs_tree
def test_planar_and_floating_joint_types():
    text = mutate('type="continuous"', 'type="planar"').replace('<axis xyz="0 1 0"/>\n  </joint>',
                                                                 '<axis xyz="0 2 0"/>\n  </joint>')
    tree = parse_urdf(text)
    elbow = tree.get_joint("elbow")
    assert (elbow.type, elbow.nq, elbow.nv) == ("planar", 3, 3)
    np.testing.assert_allclose(elbow.axis, [0, 1, 0])          # plane normal, normalized
    tree = parse_urdf(mutate('type="continuous"', 'type="floating"'))
    elbow = tree.get_joint("elbow")
    assert (elbow.type, elbow.nq, elbow.nv) == ("free", 7, 6)
    np.testing.assert_allclose(elbow.origin[:3, 3], [0, 0, -1])
    assert (tree.nq, tree.nv) == (8, 7)


@needs_tree
def test_inertia_and_com_in_tree():
    text = mutate('<origin xyz="0 0 -0.5" rpy="0 0 0"/>\n      <mass value="1"/>\n      ' + _INERTIA_UPPER,
                  f'<origin xyz="0.1 0.2 0.3" rpy="{math.pi / 2!r} 0 0"/>\n      <mass value="1.5"/>\n      '
                  '<inertia ixx="1" ixy="0" ixz="0" iyy="2" iyz="0" izz="3"/>')
    tree = parse_urdf(text)
    upper = tree.get_body("upper")
    assert upper.mass == 1.5
    np.testing.assert_allclose(upper.com, [0.1, 0.2, 0.3])
    # roll 90 deg: inertia-frame y -> body z, z -> -y, so I_body = diag(1, 3, 2)
    np.testing.assert_allclose(upper.inertia, np.diag([1.0, 3.0, 2.0]), atol=1e-12)


@needs_tree
def test_world_link_convention():
    # joint from an undeclared world link
    text = mutate('<link name="base"/>', '<link name="base"/>\n  <joint name="to_world" type="fixed">'
                  '<parent link="world"/><child link="base"/><origin xyz="0 0 2"/></joint>')
    tree = parse_urdf(text)
    assert [j.name for j in tree.joints] == ["to_world", "shoulder", "elbow"]
    assert tree.get_joint("to_world").parent == "world"
    np.testing.assert_allclose(tree.get_joint("to_world").origin[:3, 3], [0, 0, 2])
    # a declared world link carries geometry onto the world body
    text2 = text.replace('<link name="base"/>', '<link name="world"><collision><geometry>'
                         '<box size="10 10 0.1"/></geometry></collision></link>\n  <link name="base"/>')
    tree = parse_urdf(text2)
    assert [g.shape.size for g in tree.world.collision_geometries] == [pytest.approx((10, 10, 0.1))]
    # the root attached to the world: weld, or free joint with floating_base
    tree = parse_urdf(GOOD)
    assert (tree.joints[0].name, tree.joints[0].type, tree.joints[0].child) == ("world_weld", "weld", "base")
    tree = parse_urdf(GOOD, floating_base=True)
    assert (tree.joints[0].name, tree.joints[0].type, tree.joints[0].child) == ("floating_base", "free", "base")
    assert (tree.nq, tree.nv) == (9, 8)
    # generated names do not collide with the file's names
    tree = parse_urdf(GOOD.replace('name="elbow"', 'name="world_weld"'))
    assert [j.name for j in tree.joints] == ["world_weld_1", "shoulder", "world_weld"]


@needs_tree
def test_mimic_kept_on_joint():
    tree = parse_urdf(model_path("branching"))
    assert tree.get_joint("finger_right").mimic == ("finger_left", 1.0, 0.0)
    assert tree.get_joint("finger_left").mimic is None
    text = mutate('<axis xyz="0 1 0"/>\n  </joint>', '<axis xyz="0 1 0"/>\n'
                  '    <mimic joint="shoulder" multiplier="-2" offset="0.25"/>\n  </joint>')
    assert parse_urdf(text).get_joint("elbow").mimic == ("shoulder", -2.0, 0.25)


@needs_tree
def test_geometry_on_bodies():
    from multibody.geometry import Box, Cylinder, Mesh, Sphere

    tree = parse_urdf(model_path("quadruped"), floating_base=True)
    for leg in ("FL", "FR", "RL", "RR"):
        (foot,) = tree.get_body(f"{leg}_foot").collision_geometries
        assert isinstance(foot.shape, Sphere) and foot.shape.radius == 0.02
        assert foot.name == f"{leg}_foot_collision" and foot.body == f"{leg}_foot"
        np.testing.assert_allclose(foot.pose, np.eye(4))
    (trunk,) = tree.get_body("trunk").collision_geometries
    assert isinstance(trunk.shape, Box)
    np.testing.assert_allclose(trunk.shape.size, [0.5, 0.3, 0.15])
    tree = parse_urdf(model_path("pendulum"))
    rod, bob = tree.get_body("arm").visual_geometries
    assert isinstance(rod.shape, Cylinder) and (rod.shape.radius, rod.shape.length) == (0.005, 1.0)
    np.testing.assert_allclose(rod.pose[:3, 3], [0, 0, -0.5])
    assert isinstance(bob.shape, Sphere) and bob.shape.radius == 0.05
    text = mutate('<link name="base"/>', '<link name="base"><visual><origin xyz="1 0 0" rpy="0 0 0.5"/>'
                  '<geometry><mesh filename="package://r/m.stl" scale="2 2 2"/></geometry></visual></link>')
    (mesh,) = parse_urdf(text).get_body("base").visual_geometries
    assert isinstance(mesh.shape, Mesh) and mesh.shape.filename == "package://r/m.stl"
    np.testing.assert_allclose(mesh.shape.scale, [2, 2, 2])
    np.testing.assert_allclose(mesh.pose[:2, :2], [[math.cos(0.5), -math.sin(0.5)], [math.sin(0.5), math.cos(0.5)]])


# ---------------------------------------------------------------------------------------
# Mass matrices: closed form (acrobot), tree built in code, Pinocchio
# ---------------------------------------------------------------------------------------
HAVE_MASS_MATRIX = HAVE_TREE and hasattr(RigidBodyTree, "mass_matrix")
needs_mass_matrix = pytest.mark.skipif(not HAVE_MASS_MATRIX, reason="RigidBodyTree.mass_matrix does not exist yet")


def acrobot_closed_form(q2):
    """Spong (1995) acrobot mass matrix with I1, I2 about the COMs."""
    m1 = m2 = 1.0
    l1, lc1, lc2, I1, I2 = 1.0, 0.5, 1.0, 0.083, 0.33
    c2 = math.cos(q2)
    m11 = I1 + I2 + m1 * lc1 ** 2 + m2 * (l1 ** 2 + lc2 ** 2 + 2 * l1 * lc2 * c2)
    m12 = I2 + m2 * (lc2 ** 2 + l1 * lc2 * c2)
    return np.array([[m11, m12], [m12, I2 + m2 * lc2 ** 2]])


def acrobot_in_code():
    from multibody.tree.joints import Revolute, Weld

    tree = RigidBodyTree(name="acrobot")
    tree.add_body("base", 0.0)
    tree.add_body("upper_link", 1.0, com=(0, 0, -0.5), inertia=np.diag([0.083, 0.083, 0.001]))
    tree.add_body("lower_link", 1.0, com=(0, 0, -1.0), inertia=np.diag([0.33, 0.33, 0.001]))
    tree.add_joint(Weld("world_weld", "world", "base"))
    tree.add_joint(Revolute("shoulder", "base", "upper_link", axis=(0, 1, 0)))
    elbow_origin = np.eye(4)
    elbow_origin[2, 3] = -1.0
    tree.add_joint(Revolute("elbow", "upper_link", "lower_link", axis=(0, 1, 0), origin=elbow_origin))
    return tree


@needs_mass_matrix
def test_acrobot_mass_matrix_matches_closed_form_and_code_built_tree():
    tree = parse_urdf(model_path("acrobot"))
    np.testing.assert_allclose(tree.mass_matrix(np.zeros(2)), [[4.663, 2.33], [2.33, 1.33]], atol=1e-12)
    code = acrobot_in_code()
    rng = np.random.default_rng(0)
    for q in rng.uniform(-math.pi, math.pi, size=(5, 2)):
        M = tree.mass_matrix(q)
        np.testing.assert_allclose(M, acrobot_closed_form(q[1]), atol=1e-12)
        np.testing.assert_allclose(M, code.mass_matrix(q), atol=1e-14)


@needs_mass_matrix
def test_pendulum_mass_matrix():
    tree = parse_urdf(model_path("pendulum"))
    # M = m l^2 + (2/5) m r^2 for the 1 kg, r = 0.05 m bob 1 m below the pivot.
    # (reshape: the tree currently returns shape (1,) instead of (1, 1) when nv = 1; reported.)
    M = np.reshape(tree.mass_matrix(np.array([0.7])), (1, 1))
    np.testing.assert_allclose(M, [[1.001]], atol=1e-12)


def _random_q(tree, rng):
    q = np.zeros(tree.nq)
    for j in tree.joints:
        s = j.q_start
        if j.type == "free":
            quat = rng.normal(size=4)
            q[s:s + 4] = quat / np.linalg.norm(quat)
            q[s + 4:s + 7] = rng.uniform(-1, 1, 3)
        elif j.nq == 1:
            lo, hi = max(j.lower[0], -2.5), min(j.upper[0], 2.5)
            q[s] = rng.uniform(lo, hi)
        else:
            assert j.nq == 0, j.type
    return q


def _pinocchio_mass_matrix(pin, text, tree, q):
    """Pinocchio's CRBA for the same URDF text, mapped to our q and v ordering.

    Pinocchio's free flyer: q = [x, y, z, qx, qy, qz, qw], v = [v; omega] (local);
    ours: q = [qw, qx, qy, qz, x, y, z], v = [omega; v] (local).  Joints are matched by
    name (Pinocchio orders sibling subtrees differently).  With v_pin = P v, M = P^T M_pin P.
    """
    floating = tree.joints[0].type == "free"
    model = pin.buildModelFromXML(text, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromXML(text)
    qp = np.zeros(model.nq)
    P = np.zeros((model.nv, tree.nv))
    for j in tree.joints:
        if j.nv == 0:
            continue
        pj = model.joints[model.getJointId("root_joint" if j.type == "free" else j.name)]
        iq, iv, s, t = pj.idx_q, pj.idx_v, j.q_start, j.v_start
        if j.type == "free":
            qp[iq:iq + 3] = q[s + 4:s + 7]
            qp[iq + 3:iq + 6] = q[s + 1:s + 4]
            qp[iq + 6] = q[s]
            P[iv:iv + 3, t + 3:t + 6] = np.eye(3)
            P[iv + 3:iv + 6, t:t + 3] = np.eye(3)
        elif pj.nq == 2:   # Pinocchio's unbounded revolute joint: q = (cos, sin)
            assert pj.nv == 1, j.name
            qp[iq:iq + 2] = math.cos(q[s]), math.sin(q[s])
            P[iv, t] = 1.0
        else:
            assert (pj.nq, pj.nv) == (1, 1), j.name
            qp[iq] = q[s]
            P[iv, t] = 1.0
    assert np.linalg.matrix_rank(P) == tree.nv == model.nv
    M = pin.crba(model, model.createData(), qp)
    M = np.triu(M) + np.triu(M, 1).T
    return P.T @ M @ P


@needs_mass_matrix
@pytest.mark.parametrize("name,floating", [("arm7", False), ("humanoid", True), ("branching", False),
                                           ("quadruped", True)])
def test_mass_matrix_matches_pinocchio(name, floating):
    pin = pytest.importorskip("pinocchio")
    text = model_path(name).read_text()
    tree = parse_urdf(text, floating_base=floating)
    rng = np.random.default_rng(7)
    for _ in range(3):
        q = _random_q(tree, rng)
        M = tree.mass_matrix(q)
        M_pin = _pinocchio_mass_matrix(pin, text, tree, q)
        np.testing.assert_allclose(M, M_pin, atol=1e-10 * max(1.0, np.abs(M_pin).max()))


@needs_tree
def test_from_urdf_classmethod_delegates():
    tree = RigidBodyTree.from_urdf(model_path("acrobot"), floating_base=True)
    assert (tree.nq, tree.nv) == (9, 8) and tree.joints[0].type == "free"
    from multibody.errors import MultibodyError
    assert issubclass(URDFError, MultibodyError) and issubclass(URDFError, ValueError)


@needs_tree
def test_errors_from_the_model_classes_get_file_and_line(monkeypatch, tmp_path):
    from multibody.errors import BodyError, JointError

    path = tmp_path / "two_link.urdf"
    path.write_text(GOOD)

    def refuse_body(self, name, *args, **kwargs):
        raise BodyError(f"body '{name}': refused")

    monkeypatch.setattr(RigidBodyTree, "add_body", refuse_body)
    check_error(path, line_of(GOOD, '<link name="base"/>'), "link 'base'", "body 'base': refused", source=str(path))
    monkeypatch.undo()

    real_add_joint = RigidBodyTree.add_joint

    def refuse_elbow(self, joint):
        if joint.name == "elbow":
            raise JointError("joint 'elbow': refused")
        return real_add_joint(self, joint)

    monkeypatch.setattr(RigidBodyTree, "add_joint", refuse_elbow)
    check_error(GOOD, line_of(GOOD, 'name="elbow"'), "joint 'elbow'", "refused")


@needs_mass_matrix
def test_gravity_conventions_of_pendulum_and_acrobot():
    # q = 0 hangs straight down, joints about +y: V = -m g l cos(theta), g(q) = dV/dq.
    g = 9.81
    tree = parse_urdf(model_path("pendulum"))
    np.testing.assert_allclose(np.ravel(tree.gravity_forces(np.array([0.3]))), [g * math.sin(0.3)], rtol=1e-12)
    tree = parse_urdf(model_path("acrobot"))
    q1, q2 = 0.4, -1.1
    expected = [(1.0 * 0.5 + 1.0 * 1.0) * g * math.sin(q1) + 1.0 * 1.0 * g * math.sin(q1 + q2),
                1.0 * 1.0 * g * math.sin(q1 + q2)]
    np.testing.assert_allclose(tree.gravity_forces(np.array([q1, q2])), expected, rtol=1e-12)


@needs_mass_matrix
def test_feet_positions_documented_in_the_models():
    tree = parse_urdf(model_path("quadruped"), floating_base=True)
    q = np.zeros(tree.nq)
    q[0] = 1.0                                       # identity orientation of the trunk
    for leg, sx, sy in (("FL", 1, 1), ("FR", 1, -1), ("RL", -1, 1), ("RR", -1, -1)):
        np.testing.assert_allclose(tree.body_pose(f"{leg}_foot", q)[:3, 3], [0.22 * sx, 0.18 * sy, -0.5],
                                   atol=1e-12)
    tree = parse_urdf(model_path("humanoid"), floating_base=True)
    q = np.zeros(tree.nq)
    q[0] = 1.0
    for side, sy in (("l", 1), ("r", -1)):
        (sole,) = tree.get_body(f"{side}_foot").collision_geometries
        T = tree.body_pose(f"{side}_foot", q) @ sole.pose
        assert T[2, 3] - sole.shape.size[2] / 2 == pytest.approx(-1.0, abs=1e-12)   # sole 1 m below pelvis
        assert T[1, 3] == pytest.approx(0.1 * sy, abs=1e-12)

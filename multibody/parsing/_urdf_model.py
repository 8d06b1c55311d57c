"""URDF document -> validated, library-independent description (private).

:func:`read_model` turns the XML tree of a URDF file into plain dataclasses
(:class:`LinkSpec`, :class:`JointSpec`, :class:`GeometrySpec`), checking every
value and the kinematic topology.  Nothing here depends on the model classes;
``multibody.parsing`` builds the :class:`~multibody.tree.RigidBodyTree` from the
result.

Reference: the URDF XML specification, http://wiki.ros.org/urdf/XML (link,
joint, geometry and material elements).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from ._model_checks import check_scale as _check_scale
from ._model_checks import inertia_entries as _entries
from ._model_checks import inertia_in_link_frame
from ._model_checks import resolve_filename as _resolve_filename
from ._urdf_xml import Reader, XmlNode, rpy_to_matrix

__all__ = ["GeometrySpec", "LinkSpec", "JointSpec", "URDFModel", "read_model", "WORLD", "JOINT_TYPES"]

WORLD = "world"
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
_AXIS_TYPES = ("revolute", "continuous", "prismatic", "planar")
_MAX_LENGTH = 1e150
"""Largest geometry dimension or offset (m): collision code squares lengths."""


@dataclass
class GeometrySpec:
    """A visual or collision element: shape kind, its parameters, pose in the link frame."""

    kind: str                       # "box" | "sphere" | "cylinder" | "capsule" | "mesh"
    params: dict                    # size / radius, length / filename, scale
    pose: np.ndarray                # 4x4 in the link frame
    name: str | None
    line: int
    material: dict | None = None    # visuals: {"name", "rgba", "texture"}


@dataclass
class LinkSpec:
    name: str
    line: int
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    has_inertial: bool = False
    visuals: list[GeometrySpec] = field(default_factory=list)
    collisions: list[GeometrySpec] = field(default_factory=list)


@dataclass
class JointSpec:
    name: str
    type: str
    line: int
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    lower: float | None = None
    upper: float | None = None
    velocity: float | None = None
    effort: float | None = None
    damping: float = 0.0
    friction: float = 0.0
    has_dynamics: bool = False
    mimic: tuple[str, float, float] | None = None
    mimic_line: int = 0


@dataclass
class URDFModel:
    """A validated URDF: links and joints in depth-first order from the root."""

    name: str
    links: list[LinkSpec]           # DFS order, world excluded
    joints: list[JointSpec]         # DFS order (joint i has child links[...])
    root: str                       # "world" if the file attaches its root to the world
    world: LinkSpec | None          # the declared <link name="world">, if any
    world_joint: JointSpec | None   # the joint whose parent is world when root == "world"


def _owner(kind: str, name: str | None) -> str:
    return f"{kind} '{name}'" if name is not None else kind


def read_model(root: XmlNode, rd: Reader, *, package_map: Mapping[str, str] | None,
               base_dir: str | None) -> URDFModel:
    """Validate a parsed URDF document and return its :class:`URDFModel`.

    Raises
    ------
    URDFError
        For any malformed element, with file, line and element name.
    """
    if root.tag != "robot":
        raise rd.error(root, "document", f"no <robot> element: the root element is <{root.tag}>")
    for node in root.iter():
        if node.tag.startswith("xacro:"):
            raise rd.error(node, "document", f"<{node.tag}> is a xacro macro; expand the file "
                                             "with xacro before loading it")
    robot_name = rd.text(root, "name", "robot")
    materials = _global_materials(root, rd)

    links: dict[str, LinkSpec] = {}
    for node in root.findall("link"):
        link = _read_link(node, rd, materials, package_map, base_dir)
        if link.name in links:
            raise rd.error(node, _owner("link", link.name),
                           f"duplicate link name (first declared at line {links[link.name].line})")
        links[link.name] = link
    joints: dict[str, JointSpec] = {}
    for node in root.findall("joint"):
        joint = _read_joint(node, rd)
        if joint.name in joints:
            raise rd.error(node, _owner("joint", joint.name),
                           f"duplicate joint name (first declared at line {joints[joint.name].line})")
        joints[joint.name] = joint
    world = links.pop(WORLD, None)
    if world is not None and world.has_inertial:
        # Drake's own Pendulum.urdf has one; Pinocchio and Drake ignore it
        rd.warn(_find_line(root, "link", WORLD), "link 'world'",
                "the world link is fixed: its <inertial> is ignored")
        world.has_inertial = False
        world.mass, world.com, world.inertia = 0.0, np.zeros(3), np.zeros((3, 3))
    if not links:
        raise rd.error(root, f"robot '{robot_name}'", "the robot has no links")
    for j in joints.values():
        if j.mimic is not None:
            other = j.mimic[0]
            if other not in joints or other == j.name:
                raise rd.error_at(j.mimic_line, _owner("joint", j.name),
                                  f"<mimic> refers to joint '{other}', which is "
                                  + ("the joint itself" if other == j.name else "not declared"))
    return _topology(robot_name, links, joints, world, rd, root)


def _find_line(root: XmlNode, tag: str, name: str) -> XmlNode:
    return next(n for n in root.findall(tag) if n.attrib.get("name") == name)


def _global_materials(root: XmlNode, rd: Reader) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for node in root.findall("material"):
        mat = _read_material(node, rd, "material", {})
        out[mat["name"]] = mat
    return out


def _read_material(node: XmlNode, rd: Reader, owner: str, materials: Mapping[str, dict]) -> dict:
    name = rd.text(node, "name", owner)
    color = rd.child(node, "color", owner)
    texture = rd.child(node, "texture", owner)
    mat = dict(materials.get(name, {"name": name, "rgba": None, "texture": None}))
    if color is not None:
        rgba = rd.vector(color, "rgba", owner, 4)
        if np.any(rgba < 0) or np.any(rgba > 1):
            raise rd.error(color, owner, f"<color> rgba values must lie in [0, 1], got {rgba.tolist()}")
        mat["rgba"] = tuple(rgba.tolist())
    if texture is not None:
        mat["texture"] = rd.text(texture, "filename", owner)
    return mat


# -- links ---------------------------------------------------------------------------
def _read_link(node: XmlNode, rd: Reader, materials: Mapping[str, dict],
               package_map: Mapping[str, str] | None, base_dir: str | None) -> LinkSpec:
    name = rd.text(node, "name", "link")
    owner = _owner("link", name)
    link = LinkSpec(name=name, line=node.line)
    inertial = rd.child(node, "inertial", owner)
    if inertial is not None:
        link.has_inertial = True
        if name != WORLD:      # the world's inertial is ignored (one warning, in read_model)
            _read_inertial(inertial, rd, owner, link)
    for tag, bucket in (("visual", link.visuals), ("collision", link.collisions)):
        for g in node.findall(tag):
            bucket.append(_read_geometry(g, rd, owner, materials if tag == "visual" else None,
                                         package_map, base_dir))
    return link


def _read_inertial(node: XmlNode, rd: Reader, owner: str, link: LinkSpec) -> None:
    mass_node = rd.child(node, "mass", owner, required=True)
    mass = rd.number(mass_node, "value", owner)
    if mass < 0:
        raise rd.error(mass_node, owner, f"negative mass {mass:g}")
    inertia_node = rd.child(node, "inertia", owner, required=True)
    ixx, ixy, ixz, iyy, iyz, izz = (rd.number(inertia_node, k, owner)
                                    for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
    I = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if mass == 0 and np.any(I != 0):
        # pybullet's kuka_iiwa/model.urdf and cartpole.urdf: Pinocchio keeps the inertia, Drake
        # drops it on world-welded links and MuJoCo keeps it; we keep it (a welded link's
        # inertia does not enter the dynamics; a moving one keeps its rotational inertia)
        rd.warn(inertia_node, owner, f"zero mass with a nonzero rotational inertia {_entries(I)}: "
                                     "the inertia is kept as written (as Pinocchio does)")
    o = rd.child(node, "origin", owner)
    xyz = rd.vector(o, "xyz", owner, 3, (0, 0, 0))
    R = rpy_to_matrix(rd.vector(o, "rpy", owner, 3, (0, 0, 0)))
    link.mass = mass
    link.com = xyz
    link.inertia = inertia_in_link_frame(mass, I, xyz, R, rd, inertia_node, owner)


def _read_geometry(node: XmlNode, rd: Reader, owner: str, materials: Mapping[str, dict] | None,
                   package_map: Mapping[str, str] | None, base_dir: str | None) -> GeometrySpec:
    gname = node.attrib.get("name")
    pose = rd.origin(node, owner)
    geom = rd.child(node, "geometry", owner, required=True)
    if len(geom.children) != 1:
        raise rd.error(geom, owner, f"<geometry> in <{node.tag}> must hold exactly one shape, "
                                    f"found {len(geom.children)}")
    shape = geom.children[0]
    kind = shape.tag
    if kind == "box":
        size = rd.vector(shape, "size", owner, 3)
        params = {"size": tuple(size.tolist())}
        values = size
    elif kind == "sphere":
        params = {"radius": rd.number(shape, "radius", owner)}
        values = np.array([params["radius"]])
    elif kind in ("cylinder", "capsule"):
        params = {"radius": rd.number(shape, "radius", owner), "length": rd.number(shape, "length", owner)}
        values = np.array([params["radius"], params["length"]])
    elif kind == "mesh":
        filename = _resolve_filename(rd.text(shape, "filename", owner), shape, rd, owner,
                                     package_map, base_dir)
        params = {"filename": filename, "scale": tuple(rd.vector(shape, "scale", owner, 3, (1, 1, 1)).tolist())}
        values = np.ones(1)
    else:
        raise rd.error(shape, owner, f"unknown geometry <{kind}> (expected box, sphere, cylinder, "
                                     "capsule or mesh)")
    if np.any(values <= 0):
        raise rd.error(shape, owner, f"<{kind}> dimensions must be positive, got {params}")
    if np.any(values > _MAX_LENGTH) or np.any(np.abs(pose[:3, 3]) > _MAX_LENGTH):
        raise rd.error(shape, owner, f"<{kind}> dimensions {params} or offset "
                                     f"{pose[:3, 3].tolist()} exceed {_MAX_LENGTH:g} m (their "
                                     "squares would overflow in double precision)")
    material = None
    if materials is not None:
        mnode = rd.child(node, "material", owner)
        if mnode is not None:
            material = _read_material(mnode, rd, owner, materials)
    return GeometrySpec(kind, params, pose, gname, node.line, material)


# -- joints ----------------------------------------------------------------------------
def _read_joint(node: XmlNode, rd: Reader) -> JointSpec:
    name = rd.text(node, "name", "joint")
    owner = _owner("joint", name)
    jtype = rd.text(node, "type", owner)
    if jtype not in JOINT_TYPES:
        raise rd.error(node, owner, f"unknown joint type '{jtype}' (expected one of {', '.join(JOINT_TYPES)})")
    parent = rd.text(rd.child(node, "parent", owner, required=True), "link", owner)
    child = rd.text(rd.child(node, "child", owner, required=True), "link", owner)
    axis_node = rd.child(node, "axis", owner)
    axis = rd.vector(axis_node, "xyz", owner, 3, (1, 0, 0))
    if jtype in _AXIS_TYPES:
        big = float(np.abs(axis).max())
        unit = axis / big if big > 0 else axis      # scaled first: no overflow of the norm
        n_unit = float(np.linalg.norm(unit))        # in [1, sqrt(3)] unless zero
        if big == 0 or big * n_unit < 1e-12:
            raise rd.error(axis_node, owner, "joint axis is the zero vector")
        axis = unit / n_unit
    j = JointSpec(name=name, type=jtype, line=node.line, parent=parent, child=child,
                  origin=rd.origin(node, owner), axis=axis)
    limit = rd.child(node, "limit", owner)
    if limit is None and jtype in ("revolute", "prismatic"):
        raise rd.error(node, owner, f"a {jtype} joint needs a <limit> element (URDF spec); "
                                    "use type 'continuous' for an unlimited revolute joint")
    if limit is not None and jtype in ("revolute", "prismatic", "continuous"):
        j.effort = rd.number(limit, "effort", owner)
        j.velocity = rd.number(limit, "velocity", owner)
        for label, value in (("effort", j.effort), ("velocity", j.velocity)):
            if value < 0:
                raise rd.error(limit, owner, f"negative {label} limit {value:g}")
        if jtype != "continuous":
            j.lower = rd.number(limit, "lower", owner, 0.0)
            j.upper = rd.number(limit, "upper", owner, 0.0)
            if j.lower > j.upper:
                raise rd.error(limit, owner, f"lower limit {j.lower:g} > upper limit {j.upper:g}")
    dyn = rd.child(node, "dynamics", owner)
    if dyn is not None:
        j.has_dynamics = True
        j.damping = rd.number(dyn, "damping", owner, 0.0)
        j.friction = rd.number(dyn, "friction", owner, 0.0)
        for label, value in (("damping", j.damping), ("friction", j.friction)):
            if value < 0:
                raise rd.error(dyn, owner, f"negative {label} {value:g}")
    mimic = rd.child(node, "mimic", owner)
    if mimic is not None:
        j.mimic = (rd.text(mimic, "joint", owner), rd.number(mimic, "multiplier", owner, 1.0),
                   rd.number(mimic, "offset", owner, 0.0))
        j.mimic_line = mimic.line
    return j


# -- topology ----------------------------------------------------------------------------
def _topology(robot_name: str, links: dict[str, LinkSpec], joints: dict[str, JointSpec],
              world: LinkSpec | None, rd: Reader, root_node: XmlNode) -> URDFModel:
    parent_joint: dict[str, JointSpec] = {}
    children: dict[str, list[JointSpec]] = {WORLD: []}
    children.update({name: [] for name in links})
    for j in joints.values():
        owner = _owner("joint", j.name)
        if j.parent != WORLD and j.parent not in links:
            raise rd.error_at(j.line, owner, f"parent link '{j.parent}' is not declared")
        if j.child == WORLD:
            raise rd.error_at(j.line, owner, "the world link cannot be the child of a joint")
        if j.child not in links:
            raise rd.error_at(j.line, owner, f"child link '{j.child}' is not declared")
        if j.child == j.parent:
            raise rd.error_at(j.line, owner, f"link '{j.child}' is both parent and child (a cycle)")
        if j.child in parent_joint:
            first = parent_joint[j.child]
            raise rd.error_at(j.line, owner, f"link '{j.child}' has two parent joints: "
                                             f"'{first.name}' (line {first.line}) and '{j.name}'")
        parent_joint[j.child] = j
        children[j.parent].append(j)
    roots = [name for name in links if name not in parent_joint]
    uses_world = world is not None or bool(children[WORLD])
    if uses_world:
        roots = [WORLD] + roots
    if len(roots) > 1:
        described = ", ".join(f"'{r}'" + ("" if r == WORLD else f" (line {links[r].line})") for r in roots)
        raise rd.error(root_node, f"robot '{robot_name}'",
                       f"several root links {described}: every link but one must be the child of a joint")
    # Depth-first order from the root; links that are not reached hang on a cycle.
    root = roots[0] if roots else None
    order_links: list[LinkSpec] = [] if root in (None, WORLD) else [links[root]]
    order_joints: list[JointSpec] = []
    if root is not None:
        stack = list(reversed(children[root]))
        while stack:
            j = stack.pop()
            order_joints.append(j)
            order_links.append(links[j.child])
            stack.extend(reversed(children[j.child]))
    if len(order_links) < len(links):
        reached = {lk.name for lk in order_links}
        start = next(name for name in links if name not in reached)
        cycle: list[JointSpec] = []
        seen: set[str] = set()
        name = start
        while name not in seen:       # every unreached link has a parent joint
            seen.add(name)
            cycle.append(parent_joint[name])
            name = parent_joint[name].parent
        cycle = cycle[[c.child for c in cycle].index(name):]
        names = " -> ".join(f"'{c.name}'" for c in reversed(cycle))
        raise rd.error_at(cycle[-1].line, _owner("joint", cycle[-1].name),
                          f"the joints {names} form a kinematic cycle")
    world_joint = None
    if root == WORLD:
        world_joint = children[WORLD][0] if children[WORLD] else None
    _check_scale(robot_name, order_links, order_joints, rd, root_node)
    return URDFModel(robot_name, order_links, order_joints, root, world, world_joint)

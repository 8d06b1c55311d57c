"""SDFormat document -> validated, library-independent description (private).

:func:`read_document` turns the XML tree of an SDFormat file into plain dataclasses
(:class:`SdfModel` with :class:`SdfLink`, :class:`SdfJoint`, :class:`SdfFrame`), every pose
resolved to the world at the zero configuration (see :mod:`._sdf_poses`). Nothing here builds
the tree; :mod:`multibody.parsing.sdf` does. Reference: the SDFormat specification,
http://sdformat.org/spec (versions 1.6-1.11), and Drake's documentation of its ``drake:``
extensions.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from ._model_checks import inertia_in_link_frame, resolve_filename
from ._sdf_poses import MODEL_FRAME, WORLD, FrameEntry, FrameGraph, inverse, read_pose
from ._xml import Reader, XmlNode

__all__ = ["SdfGeometry", "SdfLink", "SdfJoint", "SdfFrame", "SdfModel", "read_document",
           "JOINT_TYPES", "Notes"]

JOINT_TYPES = ("revolute", "continuous", "prismatic", "ball", "universal", "fixed", "screw")
_REFUSED_JOINTS = {"revolute2": "two revolute joints through a massless link",
                   "gearbox": "a revolute joint per gear (the gear ratio is not modelled)",
                   "piston": "a prismatic and a revolute joint through a massless link"}
_UNLIMITED = 1e16     # SDFormat's default |lower|, |upper|: no position limit


class Notes:
    """One warning per element kind and reason (``"drake:hydroelastic..."``) per parse."""

    def __init__(self, rd: Reader):
        self.rd = rd
        self.seen: set[str] = set()

    def ignore(self, node: XmlNode, owner: str, why: str = "not supported") -> None:
        key = f"{node.tag}:{why}"
        if key in self.seen:
            return
        self.seen.add(key)
        self.rd.warn(node, owner, f"<{node.tag}> is {why} and ignored (further <{node.tag}> "
                                  "elements are ignored without a warning)")

    def others(self, node: XmlNode, owner: str, known: set[str]) -> None:
        for c in node.children:
            if c.tag not in known:
                self.ignore(c, owner)


@dataclass
class SdfGeometry:
    kind: str                  # box | sphere | cylinder | capsule | ellipsoid | plane | mesh
    params: dict
    pose: np.ndarray           # in the link frame
    name: str | None
    line: int
    material: dict | None = None
    mu: float | None = None    # friction read from <surface> or drake:mu_dynamic


@dataclass
class SdfLink:
    name: str
    line: int
    X_W: np.ndarray = field(default_factory=lambda: np.eye(4))
    mass: float = 1.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.eye(3))
    visuals: list[SdfGeometry] = field(default_factory=list)
    collisions: list[SdfGeometry] = field(default_factory=list)


@dataclass
class SdfJoint:
    name: str
    type: str
    line: int
    parent: str                # a link name or "world"
    child: str
    X_WJ: np.ndarray           # joint frame in the world at the zero configuration
    axis: np.ndarray           # unit, joint frame
    axis2: np.ndarray | None = None
    lower: float | None = None
    upper: float | None = None
    effort: float | None = None
    velocity: float | None = None
    damping: float = 0.0
    friction: float = 0.0
    stiffness: float = 0.0
    reference: float = 0.0
    pitch: float = 0.0         # screw: metres per radian
    armature: float = 0.0


@dataclass
class SdfFrame:
    name: str
    line: int
    body: str
    X_W: np.ndarray


@dataclass
class SdfModel:
    name: str
    line: int
    static: bool
    X_WM: np.ndarray
    links: list[SdfLink]
    joints: list[SdfJoint]
    frames: list[SdfFrame]


def _owner(kind: str, name: str | None) -> str:
    return f"{kind} '{name}'" if name is not None else kind


def _text(node: XmlNode) -> str:
    return node.text.strip(" \t\r\n")


def _child_text(rd: Reader, node: XmlNode, tag: str, owner: str) -> str | None:
    c = rd.child(node, tag, owner)
    return None if c is None else _text(c)


def _number(rd: Reader, node: XmlNode, tag: str, owner: str, default: float | None = None,
            nonneg: bool = False) -> float:
    c = rd.child(node, tag, owner, required=default is None)
    if c is None:
        return float(default)
    value = float(rd.numbers(c, c.text, f"<{tag}>", owner, sizes=(1,))[0])
    if nonneg and value < 0:
        raise rd.error(c, owner, f"<{tag}> must be >= 0, got {value:g}")
    return value


def _vector(rd: Reader, node: XmlNode, tag: str, owner: str, size: int,
            default=None) -> np.ndarray:
    c = rd.child(node, tag, owner, required=default is None)
    if c is None:
        return np.array(default, dtype=float)
    return rd.numbers(c, c.text, f"<{tag}>", owner, sizes=(size,))


def _bool(rd: Reader, node: XmlNode, tag: str, owner: str) -> bool:
    c = rd.child(node, tag, owner)
    if c is None:
        return False
    t = _text(c).lower()
    if t not in ("true", "false", "1", "0"):
        raise rd.error(c, owner, f"<{tag}> must be true or false, got '{_text(c)}'")
    return t in ("true", "1")


def read_document(root: XmlNode, rd: Reader, *, package_map: Mapping[str, str] | None,
                  base_dir: str | None) -> tuple[list[SdfModel], np.ndarray | None]:
    """The models of an ``<sdf>`` document (top level or inside one ``<world>``) and the
    world's gravity (None when the document has no ``<world>``).

    Raises
    ------
    SDFError
        Any malformed or unsupported element, with file, line and element.
    """
    if root.tag != "sdf":
        raise rd.error(root, "document", f"no <sdf> element: the root element is <{root.tag}>")
    notes = Notes(rd)
    version = rd.text(root, "version", "sdf")
    try:
        major, minor = (int(x) for x in version.strip().split("."))
    except ValueError:
        raise rd.error(root, "sdf", f"version=\"{version}\" is not a version number such as "
                                    "1.9") from None
    if major != 1 or not 6 <= minor <= 11:
        rd.warn(root, "sdf", f"version {version} is outside the supported 1.6-1.11; read as 1.11")
    gravity = None
    scope = root
    worlds = root.findall("world")
    if worlds:
        if len(worlds) > 1:
            raise rd.error(worlds[1], "sdf", "more than one <world>")
        scope = worlds[0]
        g = rd.child(scope, "gravity", "world")
        gravity = np.array([0.0, 0.0, -9.8]) if g is None else \
            rd.numbers(g, g.text, "<gravity>", "world", sizes=(3,))
        notes.others(scope, "world", {"model", "gravity", "include"})
    else:
        notes.others(root, "sdf", {"model", "world", "include"})
    for inc in scope.findall("include"):
        raise rd.error(inc, "sdf", "<include> is not supported (merge the included model into "
                                   "this file)")
    nodes = scope.findall("model")
    if not nodes:
        raise rd.error(scope, "sdf", "the document has no <model>")
    models = [_read_model(n, rd, notes, package_map, base_dir) for n in nodes]
    seen: dict[str, int] = {}
    for m in models:
        if m.name in seen:
            raise rd.error_at(m.line, _owner("model", m.name),
                              f"duplicate model name (first at line {seen[m.name]})")
        seen[m.name] = m.line
    return models, gravity


_MODEL_KNOWN = {"link", "joint", "frame", "pose", "static", "drake:joint", "model", "include"}


def _read_model(node: XmlNode, rd: Reader, notes: Notes, package_map, base_dir) -> SdfModel:
    name = rd.text(node, "name", "model")
    owner = _owner("model", name)
    for tag in ("model", "include"):
        for sub in node.findall(tag):
            raise rd.error(sub, owner, f"nested <{tag}> is not supported (flatten the model "
                                       "into one <model>)")
    notes.others(node, owner, _MODEL_KNOWN)
    X_M, rel = read_pose(rd.child(node, "pose", owner), rd, owner)
    if rel not in (None, WORLD):
        raise rd.error(rd.child(node, "pose", owner), owner,
                       f"a top-level model's pose is relative to the world, not '{rel}'")
    static = _bool(rd, node, "static", owner)
    entries: dict[str, FrameEntry] = {}
    kinds = {"link": node.findall("link"), "joint": node.findall("joint"),
             "frame": node.findall("frame")}
    for kind, elems in kinds.items():
        for e in elems:
            ename = rd.text(e, "name", _owner(kind, None))
            eowner = _owner(kind, ename)
            if ename in (WORLD, MODEL_FRAME) or ename.startswith("__"):
                raise rd.error(e, eowner, f"the name '{ename}' is reserved")
            if ename in entries:
                first = entries[ename]
                raise rd.error(e, eowner, f"name already used by {first.kind} '{ename}' at line "
                                          f"{first.node.line} (links, joints and frames share "
                                          "one namespace)")
            X, rel = read_pose(rd.child(e, "pose", eowner), rd, eowner)
            if kind == "joint":
                attached = _child_text(rd, e, "child", eowner)
                if not attached:
                    raise rd.error(e, eowner, "<joint> has no <child> (or it is empty)")
            elif kind == "frame":
                attached = e.attrib.get("attached_to") or None
            else:
                attached = None
            entries[ename] = FrameEntry(ename, kind, X, rel, attached, e)
    canonical = node.attrib.get("canonical_link") or (
        rd.text(kinds["link"][0], "name", "link") if kinds["link"] else None)
    if canonical is not None and (canonical not in entries or entries[canonical].kind != "link"):
        raise rd.error(node, owner, f"canonical_link '{canonical}' is not a link of the model")
    graph = FrameGraph(name, X_M, canonical, entries, rd)
    links = [_read_link(e, rd, notes, graph, package_map, base_dir) for e in kinds["link"]]
    if not links:
        raise rd.error(node, owner, "the model has no <link>")
    joints = [_read_joint(e, rd, notes, graph) for e in kinds["joint"]]
    joints += [_read_drake_joint(e, rd, notes, graph) for e in node.findall("drake:joint")]
    frames = []
    for e in kinds["frame"]:
        fname = e.attrib["name"]
        fowner = _owner("frame", fname)
        frames.append(SdfFrame(fname, e.line, graph.body_of(fname, e, fowner, "frame"),
                               graph.world_pose(fname, e, fowner)))
        notes.others(e, fowner, {"pose"})
    return SdfModel(name, node.line, static, X_M, links, joints, frames)


# -- links ---------------------------------------------------------------------------------
_LINK_KNOWN = {"pose", "inertial", "collision", "visual"}


def _read_link(node: XmlNode, rd: Reader, notes: Notes, graph: FrameGraph, package_map,
               base_dir) -> SdfLink:
    name = node.attrib["name"]
    owner = _owner("link", name)
    notes.others(node, owner, _LINK_KNOWN)
    link = SdfLink(name, node.line, graph.world_pose(name, node, owner))
    inertial = rd.child(node, "inertial", owner)
    if inertial is not None:
        _read_inertial(inertial, rd, notes, graph, link, owner)
    for tag, bucket in (("collision", link.collisions), ("visual", link.visuals)):
        for g in node.findall(tag):
            bucket.append(_read_geometry(g, rd, notes, graph, link, owner, package_map, base_dir))
    return link


def _read_inertial(node: XmlNode, rd: Reader, notes: Notes, graph: FrameGraph, link: SdfLink,
                   owner: str) -> None:
    """Mass (default 1 kg) and inertia (default ixx = iyy = izz = 1), as the spec's defaults."""
    notes.others(node, owner, {"mass", "pose", "inertia"})
    mass = _number(rd, node, "mass", owner, 1.0)
    if mass < 0:
        raise rd.error(rd.child(node, "mass", owner), owner, f"negative mass {mass:g}")
    inode = rd.child(node, "inertia", owner)
    vals = {k: 1.0 if k in ("ixx", "iyy", "izz") else 0.0
            for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    if inode is not None:
        notes.others(inode, owner, set(vals))
        vals = {k: _number(rd, inode, k, owner, v) for k, v in vals.items()}
    I = np.array([[vals["ixx"], vals["ixy"], vals["ixz"]], [vals["ixy"], vals["iyy"], vals["iyz"]],
                  [vals["ixz"], vals["iyz"], vals["izz"]]])
    pnode = rd.child(node, "pose", owner)
    X, rel = read_pose(pnode, rd, owner)
    X_LI = inverse(link.X_W) @ graph.relative_pose(X, rel, link.name, pnode or node, owner)
    where = inode if inode is not None else node
    link.mass = mass
    link.com = X_LI[:3, 3].copy()
    link.inertia = inertia_in_link_frame(mass, I, link.com, X_LI[:3, :3], rd, where, owner)


def _geometry_pose(node, rd, graph, link, owner) -> np.ndarray:
    pnode = rd.child(node, "pose", owner)
    X, rel = read_pose(pnode, rd, owner)
    if rel is None:
        return X
    return inverse(link.X_W) @ graph.world_pose(rel, pnode, owner)  @ X


_SHAPE_TAGS = {"box", "sphere", "cylinder", "capsule", "ellipsoid", "plane", "mesh",
               "drake:capsule", "drake:ellipsoid", "empty"}


def _read_geometry(node, rd, notes, graph, link, owner, package_map, base_dir) -> SdfGeometry | None:
    gname = node.attrib.get("name")
    gowner = f"{owner} {node.tag} '{gname}'" if gname else owner
    notes.others(node, gowner, {"pose", "geometry", "material", "surface",
                                "drake:proximity_properties"})
    pose = _geometry_pose(node, rd, graph, link, gowner)
    geom = rd.child(node, "geometry", gowner, required=True)
    shapes = [c for c in geom.children]
    if len(shapes) != 1:
        raise rd.error(geom, gowner, f"<geometry> must hold exactly one shape, found {len(shapes)}")
    shape = shapes[0]
    kind = shape.tag.replace("drake:", "")
    if shape.tag not in _SHAPE_TAGS:
        raise rd.error(shape, gowner, f"geometry <{shape.tag}> is not supported (expected box, "
                                      "sphere, cylinder, capsule, ellipsoid, plane, mesh or empty)")
    if kind == "empty":
        kind, params, values = "empty", {}, np.ones(1)
    elif kind == "box":
        params = {"size": tuple(_vector(rd, shape, "size", gowner, 3, (1, 1, 1)).tolist())}
        values = np.array(params["size"])
    elif kind == "sphere":
        params = {"radius": _number(rd, shape, "radius", gowner, 1.0)}
        values = np.array([params["radius"]])
    elif kind in ("cylinder", "capsule"):
        params = {"radius": _number(rd, shape, "radius", gowner, 1.0 if kind == "cylinder" else 0.5),
                  "length": _number(rd, shape, "length", gowner, 1.0)}
        values = np.array([params["radius"], params["length"]])
    elif kind == "ellipsoid":
        params = {"radii": tuple(_vector(rd, shape, "radii", gowner, 3, (1, 1, 1)).tolist())}
        values = np.array(params["radii"])
    elif kind == "plane":
        n = _vector(rd, shape, "normal", gowner, 3, (0, 0, 1))
        big = float(np.abs(n).max())
        if big == 0:
            raise rd.error(shape, gowner, "<plane> normal is the zero vector")
        params = {"normal": n / big / np.linalg.norm(n / big)}
        values = np.ones(1)
    else:  # mesh
        uri = _child_text(rd, shape, "uri", gowner)
        if not uri:
            raise rd.error(shape, gowner, "<mesh> has no <uri>")
        scale = _vector(rd, shape, "scale", gowner, 3, (1, 1, 1))
        if np.any(scale == 0):
            raise rd.error(shape, gowner, f"<mesh> scale {scale.tolist()} has a zero entry")
        for c in shape.children:
            if c.tag not in ("uri", "scale"):
                notes.ignore(c, gowner, "a mesh option the reader does not use (the mesh is "
                                        "kept as a file reference)")
        params = {"filename": resolve_filename(uri, shape, rd, gowner, package_map, base_dir),
                  "scale": tuple(scale.tolist())}
        values = np.ones(1)
    if np.any(values <= 0):
        raise rd.error(shape, gowner, f"<{shape.tag}> dimensions must be positive, got {params}")
    if np.any(values > 1e150):
        raise rd.error(shape, gowner, f"<{shape.tag}> dimensions {params} exceed 1e150 m")
    g = SdfGeometry(kind, params, pose, gname, node.line)
    if node.tag == "visual":
        m = rd.child(node, "material", gowner)
        if m is not None:
            d = rd.child(m, "diffuse", gowner) or rd.child(m, "ambient", gowner)
            rgba = None if d is None else rd.numbers(d, d.text, f"<{d.tag}>", gowner, sizes=(3, 4))
            if rgba is not None:
                rgba = np.clip(np.append(rgba, 1.0) if rgba.size == 3 else rgba, 0.0, 1.0)
            g.material = {"name": None, "rgba": None if rgba is None else tuple(rgba.tolist()),
                          "texture": None}
    else:
        g.mu = _read_friction(node, rd, notes, gowner)
    return g


def _read_friction(node, rd, notes, owner) -> float | None:
    mu = None
    surface = rd.child(node, "surface", owner)
    if surface is not None:
        fr = rd.child(surface, "friction", owner)
        ode = None if fr is None else rd.child(fr, "ode", owner)
        if ode is not None and rd.child(ode, "mu", owner) is not None:
            mu = _number(rd, ode, "mu", owner, nonneg=True)
    props = rd.child(node, "drake:proximity_properties", owner)
    if props is not None:
        for c in props.children:
            if c.tag == "drake:mu_dynamic":
                mu = _number(rd, props, "drake:mu_dynamic", owner, nonneg=True)
            elif c.tag != "drake:mu_static":
                notes.ignore(c, owner, "a Drake contact property with no counterpart here")
    return mu


# -- joints --------------------------------------------------------------------------------
def _unit(rd: Reader, node: XmlNode, owner: str, v: np.ndarray) -> np.ndarray:
    big = float(np.abs(v).max())
    if big == 0:
        raise rd.error(node, owner, "joint axis is the zero vector")
    u = v / big
    return u / np.linalg.norm(u)


def _read_axis(axis: XmlNode, rd: Reader, notes: Notes, graph: FrameGraph, X_WJ: np.ndarray,
               owner: str, j: SdfJoint, first: bool) -> np.ndarray:
    notes.others(axis, owner, {"xyz", "limit", "dynamics", "use_parent_model_frame",
                               "initial_position"})
    xnode = rd.child(axis, "xyz", owner)
    v = np.array([0.0, 0.0, 1.0]) if xnode is None else \
        rd.numbers(xnode, xnode.text, "<xyz>", owner, sizes=(3,))
    v = _unit(rd, xnode or axis, owner, v)
    frame = None if xnode is None else (xnode.attrib.get("expressed_in") or None)
    if _bool(rd, axis, "use_parent_model_frame", owner):
        if frame is not None:
            raise rd.error(xnode, owner, "both expressed_in and use_parent_model_frame")
        frame = MODEL_FRAME
    if frame is not None:
        R = X_WJ[:3, :3].T @ graph.world_pose(frame, xnode or axis, owner, "expressed_in")[:3, :3]
        v = R @ v
    lim = rd.child(axis, "limit", owner)
    if lim is not None and first:
        notes.others(lim, owner, {"lower", "upper", "effort", "velocity", "stiffness",
                                  "dissipation", "drake:acceleration"})
        lo, up = _number(rd, lim, "lower", owner, -_UNLIMITED), _number(rd, lim, "upper", owner, _UNLIMITED)
        j.lower = None if lo <= -_UNLIMITED else lo
        j.upper = None if up >= _UNLIMITED else up
        if lo > up:
            raise rd.error(lim, owner, f"lower limit {lo:g} > upper limit {up:g}")
        eff, vel = _number(rd, lim, "effort", owner, -1.0), _number(rd, lim, "velocity", owner, -1.0)
        j.effort = None if eff < 0 else eff          # SDFormat: negative means unlimited
        j.velocity = None if vel < 0 else vel
    dyn = rd.child(axis, "dynamics", owner)
    if dyn is not None and first:
        notes.others(dyn, owner, {"damping", "friction", "spring_reference", "spring_stiffness"})
        j.damping = _number(rd, dyn, "damping", owner, 0.0, nonneg=True)
        j.friction = _number(rd, dyn, "friction", owner, 0.0, nonneg=True)
        j.stiffness = _number(rd, dyn, "spring_stiffness", owner, 0.0, nonneg=True)
        j.reference = _number(rd, dyn, "spring_reference", owner, 0.0)
    return v


_JOINT_KNOWN = {"parent", "child", "pose", "axis", "axis2", "screw_thread_pitch", "thread_pitch",
                "drake:rotor_inertia", "drake:gear_ratio"}


def _read_joint(node: XmlNode, rd: Reader, notes: Notes, graph: FrameGraph) -> SdfJoint:
    name = node.attrib["name"]
    owner = _owner("joint", name)
    jtype = rd.text(node, "type", owner)
    if jtype in _REFUSED_JOINTS:
        raise rd.error(node, owner, f"joint type '{jtype}' is not supported (model it as "
                                    f"{_REFUSED_JOINTS[jtype]})")
    if jtype not in JOINT_TYPES:
        raise rd.error(node, owner, f"unknown joint type '{jtype}' (expected one of "
                                    f"{', '.join(JOINT_TYPES)})")
    notes.others(node, owner, _JOINT_KNOWN)
    return _joint_common(node, rd, notes, graph, name, jtype, "parent", "child", "pose")


def _joint_common(node, rd, notes, graph, name, jtype, ptag, ctag, posetag) -> SdfJoint:
    owner = _owner("joint", name)
    parent_name = _child_text(rd, node, ptag, owner)
    child_name = _child_text(rd, node, ctag, owner)
    if not parent_name or not child_name:
        raise rd.error(node, owner, f"<{node.tag}> needs non-empty <{ptag}> and <{ctag}>")
    pnode = rd.child(node, ptag, owner)
    cnode = rd.child(node, ctag, owner)
    parent = graph.body_of(parent_name, pnode, owner, "parent")
    child = graph.body_of(child_name, cnode, owner, "child")
    if child == WORLD:
        raise rd.error(cnode, owner, "the world cannot be the child of a joint")
    if child == parent:
        raise rd.error(node, owner, f"parent and child are the same link '{child}'")
    if name in graph.entries:
        X_WJ = graph.world_pose(name, node, owner)
    else:   # drake:joint: not a frame of the model
        X, rel = read_pose(rd.child(node, posetag, owner), rd, owner)
        X_WJ = graph.relative_pose(X, rel, child_name, node, owner)
    j = SdfJoint(name, jtype, node.line, parent, child, X_WJ, np.array([0.0, 0.0, 1.0]))
    axis = rd.child(node, "axis", owner)
    if axis is not None:
        j.axis = _read_axis(axis, rd, notes, graph, X_WJ, owner, j, True)
    elif jtype in ("revolute", "continuous", "prismatic", "screw", "universal"):
        raise rd.error(node, owner, f"a {jtype} joint needs an <axis>")
    if jtype == "universal":
        a2 = rd.child(node, "axis2", owner)
        if a2 is None:
            raise rd.error(node, owner, "a universal joint needs <axis2>")
        j.axis2 = _read_axis(a2, rd, notes, graph, X_WJ, owner, j, False)
        if abs(float(j.axis @ j.axis2)) > 1 - 1e-9:
            raise rd.error(a2, owner, "axis and axis2 of a universal joint are parallel")
    if jtype == "continuous":
        j.lower = j.upper = None
    if jtype == "fixed":
        j.damping = j.friction = j.stiffness = 0.0
        j.lower = j.upper = j.effort = j.velocity = None
    if jtype == "screw":
        j.pitch = _screw_pitch(node, rd, owner)
    gear = rd.child(node, "drake:gear_ratio", owner)
    rotor = rd.child(node, "drake:rotor_inertia", owner)
    if rotor is not None:
        J = _number(rd, node, "drake:rotor_inertia", owner, nonneg=True)
        N = _number(rd, node, "drake:gear_ratio", owner, 1.0)
        if j.effort != 0.0:           # Drake: only actuated joints (effort limit != 0)
            j.armature = N * N * J
    elif gear is not None:
        _number(rd, node, "drake:gear_ratio", owner, 1.0)
    return j


def _screw_pitch(node, rd, owner) -> float:
    """Metres per radian: ``screw_thread_pitch`` (1.10+, metres per revolution, right-handed
    positive) or the deprecated ``thread_pitch`` (radians per metre, left-handed positive)."""
    if rd.child(node, "screw_thread_pitch", owner) is not None:
        return _number(rd, node, "screw_thread_pitch", owner) / (2.0 * np.pi)
    if rd.child(node, "thread_pitch", owner) is not None:
        t = _number(rd, node, "thread_pitch", owner)
        if t == 0:
            raise rd.error(rd.child(node, "thread_pitch", owner), owner,
                           "thread_pitch 0 rad/m is an infinite pitch")
        return -1.0 / t
    return 1.0 / (2.0 * np.pi)     # SDFormat's default screw_thread_pitch: 1 m per revolution


def _read_drake_joint(node: XmlNode, rd: Reader, notes: Notes, graph: FrameGraph) -> SdfJoint:
    """``<drake:joint name type>`` with ``<drake:parent>``, ``<drake:child>``, ``<pose>``;
    the types that map onto ours (Drake's planar is refused: its coordinates differ)."""
    name = rd.text(node, "name", "drake:joint")
    owner = _owner("joint", name)
    jtype = rd.text(node, "type", owner)
    if jtype not in JOINT_TYPES:
        raise rd.error(node, owner, f"drake:joint type '{jtype}' is not supported (expected one "
                                    f"of {', '.join(JOINT_TYPES)})")
    if name in graph.entries:
        raise rd.error(node, owner, "name already used by a link, joint or frame")
    notes.others(node, owner, {"drake:parent", "drake:child", "pose", "axis", "axis2",
                               "drake:rotor_inertia", "drake:gear_ratio", "screw_thread_pitch"})
    return _joint_common(node, rd, notes, graph, name, jtype, "drake:parent", "drake:child", "pose")

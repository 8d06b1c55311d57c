"""MJCF body tree -> :class:`~multibody.tree.RigidBodyTree` (private; see :mod:`.mjcf`).

The walk goes depth first through ``<worldbody>``, adding each body, its joints (a chain
through massless links when a body has several), mass properties, geoms and sites, with
every error turned into an :class:`MJCFError` at the element's file and line.

Frames. MuJoCo moves a body with joints ``i = 1..n`` (positions ``p_i`` and axes in the
body frame) as ``T_body = T_0 J_1(q_1) ... J_n(q_n)``, ``J_i = Tr(p_i) X_i(q_i - ref_i)
Tr(-p_i)``. Here the link after joint ``i`` has its frame at ``p_i``: joint ``i``'s origin
is ``Tr(p_i - p_{i-1}) X_i(-ref_i)`` in the previous link (``T_0 Tr(p_1) X_1(-ref_1)`` for
the first); the last link is the body itself when ``p_n = 0``, else a massless link welded
to the body by ``Tr(-p_n)`` (joint ``<body>_weld``), so every body frame, geom and site is
where MuJoCo puts it. A free joint puts the body frame at its coordinates in the world
(``qpos0`` = the body's pose in the file).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._mjcf_doc import ACTUATOR_TAGS, Compiler, Defaults, Document
from ._mjcf_geom import (GeomData, combine, frame_pose, geom_mass_properties, orientation,
                         partial_vector, read_geom, read_solver_params)
from ._xml import XmlNode

__all__ = ["ActuatorSpec", "Options", "BuildResult", "build_tree", "read_options",
           "read_actuators", "read_excludes"]

_QUIET_BODY = {"camera", "light", "inertial", "joint", "freejoint", "geom", "site", "body",
               "frame"}
_QUIET_TOP = {"compiler", "option", "size", "visual", "statistic", "asset", "default",
              "worldbody", "actuator", "contact", "extension", "custom"}


@dataclass
class Options:
    """``<option>``: ``timestep`` (s), ``gravity`` (3,) (m/s^2), ``integrator``, ``cone``,
    ``noslip_iterations``, ``impratio``, ``o_solref``/``o_solimp`` (contacts' values when
    the ``override`` flag is enabled) and the disabled and enabled ``flags``."""

    timestep: float = 0.002
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    integrator: str = "Euler"
    cone: str = "pyramidal"
    noslip_iterations: int = 0
    disabled: tuple = ()
    enabled: tuple = ()
    impratio: float = 1.0
    o_solref: np.ndarray = field(default_factory=lambda: np.array([0.02, 1.0]))
    o_solimp: np.ndarray = field(default_factory=lambda: np.array([0.9, 0.95, 0.001, 0.5, 2.0]))


@dataclass
class ActuatorSpec:
    """One MuJoCo actuator on a joint: ``force = gain ctrl + bias[0] + bias[1] gear q +
    bias[2] gear qdot`` (clamped to ``forcerange`` when limited), joint force ``gear force``;
    ``ctrl`` clamped to ``ctrlrange`` when limited (None otherwise)."""

    name: str
    kind: str
    joint: str
    gear: float
    gain: float
    bias: np.ndarray
    ctrlrange: tuple | None
    forcerange: tuple | None
    line: int


@dataclass
class BuildResult:
    """What the walk produces besides the tree."""

    tree: object
    qpos0: list                       # per joint (our name, q0 (nq,))
    geoms: list                       # (our body name, GeomData, instance name)
    body_of: dict                     # MuJoCo body name -> our body name
    weld_root: dict                   # our body name (MuJoCo bodies) -> weld group body
    weld_parent: dict                 # our body name -> weld group of the parent body
    joint_solver: dict                # joint -> (solreflimit, solimplimit), None if not given


class _Walk:
    def __init__(self, doc: Document, comp: Compiler, defaults: Defaults, tree):
        self.doc, self.comp, self.defaults, self.tree = doc, comp, defaults, tree
        self.qpos0: list = []
        self.geoms: list = []
        self.body_of: dict = {"world": "world"}
        self.weld_root: dict = {"world": "world"}
        self.weld_parent: dict = {"world": "world"}
        self.joint_solver: dict = {}
        self.joint_names: dict = {}
        self.geom_names: set = set()
        self.frame_names: set = set()
        self.count = 0
        self.meshes = _mesh_files(doc)
        self.declared = {n.attrib["name"] for n in doc.root.iter()
                         if n.tag == "body" and "name" in n.attrib}

    # ---------------------------------------------------------------- helpers
    def err(self, node, owner, msg):
        return self.doc.error(node, owner, msg)

    def unique(self, base: str, taken) -> str:
        name, k = base, 0
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        return name

    def taken_body_names(self):
        return set(self.body_of.values()) | self.frame_names | self.declared

    # ---------------------------------------------------------------- walk
    def run(self):
        worlds = self.doc.root.findall("worldbody")
        items = []
        for w in worlds:
            items.extend(self.flatten(w, np.eye(4), "main"))
        self.contents("world", "world", items, static=True)

    def flatten(self, node: XmlNode, T: np.ndarray, active: str) -> list:
        """Children of a body (or worldbody), with ``<frame>`` elements dissolved: a list
        of ``(child, pose prefix (4x4), active class)``."""
        out = []
        stack = [(c, T, active) for c in reversed(node.children)]
        while stack:
            child, Tc, act = stack.pop()
            if child.tag == "frame":
                own = "frame"
                if "childclass" in child.attrib:
                    act = self.defaults.check_class(child, child.attrib["childclass"], own)
                rs = self.defaults.resolve(child, act, own)
                Tf = Tc @ frame_pose(self.doc, rs, self.comp, own)
                stack.extend((c, Tf, act) for c in reversed(child.children))
            else:
                out.append((child, Tc, act))
        return out

    def contents(self, mj_name: str, ours: str, items: list, static: bool) -> None:
        """Add the geoms, sites and child bodies of a body (``items`` from :meth:`flatten`)."""
        stack = []
        for node, T, act in items:
            tag = node.tag
            if tag == "geom":
                self.add_geom(mj_name, ours, node, T, act, static)
            elif tag == "site":
                own = f"site '{node.attrib.get('name', '')}' in body '{mj_name}'"
                rs = self.defaults.resolve(node, act, own)
                name = node.attrib.get("name") or f"{mj_name}_site{len(self.frame_names)}"
                if name in self.taken_body_names():
                    new = self.unique(f"{name}_site", self.taken_body_names())
                    self.doc.warn(node, own, f"site name '{name}' is taken by a body or site "
                                             f"of the tree; the frame is named '{new}'")
                    name = new
                self.frame_names.add(name)
                self.tree.add_frame(name, ours, T @ frame_pose(self.doc, rs, self.comp, own))
            elif tag == "body":
                stack.append((node, T, act))
            elif tag in ("joint", "freejoint", "inertial"):
                if ours == "world":
                    raise self.err(node, "worldbody", f"<{tag}> is not allowed in the world body")
            elif tag not in _QUIET_BODY:
                self.doc.warn_once(f"body/{tag}", node, f"body '{mj_name}'",
                                   f"<{tag}> is not supported and is ignored")
        for node, T, act in stack:
            self.body(node, ours, T, act, static)

    # ---------------------------------------------------------------- bodies
    def body(self, node: XmlNode, parent: str, T_parent: np.ndarray, active: str,
             parent_static: bool) -> None:
        from ..tree import joints as J

        self.count += 1
        mj_name = node.attrib.get("name") or f"body{self.count}"
        own = f"body '{mj_name}'"
        if mj_name in self.body_of or mj_name in self.frame_names:
            raise self.err(node, own, "duplicate body name")
        if "childclass" in node.attrib:
            active = self.defaults.check_class(node, node.attrib["childclass"], own)
        T0 = T_parent @ frame_pose(self.doc, node, self.comp, own)
        items = self.flatten(node, np.eye(4), active)
        jnodes = [(n, a) for n, T, a in items if n.tag in ("joint", "freejoint")]
        for n, T, a in items:
            if n.tag in ("joint", "freejoint") and not np.allclose(T, np.eye(4)):
                raise self.err(n, own, "a joint inside a <frame> is not supported")
        specs = [self.joint_spec(n, a, mj_name) for n, a in jnodes]
        if node.attrib.get("gravcomp") not in (None, "0"):
            self.doc.warn_once("gravcomp", node, own, "gravcomp is not supported and is ignored")
        tree = self.tree
        free = any(s["type"] == "free" for s in specs)
        p_last = specs[-1]["pos"] if specs and not free else np.zeros(3)
        offset = bool(np.any(p_last != 0))      # the last joint is off the body origin
        m, c, I = self.mass(node, mj_name, items)
        try:
            tree.add_body(mj_name, m, com=c, inertia=I)
        except (ValueError, TypeError) as exc:
            raise self.err(node, own, str(exc)) from None
        if free:
            if len(specs) > 1:
                raise self.err(node, own, "a free joint must be the body's only joint")
            if parent != "world":
                raise self.err(node, own, "a free joint is only allowed in a child of the "
                                          "world body")
            s = specs[0]
            self.add_joint(J.Free(s["name"], "world", mj_name, damping=s["damping"],
                                  armature=s["armature"], friction=s["friction"]), s)
            q0 = _matrix_to_quat(T0[:3, :3])
            self.qpos0.append((s["name"], np.concatenate([q0, T0[:3, 3]])))
        else:
            prev, origin_prefix, p_prev = parent, T0, np.zeros(3)
            for k, s in enumerate(specs):
                last = k == len(specs) - 1 and not offset
                child = mj_name if last else self.unique(f"{mj_name}_{s['name']}_link",
                                                         self.taken_body_names() | {mj_name})
                if not last:
                    tree.add_body(child, 0.0)
                    self.body_of[f"\0{child}"] = child   # keeps the name taken
                O = origin_prefix.copy()
                O[:3, 3] += O[:3, :3] @ (s["pos"] - p_prev)
                O = O @ s["ref_pose"]
                self.add_joint(self.make_joint(J, s, prev, child, O), s)
                prev, origin_prefix, p_prev = child, np.eye(4), s["pos"]
            if not specs or offset:     # offset: back from the last joint to the body frame
                if offset:
                    T0 = np.eye(4)
                    T0[:3, 3] = -p_last
                wname = self.unique(f"{mj_name}_weld", self.joint_names)
                self.joint_names[wname] = node.line
                tree.add_joint(J.Weld(wname, prev, mj_name, origin=T0))
        self.body_of[mj_name] = mj_name
        static = parent_static and not specs
        self.weld_root[mj_name] = self.weld_root[parent] if not specs else mj_name
        self.weld_parent[mj_name] = self.weld_root[parent]
        self.contents(mj_name, mj_name, items, static)

    def joint_spec(self, node: XmlNode, active: str, body: str) -> dict:
        rd, comp = self.doc.rd(node), self.comp
        own0 = f"joint '{node.attrib.get('name', '')}' in body '{body}'"
        r = self.defaults.resolve(node, active, own0)
        jtype = "free" if node.tag == "freejoint" else r.attrib.get("type", "hinge")
        if jtype not in ("free", "ball", "slide", "hinge"):
            raise self.err(node, own0, f"unknown joint type '{jtype}' (expected free, ball, "
                                       "slide or hinge)")
        name = node.attrib.get("name") or self.unique(f"{body}_joint", self.joint_names)
        own = f"joint '{name}'"
        if name in self.joint_names:
            raise self.err(node, own, f"duplicate joint name (first at line "
                                      f"{self.joint_names[name]})")
        self.joint_names[name] = node.line
        num = lambda a, d: rd.number(r, a, own, d)  # noqa: E731
        s = {"name": name, "type": jtype, "line": node.line, "node": node,
             "pos": rd.vector(r, "pos", own, 3, (0, 0, 0)),
             "damping": num("damping", 0.0), "friction": num("frictionloss", 0.0),
             "armature": num("armature", 0.0), "stiffness": num("stiffness", 0.0),
             "ref": num("ref", 0.0), "springref": num("springref", 0.0),
             "solver": read_solver_params(self.doc, r, own0, "limit")}
        for k in ("damping", "friction", "armature", "stiffness"):
            if s[k] < 0:
                raise self.err(node, own, f"negative {k} {s[k]:g}")
        if np.any(np.abs(s["pos"]) > 1e100):
            raise self.err(node, own, f"pos {s['pos'].tolist()} is too large")
        angular = jtype == "hinge"
        if angular:
            s["ref"], s["springref"] = comp.angle(s["ref"]), comp.angle(s["springref"])
        s["axis"] = np.array([0.0, 0.0, 1.0])
        s["ref_pose"] = np.eye(4)
        if jtype in ("hinge", "slide"):
            ax = rd.vector(r, "axis", own, 3, (0, 0, 1))
            big = float(np.abs(ax).max())
            if not big > 1e-14:
                raise self.err(node, own, "joint axis is the zero vector")
            ax = ax / big
            s["axis"] = ax / np.linalg.norm(ax)
            if s["ref"]:
                from ._mjcf_geom import quat_to_matrix
                if angular:
                    h = -0.5 * s["ref"]
                    s["ref_pose"][:3, :3] = quat_to_matrix(
                        np.concatenate([[np.cos(h)], np.sin(h) * s["axis"]]))
                else:
                    s["ref_pose"][:3, 3] = -s["ref"] * s["axis"]
        limited = r.attrib.get("limited", "auto")
        if limited not in ("auto", "true", "false"):
            raise self.err(node, own, f"limited=\"{limited}\" must be auto, true or false")
        rng = partial_vector(self.doc, r, "range", own, 2, (0.0, 0.0))
        if limited == "auto":
            if not comp.autolimits and "range" in r.attrib:
                raise self.err(node, own, "range given with limited=\"auto\" while the compiler "
                                          "has autolimits=\"false\": set limited")
            limited = "true" if comp.autolimits and (rng[0] != 0 or rng[1] != 0) else "false"
        s["lower"] = s["upper"] = None
        if limited == "true":
            if jtype in ("ball", "free"):
                self.doc.warn_once("ball-limit", node, own, f"limits of {jtype} joints are not "
                                                            "supported and are ignored")
            else:
                lo, hi = (comp.angle(rng[0]), comp.angle(rng[1])) if angular else rng
                if lo >= hi:
                    raise self.err(node, own, f"range [{rng[0]:g}, {rng[1]:g}]: the lower limit "
                                              "must be below the upper")
                s["lower"], s["upper"] = float(lo), float(hi)
        if s["stiffness"] and jtype in ("ball", "free"):
            self.doc.warn_once("ball-spring", node, own, f"stiffness of {jtype} joints is not "
                                                         "supported and is ignored")
            s["stiffness"] = 0.0
        for attr in ("springdamper", "actuatorfrcrange", "actuatorgravcomp"):
            if attr in r.attrib:
                self.doc.warn_once(f"joint/{attr}", node, own, f"joint attribute {attr} is not "
                                                               "supported and is ignored")
        return s

    def make_joint(self, J, s: dict, parent: str, child: str, origin: np.ndarray):
        common = dict(origin=origin, damping=s["damping"], friction=s["friction"],
                      armature=s["armature"])
        if s["type"] == "ball":
            return J.Ball(s["name"], parent, child, **common)
        cls = J.Revolute if s["type"] == "hinge" else J.Prismatic
        return cls(s["name"], parent, child, axis=s["axis"], lower=s["lower"], upper=s["upper"],
                   stiffness=s["stiffness"], rest_position=s["springref"], **common)

    def add_joint(self, joint, s: dict) -> None:
        try:
            self.tree.add_joint(joint)
        except (ValueError, TypeError) as exc:
            raise self.err(s["node"], f"joint '{s['name']}'", str(exc)) from None
        self.joint_solver[s["name"]] = s["solver"]
        q0 = joint.neutral_configuration()
        if s["type"] in ("hinge", "slide"):
            q0 = np.array([s["ref"]])
        if s["type"] != "free":
            self.qpos0.append((s["name"], q0))

    # ---------------------------------------------------------------- mass
    def mass(self, node: XmlNode, name: str, items: list):
        """``(mass, com (3,), inertia about the com (3, 3))`` in the MuJoCo body frame."""
        own = f"body '{name}'"
        inertial = [n for n, T, a in items if n.tag == "inertial"]
        if len(inertial) > 1:
            raise self.err(inertial[1], own, "more than one <inertial>")
        mode = self.comp.inertiafromgeom
        from_geoms = mode == "true" or (mode == "auto" and not inertial)
        if from_geoms:
            parts = []
            lo, hi = self.comp.inertiagrouprange
            for n, T, a in items:
                if n.tag != "geom":
                    continue
                g = self.read_geom(n, T, a, name)
                if not lo <= g.group <= hi or g.kind in ("plane", "hfield", "sdf"):
                    continue
                if g.kind == "mesh":
                    raise self.err(n, own, f"the inertia of mesh geom '{g.name}' needs the mesh, "
                                           "which is not read: give the body an <inertial> "
                                           "(or compiler inertiafromgeom=\"false\")")
                m, Ip = geom_mass_properties(g)
                R = g.pose[:3, :3]
                parts.append((m, g.pose[:3, 3], R @ np.diag(Ip) @ R.T))
            m, c, I = combine(parts)
        elif inertial:
            m, c, I = self.read_inertial(inertial[0], own)
        else:
            m, c, I = 0.0, np.zeros(3), np.zeros((3, 3))
        return m, c, I

    def read_inertial(self, n: XmlNode, own: str):
        rd = self.doc.rd(n)
        m = rd.number(n, "mass", own)
        if m < 0:
            raise self.err(n, own, f"negative mass {m:g}")
        c = rd.vector(n, "pos", own, 3)
        if "fullinertia" in n.attrib:
            if any(a in n.attrib for a in ("quat", "axisangle", "euler", "xyaxes", "zaxis")):
                raise self.err(n, own, "fullinertia cannot be combined with an orientation")
            if "diaginertia" in n.attrib:
                raise self.err(n, own, "give diaginertia or fullinertia, not both")
            f = rd.vector(n, "fullinertia", own, 6)
            I = np.array([[f[0], f[3], f[4]], [f[3], f[1], f[5]], [f[4], f[5], f[2]]])
        else:
            d = rd.vector(n, "diaginertia", own, 3)
            R = orientation(self.doc, n, self.comp, own)
            I = R @ np.diag(d) @ R.T
        if np.any(np.abs(I) > 1e200) or abs(m) > 1e200 or np.any(np.abs(c) > 1e100):
            raise self.err(n, own, "mass, pos or inertia too large for double precision")
        return m, c, 0.5 * (I + I.T)

    # ---------------------------------------------------------------- geoms
    def read_geom(self, node: XmlNode, T: np.ndarray, active: str, body: str) -> GeomData:
        own = f"geom '{node.attrib.get('name', '')}' in body '{body}'"
        r = self.defaults.resolve(node, active, own)
        name = node.attrib.get("name") or f"{body}_geom"
        g = read_geom(self.doc, r, self.comp, name, own)
        g.pose = T @ g.pose
        return g

    def add_geom(self, mj_body: str, ours: str, node: XmlNode, T: np.ndarray, active: str,
                 static: bool) -> None:
        from .. import geometry as G

        g = self.read_geom(node, T, active, mj_body)
        own = f"geom '{g.name}' in body '{mj_body}'"
        g.name = self.unique(g.name, self.geom_names)
        self.geom_names.add(g.name)
        s = g.size
        if g.kind == "plane":
            if not static:
                raise self.err(node, own, "a plane is only allowed in the world body and bodies "
                                          "welded to it (as in MuJoCo)")
            shape = G.Halfspace()
        elif g.kind == "sphere":
            shape = G.Sphere(s[0])
        elif g.kind == "capsule":
            shape = G.Capsule(s[0], 2 * s[1])
        elif g.kind == "cylinder":
            shape = G.Cylinder(s[0], 2 * s[1])
        elif g.kind == "box":
            shape = G.Box(tuple(2 * s))
        elif g.kind == "ellipsoid":
            shape = G.Ellipsoid(tuple(s))
        elif g.kind == "mesh":
            self.doc.warn_once("geom/mesh", node, own, "mesh geoms are kept as visual geometry "
                                                       "only (not collidable)")
            f = self.meshes.get(g.mesh or "", g.mesh or g.name)
            self.tree.add_visual_geometry(ours, G.Mesh(f), pose=g.pose, name=g.name,
                                          material={"rgba": g.rgba} if g.rgba else None)
            return
        else:
            self.doc.warn_once(f"geom/{g.kind}", node, own, f"{g.kind} geoms are not supported "
                                                            "and are ignored")
            return
        material = {"rgba": g.rgba} if g.rgba else None
        self.tree.add_visual_geometry(ours, shape, pose=g.pose, name=g.name, material=material)
        if g.contype or g.conaffinity:
            self.tree.add_collision_geometry(ours, shape, pose=g.pose, name=g.name)
            self.geoms.append((ours, g, g.name))


def _mesh_files(doc: Document) -> dict:
    out = {}
    for asset in doc.root.findall("asset"):
        for m in asset.findall("mesh"):
            f = m.attrib.get("file")
            if f is not None:
                out[m.attrib.get("name") or f.rsplit("/", 1)[-1].rsplit(".", 1)[0]] = f
    return out


def _matrix_to_quat(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z), w >= 0, of a rotation matrix (Shepperd's method)."""
    t = np.trace(R)
    if t > 0:
        s = 2.0 * np.sqrt(1.0 + t)
        q = np.array([0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s,
                      (R[1, 0] - R[0, 1]) / s])
    else:
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * np.sqrt(max(1.0 + R[i, i] - R[j, j] - R[k, k], 1e-300))
        q = np.zeros(4)
        q[0] = (R[k, j] - R[j, k]) / s
        q[i + 1] = 0.25 * s
        q[j + 1] = (R[j, i] + R[i, j]) / s
        q[k + 1] = (R[k, i] + R[i, k]) / s
    q = q / np.linalg.norm(q)
    return q if q[0] >= 0 else -q


def build_tree(doc: Document, comp: Compiler, defaults: Defaults, name: str) -> BuildResult:
    """Walk ``<worldbody>`` and build the tree (module docstring)."""
    from ..tree import RigidBodyTree

    tree = RigidBodyTree(name=name)
    w = _Walk(doc, comp, defaults, tree)
    w.run()
    bodies = {k: v for k, v in w.body_of.items() if not k.startswith("\0")}
    if comp.settotalmass > 0:
        total = sum(tree.get_body(b).mass for b in w.body_of.values())
        if total <= 0:
            raise doc.error(None, "compiler", "settotalmass on a model without mass")
        for b in w.body_of.values():
            body = tree.get_body(b)
            body.mass *= comp.settotalmass / total
            body.inertia = body.inertia * (comp.settotalmass / total)
    if comp.boundmass > 0 or comp.boundinertia > 0:
        doc.warn_once("bound", None, "compiler", "boundmass and boundinertia are ignored")
    return BuildResult(tree, w.qpos0, w.geoms, bodies, w.weld_root, w.weld_parent,
                       w.joint_solver)


def read_options(doc: Document) -> Options:
    """Merge the ``<option>`` elements."""
    o = Options()
    for node in doc.root.findall("option"):
        rd, own = doc.rd(node), "option"
        o.timestep = rd.number(node, "timestep", own, o.timestep)
        if not o.timestep > 0:
            raise doc.error(node, own, f"timestep {o.timestep:g} must be > 0")
        o.gravity = rd.vector(node, "gravity", own, 3, o.gravity)
        o.integrator = node.attrib.get("integrator", o.integrator)
        o.cone = node.attrib.get("cone", o.cone)
        o.noslip_iterations = int(rd.number(node, "noslip_iterations", own, o.noslip_iterations))
        o.impratio = rd.number(node, "impratio", own, o.impratio)
        o.o_solref = rd.vector(node, "o_solref", own, 2, o.o_solref)
        o.o_solimp = partial_vector(doc, node, "o_solimp", own, 5, o.o_solimp)
        if not o.impratio > 0:
            raise doc.error(node, own, f"impratio {o.impratio:g} must be > 0")
        for attr in ("density", "viscosity"):
            if rd.number(node, attr, own, 0.0) != 0.0:
                doc.warn_once(f"option/{attr}", node, own, f"{attr} (fluid forces) is not "
                                                           "modelled and is ignored")
        for flag in node.findall("flag"):
            o.disabled += tuple(k for k, v in flag.attrib.items() if v == "disable")
            o.enabled += tuple(k for k, v in flag.attrib.items() if v == "enable")
    return o


def read_actuators(doc: Document, comp: Compiler, defaults: Defaults,
                   joints: set) -> list[ActuatorSpec]:
    """The joint actuators of ``<actuator>`` (others are ignored with a warning)."""
    out = []
    for sec in doc.root.findall("actuator"):
        for node in sec.children:
            own = f"actuator '{node.attrib.get('name', '')}'"
            if node.tag not in ACTUATOR_TAGS:
                doc.warn_once(f"actuator/{node.tag}", node, own, f"<{node.tag}> is not an "
                                                                 "actuator; ignored")
                continue
            r = defaults.resolve(node, "main", own)
            rd = doc.rd(r)
            a = r.attrib
            if node.tag not in ("motor", "position", "velocity", "general"):
                doc.warn_once(f"actuator/{node.tag}", node, own, f"<{node.tag}> actuators are "
                                                                 "not supported; ignored")
                continue
            if "joint" not in a:
                doc.warn_once("actuator/transmission", node, own, "only joint transmissions "
                              "are supported; actuators on tendons, sites or bodies are ignored")
                continue
            if a["joint"] not in joints:
                raise doc.error(node, own, f"unknown joint '{a['joint']}'")
            gear = partial_vector(doc, r, "gear", own, 6, (1, 0, 0, 0, 0, 0))
            if node.tag == "motor":
                gain, bias = 1.0, np.zeros(3)
            elif node.tag == "position":
                kp, kv = rd.number(r, "kp", own, 1.0), rd.number(r, "kv", own, 0.0)
                gain, bias = kp, np.array([0.0, -kp, -kv])
            elif node.tag == "velocity":
                kv = rd.number(r, "kv", own, 1.0)
                gain, bias = kv, np.array([0.0, 0.0, -kv])
            else:
                if a.get("gaintype", "fixed") != "fixed" or a.get("biastype", "none") not in (
                        "none", "affine") or a.get("dyntype", "none") != "none":
                    doc.warn_once("actuator/general", node, own, "general actuators need "
                                  "gaintype=\"fixed\", biastype none or affine and no dynamics; "
                                  "others are ignored")
                    continue
                gain = float(partial_vector(doc, r, "gainprm", own, 10, [1] + [0] * 9)[0])
                bias = partial_vector(doc, r, "biasprm", own, 10, [0] * 10)[:3]
                if a.get("biastype", "none") == "none":
                    bias = np.zeros(3)
            out.append(ActuatorSpec(node.attrib.get("name") or f"actuator{len(out)}", node.tag,
                                    a["joint"], float(gear[0]), float(gain), bias,
                                    _limited_range(doc, r, "ctrl", comp, own),
                                    _limited_range(doc, r, "force", comp, own), node.line))
    return out


def _limited_range(doc, r, what, comp, own):
    lim = r.attrib.get(f"{what}limited", "auto")
    rng = partial_vector(doc, r, f"{what}range", own, 2, (0.0, 0.0))
    on = lim == "true" or (lim == "auto" and comp.autolimits and (rng[0] != 0 or rng[1] != 0))
    if not on:
        return None
    if rng[0] > rng[1]:
        raise doc.error(r, own, f"{what}range [{rng[0]:g}, {rng[1]:g}] is reversed")
    return (float(rng[0]), float(rng[1]))


def read_excludes(doc: Document, body_of: dict) -> list[tuple[str, str]]:
    """``<contact><exclude body1 body2>`` pairs (our body names); ``<pair>`` warns."""
    out = []
    for sec in doc.root.findall("contact"):
        for node in sec.children:
            if node.tag == "exclude":
                pair = []
                for k in ("body1", "body2"):
                    b = doc.rd(node).text(node, k, "contact exclude")
                    if b not in body_of:
                        raise doc.error(node, "contact exclude", f"unknown body '{b}'")
                    pair.append(body_of[b])
                out.append((pair[0], pair[1]))
            else:
                doc.warn_once(f"contact/{node.tag}", node, "contact", f"<contact><{node.tag}> is "
                              "not supported and is ignored")
    for node in doc.root.children:
        if node.tag not in _QUIET_TOP:
            doc.warn_once(f"top/{node.tag}", node, "mujoco", f"<{node.tag}> is not supported "
                                                             "and is ignored")
    return out

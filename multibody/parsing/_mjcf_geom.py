"""MJCF frames, geoms and mass properties (private).

Orientations (MuJoCo XML reference, "Frame orientations"): ``quat`` (w, x, y, z, normalized),
``axisangle`` (axis normalized, angle in the compiler's unit), ``euler`` (three angles about
the axes of ``compiler/eulerseq``: a lowercase letter rotates about the moving axis, an
uppercase one about the fixed axis), ``xyaxes`` (x, then y made orthogonal to x, z = x cross
y) and ``zaxis`` (the shortest rotation taking z to the given direction). At most one may be
given.

Geom mass properties (MuJoCo's compiler, solid bodies of density ``rho``, default 1000, or of
the given ``mass``), principal moments about the centre along the geom axes:

* sphere, radius r: ``V = 4/3 pi r^3``, ``I = 2/5 m r^2``;
* box, half sizes (a, b, c): ``V = 8abc``, ``I_x = m (b^2 + c^2) / 3``;
* cylinder, radius r, half length h (height H = 2h): ``V = pi r^2 H``,
  ``I_z = m r^2 / 2``, ``I_x = m (3 r^2 + H^2) / 12``;
* capsule = that cylinder + two hemispheres of mass ``m_s`` (a sphere's):
  ``I_z = m_c r^2/2 + 2/5 m_s r^2``, ``I_x = m_c (3r^2 + H^2)/12 + m_s (2/5 r^2 + H (3r + 2H)/8)``;
* ellipsoid, semi-axes (a, b, c): ``V = 4/3 pi abc``, ``I_x = m (b^2 + c^2) / 5``.

A body's inertia from its geoms sums them with the parallel-axis theorem (Featherstone 2008,
eq. 2.63).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._mjcf_doc import Compiler, Document
from ._xml import XmlNode

__all__ = ["GeomData", "quat_to_matrix", "orientation", "frame_pose", "read_geom",
           "geom_mass_properties", "combine", "GEOM_TYPES"]

GEOM_TYPES = ("plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh",
              "sdf")
_ORIENTATIONS = ("quat", "axisangle", "euler", "xyaxes", "zaxis")
_MAX_LENGTH = 1e100


def quat_to_matrix(q) -> np.ndarray:
    """Rotation matrix (3, 3) of a unit quaternion ``(w, x, y, z)``."""
    w, x, y, z = (float(a) for a in q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _qmul(a, b) -> np.ndarray:
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def z_to_vector(v: np.ndarray) -> np.ndarray:
    """Rotation (3, 3) taking the z axis to the unit vector along ``v`` by the shortest
    rotation (a half turn about x when ``v`` points along -z), as MuJoCo's compiler does."""
    v = v / np.linalg.norm(v)
    axis = np.cross([0.0, 0.0, 1.0], v)
    s = float(np.linalg.norm(axis))
    axis = axis / s if s >= 1e-10 else np.array([1.0, 0.0, 0.0])
    ang = math.atan2(s, float(v[2]))
    return quat_to_matrix(np.concatenate([[math.cos(ang / 2)], math.sin(ang / 2) * axis]))


def _unit(doc: Document, node: XmlNode, v: np.ndarray, what: str, owner: str) -> np.ndarray:
    big = float(np.abs(v).max())
    if not big > 1e-14:
        raise doc.error(node, owner, f"<{node.tag}> {what} is (nearly) the zero vector")
    v = v / big
    return v / np.linalg.norm(v)


def orientation(doc: Document, node: XmlNode, comp: Compiler, owner: str) -> np.ndarray:
    """The rotation (3, 3) given by ``node``'s orientation attribute (identity if none).

    Raises
    ------
    MJCFError
        Two orientation attributes, a zero quaternion or axis, degenerate axes.
    """
    rd = doc.rd(node)
    given = [a for a in _ORIENTATIONS if a in node.attrib]
    if len(given) > 1:
        raise doc.error(node, owner, f"<{node.tag}> has several orientations ({', '.join(given)}); "
                                     "give one")
    if not given:
        return np.eye(3)
    kind = given[0]
    if kind == "quat":
        q = rd.vector(node, "quat", owner, 4)
        return quat_to_matrix(_unit(doc, node, q, "quat", owner))
    if kind == "axisangle":
        aa = rd.vector(node, "axisangle", owner, 4)
        axis = _unit(doc, node, aa[:3], "axisangle axis", owner)
        ang = comp.angle(aa[3])
        return quat_to_matrix(np.concatenate([[math.cos(ang / 2)], math.sin(ang / 2) * axis]))
    if kind == "zaxis":
        return z_to_vector(_unit(doc, node, rd.vector(node, "zaxis", owner, 3), "zaxis", owner))
    if kind == "xyaxes":
        xy = rd.vector(node, "xyaxes", owner, 6)
        x = _unit(doc, node, xy[:3], "xyaxes x axis", owner)
        y = xy[3:] - x * float(x @ xy[3:])
        y = _unit(doc, node, y, "xyaxes y axis (orthogonalized to x)", owner)
        return np.column_stack([x, y, np.cross(x, y)])
    angles = rd.vector(node, "euler", owner, 3)
    q = np.array([1.0, 0.0, 0.0, 0.0])
    for ch, a in zip(comp.eulerseq, angles):
        a = comp.angle(a)
        r = np.zeros(4)
        r[0] = math.cos(a / 2)
        r["xyz".index(ch.lower()) + 1] = math.sin(a / 2)
        q = _qmul(q, r) if ch.islower() else _qmul(r, q)
    return quat_to_matrix(q)


def frame_pose(doc: Document, node: XmlNode, comp: Compiler, owner: str) -> np.ndarray:
    """4x4 pose from ``pos`` and the orientation attributes of ``node``."""
    T = np.eye(4)
    T[:3, :3] = orientation(doc, node, comp, owner)
    T[:3, 3] = _finite_length(doc, node, doc.rd(node).vector(node, "pos", owner, 3, (0, 0, 0)),
                              "pos", owner)
    return T


def _finite_length(doc, node, v, what, owner):
    if np.any(np.abs(v) > _MAX_LENGTH):
        raise doc.error(node, owner, f"<{node.tag}> {what} {v.tolist()} exceeds {_MAX_LENGTH:g} m")
    return v


def partial_vector(doc: Document, node: XmlNode, attr: str, owner: str, n: int,
                   default) -> np.ndarray:
    """Up to ``n`` numbers; missing trailing entries keep ``default`` (MuJoCo's ``size``)."""
    out = np.array(default, dtype=float)
    raw = node.attrib.get(attr)
    if raw is None:
        return out
    vals = doc.rd(node).numbers(node, raw, f"{attr}", owner, sizes=range(1, n + 1))
    out[:vals.shape[0]] = vals
    return out


@dataclass
class GeomData:
    """A geom read from the document: ``kind``, MuJoCo ``size`` (3,), ``pose`` (4x4 in the
    MuJoCo body frame), contact data and mass properties."""

    name: str
    kind: str
    size: np.ndarray
    pose: np.ndarray
    line: int
    node: XmlNode
    contype: int = 1
    conaffinity: int = 1
    group: int = 0
    friction: float = 1.0
    margin: float = 0.0
    gap: float = 0.0
    mass: float | None = None
    density: float = 1000.0
    rgba: tuple | None = None
    mesh: str | None = None
    solref: np.ndarray | None = None       # None: the option's (MuJoCo's default) value
    solimp: np.ndarray | None = None
    solmix: float = 1.0
    condim: int = 3


def read_solver_params(doc: Document, node: XmlNode, owner: str, suffix: str = ""):
    """``(solref (2,), solimp (5,))`` of an element's ``solref<suffix>``/``solimp<suffix>``
    (``suffix="limit"`` for joints), None where not given; ``solimp`` may give its first 3
    numbers (MuJoCo's older form: midpoint 0.5 and power 2 then)."""
    rd = doc.rd(node)
    ref = imp = None
    if f"solref{suffix}" in node.attrib:
        ref = rd.vector(node, f"solref{suffix}", owner, 2)
    if f"solimp{suffix}" in node.attrib:
        imp = partial_vector(doc, node, f"solimp{suffix}", owner, 5, (0.9, 0.95, 0.001, 0.5, 2))
        if imp[2] < 0:
            raise doc.error(node, owner, f"solimp{suffix} width {imp[2]:g} must be >= 0")
    return ref, imp


def read_geom(doc: Document, node: XmlNode, comp: Compiler, name: str, owner: str) -> GeomData:
    """A resolved ``<geom>`` (defaults applied) as :class:`GeomData`.

    Raises
    ------
    MJCFError
        Unknown type, non-positive sizes, ``fromto`` on a type without an axis or together
        with ``pos``, coincident ``fromto`` points, bad numbers.
    """
    rd = doc.rd(node)
    kind = node.attrib.get("type", "sphere")
    if kind not in GEOM_TYPES:
        raise doc.error(node, owner, f"unknown geom type '{kind}' (expected one of "
                                     f"{', '.join(GEOM_TYPES)})")
    size = partial_vector(doc, node, "size", owner, 3, (0, 0, 0))
    if "fromto" in node.attrib:
        if kind not in ("capsule", "cylinder", "box", "ellipsoid"):
            raise doc.error(node, owner, f"fromto needs a capsule, cylinder, box or ellipsoid, "
                                         f"not a {kind}")
        ft = _finite_length(doc, node, rd.vector(node, "fromto", owner, 6), "fromto", owner)
        vec = ft[:3] - ft[3:]
        half = float(np.linalg.norm(vec)) / 2
        if half < 1e-14:
            raise doc.error(node, owner, f"fromto points {ft.tolist()} coincide")
        if np.any(rd.vector(node, "pos", owner, 3, (0, 0, 0)) != 0):
            raise doc.error(node, owner, "both pos and fromto given")
        size[1] = half
        if kind in ("box", "ellipsoid"):
            size[2], size[1] = size[1], size[0]
        pose = np.eye(4)
        pose[:3, :3] = z_to_vector(vec)
        pose[:3, 3] = 0.5 * (ft[:3] + ft[3:])
    else:
        pose = frame_pose(doc, node, comp, owner)
    need = {"sphere": 1, "capsule": 2, "cylinder": 2, "box": 3, "ellipsoid": 3}.get(kind, 0)
    if np.any(size[:need] <= 0) or np.any(size > _MAX_LENGTH):
        raise doc.error(node, owner, f"{kind} size {size[:max(need, 1)].tolist()} must be positive "
                                     f"(and below {_MAX_LENGTH:g} m)")
    g = GeomData(name, kind, size, pose, node.line, node)
    g.contype = int(rd.number(node, "contype", owner, 1))
    g.conaffinity = int(rd.number(node, "conaffinity", owner, 1))
    g.group = int(rd.number(node, "group", owner, 0))
    fr = partial_vector(doc, node, "friction", owner, 3, (1.0, 0.005, 0.0001))
    g.friction = float(fr[0])
    g.margin = rd.number(node, "margin", owner, 0.0)
    g.gap = rd.number(node, "gap", owner, 0.0)
    if g.friction < 0 or g.margin < 0 or g.gap < 0:
        raise doc.error(node, owner, "friction, margin and gap must be >= 0")
    if "mass" in node.attrib:
        g.mass = rd.number(node, "mass", owner)
        if g.mass < 0:
            raise doc.error(node, owner, f"negative mass {g.mass:g}")
    g.density = rd.number(node, "density", owner, 1000.0)
    if g.density < 0:
        raise doc.error(node, owner, f"negative density {g.density:g}")
    if "rgba" in node.attrib:
        g.rgba = tuple(rd.vector(node, "rgba", owner, 4).tolist())
    g.mesh = node.attrib.get("mesh")
    g.solref, g.solimp = read_solver_params(doc, node, owner)
    g.solmix = rd.number(node, "solmix", owner, 1.0)
    g.condim = int(rd.number(node, "condim", owner, 3))
    if g.condim not in (1, 3, 4, 6) or g.solmix < 0:
        raise doc.error(node, owner, f"condim {g.condim} must be 1, 3, 4 or 6 and solmix "
                                     f"{g.solmix:g} >= 0")
    return g


def geom_mass_properties(g: GeomData) -> tuple[float, np.ndarray]:
    """``(mass, principal moments (3,))`` of a primitive geom (module docstring); None
    moments for plane, mesh and height field (no volume known here)."""
    r, s1, s2 = g.size
    if g.kind == "sphere":
        vol = 4.0 / 3.0 * math.pi * r ** 3
    elif g.kind == "capsule":
        vol = math.pi * (r * r * 2 * s1 + 4.0 / 3.0 * r ** 3)
    elif g.kind == "cylinder":
        vol = math.pi * r * r * 2 * s1
    elif g.kind == "box":
        vol = 8.0 * r * s1 * s2
    elif g.kind == "ellipsoid":
        vol = 4.0 / 3.0 * math.pi * r * s1 * s2
    else:
        raise ValueError(g.kind)
    m = g.mass if g.mass is not None else g.density * vol
    if g.kind == "sphere":
        I = np.full(3, 0.4 * m * r * r)
    elif g.kind in ("capsule", "cylinder"):
        H = 2 * s1
        ms = m * 4 * r / (4 * r + 3 * H) if g.kind == "capsule" else 0.0
        mc = m - ms
        ix = mc * (3 * r * r + H * H) / 12 + ms * (0.4 * r * r + H * (3 * r + 2 * H) / 8)
        iz = mc * r * r / 2 + 0.4 * ms * r * r
        I = np.array([ix, ix, iz])
    elif g.kind == "box":
        I = m / 3.0 * np.array([s1 * s1 + s2 * s2, r * r + s2 * s2, r * r + s1 * s1])
    else:
        I = m / 5.0 * np.array([s1 * s1 + s2 * s2, r * r + s2 * s2, r * r + s1 * s1])
    return float(m), I


def combine(parts: list[tuple[float, np.ndarray, np.ndarray]]) -> tuple[float, np.ndarray,
                                                                         np.ndarray]:
    """Total ``(mass, com (3,), inertia about the com (3, 3))`` of parts given as
    ``(mass, com (3,), inertia about their own com (3, 3))`` in one frame."""
    m = sum(p[0] for p in parts)
    if m <= 0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    c = sum(p[0] * p[1] for p in parts) / m
    I = np.zeros((3, 3))
    for mi, ci, Ii in parts:
        d = ci - c
        I += Ii + mi * (float(d @ d) * np.eye(3) - np.outer(d, d))
    return float(m), c, 0.5 * (I + I.T)

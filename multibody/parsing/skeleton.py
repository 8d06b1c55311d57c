"""Reader of the HDM / pagoda skeleton description (segments as shapes, joints with anchors).

The format (pagoda's ``cooper-skeleton.txt``; Liu, Cooper and Ballard's human dynamic model)
has one statement per line; ``#`` starts a comment.

Segment lines::

    head      box 0.14 0.18 0.17  density 900  position 0 0 2
    ru-arm    cap 0.26 0.05*
    rl-arm    cap 0.19 0.04*      density 1100

``NAME SHAPE DIMS [density D] [mass M] [position X Y Z] [root] [color ...]``: ``box X Y Z``
(full side lengths, m), ``sph R*``, ``cap L R*`` or ``cap R* L`` (capsule along the segment's
z axis: cylinder length ``L`` plus two hemispherical caps of radius ``R``; the ``*`` marks the
radius), ``cyl L R*``. Density defaults to 1000 kg/m^3; ``mass`` overrides it. Every segment is
created axis-aligned with the world (the reference pose); orientations (``quaternion``) are
refused.

Joint lines::

    ball  r-collar(0.6 0 -1) <- ru-arm(0 0 1)  stops -150~150 -70~70 -80~150
    uni   ru-arm(0 0 -1) <- rl-arm(0 0 1)      stops -150~1 -70~70  axes <1 0 0> <0 0 1>
    hinge ru-leg(0 0 -0.9) <- rl-leg(0 0 0.9)  stops -1~150

``TYPE BODY1(OFFSET) <- BODY2(OFFSET) [stops LO~HI ...] [axes <X Y Z> ...]``, TYPE one of
``ball`` (3 DOF), ``uni``/``universal`` (2), ``hinge`` (1), ``fixed`` (0). Offsets are
fractions of the segment's half extents (``(1 0 0)`` is the centre of the +x face; a capsule's
half extents are ``(R, R, R + L/2)``). As in pagoda, BODY2 is moved so that its anchor meets
BODY1's. Axes default to ``<1 0 0> <0 1 0> <0 0 1>``: a hinge turns about the first, a
universal joint about the first (fixed in BODY1) and the second (fixed in BODY2); a ball joint
is ODE's Euler angular motor, first axis fixed in BODY1, last (the third default, ``z``) fixed
in BODY2 and the middle one ``a2 x a0``. Stops are in degrees and follow ODE's sign convention:
the angle measures BODY1's rotation relative to BODY2 (a hinge's rate is
``axis . (omega_1 - omega_2)``).

Our tree convention: the root segment (``pelvis`` by default) hangs on a Free joint; every other
joint's ``q`` is the rotation of the *child* relative to the *parent* about the file's axes, in
the order parent-fixed axis first. Where the file's BODY1 is our parent (``pelvis <- ru-leg``),
ODE's angle is ``-q`` and the limits become ``[-hi, -lo]``; where the file's BODY1 is our child
(the spine, written head first), the angle is ``q`` and the axis order is reversed. A ball joint
becomes an :class:`~multibody.tree.Euler` joint (three angles, no quaternion) so the stops are
ordinary joint limits: the 42-DOF human model has ``nq = 49`` (7 for the base) and ``nv = 48``.
Ball axes must be perpendicular coordinate axes of the segment frames.

Each child body frame sits at its joint anchor with the segment's axes; the segment centre (the
centre of mass) is at ``Segment.center`` in that frame. Mass and inertia come from the shape and
density (ODE's ``dMassSetBox`` / ``dMassSetCapsule`` formulas).

References
----------
L. Johnson and D. H. Ballard, "Efficient codes for inverse dynamics during walking", AAAI 2014
(the pagoda simulator and this file format). R. Smith, *Open Dynamics Engine user guide*
(joint angle and AMotor Euler conventions).
"""
from __future__ import annotations

import math
import os
import pathlib
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .errors import SkeletonError
from ._skeleton_shapes import shape_inertia as _shape_inertia

__all__ = ["SkeletonError", "Segment", "SkeletonJoint", "Skeleton", "parse_skeleton",
           "read_skeleton", "skeleton_tree"]

_SHAPES = {"box": "box", "sph": "sphere", "sphere": "sphere", "cap": "capsule",
           "capsule": "capsule", "cyl": "cylinder", "cylinder": "cylinder"}
_JOINTS = {"ball": ("ball", 3), "uni": ("universal", 2), "universal": ("universal", 2),
           "hinge": ("hinge", 1), "fixed": ("fixed", 0)}
_TOKEN = re.compile(r"<-|->|<>|<[^<>]*>|\([^()]*\)|[^\s()<>]+")
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_EULER_LETTERS = "xyz"


@dataclass
class Segment:
    """One body segment: ``shape`` ('box', 'capsule', 'sphere', 'cylinder'), ``dims`` (box: (3,)
    side lengths; capsule/cylinder: (length, radius); sphere: (radius,)), ``density``, ``mass``,
    ``inertia`` (3 x 3 about the centre), ``half_extents`` (3,), ``position`` (centre in the
    reference pose, world), ``center`` (centre in the body frame, set when a tree is built),
    the file ``line`` and the ``given_position`` of the file (or None)."""

    name: str
    shape: str
    dims: tuple
    density: float
    mass: float
    inertia: np.ndarray
    half_extents: np.ndarray
    position: np.ndarray | None = None
    center: np.ndarray = field(default_factory=lambda: np.zeros(3))
    line: int = 0
    given_position: np.ndarray | None = None

    def point(self, fraction: Any) -> np.ndarray:
        """Point at ``fraction`` of the half extents from the centre, in the body frame (m)."""
        return self.center + np.asarray(fraction, float) * self.half_extents


@dataclass
class SkeletonJoint:
    """One joint line: ``kind`` ('ball', 'universal', 'hinge', 'fixed'), the two attachments
    (``body1``, ``offset1``, ``body2``, ``offset2``; offsets as fractions of half extents),
    ``stops`` [(lo, hi)] in degrees in ODE's convention, ``axes`` [(3,)] and the file ``line``."""

    kind: str
    body1: str
    offset1: np.ndarray
    body2: str
    offset2: np.ndarray
    stops: list
    axes: list
    line: int = 0


@dataclass
class Skeleton:
    """A parsed skeleton file: ``segments`` {name: Segment} in file order, ``joints`` [SkeletonJoint],
    the ``source`` name (file or ``"<string>"``) and the ``root`` marked in the file (or None)."""

    segments: dict
    joints: list
    source: str = "<string>"
    root: str | None = None

    @property
    def dof(self) -> int:
        """Number of joint degrees of freedom (without the floating base)."""
        return sum(_JOINTS[j.kind][1] for j in self.joints)

    @property
    def total_mass(self) -> float:
        """Sum of the segment masses (kg)."""
        return float(sum(s.mass for s in self.segments.values()))

    def scaled(self, length_scale: float = 1.0, density_scale: float = 1.0,
               segment_scales: dict | None = None) -> "Skeleton":
        """A copy with every length times ``length_scale`` (and the dimensions of segment ``n``
        also times ``segment_scales[n]``) and every density times ``density_scale``.

        A segment's mass scales by ``density_scale * (length_scale * segment_scale)**3`` and its
        inertia by the fifth power; offsets stay fractions of half extents, so joint anchors and
        markers move with the segments and the reference pose is placed again.
        """
        s, k = float(length_scale), float(density_scale)
        if not (s > 0 and k > 0 and math.isfinite(s) and math.isfinite(k)):
            raise SkeletonError(f"{self.source}: scales must be positive and finite, got "
                                f"length {length_scale!r}, density {density_scale!r}")
        per = dict(segment_scales or {})
        for n, v in per.items():
            if n not in self.segments:
                raise SkeletonError(f"{self.source}: segment_scales names unknown segment '{n}' "
                                    f"(segments: {', '.join(self.segments)})")
            if not (float(v) > 0 and math.isfinite(float(v))):
                raise SkeletonError(f"{self.source}: scale of segment '{n}' must be positive and "
                                    f"finite, got {v!r}")
        segs = {}
        for n, g in self.segments.items():
            f = s * float(per.get(n, 1.0))
            dims = tuple(d * f for d in g.dims)
            given = None if g.given_position is None else g.given_position * s
            segs[n] = _make_segment(n, g.shape, dims, g.density * k, None, g.line, given)
            if g.density == 0:  # a segment given by mass: keep the mass ratio
                segs[n] = _with_mass(segs[n], g.mass * k * f ** 3)
        _place_reference_pose(segs, self.joints, self.source)
        return Skeleton(segs, list(self.joints), self.source, self.root)


# ---------------------------------------------------------------- shapes and masses
def _make_segment(name, shape, dims, density, mass, line, position) -> Segment:
    m, I, h = _shape_inertia(shape, dims, density)
    given = None if position is None else np.asarray(position, float)
    seg = Segment(name, shape, tuple(float(d) for d in dims), float(density), m, I, h,
                  None if given is None else given.copy(), line=line, given_position=given)
    return _with_mass(seg, mass) if mass is not None else seg


def _with_mass(seg: Segment, mass: float) -> Segment:
    m1, I1, _ = _shape_inertia(seg.shape, seg.dims, 1.0)
    seg.density = 0.0
    seg.mass = float(mass)
    seg.inertia = I1 * (float(mass) / m1)
    return seg


# ---------------------------------------------------------------- parsing
class _Line:
    def __init__(self, source: str, lineno: int, text: str):
        self.source, self.lineno, self.text = source, lineno, text
        self.tokens = _TOKEN.findall(re.sub(r"\s*~\s*", "~", text))
        self.i = 0

    def error(self, msg: str) -> SkeletonError:
        return SkeletonError(f"{self.source}, line {self.lineno}: {msg} (in {self.text.strip()!r})")

    def more(self) -> bool:
        return self.i < len(self.tokens)

    def next(self, what: str) -> str:
        if self.i >= len(self.tokens):
            raise self.error(f"expected {what}, found the end of the line")
        self.i += 1
        return self.tokens[self.i - 1]

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def number(self, what: str, tok: str | None = None, positive: bool = False) -> float:
        tok = self.next(what) if tok is None else tok
        if not _NUMBER.match(tok):
            raise self.error(f"expected {what} (a number), got {tok!r}")
        x = float(tok)
        if positive and not x > 0:
            raise self.error(f"expected {what} > 0, got {tok!r}")
        return x

    def vector(self, tok: str, open_: str, close: str, what: str) -> np.ndarray:
        if not (tok.startswith(open_) and tok.endswith(close)):
            raise self.error(f"expected {what} as {open_}X Y Z{close}, got {tok!r}")
        parts = tok[1:-1].split()
        if len(parts) != 3 or not all(_NUMBER.match(p) for p in parts):
            raise self.error(f"expected {what} as {open_}X Y Z{close} with three numbers, "
                             f"got {tok!r}")
        return np.array([float(p) for p in parts])


def _parse_segment(ln: _Line) -> Segment:
    name = ln.next("a segment name")
    shape_tok = ln.next("a shape")
    shape = _SHAPES.get(shape_tok.lower())
    if shape is None:
        raise ln.error(f"segment '{name}': expected a shape (box, sph, cap, cyl), got "
                       f"{shape_tok!r}")
    if shape == "box":
        dims = tuple(ln.number(f"box side {k}", positive=True) for k in "XYZ")
    elif shape == "sphere":
        tok = ln.next("a radius 'R*'")
        if not tok.endswith("*"):
            raise ln.error(f"segment '{name}': expected the sphere radius marked 'R*', got {tok!r}")
        dims = (ln.number("a radius", tok[:-1], positive=True),)
    else:
        a, b = ln.next("a length or 'R*'"), ln.next("a length or 'R*'")
        if a.endswith("*") == b.endswith("*"):
            raise ln.error(f"segment '{name}': expected '{shape_tok} L R*' with exactly one "
                           f"radius marked by '*', got {a!r} {b!r}")
        r_tok, l_tok = (a, b) if a.endswith("*") else (b, a)
        dims = (ln.number("a length", l_tok, positive=True),
                ln.number("a radius", r_tok[:-1], positive=True))
    density, mass, position, root = 1000.0, None, None, False
    while ln.more():
        key = ln.next("an attribute").lower()
        if key == "density":
            density = ln.number("a density", positive=True)
        elif key == "mass":
            mass = ln.number("a mass", positive=True)
        elif key == "position":
            position = [ln.number(f"position {k}") for k in "XYZ"]
        elif key == "root":
            root = True
        elif key == "color":
            while ln.more() and not ln.peek().lower() in ("density", "mass", "position", "root"):
                ln.next("a color")
        elif key in ("quaternion", "handofgod"):
            raise ln.error(f"segment '{name}': '{key}' is not supported (segments start "
                           "axis-aligned)")
        else:
            raise ln.error(f"segment '{name}': expected density, mass, position or root, got "
                           f"{key!r}")
    seg = _make_segment(name, shape, dims, density, mass, ln.lineno, position)
    seg.root = root  # type: ignore[attr-defined]
    return seg


def _parse_attachment(ln: _Line, which: str) -> tuple[str, np.ndarray]:
    name = ln.next(f"the {which} segment name")
    if not re.match(r"^[-\w]+$", name):
        raise ln.error(f"expected the {which} segment name, got {name!r}")
    off = np.zeros(3)
    if (ln.peek() or "").startswith("("):
        off = ln.vector(ln.next("an offset"), "(", ")", f"the {which} offset")
    return name, off


def _parse_joint(ln: _Line, kind_tok: str) -> SkeletonJoint:
    kind, ndof = _JOINTS[kind_tok.lower()]
    b1, o1 = _parse_attachment(ln, "first")
    arrow = ln.next("'<-'")
    if arrow not in ("<-", "->", "<>"):
        raise ln.error(f"expected '<-' between the two attachments, got {arrow!r}")
    b2, o2 = _parse_attachment(ln, "second")
    stops, axes = [], []
    while ln.more():
        key = ln.next("'stops' or 'axes'").lower()
        if key == "stops":
            while ln.more() and "~" in ln.peek():
                tok = ln.next("a range")
                lo, _, hi = tok.partition("~")
                lo, hi = ln.number("a lower stop", lo), ln.number("an upper stop", hi)
                if lo > hi:
                    raise ln.error(f"stop range {tok!r}: lower {lo} > upper {hi}")
                stops.append((lo, hi))
            if len(stops) != ndof:
                raise ln.error(f"{kind_tok} joint {b1} <- {b2}: expected {ndof} stop ranges "
                               f"'LO~HI' (degrees), got {len(stops)}")
        elif key == "axes":
            while ln.more() and ln.peek().startswith("<"):
                a = ln.vector(ln.next("an axis"), "<", ">", "an axis")
                if np.linalg.norm(a) < 1e-12:
                    raise ln.error(f"joint {b1} <- {b2}: axis {a} is zero")
                axes.append(a / np.linalg.norm(a))
            if not axes:
                raise ln.error("expected at least one axis '<X Y Z>' after 'axes'")
        elif key in ("stop_cfms", "stop_erps", "cfms", "erps", "fmax"):
            while ln.more() and _NUMBER.match(ln.peek()):
                ln.next("a number")
        else:
            raise ln.error(f"expected 'stops' or 'axes', got {key!r}")
    return SkeletonJoint(kind, b1, o1, b2, o2, stops, axes, ln.lineno)


def parse_skeleton(text: str, source: str = "<string>") -> Skeleton:
    """Parse skeleton text (module docstring for the format).

    Parameters
    ----------
    text : str
        The file contents.
    source : str
        Name used in error messages.

    Returns
    -------
    Skeleton

    Raises
    ------
    SkeletonError
        A line that cannot be parsed (file, line and what was expected), an unknown segment
        in a joint, a duplicate segment, or a loop of joints.
    """
    segments: dict[str, Segment] = {}
    joints: list[SkeletonJoint] = []
    root = None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        body = raw.split("#", 1)[0]
        if not body.strip():
            continue
        ln = _Line(source, lineno, body)
        first = ln.peek()
        if first.lower() in _JOINTS and any(t in ("<-", "->", "<>") for t in ln.tokens):
            ln.next("a joint type")
            j = _parse_joint(ln, first)
            for b in (j.body1, j.body2):
                if b not in segments:
                    raise ln.error(f"joint refers to unknown segment '{b}' (segments must be "
                                   "declared before the joints that use them)")
            if j.body1 == j.body2:
                raise ln.error(f"joint connects segment '{j.body1}' to itself")
            joints.append(j)
        else:
            seg = _parse_segment(ln)
            if seg.name in segments:
                raise ln.error(f"duplicate segment '{seg.name}' (first on line "
                               f"{segments[seg.name].line})")
            if getattr(seg, "root", False):
                root = seg.name
            segments[seg.name] = seg
    if not segments:
        raise SkeletonError(f"{source}: no segments found (expected lines like "
                            "'head box 0.14 0.18 0.17')")
    _place_reference_pose(segments, joints, source)
    return Skeleton(segments, joints, source, root)


def read_skeleton(path: str | os.PathLike) -> Skeleton:
    """Read a skeleton file: :func:`parse_skeleton` of its text, with the file named in the
    errors (``FileNotFoundError`` when there is no such file)."""
    p = pathlib.Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"skeleton file '{p}' does not exist")
    return parse_skeleton(p.read_text(), str(path))


def _place_reference_pose(segments: dict, joints: list, source: str) -> None:
    """Centres of the segments in the reference pose: in file order, BODY2 is moved so that
    its anchor meets BODY1's (pagoda's ``move_next_to``); a segment without a ``position`` starts
    at the origin."""
    pos = {n: (np.zeros(3) if s.given_position is None else s.given_position.copy())
           for n, s in segments.items()}
    parent_of: dict[str, str] = {}
    for j in joints:
        a, b = j.body1, j.body2
        # a second joint into an already connected pair closes a loop: refuse it
        if _find(parent_of, a) == _find(parent_of, b):
            raise SkeletonError(f"{source}, line {j.line}: joint {a} <- {b} closes a loop of "
                                "joints (a skeleton must be a tree)")
        parent_of[_find(parent_of, b)] = _find(parent_of, a)
        s1, s2 = segments[a], segments[b]
        anchor = pos[a] + j.offset1 * s1.half_extents
        pos[b] = anchor - j.offset2 * s2.half_extents
    for n, s in segments.items():
        s.position = pos[n]


def _find(parent_of: dict, x: str) -> str:
    while x in parent_of:
        x = parent_of[x]
    return x


# ---------------------------------------------------------------- the tree
def _letter(axis: np.ndarray, where: str) -> tuple[str, float]:
    k = int(np.argmax(np.abs(axis)))
    if abs(abs(axis[k]) - 1.0) > 1e-9:
        raise SkeletonError(f"{where}: ball joint axes must be coordinate axes of the segment "
                            f"frames (like <1 0 0> or <0 0 -1>), got {np.round(axis, 6)}")
    return _EULER_LETTERS[k], float(np.sign(axis[k]))


def _joint_chain(j: SkeletonJoint, reversed_: bool, where: str):
    """Axes (parent-fixed first), sign c (q = c * ODE angle) and stops (deg) per coordinate."""
    default = [np.array([1.0, 0, 0]), np.array([0, 1.0, 0]), np.array([0, 0, 1.0])]
    if j.kind == "fixed":
        return [], [], []
    if j.kind == "hinge":
        axes = [j.axes[0] if j.axes else default[0]]
    elif j.kind == "universal":
        axes = [j.axes[0] if j.axes else default[0],
                j.axes[1] if len(j.axes) > 1 else default[1]]
        if abs(axes[0] @ axes[1]) > 1e-9:
            raise SkeletonError(f"{where}: universal joint axes must be perpendicular, got "
                                f"{axes[0]} and {axes[1]}")
    else:
        a0 = j.axes[0] if j.axes else default[0]
        a2 = (j.axes[-1] if len(j.axes) >= 2 else default[2])
        if abs(a0 @ a2) > 1e-9:
            raise SkeletonError(f"{where}: ball joint first and last axes must be "
                                f"perpendicular, got {a0} and {a2}")
        axes = [a0, np.cross(a2, a0), a2]
    stops = list(j.stops) if j.stops else [(-math.inf, math.inf)] * len(axes)
    if reversed_:  # BODY1 is our child: ODE's angle is the child's rotation, child axis last
        return axes[::-1], [1.0] * len(axes), stops[::-1]
    return axes, [-1.0] * len(axes), stops


def skeleton_tree(skeleton: Skeleton, root: str | None = None, *, name: str = "skeleton",
                  floating: bool = True):
    """Build a :class:`~multibody.tree.RigidBodyTree` from a :class:`Skeleton`.

    Parameters
    ----------
    skeleton : Skeleton
    root : str, optional
        Root segment (default: the one marked ``root`` in the file, else ``pelvis`` if
        present, else the first segment).
    name : str
        Tree name.
    floating : bool
        Attach the root with a Free joint named ``floating_base`` (``q = [qw, qx, qy, qz, x,
        y, z]``); else weld it to the world at its reference position.

    Returns
    -------
    tree : RigidBodyTree
        Bodies named after the segments; joints named ``"<child>_joint"``: Revolute (hinge),
        Universal, Euler (ball; three angles so the stops are limits), Weld (fixed), with
        limits in radians in our convention (module docstring). Box and capsule visual
        geometry is attached.
    joint_info : dict
        ``{joint name: {"kind", "line", "reversed", "ode_sign"}}``: ``ode_sign[k]`` is ``c`` in
        ``q_k = c * theta_k`` (theta the ODE angle of the file's stops).

    Raises
    ------
    SkeletonError
        Unknown root, segments not connected to the root, unsupported ball axes.
    """
    from .. import geometry as G
    from ..tree import RigidBodyTree
    from ..tree import joints as J

    segs = skeleton.segments
    root = root or skeleton.root or ("pelvis" if "pelvis" in segs else next(iter(segs)))
    if root not in segs:
        raise SkeletonError(f"{skeleton.source}: root segment '{root}' is not declared "
                            f"(segments: {', '.join(segs)})")
    adj: dict[str, list] = {n: [] for n in segs}
    for j in skeleton.joints:
        adj[j.body1].append((j.body2, j, False))
        adj[j.body2].append((j.body1, j, True))
    tree = RigidBodyTree(name=name)
    info: dict[str, dict] = {}
    anchor_of = {root: segs[root].position.copy()}  # body frame origin in the reference pose
    order, seen = [root], {root}
    k = 0
    while k < len(order):
        parent = order[k]
        k += 1
        for child, j, rev in adj[parent]:
            if child in seen:
                continue
            seen.add(child)
            order.append(child)
            anchor_of[child] = segs[j.body1].position + j.offset1 * segs[j.body1].half_extents
    missing = [n for n in segs if n not in seen]
    if missing:
        raise SkeletonError(f"{skeleton.source}: segments {', '.join(missing)} are not connected "
                            f"to the root segment '{root}' by joints")
    for n in order:
        s = segs[n]
        s.center = s.position - anchor_of[n]
        tree.add_body(n, s.mass, com=s.center, inertia=s.inertia)
        pose = np.eye(4)
        pose[:3, 3] = s.center
        if s.shape == "box":
            shape = G.Box(tuple(s.dims))
        elif s.shape == "sphere":
            shape = G.Sphere(s.dims[0])
        elif s.shape == "capsule":
            shape = G.Capsule(s.dims[1], s.dims[0])
        else:
            shape = G.Cylinder(s.dims[1], s.dims[0])
        tree.add_visual_geometry(n, shape, pose=pose, name=f"{n}_visual")
    if floating:
        tree.add_joint(J.Free("floating_base", "world", root))
    else:
        T = np.eye(4)
        T[:3, 3] = anchor_of[root]
        tree.add_joint(J.Weld("world_weld", "world", root, origin=T))
    parent_of = {}
    for parent in order:
        for child, j, rev in adj[parent]:
            if child in parent_of or child == root or parent_of.get(parent) == child:
                continue
            parent_of[child] = parent
            where = f"{skeleton.source}, line {j.line}"
            axes, sign, stops = _joint_chain(j, rev, where)
            origin = np.eye(4)
            origin[:3, 3] = anchor_of[child] - anchor_of[parent]
            lo = np.array([min(c * a, c * b) for c, (a, b) in zip(sign, stops)]) * math.pi / 180
            hi = np.array([max(c * a, c * b) for c, (a, b) in zip(sign, stops)]) * math.pi / 180
            jname = f"{child}_joint"
            common = dict(origin=origin, lower=lo if len(lo) else None,
                          upper=hi if len(hi) else None)
            if j.kind == "fixed":
                joint = J.Weld(jname, parent, child, origin=origin)
            elif j.kind == "hinge":
                joint = J.Revolute(jname, parent, child, axis=axes[0], **common)
            elif j.kind == "universal":
                joint = J.Universal(jname, parent, child, axis1=axes[0], axis2=axes[1], **common)
            else:
                letters, signs = zip(*(_letter(a, where) for a in axes))
                # rotation about -e by q is rotation about +e by -q
                sign = [c * s for c, s in zip(sign, signs)]
                lo = np.array([min(c * a, c * b) for c, (a, b) in zip(sign, stops)]) * math.pi / 180
                hi = np.array([max(c * a, c * b) for c, (a, b) in zip(sign, stops)]) * math.pi / 180
                joint = J.Euler(jname, parent, child, axes="".join(letters), origin=origin,
                                lower=lo, upper=hi)
            tree.add_joint(joint)
            info[jname] = {"kind": j.kind, "line": j.line, "reversed": rev,
                           "ode_sign": list(sign), "segment": child}
    return tree, info

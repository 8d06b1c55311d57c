"""SDFormat parsing: an ``.sdf`` file or string -> :class:`~multibody.tree.RigidBodyTree`.

Supported (SDFormat 1.6-1.11, http://sdformat.org/spec; other versions load with a warning):

* ``<sdf>`` with one or more ``<model>`` (top level or inside one ``<world>``, whose
  ``<gravity>`` becomes the tree's). With several models every name is scoped,
  ``"model::link"``. Nested ``<model>`` and ``<include>`` are refused (:class:`SDFError`).
* Poses: ``<pose relative_to="...">x y z roll pitch yaw</pose>`` (``R = Rz Ry Rx``), with
  ``degrees="true"`` (1.9+) and ``rotation_format="quat_xyzw"`` (``x y z qx qy qz qw``).
  Defaults as in the specification's frame semantics: a link's pose is relative to the model
  frame, a joint's to its child link (!), a ``<frame>``'s to its ``attached_to`` frame
  (default: the model frame, attached to the canonical link), collision, visual and inertial
  poses to their link. The model's ``<pose>`` places the model frame in the world.
  ``<frame name attached_to>`` elements become tree frames (:meth:`RigidBodyTree.add_frame`)
  on the link they are attached to; joints' ``<parent>``/``<child>`` may name frames.
* ``<inertial>``: ``<mass>`` (default 1 kg), ``<pose>`` of the inertial frame (origin at the
  centre of mass), ``<inertia>`` ixx...izz about it (default ``ixx = iyy = izz = 1``); a link
  without ``<inertial>`` gets these defaults, as libsdformat (and so Drake) give it. Inertias
  are checked and repaired as in the URDF reader.
* ``<collision>`` and ``<visual>`` with box (size), sphere, cylinder and capsule (radius,
  length; axis z), ellipsoid (radii) -> :class:`~multibody.geometry.Ellipsoid`, mesh (uri and
  scale kept as a :class:`~multibody.geometry.Mesh` reference, never loaded), plane (normal)
  -> :class:`~multibody.geometry.Halfspace` (only on a link welded to the world), ``empty``
  (skipped); a visual's ``<material><diffuse>`` becomes its rgba.
* ``<joint>`` types: revolute -> Revolute, continuous -> Revolute without limits, prismatic
  -> Prismatic, ball -> Ball, universal -> Universal (``axis`` then ``axis2``), fixed ->
  Weld, screw -> Screw (``screw_thread_pitch`` in m per revolution, 1.10+, or the deprecated
  ``thread_pitch`` in rad/m with its left-handed sign); revolute2, gearbox and piston are
  refused. ``<axis><xyz expressed_in>`` (default the joint frame; ``use_parent_model_frame``
  of 1.6 means the model frame), ``<limit>`` lower/upper/effort/velocity (negative effort or
  velocity and ``|limit| >= 1e16`` mean unlimited), ``<dynamics>`` damping, friction,
  spring_stiffness and spring_reference (-> the joint's stiffness and rest position).
* The world: a joint whose parent is ``world`` attaches its child there. Every other link
  without a parent joint (a root) is attached to the world at its pose in the file: welded
  (``"world_weld"``) when the model is ``<static>`` or ``floating_base=False``, otherwise
  by a Free joint (``"floating_base"``; Drake's and Gazebo's behaviour for ``floating_base=None``)
  whose *origin is the link's pose in the file*, so the neutral configuration puts the model
  where the file does and ``q`` is the pose relative to it. With several roots the joint
  names end in the link name (``"floating_base_<link>"``).
* Joint frames: our tree's child body frame is the joint frame, while SDFormat puts the
  joint anywhere on the child link. The reader keeps every body frame equal to its SDFormat
  link frame: when the child link's origin lies on the joint axis (always for prismatic and
  fixed joints, at the joint frame origin for ball and universal joints) the joint is
  re-expressed in the child frame exactly (same coordinates); otherwise a massless body
  ``"<joint>__joint_frame"`` carries the joint and a Weld ``"<joint>__to_child"`` holds the
  link, which leaves the dynamics unchanged.
* ``drake:`` extensions: ``drake:rotor_inertia`` and ``drake:gear_ratio`` give the joint's
  armature ``N^2 J`` (reflected inertia, as Drake, only on actuated joints: effort limit not
  0); ``drake:joint`` of the types above; ``drake:capsule``, ``drake:ellipsoid``;
  ``drake:proximity_properties/drake:mu_dynamic`` and ``<surface><friction><ode><mu>`` are
  read, but the tree's geometry carries no friction (one warning: set the contact block's
  ``mu``). Other ``drake:`` elements (``drake:hydroelastic...``, ``drake:ball_constraint``,
  ``drake:collision_filter_group``, ...) and every other unsupported element are ignored
  with ONE :class:`SDFWarning` per element kind.

Every problem raises :class:`SDFError` (a ``ValueError``) whose message gives the file (or
``"<string>"``), the line and the element; nothing else escapes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

import numpy as np

from ._model_checks import check_scale
from ._sdf_model import SdfGeometry, SdfJoint, SdfModel, read_document
from ._sdf_poses import WORLD, inverse
from ._xml import PathOrString, Reader, parse_xml, read_source
from .errors import SDFError, SDFWarning

if TYPE_CHECKING:  # pragma: no cover
    from ..tree import RigidBodyTree

__all__ = ["parse_sdf", "SDFError", "SDFWarning"]


def parse_sdf(path_or_string: PathOrString, floating_base: bool | None = None, *,
              package_map: Mapping[str, str] | None = None) -> "RigidBodyTree":
    """Build a :class:`~multibody.tree.RigidBodyTree` from an SDFormat file or string.

    Parameters
    ----------
    path_or_string : str, bytes or path-like
        A ``.sdf`` file, or the XML itself (a string starting with ``<``).
    floating_base : bool or None
        How root links (links without a parent joint) attach to the world. None: welded when
        the model is ``<static>``, otherwise by a Free joint (``q = [qw, qx, qy, qz, x, y, z]``
        relative to the link's pose in the file, ``v = [omega; v]`` in the link frame), as
        Drake does. True: Free joints (an error for a static model or one the file welds to
        the world). False: welded at their pose in the file.
    package_map : mapping, optional
        ``{package name: directory}`` used to resolve ``package://`` mesh URIs.

    Returns
    -------
    RigidBodyTree
        Not yet finalized; bodies in document order, joints after them.

    Raises
    ------
    SDFError
        A malformed or unsupported document (file or ``"<string>"``, line, element, reason).
    FileNotFoundError
        ``path_or_string`` is neither an existing file nor XML text.

    Examples
    --------
    >>> from multibody.parsing import parse_sdf
    >>> tree = parse_sdf('''<sdf version="1.9"><model name="m">
    ...   <link name="a"><inertial><mass>2</mass></inertial></link>
    ...   <joint name="j" type="revolute"><parent>world</parent><child>a</child>
    ...     <axis><xyz>0 1 0</xyz></axis></joint></model></sdf>''')
    >>> tree.nq, tree.get_body("a").mass
    (1, 2.0)
    """
    if floating_base not in (None, True, False):
        raise TypeError(f"floating_base must be None, True or False, got {floating_base!r}")
    text, source, base_dir = read_source(path_or_string, "SDFormat", "sdf")
    rd = Reader(source, SDFError, SDFWarning)
    root = parse_xml(text, source, SDFError)
    models, gravity = read_document(root, rd, package_map=package_map, base_dir=base_dir)
    return _build_tree(models, gravity, rd, floating_base)


def _unique(base: str, taken: set[str]) -> str:
    name, k = base, 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


class _Origin:
    """What :func:`check_scale` reads of a joint: name, line and origin."""

    def __init__(self, name: str, line: int, origin: np.ndarray):
        self.name, self.line, self.origin = name, line, origin


def _build_tree(models: list[SdfModel], gravity, rd: Reader, floating_base) -> "RigidBodyTree":
    from ..tree import RigidBodyTree

    kwargs = {} if gravity is None else {"gravity": gravity}
    name = models[0].name if len(models) == 1 else "sdf"
    try:
        tree = RigidBodyTree(name=name, **kwargs)
    except ValueError as exc:
        raise rd.error_at(None, "world", str(exc)) from exc
    taken: set[str] = {WORLD}
    for m in models:
        prefix = "" if len(models) == 1 else f"{m.name}::"
        for lk in m.links:
            taken.add(prefix + lk.name)
        for j in m.joints:
            taken.add(prefix + j.name)
        for f in m.frames:
            taken.add(prefix + f.name)
    friction_noted = False
    for m in models:
        prefix = "" if len(models) == 1 else f"{m.name}::"
        _build_model(tree, m, prefix, rd, floating_base, taken)
        if not friction_noted and any(g.mu is not None for lk in m.links for g in lk.collisions):
            friction_noted = True
            rd.warn(None, f"model '{m.name}'", "friction coefficients (mu) are read but the "
                    "tree's geometry carries no friction: give the contact block its mu")
    return tree


def _build_model(tree, m: SdfModel, prefix: str, rd: Reader, floating_base, taken) -> None:
    from ..tree import joints as J

    owner = f"model '{m.name}'"
    links = {lk.name: lk for lk in m.links}
    for lk in m.links:
        try:
            tree.add_body(prefix + lk.name, lk.mass, com=lk.com, inertia=lk.inertia)
        except (ValueError, TypeError) as exc:
            raise rd.error_at(lk.line, f"link '{lk.name}'", str(exc)) from exc
    parent_of: dict[str, SdfJoint] = {}
    welded_world = False
    for j in m.joints:
        if j.child in parent_of:
            first = parent_of[j.child]
            raise rd.error_at(j.line, f"joint '{j.name}'", f"link '{j.child}' has two parent "
                              f"joints: '{first.name}' (line {first.line}) and '{j.name}' (a "
                              "kinematic loop; use a constraint for loop closures)")
        parent_of[j.child] = j
        welded_world |= j.parent == WORLD
    _check_loops(m, parent_of, rd)
    roots = [lk for lk in m.links if lk.name not in parent_of]
    if floating_base is True and (m.static or welded_world):
        why = "is <static>" if m.static else "attaches a link to the world by a joint"
        raise rd.error_at(m.line, owner, f"floating_base=True but the model {why}")
    weld_roots = m.static or floating_base is False
    if m.static and any(j.type != "fixed" for j in m.joints):
        bad = next(j for j in m.joints if j.type != "fixed")
        raise rd.error_at(bad.line, f"joint '{bad.name}'", "a <static> model may only have "
                          "fixed joints (Drake's rule; a static model does not move)")
    origins = []
    for lk in roots:
        base = "world_weld" if weld_roots else "floating_base"
        jname = _unique(prefix + (base if len(roots) == 1 else f"{base}_{lk.name}"), taken)
        cls = J.Weld if weld_roots else J.Free
        tree.add_joint(cls(jname, WORLD, prefix + lk.name, origin=lk.X_W))
        origins.append(_Origin(jname, m.line, lk.X_W))
    for j in m.joints:
        try:
            origins.append(_add_joint(tree, J, j, links, prefix, taken))
        except (ValueError, TypeError) as exc:
            raise rd.error_at(j.line, f"joint '{j.name}'", str(exc)) from exc
    check_scale(m.name, m.links, origins, rd, _Line(m.line))
    for f in m.frames:
        body = WORLD if f.body == WORLD else prefix + f.body
        X_WB = np.eye(4) if f.body == WORLD else links[f.body].X_W
        try:
            tree.add_frame(prefix + f.name, body, _clean(inverse(X_WB) @ f.X_W))
        except (ValueError, TypeError) as exc:
            raise rd.error_at(f.line, f"frame '{f.name}'", str(exc)) from exc
    welded = _welded_to_world(m, parent_of, weld_roots)
    for lk in m.links:
        for g in lk.collisions:
            _add_geometry(tree, rd, prefix + lk.name, g, lk.name in welded, visual=False)
        for g in lk.visuals:
            _add_geometry(tree, rd, prefix + lk.name, g, lk.name in welded, visual=True)


class _Line:
    def __init__(self, line: int):
        self.line = line


def _check_loops(m: SdfModel, parent_of: dict[str, SdfJoint], rd: Reader) -> None:
    for start in parent_of:
        seen = []
        name = start
        while name in parent_of:
            if name in seen:
                cyc = [parent_of[n].name for n in seen[seen.index(name):]]
                j = parent_of[name]
                raise rd.error_at(j.line, f"joint '{j.name}'", "the joints "
                                  + " -> ".join(f"'{c}'" for c in cyc) + " form a kinematic cycle")
            seen.append(name)
            name = parent_of[name].parent


def _welded_to_world(m: SdfModel, parent_of: dict[str, SdfJoint], weld_roots: bool) -> set[str]:
    out = set()
    for lk in m.links:
        name = lk.name
        while True:
            j = parent_of.get(name)
            if j is None:
                ok = weld_roots
                break
            if j.type != "fixed":
                ok = False
                break
            if j.parent == WORLD:
                ok = True
                break
            name = j.parent
        if ok:
            out.add(lk.name)
    return out


def _clean(X: np.ndarray) -> np.ndarray:
    """Re-orthonormalize the rotation of a composed pose (rounding only)."""
    U, _, Vt = np.linalg.svd(X[:3, :3])
    Y = X.copy()
    Y[:3, :3] = U @ Vt
    Y[3] = (0.0, 0.0, 0.0, 1.0)
    return Y


def _add_joint(tree, J, j: SdfJoint, links, prefix: str, taken: set[str]) -> _Origin:
    """Add the joint with the child body frame kept at the SDFormat link frame (see the module
    docstring); returns what the scale check needs."""
    X_WP = np.eye(4) if j.parent == WORLD else links[j.parent].X_W
    X_WC = links[j.child].X_W
    X_PJ = inverse(X_WP) @ j.X_WJ
    X_JC = inverse(j.X_WJ) @ X_WC
    R, p = X_JC[:3, :3], X_JC[:3, 3]
    scale = max(1.0, float(np.linalg.norm(p)))
    on_axis = float(np.linalg.norm(np.cross(p, j.axis))) <= 1e-12 * scale
    at_origin = float(np.linalg.norm(p)) <= 1e-12 * scale
    exact = {"fixed": True, "prismatic": True, "revolute": on_axis, "continuous": on_axis,
             "screw": on_axis, "ball": at_origin, "universal": at_origin}[j.type]
    parent = WORLD if j.parent == WORLD else prefix + j.parent
    child = prefix + j.child
    name = prefix + j.name
    if exact:
        origin, Rc = _clean(X_PJ @ X_JC), R.T       # axes re-expressed in the child frame
        target = child
    else:
        origin, Rc = _clean(X_PJ), np.eye(3)
        target = _unique(f"{name}__joint_frame", taken)
        tree.add_body(target, 0.0)
    common = dict(origin=origin, damping=j.damping, friction=j.friction,
                  stiffness=j.stiffness, armature=j.armature)
    limits = dict(lower=j.lower, upper=j.upper, velocity_limit=j.velocity, effort_limit=j.effort)
    axis = Rc @ j.axis
    if j.type == "fixed":
        joint = J.Weld(name, parent, target, origin=origin)
    elif j.type == "prismatic":
        joint = J.Prismatic(name, parent, target, axis=axis, rest_position=[j.reference],
                            **limits, **common)
    elif j.type in ("revolute", "continuous"):
        joint = J.Revolute(name, parent, target, axis=axis, rest_position=[j.reference],
                           **limits, **common)
    elif j.type == "screw":
        joint = J.Screw(name, parent, target, axis=axis, pitch=j.pitch,
                        rest_position=[j.reference], **limits, **common)
    elif j.type == "universal":
        joint = J.Universal(name, parent, target, axis1=axis, axis2=Rc @ j.axis2,
                            velocity_limit=j.velocity, effort_limit=j.effort, **common)
    else:  # ball
        joint = J.Ball(name, parent, target, velocity_limit=j.velocity, effort_limit=j.effort,
                       **common)
    tree.add_joint(joint)
    if not exact:
        tree.add_joint(J.Weld(_unique(f"{name}__to_child", taken), target, child,
                              origin=_clean(X_JC)))
    return _Origin(j.name, j.line, origin)


def _make_shape(g: SdfGeometry):
    from .. import geometry as G

    p = g.params
    if g.kind == "box":
        return G.Box(p["size"]), g.pose
    if g.kind == "sphere":
        return G.Sphere(p["radius"]), g.pose
    if g.kind == "cylinder":
        return G.Cylinder(p["radius"], p["length"]), g.pose
    if g.kind == "capsule":
        return G.Capsule(p["radius"], p["length"]), g.pose
    if g.kind == "ellipsoid":
        return G.Ellipsoid(p["radii"]), g.pose
    if g.kind == "plane":
        n = p["normal"]                      # Halfspace z <= 0: rotate z onto the normal
        ref = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        x = ref - (ref @ n) * n
        x /= np.linalg.norm(x)
        X = np.eye(4)
        X[:3, :3] = np.column_stack([x, np.cross(n, x), n])
        return G.Halfspace(), g.pose @ X
    return G.Mesh(p["filename"], scale=p["scale"]), g.pose


def _add_geometry(tree, rd: Reader, body: str, g: SdfGeometry, welded: bool, *,
                  visual: bool) -> None:
    if g.kind == "empty":
        return
    if g.kind == "plane" and not welded:
        raise rd.error_at(g.line, f"link '{body}'", "a <plane> (a halfspace) must belong to a "
                          "static link or one welded to the world")
    try:
        shape, pose = _make_shape(g)
        if visual:
            tree.add_visual_geometry(body, shape, pose=_clean(pose), name=g.name,
                                     material=g.material)
        else:
            tree.add_collision_geometry(body, shape, pose=_clean(pose), name=g.name)
    except (ValueError, TypeError) as exc:
        raise rd.error_at(g.line, f"link '{body}'", str(exc)) from exc

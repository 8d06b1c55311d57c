"""URDF parsing: a URDF file or string -> :class:`~multibody.tree.RigidBodyTree`.

Supported (URDF XML specification, http://wiki.ros.org/urdf/XML):

* ``<link>`` with ``<inertial>`` (mass, inertia about the centre of mass, origin xyz = COM,
  origin rpy = orientation of the inertia frame: ``I_body = R I R^T``), any number of
  ``<visual>`` and ``<collision>`` elements with ``box``, ``sphere``, ``cylinder`` (axis z),
  ``capsule`` (Drake extension, axis z) and ``mesh`` (kept as a :class:`~multibody.geometry.Mesh`
  reference, never loaded) geometry; ``<material>`` (inline or declared at robot level) is
  passed to the visual as ``{"name", "rgba", "texture"}``.
* ``<joint>`` types ``revolute`` -> Revolute, ``continuous`` -> Revolute without position limits,
  ``prismatic`` -> Prismatic, ``fixed`` -> Weld, ``floating`` -> Free, ``planar`` -> Planar with
  the axis as the plane normal.  ``<origin>``, ``<axis>`` (normalized; zero is an error; default
  (1, 0, 0)), ``<limit>`` (lower/upper default 0 and effort/velocity required, as in the
  specification; required for revolute and prismatic joints), ``<dynamics>`` (damping, friction).
  ``<limit>`` on fixed/floating/planar joints, ``<calibration>`` and ``<safety_controller>`` are
  ignored.
* ``<mimic>`` is stored as ``joint.mimic = (other_joint, multiplier, offset)``.  **The dynamics
  ignore it**: the mimicking joint keeps its own independent coordinate.
* The world: a link named ``world`` need not be declared (Drake's convention); a joint whose parent
  is ``world`` attaches its child to ``tree.world``.  Otherwise the single root link is attached
  to the world by a Weld named ``"world_weld"``, or by a Free joint named ``"floating_base"`` when
  ``floating_base=True`` (a suffix ``_1``, ``_2``... is added if the file already uses the name).
  Geometry of a declared world link is attached to the world body; an ``<inertial>`` on it is
  ignored with a :class:`URDFWarning` (as Pinocchio and Drake do).
* Relative mesh file names are resolved against the URDF file's directory; ``package://pkg/...``
  names are resolved through ``package_map`` when it is given and kept verbatim otherwise.
* ``<transmission>``, ``<gazebo>`` and other unknown elements are ignored.

Every problem raises :class:`URDFError` (a ``ValueError``) whose message gives the file (or
``"<string>"``), the line and the element, e.g.
``"arm.urdf, line 42: joint 'elbow': lower limit 2 > upper limit 1"``; nothing else escapes
(malformed XML, unknown encodings and deep nesting included).  Numbers are ASCII decimals
(``float()``'s ``1_0``, full-width or Arabic-Indic digits are refused).  Rotational inertias must
be positive semidefinite (zero is allowed: point masses, massless links). A zero mass with a
nonzero inertia (pybullet's ``cartpole.urdf`` and ``kuka_iiwa/model.urdf``) is kept as written,
as Pinocchio does, with one :class:`URDFWarning` per link (Drake drops it on world-welded links;
a welded link's inertia does not enter the dynamics either way). Principal moments violating the triangle inequality (exporters write such
dummy-link inertias) are repaired with a :class:`URDFWarning` (the two smaller moments are raised
by half the deficit each).  Values whose inertia or mass matrix would overflow in double
precision (huge masses, offsets or sizes) are refused; axes are normalized without overflow.

Shipped models (see :func:`model_path`): ``pendulum``, ``acrobot``, ``arm7``, ``branching``,
``humanoid``, ``quadruped``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from ._urdf_model import WORLD, GeometrySpec, JointSpec, URDFModel, read_model
from ._urdf_xml import Reader, URDFError, URDFWarning, parse_xml
from ._xml import PathOrString, read_source

if TYPE_CHECKING:  # pragma: no cover
    from ..tree import RigidBodyTree

__all__ = ["URDFError", "URDFWarning", "parse_urdf", "read_urdf_model"]

def _read_source(path_or_string: PathOrString) -> tuple[str | bytes, str, str | None]:
    """Return (xml text, source name for messages, directory for relative file names)."""
    return read_source(path_or_string, "URDF", "robot")


def read_urdf_model(path_or_string: PathOrString, *,
                    package_map: Mapping[str, str] | None = None) -> tuple[URDFModel, Reader]:
    """Parse and validate a URDF without building a tree (private helper for parse_urdf)."""
    text, source, base_dir = _read_source(path_or_string)
    rd = Reader(source)
    root = parse_xml(text, source)
    return read_model(root, rd, package_map=package_map, base_dir=base_dir), rd


def parse_urdf(path_or_string: PathOrString, floating_base: bool = False, *,
               package_map: Mapping[str, str] | None = None) -> "RigidBodyTree":
    """Build a :class:`~multibody.tree.RigidBodyTree` from a URDF file or string.

    Parameters
    ----------
    path_or_string : str, bytes or path-like
        A file path, or the URDF XML itself (a string starting with ``<``).
    floating_base : bool
        Attach the root link to the world with a Free joint (``q = [qw,qx,qy,qz,x,y,z]``,
        ``v = [omega; v]`` in the root link frame) instead of a Weld.  Not allowed when the
        file itself attaches its root to the ``world`` link.
    package_map : mapping, optional
        ``{package name: directory}`` used to resolve ``package://`` mesh file names.

    Returns
    -------
    RigidBodyTree
        Not yet finalized: bodies and joints are added in depth-first order from the root
        (children in document order), so more bodies may still be added.

    Raises
    ------
    URDFError
        Malformed document (message: file or ``"<string>"``, line, element, reason).
    FileNotFoundError
        ``path_or_string`` is neither an existing file nor XML text.

    Examples
    --------
    >>> from multibody.parsing import parse_urdf, model_path
    >>> tree = parse_urdf(model_path("acrobot"))
    >>> tree.nq, tree.nv
    (2, 2)
    """
    model, rd = read_urdf_model(path_or_string, package_map=package_map)
    if floating_base and model.root == WORLD:
        j = model.world_joint
        raise rd.error_at(j.line if j is not None else None, f"joint '{j.name}'" if j else "link 'world'",
                          "floating_base=True but the file already attaches its root link "
                          f"'{j.child if j else '?'}' to the world")
    return _build_tree(model, rd, floating_base)


def _unique_name(base: str, taken: set[str]) -> str:
    name, k = base, 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    return name


def _build_tree(model: URDFModel, rd: Reader, floating_base: bool) -> "RigidBodyTree":
    from ..tree import joints as J
    from ..tree import RigidBodyTree

    tree = RigidBodyTree(name=model.name)
    for link in model.links:
        try:
            tree.add_body(link.name, link.mass, com=link.com, inertia=link.inertia)
        except (ValueError, TypeError) as exc:
            raise rd.error_at(link.line, f"link '{link.name}'", str(exc)) from exc
    if model.root != WORLD:
        root = model.links[0].name
        taken = {j.name for j in model.joints}
        if floating_base:
            tree.add_joint(J.Free(_unique_name("floating_base", taken), WORLD, root))
        else:
            tree.add_joint(J.Weld(_unique_name("world_weld", taken), WORLD, root))
    for spec in model.joints:
        try:
            joint = _make_joint(J, spec)
            if spec.mimic is not None:
                joint.mimic = spec.mimic
            tree.add_joint(joint)
        except (ValueError, TypeError, AttributeError) as exc:
            raise rd.error_at(spec.line, f"joint '{spec.name}'", str(exc)) from exc
    links = list(model.links) + ([model.world] if model.world is not None else [])
    for link in links:
        for g in link.collisions:
            _add_geometry(tree, rd, link.name, g, visual=False)
        for g in link.visuals:
            _add_geometry(tree, rd, link.name, g, visual=True)
    return tree


def _make_joint(J, s: JointSpec):
    if s.type == "fixed":
        return J.Weld(s.name, s.parent, s.child, origin=s.origin)
    if s.type == "floating":
        return J.Free(s.name, s.parent, s.child, origin=s.origin,
                      damping=s.damping, friction=s.friction)
    common = dict(origin=s.origin, axis=s.axis, damping=s.damping, friction=s.friction)
    if s.type == "planar":
        return J.Planar(s.name, s.parent, s.child, **common)
    cls = J.Prismatic if s.type == "prismatic" else J.Revolute
    return cls(s.name, s.parent, s.child, lower=s.lower, upper=s.upper,
               velocity_limit=s.velocity, effort_limit=s.effort, **common)


def _make_shape(g: GeometrySpec):
    from .. import geometry as G

    p = g.params
    if g.kind == "box":
        return G.Box(p["size"])
    if g.kind == "sphere":
        return G.Sphere(p["radius"])
    if g.kind == "cylinder":
        return G.Cylinder(p["radius"], p["length"])
    if g.kind == "capsule":
        return G.Capsule(p["radius"], p["length"])
    return G.Mesh(p["filename"], scale=p["scale"])


def _add_geometry(tree, rd: Reader, link_name: str, g: GeometrySpec, *, visual: bool) -> None:
    try:
        shape = _make_shape(g)
        if visual:
            tree.add_visual_geometry(link_name, shape, pose=g.pose, name=g.name, material=g.material)
        else:
            tree.add_collision_geometry(link_name, shape, pose=g.pose, name=g.name)
    except (ValueError, TypeError) as exc:
        raise rd.error_at(g.line, f"link '{link_name}'", str(exc)) from exc

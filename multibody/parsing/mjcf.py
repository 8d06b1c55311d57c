"""MJCF (MuJoCo XML) parsing: a file or string -> :class:`~multibody.tree.RigidBodyTree`,
with the options, actuators and contact data of the model.

:func:`parse_mjcf` returns the tree (gravity from ``<option>``), as :func:`parse_urdf`
does; :func:`read_mjcf_model` returns an :class:`MJCFModel` that also holds the time step,
the actuators and the geoms' contact data; :func:`mjcf_actuators` and :func:`mjcf_contact`
turn those into actuator blocks and a contact constraint for the plants.

Supported (MuJoCo XML reference, https://mujoco.readthedocs.io/en/stable/XMLreference.html):

* ``<body>`` trees with ``hinge`` (-> Revolute), ``slide`` (-> Prismatic), ``ball`` (-> Ball:
  ``q = [qw, qx, qy, qz]``, ``v`` = angular velocity in the body frame, as MuJoCo's) and
  ``free`` / ``<freejoint>`` (-> Free, top-level bodies only) joints; several joints in one
  body become a chain through massless links named ``<body>_<joint>_link`` (the frame
  arithmetic is in :mod:`._mjcf_model`); a body without joints is welded to its parent
  (joint ``<body>_weld``). Joint ``pos``, ``axis``, ``ref``, ``range`` with ``limited``
  (``auto``: limited when a range is given, with ``compiler/autolimits``), ``damping``,
  ``frictionloss`` (-> joint friction), ``armature`` (added to the mass matrix diagonal in
  every algorithm, as MuJoCo does), ``stiffness`` with ``springref`` (hinge and slide).
* Poses: ``pos`` with ``quat``, ``axisangle``, ``euler`` (``compiler/eulerseq``), ``xyaxes`` or
  ``zaxis``; ``<frame>`` elements; angles in degrees unless ``compiler angle="radian"``.
* ``<compiler>``: ``angle``, ``eulerseq``, ``inertiafromgeom`` (``auto``: from the geoms when a
  body has no ``<inertial>``), ``autolimits``, ``settotalmass`` (every mass and inertia scaled),
  ``inertiagrouprange``; ``coordinate="global"`` is refused.
* ``<default>`` classes with inheritance, ``class`` and ``childclass``; ``<include file>``
  (relative to the including file; cycles refused).
* ``<inertial>`` with ``mass``, ``pos``, ``diaginertia`` (and an orientation) or
  ``fullinertia``; otherwise mass properties from the geoms' ``mass`` or ``density`` with
  MuJoCo's formulas (:mod:`._mjcf_geom`).
* Geoms ``sphere``, ``capsule``, ``cylinder``, ``box``, ``ellipsoid``, ``plane`` (->
  Halfspace, static bodies only) with ``size``, ``fromto``, ``pos`` and an orientation: each
  is a visual geometry (``material={"rgba": ...}``) and, unless ``contype`` and
  ``conaffinity`` are both 0, a collision geometry of the same name. ``mesh`` geoms are
  visual only (warned); a mesh whose inertia is needed is refused. Sites -> frames
  (:meth:`~multibody.tree.RigidBodyTree.add_frame`).
* ``<option>`` ``timestep``, ``gravity`` (on the tree), ``integrator``, ``cone``,
  ``noslip_iterations``, ``impratio``, ``o_solref``/``o_solimp`` (with the ``override``
  flag); geom ``solref``, ``solimp``, ``solmix``, ``condim`` and joint ``solreflimit``,
  ``solimplimit`` (MuJoCo's soft constraints, :func:`mjcf_softening`);
  ``<contact><exclude>``; ``<actuator>`` ``motor``, ``position``,
  ``velocity`` and ``general`` (fixed gain, affine bias) on joints.

Unsupported elements and attributes that change the model (tendons, equality constraints,
``<contact><pair>``, height fields, ...) give one :class:`MJCFWarning` per kind; every error
is an :class:`MJCFError` with file, line and element.

Coordinates: our ``q`` is MuJoCo's ``qpos`` joint by joint except the free joint (ours
``[qw, qx, qy, qz, x, y, z]``, MuJoCo's ``[x, y, z, qw, qx, qy, qz]``) and ``v`` is ``qvel``
except the free joint (ours ``[omega; v]`` in the body frame, MuJoCo's ``[v_world;
omega_body]``). Joints are numbered depth first in document order, as in MuJoCo.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ._mjcf_doc import Compiler, Defaults, load_document, read_compiler
from ._mjcf_model import (ActuatorSpec, Options, build_tree, read_actuators, read_excludes,
                          read_options)
from ._xml import PathOrString
from .errors import MJCFError, MJCFWarning

if TYPE_CHECKING:  # pragma: no cover
    from ..tree import RigidBodyTree

__all__ = ["MJCFModel", "MJCFOptions", "MJCFActuator", "parse_mjcf", "read_mjcf_model",
           "mjcf_actuators", "mjcf_collision_filter", "mjcf_contact", "mjcf_joint_limits",
           "mjcf_softening", "MJCFError", "MJCFWarning"]

MJCFOptions = Options
MJCFActuator = ActuatorSpec


@dataclass
class MJCFModel:
    """An MJCF model: the tree and what MuJoCo keeps beside it.

    Attributes
    ----------
    tree : RigidBodyTree
        Not finalized; gravity from ``<option>``.
    name : str
    options : MJCFOptions
        ``timestep``, ``gravity``, ``integrator``, ``cone``, ``noslip_iterations``.
    compiler : Compiler
        The ``<compiler>`` settings read.
    actuators : list of MJCFActuator
        Joint actuators in document order (MuJoCo's ``ctrl`` order).
    geoms : list of (str, GeomData, str)
        Collision geoms: body name, the geom's data (``friction``, ``margin``, ``gap``,
        ``contype``, ``conaffinity``) and its geometry name in the tree.
    excluded_pairs : list of (str, str)
        ``<contact><exclude>`` body pairs.
    qpos0 : ndarray, shape (nq,)
        MuJoCo's initial configuration in our coordinates (hinge and slide at ``ref``, free
        bodies at their pose in the file).
    weld_root, weld_parent : dict
        Body -> the body its weld group hangs from and the parent's group (MuJoCo's
        ``weldid``), for the collision filter.
    joint_solver : dict
        Joint -> ``(solreflimit, solimplimit)`` as given (None where not given).
    """

    tree: "RigidBodyTree"
    name: str
    options: Options
    compiler: Compiler
    actuators: list = field(default_factory=list)
    geoms: list = field(default_factory=list)
    excluded_pairs: list = field(default_factory=list)
    qpos0: np.ndarray = field(default_factory=lambda: np.zeros(0))
    weld_root: dict = field(default_factory=dict)
    weld_parent: dict = field(default_factory=dict)
    joint_solver: dict = field(default_factory=dict)

    @property
    def damping_scheme(self) -> str:
        """The :class:`~multibody.plants.TimeSteppingRigidBodySystem` ``damping_scheme`` of
        this file's integrator: ``"mujoco_euler"`` for ``integrator="Euler"`` (MuJoCo's
        ``mj_Euler``: constraint forces from ``M``, then ``qvel += h (M + h D)^{-1}
        (qfrc_smooth + qfrc_constraint)``), else ``"implicit"``. RK4 and ``implicit`` have no
        matching scheme; ``implicitfast`` takes ``D`` as ``mj_Euler`` does only when the joint
        damping is its sole velocity derivative (no velocity-dependent actuators), so it is
        not mapped; with the ``eulerdamp`` flag disabled MuJoCo takes the damping
        explicitly, which no scheme reproduces (``"implicit"`` is returned)."""
        o = self.options
        if o.integrator == "Euler" and "eulerdamp" not in o.disabled:
            return "mujoco_euler"
        return "implicit"


def read_mjcf_model(path_or_string: PathOrString) -> MJCFModel:
    """Read an MJCF file or string into an :class:`MJCFModel`.

    Parameters
    ----------
    path_or_string : str, bytes or path-like
        A file path, or the XML itself (text starting with ``<``).

    Returns
    -------
    MJCFModel

    Raises
    ------
    MJCFError
        Anything wrong in the document (file, line, element, what was expected).
    FileNotFoundError
        Neither an existing file nor XML text.
    """
    doc = load_document(path_or_string)
    comp = read_compiler(doc)
    defaults = Defaults(doc)
    options = read_options(doc)
    name = doc.root.attrib.get("model", "MuJoCo Model")
    built = build_tree(doc, comp, defaults, name)
    tree = built.tree
    tree.gravity = options.gravity
    joints = {n for n, _ in built.qpos0}
    actuators = read_actuators(doc, comp, defaults, joints)
    excluded = read_excludes(doc, built.body_of)
    try:
        tree.finalize()
    except ValueError as exc:    # pragma: no cover - the walk builds a connected tree
        raise doc.error(doc.root, f"model '{name}'", str(exc)) from None
    q0 = dict(built.qpos0)
    qpos0 = np.concatenate([q0[j.name] if j.name in q0 else j.neutral_configuration()
                            for j in tree.joints] or [np.zeros(0)])
    return MJCFModel(tree, name, options, comp, actuators, built.geoms, excluded, qpos0,
                     built.weld_root, built.weld_parent, built.joint_solver)


def parse_mjcf(path_or_string: PathOrString) -> "RigidBodyTree":
    """Build a :class:`~multibody.tree.RigidBodyTree` from an MJCF file or string.

    Parameters
    ----------
    path_or_string : str, bytes or path-like
        A file path, or the XML itself.

    Returns
    -------
    RigidBodyTree
        Finalized, with ``gravity`` from ``<option>``; :func:`read_mjcf_model` gives the
        time step, actuators and contact data too.

    Raises
    ------
    MJCFError
        Malformed or unsupported document (file, line, element, reason).
    FileNotFoundError
        Neither an existing file nor XML text.

    Examples
    --------
    >>> from multibody.parsing import parse_mjcf
    >>> tree = parse_mjcf('<mujoco><worldbody><body><joint axis="0 1 0"/>'
    ...                   '<geom type="sphere" size="0.1" pos="0 0 -1"/></body></worldbody></mujoco>')
    >>> tree.nq, round(float(tree.mass_matrix([0.0])[0, 0]), 6)
    (1, 4.205545)
    """
    return read_mjcf_model(path_or_string).tree


def mjcf_actuators(model: MJCFModel) -> list:
    """Actuator blocks for the model's joint actuators, one per actuator (its ``command`` is
    MuJoCo's ``ctrl`` of that actuator), in document order.

    * force actuators (``motor``, ``general`` without bias): a
      :class:`~actuators.GeneralizedForceActuator` with gear ratio ``gear * gain``; the
      effort limit is ``|gear| * min(|gain| max|ctrlrange|, max|forcerange|)`` (exact for a
      control range symmetric about 0; an asymmetric one is widened to the symmetric one
      with a warning);
    * every other fixed-gain actuator with an affine bias (``position`` and ``velocity``
      servos, ``general``): an :class:`~actuators.AffineJointActuator` with MuJoCo's force
      ``gain ctrl + b0 + b1 gear q + b2 gear qdot``, its ``ctrlrange`` and ``forcerange``
      clamps and gear, exactly.

    Raises
    ------
    ValueError
        From the actuator blocks (e.g. an effort limit of 0).
    """
    from actuators import AffineJointActuator, GeneralizedForceActuator  # layer above: on call

    import warnings

    tree = model.tree
    out = []
    for a in model.actuators:
        where = f"line {a.line}: actuator '{a.name}'"
        b0, b1, b2 = (float(x) for x in a.bias)
        if b0 == b1 == b2 == 0.0:
            lim = np.inf
            if a.ctrlrange is not None:
                lo, hi = a.ctrlrange
                if lo != -hi:
                    warnings.warn(f"{where}: ctrlrange [{lo:g}, {hi:g}] is not symmetric; the "
                                  "effort limit uses max(|lo|, |hi|)", MJCFWarning, stacklevel=2)
                lim = abs(a.gain) * max(abs(lo), abs(hi))
            if a.forcerange is not None:
                lim = min(lim, max(abs(x) for x in a.forcerange))
            out.append(GeneralizedForceActuator(tree, [a.joint], gear_ratio=a.gear * a.gain,
                                                effort_limit=abs(a.gear) * lim, name=a.name))
        else:
            # servos and general affine actuators: exactly MuJoCo's force, with its clamps
            out.append(AffineJointActuator(
                tree, [a.joint], a.gain, a.bias, gear=a.gear,
                ctrlrange=None if a.ctrlrange is None else [a.ctrlrange],
                forcerange=None if a.forcerange is None else [a.forcerange], name=a.name))
    return out


def mjcf_collision_filter(model: MJCFModel):
    """The :class:`~multibody.geometry.CollisionFilter` of MuJoCo's rules, by body pair:

    geoms of one weld group (bodies welded together) never collide; with MuJoCo's default
    ``filterparent``, neither do a weld group and its parent group unless the parent is the
    world; a pair collides only if ``contype_a & conaffinity_b`` or ``contype_b &
    conaffinity_a`` is nonzero for some geom pair on the two bodies (a body pair with both
    kinds of geom pairs keeps colliding: the filter works on bodies, warned); plus the
    ``<contact><exclude>`` pairs. Returns ``(filter, pair_friction)``: the second maps each
    colliding body pair to MuJoCo's pair friction ``max(mu_a, mu_b)`` of its geoms.
    """
    from ..geometry import CollisionFilter
    import warnings

    f = CollisionFilter(skip_parent_child=False)
    root, parent = model.weld_root, model.weld_parent
    bodies: dict = {}
    for body, g, _ in model.geoms:
        bodies.setdefault(body, []).append(g)
    names = sorted(bodies)
    friction: dict = {}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            ra, rb = root.get(a, a), root.get(b, b)
            if ra == rb or (ra != "world" and rb != "world" and (ra == parent.get(b) or
                                                                 rb == parent.get(a))):
                f.exclude_pair(a, b)
                continue
            ok = [(ga, gb) for ga in bodies[a] for gb in bodies[b]
                  if (ga.contype & gb.conaffinity) or (gb.contype & ga.conaffinity)]
            if not ok:
                f.exclude_pair(a, b)
                continue
            if len(ok) < len(bodies[a]) * len(bodies[b]):
                warnings.warn(f"MJCF model '{model.name}': bodies '{a}' and '{b}' have geom pairs "
                              "that collide and pairs that do not (contype/conaffinity); the "
                              "collision filter works on body pairs, so all of them may collide",
                              MJCFWarning, stacklevel=2)
            friction[(a, b)] = sorted({max(ga.friction, gb.friction) for ga, gb in ok})
    for a, b in model.excluded_pairs:
        f.exclude_pair(a, b)
        friction.pop((min(a, b), max(a, b)), None)
    return f, friction


def mjcf_softening(model: MJCFModel, kind: str, invweight: bool = True,
                   noslip: bool | None = None):
    """The :class:`~multibody.constraints.MuJoCoSoftening` of the model's contacts
    (``kind="contact"``) or joint limits (``kind="limit"``).

    Contacts: MuJoCo's default ``solref``/``solimp`` (``(0.02, 1)``, ``(0.9, 0.95, 0.001,
    0.5, 2)``) for the block, the geoms' own ``solref``/``solimp``/``solmix`` where given
    (default classes applied), or ``option/o_solref``/``o_solimp`` for every contact when the
    ``override`` flag is enabled; the option's ``cone`` and ``impratio``, the largest geom
    ``condim``. Limits: the joints' ``solreflimit``/``solimplimit`` where given. ``refsafe``
    unless the flag is disabled. ``invweight=True`` takes MuJoCo's constant ``Ahat``
    (``dof_invweight0``, ``body_invweight0`` at ``qpos0``,
    :func:`~multibody.constraints.mujoco_invweights`), False the rows' Delassus diagonals.
    ``noslip`` (contacts): MuJoCo's two-stage solve, soft pyramid edges then the hard
    no-slip friction (``MuJoCoSoftening(noslip=True)``); None: as the file asks
    (``option/noslip_iterations > 0``) where the cone is pyramidal and ``condim`` 1 or 3
    (else an :class:`MJCFWarning` and one solve).
    """
    from ..constraints import MuJoCoSoftening, mujoco_invweights

    if kind not in ("contact", "limit"):
        raise ValueError(f"mjcf_softening: kind must be 'contact' or 'limit', got {kind!r}")
    o = model.options
    common = dict(refsafe="refsafe" not in o.disabled)
    weights = mujoco_invweights(model.tree, model.qpos0) if invweight else (None, None)
    if kind == "limit":
        ref = {j: r for j, (r, _) in model.joint_solver.items() if r is not None}
        imp = {j: i for j, (_, i) in model.joint_solver.items() if i is not None}
        return MuJoCoSoftening(element_solref=ref, element_solimp=imp, invweight=weights[0],
                               **common)
    cone = o.cone if o.cone in ("pyramidal", "elliptic") else "pyramidal"
    condim = max((g.condim for _, g, _ in model.geoms), default=3)
    if noslip is None:
        noslip = o.noslip_iterations > 0
        if noslip and (cone != "pyramidal" or condim not in (1, 3)):
            import warnings
            warnings.warn(f"MJCF model '{model.name}': noslip_iterations with cone={cone!r}, "
                          f"condim={condim} is not reproduced (MuJoCo's no-slip stage needs the "
                          "pyramidal cone and condim 1 or 3 here); one contact solve",
                          MJCFWarning, stacklevel=3)
            noslip = False
    common["noslip"] = bool(noslip)
    if "override" in o.enabled:
        return MuJoCoSoftening(solref=tuple(o.o_solref), solimp=tuple(o.o_solimp),
                               invweight=weights[1], cone=cone, impratio=o.impratio,
                               condim=condim, **common)
    return MuJoCoSoftening(
        element_solref={n: g.solref for _, g, n in model.geoms if g.solref is not None},
        element_solimp={n: g.solimp for _, g, n in model.geoms if g.solimp is not None},
        element_solmix={n: g.solmix for _, g, n in model.geoms}, invweight=weights[1],
        cone=cone, impratio=o.impratio, condim=condim, **common)


def mjcf_joint_limits(model: MJCFModel, softening: str | None = "mujoco", **options):
    """A :class:`~multibody.constraints.JointLimitConstraint` over the model's limited
    joints (None when there are none), with MuJoCo's soft limits (:func:`mjcf_softening`)
    unless ``softening=None`` (then ``options`` such as ``erp`` apply). ``options`` go to the
    constraint (``name``, ...)."""
    from ..constraints import JointLimitConstraint

    limited = [j.name for j in model.tree.joints if j.nq == j.nv and j.nv > 0 and (
        np.any(np.isfinite(j.lower)) or np.any(np.isfinite(j.upper)))]
    if not limited:
        return None
    if softening == "mujoco":
        options.setdefault("mujoco", mjcf_softening(model, "limit"))
    elif softening is not None:
        raise ValueError(f"mjcf_joint_limits: softening must be 'mujoco' or None, got "
                         f"{softening!r}")
    options.setdefault("name", "joint_limits")
    return JointLimitConstraint(model.tree, limited, **options)


def mjcf_contact(model: MJCFModel, softening: str | None = "mujoco",
                 noslip: bool | None = None, **options):
    """A :class:`~multibody.constraints.PointContactConstraint` over the model's collision
    geoms with MuJoCo's filter (:func:`mjcf_collision_filter`), friction, margins and soft
    contacts.

    The constraint has one friction coefficient: MuJoCo's pair value ``max(mu_a, mu_b)``
    when every colliding pair has the same, else the largest with an :class:`MJCFWarning`.
    Each geom's ``margin - gap`` is passed as its contact margin (a pair is in contact from
    the sum of its two geoms' values on, MuJoCo's ``includemargin``). ``softening="mujoco"`` (default)
    gives the normal rows MuJoCo's ``solref``/``solimp`` (:func:`mjcf_softening`; friction
    stays hard, as with MuJoCo's ``noslip``); ``None`` the constraint's ERP/CFM. ``noslip``
    (with ``softening="mujoco"``): MuJoCo's two-stage solve, soft pyramid edges then the hard
    no-slip friction (:func:`mjcf_softening`; None: as the file's ``noslip_iterations``).
    ``options`` go to the constraint (``num_directions``, ``erp``, ...).

    Raises
    ------
    ValueError
        No pair of geoms may collide; an unknown ``softening``.
    """
    from ..constraints import PointContactConstraint
    import warnings

    f, pair_friction = mjcf_collision_filter(model)
    values = sorted({v for vs in pair_friction.values() for v in vs})
    mu = values[-1] if values else 1.0
    if len(values) > 1:
        warnings.warn(f"MJCF model '{model.name}': colliding geom pairs have friction "
                      f"coefficients {values}; the contact block has one, {mu:g}",
                      MJCFWarning, stacklevel=2)
    margins = {name: max(g.margin - g.gap, 0.0) for _, g, name in model.geoms}
    if any(margins.values()):
        options.setdefault("geometry_margins", margins)
    if softening == "mujoco":
        options.setdefault("mujoco", mjcf_softening(model, "contact", noslip=noslip))
    elif softening is not None:
        raise ValueError(f"mjcf_contact: softening must be 'mujoco' or None, got {softening!r}")
    return PointContactConstraint(model.tree, mu, collision_filter=f, **options)

"""``RigidBodyTree``: bodies, joints, frames and geometry of a kinematic tree, and its
kinematics/dynamics algorithms (the methods live in :mod:`multibody.tree._algorithms`). A tree
is also a System block (:mod:`multibody.tree.tree_system`): input ``generalized_force`` (nv),
output ``state`` (nq + nv), declared when the topology is frozen.

Building
--------
>>> import numpy as np
>>> from multibody import RigidBodyTree, Revolute
>>> tree = RigidBodyTree("pendulum")
>>> _ = tree.add_body("link", mass=1.0, com=(0, 0, -0.5), inertia=np.eye(3) * 0.01)
>>> _ = tree.add_joint(Revolute("hinge", "world", "link", axis=(0, 1, 0)))
>>> tree.nq, tree.nv
(1, 1)

Ordering (fixed by :meth:`RigidBodyTree.finalize`): joints depth-first from the world (children
in the order added), bodies world first then the child of each joint; each joint knows its
``q_start``/``v_start``.

Algorithms (numpy in, numpy out; CasADi SX/MX in, expression out)
-----------------------------------------------------------------
Kinematics: ``body_pose``, ``relative_transform``, ``frame_velocity``,
``frame_acceleration``, ``jacobian``, ``jacobian_dot_times_v``, ``center_of_mass``,
``center_of_mass_jacobian``, ``momentum_matrix``. Dynamics: ``inverse_dynamics`` (RNEA),
``mass_matrix`` (CRBA), ``forward_dynamics`` (ABA), ``bias_forces``, ``gravity_forces``,
``coriolis_matrix``, ``kinetic_energy``, ``potential_energy``, ``joint_passive_forces``.
Configuration: ``qdot``, ``integrate``, ``difference``, ``normalize_configuration``.
Each is traced once into a ``casadi.Function`` (``casadi_function``) and evaluated through
compiled C code (``compile``; see the ``backend`` argument). Body masses, inertias and joint
origins are read when a function is first built: change them before the first call.
Numeric arguments with a leading batch axis (``(N, nq)``, ``(N, nv)``) evaluate N states in
one call and return ``(N, nv)`` / ``(N, nv, nv)`` (see :mod:`multibody.tree._algorithms`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from solvers import ops

from . import spatial
from ._joint_base import Joint
from ._algorithms import AlgorithmsMixin
from .tree_system import TreeSystem
from ..errors import BodyError, FrameError, JointError, SingularMassMatrixError, TreeError

__all__ = ["RigidBodyTree", "Body", "Frame", "GeometryInstance", "register_file_loader"]

_FILE_LOADERS: dict = {}


def register_file_loader(kind: str, loader) -> None:
    """Register ``loader(path_or_string, floating_base=...) -> RigidBodyTree`` for the file
    kind ``kind`` (``"urdf"``, ``"sdf"``, ``"mjcf"``), used by :meth:`RigidBodyTree.from_urdf`,
    :meth:`~RigidBodyTree.from_sdf`, :meth:`~RigidBodyTree.from_mjcf` and
    :meth:`~RigidBodyTree.from_file`. The parsers register
    themselves on import, so the tree layer needs no import of the layer above it."""
    _FILE_LOADERS[str(kind)] = loader


@dataclass(eq=False)
class GeometryInstance:
    """A shape attached to a body: ``name``, ``body`` (name), ``shape``, ``pose`` (4 x 4 in
    the body frame) and, for visual geometry, an optional ``material``."""

    name: str
    body: str
    shape: Any
    pose: np.ndarray
    material: Any = None


@dataclass(eq=False)
class Frame:
    """A named frame fixed on a body: ``pose`` (4 x 4) of the frame in the body frame."""

    name: str
    body: str
    pose: np.ndarray


@dataclass(eq=False)
class Body:
    """A rigid body: ``mass`` (kg), ``com`` (3,) in the body frame and ``inertia`` (3 x 3)
    rotational inertia about the COM in body-frame axes."""

    name: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    collision_geometries: list[GeometryInstance] = field(default_factory=list)
    visual_geometries: list[GeometryInstance] = field(default_factory=list)
    index: int | None = None
    parent_joint: Joint | None = None

    def spatial_inertia(self) -> np.ndarray:
        """Spatial inertia (6 x 6) at the body origin (Featherstone eq. 2.63)."""
        return spatial.spatial_inertia(self.mass, self.com, self.inertia)


def _check_pose(T: Any, what: str) -> np.ndarray:
    T = np.asarray(T, dtype=float)
    if T.shape != (4, 4) or not np.all(np.isfinite(T)):
        raise ValueError(f"{what}: pose must be a finite 4x4 matrix, got shape {T.shape}")
    R = T[:3, :3]
    if not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0 or \
            not np.allclose(T[3], [0, 0, 0, 1]):
        raise ValueError(f"{what}: pose is not a rigid transform")
    return T.copy()


class RigidBodyTree(AlgorithmsMixin, TreeSystem):
    """A kinematic tree of rigid bodies rooted at the fixed body ``world``, and a System block
    (:class:`~multibody.tree.tree_system.TreeSystem`: ``generalized_force`` in, ``state`` out).

    Parameters
    ----------
    name : str
        Name used in error messages, and the block's name ('.' replaced by '_').
    gravity : (3,) array_like
        Gravitational acceleration in the world frame (default (0, 0, -9.81)).
    backend : {"auto", "c", "casadi"}
        Numeric evaluation path of the algorithms (see :mod:`multibody.tree._functions`):
        ``"auto"`` evaluates with CasADi's virtual machine for the first
        ``compile_after`` calls of each function and then compiles it to C (falling back
        to CasADi without a compiler); ``"c"`` compiles at the first call; ``"casadi"``
        never compiles.
    compile_after : int
        Number of numeric calls of a function before ``"auto"`` compiles it.
    """

    def __init__(self, name: str = "robot", gravity: Any = (0.0, 0.0, -9.81), *,
                 backend: str = "auto", compile_after: int = 50) -> None:
        if backend not in ("auto", "c", "casadi"):
            raise ValueError(f"tree '{name}': backend must be 'auto', 'c' or 'casadi', "
                             f"got {backend!r}")
        super().__init__(name)
        g = np.asarray(gravity, dtype=float).ravel()
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError(f"tree '{name}': gravity must be a finite 3-vector")
        self._gravity = g
        self.backend = backend
        self.compile_after = int(compile_after)
        self.world = Body("world", 0.0, np.zeros(3), np.zeros((3, 3)), index=0)
        self._bodies: dict[str, Body] = {"world": self.world}
        self._joints: dict[str, Joint] = {}
        self._frames: dict[str, Frame] = {}
        self._finalized = False
        self._singular_joints: tuple = ()
        self._reset()

    def _reset(self) -> None:
        self._finalized = False
        self._joint_order: list[Joint] = []
        self._body_order: list[Body] = []
        # built lazily: the algorithms' FunctionCache (_functions), the block's dynamics
        self._functions = self._block_functions = None

    @property
    def gravity(self) -> np.ndarray:
        """Gravity (3,) in the world frame (setting it invalidates the built functions)."""
        return self._gravity.copy()

    @gravity.setter
    def gravity(self, g: Any) -> None:
        g = np.asarray(g, dtype=float).ravel()
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError(f"tree '{self.name}': gravity must be a finite 3-vector")
        self._gravity = g
        self._functions = self._block_functions = None

    def joint_coordinates(self, joints: Any = None, *, one_dof: bool = False,
                          who: str = "") -> tuple[list[Joint], np.ndarray, np.ndarray]:
        """Resolve joint names to ``(joints, q_indices, v_indices)`` (every coordinate of
        each joint, in the order given; default all joints with velocity coordinates).

        Parameters
        ----------
        joints : str or sequence of str, optional
        one_dof : bool
            Require joints with exactly one position and one velocity coordinate.
        who : str
            How error messages name the caller (e.g. ``"Encoder 'enc'"``).

        Raises
        ------
        ValueError
            An unknown joint, one without velocity coordinates, or (``one_dof``) one with
            several coordinates; the message starts with ``who``.
        """
        self.finalize()
        prefix = f"{who}: " if who else ""
        if joints is None:
            chosen = [j for j in self._joint_order if j.nv]
        else:
            chosen = []
            for name in ([joints] if isinstance(joints, str) else list(joints)):
                j = self._joints.get(name) if isinstance(name, str) else None
                if j is None:
                    raise ValueError(f"{prefix}tree '{self.name}' has no joint named {name!r}")
                if j.nv == 0:
                    raise ValueError(f"{prefix}joint '{name}' ({j.type}) has no velocity "
                                     "coordinate")
                if one_dof and (j.nq != 1 or j.nv != 1):
                    raise ValueError(f"{prefix}joint '{name}' ({j.type}) is not a one-DOF joint "
                                     f"(nq = {j.nq}, nv = {j.nv})")
                chosen.append(j)
        qi = [j.q_start + k for j in chosen for k in range(j.nq)]
        vi = [j.v_start + k for j in chosen for k in range(j.nv)]
        return chosen, np.array(qi, dtype=int), np.array(vi, dtype=int)

    def set_joint_armature(self, joint: str, armature: Any) -> None:
        """Set the armature (reflected rotor inertia ``N^2 J_rotor``, >= 0) of every velocity
        coordinate of ``joint`` (scalar or (nv,)); invalidates the built functions, so set it
        before plants are built on this tree (they keep the functions they were built with).

        Raises
        ------
        JointError
            An unknown joint, or an armature of the wrong size or negative.
        """
        j = self.get_joint(joint)
        a = np.asarray(armature, dtype=float)
        a = np.full(j.nv, float(a)) if a.ndim == 0 else a.ravel()
        if a.shape[0] != j.nv or not np.all(np.isfinite(a)) or np.any(a < 0):
            raise JointError(f"tree '{self.name}': armature of joint '{joint}' must be finite, "
                             f">= 0 and of size nv = {j.nv}, got {armature!r}")
        j.armature = a
        self._functions = self._block_functions = None

    # ------------------------------------------------------------------ building
    def add_body(self, name: str, mass: float, com: Any = (0.0, 0.0, 0.0),
                 inertia: Any = None) -> Body:
        """Add a body; ``inertia`` is the 3 x 3 rotational inertia about the COM in the body
        frame (symmetric, positive semidefinite, triangle inequality)."""
        self._check_not_frozen(f"add_body('{name}')")
        if not isinstance(name, str) or not name:
            raise BodyError(f"tree '{self.name}': body name must be a non-empty string, "
                            f"got {name!r}")
        if name in self._bodies or name in self._frames:
            raise BodyError(f"tree '{self.name}': duplicate body or frame name '{name}'")
        m = float(mass)
        if not np.isfinite(m) or m < 0:
            raise BodyError(f"body '{name}': mass must be finite and >= 0, got {mass!r}")
        c = np.asarray(com, dtype=float).ravel()
        if c.shape != (3,) or not np.all(np.isfinite(c)):
            raise BodyError(f"body '{name}': com must be a finite 3-vector, got {com!r}")
        I = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float)
        if I.shape != (3, 3) or not np.all(np.isfinite(I)):
            raise BodyError(f"body '{name}': inertia must be a finite 3x3 matrix")
        scale = max(1.0, float(np.max(np.abs(I))))
        if not np.allclose(I, I.T, atol=1e-12 * scale):
            raise BodyError(f"body '{name}': inertia is not symmetric:\n{I}")
        I = 0.5 * (I + I.T)
        ev = np.linalg.eigvalsh(I)
        tol = 1e-12 * scale
        if ev[0] < -tol:
            raise BodyError(f"body '{name}': inertia is not positive semidefinite "
                            f"(eigenvalues {ev})")
        if ev[0] + ev[1] < ev[2] - tol:
            raise BodyError(f"body '{name}': inertia violates the triangle inequality "
                            f"(principal moments {ev}: I1 + I2 >= I3 required)")
        body = Body(name, m, c, I)
        self._bodies[name] = body
        self._reset()
        return body

    def add_joint(self, joint: Joint) -> Joint:
        """Add a joint connecting two existing bodies (``joint.parent`` -> ``joint.child``)."""
        if not isinstance(joint, Joint):
            raise TypeError(f"tree '{self.name}': add_joint expects a Joint, got "
                            f"{type(joint).__name__}")
        self._check_not_frozen(f"add_joint('{joint.name}')")
        if joint.name in self._joints:
            raise JointError(f"tree '{self.name}': duplicate joint name '{joint.name}'")
        for role in ("parent", "child"):
            b = getattr(joint, role)
            if b not in self._bodies:
                raise JointError(f"joint '{joint.name}': unknown {role} body '{b}' in tree "
                                 f"'{self.name}' (add it with add_body first)")
        if joint.child == "world":
            raise JointError(f"joint '{joint.name}': the world cannot be a child body")
        for other in self._joints.values():
            if other.child == joint.child:
                raise JointError(f"joint '{joint.name}': body '{joint.child}' already has "
                                 f"parent joint '{other.name}' (a tree allows one)")
        self._joints[joint.name] = joint
        self._reset()
        return joint

    def add_frame(self, name: str, body: str, pose: Any = None) -> Frame:
        """Add a named frame fixed on ``body`` with ``pose`` (4 x 4) in the body frame."""
        if not isinstance(name, str) or not name:
            raise FrameError(f"tree '{self.name}': frame name must be a non-empty string")
        if name in self._frames or name in self._bodies:
            raise FrameError(f"tree '{self.name}': duplicate frame or body name '{name}'")
        self._body_or_raise(body)
        T = _check_pose(np.eye(4) if pose is None else pose, f"frame '{name}'")
        frame = Frame(name, body, T)
        self._frames[name] = frame  # built functions stay valid: they are keyed by frame
        return frame

    def add_collision_geometry(self, body: str, shape: Any, pose: Any = None,
                               name: str | None = None) -> GeometryInstance:
        """Attach a collision shape to ``body`` at ``pose`` (4 x 4 in the body frame)."""
        b = self._body_or_raise(body)
        nm = name or f"{body}_collision_{len(b.collision_geometries)}"
        g = GeometryInstance(nm, body, shape,
                             _check_pose(np.eye(4) if pose is None else pose, f"geometry '{nm}'"))
        b.collision_geometries.append(g)
        return g

    def add_visual_geometry(self, body: str, shape: Any, pose: Any = None,
                            name: str | None = None, material: Any = None) -> GeometryInstance:
        """Attach a visual shape (with an optional ``material``) to ``body``."""
        b = self._body_or_raise(body)
        nm = name or f"{body}_visual_{len(b.visual_geometries)}"
        g = GeometryInstance(nm, body, shape,
                             _check_pose(np.eye(4) if pose is None else pose, f"geometry '{nm}'"),
                             material)
        b.visual_geometries.append(g)
        return g

    @classmethod
    def _load(cls, kind: str, path_or_string, **options) -> "RigidBodyTree":
        loader = _FILE_LOADERS.get(kind)
        if loader is None:
            raise TreeError(f"no {kind.upper()} loader is registered: import multibody.parsing")
        return loader(path_or_string, **options)

    @classmethod
    def from_urdf(cls, path_or_string: str, floating_base: bool = False) -> "RigidBodyTree":
        """Parse a URDF file or string with the registered loader
        (:func:`multibody.parsing.parse_urdf`, registered when :mod:`multibody` is imported;
        the tree layer does not import the parsers, which sit above it).

        Raises
        ------
        TreeError
            When no URDF loader is registered."""
        return cls._load("urdf", path_or_string, floating_base=floating_base)

    @classmethod
    def from_sdf(cls, path_or_string: str, floating_base: bool | None = None) -> "RigidBodyTree":
        """Parse an SDFormat file or string (:func:`multibody.parsing.parse_sdf`).

        Parameters
        ----------
        path_or_string : str or path-like
            A ``.sdf`` file, or the XML text itself.
        floating_base : bool or None
            None (default): as the file says (a model not welded to the world gets a free
            joint, as in Drake and Gazebo); True or False forces it.

        Raises
        ------
        SDFError
            A malformed document (file, line, element and what was expected).
        TreeError
            When no SDFormat loader is registered."""
        return cls._load("sdf", path_or_string, floating_base=floating_base)

    @classmethod
    def from_mjcf(cls, path_or_string: str) -> "RigidBodyTree":
        """Parse an MJCF (MuJoCo XML) file or string (:func:`multibody.parsing.parse_mjcf`).

        Raises
        ------
        MJCFError
            A malformed document (file, line, element and what was expected).
        TreeError
            When no MJCF loader is registered."""
        return cls._load("mjcf", path_or_string)

    @classmethod
    def from_file(cls, path, **options) -> "RigidBodyTree":
        """Load a model file, choosing the reader by its extension: ``.urdf`` (URDF),
        ``.sdf`` (SDFormat), ``.xml`` or ``.mjcf`` (MJCF); ``options`` go to that reader
        (``floating_base=`` for URDF and SDFormat).

        Raises
        ------
        TreeError
            An extension that names none of these formats."""
        ext = os.path.splitext(os.fspath(path))[1].lower()
        kind = {".urdf": "urdf", ".sdf": "sdf", ".xml": "mjcf", ".mjcf": "mjcf"}.get(ext)
        if kind is None:
            raise TreeError(f"cannot tell the format of model file {os.fspath(path)!r} from its "
                            "extension: expected .urdf, .sdf, .xml or .mjcf")
        return cls._load(kind, path, **options)

    # ------------------------------------------------------------------ topology
    def _check_not_frozen(self, what: str) -> None:
        if self._finalized:
            raise TreeError(f"tree '{self.name}': {what} after the topology was frozen (by "
                            "finalize(), the first algorithm call, or a plant or constraint "
                            "built on the tree); add every body and joint first, or build a "
                            "new tree")

    @property
    def is_finalized(self) -> bool:
        """Whether the topology is frozen (bodies and joints can no longer be added; frames
        and geometry still can)."""
        return self._finalized

    def finalize(self) -> "RigidBodyTree":
        """Check the topology, order joints depth-first from the world and freeze it.

        Called explicitly, or implicitly by the first algorithm call (``nq``, ``mass_matrix``,
        ...), by every plant or constraint built on the tree and by the first use of the tree
        as a System (its ports, a context); it declares the block's state and ports. Afterwards
        :meth:`add_body` and :meth:`add_joint` raise :class:`TreeError`; frames and
        collision/visual geometry may still be added.

        Raises
        ------
        TreeError
            When a body has no parent joint or is not connected to the world (which is also
            how a cycle shows up: every body has at most one parent joint).
        """
        if self._finalized:
            return self
        children: dict[str, list[Joint]] = {n: [] for n in self._bodies}
        for j in self._joints.values():
            children[j.parent].append(j)
        order: list[Joint] = []
        stack = list(reversed(children["world"]))
        seen = {"world"}
        while stack:
            j = stack.pop()
            if j.child in seen:  # cannot happen with one parent per body; defensive
                raise TreeError(f"tree '{self.name}': cycle through joint '{j.name}'")
            seen.add(j.child)
            order.append(j)
            stack.extend(reversed(children[j.child]))
        missing = [n for n in self._bodies if n not in seen]
        if missing:
            parentless = [n for n in missing if not any(j.child == n for j in
                                                        self._joints.values())]
            if parentless:
                raise TreeError(f"tree '{self.name}': body '{parentless[0]}' has no parent "
                                "joint (every body but 'world' needs exactly one)")
            raise TreeError(f"tree '{self.name}': bodies {missing} are not connected to "
                            "'world' (their joints form a cycle)")
        qs = vs = 0
        bodies = [self.world]
        for k, j in enumerate(order):
            j.q_start, j.v_start = qs, vs
            qs += j.nq
            vs += j.nv
            b = self._bodies[j.child]
            b.index = k + 1
            b.parent_joint = j
            bodies.append(b)
        self._joint_order = order
        self._body_order = bodies
        self._nq, self._nv = qs, vs
        self._parent_index = [-1] + [self._bodies[j.parent].index for j in order]
        self._finalized = True
        self._warn_singular_joints()
        self._declare_block()
        return self

    def _warn_singular_joints(self) -> None:
        """Warn about joints that move no mass or inertia at the neutral configuration
        (a zero diagonal of H: forward dynamics would divide by zero there)."""
        if not self._nv:
            return
        import warnings
        from .dynamics import mass_matrix
        d = np.diag(mass_matrix(self, self.neutral_configuration()))
        bad = [j.name for j in self._joint_order for k in range(j.nv)
               if d[j.v_start + k] <= 1e-12 * max(1.0, float(np.max(d)))]
        self._singular_joints = tuple(sorted(set(bad)))
        if bad:
            warnings.warn(f"tree '{self.name}': joints {sorted(set(bad))} move no mass or "
                          "inertia at the neutral configuration; the mass matrix is singular "
                          "there and forward dynamics will fail", RuntimeWarning, stacklevel=3)

    def _refuse_singular(self, *args) -> None:
        """:class:`SingularMassMatrixError` for numeric arguments when joints move no mass or
        inertia (found at :meth:`finalize`: ABA would return inf or NaN); symbolic ones pass."""
        self.finalize()
        if self._singular_joints and not any(ops.is_symbolic(a) for a in args):
            raise SingularMassMatrixError(
                f"tree '{self.name}': the mass matrix is singular: joints "
                f"{list(self._singular_joints)} move no mass or inertia (give their child "
                "links mass or rotational inertia, or weld them)")

    def _body_or_raise(self, name: str) -> Body:
        try:
            return self._bodies[name]
        except (KeyError, TypeError):
            raise BodyError(f"tree '{self.name}' has no body named {name!r}") from None

    # ------------------------------------------------------------------ introspection
    @property
    def nq(self) -> int:
        """Number of configuration coordinates."""
        return self.finalize()._nq

    @property
    def nv(self) -> int:
        """Number of velocity coordinates."""
        return self.finalize()._nv

    @property
    def parent_indices(self) -> list[int]:
        """Index of the parent body of every body, in body-index order (``-1`` for the world)."""
        return list(self.finalize()._parent_index)

    @property
    def spatial_inertias(self) -> list[np.ndarray]:
        """Spatial inertia (6 x 6, body frame, [angular; linear]) of every body, in body-index
        order."""
        return [b.spatial_inertia() for b in self.finalize()._body_order]

    @property
    def joints(self) -> list[Joint]:
        """Joints in depth-first order."""
        return list(self.finalize()._joint_order)

    @property
    def bodies(self) -> list[Body]:
        """Bodies: world first, then the child of each joint in joint order."""
        return list(self.finalize()._body_order)

    @property
    def frames(self) -> list[Frame]:
        """Extra frames added with :meth:`add_frame`."""
        return list(self._frames.values())

    def get_body(self, name: str) -> Body:
        """The body called ``name``."""
        return self._body_or_raise(name)

    def get_joint(self, name: str) -> Joint:
        """The joint called ``name``."""
        try:
            return self._joints[name]
        except (KeyError, TypeError):
            raise JointError(f"tree '{self.name}' has no joint named {name!r}") from None

    def get_frame(self, name: str) -> Frame:
        """The frame called ``name``; a body name gives the body frame (identity pose)."""
        if name in self._frames:
            return self._frames[name]
        if name in self._bodies:
            return Frame(name, name, np.eye(4))
        raise FrameError(f"tree '{self.name}' has no frame or body named {name!r}")

    def total_mass(self) -> float:
        """Sum of the body masses."""
        return float(sum(b.mass for b in self._bodies.values()))

    def subtree_mass(self, body: str) -> float:
        """Mass of ``body`` and all its descendants."""
        self.finalize()
        root = self._body_or_raise(body)
        total, stack = 0.0, [root.name]
        kids: dict[str, list[str]] = {}
        for j in self._joint_order:
            kids.setdefault(j.parent, []).append(j.child)
        while stack:
            n = stack.pop()
            total += self._bodies[n].mass
            stack.extend(kids.get(n, []))
        return total

    def neutral_configuration(self) -> np.ndarray:
        """Concatenated joint neutral configurations (nq,)."""
        return np.concatenate([j.neutral_configuration() for j in self.joints] or [np.zeros(0)])

    def random_configuration(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """Concatenated joint random configurations (nq,) drawn from ``rng``."""
        rng = np.random.default_rng() if rng is None else rng
        return np.concatenate([j.random_configuration(rng) for j in self.joints]
                              or [np.zeros(0)])

    def position_limits(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` (nq,) position limits (+-inf when unlimited)."""
        js = self.joints
        return (np.concatenate([j.lower for j in js] or [np.zeros(0)]),
                np.concatenate([j.upper for j in js] or [np.zeros(0)]))

    def velocity_limits(self) -> np.ndarray:
        """Velocity limits (nv,)."""
        return np.concatenate([j.velocity_limit for j in self.joints] or [np.zeros(0)])

    def effort_limits(self) -> np.ndarray:
        """Effort limits (nv,)."""
        return np.concatenate([j.effort_limit for j in self.joints] or [np.zeros(0)])

    def __repr__(self) -> str:
        return (f"RigidBodyTree(name={self.name!r}, bodies={len(self._bodies)}, "
                f"joints={len(self._joints)})")

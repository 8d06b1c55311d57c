"""What the viewer draws, as plain data: one :class:`VisualItem` per geometry, and body poses.

:func:`visual_items` reads a :class:`~multibody.RigidBodyTree`'s visual geometry (and, for a
body that has none, its collision geometry) into a list of :class:`VisualItem`: the shape kind
and size, the pose in the body frame and a colour. :func:`body_poses` gives the world pose of
every body at a configuration ``q`` (forward kinematics, Featherstone 2008, sec. 4.1:
``X_W,i = X_W,lambda(i) X_lambda(i),i(q_i)``) in numpy, :class:`BodyPoseFunction` the same
in one compiled call, :func:`pose_quaternions` the poses as positions and ``[w, x, y, z]``
quaternions (what a browser scene takes). None of this needs
the optional viewer library; mesh files are read through ``trimesh`` only when drawn
(:func:`mesh_arrays`).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, Optional

import casadi as ca
import numpy as np

from solvers.compiled import CompiledFunction
from ..geometry import Box, Capsule, Cylinder, Halfspace, Mesh, Sphere
from ..tree import kinematics
from .errors import INSTALL_HINT, ViewerUnavailableError, VisualizationError

__all__ = ["VisualItem", "visual_items", "body_poses", "BodyPoseFunction", "pose_quaternions",
           "capsule_mesh", "mesh_arrays", "DEFAULT_COLORS"]

#: Colours (RGB, 0-255) given in turn to the bodies whose geometry names none.
DEFAULT_COLORS = ((90, 140, 220), (230, 140, 50), (110, 180, 90), (200, 90, 110),
                  (150, 110, 200), (90, 190, 190), (210, 190, 80), (140, 140, 140))
GROUND_COLOR = (200, 200, 200)


@dataclass(frozen=True, eq=False)
class VisualItem:
    """One drawable geometry fixed on a body.

    Attributes
    ----------
    name : str
        Geometry name (unique within its body).
    body : str
        Body the geometry is fixed on.
    kind : str
        ``"box"``, ``"sphere"``, ``"cylinder"``, ``"capsule"``, ``"mesh"`` or ``"halfspace"``.
    size : tuple of float
        Box: full side lengths ``(lx, ly, lz)``; sphere: ``(radius,)``; cylinder and capsule:
        ``(radius, length)`` (axis z); mesh: the scale ``(sx, sy, sz)``; halfspace: ``()``.
    pose : ndarray, shape (4, 4)
        Pose of the geometry in the body frame.
    color : tuple of 3 int
        RGB, 0-255.
    opacity : float
        1 is opaque.
    filename : str or None
        The mesh file (``kind == "mesh"``).
    source : str
        ``"visual"``, or ``"collision"`` when the body had no visual geometry.
    """

    name: str
    body: str
    kind: str
    size: tuple
    pose: np.ndarray
    color: tuple
    opacity: float = 1.0
    filename: Optional[str] = None
    source: str = "visual"


def _color(material: Any, default: tuple) -> tuple:
    """RGB (0-255) and opacity from a URDF material dict (``rgba`` in 0-1) or an RGB(A)
    sequence in 0-1; ``default`` otherwise."""
    rgba = material.get("rgba") if isinstance(material, dict) else material
    try:
        c = np.asarray(rgba, dtype=float).ravel()
    except (TypeError, ValueError):
        return default, 1.0
    if c.shape not in ((3,), (4,)) or not np.all(np.isfinite(c)):
        return default, 1.0
    c = np.clip(c, 0.0, 1.0)
    rgb = tuple(int(round(255 * x)) for x in c[:3])
    return rgb, float(c[3]) if c.size == 4 else 1.0


def _kind_and_size(shape: Any, where: str) -> tuple:
    if isinstance(shape, Box):
        return "box", tuple(float(x) for x in shape.size)
    if isinstance(shape, Sphere):
        return "sphere", (shape.radius,)
    if isinstance(shape, Capsule):
        return "capsule", (shape.radius, shape.length)
    if isinstance(shape, Cylinder):
        return "cylinder", (shape.radius, shape.length)
    if isinstance(shape, Mesh):
        return "mesh", tuple(float(x) for x in shape.scale)
    if isinstance(shape, Halfspace):
        return "halfspace", ()
    raise VisualizationError(f"{where}: shape {shape!r} cannot be drawn (expected a Box, "
                             "Sphere, Cylinder, Capsule, Mesh or Halfspace)")


def visual_items(tree, collision_fallback: bool = True) -> list:
    """The geometry a viewer draws for ``tree``, body by body (``tree.bodies`` order).

    Parameters
    ----------
    tree : RigidBodyTree
    collision_fallback : bool
        Draw a body's collision geometry when it has no visual geometry.

    Returns
    -------
    list of VisualItem

    Raises
    ------
    VisualizationError
        A shape the viewer cannot draw (names the body and geometry).
    """
    items = []
    k = 0
    for body in tree.bodies:
        geoms, source = body.visual_geometries, "visual"
        if not geoms and collision_fallback:
            geoms, source = body.collision_geometries, "collision"
        if geoms and body.name != "world":
            default = DEFAULT_COLORS[k % len(DEFAULT_COLORS)]
            k += 1
        else:
            default = GROUND_COLOR
        for g in geoms:
            where = f"tree '{tree.name}' body '{body.name}' geometry '{g.name}'"
            kind, size = _kind_and_size(g.shape, where)
            color, opacity = _color(g.material, default)
            items.append(VisualItem(g.name, body.name, kind, size,
                                    np.array(g.pose, dtype=float), color, opacity,
                                    getattr(g.shape, "filename", None), source))
    return items


def _checked_q(tree, q) -> np.ndarray:
    q = np.asarray(q, dtype=float).ravel()
    if q.shape != (tree.nq,):
        raise VisualizationError(f"tree '{tree.name}': q has size {q.size}, expected "
                                 f"nq = {tree.nq}")
    if not np.all(np.isfinite(q)):
        raise VisualizationError(f"tree '{tree.name}': q is not finite at entries "
                                 f"{np.flatnonzero(~np.isfinite(q)).tolist()}")
    return q


def body_poses(tree, q) -> np.ndarray:
    """World poses of all bodies at ``q``, by numpy forward kinematics (the reference for
    :class:`BodyPoseFunction`, which the viewer calls).

    Parameters
    ----------
    tree : RigidBodyTree
    q : array_like, shape (nq,)

    Returns
    -------
    ndarray, shape (nb, 4, 4)
        ``T_W,b`` for every body in ``tree.bodies`` order (the world first, the identity).

    Raises
    ------
    VisualizationError
        ``q`` of the wrong size or not finite (names the tree).
    """
    poses = kinematics.world_poses(tree, _checked_q(tree, q))
    out = np.zeros((len(poses), 4, 4))
    out[:, 3, 3] = 1.0
    for i, (R, p) in enumerate(poses):
        out[i, :3, :3] = np.asarray(R, dtype=float)
        out[i, :3, 3] = np.asarray(p, dtype=float).ravel()
    return out


def pose_quaternions(T: np.ndarray) -> tuple:
    """Positions (n, 3) and unit quaternions ``[w, x, y, z]`` (n, 4, with ``w >= 0``) of the
    poses ``T`` (n, 4, 4), all at once by Shepperd's method (the largest of ``4 w^2``,
    ``4 x^2``, ``4 y^2``, ``4 z^2`` taken from the diagonal and the rest from the
    off-diagonal sums and differences; Shepperd 1978, J. Guidance Control 1(3) 223)."""
    T = np.asarray(T, dtype=float).reshape(-1, 4, 4)
    R = T[:, :3, :3]
    m00, m11, m22 = R[:, 0, 0], R[:, 1, 1], R[:, 2, 2]
    d = np.stack([1 + m00 + m11 + m22, 1 + m00 - m11 - m22, 1 - m00 + m11 - m22,
                  1 - m00 - m11 + m22], axis=1)                      # 4 w^2, 4 x^2, ...
    k = np.argmax(d, axis=1)
    s = 2.0 * np.sqrt(np.maximum(d[np.arange(len(k)), k], 1e-300))  # 4 * the largest
    a = R[:, 2, 1] - R[:, 1, 2]     # 4 w x
    b = R[:, 0, 2] - R[:, 2, 0]     # 4 w y
    c = R[:, 1, 0] - R[:, 0, 1]     # 4 w z
    e = R[:, 0, 1] + R[:, 1, 0]     # 4 x y
    f = R[:, 0, 2] + R[:, 2, 0]     # 4 x z
    g = R[:, 1, 2] + R[:, 2, 1]     # 4 y z
    cand = np.stack([np.stack([s * s / 4, a, b, c], 1), np.stack([a, s * s / 4, e, f], 1),
                     np.stack([b, e, s * s / 4, g], 1), np.stack([c, f, g, s * s / 4], 1)], 1)
    quat = cand[np.arange(len(k)), k] / s[:, None]
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    quat *= np.where(quat[:, :1] < 0.0, -1.0, 1.0)
    return T[:, :3, 3].copy(), quat


class BodyPoseFunction:
    """World poses of all bodies of a tree in one compiled call (what the viewer evaluates
    at every published frame).

    The forward kinematics of :func:`body_poses` is traced once on CasADi symbols into one
    function ``q -> [R_1, p_1, ..., R_n, p_n]`` and called through
    :class:`solvers.compiled.CompiledFunction` (C code, or CasADi's virtual machine where
    no compiler is found), built on the first call.

    Parameters
    ----------
    tree : RigidBodyTree
        Finalized here.
    backend : {"auto", "c", "casadi"}
        As for :class:`~solvers.compiled.CompiledFunction`.
    """

    def __init__(self, tree, backend: str = "auto") -> None:
        tree.finalize()
        self.tree = tree
        self.backend = backend
        self._fun = None

    def _build(self):
        tree = self.tree
        qs = ca.SX.sym("q", tree.nq)
        outs = []
        for R, p in kinematics.world_poses(tree, qs)[1:]:
            outs += [ca.reshape(ca.SX(R), 9, 1), ca.reshape(ca.SX(p), 3, 1)]
        name = "".join(ch if ch.isalnum() else "_" for ch in f"body_poses_{tree.name}")
        return CompiledFunction(ca.Function(name, [qs], [ca.vertcat(*outs)]),
                                backend=self.backend)

    def __call__(self, q) -> np.ndarray:
        """World poses (nb, 4, 4) of all bodies at ``q`` (nq), ``tree.bodies`` order.

        Raises
        ------
        VisualizationError
            ``q`` of the wrong size or not finite (names the tree).
        """
        tree = self.tree
        q = _checked_q(tree, q)
        nb = len(tree.bodies)
        out = np.zeros((nb, 4, 4))
        out[:, 3, 3] = 1.0
        out[0, :3, :3] = np.eye(3)
        if nb > 1:
            if self._fun is None:
                self._fun = self._build()
            y = np.asarray(self._fun(q), dtype=float).reshape(nb - 1, 12)
            out[1:, :3, :3] = y[:, :9].reshape(nb - 1, 3, 3).transpose(0, 2, 1)
            out[1:, :3, 3] = y[:, 9:]
        return out


def capsule_mesh(radius: float, length: float, segments: int = 16) -> tuple:
    """Triangle mesh of a capsule (axis z, cap centres at ``z = +-length/2``).

    Returns
    -------
    vertices : ndarray, shape (V, 3)
    faces : ndarray, shape (F, 3) of int32, counter-clockwise seen from outside.
    """
    rings = []          # (z offset of the cap centre, polar angle) from the top pole down
    half = segments // 2
    for i in range(half + 1):
        rings.append((+length / 2, 0.5 * math.pi * i / half))
    for i in range(half + 1):
        rings.append((-length / 2, 0.5 * math.pi + 0.5 * math.pi * i / half))
    verts = []
    for zc, th in rings:
        for j in range(segments):
            ph = 2 * math.pi * j / segments
            verts.append((radius * math.sin(th) * math.cos(ph),
                          radius * math.sin(th) * math.sin(ph),
                          zc + radius * math.cos(th)))
    faces = []
    for r in range(len(rings) - 1):
        for j in range(segments):
            a, b = r * segments + j, r * segments + (j + 1) % segments
            c, d = a + segments, b + segments
            faces.append((a, c, b))
            faces.append((b, c, d))
    return np.array(verts, dtype=float), np.array(faces, dtype=np.int32)


def mesh_arrays(item: VisualItem) -> tuple:
    """Vertices (V, 3, scaled) and faces (F, 3) of a mesh item's file, read by ``trimesh``.

    Raises
    ------
    ViewerUnavailableError
        ``trimesh`` is not installed.
    VisualizationError
        The file is missing or holds no triangles (names body, geometry and file).
    """
    try:
        import trimesh
    except ImportError:
        raise ViewerUnavailableError(f"drawing mesh '{item.filename}' needs trimesh: "
                                     f"{INSTALL_HINT}") from None
    where = f"body '{item.body}' geometry '{item.name}'"
    path = item.filename or ""
    if path.startswith("file://"):
        path = path[len("file://"):]
    if not os.path.isfile(path):
        raise VisualizationError(f"{where}: mesh file '{item.filename}' not found (expected a "
                                 "readable file path)")
    try:
        mesh = trimesh.load(path, force="mesh")
    except Exception as exc:  # trimesh raises many kinds; name the file
        raise VisualizationError(f"{where}: mesh file '{path}' could not be read: "
                                 f"{type(exc).__name__}: {exc}") from exc
    v = np.asarray(getattr(mesh, "vertices", np.zeros((0, 3))), dtype=float)
    f = np.asarray(getattr(mesh, "faces", np.zeros((0, 3))), dtype=np.int32)
    if v.size == 0 or f.size == 0:
        raise VisualizationError(f"{where}: mesh file '{path}' holds no triangles")
    return v * np.asarray(item.size, dtype=float), f

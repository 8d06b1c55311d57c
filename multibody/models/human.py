"""The human dynamic model: a floating-base body built from an HDM / pagoda skeleton file.

:func:`human_model` reads the skeleton (``cooper-skeleton.txt``: 21 segments, 42 joint DOF)
and optionally the marker placements (``cooper-markers.txt``), scales the body to a subject's
height and mass, and returns a :class:`HumanModel`: the tree (free-floating pelvis, ``nq = 49``,
``nv = 48``; ball joints as Euler joints, see :mod:`multibody.parsing.skeleton`), the markers
``(name, body, offset)`` for :class:`~sensors.MarkerSensor`, the arm joints (for the "arms
clamped" experiment), contact points under the feet and toes, and the segment table.

References
----------
C. K. Liu, J. Cooper and D. H. Ballard, "Human dynamic model", and L. Johnson and
D. H. Ballard, "Efficient codes for inverse dynamics during walking", AAAI 2014.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..parsing.marker_set import marker_offsets, read_marker_set
from ..parsing.skeleton import Skeleton, SkeletonError, read_skeleton, skeleton_tree
from ..parsing.urdf_writer import (configuration_to_urdf_order, urdf_joint_order,
                                   velocity_to_urdf_order, write_urdf)

__all__ = ["HumanModel", "human_model", "skeleton_height"]

_ARM_WORDS = ("collar", "arm", "hand")
_FOOT_WORDS = ("foot", "toe")


def _z_extent(skeleton: Skeleton) -> tuple[float, float]:
    """Lowest and highest z of any segment's box in the reference pose (m)."""
    segs = skeleton.segments.values()
    return (min(float(g.position[2] - g.half_extents[2]) for g in segs),
            max(float(g.position[2] + g.half_extents[2]) for g in segs))


def skeleton_height(skeleton: Skeleton) -> float:
    """Standing height of a skeleton in its reference pose (m).

    ``max_i (z_i + h_i) - min_i (z_i - h_i)`` over the segments ``i``, with ``z_i`` the
    segment's centre height and ``h_i`` its half extent along z (the segments are
    axis-aligned in the reference pose).
    """
    lo, hi = _z_extent(skeleton)
    return hi - lo


@dataclass
class HumanModel:
    """A human body model (see :func:`human_model`).

    Attributes
    ----------
    tree : RigidBodyTree
        Free-floating root segment (joint ``floating_base``), one joint ``<segment>_joint`` per
        other segment.
    markers : list of (name, body, offset (3,))
        Marker names without a subject prefix, the segment, the position in the body frame (m).
    arm_joints : list of str
        Joints whose child is a collar, arm or hand segment.
    foot_contact_points : dict
        ``{body: [(3,) points in the body frame]}``: the four bottom corners of every foot and
        toe box.
    segments : list of dict
        The segment table: ``name``, ``shape``, ``dims``, ``mass`` (kg), ``inertia_diag``
        (kg m^2, about the centre of mass, segment axes), ``com`` (body frame).
    skeleton : Skeleton
        The (scaled) parsed skeleton.
    joint_info : dict
        Per joint: file line, whether it was reversed, the sign relating ``q`` to ODE's angle.
    height, mass : float
        Standing height (m) and total mass (kg).
    """

    tree: object
    markers: list
    arm_joints: list
    foot_contact_points: dict
    segments: list
    skeleton: Skeleton
    joint_info: dict = field(default_factory=dict)
    height: float = 0.0
    mass: float = 0.0

    @property
    def dof(self) -> int:
        """Velocity degrees of freedom including the floating base (48 for the HDM body)."""
        return self.tree.nv

    def reference_configuration(self) -> np.ndarray:
        """The file's reference pose (all segments axis-aligned, arms down) standing with its
        lowest point on ``z = 0``: ``q`` (nq,)."""
        q = self.tree.neutral_configuration()
        root = self.tree.get_joint("floating_base")
        seg = self.skeleton.segments[root.child]
        lo = _z_extent(self.skeleton)[0]
        p = seg.position - seg.center - np.array([0.0, 0.0, lo])
        q[root.q_start + 4: root.q_start + 7] = p
        return q

    def scaled(self, segment_scales: dict, *, marker_offsets: Any = None,
               mass: float | None = None) -> "HumanModel":
        """The model with its segments scaled (as :func:`multibody.motion.fit_segment_scales` does).

        Segment ``n``'s dimensions are multiplied by ``s_n = segment_scales.get(n, 1)``
        (isotropic: a box's three sides, a capsule's length and radius). Every point fixed on
        the segment (joint anchors, markers, the centre of mass) moves with it: in the body
        frame ``x -> s_n x``. Masses follow the shapes' volumes times the densities,
        ``m_n -> s_n^3 m_n``, and the inertias the shapes, ``I_n -> s_n^5 I_n``
        (:meth:`~multibody.parsing.skeleton.Skeleton.scaled`); with ``mass`` the densities
        are then multiplied by one factor so that the total mass is ``mass``.

        Parameters
        ----------
        segment_scales : dict
            ``{segment: factor > 0}``; segments not named keep their size.
        marker_offsets : (M, 3) array_like, optional
            Marker positions in the scaled body frames (m), in :attr:`markers` order
            (default: each marker's offset times its segment's scale).
        mass : float, optional
            Total mass of the scaled model (kg); default: what the densities give.

        Returns
        -------
        HumanModel
            Same joints and coordinates (``q`` of this model is valid for it), same root.

        Raises
        ------
        SkeletonError
            An unknown segment or a non-positive scale (names the segment).
        ValueError
            ``marker_offsets`` of the wrong shape or not finite; a non-positive ``mass``.
        """
        per = {n: float(v) for n, v in dict(segment_scales).items()}
        sk = self.skeleton.scaled(1.0, 1.0, per)
        if mass is not None:
            if not (np.isfinite(mass) and mass > 0):
                raise ValueError(f"HumanModel.scaled: mass must be a positive number, got "
                                 f"{mass!r}")
            sk = sk.scaled(1.0, float(mass) / sk.total_mass)
        if marker_offsets is None:
            markers = [(n, b, per.get(b, 1.0) * np.asarray(p, float))
                       for n, b, p in self.markers]
        else:
            o = np.asarray(marker_offsets, float)
            if o.shape != (len(self.markers), 3) or not np.all(np.isfinite(o)):
                raise ValueError(f"HumanModel.scaled: marker_offsets must be finite with shape "
                                 f"({len(self.markers)}, 3) (one row per marker), got shape "
                                 f"{o.shape}")
            markers = [(n, b, o[i].copy()) for i, (n, b, _) in enumerate(self.markers)]
        return _assemble(sk, self.tree.get_joint("floating_base").child, markers=markers)

    def segment_table(self) -> str:
        """The segment table as text (name, shape, mass, inertia diagonal)."""
        rows = [f"{'segment':10s} {'shape':8s} {'mass kg':>8s}  {'Ixx':>9s} {'Iyy':>9s} "
                f"{'Izz':>9s} (kg m^2)"]
        for s in self.segments:
            i = s["inertia_diag"]
            rows.append(f"{s['name']:10s} {s['shape']:8s} {s['mass']:8.3f}  {i[0]:9.5f} "
                        f"{i[1]:9.5f} {i[2]:9.5f}")
        rows.append(f"{'total':10s} {'':8s} {self.mass:8.3f}")
        return "\n".join(rows)

    def write_urdf(self, path: str | os.PathLike | None = None) -> str:
        """URDF of the model (:func:`multibody.parsing.write_urdf`; Euler and universal joints
        as revolute chains through massless links, no floating joint)."""
        return write_urdf(self.tree, path, name="human")

    def urdf_joint_order(self) -> list[str]:
        """Exported joint names in Pinocchio's order (:func:`multibody.parsing.urdf_joint_order`)."""
        return urdf_joint_order(self.tree)

    def configuration_to_urdf_order(self, q) -> np.ndarray:
        """``q`` (nq,) or (T, nq) -> the exported URDF's order as Pinocchio reads it with a
        free-flyer root: ``[x, y, z, qx, qy, qz, qw, joint angles...]`` (nq,)."""
        return configuration_to_urdf_order(self.tree, q)

    def velocity_to_urdf_order(self, v) -> np.ndarray:
        """``v``, ``vdot`` or ``tau`` (nv,) or (T, nv) -> Pinocchio's order (base ``[v; omega]``)."""
        return velocity_to_urdf_order(self.tree, v)


def human_model(skeleton_path: str | os.PathLike, markers_path: str | os.PathLike | None = None,
                height: float | None = None, mass: float | None = None, *,
                root: str | None = None, segment_scales: dict | None = None) -> HumanModel:
    """Build the human model from a skeleton file (and a marker-placement file).

    Parameters
    ----------
    skeleton_path : str or path-like
        HDM / pagoda skeleton description (:mod:`multibody.parsing.skeleton`).
    markers_path : str or path-like, optional
        Marker placements (:mod:`multibody.parsing.marker_set`).
    height : float, optional
        Subject height (m): every length is scaled by ``height / skeleton_height``.
    mass : float, optional
        Subject mass (kg): densities are scaled (after the length scaling) so the total mass
        equals it.
    root : str, optional
        Root segment (default ``pelvis``).
    segment_scales : dict, optional
        ``{segment: factor}``: extra scale of single segments' dimensions (e.g. fitted from
        markers), applied with the height scaling and before the mass scaling.

    Returns
    -------
    HumanModel

    Raises
    ------
    SkeletonError
        A line of either file that cannot be parsed (file, line, what was expected), or a
        marker on an unknown segment (names the marker and the segment).
    ValueError
        A non-positive height or mass.

    Examples
    --------
    >>> m = human_model("cooper-skeleton.txt", "cooper-markers.txt")  # doctest: +SKIP
    >>> m.tree.nq, m.tree.nv
    (49, 48)
    """
    sk = read_skeleton(skeleton_path)
    for what, val in (("height", height), ("mass", mass)):
        if val is not None and not (np.isfinite(val) and val > 0):
            raise ValueError(f"human_model: {what} must be a positive number, got {val!r}")
    s = 1.0 if height is None else float(height) / skeleton_height(sk)
    if segment_scales:
        sk = sk.scaled(s, 1.0, segment_scales)
        s = 1.0
    k = 1.0 if mass is None else float(mass) / (sk.total_mass * s ** 3)
    if s != 1.0 or k != 1.0:
        sk = sk.scaled(s, k)
    placements = None if markers_path is None else read_marker_set(markers_path)
    return _assemble(sk, root, placements=placements, source=str(markers_path))


def _assemble(sk: Skeleton, root: str | None, *, placements=None, source: str = "",
              markers: list | None = None) -> HumanModel:
    """The model of a (scaled) skeleton with its markers: from ``placements`` (fractions of the
    half extents, converted once the tree has placed the segment centres) or ``markers``
    ``(name, body, offset)`` already in the body frames."""
    tree, info = skeleton_tree(sk, root, name="human")
    tree.finalize()
    if placements is not None:
        markers = marker_offsets(placements, sk, source=source)
    markers = list(markers or [])
    arm = [j.name for j in tree.joints
           if j.parent != "world" and any(w in j.child for w in _ARM_WORDS)]
    feet = {}
    for name, seg in sk.segments.items():
        if any(w in name for w in _FOOT_WORDS):
            h = seg.half_extents
            feet[name] = [seg.center + np.array([sx * h[0], sy * h[1], -h[2]])
                          for sx in (-1, 1) for sy in (-1, 1)]
    table = [{"name": n, "shape": g.shape, "dims": g.dims, "mass": g.mass,
              "inertia_diag": np.diag(g.inertia).copy(), "com": g.center.copy()}
             for n, g in sk.segments.items()]
    return HumanModel(tree, markers, arm, feet, table, sk, info, skeleton_height(sk),
                      float(sk.total_mass))

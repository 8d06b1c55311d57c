"""Point contact with Coulomb friction at the acceleration level (Baraff 1994).

:class:`PointContactForce` covers the collision geometries of a tree: every pair of
geometries that passes the collision filter (same-body and parent/child pairs skipped by
default, :class:`~multibody.geometry.CollisionFilter` groups honoured) is a *site*. A site
is separated or in contact; in contact its points (the manifold of
:func:`~multibody.geometry.contact_points` within ``active_margin``) each give

* a normal row ``a_n = n^T (a_B - a_A) + alpha v_n + beta phi >= 0`` complementary to the
  normal force ``f_n >= 0`` (non-penetration, Baumgarte-stabilized);
* when **sticking**, two tangent rows ``a_t = t^T (a_B - a_A) + alpha v_t`` with
  ``|f_t| <= mu f_n`` per direction (the friction pyramid), ``a_t = 0`` inside the bounds;
* when **sliding** with unit slip direction ``s`` (tangential velocity of B relative to A),
  the friction force ``-mu f_n s``, folded into the force Jacobian of the normal row
  (``(J_n - mu s^T J_t)^T f_n``), which makes the LCP matrix unsymmetric: with large
  ``mu`` it can have no solution (Painleve's paradox), which the system reports.

At touchdown (signed distance crossing zero) an impulse with Newton's restitution ``e``
(``v_n^+ >= -e v_n^-``) and Coulomb friction (``|P_t| <= mu P_n``, sticking impulse
inside) resets the velocities (:mod:`multibody._rbs_unilateral`).

References
----------
D. Baraff, "Fast contact force computation for nonpenetrating rigid bodies", SIGGRAPH
1994; D. Baraff, "Coping with friction for non-penetrating rigid body simulation",
SIGGRAPH 1991.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..geometry import CollisionFilter, Sphere, contact_points, signed_distance
from .base import ContinuousTimeConstraintForce

__all__ = ["PointContactForce", "ContactPointRows", "tangent_basis"]


def tangent_basis(n: np.ndarray) -> np.ndarray:
    """Two orthonormal tangents (2, 3) completing the unit normal ``n`` to a right-handed basis."""
    e = np.eye(3)[int(np.argmin(np.abs(n)))]
    t1 = np.cross(n, e)
    t1 /= np.linalg.norm(t1)
    return np.array([t1, np.cross(n, t1)])


@dataclass
class ContactPointRows:
    """Rows of one contact point (all world axes).

    Attributes
    ----------
    Jn : ndarray (nv,)
        Normal row: ``Jn v`` is the normal velocity of B relative to A.
    jdv_n : float
        ``Jdot_n v`` (normal acceleration at ``vdot = 0``).
    vn, phi : float
        Normal velocity and signed distance.
    Jt : ndarray (2, nv) or None
        Tangent rows (None without friction).
    jdv_t, vt : ndarray (2,)
    tangents : ndarray (2, 3)
    point, normal : ndarray (3,)
    body_a, body_b, geometry_a, geometry_b : str
    mu : float
    """

    Jn: np.ndarray
    jdv_n: float
    vn: float
    phi: float
    Jt: Optional[np.ndarray]
    jdv_t: np.ndarray
    vt: np.ndarray
    tangents: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    body_a: str
    body_b: str
    geometry_a: str
    geometry_b: str
    mu: float


class PointContactForce(ContinuousTimeConstraintForce):
    """Frictional point contact between the tree's collision geometries (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    mu : float
        Coulomb friction coefficient (>= 0).
    restitution : float
        Newton's coefficient of restitution ``e`` in [0, 1].
    collision_filter : CollisionFilter, optional
        Default: same-body and parent/child pairs skipped.
    active_margin : float
        Points within this signed distance take part in a site in contact (m).
    time_constant, damping_ratio, gains
        Baumgarte stabilization of the rows (default critically damped, 0.1 s).
    name : str, optional

    Raises
    ------
    ValueError
        No collidable geometry pair, ``mu < 0`` or ``restitution`` outside [0, 1].
    """

    unilateral = True

    def __init__(self, tree, *, mu: float = 0.5, restitution: float = 0.0,
                 collision_filter: Optional[CollisionFilter] = None, active_margin: float = 1e-5,
                 time_constant: Optional[float] = 0.1, damping_ratio: float = 1.0, gains=None,
                 name: Optional[str] = None) -> None:
        super().__init__(tree, time_constant=time_constant, damping_ratio=damping_ratio,
                         gains=gains, name=name)
        if not (np.isfinite(mu) and mu >= 0):
            raise ValueError(f"contact '{self.name}': mu must be finite and >= 0, got {mu}")
        if not (0.0 <= restitution <= 1.0):
            raise ValueError(f"contact '{self.name}': restitution must be in [0, 1], got {restitution}")
        self.mu, self.restitution = float(mu), float(restitution)
        self.active_margin = float(active_margin)
        filt = collision_filter or CollisionFilter()
        # bodies joined by a joint are parent/child for the filter, except through a free
        # joint (a floating body touches the world it floats in)
        pc = {frozenset((j.parent, j.child)) for j in tree.joints if j.type != "free"}
        geoms = [g for b in tree.bodies for g in b.collision_geometries
                 if type(g.shape).__name__ != "Mesh"]
        self.pairs = []
        for i, ga in enumerate(geoms):
            for gb in geoms[i + 1:]:
                if ga.body == gb.body:
                    continue
                if ga.body == "world" and gb.body == "world":
                    continue
                if filt.is_filtered(ga.body, gb.body, frozenset((ga.body, gb.body)) in pc):
                    continue
                self.pairs.append((ga, gb))
        if not self.pairs:
            raise ValueError(f"contact '{self.name}': tree '{tree.name}' has no pair of collision "
                             "geometries that may touch")

    # ------------------------------------------------------------------ sites
    @property
    def num_sites(self) -> int:
        """One site per geometry pair."""
        return len(self.pairs)

    def site_names(self) -> list:
        """One name per contact site (geometry pair), ``"block[geometry_a|geometry_b]"``."""
        return [f"{self.name}[{a.name}|{b.name}]" for a, b in self.pairs]

    def _poses(self, q, i):
        ga, gb = self.pairs[i]
        Xa = np.asarray(self.tree.body_pose(ga.body, q), float)
        Xb = np.asarray(self.tree.body_pose(gb.body, q), float)
        return ga, gb, Xa, Xb

    def gap(self, q, i: int) -> float:
        """Signed distance of site ``i`` (m)."""
        ga, gb, Xa, Xb = self._poses(q, i)
        return float(signed_distance(ga.shape, Xa @ ga.pose, gb.shape, Xb @ gb.pose).distance)

    def _point_terms(self, body, X, p, q, v, center=None):
        """Linear Jacobian (3 x nv) and ``Jdot v`` (3,) of the world point ``p`` fixed on
        ``body`` (``center``: the point used for ``Jdot v`` instead, e.g. a sphere's centre)."""
        nv = self.tree.nv
        if body == "world":
            return np.zeros((3, nv)), np.zeros(3)
        Xi = np.linalg.inv(X)
        pb = Xi[:3, :3] @ p + Xi[:3, 3]
        J = np.asarray(self.tree.jacobian(body, q, pb), float)[3:6]
        pc = pb if center is None else Xi[:3, :3] @ center + Xi[:3, 3]
        a = np.asarray(self.tree.jacobian_dot_times_v(body, q, v, pc), float).ravel()[3:6]
        return J, a

    def site_points(self, q, v, i: int) -> list:
        """:class:`ContactPointRows` of the points of site ``i`` within ``active_margin``."""
        ga, gb, Xa, Xb = self._poses(q, i)
        Ga, Gb = Xa @ ga.pose, Xb @ gb.pose
        out = []
        for cp in contact_points(ga.shape, Ga, gb.shape, Gb, margin=self.active_margin):
            n = np.asarray(cp.normal, float)
            ca = Ga[:3, 3] if isinstance(ga.shape, Sphere) else None
            cb = Gb[:3, 3] if isinstance(gb.shape, Sphere) else None
            Ja, aa = self._point_terms(ga.body, Xa, cp.point_a, q, v, ca)
            Jb, ab = self._point_terms(gb.body, Xb, cp.point_b, q, v, cb)
            Jr, ar = Jb - Ja, ab - aa
            Jn = n @ Jr
            T = tangent_basis(n)
            Jt = T @ Jr if self.mu > 0 else None
            out.append(ContactPointRows(
                Jn, float(n @ ar), float(Jn @ v), float(cp.distance), Jt,
                T @ ar, (T @ Jr) @ v, T, 0.5 * (cp.point_a + cp.point_b), n,
                ga.body, gb.body, ga.name, gb.name, self.mu))
        return out

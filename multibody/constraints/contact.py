"""Point contact between collision geometries with Coulomb friction, for both plants.

One block covers the tree's collision geometries: every pair the collision filter allows (or
the ``pairs`` given) may touch. The contact points, their normals (from A to B) and tangent
bases come from one place (:func:`multibody.geometry.contact_points` and
:func:`tangent_basis`) for both plants.

Time stepping
-------------

For every contact point ``x`` (normal ``n`` from A to B, signed distance ``phi``) found by
:func:`multibody.geometry.contact_points` within ``margin``, the block gives one normal row
``n . (v_B(x) - v_A(x))`` (``UNILATERAL``) and friction rows:

* ``friction="cone"`` (default): ``k`` directions ``d_i = cos(2 pi i / k) t1 + sin(2 pi i /
  k) t2`` of a polyhedral cone (``FRICTION_CONE``); the system adds the maximum-dissipation
  complementarity ``lambda >= 0 _|_ mu p_n - sum_i beta_i >= 0`` and
  ``d_i . v_rel + lambda >= 0 _|_ beta_i >= 0`` (Stewart & Trinkle 1996, Anitescu & Potra
  1997) and solves the LCP with Lemke's method;
* ``friction="box"``: two tangent rows bounded by ``+-mu p_n`` (ODE's friction pyramid,
  ``FRICTION_BOX``), solved as a boxed LCP.

Non-penetration (velocity level, ``w = n . v_rel(t+h) + b >= 0``):

* ``formulation="anitescu_potra"`` (default): ``b = phi / h`` for a gap (a contact within
  the margin may close exactly its gap in the step: no force before touching) and
  ``b = erp * phi / h`` for a penetration (Baumgarte-style stabilization with ERP);
* ``formulation="stewart_trinkle"``: ``b = phi / h`` always, the linearized
  ``phi(q_{n+1}) >= 0`` (full correction of a penetration in one step).

Contact margins (MuJoCo's ``margin``): with ``geometry_margins`` a pair of geometries is in
contact from the sum of their two margins on (MuJoCo adds the geoms' margins, and their gaps:
its ``contact.includemargin``): its signed distance is taken as ``phi - (m_a + m_b)``
everywhere (rows, results, continuous-time sites), so bodies come to rest that far apart.

With a spring-damper ``(kp, kd)`` the normal rows are soft: ``(erp, cfm)`` from ODE's
mapping (see :mod:`multibody.constraints.base`). With MuJoCo softening
(``mujoco=MuJoCoSoftening(...)``) only penetrating contacts (``phi < 0`` after the margins,
MuJoCo's rule) give rows; their normal rows take MuJoCo's ``cfm`` and bias with the pair's
mixed ``solref``/``solimp`` and ``Ahat`` the sum of the two bodies' ``invweight`` (or the
row's Delassus diagonal) times the pyramidal factor
(:mod:`multibody.constraints.mujoco_softening`); friction rows stay hard (Coulomb), as
MuJoCo's ``noslip`` makes them. With ``MuJoCoSoftening(noslip=True)`` a contact instead gives
MuJoCo's four soft pyramid edges, whose friction the plant's pivoting step then re-solves
hard with the normal forces fixed (MuJoCo's two-stage solve).

Continuous time (Baraff 1994)
-----------------------------
Every geometry pair is a *site*, separated or in contact. In contact, its points within
``active_margin`` each give a normal row ``a_n = n^T (a_B - a_A) + alpha v_n + beta phi >= 0``
complementary to ``f_n >= 0``; when sticking two tangent rows ``a_t = t^T (a_B - a_A) +
alpha v_t`` with the friction in Coulomb's circle ``|f_t| <= mu f_n`` (the plant turns the
tangent pair to the friction that sticking needs, so no world axis is preferred); when
sliding with unit slip ``s`` the friction ``-mu f_n s`` folded into the normal row's force
Jacobian (an unsymmetric LCP that may have no solution: Painleve's paradox, which the plant
reports). A touchdown applies an impulse with Newton's restitution ``e`` and Coulomb
friction (:class:`~multibody.plants.RigidBodySystem`).

References
----------
D. Baraff, "Fast contact force computation for nonpenetrating rigid bodies", SIGGRAPH
1994. D. E. Stewart and J. C. Trinkle, "An implicit time-stepping scheme for rigid body dynamics
with inelastic collisions and Coulomb friction", IJNME 39 (1996). M. Anitescu and F. A.
Potra, "Formulating dynamic multi-rigid-body contact problems with friction as solvable
linear complementarity problems", Nonlinear Dynamics 14 (1997).
"""
from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np

from ..geometry import (Capsule, CollisionFilter, Halfspace, Mesh, Sphere, contact_points,
                        signed_distance)
from .base import FRICTION_BOX, FRICTION_CONE, UNILATERAL, ConstraintForce, ConstraintRows
from .contact_results import PointContactResult
from .contact_rows import ContactPointRows
from .kinematics import StepKinematics, cross_rows
from .mujoco_softening import mujoco_frame, pyramid_edges

__all__ = ["PointContactConstraint", "tangent_basis"]


def tangent_basis(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit tangents ``(t1, t2)`` (m, 3) for unit normals ``n`` (m, 3): ``t1`` is the world
    x axis projected on the tangent plane (the y axis when ``|n_x| > 0.9``), ``t2 = n x t1``."""
    n = np.asarray(n, float).reshape(-1, 3)
    a = np.zeros_like(n)
    use_x = np.abs(n[:, 0]) < 0.9
    a[use_x, 0] = 1.0
    a[~use_x, 1] = 1.0
    t1 = a - np.sum(a * n, axis=1, keepdims=True) * n
    t1 /= np.linalg.norm(t1, axis=1, keepdims=True)
    return t1, cross_rows(n, t1)


def _penetrating(det: dict) -> dict:
    """The detected contacts with ``distance < 0`` (MuJoCo's rule for soft contacts)."""
    keep = det["distance"] < 0.0
    if keep.all():
        return det
    out = {k: (v[keep] if isinstance(v, np.ndarray) else v) for k, v in det.items()}
    out["geometries"] = [g for g, k in zip(det["geometries"], keep) if k]
    return out


class PointContactConstraint(ConstraintForce):
    """Frictional point contact among the tree's collision geometries, in either plant
    (module docstring). The time-stepping plant reads the friction coefficient from the
    parameter ``mu`` of its context; the continuous plant uses the value given here.

    Parameters
    ----------
    tree : RigidBodyTree
        Geometries: every ``tree.bodies[i].collision_geometries`` (world geometry such as
        a ``Halfspace`` ground is attached to the body ``"world"``).
    mu : float
        Coulomb friction coefficient (parameter ``mu``, >= 0).
    pairs : sequence of (str, str), optional
        Geometry name pairs to test; default every pair the ``collision_filter`` allows.
    collision_filter : CollisionFilter, optional
        Default ``CollisionFilter()``: pairs on the same body and on bodies joined by a
        joint are skipped, except across a ``Free`` joint (a floating body does touch the
        world's ground); add a filter group to skip a robot's self-collisions. Pairs of
        bodies that are both fixed to the world are skipped too.
    num_directions : int
        ``k`` directions of the polyhedral cone (``friction="cone"``; >= 3, default 4).
    friction : {"cone", "box"}
    formulation : {"anitescu_potra", "stewart_trinkle"}
    margin : float
        Contacts with signed distance ``<= margin + h (s1 + s2)`` (m) are included
        (default 5 mm; ``s1``, ``s2`` the two largest body speed bounds, see
        :meth:`step_margin`), so contacts that may happen within the step are seen by
        the solve (no tunnelling of fast bodies).
    erp, cfm, kp, kd
        Time-stepping softening (see :class:`~multibody.constraints.ConstraintForce`);
        default ``erp = 0.2`` and a small ``cfm = 1e-8`` regularizing redundant contacts.
    mujoco : MuJoCoSoftening, optional
        MuJoCo's soft normal rows instead of ERP (module docstring); ``cfm`` stays on the
        friction rows.
    geometry_margins : mapping of str to float, optional
        Contact margin (m, >= 0) of collision geometries by name (default 0): a pair is in
        contact from distance ``m_a + m_b`` on (module docstring).
    restitution : float
        Continuous time: Newton's coefficient of restitution ``e`` in [0, 1].
    active_margin : float
        Continuous time: points within this signed distance take part in a site in contact
        (m).
    time_constant, damping_ratio, gains
        Continuous time: Baumgarte stabilization of the rows (default critically damped,
        0.1 s).
    name : str, optional

    Raises
    ------
    ValueError
        Unknown geometry names in ``pairs``, a pair of geometries on the same body, a
        non-collidable shape (Mesh, Halfspace-Halfspace), bad ``mu``/``k``/``margin``.
    """

    unilateral = True
    supports_mujoco = True

    def __init__(self, tree, mu: float = 1.0, *, pairs: Optional[Sequence[tuple]] = None,
                 collision_filter: Optional[CollisionFilter] = None, num_directions: int = 4,
                 friction: str = "cone", formulation: str = "anitescu_potra",
                 margin: float = 5e-3, erp: float = 0.2, cfm: float = 1e-8,
                 kp: Optional[float] = None, kd: Optional[float] = None,
                 geometry_margins: Optional[Mapping[str, float]] = None,
                 restitution: float = 0.0, active_margin: float = 1e-5,
                 time_constant: Optional[float] = 0.1, damping_ratio: float = 1.0, gains=None,
                 mujoco=None, name: Optional[str] = None) -> None:
        super().__init__(tree, erp=erp, cfm=cfm, kp=kp, kd=kd, time_constant=time_constant,
                         damping_ratio=damping_ratio, gains=gains, mujoco=mujoco, name=name)
        nm = f"contact constraint '{self.name}'"
        if not (np.isfinite(mu) and mu >= 0):
            raise ValueError(f"{nm}: mu must be finite and >= 0, got {mu}")
        if not (0.0 <= restitution <= 1.0):
            raise ValueError(f"{nm}: restitution must be in [0, 1], got {restitution}")
        self.mu, self.restitution = float(mu), float(restitution)
        self.active_margin = float(active_margin)
        if friction not in ("cone", "box"):
            raise ValueError(f"{nm}: friction must be 'cone' or 'box', got {friction!r}")
        if formulation not in ("anitescu_potra", "stewart_trinkle"):
            raise ValueError(f"{nm}: formulation must be 'anitescu_potra' or 'stewart_trinkle', "
                             f"got {formulation!r}")
        if int(num_directions) != num_directions or num_directions < 3:
            raise ValueError(f"{nm}: num_directions must be an integer >= 3, got {num_directions}")
        if not (np.isfinite(margin) and margin >= 0):
            raise ValueError(f"{nm}: margin must be finite and >= 0, got {margin}")
        self.declare_numeric_parameter("mu", mu)
        self.friction = friction
        self.formulation = formulation
        self.k = int(num_directions)
        self.margin = float(margin)
        self.filter = collision_filter or CollisionFilter()
        self._geoms = [g for b in tree.bodies for g in b.collision_geometries
                       if not isinstance(g.shape, Mesh)]
        by_name = {g.name: g for b in tree.bodies for g in b.collision_geometries}
        self._offsets: dict = {}
        for gname, value in dict(geometry_margins or {}).items():
            if gname not in by_name:
                raise ValueError(f"{nm}: geometry_margins names {gname!r}, not a collision "
                                 f"geometry of tree '{tree.name}'")
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"{nm}: margin of geometry {gname!r} must be finite and >= 0, "
                                 f"got {value}")
            if value > 0:
                self._offsets[gname] = float(value)
        self.max_geometry_margin = max(self._offsets.values(), default=0.0)
        self._index = {b.name: b.index for b in tree.bodies}
        # bodies joined by a joint are parent/child for the filter, except through a free
        # (floating) joint, which does not restrict the motion (a free body hits the ground)
        self._parent_child = {frozenset((j.parent, j.child)) for j in tree.joints
                              if j.type != "free"}
        self.pairs = None
        if pairs is not None:
            checked = []
            for pair in pairs:
                try:
                    a, b = pair
                except (TypeError, ValueError):
                    raise ValueError(f"{nm}: pairs must be (geometry, geometry) name pairs, got "
                                     f"{pair!r}") from None
                for g in (a, b):
                    if g not in by_name:
                        raise ValueError(f"{nm}: unknown collision geometry {g!r} in tree "
                                         f"'{tree.name}' (known: {sorted(by_name)})")
                ga, gb = by_name[a], by_name[b]
                if ga.body == gb.body:
                    raise ValueError(f"{nm}: geometries '{a}' and '{b}' are both on body "
                                     f"'{ga.body}'; a body cannot be in contact with itself")
                for g in (ga, gb):
                    if isinstance(g.shape, Mesh):
                        raise ValueError(f"{nm}: geometry '{g.name}' is a Mesh (not collidable)")
                if isinstance(ga.shape, Halfspace) and isinstance(gb.shape, Halfspace):
                    raise ValueError(f"{nm}: pair ('{a}', '{b}') is two halfspaces")
                checked.append((ga, gb))
            self.pairs = checked
        # bodies carrying finite geometry and their reach (for the speed-dependent margin)
        reach: dict = {}
        for g in self._geoms:
            r = float(getattr(g.shape, "bounding_radius", np.inf))
            if np.isfinite(r):
                i = self._index[g.body]
                reach[i] = max(reach.get(i, 0.0), r + float(np.linalg.norm(g.pose[:3, 3])))
        if self.pairs is None and not self.site_pairs:
            raise ValueError(f"{nm}: tree '{tree.name}' has no pair of collision geometries that "
                             "may touch")
        self._reach_idx = np.array(sorted(reach), int)
        self._reach = np.array([reach[i] for i in sorted(reach)])
        # precomputed polyhedral-cone angles
        ang = 2.0 * np.pi * np.arange(self.k) / self.k
        self._cs = np.cos(ang), np.sin(ang)

    # ------------------------------------------------------------------ detection
    def _candidates(self, kin: StepKinematics):
        def pose(g):
            i = self._index[g.body]
            X = np.eye(4)
            X[:3, :3] = kin.R[i]
            X[:3, 3] = kin.p[i]
            return X @ g.pose
        if self.pairs is not None:
            return [(ga, gb, pose(ga), pose(gb)) for ga, gb in self.pairs]
        body_poses = {}
        for g in self._geoms:
            if g.body not in body_poses:
                i = self._index[g.body]
                X = np.eye(4)
                X[:3, :3] = kin.R[i]
                X[:3, 3] = kin.p[i]
                body_poses[g.body] = X
        pc = self._parent_child
        return self.filter.candidate_pairs(self._geoms, body_poses,
                                           lambda a, b: frozenset((a, b)) in pc,
                                           self.step_margin(kin) + 2 * self.max_geometry_margin)

    def pair_margin(self, ga, gb) -> float:
        """Contact margin of a geometry pair: the sum of their ``geometry_margins``."""
        off = self._offsets
        return off.get(ga.name, 0.0) + off.get(gb.name, 0.0) if off else 0.0

    def step_margin(self, kin: StepKinematics) -> float:
        """``margin + h * (s1 + s2)``: ``s1``, ``s2`` the two largest speed bounds
        ``|v_origin| + |w| reach`` of the bodies carrying geometry, so that any contact
        that can close within the step is seen (speculative contact: its row lets the gap
        close exactly and acts only then)."""
        idx = self._reach_idx
        if idx.shape[0] == 0:
            return self.margin
        mv = kin.mask[idx] * kin.v
        w, u = mv @ kin.W.T, mv @ kin.U.T
        vo = u + cross_rows(w, kin.p[idx])
        s = np.sqrt(np.sum(vo * vo, axis=1)) + np.sqrt(np.sum(w * w, axis=1)) * self._reach
        top = np.sort(s)[-2:]
        return self.margin + kin.h * float(np.sum(top))

    def detect(self, kin: StepKinematics) -> dict:
        """Contact points at the start of the step: arrays ``point`` (n, 3), ``normal``,
        ``distance`` (n,), ``body_a``/``body_b`` (n,) body indices and geometry names."""
        pts, nrm, dist, ba, bb, names = [], [], [], [], [], []
        moving = kin.cache.get("moving")
        if moving is None:
            moving = kin.cache["moving"] = kin.mask.any(axis=1)
        margin = self.step_margin(kin)
        for ga, gb, Xa, Xb in self._candidates(kin):
            if not (moving[self._index[ga.body]] or moving[self._index[gb.body]]):
                continue              # two bodies fixed to the world: no row can act
            off = self.pair_margin(ga, gb)
            for c in contact_points(ga.shape, Xa, gb.shape, Xb, margin + off):
                pts.append(0.5 * (c.point_a + c.point_b))
                nrm.append(c.normal)
                dist.append(c.distance - off)
                ba.append(self._index[ga.body])
                bb.append(self._index[gb.body])
                names.append((ga, gb))
        n = len(pts)
        return {"point": np.array(pts).reshape(n, 3), "normal": np.array(nrm).reshape(n, 3),
                "distance": np.array(dist, float), "body_a": np.array(ba, int),
                "body_b": np.array(bb, int), "geometries": names}

    # ------------------------------------------------------------------ rows
    def calc_rows(self, context, kin: StepKinematics) -> ConstraintRows:
        """Normal rows (one per contact, first) then the friction rows, contact by
        contact (``k`` cone directions or two box tangents)."""
        det = self.detect(kin)
        if self.mujoco is not None:
            det = _penetrating(det)
        nc = det["distance"].shape[0]
        if nc == 0:
            return ConstraintRows.empty(kin.v.shape[0])
        h = kin.h
        erp, cfm = self.softening(context, h)
        mu = float(context.get_parameter("mu")[0])
        if self.mujoco is not None and self.mujoco.noslip and mu > 0 and self.mujoco.condim > 1:
            return self._mujoco_pyramid_rows(context, kin, det, mu)
        x, n, phi = det["point"], det["normal"], det["distance"]
        a, b = det["body_a"], det["body_b"]
        t1, t2 = self.friction_basis(kin, x, n, a, b)

        if self.formulation == "stewart_trinkle" and not self.spring:
            bias = phi / h
        else:
            bias = np.where(phi > 0, phi / h, erp * phi / h)
        if self.friction == "cone":
            c, s = self._cs
            dirs = (c[None, :, None] * t1[:, None, :] + s[None, :, None] * t2[:, None, :])
            nf = self.k
            kind_f, lo_f = FRICTION_CONE, 0.0
        else:
            dirs = np.stack([t1, t2], axis=1)
            nf = 2
            kind_f, lo_f = FRICTION_BOX, -mu
        # all direction rows at once: normals, friction directions, then (t1, t2) per contact
        D = np.concatenate([n, dirs.reshape(-1, 3), np.stack([t1, t2], axis=1).reshape(-1, 3)])
        X = np.concatenate([x, np.repeat(x, nf, axis=0), np.repeat(x, 2, axis=0)])
        B = np.concatenate([b, np.repeat(b, nf), np.repeat(b, 2)])
        Aix = np.concatenate([a, np.repeat(a, nf), np.repeat(a, 2)])
        rows = kin.point_rows(B, X, D) - kin.point_rows(Aix, X, D)
        m = nc * (1 + nf)
        J, Jt = rows[:m], rows[m:]
        kind = np.full(m, kind_f, int)
        kind[:nc] = UNILATERAL
        lo = np.full(m, lo_f)
        lo[:nc] = 0.0
        hi = np.full(m, mu)
        hi[:nc] = np.inf
        normal = np.full(m, -1, int)
        normal[nc:] = np.repeat(np.arange(nc), nf)
        bias_all = np.zeros(m)
        bias_all[:nc] = bias
        cfm_all = np.full(m, cfm)
        if self.mujoco is not None:
            cfm_all[:nc], bias_all[:nc] = self._mujoco_normals(context, kin, det, J[:nc], mu)
        phi_all = np.zeros(m)
        phi_all[:nc] = phi
        info = dict(det, dirs=dirs.reshape(-1, 3), nf=nf, Jt=Jt, t1=t1, t2=t2, time=kin.time,
                    keys=self._keys(det["geometries"], nf))
        return ConstraintRows(J, bias_all, cfm_all, kind, lo, hi, normal, phi_all, info)

    def _mujoco_normals(self, context, kin: StepKinematics, det: dict, Jn: np.ndarray,
                        mu: float):
        """``(cfm, bias)`` of the normal rows with MuJoCo softening (module docstring)."""
        mj = self.mujoco
        diag = self._mujoco_ahat(kin, det, Jn) * mj.normal_factor(mu)
        pairs = [(ga.name, gb.name) for ga, gb in det["geometries"]]
        return self.mujoco_rows(context, kin, det["distance"], Jn @ kin.v, diag, pairs=pairs)

    def _mujoco_ahat(self, kin: StepKinematics, det: dict, Jn: np.ndarray) -> np.ndarray:
        """MuJoCo's ``Ahat_n`` (nc,) of the normal rows: the bodies' ``invweight`` sums, or
        the rows' Delassus diagonals."""
        w = self.mujoco.invweight
        if w is None:
            return self.delassus_diagonal(kin, Jn)
        return np.array([float(w.get(ga.body, 0.0)) + float(w.get(gb.body, 0.0))
                         for ga, gb in det["geometries"]])

    def _mujoco_tangent_hints(self, kin: StepKinematics, det: dict) -> np.ndarray:
        """MuJoCo's collider tangents (nc, 3): a halfspace-capsule contact's capsule axis
        (MuJoCo's plane-capsule collider), zero (no hint) for the other pairs."""
        hint = np.zeros((len(det["geometries"]), 3))
        for i, (ga, gb) in enumerate(det["geometries"]):
            for plane, cap in ((ga, gb), (gb, ga)):
                if isinstance(plane.shape, Halfspace) and isinstance(cap.shape, Capsule):
                    hint[i] = kin.R[self._index[cap.body]] @ cap.pose[:3, 2]
        return hint

    def _mujoco_pyramid_rows(self, context, kin: StepKinematics, det: dict,
                             mu: float) -> ConstraintRows:
        """MuJoCo's two-stage contact rows (``MuJoCoSoftening(noslip=True)``,
        :mod:`multibody.constraints.mujoco_softening`): per contact the four soft pyramid
        edges in MuJoCo's contact frame, unilateral, with ``info["noslip_pairs"]`` naming
        the opposing edges for the plant's no-slip stage."""
        mj = self.mujoco
        x, n, phi = det["point"], det["normal"], det["distance"]
        nc = phi.shape[0]
        t1, t2 = mujoco_frame(n, self._mujoco_tangent_hints(kin, det))
        D = np.concatenate([n, np.stack([t1, t2], axis=1).reshape(-1, 3)])
        X = np.concatenate([x, np.repeat(x, 2, axis=0)])
        B = np.concatenate([det["body_b"], np.repeat(det["body_b"], 2)])
        Aix = np.concatenate([det["body_a"], np.repeat(det["body_a"], 2)])
        rows = kin.point_rows(B, X, D) - kin.point_rows(Aix, X, D)
        Jn, Jt = rows[:nc], rows[nc:]
        J = pyramid_edges(Jn, Jt.reshape(nc, 2, -1), mu)
        m = 4 * nc
        diag = np.repeat(self._mujoco_ahat(kin, det, Jn) * mj.edge_factor(mu), 4)
        pairs = [(ga.name, gb.name) for ga, gb in det["geometries"] for _ in range(4)]
        cfm, bias = self.mujoco_rows(context, kin, np.repeat(phi, 4), J @ kin.v, diag,
                                     pairs=pairs)
        keys = [k[:-1] + ("e", j) for k in self._keys(det["geometries"], 0) for j in range(4)]
        info = dict(det, pyramid=True, mu=mu, nf=4, Jt=Jt, t1=t1, t2=t2, time=kin.time,
                    keys=keys, noslip_pairs=np.arange(m).reshape(-1, 2))
        return ConstraintRows(J, bias, cfm, np.full(m, UNILATERAL, int), np.zeros(m),
                              np.full(m, np.inf), np.full(m, -1, int), np.repeat(phi, 4), info)

    def friction_basis(self, kin: StepKinematics, x: np.ndarray, n: np.ndarray, a: np.ndarray,
                       b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Tangent directions ``(t1, t2)`` (m, 3) of each contact, aligned with the friction
        the step calls for: ``t1`` opposite the tangential relative velocity of B with
        respect to A at the contact under ``kin.v_free`` (the velocity the step would end
        with without impulses: the slip, or the impending slip of a body at rest), so that
        the friction direction is a generator of the cone (and the box) whatever the heading;
        :func:`tangent_basis` where that velocity vanishes (below 1e-12 m/s). This makes the
        polyhedral cone act like Coulomb's circular cone for sliding and for sticking up to
        the friction limit, independent of the world axes."""
        t1, t2 = tangent_basis(n)
        vf = getattr(kin, "v_free", None)
        if vf is None or x.shape[0] == 0:
            return t1, t2
        # world velocity of the contact point on B minus on A: u + w x x per body
        dm = kin.mask[b] - kin.mask[a]                   # (nc, nv), columns of B minus A
        mv = dm * vf
        vel = mv @ kin.U.T + cross_rows(mv @ kin.W.T, x)
        vt = vel - np.sum(vel * n, axis=1, keepdims=True) * n
        speed = np.sqrt(np.sum(vt * vt, axis=1))
        moving = speed > 1e-12
        if np.any(moving):
            t1 = t1.copy()
            t1[moving] = -vt[moving] / speed[moving, None]
            t2 = cross_rows(n, t1)
        return t1, t2

    def _keys(self, geoms: list, nf: int) -> list:
        """Row keys for warm starts: ``(name, geometry a, geometry b, point, row)``."""
        base, count = [], {}
        for ga, gb in geoms:
            pair = (self.name, ga.name, gb.name)
            i = count.get(pair, 0)
            count[pair] = i + 1
            base.append(pair + (i,))
        return [k + ("n",) for k in base] + [k + (j,) for k in base for j in range(nf)]

    def results(self, rows: ConstraintRows, impulses: np.ndarray, v_next: np.ndarray,
                kin: StepKinematics) -> list:
        """One :class:`PointContactResult` per contact point (forces = impulses / h)."""
        info = rows.info
        if info is None:
            return []
        nc = info["distance"].shape[0]
        h = kin.h
        if info.get("pyramid"):       # MuJoCo's edges: normal = sum, friction mu (f+ - f-)
            f = impulses.reshape(nc, 2, 2) / h
            pn = f.sum(axis=(1, 2))
            diff = info["mu"] * (f[:, :, 0] - f[:, :, 1])
            ft = diff[:, :1] * info["t1"] + diff[:, 1:] * info["t2"]
        else:
            pn = impulses[:nc] / h
            beta = impulses[nc:].reshape(nc, info["nf"]) / h
            ft = np.einsum("ck,ckj->cj", beta, info["dirs"].reshape(nc, info["nf"], 3))
        vt = (info["Jt"] @ v_next).reshape(nc, 2)
        slip = vt[:, :1] * info["t1"] + vt[:, 1:] * info["t2"]
        out = []
        for i, (ga, gb) in enumerate(info["geometries"]):
            out.append(PointContactResult(ga.body, gb.body, ga.name, gb.name,
                                          info["point"][i].copy(), info["normal"][i].copy(),
                                          float(info["distance"][i]), float(pn[i]), ft[i].copy(),
                                          slip[i].copy()))
        return out

    # ------------------------------------------------------------------ continuous time
    @property
    def site_pairs(self) -> list:
        """Geometry pairs ``(ga, gb)`` that are the continuous plant's sites: the ``pairs``
        given, else every pair the collision filter allows (not both on the world)."""
        if self.pairs is not None:
            return list(self.pairs)
        pc = self._parent_child
        out = []
        for i, ga in enumerate(self._geoms):
            for gb in self._geoms[i + 1:]:
                if ga.body == gb.body or (ga.body == "world" and gb.body == "world"):
                    continue
                if self.filter.is_filtered(ga.body, gb.body, frozenset((ga.body, gb.body)) in pc):
                    continue
                out.append((ga, gb))
        return out

    @property
    def num_sites(self) -> int:
        """One site per geometry pair."""
        return len(self._site_list())

    def _site_list(self) -> list:
        sites = self.__dict__.get("_sites_cache")
        if sites is None:
            sites = self.site_pairs
            if not sites:
                raise ValueError(f"contact constraint '{self.name}': tree '{self.tree.name}' has "
                                 "no pair of collision geometries that may touch")
            self.__dict__["_sites_cache"] = sites
        return sites

    def site_names(self) -> list:
        """One name per site (geometry pair), ``"block[geometry_a|geometry_b]"``."""
        return [f"{self.name}[{a.name}|{b.name}]" for a, b in self._site_list()]

    def _site_poses(self, q, i):
        ga, gb = self._site_list()[i]
        Xa = np.asarray(self.tree.body_pose(ga.body, q), float)
        Xb = np.asarray(self.tree.body_pose(gb.body, q), float)
        return ga, gb, Xa, Xb

    def gap(self, q, i: int) -> float:
        """Signed distance of site ``i`` (m)."""
        ga, gb, Xa, Xb = self._site_poses(q, i)
        return float(signed_distance(ga.shape, Xa @ ga.pose, gb.shape, Xb @ gb.pose).distance
                     - self.pair_margin(ga, gb))

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
        ga, gb, Xa, Xb = self._site_poses(q, i)
        Ga, Gb = Xa @ ga.pose, Xb @ gb.pose
        out = []
        off = self.pair_margin(ga, gb)
        for cp in contact_points(ga.shape, Ga, gb.shape, Gb, margin=self.active_margin + off):
            n = np.asarray(cp.normal, float)
            ca_ = Ga[:3, 3] if isinstance(ga.shape, Sphere) else None
            cb_ = Gb[:3, 3] if isinstance(gb.shape, Sphere) else None
            Ja, aa = self._point_terms(ga.body, Xa, cp.point_a, q, v, ca_)
            Jb, ab = self._point_terms(gb.body, Xb, cp.point_b, q, v, cb_)
            Jr, ar = Jb - Ja, ab - aa
            Jn = n @ Jr
            t1, t2 = tangent_basis(n)
            T = np.vstack([t1, t2])
            Jt = T @ Jr if self.mu > 0 else None
            out.append(ContactPointRows(
                Jn, float(n @ ar), float(Jn @ v), float(cp.distance) - off, Jt,
                T @ ar, (T @ Jr) @ v, T, 0.5 * (cp.point_a + cp.point_b), n,
                ga.body, gb.body, ga.name, gb.name, self.mu))
        return out

"""Floating-base inverse dynamics with the ground forces allocated inside the feet's support:
the joint torques of a desired acceleration when no force acts on the root but through the
contact points, each pushing within its friction cone.

The forward pass's feedforward (:mod:`multibody.motion.forward_pass`) replays the torques the
inverse dynamics computed for the reference motion; once the simulated body is off that
motion they no longer balance it, and the pelvis feedback through the legs
(:mod:`multibody.motion.balance`) asks the feet for moments regardless of their support.
Momentum-based and whole-body balance controllers (Hyon, Hale and Cheng 2007; Lee and
Goswami 2012; Righetti et al. 2013) instead compute, at each step,

1. a desired acceleration ``a_d`` of all coordinates: the reference's ``a_ref`` plus a
   pelvis correction ``delta`` (world axes, rotation then translation of the root body's
   origin) ``delta = K_p e + K_d \\dot e`` from the pelvis's pose error ``e``, carried to the
   root's coordinates, ``a_b += J_{r,b}^{-1} delta``, and to each stance leg ``k`` (weight
   ``r_k = min(1, 2 w_k)``, ``w_k`` its share of the reference's load) as the leg
   acceleration that keeps the foot where it is (:func:`~multibody.motion.balance.
   stance_pose_correction`);
2. the generalised forces of that acceleration, ``tau = M(q) a_d + h(q, v)`` (the recursive
   Newton-Euler algorithm on CasADi symbols);
3. the ground forces ``f_i`` at the contact points (world, one 3-vector per point) that give
   the root its rows ``tau_b`` -- the root is not actuated --, nearest ``f_0`` (zero: the
   least-norm forces, the load spread over the loaded points and the centre of pressure
   toward the middle of the support; or the reference's forces, ``reference_forces``):

   .. math::

       \\min_f \\; \\lVert A f - \\tau_b \\rVert^2 + \\epsilon \\lVert f - f_0 \\rVert^2
       \\quad \\text{s.t.} \\quad f_i \\in \\mathcal{K}_i,

   ``A = [J_{i,b}^T]`` the contact points' Jacobian transposes on the root's columns,
   ``K_i`` the friction cone ``||f_{i,t}|| <= mu f_{i,n}`` of a point the reference loads
   and ``{0}`` of one it does not (the swing foot, a lifted heel). The points are the
   contact points moved ``margin`` toward their body's centroid in the sole
   (:func:`~multibody.motion.support_limit.shrunk_points`), so the centre of pressure stays
   that far inside the foot. Solved by a fixed number of damped least-squares rounds
   (:func:`allocate_forces`): each refines the forces of the points in play, a point whose
   normal force comes out negative leaves play, every point is projected onto its cone --
   an active-set method with a budget, exact for a wrench inside the feet's support;
4. the joint torques ``tau_j - J_{c,j}^T f`` (the joints' rows): with the feet held by the
   floor they give the body the acceleration ``a_d`` with the ground pushing ``f``.

:class:`WholeBodyBalance` writes the whole on CasADi symbols as ``(q, v, ref) ->
tau_joints``; the forward pass's controller adds it in place of the replayed torques
(``ForwardPass(whole_body=WholeBodyGains())``, its joint PD on top), so the run stays
compiled.

Measured (``benchmarks/bench_forward_pass.py``, the HDM walk, walking settings,
2026-11-26). On the 20 mm-margin reference ``/tmp/h61/cm_m20b``, with 16 perturbed runs,
the marker medians by ankle ``joint_gain_scale`` were:

* 0.35: 117 mm with the allocation, 152 mm replaying the torques;
* 0.45: 41 mm (35-890) against 34 mm (32-38);
* 0.55: 68 mm against 236 mm.

So the allocation widens the range of ankle gains that walk, but it is no more accurate at
the best gain, and it runs at 8-9x real time against 14x. Other settings, 8 perturbed runs
each:

* The pelvis acceleration feedback (step 1) at 100 1/s^2 and 20 1/s made the walk worse,
  0.14-0.16 m, so it is off by default.
* The reference's forces as ``f_0`` gave 34 mm (31-473) without the feedback.
* A margin of 20 mm gave 37 mm.
* With the ankles' stiffness released in stance (``stance_release``), the allocation keeps
  the foot down and walks: 79 mm (62-154), joints 4.9 deg. The replayed torques fall.
* The pelvis wrench allocated within the support (``wrench``), in place of the Jacobian
  transpose sharing of :mod:`~multibody.motion.balance`, gave 0.65 m, a fall.
* With the support taken as a loaded body's points within 5 mm of the floor
  (``ForwardPass(support_activity=True)``) instead of the points the reference loads, every
  variant falls at 1.5-1.7 s: 0.74 m with the least-norm forces, 0.73 m with the
  reference's forces, 0.78-0.80 m with the allocated wrench. The reference loads a flat
  foot on one or two corners (840 N and 50 N on two points of the left foot at 1.35 s, say),
  and the simulated foot rests on those: the whole sole is not its support.

References
----------
S.-H. Hyon, J. G. Hale, G. Cheng, "Full-body compliant human-humanoid interaction: balancing
in the presence of unknown external forces", IEEE T-RO 23(5), 2007 (contact force
optimisation).
S.-H. Lee, A. Goswami, "A momentum-based balance controller for humanoid robots on non-level
and non-stationary ground", Autonomous Robots 33(4), 2012.
L. Righetti, J. Buchli, M. Mistry, M. Kalakrishnan, S. Schaal, "Optimal distribution of
contact forces with inverse-dynamics control", IJRR 32(3), 2013.
R. Featherstone, Rigid Body Dynamics Algorithms, Springer 2008 (recursive Newton-Euler).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

import casadi as ca

from .balance import ROWS, balance_reference_rows, stance_pose_correction, stance_shares
from .errors import MotionError
from .support_limit import shrunk_points

__all__ = ["WholeBodyGains", "allocate_forces", "WholeBodyBalance"]


@dataclass(frozen=True)
class WholeBodyGains:
    """Gains of the whole-body balance (module docstring).

    Attributes
    ----------
    kp_translation, kd_translation : float
        1/s^2, 1/s: the pelvis position's acceleration feedback.
    kp_rotation, kd_rotation : float
        1/s^2, 1/s: its rotation's.
    margin : float
        m: the allocation's points this far inside the feet.
    mu : float
        Friction coefficient of the cones.
    regularisation : float
        ``epsilon``: the damping of each least-squares round (relative to ``A``'s scale).
    rounds : int
        Clipped least-squares rounds (refinements).
    min_load : float
        N: a point takes force where the reference loads it with more than this.
    reference_forces : bool
        Pull toward the reference's forces (``f_ref``, 3 rows per point in the table);
        false: toward zero (the least-norm forces: the load spread over the loaded points,
        the centre of pressure toward the middle of the support).
    wrench : (float, float, float, float)
        ``(K_p, K_d)`` of the pelvis position (N/m, N s/m), then of its rotation (N m/rad,
        N m s/rad): a corrective wrench ``W`` at the pelvis origin (the virtual model
        control of :mod:`~multibody.motion.balance`) added to what the allocated forces
        must give the root, ``tau_b + J_{r,b}^T W``, so the legs carry it within the
        feet's support instead of through the foot Jacobians' transpose.
    """

    kp_translation: float = 0.0
    kd_translation: float = 0.0
    kp_rotation: float = 0.0
    kd_rotation: float = 0.0
    margin: float = 0.01
    mu: float = 0.8
    regularisation: float = 1e-4
    rounds: int = 3
    min_load: float = 2.0
    reference_forces: bool = False
    wrench: tuple = (0.0, 0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        for name in ("kp_translation", "kd_translation", "kp_rotation", "kd_rotation",
                     "margin", "mu", "regularisation", "min_load"):
            x = getattr(self, name)
            if not (np.isfinite(x) and x >= 0):
                raise MotionError(f"WholeBodyGains: {name} must be finite and >= 0, got {x!r}")
        if int(self.rounds) != self.rounds or self.rounds < 1:
            raise MotionError(f"WholeBodyGains: rounds must be an integer >= 1, got "
                              f"{self.rounds!r}")
        if len(self.wrench) != 4 or not np.all(np.isfinite(self.wrench)):
            raise MotionError(f"WholeBodyGains: wrench must be 4 finite gains, got "
                              f"{self.wrench!r}")


def _cone(f, n, mu, on):
    """``f`` (3,) projected onto the cone ``||f_t|| <= mu f_n`` about ``n`` (Euclidean
    projection onto a second-order cone), times ``on`` (0 or 1); numbers or CasADi."""
    sym = isinstance(f, (ca.SX, ca.MX))
    dot, norm = (ca.dot, ca.norm_2) if sym else (np.dot, np.linalg.norm)
    fn = dot(f, n)
    ft = f - fn * n
    t = norm(ft) + 1e-12
    fn2 = (mu * t + fn) / (mu * mu + 1.0)
    out_cone = fn2 * n + mu * fn2 * ft / t
    if sym:
        proj = ca.if_else(t <= mu * fn, f, ca.if_else(mu * t <= -fn, 0 * f, out_cone))
    else:
        proj = f if t <= mu * fn else (0 * f if mu * t <= -fn else out_cone)
    return on * proj


def allocate_forces(A, b, f_ref, active, normal, *, mu: float = 0.8, eps: float = 1e-4,
                    rounds: int = 6):
    """Contact forces ``f`` (3P,) with ``A f ~ b`` inside the points' friction cones
    (module docstring, step 3), numbers or CasADi symbols.

    Parameters
    ----------
    A : (m, 3P)
        The points' generalised-force map (e.g. the root's rows of ``J_c^T``).
    b : (m,)
        The generalised force to produce.
    f_ref : (3P,)
        The forces to stay near (the reference's).
    active : (P,)
        1 where a point may push, 0 where not.
    normal : (3,)
        The floor normal (unit).
    mu, eps, rounds
        Friction coefficient, the regularisation ``epsilon`` relative to the mean diagonal
        of ``A W A^T``, the number of clipped least-squares rounds.

    Returns
    -------
    (3P,) ndarray or casadi.SX

    Notes
    -----
    Starting from the reference forces of the points in play (``W`` the diagonal of those
    points), each round refines ``f <- f + W A^T (A W A^T + eps s I)^{-1} (b - A f)``
    (``s`` the mean diagonal of ``A W A^T``: a damped step, so an ill-conditioned or
    rank-deficient support -- two points, a line -- stays bounded), then a point whose
    normal force came out negative leaves play (its force zero) and the others are projected
    onto their cones. For a wrench inside the support each round shrinks the residual by
    ``eps s / (lambda + eps s)`` along each eigenvalue ``lambda`` of ``A W A^T``.
    """
    sym = any(isinstance(x, (ca.SX, ca.MX)) for x in (A, b, f_ref, active))
    if sym:
        A, b, f_ref, active = (ca.SX(x) if not isinstance(x, ca.SX) else x
                               for x in (A, b, f_ref, active))
        nrm = ca.DM(np.asarray(normal, float)) if not isinstance(normal, ca.SX) else normal
    else:
        A, b, f_ref, active = (np.asarray(x, float) for x in (A, b, f_ref, active))
        nrm = np.asarray(normal, float)
    P = int(active.shape[0])
    m = int(A.shape[0])
    play = [active[i] for i in range(P)]
    rep = (lambda xs: ca.vertcat(*[ca.repmat(x, 3, 1) for x in xs])) if sym else \
        (lambda xs: np.repeat(np.array(xs, float), 3))
    f = rep(play) * f_ref
    for _ in range(int(rounds)):
        w = rep(play)
        AW = ca.mtimes(A, ca.diag(w)) if sym else A * w[None, :]
        G = ca.mtimes(AW, A.T) if sym else AW @ A.T
        s = (ca.trace(G) / m + 1e-6) if sym else (np.trace(G) / m + 1e-6)
        r = b - (ca.mtimes(A, f) if sym else A @ f)
        I = ca.DM.eye(m) if sym else np.eye(m)
        y = ca.solve(G + eps * s * I, r) if sym else np.linalg.solve(G + eps * s * I, r)
        f = f + (ca.mtimes(AW.T, y) if sym else AW.T @ y)
        parts = []
        for i in range(P):
            fi = f[3 * i:3 * i + 3]
            fn = ca.dot(fi, nrm) if sym else float(fi @ nrm)
            play[i] = play[i] * ((fn >= 0) if sym else float(fn >= 0))
            parts.append(_cone(fi, nrm, mu, play[i]))
        f = ca.vertcat(*parts) if sym else np.concatenate(parts)
    return f


def _pelvis_error(tree, body, q, v, ref):
    """``(e, e_dot)``: the small rotation and displacement from ``body`` to the reference
    rows ``ref`` (:data:`~multibody.motion.balance.ROWS`) and the twist error, world axes."""
    T = tree.body_pose(body, q)
    R, p = T[:3, :3], T[:3, 3]
    tw = ca.mtimes(tree.jacobian(body, q), v)
    E = ca.mtimes(ca.reshape(ref[3:12], 3, 3).T, R.T)
    phi = 0.5 * ca.vertcat(E[2, 1] - E[1, 2], E[0, 2] - E[2, 0], E[1, 0] - E[0, 1])
    return (ca.vertcat(phi, ref[0:3] - p),
            ca.vertcat(ref[15:18] - tw[:3], ref[12:15] - tw[3:6]))


class WholeBodyBalance:
    """The whole-body balance of a floating body on its feet (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
        Its first joint is the free root.
    contact_points : dict
        ``{body: (P, 3) points in the body frame}``.
    legs : sequence
        ``[(foot body, command indices, velocity indices)]``
        (:func:`~multibody.motion.balance.leg_chains`).
    joint_velocities : sequence of int
        The velocity index of each joint command (the controller's order).
    normal : (3,) array_like
        The floor normal.
    gains : WholeBodyGains

    Attributes
    ----------
    n_ref : int
        Rows of ``ref`` per frame: the reference acceleration (nv); with a pelvis feedback
        (a gain not 0) the root body's rows (:data:`~multibody.motion.balance.ROWS`) and
        the legs' stance weights; with ``gains.reference_forces`` the reference forces (3
        per point, the bodies' points in order); the points' support flags (0/1).

    Raises
    ------
    MotionError
        A root joint that is not free; a contact body not in the tree.
    """

    def __init__(self, tree, contact_points: Mapping, legs: Sequence, joint_velocities,
                 normal, gains: WholeBodyGains = WholeBodyGains()) -> None:
        root = tree.joints[0]
        if root.type != "free":
            raise MotionError(f"whole-body balance: the root joint '{root.name}' of tree "
                              f"'{tree.name}' must be free, got '{root.type}'")
        names = {b.name for b in tree.bodies}
        for b in contact_points:
            if b not in names:
                raise MotionError(f"whole-body balance: contact body '{b}' is not in tree "
                                  f"'{tree.name}'")
        self.tree, self.legs, self.gains = tree, list(legs), gains
        self.bodies = list(contact_points)
        self.points = {b: shrunk_points(p, gains.margin) for b, p in contact_points.items()}
        self.n_points = sum(len(p) for p in self.points.values())
        self.joint_velocities = [int(v) for v in joint_velocities]
        n = np.asarray(normal, float)
        self.normal = n / np.linalg.norm(n)
        self._nf = 3 * self.n_points if gains.reference_forces else 0
        self._pelvis = any((gains.kp_rotation, gains.kd_rotation, gains.kp_translation,
                            gains.kd_translation) + tuple(gains.wrench))
        self._np = ROWS + len(self.legs) if self._pelvis else 0
        self.n_ref = tree.nv + self._np + self._nf + self.n_points

    def function(self) -> ca.Function:
        """``(q, v, ref) -> tau`` (joint commands, the order of ``joint_velocities``)."""
        tree, g = self.tree, self.gains
        root = tree.joints[0]
        base = list(range(root.v_start, root.v_start + 6))
        q = ca.SX.sym("q", tree.nq)
        v = ca.SX.sym("v", tree.nv)
        ref = ca.SX.sym("ref", self.n_ref)
        nv, P = tree.nv, self.n_points
        a_ref = ref[:nv]
        if self._pelvis:
            prow, w = ref[nv:nv + ROWS], ref[nv + ROWS:nv + self._np]
        nf, at = self._nf, nv + self._np
        f_ref = ref[at:at + nf] if nf else ca.DM.zeros(3 * P)
        loads = ref[at + nf:at + nf + P]
        a = ca.SX(a_ref)
        wrench = None
        if self._pelvis:
            e, ed = _pelvis_error(tree, root.child, q, v, prow)
            Jr = tree.jacobian(root.child, q)
            if any(g.wrench):                         # [m; f] at the pelvis origin, world
                kt, dt, kr, dr = (float(x) for x in g.wrench)
                wrench = ca.DM([kr] * 3 + [kt] * 3) * e + ca.DM([dr] * 3 + [dt] * 3) * ed
        if self._pelvis and any((g.kp_rotation, g.kd_rotation, g.kp_translation,
                                 g.kd_translation)):
            K = ca.DM([g.kp_rotation] * 3 + [g.kp_translation] * 3)
            D = ca.DM([g.kd_rotation] * 3 + [g.kd_translation] * 3)
            delta = K * e + D * ed
            db = ca.solve(Jr[:, base], delta)
            for i, bi in enumerate(base):
                a[bi] += db[i]
            for k, (foot, _, vi) in enumerate(self.legs):
                r = ca.fmin(1.0, 2.0 * w[k])
                dl = stance_pose_correction(tree, foot, vi, q, delta)
                for i, vj in enumerate(vi):
                    a[vj] += r * dl[i]
        tau = tree.inverse_dynamics(q, v, a)
        cols, per_body = [], []                       # per body: one pose, one Jacobian
        for b in self.bodies:
            T = tree.body_pose(b, q)
            Jb = tree.jacobian(b, q)
            ds = [ca.mtimes(T[:3, :3], ca.DM(p)) for p in self.points[b]]
            per_body.append((Jb, ds))
            for d in ds:                              # v_p = v_o + w x d
                cols.append(Jb[3:, base] - ca.mtimes(ca.skew(d), Jb[:3, base]))
        A = ca.vertcat(*cols).T                                      # 6 x 3P
        tb = tau[base] if wrench is None else tau[base] + ca.mtimes(Jr[:, base].T, wrench)
        f = allocate_forces(A, tb, f_ref, loads > 0.5, self.normal,
                            mu=g.mu, eps=g.regularisation, rounds=g.rounds)
        tj = tau
        at = 0
        for Jb, ds in per_body:                       # the body's wrench at its origin
            fs = [f[3 * (at + i):3 * (at + i) + 3] for i in range(len(ds))]
            at += len(ds)
            wrench = ca.vertcat(sum((ca.cross(d, fi) for d, fi in zip(ds, fs)), ca.SX.zeros(3)),
                                sum(fs, ca.SX.zeros(3)))
            tj = tj - ca.mtimes(Jb.T, wrench)
        out = ca.vertcat(*[tj[vj] for vj in self.joint_velocities])
        return ca.Function("whole_body_balance", [q, v, ref], [out], ["q", "v", "ref"],
                           ["tau"])

    def reference(self, times, q, v, contact_forces, activity=None) -> np.ndarray:
        """The rows ``ref`` (K, :attr:`n_ref`) of a reference motion ``q`` (K, nq), ``v``
        (K, nv) at ``times`` (K,) (accelerations by finite differences of ``v``) and its
        world contact forces ``contact_forces`` (K, P, 3) (the stance weights: each leg's
        share of their normal loads, :func:`~multibody.motion.balance.stance_shares`; a
        leg's points: the bodies named with its foot's side, ``'r-foot'``, ``'r-toes'``);
        ``activity`` (K, P) of 0/1 the points in the support
        (:func:`~multibody.motion.support_limit.support_activity`; default: the points the
        reference loads with more than ``min_load``).

        Raises
        ------
        MotionError
            Inputs of the wrong shapes.
        """
        q, v = np.asarray(q, float), np.asarray(v, float)
        F = np.asarray(contact_forces, float)
        K = len(q)
        if v.shape != (K, self.tree.nv) or F.shape != (K, self.n_points, 3):
            raise MotionError(f"whole-body balance: expected v ({K}, {self.tree.nv}) and "
                              f"contact_forces ({K}, {self.n_points}, 3); got {v.shape}, "
                              f"{F.shape}")
        a = np.gradient(v, np.asarray(times, float), axis=0)
        rows = balance_reference_rows(self.tree, q, v)
        L = F @ self.normal
        side = [b.split("-")[0].split("_")[0] for b in self.bodies for _ in self.points[b]]
        legs = [f.split("-")[0].split("_")[0] for f, _, _ in self.legs]
        W = stance_shares(np.column_stack([L[:, [i for i, s in enumerate(side) if s == s_]]
                                           .sum(axis=1) for s_ in legs]))
        act = ((L > self.gains.min_load).astype(float) if activity is None
               else np.asarray(activity, float))
        if act.shape != (K, self.n_points):
            raise MotionError(f"whole-body balance: activity must be ({K}, {self.n_points}), "
                              f"got {act.shape}")
        return np.hstack([a] + ([rows, W] if self._pelvis else [])
                         + ([F.reshape(K, -1)] if self._nf else []) + [act])

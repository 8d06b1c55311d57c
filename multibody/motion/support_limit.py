"""Foot torques kept within the foot's support: the joint commands of a stance foot clamped so
that the centre of pressure they ask of the ground stays inside the loaded contact points'
polygon, a margin from its edges.

A rigid foot on a rigid floor takes any ground wrench whose centre of pressure (COP) lies in
the convex hull of its touching points; a joint torque at the ankle that needs the COP beyond
that hull cannot be balanced by the floor, and the foot tips onto its edge (then the leg, and
the pelvis with it, rotate about that edge). A tracking controller that sums feedforward
torques, a PD and a balance feedback does not know this: on a reference whose COP runs along
the foot's outer edge, any extra roll torque tips the foot (``multibody.motion.forward_pass``,
limits). This module bounds each such joint command by what the support can carry, the
support-polygon constraint of momentum-based balance control (Lee and Goswami 2012) and of the
contact force optimisation of Hyon et al. (2007), applied here per joint so it stays a few
closed-form ``fmin``/``fmax`` in the compiled run.

For a joint ``j`` whose child body (the foot, or the toes) carries contact points -- together
with the contact bodies below it (the toes under the foot) -- the quasi-static equation of
those bodies' coordinate ``j`` (their mass and inertia neglected: a foot weighs 1 % of the
body) is

.. math::

    \\tau_j + g_j(r) = 0, \\qquad g_j(r) = F \\cdot \\bigl(v_j + \\omega_j \\times (r - o)\\bigr),

``F`` the ground force on those bodies (world, the reference's, interpolated), ``r`` its
centre of pressure, ``[omega_j; v_j]`` the column ``j`` of the child body's world-aligned
Jacobian at its origin ``o`` (``g_j`` the generalised force of ``F`` applied at ``r``). ``g_j``
is linear in ``r``, so over the polygon of the support points ``p_i`` it ranges between its
values at the vertices, and the floor can balance exactly

.. math::

    -\\max_i g_j(p_i) \\le \\tau_j \\le -\\min_i g_j(p_i)

(a box over the joint's axes: a rectangle-like foot's pitch and roll axes move the COP along
its length and its width, so the box is close to the polygon's image). The points are first
moved ``margin`` toward the centroid of their body's points along each body axis on which
the points spread (the sole's length and width), and only points the reference loads with
more than ``min_load`` count (an unloaded point is moved out of the ``min``/``max`` by a
large offset). The reference's own torque ``tau_ref`` is always admitted (the bounds are
widened to include it: the foot's neglected inertia, a reference centre of pressure on the
edge), so the limit bounds the corrections only. Away from stance (the force on those
bodies below ``stance_load``) the bound is off. The net joint torque is the command minus
the plant's implicit joint damping ``D v`` (:class:`~multibody.motion.ForwardPass`), so the
command is clamped to ``[lo + D v, hi + D v]`` with the current velocity ``v``.

:func:`support_limit_function` writes this on CasADi symbols as ``(q, v, ref, command) ->
command``; :func:`support_limit_reference` builds ``ref``'s rows from the reference's contact
forces and torques.

Measured (``benchmarks/bench_forward_pass.py``, HDM walk on the 20 mm-margin reference
``/tmp/h61/cm_m20b``, the walking settings with ankles at 0.45, 8 perturbed runs): the limit
makes the walk fall. Markers were 0.80 m at margin 10 mm and 0.79 m at 0 mm, on the roll axes
alone 0.70 m, on the ankles alone 0.77 m, all falling at 1.4-1.5 s, against 33 mm without the
limit. In the run without the limit, the ankle commands exceed the support in 40-55 % of the
stance frames, by a median 10-14 N m. The foot then tips briefly and the rotation takes up
the PD's error. With the commands clamped, the foot stays flat and the error goes into the
leg and the pelvis. The synthetic test shows the limit does what it says: a roll command
past the edge tips a standing foot 1.9 deg without the limit and not at all with it. With
the support taken from the geometry (:func:`support_activity`: a loaded body's points
within 5 mm of the floor) the walk falls a little later, at 1.9-2.2 s: 0.64 m, and 0.63 m
on the roll axes alone.

References
----------
S.-H. Lee, A. Goswami, "A momentum-based balance controller for humanoid robots on non-level
and non-stationary ground", Autonomous Robots 33(4), 2012 (the admissible COP in the support
polygon).
S.-H. Hyon, J. G. Hale, G. Cheng, "Full-body compliant human-humanoid interaction: balancing
in the presence of unknown external forces", IEEE T-RO 23(5), 2007 (contact forces within the
support).
M. Vukobratovic, B. Borovac, "Zero-moment point -- thirty five years of its life", IJHR
1(1), 2004.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

import casadi as ca

from .errors import MotionError

__all__ = ["SupportLimit", "support_limit_function", "support_limit_reference",
           "shrunk_points", "support_activity"]

_BIG = 1.0e6


def shrunk_points(points, margin: float) -> np.ndarray:
    """``points`` (P, 3) of one body moved ``margin`` (m) toward their centroid along each
    body axis, at most onto it (a sole's length and width; its flat axis, where they do not
    spread, is kept).

    Raises
    ------
    MotionError
        A negative margin.
    """
    if margin < 0:
        raise MotionError(f"support limit: margin must be >= 0, got {margin!r}")
    P = np.asarray(points, float).reshape(-1, 3)
    c = P.mean(axis=0)
    out = P.copy()
    for a in range(3):          # each point moved toward the centroid, at most onto it
        d = P[:, a] - c[a]
        out[:, a] -= np.sign(d) * np.minimum(np.abs(d), margin)
    return out


def support_activity(tree, contact_points: Mapping, floor, q, contact_forces, *,
                     min_load: float = 20.0, band: float = 0.005) -> np.ndarray:
    """Which contact points are in the support, frame by frame: (K, P) of 0/1, the points of
    ``contact_points`` in order.

    A point is in the support in frame ``k`` when its body carries more than ``min_load``
    (N; the sum of the reference's normal forces ``contact_forces`` (K, P, 3) on the body's
    points) and the point is within ``band`` (m) of ``floor`` in the reference ``q`` (K,
    nq). A reference may load a flat foot on one corner (its optimisation put the force
    there); the floor still carries the whole sole, so the support is the body's touching
    points, not its loaded ones.

    Raises
    ------
    MotionError
        ``contact_forces`` of the wrong shape.
    """
    q = np.asarray(q, float)
    F = np.asarray(contact_forces, float)
    sizes = [len(np.asarray(p, float).reshape(-1, 3)) for p in contact_points.values()]
    if F.shape != (len(q), sum(sizes), 3):
        raise MotionError(f"support activity: contact_forces must be ({len(q)}, {sum(sizes)}, "
                          f"3), got {F.shape}")
    n = np.asarray(floor.normal, float)
    L = F @ (n / np.linalg.norm(n))
    out, at = [], 0
    for (b, pts), size in zip(contact_points.items(), sizes):
        P = np.asarray(pts, float).reshape(-1, 3)
        H = np.array([floor.height(P @ np.asarray(tree.body_pose(b, qi), float)[:3, :3].T
                                   + np.asarray(tree.body_pose(b, qi), float)[:3, 3])
                      for qi in q])
        loaded = L[:, at:at + size].sum(axis=1) > min_load
        out.append((loaded[:, None] & (H < band)).astype(float))
        at += size
    return np.hstack(out)


class SupportLimit:
    """The joints of a floating body whose commands are bounded by their feet's support
    (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
        Its first joint is the root.
    contact_points : dict
        ``{body: (P, 3) points in the body frame}`` (the forward pass's placed points).
    command_of_velocity : dict
        Velocity index -> index of the controller's command.
    margin : float
        m: the COP is kept this far inside the loaded points' polygon.
    min_load : float
        N: a point is in the support where the reference pushes on it with more than this.
    stance_load : float
        N: the bound acts while the reference's force on the bodies exceeds this.
    damping : (n_commands,) array_like, optional
        The plant's implicit joint damping per command (``K_d + h K_p``): the command is
        clamped with ``D v`` added (module docstring).
    joints : sequence of str or dict, optional
        The bounded joints (each carries the contact bodies at or below its child; the
        bodies between are neglected like the foot's mass), or ``{joint: axes}`` to bound
        only some of a joint's axes (indices into its velocities; None: all); default: the
        joints whose child is a contact body (a universal ankle above the foot, the toes'
        joint).

    Attributes
    ----------
    groups : list
        ``[(joint name, command indices, velocity indices, bodies)]``: each bounded joint,
        the contact bodies it carries (its child and the contact bodies below it).

    Raises
    ------
    MotionError
        A contact body not in the tree; a bounded joint with a velocity without a command.
    """

    def __init__(self, tree, contact_points: Mapping, command_of_velocity: Mapping, *,
                 margin: float = 0.01, min_load: float = 2.0, stance_load: float = 50.0,
                 damping=None, joints=None) -> None:
        self.tree = tree
        self.bodies = list(contact_points)
        self.points = {b: np.asarray(p, float).reshape(-1, 3) for b, p in contact_points.items()}
        self.shrunk = {b: shrunk_points(p, margin) for b, p in self.points.items()}
        self.margin, self.min_load = float(margin), float(min_load)
        self.stance_load = float(stance_load)
        self.damping = None if damping is None else np.asarray(damping, float)
        parent = {j.child: j for j in tree.joints}
        names = {b.name for b in tree.bodies}
        for b in self.bodies:
            if b not in names:
                raise MotionError(f"support limit: contact body '{b}' is not in tree "
                                  f"'{tree.name}'")

        def ancestors(body):
            out = []
            while body in parent:
                out.append(body)
                body = parent[body].parent
            return out
        self.groups = []
        axes = dict(joints) if isinstance(joints, Mapping) else {}
        if joints is None:
            chosen = [parent[b] for b in self.bodies if b in parent]
        else:
            chosen = []
            for name in joints:
                try:
                    chosen.append(tree.get_joint(name))
                except Exception:                   # noqa: BLE001 - named below
                    raise MotionError(f"support limit: no joint '{name}' in tree "
                                      f"'{tree.name}'") from None
        for j in chosen:
            if j is tree.joints[0] or j.nv == 0:
                continue
            carried = [c for c in self.bodies if j.child in ancestors(c)]
            if not carried:
                raise MotionError(f"support limit: joint '{j.name}' carries no contact body "
                                  f"(of {self.bodies})")
            ax = axes.get(j.name)
            ax = list(range(j.nv)) if ax is None else [int(a) for a in np.ravel(ax)]
            if any(not 0 <= a < j.nv for a in ax):
                raise MotionError(f"support limit: axes {ax} of joint '{j.name}' outside "
                                  f"0..{j.nv - 1}")
            vi = [j.v_start + a for a in ax]
            missing = [v for v in vi if v not in command_of_velocity]
            if missing:
                raise MotionError(f"support limit: joint '{j.name}' carrying {carried} has "
                                  f"velocities {missing} without a command")
            self.groups.append((j.name, [command_of_velocity[v] for v in vi], vi, carried))
        self.n_ref = sum(3 + sum(len(self.points[c]) for c in g[3]) + len(g[2])
                         for g in self.groups)
        """Rows of ``ref`` per frame: per group, the force on its bodies (3, world), its
        points' support flags (0/1, the bodies' points in order), then the joint's reference
        torques (the feedforward, always admitted)."""

    def function(self, n_commands: int) -> ca.Function:
        """``(q, v, ref, command) -> command`` (n_commands,), the bounded joints' entries
        clamped (module docstring); ``ref`` (:attr:`n_ref`) as :meth:`reference` builds."""
        tree = self.tree
        q = ca.SX.sym("q", tree.nq)
        v = ca.SX.sym("v", tree.nv)
        ref = ca.SX.sym("ref", self.n_ref)
        cmd = ca.SX.sym("command", n_commands)
        out = [cmd[i] for i in range(n_commands)]
        at = 0
        for name, ci, vi, carried in self.groups:
            F = ref[at:at + 3]
            at += 3
            child = tree.get_joint(name).child
            T = tree.body_pose(child, q)
            o = T[:3, 3]
            J = tree.jacobian(child, q)
            Fn = ca.norm_2(F)
            on = Fn > self.stance_load
            g = []                                   # per point: (a_i, g_j(p_i) for each j)
            for b in carried:
                Tb = tree.body_pose(b, q)
                for p in self.shrunk[b]:
                    r = ca.mtimes(Tb[:3, :3], ca.DM(p)) + Tb[:3, 3]
                    a = ref[at] > 0.5
                    at += 1
                    g.append((a, [ca.dot(F, J[3:, j] + ca.cross(J[:3, j], r - o)) for j in vi]))
            # no bound without an active point (the crossed bounds would pin the command)
            on = ca.logic_and(on, _fold(lambda x, y: x + y, [a for a, _ in g]) > 0.5)
            for k, c in enumerate(ci):
                lo = -_fold(ca.fmax, [gj[k] - _BIG * (1 - a) for a, gj in g])
                hi = -_fold(ca.fmin, [gj[k] + _BIG * (1 - a) for a, gj in g])
                tref = ref[at]
                at += 1
                lo, hi = ca.fmin(lo, tref), ca.fmax(hi, tref)
                dv = float(self.damping[c]) * v[vi[k]] if self.damping is not None else 0.0
                lo = ca.if_else(on, lo + dv, -_BIG)
                hi = ca.if_else(on, hi + dv, _BIG)
                out[c] = ca.fmin(ca.fmax(out[c], lo), hi)
        return ca.Function("support_limit", [q, v, ref, cmd], [ca.vertcat(*out)],
                           ["q", "v", "ref", "command"], ["limited"])

    def reference(self, contact_forces, floor_normal, tau=None, activity=None) -> np.ndarray:
        """The rows ``ref`` (K, :attr:`n_ref`) from the reference's world contact forces
        ``contact_forces`` (K, points, 3), the points in the order of the contact points
        given (all bodies), normal loads along ``floor_normal``, its joint torques ``tau``
        (K, nv) (tree order; default zeros) and the points in the support ``activity`` (K,
        points) of 0/1 (:func:`support_activity`; default: the points loaded with more
        than ``min_load``).

        Raises
        ------
        MotionError
            ``contact_forces`` or ``tau`` of the wrong shape.
        """
        sizes = [len(self.points[b]) for b in self.bodies]
        F = np.asarray(contact_forces, float)
        if F.ndim != 3 or F.shape[1:] != (sum(sizes), 3):
            raise MotionError(f"support limit: contact_forces must be (frames, {sum(sizes)}, 3)"
                              f" (the points of {self.bodies} in order), got {F.shape}")
        n = np.asarray(floor_normal, float)
        n = n / np.linalg.norm(n)
        cuts = np.cumsum([0] + sizes)
        per = {b: F[:, cuts[i]:cuts[i + 1]] for i, b in enumerate(self.bodies)}
        cols = []
        K = len(F)
        tau = np.zeros((K, self.tree.nv)) if tau is None else np.asarray(tau, float)
        if tau.shape != (K, self.tree.nv):
            raise MotionError(f"support limit: tau must be ({K}, {self.tree.nv}) (frames, "
                              f"velocities of tree '{self.tree.name}'), got {tau.shape}")
        act = (np.asarray(activity, float) if activity is not None else
               (F @ n > self.min_load).astype(float))
        if act.shape != (K, sum(sizes)):
            raise MotionError(f"support limit: activity must be ({K}, {sum(sizes)}), got "
                              f"{act.shape}")
        pa = {b: act[:, cuts[i]:cuts[i + 1]] for i, b in enumerate(self.bodies)}
        for _, _, vi, carried in self.groups:
            cols.append(sum(per[b].sum(axis=1) for b in carried))
            cols.extend(pa[b] for b in carried)
            cols.append(tau[:, vi])
        return np.column_stack(cols)


def _fold(op, xs: Sequence):
    out = xs[0]
    for x in xs[1:]:
        out = op(out, x)
    return out


def support_limit_function(tree, contact_points: Mapping, command_of_velocity: Mapping,
                           n_commands: int, **options) -> tuple:
    """``(SupportLimit, casadi.Function)``: :class:`SupportLimit` of the arguments
    (``options`` its keywords) and its ``(q, v, ref, command) -> command``."""
    s = SupportLimit(tree, contact_points, command_of_velocity, **options)
    return s, s.function(n_commands)


def support_limit_reference(limit: SupportLimit, contact_forces, floor_normal) -> np.ndarray:
    """:meth:`SupportLimit.reference`: the rows (K, n_ref) of the reference's contact
    forces."""
    return limit.reference(contact_forces, floor_normal)

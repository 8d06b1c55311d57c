"""Balance of a floating-base body driven by joint torques: a pelvis pose feedback carried by
the stance legs, and contact spheres placed on the fitted floor.

A body whose joints follow their references exactly still falls: with the root unactuated,
its pose in the world is fixed only by where its feet are, and standing or walking is an
inverted pendulum that turns any small error (a residual the inverse dynamics needed on the
root, a foot set a few millimetres off, contact forces shared differently between the foot
points than the reference assumed) into a fall within about a second. Walking controllers
close that loop through the stance legs (virtual model control, Pratt et al. 2001; the
stance-leg Jacobian transpose of Hyon, Hale and Cheng 2007):

* a corrective wrench on the root body (the pelvis), world axes, about its origin,

  .. math::

      W = \\begin{bmatrix} m \\\\ f \\end{bmatrix}
        = \\begin{bmatrix} K_{p,r}\\,\\phi + K_{d,r}\\,(\\omega_d - \\omega) \\\\
                          K_{p,t}\\,(p_d - p) + K_{d,t}\\,(\\dot p_d - \\dot p)\\end{bmatrix},

  ``phi`` the small rotation from the pelvis to its reference (``vee`` of the skew part of
  ``R_d R^T``);
* shared over the legs by their stance weights ``w_k`` (the reference's share of the vertical
  ground force carried by leg ``k``, summing to 1 over the legs in contact, 0 in flight):
  leg ``k``'s foot should push on the ground with ``w_k W`` moved to the foot's origin
  ``c_k``, ``lambda_k = w_k [m + (p - c_k) x f; f]``;
* mapped to the leg's joint torques through the transpose of the foot Jacobian's leg
  columns (world-aligned at ``c_k``, rows ``[angular; linear]``):
  ``tau_k = -J_{c_k, leg}^T lambda_k``. With the foot held by the ground these torques give
  the root the generalised force of the wrench ``w_k W`` and nothing else (the leg's
  static equilibrium ``tau + J_{leg}^T lambda = 0``); the swing leg (``w_k = 0``) gets none.

:func:`pelvis_balance_function` writes this on CasADi symbols (a function ``(q, v, ref) ->
tau`` that the forward pass's controller adds to its joint commands, so the whole run stays
compiled); :func:`balance_reference_rows` builds the rows ``ref`` from a reference motion.

:func:`place_contact_points` moves each foot contact point along the floor normal so that at
its lowest in the reference motion it is exactly on the fitted floor: a marker fit puts heels
and toes a few centimetres into (or above) the plane the inverse dynamics assumed, and a rigid
floor in simulation would lift (or drop) the foot by as much, tilting the whole body.

References
----------
J. Pratt, C.-M. Chew, A. Torres, P. Dilworth, G. Pratt, "Virtual model control: an intuitive
approach for bipedal locomotion", IJRR 20(2), 2001.
S.-H. Hyon, J. G. Hale, G. Cheng, "Full-body compliant human-humanoid interaction: balancing
in the presence of unknown external forces", IEEE T-RO 23(5), 2007.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

import casadi as ca

from .contact_inverse_dynamics import Floor
from .errors import MotionError

__all__ = ["BalanceGains", "pelvis_balance_function", "balance_reference_rows",
           "place_contact_points", "leg_chains", "stance_shares"]

ROWS = 18
"""Reference rows of the root per frame: position (3), rotation (9, row-major), world linear
velocity (3), world angular velocity (3)."""


@dataclass(frozen=True)
class BalanceGains:
    """Gains of the pelvis wrench (module docstring).

    Attributes
    ----------
    kp_translation : float
        N/m.
    kd_translation : float
        N s/m.
    kp_rotation : float
        N m/rad.
    kd_rotation : float
        N m s/rad.
    """

    kp_translation: float = 2.0e4
    kd_translation: float = 2.0e3
    kp_rotation: float = 2.0e3
    kd_rotation: float = 2.0e2
    swing: float = 0.0
    step_velocity: float = 0.0

    def scaled(self, factor: float) -> "BalanceGains":
        """All four gains times ``factor``."""
        f = float(factor)
        return BalanceGains(f * self.kp_translation, f * self.kd_translation,
                            f * self.kp_rotation, f * self.kd_rotation, f * self.swing,
                            self.step_velocity)


def leg_chains(tree, contact_points: Mapping, command_of_velocity: Mapping) -> list:
    """The legs of a floating body: ``[(foot body, command indices, velocity indices)]``, one
    per side, sorted by side name.

    The side of a contact body is its name up to the first ``'-'`` or ``'_'`` (``'r-foot'``,
    ``'r-toes'`` -> ``'r'``); a side's foot is its contact body nearest the root, its joints
    the chain from the root to that foot. ``command_of_velocity`` maps a velocity index to
    the controller's command index.

    Raises
    ------
    MotionError
        A contact body whose chain to the root has a velocity without a command.
    """
    parent = {j.child: j for j in tree.joints}
    root = tree.joints[0]

    def chain(body):
        out = []
        while body in parent and parent[body] is not root:
            out.insert(0, parent[body])
            body = parent[body].parent
        return out
    sides = {}
    for b in contact_points:
        side = b.split("-")[0].split("_")[0]
        if side not in sides or len(chain(b)) < len(chain(sides[side])):
            sides[side] = b
    legs = []
    for side in sorted(sides):
        js = chain(sides[side])
        vi = [v for j in js for v in range(j.v_start, j.v_start + j.nv)]
        missing = [v for v in vi if v not in command_of_velocity]
        if missing:
            raise MotionError(f"balance: the leg of '{sides[side]}' has velocities {missing} "
                              "without a joint command")
        legs.append((sides[side], [command_of_velocity[v] for v in vi], vi))
    return legs


def pelvis_balance_function(tree, legs: Sequence, n_commands: int,
                            gains: BalanceGains, kp=None, kd=None) -> ca.Function:
    """``(q, v, ref) -> tau`` (n_commands,): the pelvis wrench carried by the stance legs
    (module docstring), on CasADi symbols.

    Parameters
    ----------
    tree : RigidBodyTree
        Its first joint is the free root.
    legs : sequence
        ``[(foot body, command indices, velocity indices)]`` (:func:`leg_chains`).
    n_commands : int
        Size of the output (the controller's joint commands).
    gains : BalanceGains

    Returns
    -------
    casadi.Function
        Inputs ``q`` (nq), ``v`` (nv), ``ref`` (18 + legs): the root's reference rows
        (:data:`ROWS`) and the legs' stance weights.
    """
    root = tree.joints[0]
    if root.type != "free":
        raise MotionError(f"balance: the root joint '{root.name}' of tree '{tree.name}' must "
                          f"be free, got '{root.type}'")
    q = ca.SX.sym("q", tree.nq)
    v = ca.SX.sym("v", tree.nv)
    nl = len(legs)
    ref = ca.SX.sym("ref", ROWS * (1 + nl) + nl)
    T = tree.body_pose(root.child, q)
    R, p = T[:3, :3], T[:3, 3]
    tw = ca.mtimes(tree.jacobian(root.child, q), v)            # [omega; pdot] world
    E = ca.mtimes(ca.reshape(ref[3:12], 3, 3).T, R.T)          # R_d R^T
    phi = 0.5 * ca.vertcat(E[2, 1] - E[1, 2], E[0, 2] - E[2, 0], E[1, 0] - E[0, 1])
    g = gains
    m = g.kp_rotation * phi + g.kd_rotation * (ref[15:18] - tw[:3])
    f = g.kp_translation * (ref[0:3] - p) + g.kd_translation * (ref[12:15] - tw[3:6])
    tau = ca.SX.zeros(n_commands, 1)
    wpos = ROWS * (1 + nl)
    for k, (foot, cmd, vi) in enumerate(legs):
        c = tree.body_pose(foot, q)[:3, 3]
        w = ref[wpos + k]
        lam = w * ca.vertcat(m + ca.cross(p - c, f), f)
        J = tree.jacobian(foot, q)[:, list(vi)]
        tk = -ca.mtimes(J.T, lam)
        if g.swing:
            # the swing foot toward its reference pose moved with the pelvis's position
            # error and its velocity error (foot placement), through the joint PD
            fr = ref[ROWS * (1 + k):ROWS * (2 + k)]
            df, _, _ = _pose_error(tree, foot, q, v, fr)
            shift = -(ref[0:3] - p) + g.step_velocity * (tw[3:6] - ref[12:15])
            shift[2] = 0.0
            df = ca.vertcat(df[:3], df[3:] + shift)
            pinv = ca.mtimes(J.T, ca.inv(ca.mtimes(J, J.T) + 1e-3 * ca.SX.eye(6)))
            sw = g.swing * (1 - ca.fmin(1.0, 2.0 * w))
            kpl = ca.DM([kp[ci] for ci in cmd])
            tk = tk + sw * kpl * ca.mtimes(pinv, df)
        for i, ci in enumerate(cmd):
            tau[ci] += tk[i]
    return ca.Function("pelvis_balance", [q, v, ref], [tau], ["q", "v", "ref"], ["tau"])


def balance_reference_rows(tree, q, v, body: Optional[str] = None) -> np.ndarray:
    """The reference rows (K, 18) of ``body`` (default the root body) in the motion ``q``
    (K, nq), ``v`` (K, nv): world position, rotation (row-major), linear and angular
    velocity."""
    body = tree.joints[0].child if body is None else body
    rows = []
    for qi, vi in zip(np.asarray(q, float), np.asarray(v, float)):
        T = np.asarray(tree.body_pose(body, qi), float)
        tw = np.asarray(tree.jacobian(body, qi), float) @ vi
        rows.append(np.r_[T[:3, 3], T[:3, :3].ravel(), tw[3:], tw[:3]])
    return np.array(rows)


def stance_shares(load) -> np.ndarray:
    """Stance weights (K, legs) from each leg's vertical load (K, legs) (N, e.g. the
    reference's ground forces summed per leg): ``load / sum(load)`` where the sum exceeds
    1 % of its largest value, else 0 (flight)."""
    L = np.clip(np.asarray(load, float), 0.0, None)
    s = L.sum(axis=1, keepdims=True)
    on = s > 0.01 * max(float(s.max()), 1e-12)
    return np.where(on, L / np.where(on, s, 1.0), 0.0)


def place_contact_points(tree, contact_points: Mapping, floor: Floor, q,
                         active=None, flat: bool = False, loads=None,
                         stiffness: Optional[float] = None) -> dict:
    """Contact points moved along the floor normal so that each is on ``floor`` at its
    lowest over the motion ``q`` (K, nq).

    Point ``i`` of body ``b`` at height ``h_i(k)`` above the floor in frame ``k`` (lowest at
    ``k*``) becomes ``p_i - h_i(k*) R_b(k*)^T n`` in the body frame (``n`` the floor normal):
    at ``k*`` it is exactly on the plane, at every other frame it moves with its body as
    before. Only the frames where ``active`` (K, points of the body, bool; default all) is
    true count, so a point the reference never loads keeps its place.

    Parameters
    ----------
    tree : RigidBodyTree
    contact_points : dict
        ``{body: (P, 3) points in the body frame}``.
    floor : Floor
    q : (K, nq) array_like
    active : dict, optional
        ``{body: (K, P) bool}``.

    Returns
    -------
    dict
        ``{body: (P, 3) ndarray}``, same bodies and order.
    """
    n = np.asarray(floor.normal, float)
    n = n / np.linalg.norm(n)
    out = {}
    for body, pts in contact_points.items():
        P = np.asarray(pts, float).reshape(-1, 3)
        Ts = [np.asarray(tree.body_pose(body, qi), float) for qi in np.asarray(q, float)]
        H = np.array([floor.height(P @ T[:3, :3].T + T[:3, 3]) for T in Ts])
        mask = np.ones_like(H, bool) if active is None or body not in active else \
            np.asarray(active[body], bool)
        if mask.shape != H.shape:
            raise MotionError(f"place_contact_points: active['{body}'] must be {H.shape}, got "
                              f"{mask.shape}")
        new = P.copy()
        if stiffness:
            F = np.asarray(loads[body], float)
            for i in range(len(P)):
                on = mask[:, i] & (F[:, i] > 0)
                if on.any():
                    k = int(np.argmax(np.where(on, F[:, i], -np.inf)))
                    s_i = float(np.mean(H[on, i] + F[on, i] / stiffness))
                    new[i] = P[i] - s_i * (Ts[k][:3, :3].T @ n)
            out[body] = new
            continue
        if flat:
            k = int(np.argmin(np.where(mask.all(axis=1), H.max(axis=1), np.inf)))
            for i in range(len(P)):
                new[i] = P[i] - H[k, i] * (Ts[k][:3, :3].T @ n)
            out[body] = new
            continue
        for i in range(len(P)):
            if not mask[:, i].any():
                continue
            k = int(np.argmin(np.where(mask[:, i], H[:, i], np.inf)))
            new[i] = P[i] - H[k, i] * (Ts[k][:3, :3].T @ n)
        out[body] = new
    return out


def _pose_error(tree, body, q, v, ref):
    """``(delta, delta_dot, J)``: the small displacement ``[phi; dp]`` and twist error from
    ``body``'s pose to the reference rows ``ref`` (:data:`ROWS`), world axes, and its
    world-aligned Jacobian, on CasADi symbols."""
    T = tree.body_pose(body, q)
    R, p = T[:3, :3], T[:3, 3]
    J = tree.jacobian(body, q)
    tw = ca.mtimes(J, v)
    E = ca.mtimes(ca.reshape(ref[3:12], 3, 3).T, R.T)
    phi = 0.5 * ca.vertcat(E[2, 1] - E[1, 2], E[0, 2] - E[2, 0], E[1, 0] - E[0, 1])
    return (ca.vertcat(phi, ref[0:3] - p),
            ca.vertcat(ref[15:18] - tw[:3], ref[12:15] - tw[3:6]), J)


def _sensed_weights(tree, q, sensed, nl):
    """Per leg ``clip(1 - h / band, 0, 1)`` of its lowest contact point's height ``h`` above
    the floor in the current state (``sensed = (normal, offset, band, [[(body, (P, 3))]])``),
    on CasADi symbols."""
    n, off, band, per_leg = sensed
    out = []
    for k in range(nl):
        hs = []
        for body, P in per_leg[k]:
            T = tree.body_pose(body, q)
            for p in np.asarray(P, float).reshape(-1, 3):
                hs.append(ca.dot(ca.DM(n), ca.mtimes(T[:3, :3], ca.DM(p)) + T[:3, 3]) - off)
        h = hs[0]
        for x in hs[1:]:
            h = ca.fmin(h, x)
        out.append(ca.fmin(1.0, ca.fmax(0.0, 1.0 - h / band)))
    return out


def pelvis_pose_function(tree, legs: Sequence, kp, kd, gain: float,
                         damping: float = 1e-3, sensed=None) -> ca.Function:
    """``(q, v, ref) -> tau``: the pelvis pose feedback written as leg joint displacements
    through the joint PD (``K_p``, ``K_d`` per command): each stance leg ``k`` (weight
    ``w_k``) adds ``gain w_k (K_p dq_k + K_d dq_dot_k)`` with ``dq_k = -J_{fl}^+ J_{fr}
    J_{pr}^{-1} delta`` the leg displacement that moves the pelvis by its pose error
    ``delta`` with the foot fixed (``J_fl``, ``J_fr``: the foot Jacobian's leg and root
    columns, ``J_pr`` the pelvis's root columns, ``+`` a pseudo-inverse damped by
    ``damping``); ``dq_dot_k`` likewise from the twist error. Same ``ref`` as
    :func:`pelvis_balance_function`."""
    root = tree.joints[0]
    q = ca.SX.sym("q", tree.nq)
    v = ca.SX.sym("v", tree.nv)
    nl = len(legs)
    ref = ca.SX.sym("ref", ROWS * (1 + nl) + nl)
    rv = list(range(root.v_start, root.v_start + 6))
    dp, dpd, Jp = _pose_error(tree, root.child, q, v, ref[:ROWS])
    tau = ca.SX.zeros(len(kp), 1)
    sw = None if sensed is None else _sensed_weights(tree, q, sensed, nl)
    for k, (foot, cmd, vi) in enumerate(legs):
        Jf = tree.jacobian(foot, q)
        Jl = Jf[:, list(vi)]
        pinv = ca.mtimes(Jl.T, ca.inv(ca.mtimes(Jl, Jl.T) + damping * ca.SX.eye(6)))
        A = -ca.mtimes(pinv, ca.mtimes(Jf[:, rv], ca.inv(Jp[:, rv])))
        w = ref[ROWS * (1 + nl) + k] if sensed is None else sw[k]
        dq = w * ca.mtimes(A, dp)
        dqd = w * ca.mtimes(A, dpd)
        for i, c in enumerate(cmd):
            tau[c] += gain * kp[c] * dq[i]
    return ca.Function("pelvis_pose", [q, v, ref], [tau], ["q", "v", "ref"], ["tau"])


def stance_floor(tree, contact_points: Mapping, q, times, floor: Floor, *,
                 speed: float = 0.15, band: float = 0.01, rounds: int = 4) -> Floor:
    """The plane under the feet of the motion ``q`` (K, nq) at ``times`` (K,): a least-squares
    plane through each side's lowest contact point in the frames where it moves slower than
    ``speed`` (m/s), refitted ``rounds`` times without the points more than ``band`` (m)
    above it (a foot lifting, a heel rocking).

    ``floor`` gives the starting plane (its normal's side is kept). A marker fit moves the
    feet a little from stride to stride; the floor of the inverse dynamics, fitted to the
    contact points at rest, can then be tilted by a degree against the feet in stance, which
    puts the later strides' feet centimetres above it -- the forward pass's floor is this
    plane instead.

    Raises
    ------
    MotionError
        Fewer than three resting points.
    """
    q = np.asarray(q, float)
    t = np.asarray(times, float)
    sides: dict = {}
    for b, pts in contact_points.items():
        sides.setdefault(b.split("-")[0].split("_")[0], []).append((b, np.asarray(pts, float)))
    n0 = np.asarray(floor.normal, float)
    n0 = n0 / np.linalg.norm(n0)
    Xs = [np.array([np.vstack([P @ np.asarray(tree.body_pose(b, qi), float)[:3, :3].T
                               + np.asarray(tree.body_pose(b, qi), float)[:3, 3]
                               for b, P in items]) for qi in q]) for items in sides.values()]
    Vs = [np.gradient(X, t, axis=0) for X in Xs]
    n, c, band_now = n0, np.asarray(floor.point, float), np.inf
    for _ in range(rounds):
        low = []
        for X, V in zip(Xs, Vs):                       # each side's lowest point, at rest
            i = np.argmin(X @ n, axis=1)
            r = np.arange(len(q))
            P, S = X[r, i], np.linalg.norm(V[r, i], axis=1)
            low.append(P[(S < speed) & ((P - c) @ n < band_now)])
        P = np.vstack(low) if low else np.zeros((0, 3))
        if len(P) < 3:
            raise MotionError(f"stance_floor: {len(P)} resting foot points (slower than "
                              f"{speed} m/s); need at least 3")
        c = P.mean(axis=0)
        _, _, Vt = np.linalg.svd(P - c)
        n = Vt[-1] if Vt[-1] @ n0 > 0 else -Vt[-1]
        band_now = band
    return Floor(n, c)

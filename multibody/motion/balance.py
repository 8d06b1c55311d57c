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
  static equilibrium ``tau + J_{leg}^T lambda = 0``); the swing leg (``w_k = 0``) gets none;
* optionally (``BalanceGains.pose``) a kinematic pose correction of the stance legs: the
  joint PD's targets of a leg in stance are moved by the leg motion that puts the pelvis back
  on its reference with the foot held where it is (:func:`stance_pose_correction`).

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

__all__ = ["BalanceGains", "pelvis_balance_function", "stance_pose_correction",
           "balance_reference_rows",
           "place_contact_points", "placed_contacts", "stance_floor", "leg_chains",
           "stance_shares"]

ROWS = 18
"""Reference rows of the root per frame: position (3), rotation (9, row-major), world linear
velocity (3), world angular velocity (3)."""


@dataclass(frozen=True)
class BalanceGains:
    """Gains of the pelvis feedback (module docstring).

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
    swing : float
        Gain (0 to 1) of the swing-foot placement through the joint PD (0: off).
    step_velocity : float
        Seconds: the swing foot is moved by this times the pelvis's horizontal velocity
        error (a step farther in the direction the body drifts).
    pose : float
        Gain of the stance legs' pelvis pose correction (0: off; module docstring,
        :func:`stance_pose_correction`): the joint PD's targets of a leg in stance (weight
        ``w_k``) are moved by ``r_k pose dq``, ``r_k = min(1, 2 w_k)``, ``dq`` the leg motion
        that puts the pelvis on its reference with the foot where it is.
    pose_weights : (float, float, float) or (float,) * 6
        Factors on the pelvis error's rotation, horizontal and vertical parts in ``dq`` (the
        horizontal position is the one the foot's support limits); six entries weigh the
        error's world rows one by one (rotation about x, y, z, then position x, y, z).
    pose_cap : float
        Largest ``dq`` of one coordinate (rad; ``pose_cap / 0.1 s`` for the velocities).
    foot_rotation : float or (float, float, float)
        Gain (0: off; three entries: per world axis of ``phi_f``) of a stance-foot rotation
        term added to the pose correction's ``dq``
        and ``dv`` (before the cap): the leg motion ``J_{f,leg}^+ [phi_f; 0]`` that turns the
        stance foot back onto its reference orientation (``phi_f`` its rotation error, world
        axes; twist error likewise) with the pelvis held. A foot that tips onto its edge under
        the ankle's torque is turned back flat instead of carrying the leg and pelvis
        sideways. Needs ``pose``. On the HDM walk's rigid reference it made the walk worse
        (``multibody.motion.forward_pass``, limits).
    """

    kp_translation: float = 1.0e3
    kd_translation: float = 3.0e2
    kp_rotation: float = 3.0e2
    kd_rotation: float = 60.0
    swing: float = 0.0
    step_velocity: float = 0.0
    pose: float = 0.0
    pose_weights: tuple = (1.0, 1.0, 1.0)
    pose_cap: float = 0.2
    foot_rotation: float = 0.0

    def scaled(self, factor: float) -> "BalanceGains":
        """The four wrench gains, ``swing`` and ``pose`` times ``factor``."""
        f = float(factor)
        return BalanceGains(f * self.kp_translation, f * self.kd_translation,
                            f * self.kp_rotation, f * self.kd_rotation, f * self.swing,
                            self.step_velocity, f * self.pose, self.pose_weights,
                            self.pose_cap, self.foot_rotation)


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


def stance_pose_correction(tree, foot: str, leg_velocities: Sequence, q, delta,
                           damping: float = 1e-4):
    """The leg motion that moves the root body by ``delta`` while ``foot`` stays where it is.

    With the foot held (its twist ``J_f v = 0``) a small root displacement ``delta = [phi;
    dp]`` (world axes: rotation vector, displacement of the root body's origin) takes the
    base coordinates ``d_b = J_{r,b}^{-1} delta`` (``J_{r,b}`` the root body's Jacobian
    w.r.t. the free joint's velocities) and the leg's

    .. math::

        \\Delta q_{leg} = -J_{f,leg}^T (J_{f,leg} J_{f,leg}^T + \\lambda I)^{-1}
                          J_{f,b}\\, J_{r,b}^{-1}\\, \\delta,

    (damped least squares: the inverse for a six-joint leg away from a straight knee).
    Linear in ``delta``, so a twist error maps the same way to velocity corrections.

    Parameters
    ----------
    tree : RigidBodyTree
        Its first joint is the free root.
    foot : str
        The held body.
    leg_velocities : sequence of int
        The leg's velocity indices (:func:`leg_chains`).
    q : (nq,) array_like or casadi.SX
    delta : (6,) array_like or casadi.SX
    damping : float
        lambda.

    Returns
    -------
    casadi.SX or casadi.DM
        ``(len(leg_velocities),)``.
    """
    root = tree.joints[0]
    base = list(range(root.v_start, root.v_start + 6))
    symbolic = isinstance(q, ca.SX) or isinstance(delta, ca.SX)
    mat = (lambda J: ca.SX(J)) if symbolic else (lambda J: ca.DM(np.asarray(J, float)))
    Jr, Jf = mat(tree.jacobian(root.child, q)), mat(tree.jacobian(foot, q))
    A = Jf[:, list(leg_velocities)]
    b = -ca.mtimes(Jf[:, base], ca.solve(Jr[:, base], delta))
    n = A.size1()
    return ca.mtimes(A.T, ca.solve(ca.mtimes(A, A.T) + damping * ca.DM.eye(n), b))


def pelvis_balance_function(tree, legs: Sequence, n_commands: int,
                            gains: BalanceGains, kp=None, release=None,
                            kd=None) -> ca.Function:
    """``(q, v, ref) -> tau`` (n_commands,): the pelvis wrench carried by the stance legs
    and the swing-foot placement (module docstring), on CasADi symbols.

    Parameters
    ----------
    tree : RigidBodyTree
        Its first joint is the free root.
    legs : sequence
        ``[(foot body, command indices, velocity indices)]`` (:func:`leg_chains`).
    n_commands : int
        Size of the output (the controller's joint commands).
    gains : BalanceGains
    kp : (n_commands,) array_like, optional
        The joint PD's stiffness (needed when ``gains.swing`` is not 0 or with
        ``release``).
    release : sequence, optional
        Per leg ``[(command index, q index)]``: joints whose PD stiffness is released in
        stance (the command gets ``r_k K_p (q - q_d)``, ``r_k = min(1, 2 w_k)``, cancelling
        the PD's ``K_p (q_d - q)``; their damping stays): a compliant ankle lets the foot lie
        flat on the floor while the pelvis wrench sets its torque.
    kd : (n_commands,) array_like, optional
        The joint PD's damping (needed with ``gains.pose``). The pose servo of a stance leg
        adds ``r_k pose (K_p dq + K_d dv)``, ``dq`` and ``dv`` the leg motions of the
        pelvis's pose and twist errors (:func:`stance_pose_correction`), capped per
        coordinate at ``pose_cap`` and ``pose_cap / 0.1 s``, ``r_k = min(1, 2 w_k)``.

    Returns
    -------
    casadi.Function
        Inputs ``q`` (nq), ``v`` (nv), ``ref`` (18 (1 + legs) + legs + released): the
        root's reference rows (:data:`ROWS`), each leg's foot rows, the legs' stance
        weights, then the released joints' reference coordinates ``q_d(t + h)``.

    Raises
    ------
    MotionError
        A root joint that is not free; a swing gain without ``kp``.
    """
    root = tree.joints[0]
    if root.type != "free":
        raise MotionError(f"balance: the root joint '{root.name}' of tree '{tree.name}' must "
                          f"be free, got '{root.type}'")
    release = [list(r) for r in (release or [[] for _ in legs])]
    if len(release) != len(legs):
        raise MotionError(f"balance: release has {len(release)} entries, expected one list "
                          f"per leg ({len(legs)})")
    if (gains.swing or any(release) or gains.pose) and kp is None:
        raise MotionError("balance: a swing gain, a pose correction or released joints need "
                          "the joint stiffness kp")
    if gains.pose and kd is None:
        raise MotionError("balance: a pose correction needs the joint damping kd")
    nrel = sum(len(r) for r in release)
    q = ca.SX.sym("q", tree.nq)
    v = ca.SX.sym("v", tree.nv)
    nl = len(legs)
    ref = ca.SX.sym("ref", ROWS * (1 + nl) + nl + nrel)
    dp, dpd, _ = _pose_error(tree, root.child, q, v, ref[:ROWS])
    phi, p = dp[:3], ref[0:3] - dp[3:]                          # rotation error, position
    g = gains
    m = g.kp_rotation * phi + g.kd_rotation * dpd[:3]
    f = g.kp_translation * dp[3:] + g.kd_translation * dpd[3:]
    tau = ca.SX.zeros(n_commands, 1)
    wpos = ROWS * (1 + nl)
    for k, (foot, cmd, vi) in enumerate(legs):
        c = tree.body_pose(foot, q)[:3, 3]
        w = ref[wpos + k]
        lam = w * ca.vertcat(m + ca.cross(p - c, f), f)
        J = tree.jacobian(foot, q)[:, list(vi)]
        tk = -ca.mtimes(J.T, lam)
        if g.swing:
            fr = ref[ROWS * (1 + k):ROWS * (2 + k)]
            df, _, _ = _pose_error(tree, foot, q, v, fr)
            shift = -dp[3:] - g.step_velocity * dpd[3:]           # (horizontal)
            shift[2] = 0.0
            df = ca.vertcat(df[:3], df[3:] + shift)
            pinv = ca.mtimes(J.T, ca.inv(ca.mtimes(J, J.T) + 1e-3 * ca.SX.eye(6)))
            sw = g.swing * (1 - ca.fmin(1.0, 2.0 * w))
            kpl = ca.DM([kp[ci] for ci in cmd])
            tk = tk + sw * kpl * ca.mtimes(pinv, df)
        if g.pose:
            cap = float(g.pose_cap)
            S = ca.DM(_pose_row_weights(g.pose_weights))
            dq = stance_pose_correction(tree, foot, vi, q, S * dp)
            dv = stance_pose_correction(tree, foot, vi, q, S * dpd)
            fg = np.broadcast_to(np.asarray(g.foot_rotation, float), (3,))
            if np.any(fg):
                fr = ref[ROWS * (1 + k):ROWS * (2 + k)]
                df, dfd, _ = _pose_error(tree, foot, q, v, fr)
                A = J
                Ap = ca.mtimes(A.T, ca.inv(ca.mtimes(A, A.T) + 1e-4 * ca.SX.eye(6)))
                z3 = ca.SX.zeros(3, 1)
                F = ca.DM(fg)
                dq = dq + ca.mtimes(Ap, ca.vertcat(F * df[:3], z3))
                dv = dv + ca.mtimes(Ap, ca.vertcat(F * dfd[:3], z3))
            dq = ca.fmin(cap, ca.fmax(-cap, dq))
            dv = ca.fmin(cap / 0.1, ca.fmax(-cap / 0.1, dv))
            r = g.pose * ca.fmin(1.0, 2.0 * w)
            tk = tk + r * (ca.DM([kp[ci] for ci in cmd]) * dq
                           + ca.DM([kd[ci] for ci in cmd]) * dv)
        for i, ci in enumerate(cmd):
            tau[ci] += tk[i]
    at = wpos + nl
    for k in range(nl):
        r = ca.fmin(1.0, 2.0 * ref[wpos + k])
        for ci, qi in release[k]:
            tau[ci] += r * float(kp[ci]) * (q[qi] - ref[at])
            at += 1
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
                         active=None, quantile: float = 0.0) -> dict:
    """Contact points moved along the floor normal so that each is on ``floor`` at its
    lowest (or a given quantile of its heights) over the motion ``q`` (K, nq).

    Point ``i`` of body ``b`` at height ``h_i(k)`` above the floor in frame ``k`` becomes
    ``p_i - h_i(k*) R_b(k*)^T n`` in the body frame (``n`` the floor normal), ``k*`` the
    frame of its lowest height (``quantile`` 0) or the frame whose height is nearest the
    ``quantile`` of its heights: at ``k*`` it is exactly on the plane, at every other frame
    it moves with its body as before. Only the frames where ``active`` (K, points of the
    body, bool; default all) is true count, so a point the reference never loads keeps its
    place.

    Parameters
    ----------
    tree : RigidBodyTree
    contact_points : dict
        ``{body: (P, 3) points in the body frame}``.
    floor : Floor
    q : (K, nq) array_like
    active : dict, optional
        ``{body: (K, P) bool}``.
    quantile : float
        0 to 1 (0: the lowest height). A reference whose feet push within a contact band
        (the inverse dynamics' or the consistent motion's) has each point at its lowest
        only at one instant (the heel at heel strike, the toes at push-off) and the resting
        foot above the floor in between; a higher quantile puts the points where the foot
        rests in more of its loaded frames.

    Returns
    -------
    dict
        ``{body: (P, 3) ndarray}``, same bodies and order.

    Raises
    ------
    MotionError
        ``active`` of the wrong shape, ``quantile`` outside [0, 1].
    """
    if not 0.0 <= float(quantile) <= 1.0:
        raise MotionError(f"place_contact_points: quantile must be in [0, 1], got {quantile!r}")
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
        for i in range(len(P)):
            if not mask[:, i].any():
                continue
            ks = np.flatnonzero(mask[:, i])
            k = int(ks[np.argmin(np.abs(H[ks, i] - np.quantile(H[ks, i], quantile)))])
            new[i] = P[i] - H[k, i] * (Ts[k][:3, :3].T @ n)
        out[body] = new
    return out


def _pose_row_weights(weights) -> list:
    """The six row factors of ``BalanceGains.pose_weights`` (three or six entries)."""
    w = [float(x) for x in weights]
    if len(w) == 3:
        return [w[0], w[0], w[0], w[1], w[1], w[2]]
    if len(w) == 6:
        return w
    raise MotionError(f"balance: pose_weights has {len(w)} entries, expected 3 (rotation, "
                      f"horizontal, vertical) or 6 (world rows)")


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


def placed_contacts(tree, contact_points: Mapping, floor: Floor, q, times,
                    contact_forces=None, *, min_load: float = 50.0,
                    refit_floor: bool = True, quantile: float = 0.0) -> tuple:
    """The forward pass's floor and contact points from a reference motion.

    ``floor`` is replaced by :func:`stance_floor` of the motion ``q`` (K, nq) at ``times``
    (unless ``refit_floor`` is false), then each point is placed by
    :func:`place_contact_points` at its lowest height (or the ``quantile`` of its heights)
    among the frames where the reference pushes on it with more than ``min_load`` (N) (``contact_forces`` (K, points, 3), world,
    the points in the order of ``contact_points``, as
    :class:`~multibody.motion.ContactInverseDynamics` reports them; without them, its lowest
    height over the motion). The inverse dynamics and the consistent motion let a point
    push anywhere within a few centimetres of the floor (their contact band); a rigid floor
    in simulation takes the force only where the point touches.

    Returns
    -------
    tuple
        ``(points {body: (P, 3)}, floor, loads)``; ``loads`` ``{body: (K, P)}`` the
        reference's normal forces (N) or None.

    Raises
    ------
    MotionError
        ``contact_forces`` of the wrong shape.
    """
    if refit_floor:
        floor = stance_floor(tree, contact_points, q, times, floor)
    if contact_forces is None:
        return (place_contact_points(tree, contact_points, floor, q, quantile=quantile), floor,
                None)
    F = np.asarray(contact_forces, float)
    sizes = [len(np.asarray(p, float).reshape(-1, 3)) for p in contact_points.values()]
    K = len(np.asarray(q))
    if F.shape != (K, sum(sizes), 3):
        raise MotionError(f"placed_contacts: contact_forces must be ({K}, {sum(sizes)}, 3) "
                          f"(frames, the contact points in order, xyz), got {F.shape}")
    load = F @ (np.asarray(floor.normal, float) / np.linalg.norm(floor.normal))
    cuts = np.cumsum([0] + sizes)
    loads = {b: load[:, cuts[i]:cuts[i + 1]] for i, b in enumerate(contact_points)}
    active = {b: L > min_load for b, L in loads.items()}
    return (place_contact_points(tree, contact_points, floor, q, active, quantile), floor,
            loads)

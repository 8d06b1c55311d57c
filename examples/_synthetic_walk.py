"""A synthetic walking capture for ``human_walking.py``: a gait cycle that the contact inverse
dynamics can explain (feet on the floor in stance, ground forces that carry the body).

The walk is periodic with one stride (right heel strike to right heel strike) of ``period``
seconds at ``speed`` m/s along +y (the skeleton files face +y). It is built in three layers:

1. **Feet.** Each foot strikes with its heel (toes up ``heel_strike_pitch``), rolls flat about
   the heel edge (``loading`` s), stays flat, lifts its heel from ``heel_rise`` s after the
   strike and rolls about the front edge (slowly first, pitch growing with the square of
   time) to ``toe_off_pitch``, then swings to the next footprint (minimum-jerk path,
   ``clearance`` lift, raised further where the leg could not reach). In stance the pivot
   edge is at rest on ``z = 0``. Each step is ``speed * period / 2`` long; the double support
   lasts ``double_support`` seconds.
2. **Centre of mass.** The centre of pressure ``p(t)`` moves from the heel to the front edge of
   the stance foot, and from the rear to the front foot in double support. The pelvis rises
   and falls by ``bob`` (highest in mid stance). The horizontal centre of mass ``c(t)``
   is the periodic solution of the point-foot pendulum with that height ``h(t)``,

   .. math:: \\ddot c = \\frac{g + \\ddot h}{h} (c - p),

   so that the ground force through ``p`` gives the centre of mass its acceleration (up to
   the limbs' angular momentum): the motion needs no force from anywhere else.
3. **Joints.** The pelvis is placed so that the whole body's centre of mass follows
   ``c(t)`` (a few fixed-point passes), each leg's six joint angles put its foot at the
   foot pose (damped Gauss-Newton on the foot frame's pose error), and the arms swing
   against the legs (``arm_swing`` each way).

References
----------
S. Kajita et al., "Biped walking pattern generation by using preview control of zero-moment
point", ICRA 2003 (the centre-of-mass / centre-of-pressure pendulum). J. Perry, "Gait
Analysis: Normal and Pathological Function", 1992 (heel, ankle and forefoot rockers; joint
angle shapes and timing).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.spatial.transform import Rotation

__all__ = ["Gait", "walk_configurations"]


@dataclass
class Gait:
    """Parameters of the synthetic walk (SI units, angles in radians; module docstring).

    The defaults are a normal adult walk: 1.2 m/s, 109 steps a minute (0.66 m steps), about
    18 % of the cycle in each double support, toe-off at 59 % of the cycle.
    """

    speed: float = 1.2
    period: float = 1.1                 # one stride
    double_support: float = 0.1         # per step
    clearance: float = 0.06
    heel_strike_pitch: float = np.radians(10.0)
    toe_off_pitch: float = np.radians(-45.0)
    loading: float = 0.08               # heel rocker duration
    heel_rise: float = 0.30             # heel rise starts this long after heel strike
    bob: float = 0.02                   # pelvis height: mean +- bob
    crouch: float = 0.035               # mean pelvis height below standing
    arm_swing: float = np.radians(18.0)
    first_heel_strike: float = 0.1      # of the right foot, s after the capture starts


def _min_jerk(s):
    s = np.clip(s, 0.0, 1.0)
    return s ** 3 * (10 - 15 * s + 6 * s ** 2)


def _rot_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


class _Foot:
    """One foot's geometry in its body frame (origin at the ankle, the skeleton's anchor)."""

    def __init__(self, corners):
        c = np.asarray(corners, float)
        self.heel = np.array([0.0, c[:, 1].min(), c[:, 2].min()])    # bottom back edge
        self.front = np.array([0.0, c[:, 1].max(), c[:, 2].min()])   # bottom front edge
        self.length = self.front[1] - self.heel[1]

    def pose_on(self, pivot_local, pivot_world, pitch):
        R = _rot_x(pitch)
        return R, np.asarray(pivot_world, float) - R @ pivot_local


def _since_strike(gait, t, t_strike, heel):
    """Time since the last heel strike and that strike's heel position (strikes every period
    from ``t_strike`` on ``heel``, one stride further each time)."""
    k = np.floor((np.asarray(t, float) - t_strike) / gait.period)
    return t - t_strike - k * gait.period, heel + k * gait.speed * gait.period


def _foot_track(gait, foot, x, t, t_strike, heel0):
    """Poses ``(R, p, swinging)`` of a foot's frame at times ``t`` (heel strikes every period
    from ``t_strike`` on ``heel0``)."""
    T, stride = gait.period, gait.speed * gait.period
    stance = T / 2 + gait.double_support
    out = []
    for tau, heel in zip(*_since_strike(gait, t, t_strike, heel0)):
        if tau < gait.loading:                         # heel rocker
            pitch = gait.heel_strike_pitch * (1 - _min_jerk(tau / gait.loading))
            out.append(foot.pose_on(foot.heel, [x, heel, 0.0], pitch) + (False,))
        elif tau < gait.heel_rise:                     # foot flat
            out.append(foot.pose_on(foot.heel, [x, heel, 0.0], 0.0) + (False,))
        elif tau < stance:                             # forefoot rocker
            s = (tau - gait.heel_rise) / (stance - gait.heel_rise)
            out.append(foot.pose_on(foot.front, [x, heel + foot.length, 0.0],
                                    gait.toe_off_pitch * s ** 2) + (False,))
        else:                                          # swing to the next footprint
            s = (tau - stance) / (T - stance)
            _, p0 = foot.pose_on(foot.front, [x, heel + foot.length, 0.0], gait.toe_off_pitch)
            _, p1 = foot.pose_on(foot.heel, [x, heel + stride, 0.0], gait.heel_strike_pitch)
            m = _min_jerk(s)
            p = p0 + m * (p1 - p0) + np.array([0.0, 0.0, gait.clearance * np.sin(np.pi * s) ** 2])
            out.append((_rot_x(gait.toe_off_pitch + m * (gait.heel_strike_pitch
                                                        - gait.toe_off_pitch)), p, True))
    return out


def _pressure(gait, foot, t, x, heels):
    """Centre of pressure (x, y) at times ``t``: along the stance foot from heel to front
    edge, from the rear to the front foot in double support. ``x`` and ``heels``:
    ``{side: lateral position}``, ``{side: (first strike time, its heel position)}``."""
    T, ds = gait.period, gait.double_support
    knots = [0.0, gait.heel_rise, T / 2 + ds]
    cop, since = {}, {}
    for side, (t0, h0) in heels.items():
        tau, heel = _since_strike(gait, t, t0, h0)
        since[side] = tau
        cop[side] = heel + np.interp(tau, knots, [0.03, foot.length - 0.04, foot.length - 0.01])
    tr = since["r"]
    w = np.select([tr < ds, tr < T / 2, tr < T / 2 + ds], [tr / ds, 1.0, 1 - (tr - T / 2) / ds],
                  0.0)                                 # share of the right foot
    return w * x["r"] + (1 - w) * x["l"], w * cop["r"] + (1 - w) * cop["l"]


def _periodic_pendulum(t, p, omega2, drift):
    """Periodic ``c`` with ``c'' = omega2 (c - p)`` on the uniform periodic grid ``t`` (one
    period; ``c(t + P) = c(t) + drift``): second differences on a circulant grid."""
    n, h = len(t), t[1] - t[0]
    e = p - drift * t / (n * h)                            # periodic part of p
    A = np.zeros((n, n))
    i = np.arange(n)
    A[i, i] = -2 / h ** 2 - omega2
    A[i, (i + 1) % n] += 1 / h ** 2
    A[i, (i - 1) % n] += 1 / h ** 2
    return np.linalg.solve(A, -omega2 * e) + drift * t / (n * h)


def _leg_ik(tree, q, foot_body, joints, R_des, p_des, iters=30):
    """Damped Gauss-Newton on the foot frame's pose error over the leg's joint coordinates."""
    idx = np.concatenate([np.arange(j.v_start, j.v_start + j.nv) for j in joints])
    qi = np.concatenate([np.arange(j.q_start, j.q_start + j.nq) for j in joints])
    lo, hi = tree.position_limits()
    for _ in range(iters):
        T = np.asarray(tree.body_pose(foot_body, q), float)
        err = np.concatenate([Rotation.from_matrix(R_des @ T[:3, :3].T).as_rotvec(),
                              p_des - T[:3, 3]])
        if np.linalg.norm(err) < 1e-10:
            break
        J = np.asarray(tree.jacobian(foot_body, q), float)[:, idx]
        dq = np.linalg.solve(J.T @ J + 1e-4 * np.eye(len(idx)), J.T @ err)
        dq *= min(1.0, 0.3 / max(np.abs(dq).max(), 1e-300))     # at most 0.3 rad a step
        q[qi] = np.clip(q[qi] + dq, lo[qi], hi[qi])
    return q, float(np.linalg.norm(err))


def _forward_sign(tree, q0, joint):
    """+1 when a positive first coordinate of ``joint`` moves its segment forward (+y)."""
    q = q0.copy()
    q[joint.q_start] += 0.1
    com = np.asarray(tree.center_of_mass(q), float).ravel()
    return 1.0 if com[1] > np.asarray(tree.center_of_mass(q0), float).ravel()[1] else -1.0


def walk_configurations(model, times, gait: Gait | None = None, grid: int = 220):
    """Configurations ``q`` (T, nq) of ``model`` walking (module docstring) at ``times``.

    Parameters
    ----------
    model : HumanModel
        A body with a floating pelvis, two legs each ending in one foot segment (names starting
        with ``r`` and ``l``, as ``examples/data/walker_skeleton.txt``), optional arms; both
        feet of the same shape.
    times : (T,) array_like
        Capture times (s).
    gait : Gait, optional
    grid : int
        Samples of the stride on which the walk is solved (periodic splines in between).

    Returns
    -------
    (T, nq) ndarray

    Raises
    ------
    ValueError
        A model without one right and one left foot, or a foot pose the leg cannot reach
        within its joint limits (pose error above 1 mm).
    """
    g = gait or Gait()
    tree = model.tree
    names = sorted(model.foot_contact_points)
    feet = {f[0]: f for f in names}
    if sorted(f[0] for f in names) != ["l", "r"]:
        raise ValueError(f"walk_configurations: the model needs one right ('r...') and one "
                         f"left ('l...') foot segment and no toe segments, got {names}")
    chains = {}
    for side, body in feet.items():
        chain, b = [], body
        while b != tree.joints[0].child:
            j = next(j for j in tree.joints if j.child == b)
            chain.insert(0, j)
            b = j.parent
        chains[side] = chain
    q0 = model.reference_configuration()
    root = tree.joints[0]
    ix, iy, iz = root.q_start + 4, root.q_start + 5, root.q_start + 6
    T = g.period
    ts = np.arange(grid) * T / grid
    ankles = {s: np.asarray(tree.body_pose(b, q0), float)[:3, 3] for s, b in feet.items()}
    geo = {s: _Foot(model.foot_contact_points[b]) for s, b in feet.items()}
    step = g.speed * T / 2
    heels = {"r": (0.0, 0.0), "l": (T / 2, step)}     # right strikes at 0, left half a period on
    poses = {s: _foot_track(g, geo[s], ankles[s][0], ts, *heels[s]) for s in feet}
    # pelvis height: highest in mid stance, lowest in double support
    zs = q0[iz] - g.crouch + g.bob * np.cos(4 * np.pi * (ts - g.double_support / 2 - T / 4) / T)
    px, py = _pressure(g, geo["r"], ts, {s: a[0] for s, a in ankles.items()}, heels)
    grav = float(np.linalg.norm(tree.gravity))
    lo, _ = tree.position_limits()
    Q = np.repeat(q0[None], grid, axis=0)
    for c in chains.values():                        # knees bent, away from the straight leg
        for j in c:
            if j.type == "revolute":
                Q[:, j.q_start] = -0.3 if lo[j.q_start] < -0.3 else 0.3
    arms = [tree.get_joint(n) for n in model.arm_joints
            if tree.get_joint(n).parent not in {tree.get_joint(m).child for m in model.arm_joints}]
    swing = {j.name: _forward_sign(tree, q0, j) for j in arms}
    reach = {s: 0.97 * np.linalg.norm(ankles[s] - np.asarray(
        tree.body_pose(chains[s][0].child, q0), float)[:3, 3]) for s in feet}
    com = None
    worst = np.inf
    for it in range(4):                              # pelvis <- centre of mass target
        if com is None:
            c0 = np.asarray(tree.center_of_mass(q0), float).ravel()
            ch = zs + (c0[2] - q0[iz])
            off_xy = np.tile(c0[:2] - q0[[ix, iy]], (grid, 1))
        else:
            ch = com[:, 2]
            off_xy = com[:, :2] - Q[:, [ix, iy]]
        acc = (np.roll(ch, -1) - 2 * ch + np.roll(ch, 1)) / (T / grid) ** 2
        w2 = (grav + acc) / ch
        cx = _periodic_pendulum(ts, px, w2, 0.0)
        cy = _periodic_pendulum(ts, py, w2, 2 * step)
        Q[:, ix], Q[:, iy], Q[:, iz] = cx - off_xy[:, 0], cy - off_xy[:, 1], zs
        worst = 0.0
        for k in range(grid):
            if it == 0 and k > 0:                    # warm start from the previous sample
                for c in chains.values():
                    for j in c:
                        Q[k, j.q_start:j.q_start + j.nq] = Q[k - 1, j.q_start:j.q_start + j.nq]
            for side in ("r", "l"):
                R, p, swinging = poses[side][k]
                hip = np.asarray(tree.body_pose(chains[side][0].child, Q[k]), float)[:3, 3]
                d = np.linalg.norm(p - hip)
                if swinging and d > reach[side]:     # lift the foot (knee flexion) into reach
                    p = hip + (p - hip) * reach[side] / d
                Q[k], err = _leg_ik(tree, Q[k], feet[side], chains[side], R, p)
                worst = max(worst, err)
            for j in arms:                           # back when the same-side leg is forward
                side = 1.0 if j.child.startswith("r") else -1.0
                Q[k, j.q_start] = (-side * swing[j.name] * g.arm_swing
                                   * np.cos(2 * np.pi * ts[k] / T))
        com = np.array([np.asarray(tree.center_of_mass(q), float).ravel() for q in Q])
        if np.abs(com[:, :2] - np.c_[cx, cy]).max() < 1e-4:    # the body's, not the plan's
            break
    if worst > 1e-3:
        raise ValueError(f"walk_configurations: a foot pose is out of reach of the leg "
                         f"(pose error {worst:.3g}); raise Gait.crouch (a lower pelvis) or "
                         "shorten the step")
    # periodic splines over the stride; the forward position drifts by one stride per period
    drift = np.zeros(tree.nq)
    drift[iy] = 2 * step
    tt = np.r_[ts, T]
    Qp = np.vstack([Q, Q[:1] + drift])
    lin = (tt[:, None] / T) * drift
    spline = CubicSpline(tt, Qp - lin, bc_type="periodic", axis=0)
    t = np.asarray(times, float) - g.first_heel_strike
    out = spline(np.mod(t, T)) + (t[:, None] / T) * drift
    out[:, iy] -= out[0, iy]                         # start at the origin
    return out

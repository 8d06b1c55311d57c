"""Test helper: a small free-floating walker for the motion-analysis tests, and a known
smooth motion of it with the left foot planted on the ground.

Pelvis (free joint) -> torso (ball joint, quaternion), and per leg: thigh (Euler xyz hip
with limits), shank (revolute knee), foot (universal ankle). Boxes of uniform density.
Markers: four on the pelvis, three on every other segment. Contact points: the four bottom
corners of each foot.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from multibody import Ball, Euler, Free, Revolute, RigidBodyTree, Universal

SIZES = {"pelvis": (0.25, 0.3, 0.15), "torso": (0.3, 0.35, 0.5),
         "l_thigh": (0.12, 0.12, 0.42), "r_thigh": (0.12, 0.12, 0.42),
         "l_shank": (0.1, 0.1, 0.4), "r_shank": (0.1, 0.1, 0.4),
         "l_foot": (0.26, 0.14, 0.06), "r_foot": (0.26, 0.14, 0.06)}
DENSITY = 1000.0


def _pose(p):
    T = np.eye(4)
    T[:3, 3] = p
    return T


def _box_body(tree, name, com):
    a, b, c = SIZES[name]
    m = DENSITY * a * b * c
    I = m / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    tree.add_body(name, m, com, I)


def walker() -> RigidBodyTree:
    """The walker tree (nq = 7 + 4 + 2 * (3 + 1 + 2) = 23, nv = 21)."""
    t = RigidBodyTree("walker")
    _box_body(t, "pelvis", (0, 0, 0))
    _box_body(t, "torso", (0, 0, 0.25))
    t.add_joint(Free("root", "world", "pelvis"))
    t.add_joint(Ball("spine", "pelvis", "torso", origin=_pose((0, 0, 0.075))))
    for s, y in (("l", 0.1), ("r", -0.1)):
        _box_body(t, f"{s}_thigh", (0, 0, -0.21))
        _box_body(t, f"{s}_shank", (0, 0, -0.2))
        _box_body(t, f"{s}_foot", (0.06, 0, -0.03))
        t.add_joint(Euler(f"{s}_hip", "pelvis", f"{s}_thigh", axes="xyz",
                          origin=_pose((0, y, -0.075)), lower=[-1.0, -2.0, -0.8],
                          upper=[1.0, 1.0, 0.8]))
        t.add_joint(Revolute(f"{s}_knee", f"{s}_thigh", f"{s}_shank", axis=(0, 1, 0),
                             origin=_pose((0, 0, -0.42)), lower=0.0, upper=2.5))
        t.add_joint(Universal(f"{s}_ankle", f"{s}_shank", f"{s}_foot", axis1=(0, 1, 0),
                              axis2=(1, 0, 0), origin=_pose((0, 0, -0.4)),
                              lower=[-1.0, -0.6], upper=[1.0, 0.6]))
    return t.finalize()


def markers():
    """[(name, body, offset)]: four on the pelvis, three on every other segment."""
    out = [("LASI", "pelvis", (0.12, 0.12, 0.05)), ("RASI", "pelvis", (0.12, -0.12, 0.05)),
           ("LPSI", "pelvis", (-0.12, 0.06, 0.06)), ("RPSI", "pelvis", (-0.12, -0.06, 0.06)),
           ("CLAV", "torso", (0.15, 0.0, 0.4)), ("C7", "torso", (-0.15, 0.0, 0.48)),
           ("RBAK", "torso", (-0.15, -0.1, 0.25))]
    for s, sy in (("l", 1), ("r", -1)):
        S = s.upper()
        out += [(f"{S}THI", f"{s}_thigh", (0.0, 0.06 * sy, -0.2)),
                (f"{S}THF", f"{s}_thigh", (0.06, 0.0, -0.25)),
                (f"{S}KNE", f"{s}_thigh", (0.0, 0.06 * sy, -0.42)),
                (f"{S}TIB", f"{s}_shank", (0.05, 0.0, -0.2)),
                (f"{S}SHN", f"{s}_shank", (0.0, 0.05 * sy, -0.25)),
                (f"{S}ANK", f"{s}_shank", (0.0, 0.05 * sy, -0.4)),
                (f"{S}HEE", f"{s}_foot", (-0.06, 0.0, -0.02)),
                (f"{S}TOE", f"{s}_foot", (0.18, 0.0, -0.03)),
                (f"{S}MT5", f"{s}_foot", (0.12, 0.05 * sy, -0.03))]
    return out


def contact_points():
    """{foot: [four bottom corners (3,) in the foot frame]}."""
    pts = [np.array([x, y, -0.06]) for x in (-0.06, 0.2) for y in (-0.07, 0.07)]
    return {"l_foot": pts, "r_foot": pts}


def _quat(axis_angle):
    """Quaternion [w, x, y, z] of a rotation vector (CasADi or numpy)."""
    th = ca.sqrt(ca.sumsqr(axis_angle) + 1e-300)
    s = ca.if_else(th > 1e-8, ca.sin(th / 2) / th, 0.5)
    return ca.vertcat(ca.cos(th / 2), s * axis_angle)


def _rot_to_quat_sym(R):
    """Quaternion of a rotation matrix near identity (w > 0 branch; fine for the motion)."""
    w = 0.5 * ca.sqrt(1 + R[0, 0] + R[1, 1] + R[2, 2])
    return ca.vertcat(w, (R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w),
                      (R[1, 0] - R[0, 1]) / (4 * w))


def known_motion(tree, times, ankle_offset=None):
    """A smooth motion with the left foot planted flat at the origin of the floor z = 0:
    joint angles are sums of sines, the pelvis pose follows from the planted foot. Returns
    ``q (T, nq), v (T, nv), vdot (T, nv)`` exact (CasADi derivatives in time)."""
    if ankle_offset is None:
        ankle_offset = balanced_ankle_offset(tree)
    t = ca.SX.sym("t")
    w = 2 * np.pi * 0.5
    qj = {"spine": _quat(ca.vertcat(0.05 * ca.sin(w * t), 0.05 * ca.sin(w * t + 1), 0.05)),
          "l_hip": ca.vertcat(0.05 * ca.sin(w * t), -0.3 + 0.04 * ca.sin(w * t + 0.5),
                              0.05 * ca.cos(w * t)),
          "l_knee": 0.5 + 0.06 * ca.sin(w * t + 0.5),
          "l_ankle": ca.vertcat(ankle_offset[0] + 0.02 * ca.sin(w * t + 0.2),
                                ankle_offset[1] + 0.02 * ca.sin(w * t)),
          "r_hip": ca.vertcat(-0.1 + 0.03 * ca.sin(w * t), -0.2 * ca.sin(w * t) - 0.4,
                              0.1 * ca.sin(2 * w * t)),
          "r_knee": 1.4 + 0.2 * ca.sin(w * t + 1.0),
          "r_ankle": ca.vertcat(0.3 * ca.sin(w * t), 0.1 * ca.cos(w * t))}
    parts = [ca.SX.zeros(7)]
    for j in tree.joints[1:]:
        parts.append(qj[j.name])
    q = ca.vertcat(*parts)
    q[0] = 1.0
    # relative pose of the left foot in the pelvis frame; the foot is planted at world
    # pose T_wf (flat, at the origin, sole on z = 0): T_wp = T_wf inv(T_pf)
    T_pf = tree.relative_transform("pelvis", "l_foot", q)
    T_wf = ca.DM(_pose((0.0, 0.0, 0.06)))
    R_pf, p_pf = T_pf[0:3, 0:3], T_pf[0:3, 3]
    R_wp = T_wf[0:3, 0:3] @ R_pf.T
    p_wp = T_wf[0:3, 3] - R_wp @ p_pf
    q[0:4] = _rot_to_quat_sym(R_wp)
    q[4:7] = p_wp
    # velocities: v = [omega_body; R^T pdot] for the root, the angular velocity in the
    # child frame for the ball joint, qdot for the others
    def d(x):
        return ca.jacobian(x, t)
    Rdot = d(ca.reshape(R_wp, 9, 1))
    Rd = ca.reshape(Rdot, 3, 3)
    Wb = R_wp.T @ Rd
    omega = ca.vertcat(Wb[2, 1], Wb[0, 2], Wb[1, 0])
    vlin = R_wp.T @ d(p_wp)
    qs = qj["spine"]
    qsd = d(qs)
    # omega_child = 2 vec(conj(q) * qdot)
    w0, x0 = qs[0], qs[1:4]
    wd, xd = qsd[0], qsd[1:4]
    om_s = 2 * (w0 * xd - wd * x0 - ca.cross(x0, xd))
    rest = [d(qj[j.name]) for j in tree.joints[2:]]
    v = ca.vertcat(omega, vlin, om_s, *rest)
    vdot = d(v)
    f = ca.Function("motion", [t], [q, v, vdot])
    if times is None:
        return f
    out = [f(ti) for ti in times]
    Q = np.array([np.asarray(o[0]).ravel() for o in out])
    V = np.array([np.asarray(o[1]).ravel() for o in out])
    A = np.array([np.asarray(o[2]).ravel() for o in out])
    return Q, V, A


def balanced_ankle_offset(tree):
    """Stance-ankle angles (pitch, roll) that put the mean centre of mass over the middle
    of the planted left foot (Newton's method with finite differences)."""
    c = np.array([-0.2, 0.0])
    target = np.array([0.07, 0.0])
    ts = np.linspace(0, 2.0, 9)[:-1]

    def com(c):
        f = known_motion(tree, None, c)
        return np.mean([tree.center_of_mass(np.asarray(f(ti)[0]).ravel())[:2] for ti in ts],
                       axis=0)
    for _ in range(8):
        r = com(c) - target
        if np.abs(r).max() < 1e-6:
            break
        Jc = np.column_stack([(com(c + h) - com(c)) / 1e-6 for h in np.eye(2) * 1e-6])
        c = c - np.linalg.solve(Jc, r)
    return c


def six_joint_leg(body: str = "b_{}", joint: str = "{}") -> RigidBodyTree:
    """Pelvis (free, 10 kg) and a leg of six revolute joints (hip x, y, z; knee y; ankle y, x;
    thigh and shank 0.45 m), not finalized; its bodies and joints named by the formats from
    hx, hy, hz, knee, ay, foot (``body="r-{}"`` makes the foot ``r-foot``, a right foot)."""
    t = RigidBodyTree("leg6")
    t.add_body("pelvis", 10.0, inertia=np.eye(3) * 0.1)
    t.add_joint(Free("floating_base", "world", "pelvis"))
    parent = "pelvis"
    for name, axis, dz in (("hx", (1, 0, 0), 0.0), ("hy", (0, 1, 0), 0.0),
                           ("hz", (0, 0, 1), 0.0), ("knee", (0, 1, 0), -0.45),
                           ("ay", (0, 1, 0), -0.45), ("foot", (1, 0, 0), 0.0)):
        X = np.eye(4)
        X[2, 3] = dz
        t.add_body(body.format(name), 1.0, inertia=1e-3 * np.eye(3))
        t.add_joint(Revolute(joint.format(name), parent, body.format(name), axis=axis,
                             origin=X))
        parent = body.format(name)
    return t

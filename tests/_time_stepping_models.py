"""Small models built in code for the time-stepping tests (private helper)."""
from __future__ import annotations

import numpy as np

from multibody import Free, Revolute, RigidBodyTree
from multibody.geometry import Box, Halfspace, Sphere

__all__ = ["box_inertia", "free_boxes", "free_spheres", "pendulum", "four_bar", "quat_y",
           "quat_axis_angle", "quat_mul", "quat_to_rot"]


def box_inertia(m: float, size) -> np.ndarray:
    """Rotational inertia of a solid box about its centre."""
    a, b, c = size
    return m / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def quat_y(theta: float) -> np.ndarray:
    """Quaternion [w, x, y, z] of a rotation by ``theta`` about y."""
    return np.array([np.cos(theta / 2), 0.0, np.sin(theta / 2), 0.0])


def free_boxes(n: int, size=(0.2, 0.2, 0.2), mass: float = 1.0, gravity=(0, 0, -9.81),
               ground: bool = True) -> RigidBodyTree:
    """``n`` free boxes (bodies ``box0`` ...) over a Halfspace ground on the world."""
    t = RigidBodyTree("boxes", gravity=gravity)
    for i in range(n):
        t.add_body(f"box{i}", mass, inertia=box_inertia(mass, size))
        t.add_joint(Free(f"float{i}", "world", f"box{i}"))
        t.add_collision_geometry(f"box{i}", Box(size), name=f"box{i}_geom")
    if ground:
        t.add_collision_geometry("world", Halfspace(), name="ground")
    return t


def free_spheres(n: int, radius: float = 0.1, mass: float = 1.0) -> RigidBodyTree:
    """``n`` free spheres (bodies ``ball0`` ...) over a Halfspace ground."""
    t = RigidBodyTree("spheres")
    for i in range(n):
        t.add_body(f"ball{i}", mass, inertia=np.eye(3) * 0.4 * mass * radius ** 2)
        t.add_joint(Free(f"float{i}", "world", f"ball{i}"))
        t.add_collision_geometry(f"ball{i}", Sphere(radius), name=f"ball{i}_geom")
    t.add_collision_geometry("world", Halfspace(), name="ground")
    return t


def pendulum(kind: str = "revolute", length: float = 0.5, mass: float = 1.0,
             upper: float | None = None) -> RigidBodyTree:
    """A rod pendulum about the world y axis: body ``link`` with its frame at the pivot and
    its COM ``length`` below; ``kind="revolute"`` (joint ``hinge``) or ``"free"`` (for a
    ball-joint loop closure of the link origin to the world)."""
    t = RigidBodyTree(f"pendulum_{kind}")
    I = np.diag([mass * length ** 2 / 12, mass * length ** 2 / 12, 1e-4])
    t.add_body("link", mass, com=(0, 0, -length), inertia=I)
    if kind == "revolute":
        t.add_joint(Revolute("hinge", "world", "link", axis=(0, 1, 0), upper=upper))
    else:
        t.add_joint(Free("float", "world", "link"))
    return t


def _rod(t, name, mass, length):
    I = np.diag([1e-4, mass * length ** 2 / 12, mass * length ** 2 / 12])
    t.add_body(name, mass, com=(length / 2, 0, 0), inertia=I)


def four_bar(d: float = 1.0, a: float = 0.3, b: float = 1.0, c: float = 0.6,
             theta1: float = 1.0):
    """A planar four-bar (x-z plane, revolute axes along y) as a tree plus the frames to
    close: ground pivots at the origin and at ``(d, 0, 0)``, crank ``a``, coupler ``b``,
    rocker ``c``. Returns ``(tree, q0)``: ``q0`` assembled at crank angle ``theta1``
    (angles about y; a link's x axis is ``(cos, 0, -sin)``). Frames ``coupler_end`` and
    ``rocker_end`` must coincide."""
    t = RigidBodyTree("four_bar")
    _rod(t, "crank", 0.5, a)
    _rod(t, "coupler", 1.0, b)
    _rod(t, "rocker", 0.8, c)
    t.add_joint(Revolute("j_crank", "world", "crank", axis=(0, 1, 0)))
    X = np.eye(4)
    X[0, 3] = a
    t.add_joint(Revolute("j_coupler", "crank", "coupler", origin=X, axis=(0, 1, 0)))
    X2 = np.eye(4)
    X2[0, 3] = d
    t.add_joint(Revolute("j_rocker", "world", "rocker", origin=X2, axis=(0, 1, 0)))
    Xb = np.eye(4)
    Xb[0, 3] = b
    t.add_frame("coupler_end", "coupler", Xb)
    Xc = np.eye(4)
    Xc[0, 3] = c
    t.add_frame("rocker_end", "rocker", Xc)
    # assemble: crank tip P, rocker tip Q with |Q - P| = b, |Q - O2| = c (x-z plane)
    P = np.array([a * np.cos(theta1), -a * np.sin(theta1)])
    O2 = np.array([d, 0.0])
    dist = np.linalg.norm(O2 - P)
    along = (b * b - c * c + dist * dist) / (2 * dist)
    perp = np.sqrt(b * b - along * along)
    e = (O2 - P) / dist
    Q = P + along * e + perp * np.array([-e[1], e[0]])
    ang = lambda v: np.arctan2(-v[1], v[0])  # noqa: E731
    th_coupler = ang(Q - P) - theta1
    th_rocker = ang(Q - O2)
    order = {j.name: j.q_start for j in t.joints}
    q0 = np.zeros(t.nq)
    q0[order["j_crank"]], q0[order["j_coupler"]], q0[order["j_rocker"]] = \
        theta1, th_coupler, th_rocker
    return t, q0


def quat_axis_angle(axis, angle: float) -> np.ndarray:
    """Unit quaternion [w, x, y, z] of a rotation by ``angle`` about ``axis``."""
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


def quat_mul(a, b) -> np.ndarray:
    """Hamilton product ``a b`` of quaternions [w, x, y, z]."""
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def quat_to_rot(q) -> np.ndarray:
    """Rotation matrix (3, 3) of a unit quaternion [w, x, y, z]."""
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])

"""Test models built in code, and their Pinocchio twins.

Trees: a 7-DOF arm, a branching tree, floating humanoids (~30 and ~40 DOF), a chain using
every joint type, the Spong acrobot and RBDL's chains. :func:`to_pinocchio` builds the same
model in Pinocchio (``pin.Model``, ``addJoint``, ``appendBodyToJoint``) and converts states:
Pinocchio orders spatial vectors ``[linear; angular]``, stores quaternions ``[x, y, z, w]``
(free flyer ``q = [p, quat]``, ``v = [v; w]`` local) and its planar joint uses
``q = [x, y, cos, sin]`` with local velocities.
"""
from __future__ import annotations

import numpy as np

from multibody import (Ball, Euler, Free, Planar, Prismatic, Revolute, RigidBodyTree, Screw,
                       Translational, Universal, Weld, spatial)

__all__ = ["arm7", "branching", "humanoid", "all_joints", "acrobot", "rbdl_chain",
           "random_inertia", "random_state", "PinModel", "to_pinocchio", "swap_rows"]


def random_inertia(rng: np.random.Generator) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, com, inertia about the COM) of a randomly rotated solid box."""
    m = rng.uniform(0.5, 5.0)
    a, b, c = rng.uniform(0.05, 0.5, 3)
    Ic = m / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    R = spatial.exp_so3(rng.normal(size=3))
    return m, rng.uniform(-0.2, 0.2, 3), R @ Ic @ R.T


def _origin(rng: np.random.Generator, length: float = 0.3) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = spatial.rpy_to_rotation(rng.uniform(-0.5, 0.5, 3))
    T[:3, 3] = rng.uniform(-0.1, 0.1, 3) + np.array([0, 0, length])
    return T


def _add(tree, rng, name):
    m, c, I = random_inertia(rng)
    tree.add_body(name, m, c, I)


def arm7(seed: int = 0, **kw) -> RigidBodyTree:
    """7 revolute joints, alternating axes, random offsets and inertias, with limits."""
    rng = np.random.default_rng(seed)
    tree = RigidBodyTree("arm7", **kw)
    parent = "world"
    axes = [(0, 0, 1), (0, 1, 0), (0, 0, 1), (0, 1, 0), (0, 0, 1), (0, 1, 0), (1, 0, 0)]
    for k, ax in enumerate(axes):
        name = f"link{k + 1}"
        _add(tree, rng, name)
        tree.add_joint(Revolute(f"j{k + 1}", parent, name, axis=ax, origin=_origin(rng),
                                lower=-2.5, upper=2.5, effort_limit=100.0))
        parent = name
    tree.add_frame("tool", "link7", spatial.pose(np.eye(3), [0, 0, 0.1]))
    return tree


def branching(seed: int = 1, **kw) -> RigidBodyTree:
    """A branching tree: trunk, three branches, prismatic and revolute joints, a weld."""
    rng = np.random.default_rng(seed)
    tree = RigidBodyTree("branching", **kw)
    _add(tree, rng, "trunk")
    tree.add_joint(Revolute("j_trunk", "world", "trunk", axis=(0, 0, 1), origin=_origin(rng)))
    for b in range(3):
        parent = "trunk"
        for k in range(3):
            name = f"b{b}_{k}"
            _add(tree, rng, name)
            ax = rng.normal(size=3)
            if (b + k) % 3 == 1:
                tree.add_joint(Prismatic(f"jp{b}_{k}", parent, name, axis=ax,
                                         origin=_origin(rng)))
            else:
                tree.add_joint(Revolute(f"jr{b}_{k}", parent, name, axis=ax,
                                        origin=_origin(rng)))
            parent = name
    _add(tree, rng, "welded")
    tree.add_joint(Weld("weld", "b1_1", "welded", origin=_origin(rng)))
    _add(tree, rng, "after_weld")
    tree.add_joint(Revolute("j_after_weld", "welded", "after_weld", axis=(1, 0, 0),
                            origin=_origin(rng)))
    return tree


def humanoid(dof: int = 30, seed: int = 2, **kw) -> RigidBodyTree:
    """A floating humanoid: free pelvis, 6-DOF legs, a waist, 2-DOF neck and arms.

    ``dof=30``: 6 + 12 + 1 (waist) + 2 (neck) + 2 x 4 (arms) = 29 velocities;
    ``dof=40``: 6 + 12 + 3 + 2 + 2 x 7 + 2 x 1 (grippers) = 39 + 1 (toe) = 40 velocities.
    """
    rng = np.random.default_rng(seed)
    tree = RigidBodyTree(f"humanoid{dof}", **kw)
    _add(tree, rng, "pelvis")
    tree.add_joint(Free("root", "world", "pelvis"))
    big = dof >= 40

    def chain(prefix, parent, axes, offset):
        for k, ax in enumerate(axes):
            name = f"{prefix}{k}"
            _add(tree, rng, name)
            T = _origin(rng, 0.0)
            T[:3, 3] += offset if k == 0 else np.array([0, 0, -0.2])
            tree.add_joint(Revolute(f"{prefix}j{k}", parent, name, axis=ax, origin=T,
                                    lower=-2.0, upper=2.0))
            parent = name
        return parent

    leg = [(0, 0, 1), (1, 0, 0), (0, 1, 0), (0, 1, 0), (0, 1, 0), (1, 0, 0)]
    for side, y in (("l", 0.1), ("r", -0.1)):
        foot = chain(f"{side}leg", "pelvis", leg, np.array([0, y, -0.1]))
        if big and side == "l":
            _add(tree, rng, "ltoe")
            tree.add_joint(Revolute("ltoej", foot, "ltoe", axis=(0, 1, 0),
                                    origin=_origin(rng, 0.05)))
    waist = [(0, 0, 1), (0, 1, 0), (1, 0, 0)] if big else [(0, 0, 1)]
    torso = chain("waist", "pelvis", waist, np.array([0, 0, 0.2]))
    chain("neck", torso, [(0, 0, 1), (0, 1, 0)], np.array([0, 0, 0.3]))
    arm = [(0, 1, 0), (1, 0, 0), (0, 0, 1), (0, 1, 0), (0, 0, 1), (0, 1, 0), (1, 0, 0)] \
        if big else [(0, 1, 0), (1, 0, 0), (0, 0, 1), (0, 1, 0)]
    for side, y in (("l", 0.2), ("r", -0.2)):
        hand = chain(f"{side}arm", torso, arm, np.array([0, y, 0.25]))
        if big:
            _add(tree, rng, f"{side}finger")
            tree.add_joint(Prismatic(f"{side}grip", hand, f"{side}finger", axis=(0, 1, 0),
                                     origin=_origin(rng, 0.05), lower=0.0, upper=0.05))
    return tree


def all_joints(seed: int = 3, planar_axis=(0, 0, 1), **kw) -> RigidBodyTree:
    """A chain with every joint type (free root, then revolute, prismatic, ball, screw,
    universal, Euler zyx and xzy, planar, translational, weld, revolute)."""
    rng = np.random.default_rng(seed)
    tree = RigidBodyTree("all_joints", **kw)
    joints = [
        lambda p, c, o: Free("free", p, c, origin=o),
        lambda p, c, o: Revolute("rev", p, c, axis=rng.normal(size=3), origin=o),
        lambda p, c, o: Prismatic("pri", p, c, axis=rng.normal(size=3), origin=o),
        lambda p, c, o: Ball("ball", p, c, origin=o),
        lambda p, c, o: Screw("screw", p, c, axis=rng.normal(size=3), pitch=0.05, origin=o),
        lambda p, c, o: Universal("uni", p, c, axis1=(1, 0, 0), axis2=(0, 1, 0), origin=o),
        lambda p, c, o: Euler("eul_zyx", p, c, axes="zyx", origin=o),
        lambda p, c, o: Euler("eul_xzy", p, c, axes="xzy", origin=o),
        lambda p, c, o: Planar("planar", p, c, axis=planar_axis, origin=o),
        lambda p, c, o: Translational("trans", p, c, origin=o),
        lambda p, c, o: Weld("weld", p, c, origin=o),
        lambda p, c, o: Revolute("rev_end", p, c, axis=(0, 1, 0), origin=o),
    ]
    parent = "world"
    for k, make in enumerate(joints):
        name = f"body{k}"
        _add(tree, rng, name)
        tree.add_joint(make(parent, name, _origin(rng, 0.2)))
        parent = name
    return tree


def acrobot(**kw) -> RigidBodyTree:
    """Spong's acrobot: m1 = m2 = 1, l1 = 1, lc1 = 0.5, lc2 = 1, I1 = 0.083, I2 = 0.33
    (moments about the COM, about the joint axis y); links hang along -z at q = 0."""
    tree = RigidBodyTree("acrobot", **kw)
    tree.add_body("link1", 1.0, (0, 0, -0.5), np.diag([0.083, 0.083, 0.0]))
    tree.add_body("link2", 1.0, (0, 0, -1.0), np.diag([0.33, 0.33, 0.0]))
    tree.add_joint(Revolute("shoulder", "world", "link1", axis=(0, 1, 0)))
    tree.add_joint(Revolute("elbow", "link1", "link2", axis=(0, 1, 0),
                            origin=spatial.pose(np.eye(3), [0, 0, -1.0])))
    return tree


def rbdl_chain(n: int, **kw) -> RigidBodyTree:
    """RBDL's DynamicsTests chains: bodies m = 1, com (1, 0, 0), I = diag(1, 1, 1), joints
    about z, each joint 1 m along x from the previous, gravity (0, -9.81, 0)."""
    tree = RigidBodyTree(f"rbdl_chain{n}", gravity=(0, -9.81, 0), **kw)
    parent = "world"
    for k in range(n):
        tree.add_body(f"b{k}", 1.0, (1, 0, 0), np.eye(3))
        o = spatial.pose(np.eye(3), [1.0 if k else 0.0, 0, 0])
        tree.add_joint(Revolute(f"j{k}", parent, f"b{k}", axis=(0, 0, 1), origin=o))
        parent = f"b{k}"
    return tree


def random_state(tree, rng):
    """Random (q, v, vdot/tau) with unit quaternions."""
    q = tree.random_configuration(rng)
    return q, rng.normal(size=tree.nv), rng.normal(size=tree.nv)


def swap_rows(M: np.ndarray) -> np.ndarray:
    """Exchange the first and last 3 rows ([linear; angular] <-> [angular; linear])."""
    return np.concatenate([M[3:6], M[0:3]], axis=0)


# ----------------------------------------------------------------------------- Pinocchio twin
class PinModel:
    """A Pinocchio model of a tree plus state conversions (``pin_v = T(q) v``)."""

    def __init__(self, tree, planar: str = "native") -> None:
        import pinocchio as pin
        self.pin = pin
        self.tree = tree
        model = pin.Model()
        model.gravity.linear = tree.gravity
        attach = {"world": (0, pin.SE3.Identity())}
        self.jid = {}
        self.kind = {}
        for j in tree.joints:
            pid, Tpb = attach[j.parent]
            placement = Tpb * pin.SE3(j.origin[:3, :3].copy(), j.origin[:3, 3].copy())
            b = tree.get_body(j.child)
            inertia = pin.Inertia(b.mass, b.com.copy(), b.inertia.copy())
            if j.type == "weld":
                model.appendBodyToJoint(pid, inertia, placement)
                attach[j.child] = (pid, placement)
                self.kind[j.name] = "weld"
            else:
                jm, kind = self._joint_model(j, planar)
                jid = model.addJoint(pid, jm, placement, j.name)
                model.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
                attach[j.child] = (jid, pin.SE3.Identity())
                self.jid[j.name] = jid
                self.kind[j.name] = kind
        self.frame = {}
        for b in tree.bodies[1:]:
            jid, T = attach[b.name]
            self.frame[b.name] = model.addFrame(pin.Frame(b.name, jid, T, pin.FrameType.OP_FRAME))
        self.model = model
        self.data = model.createData()

    def _joint_model(self, j, planar):
        pin = self.pin
        t = j.type
        if t == "revolute":
            return pin.JointModelRevoluteUnaligned(j.axis), "same"
        if t == "prismatic":
            return pin.JointModelPrismaticUnaligned(j.axis), "same"
        if t == "screw":
            return pin.JointModelHelicalUnaligned(j.axis, j.pitch), "same"
        if t == "universal":
            return pin.JointModelUniversal(j.axis1, j.axis2), "same"
        if t == "euler":
            if j.axes == "zyx":
                return pin.JointModelSphericalZYX(), "same"
            comp = pin.JointModelComposite()
            for a in j.axes:
                comp.addJoint({"x": pin.JointModelRX, "y": pin.JointModelRY,
                               "z": pin.JointModelRZ}[a]())
            return comp, "same"
        if t == "ball":
            return pin.JointModelSpherical(), "ball"
        if t == "planar":
            if planar == "native" and np.allclose(j.axis, [0, 0, 1]):
                return pin.JointModelPlanar(), "planar"
            comp = pin.JointModelComposite()
            comp.addJoint(pin.JointModelPrismaticUnaligned(j.e1))
            comp.addJoint(pin.JointModelPrismaticUnaligned(j.e2))
            comp.addJoint(pin.JointModelRevoluteUnaligned(j.axis))
            return comp, "same"
        if t == "translational":
            return pin.JointModelTranslation(), "same"
        if t == "free":
            return pin.JointModelFreeFlyer(), "free"
        raise NotImplementedError(t)

    def q(self, q: np.ndarray) -> np.ndarray:
        out = np.zeros(self.model.nq)
        for j in self.tree.joints:
            if j.name not in self.jid:
                continue
            jm = self.model.joints[self.jid[j.name]]
            qj = q[j.q_start:j.q_start + j.nq]
            k = self.kind[j.name]
            if k == "ball":
                val = np.r_[qj[1:4], qj[0]]
            elif k == "free":
                val = np.r_[qj[4:7], qj[1:4], qj[0]]
            elif k == "planar":
                val = np.r_[qj[0], qj[1], np.cos(qj[2]), np.sin(qj[2])]
            else:
                val = qj
            out[jm.idx_q:jm.idx_q + jm.nq] = val
        return out

    def T(self, q: np.ndarray, v: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(T, Tdot)`` with ``pin_v = T v`` and ``pin_vdot = T vdot + Tdot v``."""
        nv = self.tree.nv
        T = np.zeros((self.model.nv, nv))
        Td = np.zeros_like(T)
        for j in self.tree.joints:
            if j.name not in self.jid:
                continue
            jm = self.model.joints[self.jid[j.name]]
            a, b = jm.idx_v, j.v_start
            k = self.kind[j.name]
            if k == "free":
                T[a:a + 3, b + 3:b + 6] = np.eye(3)
                T[a + 3:a + 6, b:b + 3] = np.eye(3)
            elif k == "planar":
                th = q[j.q_start + 2]
                c, s = np.cos(th), np.sin(th)
                T[a:a + 2, b:b + 2] = [[c, s], [-s, c]]
                T[a + 2, b + 2] = 1.0
                if v is not None:
                    w = v[b + 2]
                    Td[a:a + 2, b:b + 2] = np.array([[-s, c], [-c, -s]]) * w
            else:
                T[a:a + jm.nv, b:b + j.nv] = np.eye(j.nv)
        return T, Td


def to_pinocchio(tree, planar: str = "native") -> PinModel:
    """The Pinocchio twin of ``tree`` (see :class:`PinModel`)."""
    return PinModel(tree, planar)

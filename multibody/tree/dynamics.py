"""Dynamics of a :class:`~multibody.tree.RigidBodyTree`, written once for numpy and CasADi:
RNEA inverse dynamics, CRBA mass matrix, ABA forward dynamics, energies, centroidal
momentum, configuration rates and passive joint forces.

Equation of motion: ``H(q) vdot + C(q, v) = tau + sum_b J_b^T w_b`` where ``C`` holds the
Coriolis, centrifugal and gravity terms (``bias``) and ``w_b`` are external wrenches.

External wrenches: a 6-vector ``[torque; force]`` per body, **world-aligned and applied at
the body origin** (torque about the body origin, axes parallel to the world's).

Joint damping, springs and friction are *not* part of RNEA/ABA/``bias``; the separate
:func:`joint_passive_forces` gives ``-damping * v - stiffness * (q - rest)`` (on the
manifold for ball/free joints) to be added to ``tau``; Coulomb friction is left to
constraint or actuator blocks. URDF mimic joints are ignored by every algorithm.

References
----------
R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008: RNEA table 5.1 (eq. 5.7-5.9),
CRBA table 6.2, ABA table 7.1 (eq. 7.39-7.48), spatial inertia eq. 2.63 and its transform
eq. 2.66. D. Orin, A. Goswami, S.-H. Lee, "Centroidal dynamics of a humanoid robot",
Autonomous Robots 35, 2013 (centroidal momentum matrix from composite inertias).
"""
from __future__ import annotations

from typing import Any

import casadi as ca
import numpy as np

from solvers import ops

from .kinematics import (cross_motion, body_velocities, force_to_parent, joint_placements,
                         joint_placements_split, motion_to_child, world_poses)
from .spatial import skew

__all__ = ["inverse_dynamics", "joint_wrench", "mass_matrix", "forward_dynamics", "kinetic_energy",
           "potential_energy", "centroidal_momentum_matrix", "world_composite_inertias", "qdot",
           "integrate", "difference", "joint_passive_forces", "inertia_to_parent",
           "coriolis_matrix"]


def _sym(*xs: Any) -> bool:
    return any(ops.is_symbolic(x) for x in xs)


def _cross_force(m: Any, f: Any):
    w, v, n, fl = m[0:3], m[3:6], f[0:3], f[3:6]
    return ops.vertcat(ops.cross(w, n) + ops.cross(v, fl), ops.cross(w, fl))


def _body_inertia_times(body, m: Any):
    """Spatial inertia of ``body`` (at its origin) times a motion ``m = [w; v]`` from the
    parameters: ``l = mass (v - c x w)``, ``n = I_c w + c x l`` (cheaper than 6 x 6)."""
    if body.mass == 0 and not body.inertia.any():
        return np.zeros(6)
    w, v = m[0:3], m[3:6]
    c = body.com
    if c.any():
        lin = body.mass * (v - ops.cross(c, w))
        ang = body.inertia @ w + ops.cross(c, lin)
    else:
        lin = body.mass * v
        ang = body.inertia @ w
    return ops.vertcat(ang, lin)


def _block(A: Any, B: Any, C: Any):
    if _sym(A, B, C):
        return ca.vertcat(ca.horzcat(A, B), ca.horzcat(B.T, C))
    return np.block([[A, B], [B.T, C]])


def _symm(M: Any):
    """Symmetric matrix from the upper triangle of ``M`` (for CasADi values the lower
    triangle's expressions then become dead code, halving the generated operations)."""
    if isinstance(M, (ca.SX, ca.MX)):
        return ca.triu(M) + ca.triu(M, False).T
    return M


def _is_identity(R: Any) -> bool:
    return isinstance(R, np.ndarray) and np.array_equal(R, np.eye(3))


def inertia_to_parent(R: Any, p: Any, I: Any):
    """``^pX_c^* I ^cX_p`` (6 x 6) of a symmetric spatial inertia ``I`` for a child pose
    ``(R, p)`` in the parent (Featherstone eq. 2.66), in blocks: with ``P = [p]x`` and the
    rotated blocks ``A = R I_11 R^T``, ``B = R I_12 R^T``, ``C = R I_22 R^T``,
    ``[[A + P B^T - B P - P C P, B + P C], [., C]]``."""
    A, B, C = _symm(I[0:3, 0:3]), I[0:3, 3:6], _symm(I[3:6, 3:6])
    if not _is_identity(R):
        A = _symm(R @ A @ R.T)
        B = R @ B @ R.T
        C = _symm(R @ C @ R.T)
    if _is_zero_vec(p):
        return _block(A, B, C)
    P = skew(p)
    PC = P @ C
    PBt = P @ B.T  # P B^T - B P = PBt + PBt^T since P^T = -P
    return _block(_symm(A + PBt + PBt.T - PC @ P), B + PC, C)


def _inertia_up(tree, i: int, I: Any, Xs: list):
    """Transform body ``i``'s (articulated or composite) inertia into its parent's frame in
    two steps, joint motion then the constant joint origin (cheap when either is sparse)."""
    Rj, pj, R0, p0 = Xs[i]
    return inertia_to_parent(R0, p0, inertia_to_parent(Rj, pj, I))


def _is_zero_vec(p: Any) -> bool:
    return isinstance(p, np.ndarray) and not np.any(p)


def _spd_solve(D: Any, B: Any):
    """Solve ``D X = B`` for a small symmetric positive definite ``D`` (LDL^T unrolled for
    symbolic values)."""
    n = D.shape[0]
    if not _sym(D, B):
        return np.linalg.solve(D, B)
    if n == 1:
        return B * (1 / D[0, 0])  # one division, then multiplications
    d: list = [None] * n
    L = [[None] * n for _ in range(n)]
    for j in range(n):
        s = D[j, j]
        for k in range(j):
            s = s - L[j][k] * L[j][k] * d[k]
        d[j] = s
        for i in range(j + 1, n):
            t = D[i, j]
            for k in range(j):
                t = t - L[i][k] * L[j][k] * d[k]
            L[i][j] = t / s
    cols = []
    ncol = B.shape[1] if len(B.shape) > 1 else 1
    for c in range(ncol):
        b = [B[i, c] if ncol > 1 or len(B.shape) > 1 else B[i] for i in range(n)]
        y = []
        for i in range(n):
            t = b[i]
            for k in range(i):
                t = t - L[i][k] * y[k]
            y.append(t)
        x: list = [None] * n
        for i in reversed(range(n)):
            t = y[i] / d[i]
            for k in range(i + 1, n):
                t = t - L[k][i] * x[k]
            x[i] = t
        cols.append(ca.vertcat(*x))
    return ca.horzcat(*cols) if len(B.shape) > 1 and B.shape[1] > 1 else cols[0]


def _body_wrenches(tree, q: Any, external_wrenches: list | None, X: list) -> list | None:
    """External wrenches in body coordinates (world-aligned inputs rotated by R^T)."""
    if external_wrenches is None:
        return None
    poses = world_poses(tree, q, X)
    out: list = [None]
    for i in range(1, len(X)):
        w = external_wrenches[i]
        if w is None:
            out.append(None)
            continue
        R, _ = poses[i]
        out.append(ops.vertcat(R.T @ w[0:3], R.T @ w[3:6]))
    return out


def _gravity_acceleration(tree) -> np.ndarray:
    return np.concatenate([np.zeros(3), -tree.gravity])


def _rnea_forces(tree, q: Any, v: Any, vdot: Any, external_wrenches: list | None,
                 gravity: bool):
    """RNEA's two passes: ``(X, F)`` with ``F[i]`` the spatial force (child frame of joint
    ``i``, about its origin) that the parent exerts on the subtree of body ``i``."""
    X = joint_placements(tree, q)
    V = body_velocities(tree, q, v, X)
    a0 = _gravity_acceleration(tree) if gravity else None
    from .kinematics import body_accelerations
    A = body_accelerations(tree, q, v, vdot, X, V, a0)
    fext = _body_wrenches(tree, q, external_wrenches, X)
    n = len(X)
    F: list = [None] * n
    for i in range(1, n):
        b = tree.bodies[i]
        f = _body_inertia_times(b, A[i]) + _cross_force(V[i], _body_inertia_times(b, V[i]))
        if fext is not None and fext[i] is not None:
            f = f - fext[i]
        F[i] = f
    for i in range(n - 1, 0, -1):
        lam = tree.parent_indices[i]
        if lam:
            R, p = X[i]
            F[lam] = F[lam] + force_to_parent(R, p, F[i])
    return X, F


def inverse_dynamics(tree, q: Any, v: Any, vdot: Any, external_wrenches: list | None = None,
                     gravity: bool = True):
    """RNEA (Featherstone table 5.1): ``tau = H vdot + C(q, v) - sum J^T w`` (nv,), plus
    ``armature * vdot`` on each joint.

    ``external_wrenches``: per body index (entry 0 unused) a world-aligned wrench at the
    body origin or None."""
    X, F = _rnea_forces(tree, q, v, vdot, external_wrenches, gravity)
    tau: list = [None] * len(tree.joints)
    for i in range(len(X) - 1, 0, -1):
        j = tree.joints[i - 1]
        if j.nv:
            S = j.calc_motion_subspace(q[j.q_start:j.q_start + j.nq])
            tau[i - 1] = S.T @ F[i]
            if j.armature.any():                                 # reflected rotor inertia
                tau[i - 1] = tau[i - 1] + _diag_times(j.armature,
                                                      vdot[j.v_start:j.v_start + j.nv])
    parts = [t for t in tau if t is not None]
    return ops.vertcat(*parts) if parts else np.zeros(0)


def joint_wrench(tree, joint: str, q: Any, v: Any, vdot: Any):
    """The wrench ``[torque; force]`` (6,) that joint ``joint`` transmits from its parent to
    the subtree of its child, in the child frame about the child frame's origin (the joint
    frame): RNEA's backward pass at that joint (Featherstone 2008, table 5.1, ``f_i``). Its
    projection on the joint's motion subspace is the joint's generalized force; the rest is
    the constraint (reaction) wrench a force/torque sensor in the joint measures."""
    X, F = _rnea_forces(tree, q, v, vdot, None, True)
    for i, j in enumerate(tree.joints, start=1):
        if j.name == joint:
            return F[i]
    raise ValueError(f"tree '{tree.name}' has no joint named {joint!r}")


def _diag_times(d: np.ndarray, x: Any):
    """``diag(d) x`` for numbers or CasADi (``d`` numeric (k,))."""
    if _sym(x):
        return ca.DM(d) * x
    return d * np.asarray(x)


def _outer(a: Any, b: Any):
    if _sym(a, b):
        return a @ b.T
    return np.outer(a, b)


def world_composite_inertias(tree, q: Any, poses: list | None = None) -> list:
    """Composite rigid-body inertia of each body's subtree (entry 0: the whole tree) as
    ``(m, h, I_o)`` in world axes about the world origin: mass, first moment ``m c`` and
    rotational inertia, i.e. the spatial inertia ``[[I_o, [h]x], [[h]x^T, m 1]]``
    (Featherstone eq. 2.63; summed over subtrees as in table 6.2)."""
    poses = world_poses(tree, q) if poses is None else poses
    n = len(tree.bodies)
    comp: list = [None] * n
    for i in range(1, n):
        b = tree.bodies[i]
        R, p = poses[i]
        c0 = p + R @ b.com
        Ic = _symm(R @ b.inertia @ R.T) if b.inertia.any() else np.zeros((3, 3))
        cc = _outer(c0, c0)
        trace = cc[0, 0] + cc[1, 1] + cc[2, 2]
        Io = _symm(Ic + b.mass * (trace * np.eye(3) - cc))
        comp[i] = [b.mass, b.mass * c0, Io]
    total = [0.0, np.zeros(3), np.zeros((3, 3))]
    for i in range(n - 1, 0, -1):
        lam = tree.parent_indices[i]
        tgt = comp[lam] if lam else total
        tgt[0] = tgt[0] + comp[i][0]
        tgt[1] = tgt[1] + comp[i][1]
        tgt[2] = tgt[2] + comp[i][2]
    comp[0] = total
    return comp


def _world_columns(tree, q: Any, poses: list) -> dict:
    """World-frame motion subspace columns ``S^0`` (list of 6-vectors) per body index."""
    cols: dict = {}
    for i, j in enumerate(tree.joints, start=1):
        if not j.nv:
            continue
        S = j.calc_motion_subspace(q[j.q_start:j.q_start + j.nq])
        R, p = poses[i]
        out = []
        for c in range(j.nv):
            w = R @ S[0:3, c]
            out.append(ops.vertcat(w, R @ S[3:6, c] + ops.cross(p, w)))
        cols[i] = out
    return cols


def _inertia_times(m: Any, h: Any, Io: Any, s: Any):
    """Spatial inertia ``(m, h, I_o)`` times a motion ``s = [w; v]``:
    ``[I_o w + h x v; m v - h x w]``."""
    w, v = s[0:3], s[3:6]
    return ops.vertcat(Io @ w + ops.cross(h, v), m * v - ops.cross(h, w))


def mass_matrix(tree, q: Any):
    """CRBA in world coordinates (Featherstone table 6.2 with all quantities in the world
    frame, as Pinocchio does): ``H_ki = S_k^T Ic_i S_i`` for ``k`` an ancestor of ``i`` or
    ``i`` itself; ``H(q)`` (nv x nv)."""
    poses = world_poses(tree, q)
    comp = world_composite_inertias(tree, q, poses)
    S0 = _world_columns(tree, q, poses)
    nv = tree.nv
    entries: dict = {}
    for i in S0:
        m, h, Io = comp[i]
        F = [_inertia_times(m, h, Io, s) for s in S0[i]]
        vi = tree.joints[i - 1].v_start
        k = i
        while k:
            if k in S0:
                vk = tree.joints[k - 1].v_start
                for a, sk in enumerate(S0[k]):
                    for b, f in enumerate(F):
                        if k == i and a > b:
                            continue
                        entries[(vk + a, vi + b)] = ops.dot(sk, f)
            k = tree.parent_indices[k]
    if _sym(q):
        H = ca.SX.zeros(nv, nv) if not isinstance(q, ca.MX) else ca.MX.zeros(nv, nv)
        for (r, c), val in entries.items():
            H[r, c] = val
            H[c, r] = val
        for j in tree.joints:
            for a in range(j.nv):
                if j.armature[a]:
                    H[j.v_start + a, j.v_start + a] += float(j.armature[a])
        return H
    H = np.zeros((nv, nv))
    for (r, c), val in entries.items():
        H[r, c] = H[c, r] = val
    for j in tree.joints:
        if j.nv and j.armature.any():
            k = np.arange(j.v_start, j.v_start + j.nv)
            H[k, k] += j.armature
    return H


def forward_dynamics(tree, q: Any, v: Any, tau: Any, external_wrenches: list | None = None):
    """ABA (Featherstone table 7.1, eq. 7.39-7.48): ``vdot`` (nv,) solving
    ``H vdot + C = tau + sum J^T w``."""
    Xs = joint_placements_split(tree, q)
    X = joint_placements(tree, q, Xs)
    V = body_velocities(tree, q, v, X)
    fext = _body_wrenches(tree, q, external_wrenches, X)
    n = len(X)
    IA = tree.spatial_inertias
    pA: list = [None] * n
    c: list = [None] * n
    S_all: list = [None] * n
    for i in range(1, n):
        j = tree.joints[i - 1]
        pA[i] = _cross_force(V[i], _body_inertia_times(tree.bodies[i], V[i]))
        if fext is not None and fext[i] is not None:
            pA[i] = pA[i] - fext[i]
        if j.nv:
            qj = q[j.q_start:j.q_start + j.nq]
            vj = v[j.v_start:j.v_start + j.nv]
            S = j.calc_motion_subspace(qj)
            S_all[i] = S
            ci = cross_motion(V[i], S @ vj)
            cJ = j.calc_bias(qj, vj)
            c[i] = ci if cJ is None else ci + cJ
    U: list = [None] * n
    Dinv_u: list = [None] * n
    Dinv_UT: list = [None] * n
    for i in range(n - 1, 0, -1):
        j = tree.joints[i - 1]
        lam = tree.parent_indices[i]
        if j.nv:
            S = S_all[i]
            Ui = IA[i] @ S
            D = S.T @ Ui
            if j.armature.any():
                D = D + np.diag(j.armature)
            u = tau[j.v_start:j.v_start + j.nv] - S.T @ pA[i]
            U[i] = Ui
            sol = _spd_solve(D, ops.horzcat(Ui.T, u))  # D^-1 [U^T, u], one factorization
            DUT, Du = sol[:, 0:6], sol[:, 6]
            Dinv_UT[i], Dinv_u[i] = DUT, Du
            if lam:
                Ia = _symm(IA[i] - Ui @ DUT)
                pa = pA[i] + Ia @ c[i] + Ui @ Du
        else:
            Ia, pa = IA[i], pA[i]
        if lam:
            R, p = X[i]
            IA[lam] = IA[lam] + _inertia_up(tree, i, Ia, Xs)
            pA[lam] = pA[lam] + force_to_parent(R, p, pa)
    a: list = [_gravity_acceleration(tree)] + [None] * (n - 1)
    qdd: list = []
    for i in range(1, n):
        j = tree.joints[i - 1]
        R, p = X[i]
        ai = motion_to_child(R, p, a[tree.parent_indices[i]])
        if j.nv:
            ai = ai + c[i]
            qddi = Dinv_u[i] - Dinv_UT[i] @ ai
            ai = ai + S_all[i] @ qddi
            qdd.append(qddi)
        a[i] = ai
    return ops.vertcat(*qdd) if qdd else np.zeros(0)


def kinetic_energy(tree, q: Any, v: Any):
    """``sum_b 1/2 V_b^T I_b V_b + sum_j 1/2 armature_j v_j^2`` (scalar)."""
    V = body_velocities(tree, q, v)
    T = 0
    for i in range(1, len(V)):
        T = T + 0.5 * ops.dot(V[i], _body_inertia_times(tree.bodies[i], V[i]))
    for j in tree.joints:
        if j.nv and j.armature.any():
            vj = v[j.v_start:j.v_start + j.nv]
            T = T + 0.5 * ops.dot(vj, _diag_times(j.armature, vj))
    return T


def potential_energy(tree, q: Any):
    """Gravitational potential ``-sum_b m_b g . c_b`` (zero at the world origin)."""
    poses = world_poses(tree, q)
    U = 0
    for b in tree.bodies[1:]:
        if b.mass:
            R, p = poses[b.index]
            U = U - b.mass * ops.dot(tree.gravity, p + R @ b.com)
    return U


def centroidal_momentum_matrix(tree, q: Any):
    """Centroidal momentum matrix ``A_G`` (6 x nv): ``[k_G; l] = A_G v``, angular momentum
    about the COM and linear momentum, world axes (Orin et al. 2013: column of joint k =
    composite inertia of its subtree times ``S_k``, moment shifted to the COM)."""
    poses = world_poses(tree, q)
    comp = world_composite_inertias(tree, q, poses)
    S0 = _world_columns(tree, q, poses)
    M = comp[0][0]
    com = comp[0][1] / M
    cols = []
    for i, j in enumerate(tree.joints, start=1):
        if not j.nv:
            continue
        m, h, Io = comp[i]
        for s in S0[i]:
            f = _inertia_times(m, h, Io, s)
            cols.append(ops.vertcat(f[0:3] - ops.cross(com, f[3:6]), f[3:6]))
    return ops.horzcat(*cols) if cols else np.zeros((6, 0))


def qdot(tree, q: Any, v: Any):
    """``qdot = N(q) v`` (nq,)."""
    parts = [j.qdot(q[j.q_start:j.q_start + j.nq], v[j.v_start:j.v_start + j.nv])
             for j in tree.joints if j.nq]
    return ops.vertcat(*parts) if parts else np.zeros(0)


def integrate(tree, q: Any, v: Any, dt: Any):
    """Configuration after moving with constant ``v`` for ``dt`` (nq,), on the manifold."""
    parts = [j.integrate(q[j.q_start:j.q_start + j.nq], v[j.v_start:j.v_start + j.nv], dt)
             for j in tree.joints if j.nq]
    return ops.vertcat(*parts) if parts else np.zeros(0)


def difference(tree, q0: Any, q1: Any):
    """Velocity (nv,) with ``integrate(q0, v, 1) = q1``."""
    parts = [j.difference(q0[j.q_start:j.q_start + j.nq], q1[j.q_start:j.q_start + j.nq])
             for j in tree.joints if j.nv]
    return ops.vertcat(*parts) if parts else np.zeros(0)


def joint_passive_forces(tree, q: Any, v: Any):
    """``-damping * v - stiffness * difference(rest, q)`` per joint (nv,)."""
    parts = [j.passive_force(q[j.q_start:j.q_start + j.nq], v[j.v_start:j.v_start + j.nv])
             for j in tree.joints if j.nv]
    return ops.vertcat(*parts) if parts else np.zeros(0)


def _force_cross_matrix(V):
    w, v = V[0:3], V[3:6]
    W, Vx = ca.skew(w), ca.skew(v)
    Z = ca.SX.zeros(3, 3)
    return ca.vertcat(ca.horzcat(W, Vx), ca.horzcat(Z, W))


def _motion_cross_matrix(V):
    w, v = V[0:3], V[3:6]
    W, Vx = ca.skew(w), ca.skew(v)
    Z = ca.SX.zeros(3, 3)
    return ca.vertcat(ca.horzcat(W, Z), ca.horzcat(Vx, W))


def _force_bar_matrix(h):
    n, f = h[0:3], h[3:6]
    N, F = ca.skew(n), ca.skew(f)
    return ca.vertcat(ca.horzcat(-N, -F), ca.horzcat(-F, ca.SX.zeros(3, 3)))


def coriolis_matrix(tree, q: Any, v: Any):
    """Coriolis matrix ``C(q, v)`` (nv x nv, CasADi ``SX`` ``q`` and ``v``) with
    ``C v = bias - gravity`` and ``dH/dt - 2 C`` skew-symmetric:
    ``C = sum_b J_b^T (I_b dJ_b/dt + B_b J_b)`` in body coordinates, with
    ``B = 1/2 (V x* I + I V x + (I V) xbar)`` (S. Echeandia, P. Wensing, "Numerical methods
    to compute the Coriolis matrix and Christoffel symbols for rigid-body systems", JCND
    2021; ``dJ_b/dt`` by forward-mode AD along ``qdot = N(q) v``)."""
    X = joint_placements(tree, q)
    V = body_velocities(tree, q, v, X)
    qd = qdot(tree, q, v)
    nv = tree.nv
    inertias = tree.spatial_inertias
    C = ca.SX.zeros(nv, nv)
    for i in range(1, len(V)):
        Vi = ca.SX(V[i]) if isinstance(V[i], np.ndarray) else V[i]
        I = ca.DM(inertias[i])
        J = ca.jacobian(Vi, v)
        Jd = ca.reshape(ca.jtimes(ca.vec(J), q, qd), 6, nv)
        B = 0.5 * (_force_cross_matrix(Vi) @ I + I @ _motion_cross_matrix(Vi)
                   + _force_bar_matrix(I @ Vi))
        C = C + J.T @ (I @ Jd + B @ J)
    return C

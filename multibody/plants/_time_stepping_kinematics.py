"""Kinematics helpers of :mod:`multibody.plants` (private): the fused CasADi
function of a step, the ancestor mask of the velocity columns, quaternions to rotations."""
from __future__ import annotations

import casadi as ca
import numpy as np

from solvers import ops

from ..tree import kinematics as kin

__all__ = ["fused_function", "split_dynamics", "four_outputs", "ancestor_mask", "quat_to_rot"]


def fused_function(tree, include_passive: bool) -> ca.Function:
    """``(q, v) -> HcPS``: mass matrix ``H``, ``C - tau_passive``, body poses ``P`` (12 per
    body: R row-major then p) and the world-origin spatial motion columns ``S = [W; U]`` (6 x
    nv), stacked in one vector (``H`` and ``S`` row by row: the contact kernel's input
    sections ``H, c, P, S`` as they lie; one output array, :func:`split_dynamics` gives the
    four)."""
    nq, nv = tree.nq, tree.nv
    q, v = ca.SX.sym("q", nq), ca.SX.sym("v", nv)
    H = tree.mass_matrix(q)
    c = tree.bias_forces(q, v)
    if include_passive:
        c = c - tree.joint_passive_forces(q, v)
    poses = kin.world_poses(tree, q)
    parts = []
    for R, p in poses:
        parts.append(ca.reshape(ca.SX(R).T, 9, 1))
        parts.append(ca.SX(p) if not isinstance(p, ca.SX) else p)
    cols = []
    for i, j in enumerate(tree.joints, start=1):
        if j.nv == 0:
            continue
        S = j.calc_motion_subspace(q[j.q_start:j.q_start + j.nq])
        R, p = poses[i]
        for k in range(j.nv):
            w = R @ S[0:3, k]
            u = R @ S[3:6, k] + ops.cross(p, w)
            cols.append(ops.vertcat(w, u))
    Smat = ca.horzcat(*cols) if cols else ca.SX(6, 0)
    out = ca.vertcat(ca.vec(ca.densify(ca.SX(H)).T), ca.densify(ca.SX(c)),
                     ca.densify(ca.vertcat(*parts)), ca.vec(ca.densify(ca.SX(Smat)).T))
    return ca.Function(ops.function_name(tree.name, "time_stepping_dynamics"), [q, v],
                       [out], ["q", "v"], ["HcPS"])


def split_dynamics(out: np.ndarray, nv: int) -> tuple:
    """``(H, c, P, S)``: views of :func:`fused_function`'s output ``out`` (``H`` (nv, nv)
    row-major, ``c`` (nv,), ``P`` (12 nb,), ``S`` (6, nv) row-major); with ``nv = 1``,
    ``H`` and ``S`` flat ((1,), (6,)), as the four outputs of a compiled call had them."""
    a = nv * nv
    b = len(out) - 6 * nv
    H, c, P, S = out[:a], out[a:a + nv], out[a + nv:b], out[b:]
    if nv > 1:
        H, S = H.reshape(nv, nv), S.reshape(6, nv)
    return H, c, P, S


def four_outputs(fun: ca.Function, nv: int) -> ca.Function:
    """:func:`fused_function`'s ``fun`` with four outputs ``(q, v) -> (H (nv x nv), c (nv),
    P (12 nb), S (6 x nv))`` (its expressions inlined: the same arithmetic); ``H`` and ``S``
    without their constant-zero entries (a pile of free bodies has a block-diagonal ``H``:
    the compiled whole run writes only the nonzeros into the kernel's input, whose other
    entries stay zero)."""
    q, v = ca.SX.sym("q", fun.size1_in(0)), ca.SX.sym("v", fun.size1_in(1))
    out = fun(q, v)
    n = out.size1()
    a, b = nv * nv, n - 6 * nv
    H = ca.reshape(out[:a], nv, nv).T
    S = ca.reshape(out[b:], nv, 6).T
    return ca.Function(fun.name() + "_4", [q, v],
                       [ca.sparsify(H), ca.densify(out[a:a + nv]), ca.densify(out[a + nv:b]),
                        ca.sparsify(S)], ["q", "v"], ["H", "c", "P", "S"])


def quat_to_rot(Q: np.ndarray) -> np.ndarray:
    """Rotation matrices (k, 3, 3) of unit quaternions ``[w, x, y, z]`` (k, 4) (scalar
    arithmetic: k is the number of free bodies, small, and numpy's per-call cost dominates)."""
    out = []
    for w, x, y, z in Q.tolist():
        out.append(((1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
                    (2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
                    (2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y))))
    return np.array(out).reshape(-1, 3, 3)


def ancestor_mask(tree) -> np.ndarray:
    bodies = tree.bodies
    mask = np.zeros((len(bodies), tree.nv))
    for b in bodies[1:]:
        i = b.index
        while i > 0:
            j = tree.joints[i - 1]
            mask[b.index, j.v_start:j.v_start + j.nv] = 1.0
            i = tree.parent_indices[i]
    return mask

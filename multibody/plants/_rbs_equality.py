"""Equality-constraint part of :class:`~multibody.plants.RigidBodySystem`:
the fused CasADi functions and the rank (redundancy) analysis.

For the equality rows ``J vdot + b = 0`` (Baumgarte-stabilized, see
:mod:`multibody.constraints.base`) the accelerations and forces solve the KKT
system (Featherstone 2008, section 8.2 for the closed-loop equations)

.. math::

    \\begin{bmatrix} H & J^T \\\\ J & 0 \\end{bmatrix}
    \\begin{bmatrix} \\dot v \\\\ -f \\end{bmatrix} =
    \\begin{bmatrix} \\tau - C \\\\ -b \\end{bmatrix} .

With ``J`` of full row rank this is one CasADi ``solve``, built into a single function
``(q, v, tau) -> (vdot, f, tau_c)`` that is compiled for numbers and called on symbols.
Redundant or conflicting rows make the KKT matrix singular; the least-squares answer
is then found from the Schur complement ``A = J H^{-1} J^T`` with a pseudo-inverse
(numbers) or a tiny Tikhonov regularization ``(A + eps I)`` (symbols), and the system warns
naming the rows (found by a pivoted QR of ``J^T``).
"""
from __future__ import annotations

import warnings
from typing import List, Tuple

import casadi as ca
import numpy as np
import scipy.linalg as sla

from solvers import ops
from ..errors import RedundantConstraintWarning

__all__ = ["RedundantConstraintWarning", "equality_functions", "redundant_rows"]


def _stack_rows(blocks, q, v, nv):
    Js, bs = [], []
    for c in blocks:
        J, b = c.equality_terms(q, v)
        Js.append(ca.SX(J))
        bs.append(ca.SX(b))
    if not Js:
        return ca.SX(0, nv), ca.SX(0, 1)
    return ca.vertcat(*Js), ca.vertcat(*bs)


def equality_functions(tree, blocks, include_passive: bool, regularize: bool, name: str):
    """CasADi functions of the equality problem.

    Returns
    -------
    dyn : casadi.Function
        ``(q, v, tau) -> (vdot, f, tau_c)``: KKT solve (or regularized Schur complement
        when ``regularize``).
    parts : casadi.Function
        ``(q, v) -> (H, c, J, b, phi)`` with ``c = C - tau_passive``, for the numeric
        least-squares and complementarity paths and for reports.
    qdot : casadi.Function
        ``(q, v) -> N(q) v``.
    """
    nq, nv = tree.nq, tree.nv
    q, v, tau = ca.SX.sym("q", nq), ca.SX.sym("v", nv), ca.SX.sym("tau", nv)
    H = ca.SX(tree.mass_matrix(q))
    c = ca.SX(tree.bias_forces(q, v))
    if include_passive:
        c = c - ca.SX(tree.joint_passive_forces(q, v))
    J, b = _stack_rows(blocks, q, v, nv)
    phis = [ca.SX(blk.position_error(q)) for blk in blocks]
    phi = ca.vertcat(*phis) if phis else ca.SX(0, 1)
    m = J.shape[0]
    if m == 0:
        vdot = ca.solve(H, tau - c)
        f = ca.SX(0, 1)
    elif not regularize:
        K = ca.blockcat([[H, J.T], [J, ca.SX(m, m)]])
        sol = ca.solve(K, ca.vertcat(tau - c, -b))
        vdot, f = sol[:nv], -sol[nv:]
    else:
        HiJt = ca.solve(H, J.T)
        Hir = ca.solve(H, tau - c)
        A = J @ HiJt
        eps = 1e-12 * (1.0 + ca.trace(A))
        f = ca.solve(A + eps * ca.SX.eye(m), -(b + J @ Hir))
        vdot = Hir + HiJt @ f
    tau_c = J.T @ f if m else ca.SX.zeros(nv, 1)
    dyn = ca.Function(ops.function_name(name, "dynamics"), [q, v, tau], [vdot, f, tau_c],
                      ["q", "v", "tau"], ["vdot", "f", "tau_c"])
    parts = ca.Function(ops.function_name(name, "parts"), [q, v],
                        [ca.densify(H), ca.densify(c), ca.densify(J), ca.densify(b), ca.densify(phi)],
                        ["q", "v"], ["H", "c", "J", "b", "phi"])
    qd = ca.Function(ops.function_name(name, "qdot"), [q, v], [ca.SX(tree.qdot(q, v))], ["q", "v"], ["qdot"])
    return dyn, parts, qd


def redundant_rows(parts: ca.Function, tree, names: List[str], rng_seed: int = 0,
                   tol: float = 1e-9) -> Tuple[List[str], int]:
    """Rows of ``J`` dependent on the others at the neutral and two random configurations.

    Returns the names of the dependent rows (those left out by a column-pivoted QR of
    ``J^T``; empty when ``J`` has full row rank at any of the tested configurations) and
    the rank.
    """
    m = len(names)
    if m == 0:
        return [], 0
    rng = np.random.default_rng(rng_seed)
    configs = [tree.neutral_configuration(), tree.random_configuration(rng),
               tree.random_configuration(rng)]
    best = None
    for qc in configs:
        J = np.asarray(parts(qc, np.zeros(tree.nv))[2])
        if J.shape[0] == 0:
            return [], 0
        if not np.all(np.isfinite(J)):
            continue  # e.g. a distance closure with coincident points at this configuration
        _, R, piv = sla.qr(J.T, mode="economic", pivoting=True)
        d = np.abs(np.diag(R))
        scale = max(1.0, float(d[0])) if d.size else 1.0
        rank = int(np.sum(d > tol * scale))
        if rank == m:
            return [], m
        if best is None or rank > best[0]:
            best = (rank, piv)
    if best is None:
        return [], m
    rank, piv = best
    return [names[i] for i in sorted(piv[rank:])], rank


def warn_redundant(system_name: str, dependent: List[str], rank: int, m: int) -> None:
    """Emit the :class:`RedundantConstraintWarning`."""
    warnings.warn(
        f"RigidBodySystem '{system_name}': the {m} equality constraint rows have rank {rank}; "
        f"rows {dependent} depend on the others (redundant or conflicting constraints). "
        "Constraint forces are found by least squares (minimum norm).",
        RedundantConstraintWarning, stacklevel=3)

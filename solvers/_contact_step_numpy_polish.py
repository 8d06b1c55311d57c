"""The numpy twin's polish (private part of :mod:`solvers._contact_step_numpy`): the C
kernel's Newton polish on PGS's active set with its refinement passes (the modes of
``solvers._contact_layout.POLISH_MODES``: a sticking friction outside the disc slides, a
negative normal goes off, a one-row impulse past a bound is fixed at it; an off contact that
penetrates or a fixed row pulled off its bound is freed), on the twin's ``_Problem`` (rows
``J``, ``Y = M^-1 J^T``, impulses ``p``, ``cfm / h``, one-row and closure flags, bounds).
"""
from __future__ import annotations

import math

import numpy as np

__all__: list[str] = []  # private module


def first_modes(prob):
    """The polish's first modes (``POLISH_MODES`` of the layout) from the impulses PGS found,
    and their values: per slot a mode and a pair (a sliding direction, or a fixed one-row
    value first)."""
    mu, modes, val = prob.mu, [], np.zeros((len(prob.p), 2))
    for j, p in enumerate(prob.p):
        if prob.bil[j]:
            modes.append("free")
        elif prob.one[j]:
            modes.append("free" if prob.lo[j] < p[0] < prob.up[j] else "fixed")
            val[j, 0] = p[0]
        elif p[0] > 0:
            tt = math.hypot(p[1], p[2])
            if not tt < mu * p[0] * (1 - 1e-9) and tt > 0:
                modes.append("slide")
                val[j] = p[1:] / tt
            else:
                modes.append("stick")
        else:
            modes.append("off")
    return modes, val


def solve_modes(prob, vfree, bias, modes, val):
    """One polish pass: the dense solve on the modes; None when singular, else the indices
    of each slot's normal and tangent unknowns and the solution."""
    na, mu, cfm = len(prob.p), prob.mu, prob.cfm
    idn, idt, nu = [-1] * na, [-1] * na, 0
    for j in range(na):
        if prob.bil[j]:
            idn[j] = nu
            nu += prob.bil[j]
        elif modes[j] in ("free", "slide"):
            idn[j] = nu
            nu += 1
        elif modes[j] == "stick":
            idn[j], idt[j] = nu, nu + 1
            nu += 3
    if nu == 0:
        return None
    M, x = np.zeros((nu, nu)), np.zeros(nu)
    for j in range(na):
        if idn[j] < 0:
            continue
        if prob.bil[j]:
            rows = [(r, idn[j] + r) for r in range(prob.bil[j])]
        else:
            rows = [(0, idn[j])] + ([(1, idt[j]), (2, idt[j] + 1)] if idt[j] >= 0 else [])
        for r, row in rows:
            x[row] = -(prob.J[j][r] @ vfree + bias[j][r])
            for ll in range(na):
                if modes[ll] == "fixed":             # held at a value
                    if val[ll, 0] != 0.0 and (prob.blk[j] & prob.blk[ll]):
                        x[row] -= (prob.J[j][r] @ prob.Y[ll][0]) * val[ll, 0]
                    continue
                if idn[ll] < 0 or not (prob.blk[j] & prob.blk[ll]):
                    continue
                A = prob.J[j][r] @ prob.Y[ll].T
                if ll == j:
                    A[r] += cfm[j]
                if prob.bil[ll]:
                    M[row, idn[ll]:idn[ll] + prob.bil[ll]] += A[:prob.bil[ll]]
                elif idt[ll] >= 0:
                    M[row, idn[ll]] += A[0]
                    M[row, idt[ll]:idt[ll] + 2] += A[1:]
                else:
                    M[row, idn[ll]] += A[0] + mu * (val[ll] @ A[1:])
    try:
        sol = np.linalg.solve(M, x)
    except np.linalg.LinAlgError:
        return None
    return idn, idt, sol


def polish(prob, vfree, bias, dtol, passes):
    """The C kernel's polish: at most ``passes`` dense solves on the modes; the new impulses
    (3 per slot) of a consistent pass or of the last feasible one, else None. ``dtol``: the
    velocity tolerance of the modes' conditions."""
    na, mu = len(prob.p), prob.mu
    modes, val = first_modes(prob)
    out = None
    for _ in range(passes):
        solved = solve_modes(prob, vfree, bias, modes, val)
        if solved is None:
            return None
        idn, idt, sol = solved
        if not np.all(np.isfinite(sol)):
            return None
        changed = False
        for j in range(na):           # feasibility
            if idn[j] < 0 or prob.bil[j]:
                continue
            pn = sol[idn[j]]
            if prob.one[j]:
                lo, up = prob.lo[j], prob.up[j]
                if not pn >= lo - 1e-9 * abs(lo):
                    modes[j], val[j, 0], changed = "fixed", lo, True
                elif not pn <= up + 1e-9 * abs(up):
                    modes[j], val[j, 0], changed = "fixed", up, True
                continue
            if not pn >= 0:
                modes[j], changed = "off", True
                continue
            if idt[j] >= 0:
                pt = sol[idt[j]:idt[j] + 2]
                tt = math.hypot(pt[0], pt[1])
                if not tt <= mu * pn * (1 + 1e-9):
                    modes[j], val[j], changed = "slide", pt / tt, True
        if changed:
            out = None
            continue
        out = []
        for j in range(na):
            pj = np.zeros(3)
            if prob.bil[j]:
                pj[:prob.bil[j]] = sol[idn[j]:idn[j] + prob.bil[j]]
            elif prob.one[j]:
                pj[0] = (min(max(sol[idn[j]], prob.lo[j]), prob.up[j]) if idn[j] >= 0
                         else val[j, 0])
            elif idn[j] >= 0:
                pj[0] = sol[idn[j]]
                pj[1:] = sol[idt[j]:idt[j] + 2] if idt[j] >= 0 else mu * pj[0] * val[j]
            out.append(pj)
        vs = vfree.copy()
        for Y, pj in zip(prob.Y, out):
            vs += Y.T @ pj
        for j in range(na):           # the modes' assumptions at the solution
            if modes[j] not in ("off", "fixed"):
                continue
            w0 = prob.J[j][0] @ vs + prob.cfm[j] * out[j][0] + bias[j][0]
            if modes[j] == "off" and w0 < -dtol:
                modes[j], changed = "stick", True
            elif modes[j] == "fixed" and ((val[j, 0] <= prob.lo[j] and w0 < -dtol)
                                          or (val[j, 0] >= prob.up[j] and w0 > dtol)):
                modes[j], changed = "free", True
        if not changed:
            break
    return out

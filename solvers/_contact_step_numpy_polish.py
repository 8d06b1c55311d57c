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


def first_modes(prob, vel, newton=True):
    """The polish's first modes (``POLISH_MODES`` of the layout) from the impulses PGS found
    (at the velocity ``vel``), and their values: per slot a mode and a pair (a sliding
    direction, or a fixed one-row value first), and per sliding slot the point of its
    sliding law's linearisation (the slip ``w_t`` and ``p_n``; zeros: none)."""
    mu, modes, val = prob.mu, [], np.zeros((len(prob.p), 2))
    wsl = np.zeros((len(prob.p), 3))
    for j, p in enumerate(prob.p):
        if prob.bil[j]:
            modes.append("free")
        elif prob.one[j]:
            modes.append("free" if prob.lo[j] < p[0] < prob.up[j] else "fixed")
            val[j, 0] = p[0]
        elif p[0] > 0 and prob.box:     # per tangent row: free (0) or at +-mu p_n (+-1)
            modes.append("stick")
            for r in (1, 2):
                if not abs(p[r]) < mu * p[0] * (1 - 1e-9) and p[r] != 0:
                    val[j, r - 1] = 1.0 if p[r] > 0 else -1.0
        elif p[0] > 0:
            tt = math.hypot(p[1], p[2])
            if not tt < mu * p[0] * (1 - 1e-9) and tt > 0:
                modes.append("slide")
                val[j] = p[1:] / tt
                if newton:
                    wsl[j, :2] = prob.w(j, vel)[1:]
                    wsl[j, 2] = p[0]
            else:
                modes.append("stick")
        else:
            modes.append("off")
    return modes, val, wsl


def solve_modes(prob, vfree, bias, modes, val, wsl, dtol):
    """One polish pass: the dense solve on the modes; None when singular, else the indices
    of each slot's normal and tangent unknowns and the solution. A sliding slot's tangent
    rows are its sliding law ``p_t = -mu p_n w_t / |w_t|`` linearised at ``wsl`` (Newton;
    without a point, or a slip not above ``dtol``, its friction keeps the direction ``val``),
    as in the C kernel."""
    na, mu, cfm = len(prob.p), prob.mu, prob.cfm
    idn, idt, nu = [-1] * na, [-1] * na, 0
    for j in range(na):
        if prob.bil[j]:
            idn[j] = nu
            nu += prob.bil[j]
        elif modes[j] == "free":
            idn[j] = nu
            nu += 1
        elif modes[j] in ("stick", "slide"):
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
    for j in range(na):        # the sliding law's rows: p_t + mu h p_n + kap P (T p - x_t - w0)
        if modes[j] != "slide":
            continue
        w0, pn0 = wsl[j, :2], wsl[j, 2]
        nw = math.hypot(w0[0], w0[1])
        hh, kap = -val[j], 0.0
        if nw > dtol and pn0 > 0:
            hh, kap = w0 / nw, mu * pn0 / nw
        P = kap * (np.eye(2) - np.outer(hh, hh))
        ra = idt[j]
        M[ra:ra + 2] = P @ M[ra:ra + 2]
        x[ra:ra + 2] = P @ (w0 + x[ra:ra + 2]) if kap > 0 else 0.0
        M[ra, ra] += 1.0
        M[ra + 1, ra + 1] += 1.0
        M[ra:ra + 2, idn[j]] += mu * hh
    for j in range(na):        # a box row at a bound s mu p_n (s = val): p_t - s mu p_n = 0
        if not prob.box or modes[j] != "stick":
            continue
        for r in range(2):
            if val[j, r] != 0.0:
                ra = idt[j] + r
                M[ra] = 0.0
                M[ra, ra], M[ra, idn[j]], x[ra] = 1.0, -mu * val[j, r], 0.0
    try:
        sol = np.linalg.solve(M, x)
    except np.linalg.LinAlgError:
        return None
    return idn, idt, sol


def polish(prob, vfree, bias, dtol, passes, vel, newton=True):
    """The C kernel's polish from PGS's point (velocity ``vel``): at most ``passes`` dense
    solves on the modes; the new impulses (3 per slot) of a consistent pass or of the last
    feasible one, else None. ``dtol``: the velocity tolerance of the modes' conditions."""
    na, mu = len(prob.p), prob.mu
    modes, val, wsl = first_modes(prob, vel, newton)
    out = None
    for _ in range(passes):
        solved = solve_modes(prob, vfree, bias, modes, val, wsl, dtol)
        if solved is None:
            return None
        idn, idt, sol = solved
        if not np.all(np.isfinite(sol)):
            return None
        changed = False
        for j in range(na):           # feasibility
            if prob.box and changed:  # the box: one change per pass (no cycling)
                break
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
            if prob.box:              # a free row beyond +-mu p_n: held at that bound
                for r in range(2):
                    a = sol[idt[j] + r]
                    if val[j, r] == 0.0 and not abs(a) <= mu * pn * (1 + 1e-9):
                        val[j, r], changed = (1.0 if a > 0 else -1.0), True
                        break
                continue
            if modes[j] == "stick":
                pt = sol[idt[j]:idt[j] + 2]
                tt = math.hypot(pt[0], pt[1])
                if not tt <= mu * pn * (1 + 1e-9):
                    modes[j], val[j], changed = "slide", pt / tt, True
                    wsl[j] = 0.0                 # no linearisation point yet
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
                pj[1:] = sol[idt[j]:idt[j] + 2]
            out.append(pj)
        vs = vfree.copy()
        for Y, pj in zip(prob.Y, out):
            vs += Y.T @ pj
        for j in range(na):           # the modes' assumptions at the solution
            if prob.box and changed:
                break
            if prob.box and modes[j] == "stick":   # a row at a bound: slip against it
                if val[j, 0] == 0.0 and val[j, 1] == 0.0:
                    continue
                wt = prob.J[j][1:] @ vs + prob.cfm[j] * out[j][1:] + bias[j][1:]
                for r in range(2):
                    if val[j, r] * wt[r] > dtol:
                        val[j, r], changed = 0.0, True
                        break
                continue
            if modes[j] == "slide" and not newton:     # directions kept
                continue
            if modes[j] == "slide":   # the sliding law: slip gone -> stick, else Newton
                wt = prob.J[j][1:] @ vs + prob.cfm[j] * out[j][1:] + bias[j][1:]
                nwt, tp = math.hypot(wt[0], wt[1]), math.hypot(out[j][1], out[j][2])
                if nwt <= dtol:
                    modes[j], changed = "stick", True
                    continue
                e = (out[j][1:] / tp if tp > 0 else np.zeros(2)) + wt / nwt
                if nwt * math.hypot(e[0], e[1]) > 0.01 * dtol:
                    wsl[j, :2], wsl[j, 2], changed = wt, out[j][0], True
                continue
            if modes[j] not in ("off", "fixed"):
                continue
            w0 = prob.J[j][0] @ vs + prob.cfm[j] * out[j][0] + bias[j][0]
            if modes[j] == "off" and w0 < -dtol:
                modes[j], changed = "stick", True
                if prob.box:          # its rows at bounds against the slip there
                    wt = prob.J[j][1:] @ vs + bias[j][1:]
                    val[j] = np.where(np.abs(wt) > dtol, -np.sign(wt), 0.0)
            elif modes[j] == "fixed" and ((val[j, 0] <= prob.lo[j] and w0 < -dtol)
                                          or (val[j, 0] >= prob.up[j] and w0 > dtol)):
                modes[j], changed = "free", True
        if not changed:
            break
    return out

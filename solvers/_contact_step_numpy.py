"""The contact step of :mod:`solvers.contact_step` in numpy (private): the fallback where no
C compiler is found, and an independent implementation the C kernel is tested against.

Same tables, inputs and outputs as the C source (:mod:`solvers._contact_step_source`), same
algorithm step by step (block Cholesky, free velocity, speculative margin, candidates and
rows, ``M^-1 J^T``, Delassus blocks, block PGS with the friction disc (or box), over-relaxation after
the first polish, the active-set polish, residual, integration, frame change); numpy does
the small dense algebra, Python loops over contacts and sweeps (slow for many contacts).
"""
from __future__ import annotations

import math

import numpy as np

from . import _contact_step_numpy_polish as _polish
from . import collision_numpy
from ._collision_source import MAX_CONTACTS
from ._contact_layout import (ANCESTORS, BLOCK, CANDIDATE_DOUBLES, CANDIDATE_INTS, COLUMN,
                              CL_DOUBLES, CL_INTS, FOUND, FREE, HEADER, INPUT, JF_DOUBLES, JF_INTS, JL_DOUBLES,
                              JL_INTS, JOINT,
                              JOINT_TYPES, KIND, OUTPUT, POSE, SP_DOUBLES, SP_INTS, STATUS,
                              WARM)
from ._contact_layout import CANDIDATE_COMMON as CC
from ._contact_layout import CANDIDATE_OUT as CO
from ._contact_layout import SCALARS as SC

__all__: list[str] = []  # private module

OMEGA = 1.4
POLISH_EVERY = 50
POLISH_GAP = 8        # the C kernel's: sweeps between polishes once close, doubled after each
POLISH_PASSES = 8   # the C kernel's POLISH_PASSES
POLISH_PASSES_BOX = 24   # the C kernel's POLISH_PASSES_BOX
VECTOR_JOINT, FREE_JOINT = JOINT_TYPES.index("vector"), JOINT_TYPES.index("free")
JOINT_LIMIT, JOINT_FRICTION = KIND["joint_limit"].code, KIND["joint_friction"].code
CLOSURE = KIND["closure"].code


def _quat_rot(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _quat_exp_mul(q, w, h):
    a, b, c = w[0] * h, w[1] * h, w[2] * h
    t2 = a * a + b * b + c * c
    if t2 < 1e-6:
        cw, s = 1 - t2 / 8 + t2 * t2 / 384, 0.5 - t2 / 48 + t2 * t2 / 3840
    else:
        t = math.sqrt(t2)
        cw, s = math.cos(t / 2), math.sin(t / 2) / t
    bw, bx, by, bz = cw, s * a, s * b, s * c
    aw, ax, ay, az = q
    return np.array([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw])


def _lmax2(a, b, c):
    m, d = 0.5 * (a + c), 0.5 * (a - c)
    return m + math.sqrt(d * d + b * b)


def _friction_project(t, lim, box):
    """``t`` (2,) projected on the friction set of limit ``lim = mu p_n``: the disc (scaled
    towards 0) or, with ``box``, the box ``|t_i| <= lim`` (the C ``friction_project``)."""
    if box:
        return np.clip(t, -lim, lim)
    tt = math.hypot(t[0], t[1])
    return t * (lim / tt if tt > 0 else 0.0) if tt > lim else t


def _world_pose(Rb, pb, X) -> list:
    """The C kernel's ``world_pose``: a pose X (12 numbers) in a body's frame (rotation Rb,
    origin pb) as 12 world numbers, summed in the C order."""
    Rb, pb = Rb.tolist(), pb.tolist()
    Rx, px = X[POSE.slice("rotation")].tolist(), X[POSE.slice("position")].tolist()
    out = [0.0] * POSE.size
    for i in range(3):
        r0, r1, r2 = Rb[i]
        for j in range(3):
            out[POSE.ROTATION + 3 * i + j] = r0 * Rx[j] + r1 * Rx[3 + j] + r2 * Rx[6 + j]
        out[POSE.POSITION + i] = pb[i] + r0 * px[0] + r1 * px[1] + r2 * px[2]
    return out


def _solve_sym3(G, w):
    """``d = -G^-1 w`` for a closure's 3 x 3 block as the C kernel's ``solve_sym3`` (Cholesky;
    a row whose pivot is not above 1e-12 of the largest diagonal gets no impulse)."""
    L, y, d, live = np.zeros((3, 3)), np.zeros(3), np.zeros(3), [False] * 3
    dmax = max(0.0, max(G[r, r] for r in range(3)))
    for r in range(3):
        s = G[r, r]
        for c in range(r):
            s -= L[r, c] * L[r, c]
        live[r] = s > 1e-12 * dmax
        L[r, r] = math.sqrt(s) if live[r] else 0.0
        for i in range(r + 1, 3):
            t = 0.5 * (G[i, r] + G[r, i])
            for c in range(r):
                t -= L[i, c] * L[r, c]
            L[i, r] = t / L[r, r] if live[r] else 0.0
    for r in range(3):
        t = -w[r]
        for c in range(r):
            t -= L[r, c] * y[c]
        y[r] = t / L[r, r] if live[r] else 0.0
    for r in (2, 1, 0):
        t = y[r]
        for c in range(r + 1, 3):
            t -= L[c, r] * d[c]
        d[r] = t / L[r, r] if live[r] else 0.0
    return d


class _Problem:
    """The active contacts of one step: rows J (3, nv), Y = M^-1 J^T (3, nv), G (3, 3), bias,
    the touched velocity ranges, impulses p (3,), cfm / h, whether the slot is a one-row
    block (a joint limit's or joint friction's: J, Y, G zero but for their first row /
    entry) and the bounds of its first impulse."""

    def __init__(self, nv, mu, box=False):
        self.nv, self.mu, self.box = nv, mu, box
        self.J, self.Y, self.G, self.b, self.blk, self.p, self.k = [], [], [], [], [], [], []
        self.cfm, self.one, self.lo, self.up, self.bil = [], [], [], [], []

    def vel(self, vfree):
        v = vfree.copy()
        for Y, p in zip(self.Y, self.p):
            v += Y.T @ p
        return v

    def w(self, j, vel):
        w = self.J[j] @ vel + self.cfm[j] * self.p[j]
        return w + self.b[j]

    def residual(self, vel):
        res = 0.0
        for j in range(len(self.p)):
            w, p, G = self.w(j, vel), self.p[j], self.G[j]
            if self.bil[j]:             # a closure: bilateral, |w| per row
                res = max(res, float(np.max(np.abs(w))))
                continue
            pn_ = p[0] - w[0] / G[0, 0]
            if self.one[j]:
                res = max(res, abs(p[0] - min(max(pn_, self.lo[j]), self.up[j])) * G[0, 0])
                continue
            rn = abs(p[0] - max(pn_, 0.0)) * G[0, 0]
            g = _lmax2(G[1, 1], 0.5 * (G[1, 2] + G[2, 1]), G[2, 2])
            a = _friction_project(p[1:] - w[1:] / g, self.mu * p[0], self.box)
            rt = math.hypot(p[1] - a[0], p[2] - a[1]) * g
            res = max(res, rn, rt)
        return res

    def polish(self, vfree, bias, dtol, vel, newton=True):
        """The C kernel's polish (its active-set passes, :mod:`._contact_step_numpy_polish`)
        from PGS's point (velocity ``vel``; ``newton``: the sliding law by Newton, else
        fixed directions): the new impulses or None."""
        return _polish.polish(self, vfree, bias, dtol,
                              POLISH_PASSES_BOX if self.box else POLISH_PASSES, vel, newton)


def contact_step(it: np.ndarray, dt: np.ndarray, inp: np.ndarray, out: np.ndarray) -> int:
    """The C kernel's ``dbk_contact_step`` on the same buffers (work arrays not needed);
    returns 0, or 1 when a velocity block of ``H + h D`` is not positive definite."""
    it = [int(x) for x in it]
    hd = HEADER
    nq, nv, nb, nc = it[hd.NQ], it[hd.NV], it[hd.NUM_BODIES], it[hd.NUM_CONTACTS]
    npairs = it[hd.NUM_CANDIDATES]
    nblock, nj, nfree = it[hd.NUM_BLOCKS], it[hd.NUM_JOINTS], it[hd.NUM_FREE]
    maxit, nreach = it[hd.MAX_SWEEPS], it[hd.NUM_REACH]
    ob, oj, of, oc = it[hd.BLOCKS], it[hd.JOINTS], it[hd.FREE], it[hd.CANDIDATES]
    orr, oa = it[hd.REACH], it[hd.ANCESTORS]
    cand_d = dt[it[hd.CAND_DOUBLES]:]
    reach = dt[it[hd.REACH_RADII]:]
    hD = dt[it[hd.DAMPING]:it[hd.DAMPING] + nv]
    sec = {name: inp[a:b] for name, (a, b) in
           INPUT.offsets(nq=nq, nv=nv, nb=nb, nc=nc).items()}
    scal = sec["scal"]
    h, margin0, mu, erp = scal[SC.H], scal[SC.MARGIN], scal[SC.MU], scal[SC.ERP]
    mode, tol, ittol = scal[SC.BIAS_MODE], scal[SC.TOL], scal[SC.IT_TOL]
    cfm = scal[SC.CFM] / h
    euler = scal[SC.EULER_DAMPING] != 0.0      # MuJoCo's Euler split of the damping
    q, v, tau, c = sec["q"], sec["v"], sec["tau"], sec["c"]
    H = sec["H"].reshape(nv, nv)
    P = sec["P"].reshape(nb, POSE.size)
    S = sec["S"].reshape(6, nv)
    warm = sec["warm"].reshape(max(nc, 0), WARM.size)
    W, U = S[:3], S[3:]
    R = P[:, POSE.slice("rotation")].reshape(nb, 3, 3)
    pos = P[:, POSE.slice("position")]
    blocks = [(it[ob + BLOCK.size * i + BLOCK.START], it[ob + BLOCK.size * i + BLOCK.LENGTH])
              for i in range(nblock)]
    # 1-2. block Cholesky and the free velocity
    Meff = H if euler else H + np.diag(hD)
    chol = []
    for s, n in blocks:
        try:
            chol.append(np.linalg.cholesky(Meff[s:s + n, s:s + n]))
        except np.linalg.LinAlgError:
            return 1

    def solve(x, which=None):
        x = x.copy()
        for i in (range(nblock) if which is None else which):
            s, n = blocks[i]
            Lb = chol[i]
            x[s:s + n] = np.linalg.solve(Lb.T, np.linalg.solve(Lb, x[s:s + n]))
        return x
    vfree = v + solve(h * (tau - c))
    for i in range(nfree):
        vs = it[of + FREE.size * i + FREE.V_START]
        vfree[vs + 3:vs + 6] += h * np.cross(v[vs:vs + 3], v[vs + 3:vs + 6])
    cproj = sec["cproj"].reshape(nv, nv) if it[hd.CLOSURE_PROJECTION] else None
    if cproj is not None:       # loop closures eliminated: v_free -> cproj v_free + cpv
        vfree = cproj @ vfree + sec["cpv"]
    # 3. margin
    sp = []
    for i in range(nreach):
        b = it[orr + i]
        a0 = it[oa + ANCESTORS.size * b + ANCESTORS.OFFSET]
        cols = it[a0:a0 + it[oa + ANCESTORS.size * b + ANCESTORS.COUNT]]
        w = W[:, cols] @ v[cols]
        u = U[:, cols] @ v[cols]
        vo = u + np.cross(w, pos[b])
        sp.append(math.sqrt(vo @ vo) + math.sqrt(w @ w) * reach[i])
    sp = sorted(sp)[-2:]
    margin = margin0 + h * sum(sp)
    # 4. candidates
    co = np.zeros((nc, CO.size))
    Jall = np.zeros((nc, 3, nv))
    box = bool(it[hd.FRICTION_BOX])
    prob = _Problem(nv, mu, box)
    bias_l, bscale = [], 1.0
    stat = np.zeros(STATUS.size)
    stat[STATUS.FAILED_CANDIDATE] = -1.0
    found = np.zeros((MAX_CONTACTS, FOUND.size))
    contacts = []                               # (slot, candidate ints, point, normal, dist)
    limits = []                                 # (slot, candidate ints, doubles)
    closures = []                               # (slot, candidate ints, doubles)
    for m in range(npairs):
        ci = it[oc + CANDIDATE_INTS * m:oc + CANDIDATE_INTS * (m + 1)]
        cd = cand_d[CANDIDATE_DOUBLES * m:CANDIDATE_DOUBLES * (m + 1)]
        if ci[CC.KIND] == CLOSURE:
            closures.append((ci[CC.FIRST_CONTACT], ci, cd))
            continue
        if ci[CC.KIND] in (JOINT_LIMIT, JOINT_FRICTION):
            limits.append((ci[CC.FIRST_CONTACT], ci, cd))
            continue
        ba, bb = ci[CC.BODY_A], ci[CC.BODY_B]
        Xa = _world_pose(R[ba], pos[ba], cd[SP_DOUBLES.slice("pose_a")])
        Xb = _world_pose(R[bb], pos[bb], cd[SP_DOUBLES.slice("pose_b")])
        par_a = cd[SP_DOUBLES.slice("param_a")].tolist()
        par_b = cd[SP_DOUBLES.slice("param_b")].tolist()
        ns, off = ci[CC.NUM_CONTACTS], float(cd[SP_DOUBLES.PAIR_MARGIN])
        nf = collision_numpy.collide(ci[SP_INTS.SHAPE_A], par_a, 0, Xa, ci[SP_INTS.SHAPE_B],
                                     par_b, 0, Xb, margin + off, found[:ns])
        if nf < 0 or nf > ns:
            if stat[STATUS.FAILED_CANDIDATE] < 0:
                stat[STATUS.FAILED_CANDIDATE], stat[STATUS.NARROW_PHASE] = m, nf
            continue
        for e in range(nf):
            fe = found[e]
            contacts.append((ci[CC.FIRST_CONTACT] + e, ci,
                             0.5 * (fe[FOUND.slice("point_a")] + fe[FOUND.slice("point_b")]),
                             fe[FOUND.slice("normal")].copy(), float(fe[FOUND.DISTANCE]) - off))
    for kk, ci, x, n, dist in contacts:
        o = co[kk]
        o[CO.DISTANCE], o[CO.slice("point")], o[CO.slice("normal")] = dist, x, n
        if not dist <= margin:
            continue
        o[CO.ACTIVE] = 1.0
        aa = np.array([1.0, 0, 0]) if abs(n[0]) < 0.9 else np.array([0, 1.0, 0])
        t1 = aa - (aa @ n) * n
        t1 /= math.sqrt(t1 @ t1)
        ocol, ncol = ci[CC.COLUMNS], ci[CC.NUM_COLUMNS]
        colsig = it[ocol:ocol + COLUMN.size * ncol]
        cols = np.array(colsig[COLUMN.COLUMN::COLUMN.size], int)
        sig = np.array(colsig[COLUMN.SIGN::COLUMN.size], float)
        sv = sig * vfree[cols]
        vel3 = U[:, cols] @ sv + np.cross(W[:, cols] @ sv, x)
        vt = vel3 - (vel3 @ n) * n
        speed = math.sqrt(vt @ vt)
        if speed > 1e-12:
            t1 = -vt / speed
        t2 = np.cross(n, t1)
        o[CO.slice("t1")], o[CO.slice("t2")] = t1, t2
        J = np.zeros((3, nv))
        for r, dr in enumerate((n, t1, t2)):
            J[r, cols] = sig * (dr @ U[:, cols] + np.cross(x, dr) @ W[:, cols])
        Jall[kk] = J
        obl = ocol + COLUMN.size * ncol            # count, then the touched blocks
        bl = it[obl + 1:obl + 1 + it[obl]]
        Y = np.array([solve(J[r], bl) for r in range(3)])
        if cproj is not None:
            Y = Y @ cproj.T
        G = J @ Y.T + cfm * np.eye(3)
        bias = dist / h if (mode == 1 or dist > 0) else erp * dist / h
        jv = J @ vfree
        jv[0] += bias
        bscale = max(bscale, float(np.max(np.abs(jv))))
        wk, wf = warm[kk, WARM.NORMAL], warm[kk, WARM.slice("friction")]
        p = np.array([max(wk, 0.0), wf @ t1, wf @ t2])
        p[1:] = _friction_project(p[1:], mu * p[0], box)
        prob.J.append(J)
        prob.Y.append(Y)
        prob.G.append(G)
        prob.b.append(np.array([bias, 0.0, 0.0]))
        prob.blk.append(set(bl))
        prob.p.append(p)
        prob.k.append(kk)
        prob.cfm.append(cfm)
        prob.one.append(False)
        prob.bil.append(0)
        prob.lo.append(0.0)
        prob.up.append(math.inf)
        bias_l.append(np.array([bias, 0.0, 0.0]))
    for kk, ci, cd in limits:      # joint-limit sides, joint friction (the C order: after pairs)
        fric = ci[CC.KIND] == JOINT_FRICTION
        if fric:
            vi, sg, phi = ci[JF_INTS.VELOCITY], 1.0, 0.0
        else:
            vi, sg = ci[JL_INTS.VELOCITY], float(ci[JL_INTS.SIGN])
            phi = sg * (q[ci[JL_INTS.COORDINATE]] - cd[JL_DOUBLES.BOUND])
        o = co[kk]
        o[CO.DISTANCE] = phi
        if not fric and not phi <= cd[JL_DOUBLES.MARGIN] + h * abs(v[vi]):
            continue
        o[CO.ACTIVE] = 1.0
        J = np.zeros((3, nv))
        J[0, vi] = sg
        Jall[kk] = J
        obl = ci[CC.COLUMNS] + COLUMN.size * ci[CC.NUM_COLUMNS]
        bl = it[obl + 1:obl + 1 + it[obl]]
        Y = np.zeros((3, nv))
        Y[0] = solve(J[0], bl)
        if cproj is not None:
            Y[0] = cproj @ Y[0]
        cfm_k = (cd[JF_DOUBLES.CFM] if fric else cd[JL_DOUBLES.CFM]) / h
        G = np.zeros((3, 3))
        G[0, 0] = sg * Y[0, vi] + cfm_k
        if fric:
            bias, lo, up = 0.0, -cd[JF_DOUBLES.BOUND], cd[JF_DOUBLES.BOUND]
        else:
            bias = phi / h if phi > 0 else cd[JL_DOUBLES.ERP] * phi / h
            lo, up = 0.0, math.inf
        bscale = max(bscale, abs(sg * vfree[vi] + bias))
        prob.J.append(J)
        prob.Y.append(Y)
        prob.G.append(G)
        prob.b.append(np.array([bias, 0.0, 0.0]))
        prob.blk.append(set(bl))
        prob.p.append(np.array([min(max(warm[kk, WARM.NORMAL], lo), up), 0.0, 0.0]))
        prob.k.append(kk)
        prob.cfm.append(cfm_k)
        prob.one.append(True)
        prob.bil.append(0)
        prob.lo.append(lo)
        prob.up.append(up)
        bias_l.append(np.array([bias, 0.0, 0.0]))
    cphi = sec["cphi"].reshape(max(nc, 0), 3)
    cJ = sec["cJ"].reshape(max(nc, 0), 3, nv)
    for kk, ci, cd in closures:    # closures' bilateral rows (the C order: after the others)
        nr = ci[CL_INTS.NUM_ROWS]
        o = co[kk]
        o[CO.DISTANCE] = float(np.max(np.abs(cphi[kk, :nr]))) if nr else 0.0
        o[CO.ACTIVE] = 1.0
        J = np.zeros((3, nv))
        J[:nr] = cJ[kk, :nr]
        Jall[kk] = J
        obl = ci[CC.COLUMNS] + COLUMN.size * ci[CC.NUM_COLUMNS]
        bl = it[obl + 1:obl + 1 + it[obl]]
        Y = np.array([solve(J[r], bl) for r in range(3)])
        cfm_k = cd[CL_DOUBLES.CFM] / h
        G = J @ Y.T
        for r in range(3):
            G[r, r] = G[r, r] + cfm_k if r < nr else 1.0
        bias = np.zeros(3)
        bias[:nr] = cd[CL_DOUBLES.ERP] * cphi[kk, :nr] / h
        bscale = max(bscale, float(np.max(np.abs(J @ vfree + bias))))
        p = np.zeros(3)
        p[:nr] = np.concatenate([warm[kk, WARM.NORMAL:WARM.NORMAL + 1],
                                 warm[kk, WARM.FRICTION:WARM.FRICTION + 2]])[:nr]
        prob.J.append(J)
        prob.Y.append(Y)
        prob.G.append(G)
        prob.b.append(bias)
        prob.blk.append(set(bl))
        prob.p.append(p)
        prob.k.append(kk)
        prob.cfm.append(cfm_k)
        prob.one.append(False)
        prob.bil.append(nr)
        prob.lo.append(-math.inf)
        prob.up.append(math.inf)
        bias_l.append(bias)
    # 5. PGS
    na = len(prob.p)
    vel = prob.vel(vfree)
    it_n, last_polish, change, gap = 0, 0, 0.0, POLISH_GAP
    newton = True             # the polish's sliding law: Newton, or fixed directions
    while it_n < maxit and na > 0:
        change = 0.0
        om = 1.0 if it_n < 2 else OMEGA
        for j in range(na):
            G, p, Y = prob.G[j], prob.p[j], prob.Y[j]
            w = prob.w(j, vel)
            if prob.bil[j]:                     # a closure: its block solved exactly
                d = _solve_sym3(G, w)
                change = max(change, float(np.max(np.abs(d) * np.diag(G))))
                prob.p[j] = p + d
                vel = vel + Y.T @ d
                continue
            pn = max(p[0] - om * w[0] / G[0, 0], prob.lo[j])
            pn = min(pn, prob.up[j])
            dpn = pn - p[0]
            if prob.one[j]:                     # a 1 x 1 block: no friction
                change = max(change, abs(dpn) * G[0, 0])
                prob.p[j] = np.array([pn, 0.0, 0.0])
                vel = vel + Y[0] * dpn
                continue
            wt = w[1:] + G[1:, 0] * dpn
            a, b, cdd = G[1, 1], 0.5 * (G[1, 2] + G[2, 1]), G[2, 2]
            det = a * cdd - b * b
            lim, pt, tt = mu * pn, np.zeros(2), math.inf
            if det > 1e-300 * (a * cdd + 1e-300):
                pt = p[1:] - om * np.array([cdd * wt[0] - b * wt[1], a * wt[1] - b * wt[0]]) / det
                tt = np.max(np.abs(pt)) if box else math.hypot(pt[0], pt[1])
            g = _lmax2(a, b, cdd)
            if tt > lim:
                pt = p[1:] - wt / g
                tt = math.hypot(pt[0], pt[1])
                if box:
                    pt = np.clip(pt, -lim, lim)
                elif tt > lim:
                    pt = pt * (lim / tt if tt > 0 else 0.0)
            d = np.array([dpn, pt[0] - p[1], pt[1] - p[2]])
            change = max(change, abs(dpn) * G[0, 0], abs(d[1]) * g, abs(d[2]) * g)
            prob.p[j] = np.array([pn, pt[0], pt[1]])
            vel = vel + Y.T @ d
        it_n += 1
        if change <= ittol * bscale:
            break
        if (it_n - 1 == 1 or (change < 1e-6 * bscale and it_n - 1 - last_polish >= gap)
                or it_n - 1 - last_polish >= POLISH_EVERY):
            last_polish = it_n - 1
            if it_n - 1 > 1:            # a polish that does not end the step: back off
                gap *= 2
            saved = [p.copy() for p in prob.p]
            r0 = prob.residual(vel)
            new = prob.polish(vfree, bias_l, ittol * bscale, vel, newton)
            if new is None and newton and not box:   # Newton failed: fixed directions
                new = prob.polish(vfree, bias_l, ittol * bscale, vel, False)
            if new is not None:
                prob.p = new
                vtmp = prob.vel(vfree)
                r1 = prob.residual(vtmp)
                if r1 <= ittol * bscale:
                    vel = vtmp
                    break
                newton = not newton     # a point not ending the step: the other kind next
                if r1 < r0:
                    vel = vtmp
                else:
                    prob.p = saved
    # 6. velocity, residual, outputs
    vn = prob.vel(vfree)
    tauc = np.zeros(nv)
    for J, p in zip(prob.J, prob.p):
        tauc += J.T @ p / h
    res = prob.residual(vn)
    imp = np.zeros(3 * nc)
    wout = np.zeros((nc, WARM.size))
    ow = CO.WARM
    for j, (kk, p) in enumerate(zip(prob.k, prob.p)):
        s = prob.J[j] @ vn
        o = co[kk]
        o[CO.slice("slip")] = s[1:]
        o[CO.slice("impulse")] = p
        o[ow + WARM.NORMAL] = p[0]
        o[ow + WARM.FRICTION:ow + WARM.FRICTION + 3] = \
            p[1] * o[CO.slice("t1")] + p[2] * o[CO.slice("t2")]
        if prob.bil[j]:                         # a closure's rows 1, 2 as they are
            o[ow + WARM.FRICTION:ow + WARM.FRICTION + 3] = (p[1], p[2], 0.0)
        wout[kk] = o[CO.slice("warm")]
        imp[j], imp[na + 2 * j], imp[na + 2 * j + 1] = p
    if euler:                 # v_n = v + (H + h D)^-1 H (v_M - v), block by block
        Md, d = H + np.diag(hD), H @ (vn - v)
        for s, n in blocks:
            try:
                Lb = np.linalg.cholesky(Md[s:s + n, s:s + n])
            except np.linalg.LinAlgError:
                return 1
            d[s:s + n] = np.linalg.solve(Lb.T, np.linalg.solve(Lb, d[s:s + n]))
        vn = v + d
        for j, kk in enumerate(prob.k):
            co[kk, CO.slice("slip")] = (prob.J[j] @ vn)[1:]
    # 7-8. integration and the free joints' frames
    qn = q.copy()
    for i in range(nj):
        jt = it[oj + JOINT.size * i:oj + JOINT.size * (i + 1)]
        tp, qs, vs, jnq = jt[JOINT.TYPE], jt[JOINT.Q_START], jt[JOINT.V_START], jt[JOINT.NQ]
        if tp == VECTOR_JOINT:
            qn[qs:qs + jnq] = q[qs:qs + jnq] + h * vn[vs:vs + jnq]
        else:
            qn[qs:qs + 4] = _quat_exp_mul(q[qs:qs + 4], vn[vs:vs + 3], h)
            if tp == FREE_JOINT:
                qn[qs + 4:qs + 7] = q[qs + 4:qs + 7] + h * (_quat_rot(q[qs:qs + 4]) @ vn[vs + 3:vs + 6])
    for i in range(nfree):
        qs, vs = it[of + FREE.size * i + FREE.Q_START], it[of + FREE.size * i + FREE.V_START]
        Rr = _quat_rot(qn[qs:qs + 4]).T @ _quat_rot(q[qs:qs + 4])
        vn[vs:vs + 3], vn[vs + 3:vs + 6] = Rr @ vn[vs:vs + 3], Rr @ vn[vs + 3:vs + 6]
    ok = res <= tol * bscale and stat[STATUS.FAILED_CANDIDATE] < 0
    stat[STATUS.CONVERGED] = 1.0 if ok else 0.0
    stat[STATUS.SWEEPS], stat[STATUS.ACTIVE_CONTACTS] = it_n, na
    stat[STATUS.RESIDUAL], stat[STATUS.MARGIN] = res / bscale, margin
    parts = {"qn": qn, "vn": vn, "tauc": tauc, "acc": (vn - v) / h, "stat": stat, "imp": imp,
             "wout": wout, "co": co, "Jall": Jall}
    for name, (a, b) in OUTPUT.offsets(nq=nq, nv=nv, nb=nb, nc=nc).items():
        out[a:b] = np.asarray(parts[name], float).ravel()
    return 0

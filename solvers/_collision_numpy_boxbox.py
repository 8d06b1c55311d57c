"""The numpy narrow phase, part 2: box-box (private part of :mod:`solvers.collision_numpy`; the C
routines of ``_collision_c_boxbox``, routine for routine: separating axis test, incident
face clipping, edge-edge witnesses, GJK for boxes separated within the margin)."""
from __future__ import annotations

import math

from ._collision_numpy_gjk import axpy, dot, sub
from ._collision_numpy_shapes import Geom, Sink, gjk_epa, segments

__all__: list[str] = []  # private module

FACE_A, FACE_B, EDGE = 0, 1, 2
_QUAD = ((1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0))


def sat(a: Geom, b: Geom):
    """Largest separation over the 15 axes, its world normal (A to B), kind, i, j."""
    ha, hb = a.par, b.par
    R = [[dot(a.col(i), b.col(j)) for j in range(3)] for i in range(3)]
    A = [[abs(x) + 1e-15 for x in row] for row in R]
    T = a.local(sub(b.t, a.t))
    tol = 1e-9 * (a.bound + b.bound)
    best, kind, ia, jb, axis = -math.inf, FACE_A, 0, 0, [0.0, 0.0, 0.0]
    for i in range(3):
        sep = abs(T[i]) - ha[i] - (hb[0] * A[i][0] + hb[1] * A[i][1] + hb[2] * A[i][2])
        if sep > best:
            best, kind, ia, axis = sep, FACE_A, i, [float(i == 0), float(i == 1), float(i == 2)]
    best_a = best
    for j in range(3):
        tb = T[0] * R[0][j] + T[1] * R[1][j] + T[2] * R[2][j]
        sep = abs(tb) - hb[j] - (ha[0] * A[0][j] + ha[1] * A[1][j] + ha[2] * A[2][j])
        if sep > best_a + tol and sep > best:
            best, kind, jb, axis = sep, FACE_B, j, [R[0][j], R[1][j], R[2][j]]
    best_face = best
    for i in range(3):
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        for j in range(3):
            nrm = math.sqrt(R[i1][j] * R[i1][j] + R[i2][j] * R[i2][j])
            if nrm < 1e-6:
                continue
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            ra = ha[i1] * A[i2][j] + ha[i2] * A[i1][j]
            rb = hb[j1] * A[i][j2] + hb[j2] * A[i][j1]
            tl = T[i2] * R[i1][j] - T[i1] * R[i2][j]
            sep = (abs(tl) - ra - rb) / nrm
            if sep > best_face + tol and sep > best:
                best, kind, ia, jb = sep, EDGE, i, j
                axis = [0.0, 0.0, 0.0]
                axis[i1], axis[i2] = -R[i2][j] / nrm, R[i1][j] / nrm
    s = 1.0 if dot(T, axis) >= 0.0 else -1.0
    n = a.rot(axis)
    return best, (s * n[0], s * n[1], s * n[2]), kind, ia, jb


def _clip(poly, axis, limit):
    for sg in (1.0, -1.0):
        out = []
        for k in range(len(poly)):
            p, q = poly[k], poly[(k + 1) % len(poly)]
            dp, dq = sg * p[axis] - limit, sg * q[axis] - limit
            if dp <= 0.0:
                out.append(p)
            if dp * dq < 0.0:
                t = dp / (dp - dq)
                out.append(tuple(p[i] + t * (q[i] - p[i]) for i in range(3)))
        poly = out
        if not poly:
            break
    return poly


def face_clip(ref: Geom, k: int, normal, inc: Geom):
    """Incident face of ``inc`` clipped to face ``k`` of ``ref``: [(world point, separation)]."""
    hi, hr = inc.par, ref.par
    dn = inc.local(normal)
    m = 0
    if abs(dn[1]) > abs(dn[m]):
        m = 1
    if abs(dn[2]) > abs(dn[m]):
        m = 2
    t = -1.0 if dn[m] > 0.0 else 1.0
    u, v = (m + 1) % 3, (m + 2) % 3
    M = [[dot(ref.col(i), inc.col(r)) for i in range(3)] for r in range(3)]
    o = ref.local(sub(inc.t, ref.t))
    c = [o[i] + t * hi[m] * M[m][i] for i in range(3)]
    eu = [hi[u] * M[u][i] for i in range(3)]
    ew = [hi[v] * M[v][i] for i in range(3)]
    poly = [tuple(c[i] + su * eu[i] + sw * ew[i] for i in range(3)) for su, sw in _QUAD]
    for axis in range(3):
        if axis != k:
            poly = _clip(poly, axis, hr[axis])
            if not poly:
                return []
    s = 1.0 if dot(normal, ref.col(k)) >= 0.0 else -1.0
    return [(ref.world(q), s * q[k] - hr[k]) for q in poly]


def face_contacts(a, b, kind, idx, n):
    """[(point_a, point_b, separation)] of a face contact with normal n (A to B)."""
    if kind == FACE_A:
        return [(axpy(p, -sep, n), p, sep) for p, sep in face_clip(a, idx, n, b)]
    mn = (-n[0], -n[1], -n[2])
    return [(p, axpy(p, sep, n), sep) for p, sep in face_clip(b, idx, mn, a)]


def edge_witness(a, b, i, j, n):
    na, nb = a.local(n), b.local((-n[0], -n[1], -n[2]))
    ca = [a.par[k] if na[k] >= 0.0 else -a.par[k] for k in range(3)]
    cb = [b.par[k] if nb[k] >= 0.0 else -b.par[k] for k in range(3)]
    ca[i] = 0.0
    cb[j] = 0.0
    ea = tuple(x * a.par[i] for x in a.col(i))
    eb = tuple(x * b.par[j] for x in b.col(j))
    wa, wb = a.world(ca), b.world(cb)
    return segments(sub(wa, ea), axpy(wa, 1.0, ea), sub(wb, eb), axpy(wb, 1.0, eb))


def box_box(a, b):
    """Box-box signed distance ``(d, pa, pb, n)``, or None when EPA cannot start."""
    s, n, kind, i, j = sat(a, b)
    if s > 0.0:
        return gjk_epa(a, b)
    if kind == EDGE:
        pa, pb = edge_witness(a, b, i, j, n)
        return s, pa, pb, n
    contacts = face_contacts(a, b, kind, i if kind == FACE_A else j, n)
    if not contacts:
        return gjk_epa(a, b)
    pa, pb, sep = min(contacts, key=lambda c: c[2])
    return sep, pa, pb, n


def box_box_manifold(a, b, margin, out: Sink) -> bool:
    """The box-box manifold into ``out``; False when EPA cannot start."""
    sp, n, kind, i, j = sat(a, b)
    if sp > margin:
        return True
    idx = i if kind == FACE_A else j
    if sp > 0.0:
        r = gjk_epa(a, b)
        if r is None:
            return False
        if r[0] > margin:
            return True
        ca = [abs(x) for x in a.local(r[3])]
        cb = [abs(x) for x in b.local(r[3])]
        xa, xb = ca.index(max(ca)), cb.index(max(cb))
        if ca[xa] >= cb[xb] and ca[xa] > 1.0 - 1e-9:
            e = a.col(xa)
            sg = 1.0 if dot(r[3], e) > 0.0 else -1.0
            kind, idx, n = FACE_A, xa, tuple(sg * x for x in e)
        elif cb[xb] > 1.0 - 1e-9:
            e = b.col(xb)
            sg = 1.0 if dot(r[3], e) > 0.0 else -1.0
            kind, idx, n = FACE_B, xb, tuple(sg * x for x in e)
        else:
            out.emit(r[1], r[2], r[3], r[0])
            return True
    elif kind == EDGE:
        pa, pb = edge_witness(a, b, i, j, n)
        out.emit(pa, pb, n, sp)
        return True
    kept = 0
    for pa, pb, sep in face_contacts(a, b, kind, idx, n):
        if sep <= margin:
            out.emit(pa, pb, n, sep)
            kept += 1
    if kept == 0:
        r = box_box(a, b)
        if r is None:
            return False
        if r[0] <= margin:
            out.emit(r[1], r[2], r[3], r[0])
    return True

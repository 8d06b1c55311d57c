"""GJK and EPA of the numpy narrow phase (private part of :mod:`solvers.collision`): the
algorithm of the C unit (``_collision_c_gjk``), statement for statement, on tuples of
floats (faster than numpy for single 3-vectors). See that module for the method and the
references."""
from __future__ import annotations

import math

__all__: list[str] = []  # private module

GJK_ITERATIONS = 128
EPA_ITERATIONS = 128
MAXV = 144
MAXF = 512


def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def axpy(a, t, b):
    return (a[0] + t * b[0], a[1] + t * b[1], a[2] + t * b[2])


def unit(a):
    n = math.sqrt(dot(a, a))
    return (a[0] / n, a[1] / n, a[2] / n)


def perpendicular(u):
    k = 0
    if abs(u[1]) < abs(u[k]):
        k = 1
    if abs(u[2]) < abs(u[k]):
        k = 2
    e = [0.0, 0.0, 0.0]
    e[k] = 1.0
    return unit(cross(u, e))


def _segment(a, b):
    ab = sub(b, a)
    den = dot(ab, ab)
    t = -dot(a, ab) / den if den > 0.0 else 0.0
    if t <= 0.0:
        return a, (0,), (1.0,)
    if t >= 1.0:
        return b, (1,), (1.0,)
    return axpy(a, t, ab), (0, 1), (1.0 - t, t)


def _triangle(a, b, c):
    ab, ac = sub(b, a), sub(c, a)
    n = cross(ab, ac)
    nn = dot(n, n)
    if nn <= 1e-24 * dot(ab, ab) * dot(ac, ac) or nn == 0.0:
        pts = (a, b, c)
        best = None
        for i, j in ((0, 1), (0, 2), (1, 2)):
            p, idx, w = _segment(pts[i], pts[j])
            if best is None or dot(p, p) < dot(best[0], best[0]):
                best = (p, tuple((i, j)[k] for k in idx), w)
        return best
    d1, d2 = -dot(ab, a), -dot(ac, a)
    if d1 <= 0.0 and d2 <= 0.0:
        return a, (0,), (1.0,)
    d3, d4 = -dot(ab, b), -dot(ac, b)
    if d3 >= 0.0 and d4 <= d3:
        return b, (1,), (1.0,)
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        return axpy(a, v, ab), (0, 1), (1.0 - v, v)
    d5, d6 = -dot(ab, c), -dot(ac, c)
    if d6 >= 0.0 and d5 <= d6:
        return c, (2,), (1.0,)
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        t = d2 / (d2 - d6)
        return axpy(a, t, ac), (0, 2), (1.0 - t, t)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        t = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return axpy(b, t, sub(c, b)), (1, 2), (1.0 - t, t)
    den = 1.0 / (va + vb + vc)
    v, t = vb * den, vc * den
    return axpy(axpy(a, v, ab), t, ac), (0, 1, 2), (1.0 - v - t, v, t)


TET = ((0, 1, 2, 3), (0, 2, 3, 1), (0, 3, 1, 2), (1, 3, 2, 0))


def _tetrahedron(P):
    vol = dot(cross(sub(P[1], P[0]), sub(P[2], P[0])), sub(P[3], P[0]))
    scale = max(abs(x) for p in P for x in p) + 1e-300
    degenerate = abs(vol) <= 1e-12 * scale * scale * scale
    best = None
    inside = True
    for i, j, k, o in TET:
        n = cross(sub(P[j], P[i]), sub(P[k], P[i]))
        if degenerate or (-dot(n, P[i])) * dot(n, sub(P[o], P[i])) < 0.0:
            inside = False
            p, idx, w = _triangle(P[i], P[j], P[k])
            if best is None or dot(p, p) < dot(best[0], best[0]):
                best = (p, tuple((i, j, k)[m] for m in idx), w)
    if inside:
        return (0.0, 0.0, 0.0), (0, 1, 2, 3), None
    return best


def _combine(w, pts):
    x = y = z = 0.0
    for c, p in zip(w, pts):
        x += c * p[0]
        y += c * p[1]
        z += c * p[2]
    return (x, y, z)


def gjk(sup, ca, cb, scale):
    """GJK on the cores: ``(True, dist, pa, pb, n)`` or ``(False, W, A, B)``."""
    v = sub(ca, cb)
    if dot(v, v) <= (1e-12 * scale) ** 2:
        v = (1.0, 0.0, 0.0)
    a, b = sup((-v[0], -v[1], -v[2]))
    W, A, B = [sub(a, b)], [a], [b]
    lam = (1.0,)
    v = W[0]
    tol, dup = 1e-11 * scale, (1e-14 * scale) ** 2
    best = (math.inf, v, A, B, lam)
    closest = (W, A, B)
    for _ in range(GJK_ITERATIONS):
        vv = dot(v, v)
        if vv <= tol * tol:
            return False, W, A, B
        a, b = sup((-v[0], -v[1], -v[2]))
        w = sub(a, b)
        gap = (vv - dot(v, w)) / math.sqrt(vv)
        if gap < best[0]:
            best = (gap, v, A, B, lam)
        if gap <= tol or any(dot(sub(w, x), sub(w, x)) <= dup for x in W):
            break
        W, A, B = W + [w], A + [a], B + [b]
        if len(W) == 2:
            p, idx, lw = _segment(*W)
        elif len(W) == 3:
            p, idx, lw = _triangle(*W)
        else:
            p, idx, lw = _tetrahedron(W)
            if len(idx) == 4:
                return False, W, A, B
        if dot(p, p) >= vv:
            break
        W, A, B = [W[i] for i in idx], [A[i] for i in idx], [B[i] for i in idx]
        lam, v = lw, p
        closest = (W, A, B)
    gap, v, A, B, lam = best
    dist = math.sqrt(dot(v, v))
    if gap > tol and gap >= 1e-2 * dist:
        return (False,) + closest
    return True, dist, _combine(lam, A), _combine(lam, B), (-v[0] / dist, -v[1] / dist, -v[2] / dist)


def _barycentric(p, a, b, c):
    n = cross(sub(b, a), sub(c, a))
    nn = dot(n, n)
    if nn <= 1e-300:
        return (1.0, 0.0, 0.0)
    la = dot(n, cross(sub(b, p), sub(c, p))) / nn
    lb = dot(n, cross(sub(c, p), sub(a, p))) / nn
    return (la, lb, 1.0 - la - lb)


_AX6 = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0),
        (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, -1.0))


def epa(sup, W, A, B, scale, axes):
    """EPA from GJK's simplex: ``(h, n, pa, pb)``, or None when it cannot start."""
    W, A, B = list(W), list(A), list(B)
    tol = 1e-12 * scale

    def add(d):
        a, b = sup(d)
        W.append(sub(a, b))
        A.append(a)
        B.append(b)

    def drop():
        W.pop()
        A.pop()
        B.pop()

    if len(W) == 1:
        for d in _AX6:
            add(d)
            r = sub(W[-1], W[0])
            if dot(r, r) > tol * tol:
                break
            drop()
    if len(W) == 2:
        u = unit(sub(W[1], W[0]))
        e1 = perpendicular(u)
        e2 = cross(u, e1)
        for m in range(6):
            ang = m * math.pi / 3.0
            c, s = math.cos(ang), math.sin(ang)
            add(tuple(c * e1[i] + s * e2[i] for i in range(3)))
            r = sub(W[-1], W[0])
            r = axpy(r, -dot(r, u), u)
            if dot(r, r) > tol * tol:
                break
            drop()
    if len(W) == 3:
        n = unit(cross(sub(W[1], W[0]), sub(W[2], W[0])))
        add(n)
        h1 = dot(n, sub(W[3], W[0]))
        add((-n[0], -n[1], -n[2]))
        h2 = -dot(n, sub(W[4], W[0]))
        k = 4 if h1 >= h2 else 3
        del W[k], A[k], B[k]
    if len(W) != 4:
        return None
    centroid = (0.0, 0.0, 0.0)
    for w in W:
        centroid = axpy(centroid, 0.25, w)
    faces = []          # [i, j, k, n, d], in creation order

    def add_face(i, j, k, orient):
        n = cross(sub(W[j], W[i]), sub(W[k], W[i]))
        nn = math.sqrt(dot(n, n))
        if orient and dot(n, sub(W[i], centroid)) < 0.0:
            j, k, n = k, j, (-n[0], -n[1], -n[2])
        if nn <= 1e-30:
            faces.append((i, j, k, (0.0, 0.0, 0.0), math.inf))
        else:
            n = (n[0] / nn, n[1] / nn, n[2] / nn)
            faces.append((i, j, k, n, dot(n, W[i])))

    def owner(p, q):
        for f in range(len(faces) - 1, -1, -1):
            i, j, k = faces[f][:3]
            if (i == p and j == q) or (j == p and k == q) or (k == p and i == q):
                return f
        return -1

    for i, j, k, _ in TET:
        add_face(i, j, k, True)
    vis_tol = 1e-13 * scale
    uh, up, ua, ub = math.inf, faces[0], None, None
    kept = None
    for _ in range(EPA_ITERATIONS):
        best = min(range(len(faces)), key=lambda f: faces[f][4])
        n, d = faces[best][3], faces[best][4]
        if kept is not None and kept[4] > 1e-9 * scale and d < kept[4] - 1e-12 * scale:
            break
        kept = faces[best]
        a, b = sup(n)
        w = sub(a, b)
        h = dot(n, w)
        if h < uh:
            uh, up, ua, ub = h, kept, a, b
        if uh - d <= tol or len(W) >= MAXV:
            break
        state = [0] * len(faces)
        state[best] = 1
        stack, horizon = [best], []
        while stack:
            i, j, k = faces[stack.pop()][:3]
            for p, q in ((i, j), (j, k), (k, i)):
                g = owner(q, p)
                if g < 0 or state[g] == 1:
                    continue
                if state[g] == 0:
                    if dot(faces[g][3], sub(w, W[faces[g][0]])) > vis_tol:
                        state[g] = 1
                        stack.append(g)
                        continue
                    state[g] = 2
                horizon.append((p, q))
        alive = [f for f, s in zip(faces, state) if s != 1]
        if len(alive) + len(horizon) > MAXF:
            break
        new = len(W)
        W.append(w)
        A.append(a)
        B.append(b)
        faces[:] = alive
        for p, q in horizon:
            add_face(p, q, new, False)
    h = uh
    i, j, k, n, d = up
    target = (d * n[0], d * n[1], d * n[2])
    lam = _barycentric(target, W[i], W[j], W[k])
    if min(lam) < -1e-9:
        for f in faces:
            if abs(f[4] - d) <= 1e-9 * scale and dot(f[3], n) >= 1.0 - 1e-9:
                lf = _barycentric(target, W[f[0]], W[f[1]], W[f[2]])
                if min(lf) > min(lam):
                    lam, (i, j, k) = lf, f[:3]
                    if min(lf) >= -1e-9:
                        break
    pa = _combine(lam, (A[i], A[j], A[k]))
    pb = _combine(lam, (B[i], B[j], B[k]))
    for e in axes:
        ne = dot(n, e)
        u = axpy(n, -ne, e)
        if ne == 0.0 or dot(u, u) < 0.99:
            continue
        u = unit(u)
        au, bu = sup(u)
        hu = dot(u, sub(au, bu))
        if hu < h - 1e-12 * scale:
            h, n, ua, ub = hu, u, au, bu
    pa = axpy(pa, dot(n, sub(ua, pa)), n)
    pb = axpy(pb, dot(n, sub(ub, pb)), n)
    lat = axpy(sub(pa, pb), -h, n)
    return h, n, axpy(pa, -0.5, lat), axpy(pb, 0.5, lat)

"""GJK distance and EPA penetration depth of the numpy narrow phase (private part of
:mod:`solvers.collision_numpy`): the algorithm of the C unit (``_collision_c_gjk``),
statement for statement, on tuples of floats.

Both work on the Minkowski difference ``M = core(A) - core(B)`` of the shapes' *cores*
(the shape itself for boxes and cylinders, the centre point of a sphere, the axis
segment of a capsule), given by support functions. The rounded part is added back
afterwards: ``distance = distance(core A, core B) - r_A - r_B`` with the same normal,
which is exact for both separated and overlapping cores because the support function
of ``K + ball(r)`` is ``h_K(n) + r`` (van den Bergen 2003, ch. 4.3).

* GJK (Gilbert, Johnson, Keerthi 1988; van den Bergen 1999): closest point of ``M`` to
  the origin, with the simplex sub-problem solved by Voronoi-region tests
  (Ericson 2005, "Real-Time Collision Detection", 5.1.5-5.1.6).
* EPA (van den Bergen 2001, "Proximity queries and penetration depth computation on
  3D game objects"): when the origin is inside ``M``, grow a polytope inside ``M``
  until the face nearest to the origin lies on the boundary of ``M``.

The normal returned is the outward normal of ``M`` at the point nearest the origin,
which is the unit vector from A to B: moving B along it separates the shapes.

Robustness measures (each found necessary by the randomized tests):

* GJK keeps the iterate with the smallest duality gap ``|v| - v.w/|v|``; if it cannot
  resolve a small separation (curved shapes nearly touching) it hands over to EPA.
* EPA grows the visible region from the nearest face over face adjacency (a single
  horizon loop; each directed edge's face in a table, as in the C unit), reports the
  smallest *upper* bound ``h = h_M(n)`` seen, so that the translation ``h n`` always
  separates the shapes, stops if rounding makes an established lower bound drop, and computes barycentric coordinates from areas (sliver
  faces). On flat parts of ``M`` the witness face is the coplanar face containing the
  projection of the origin.
* Vector arithmetic is on plain float tuples (several times faster than numpy for
  single 3-vectors).

* A final polish tries the EPA normal with its component along each cylinder or capsule
  axis removed (facets on a cylinder side tilt the normal along the axis); this makes
  symmetric cases exact, e.g. coaxial shapes where a whole rim circle is optimal.

Accuracy: polytopes (box-box, box-capsule) are exact to rounding. With a cylinder, the
distance is typically accurate to 1e-10 and the normal to about 1e-6 (EPA on a curved
surface resolves the normal to the square root of its tolerance); randomized tests
(including coincident, coaxial and axis-aligned poses) keep the distance, the gap along
the normal and the witness points within 1e-8.
"""
from __future__ import annotations

import math

from ._collision_source import CAPACITY

__all__: list[str] = []  # private module

GJK_ITERATIONS = CAPACITY["GJK_ITERATIONS"]
EPA_ITERATIONS = CAPACITY["EPA_ITERATIONS"]
MAXV, MAXF, MAXH = CAPACITY["MAXV"], CAPACITY["MAXF"], CAPACITY["MAXH"]


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
    # faces: id -> (i, j, k, n, d), ids in creation order; owner: directed edge -> face id
    faces: dict = {}
    owner: dict = {}
    made = [0]

    def add_face(i, j, k, orient):
        n = cross(sub(W[j], W[i]), sub(W[k], W[i]))
        nn = math.sqrt(dot(n, n))
        if orient and dot(n, sub(W[i], centroid)) < 0.0:
            j, k, n = k, j, (-n[0], -n[1], -n[2])
        if nn <= 1e-30:
            face = (i, j, k, (0.0, 0.0, 0.0), math.inf)
        else:
            n = (n[0] / nn, n[1] / nn, n[2] / nn)
            face = (i, j, k, n, dot(n, W[i]))
        fid = made[0]
        made[0] += 1
        faces[fid] = face
        owner[(i, j)] = owner[(j, k)] = owner[(k, i)] = fid

    for i, j, k, _ in TET:
        add_face(i, j, k, True)
    vis_tol = 1e-13 * scale
    # d (nearest face) is a lower bound of the depth, h = n . w an upper bound whose
    # translation h n separates the shapes whatever the polytope; the answer is the
    # smallest upper bound. A drop of an established positive d means rounding broke
    # convexity: stop.
    uh, up, ua, ub = math.inf, faces[0], None, None
    kept = None
    for _ in range(EPA_ITERATIONS):
        best = min(faces, key=lambda f: faces[f][4])    # ties: the first made
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
        visible, hidden, horizon, stack = {best}, set(), [], [best]
        while stack:
            i, j, k = faces[stack.pop()][:3]
            for p, q in ((i, j), (j, k), (k, i)):
                g = owner.get((q, p))
                if g is None or g in visible:
                    continue
                if g not in hidden:
                    fg = faces[g]
                    if dot(fg[3], sub(w, W[fg[0]])) > vis_tol:
                        visible.add(g)
                        stack.append(g)
                        continue
                    hidden.add(g)
                horizon.append((p, q))
        if len(horizon) > MAXH or made[0] + len(horizon) > MAXF:
            break                                         # out of room: keep the bound found
        new = len(W)
        W.append(w)
        A.append(a)
        B.append(b)
        for f in visible:
            i, j, k = faces.pop(f)[:3]
            for e in ((i, j), (j, k), (k, i)):
                if owner.get(e) == f:
                    del owner[e]
        for p, q in horizon:
            add_face(p, q, new, False)
    h = uh
    i, j, k, n, d = up
    target = (d * n[0], d * n[1], d * n[2])
    lam = _barycentric(target, W[i], W[j], W[k])
    if min(lam) < -1e-9:
        for f in faces.values():
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

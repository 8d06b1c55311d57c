"""GJK distance and EPA penetration depth between convex shapes (private).

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
  horizon loop), reports the smallest *upper* bound ``h = h_M(n)`` seen, so that the
  translation ``h n`` always separates the shapes, stops if rounding makes an
  established lower bound drop, and computes barycentric coordinates from areas (sliver
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

import numpy as np

from ._shapes import Capsule, Cylinder, Shape

__all__ = ["gjk_epa"]

_MAX_GJK_ITERATIONS = 128
_MAX_EPA_ITERATIONS = 128

# Small 3-vector helpers on tuples: plain float arithmetic is several times faster than
# numpy for single 3-vectors, and these loops run many times per query.


def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def _add_scaled(a, t, b):
    return (a[0] + t * b[0], a[1] + t * b[1], a[2] + t * b[2])


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _crs(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _combine(weights, points):
    x = y = z = 0.0
    for w, p in zip(weights, points):
        x += w * p[0]
        y += w * p[1]
        z += w * p[2]
    return (x, y, z)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross product of two numpy 3-vectors (much cheaper than np.cross for one pair)."""
    return np.array(_crs(a.tolist(), b.tolist()))


def _closest_segment(a, b):
    """Closest point to the origin on segment ab -> (point, indices, weights)."""
    ab = _sub(b, a)
    denom = _dot(ab, ab)
    t = -_dot(a, ab) / denom if denom > 0.0 else 0.0
    if t <= 0.0:
        return a, (0,), (1.0,)
    if t >= 1.0:
        return b, (1,), (1.0,)
    return _add_scaled(a, t, ab), (0, 1), (1.0 - t, t)


def _closest_triangle(a, b, c):
    """Closest point to the origin on triangle abc (Ericson 2005, 5.1.5) -> (point, idx, w)."""
    ab = _sub(b, a)
    ac = _sub(c, a)
    n = _crs(ab, ac)
    nn = _dot(n, n)
    if nn <= 1e-24 * _dot(ab, ab) * _dot(ac, ac) or nn == 0.0:
        best = None
        pts = (a, b, c)
        for i, j in ((0, 1), (0, 2), (1, 2)):
            p, idx, w = _closest_segment(pts[i], pts[j])
            if best is None or _dot(p, p) < _dot(best[0], best[0]):
                best = (p, tuple((i, j)[k] for k in idx), w)
        return best
    d1 = -_dot(ab, a)
    d2 = -_dot(ac, a)
    if d1 <= 0.0 and d2 <= 0.0:
        return a, (0,), (1.0,)
    d3 = -_dot(ab, b)
    d4 = -_dot(ac, b)
    if d3 >= 0.0 and d4 <= d3:
        return b, (1,), (1.0,)
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        return _add_scaled(a, v, ab), (0, 1), (1.0 - v, v)
    d5 = -_dot(ab, c)
    d6 = -_dot(ac, c)
    if d6 >= 0.0 and d5 <= d6:
        return c, (2,), (1.0,)
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        return _add_scaled(a, w, ac), (0, 2), (1.0 - w, w)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return _add_scaled(b, w, _sub(c, b)), (1, 2), (1.0 - w, w)
    denom = 1.0 / (va + vb + vc)
    v = vb * denom
    w = vc * denom
    return _add_scaled(_add_scaled(a, v, ab), w, ac), (0, 1, 2), (1.0 - v - w, v, w)


_TET_FACES = ((0, 1, 2, 3), (0, 2, 3, 1), (0, 3, 1, 2), (1, 3, 2, 0))


def _closest_tetrahedron(pts):
    """Closest point to the origin on a tetrahedron; idx of length 4 means 'inside'."""
    a, b, c, d = pts
    volume = _dot(_crs(_sub(b, a), _sub(c, a)), _sub(d, a))
    scale = max(max(abs(x) for x in p) for p in pts) + 1e-300
    degenerate = abs(volume) <= 1e-12 * scale ** 3
    best = None
    inside = True
    for i, j, k, opp in _TET_FACES:
        pi = pts[i]
        n = _crs(_sub(pts[j], pi), _sub(pts[k], pi))
        side_origin = -_dot(n, pi)
        side_opp = _dot(n, _sub(pts[opp], pi))
        if degenerate or side_origin * side_opp < 0.0:
            inside = False
            p, idx, w = _closest_triangle(pi, pts[j], pts[k])
            if best is None or _dot(p, p) < _dot(best[0], best[0]):
                best = (p, tuple((i, j, k)[m] for m in idx), w)
    if inside:
        return (0.0, 0.0, 0.0), (0, 1, 2, 3), None
    return best


class _Pair:
    """Support mapping of the Minkowski difference of two posed shape cores (tuples)."""

    __slots__ = ("fa", "Ra", "pa", "fb", "Rb", "pb")

    def __init__(self, sa: Shape, pose_a: np.ndarray, sb: Shape, pose_b: np.ndarray) -> None:
        Xa, Xb = pose_a.tolist(), pose_b.tolist()
        self.fa, self.Ra, self.pa = sa.core_support_xyz, Xa, (Xa[0][3], Xa[1][3], Xa[2][3])
        self.fb, self.Rb, self.pb = sb.core_support_xyz, Xb, (Xb[0][3], Xb[1][3], Xb[2][3])

    @staticmethod
    def _one(f, R, p, dx, dy, dz):
        r0, r1, r2 = R[0], R[1], R[2]
        sx, sy, sz = f(r0[0] * dx + r1[0] * dy + r2[0] * dz,
                       r0[1] * dx + r1[1] * dy + r2[1] * dz,
                       r0[2] * dx + r1[2] * dy + r2[2] * dz)
        return (r0[0] * sx + r0[1] * sy + r0[2] * sz + p[0],
                r1[0] * sx + r1[1] * sy + r1[2] * sz + p[1],
                r2[0] * sx + r2[1] * sy + r2[2] * sz + p[2])

    def __call__(self, d):
        """Support points of A along d and of B along -d (world tuples)."""
        a = self._one(self.fa, self.Ra, self.pa, d[0], d[1], d[2])
        b = self._one(self.fb, self.Rb, self.pb, -d[0], -d[1], -d[2])
        return a, b


def _gjk(sup: _Pair, scale: float):
    """GJK on the cores. Returns (True, dist, pa, pb, normal) or (False, W, A, B)."""
    v = _sub(sup.pa, sup.pb)
    if _dot(v, v) <= (1e-12 * scale) ** 2:
        v = (1.0, 0.0, 0.0)
    a, b = sup((-v[0], -v[1], -v[2]))
    W, A, B = [_sub(a, b)], [a], [b]
    lam = (1.0,)
    v = W[0]
    tol = 1e-11 * scale
    dup = (1e-14 * scale) ** 2
    best = (math.inf, v, A, B, lam)  # smallest duality gap seen: (gap, v, A, B, weights)
    closest = (W, A, B)  # the simplex nearest the origin so far
    for _ in range(_MAX_GJK_ITERATIONS):
        vv = _dot(v, v)
        if vv <= tol * tol:
            return False, W, A, B
        a, b = sup((-v[0], -v[1], -v[2]))
        w = _sub(a, b)
        nv = math.sqrt(vv)
        gap = (vv - _dot(v, w)) / nv  # |v| - (lower bound of the distance along v)
        if gap < best[0]:
            best = (gap, v, A, B, lam)
        if gap <= tol:
            break
        if any(_dot(_sub(w, wi), _sub(w, wi)) <= dup for wi in W):
            break
        W = W + [w]
        A = A + [a]
        B = B + [b]
        if len(W) == 2:
            p, idx, lam_new = _closest_segment(*W)
        elif len(W) == 3:
            p, idx, lam_new = _closest_triangle(*W)
        else:
            p, idx, lam_new = _closest_tetrahedron(W)
            if len(idx) == 4:
                return False, W, A, B
        if _dot(p, p) >= vv:  # no progress (rounding): answer with the best iterate
            break
        W = [W[i] for i in idx]
        A = [A[i] for i in idx]
        B = [B[i] for i in idx]
        lam = lam_new
        v = p
        closest = (W, A, B)
    gap, v, A, B, lam = best
    dist = math.sqrt(_dot(v, v))
    if gap > tol and gap >= 1e-2 * dist:
        # Not converged and the separation is poorly resolved (near touching, curved
        # shapes, where the simplex cannot fit the surface well):
        # let EPA settle it from the simplex nearest the origin.
        return (False,) + closest
    return True, dist, _combine(lam, A), _combine(lam, B), (-v[0] / dist, -v[1] / dist,
                                                            -v[2] / dist)


def _unit(a):
    n = math.sqrt(_dot(a, a))
    return (a[0] / n, a[1] / n, a[2] / n)


def _perpendicular(u):
    k = min(range(3), key=lambda i: abs(u[i]))
    e = [0.0, 0.0, 0.0]
    e[k] = 1.0
    return _unit(_crs(u, e))


_AXES = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0),
         (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, -1.0))


def _epa(sup: _Pair, W, A, B, scale: float, axes=()):
    """EPA from GJK's final simplex (origin inside or on it) -> (depth, normal, pa, pb).

    ``axes``: world axes of the cylinders and capsules involved, for the final polish.
    """
    W, A, B = list(W), list(A), list(B)
    tol = 1e-12 * scale

    def add(d):
        a, b = sup(d)
        W.append(_sub(a, b))
        A.append(a)
        B.append(b)

    def drop_last():
        W.pop()
        A.pop()
        B.pop()

    if len(W) == 1:
        for d in _AXES:
            add(d)
            r = _sub(W[-1], W[0])
            if _dot(r, r) > tol * tol:
                break
            drop_last()
    if len(W) == 2:
        u = _unit(_sub(W[1], W[0]))
        e1 = _perpendicular(u)
        e2 = _crs(u, e1)
        for m in range(6):
            ang = m * math.pi / 3.0
            add(_add_scaled(tuple(math.cos(ang) * x for x in e1), math.sin(ang), e2))
            r = _sub(W[-1], W[0])
            r = _add_scaled(r, -_dot(r, u), u)
            if _dot(r, r) > tol * tol:
                break
            drop_last()
    if len(W) == 3:
        n = _unit(_crs(_sub(W[1], W[0]), _sub(W[2], W[0])))
        add(n)
        h1 = _dot(n, _sub(W[3], W[0]))
        add((-n[0], -n[1], -n[2]))
        h2 = -_dot(n, _sub(W[4], W[0]))
        drop = 4 if h1 >= h2 else 3
        del W[drop], A[drop], B[drop]
    if len(W) != 4:
        raise RuntimeError("EPA: could not build an initial polytope (degenerate shapes)")

    centroid = _combine((0.25, 0.25, 0.25, 0.25), W)
    # faces: id -> (i, j, k, normal, distance); owner: directed edge -> face id
    faces: dict[int, tuple] = {}
    owner: dict[tuple[int, int], int] = {}
    counter = [0]

    def add_face(i, j, k, orient):
        wi = W[i]
        n = _crs(_sub(W[j], wi), _sub(W[k], wi))
        nn = math.sqrt(_dot(n, n))
        if orient and _dot(n, _sub(wi, centroid)) < 0.0:
            j, k, n = k, j, (-n[0], -n[1], -n[2])
        if nn <= 1e-30:
            n, d = (0.0, 0.0, 0.0), math.inf
        else:
            n = (n[0] / nn, n[1] / nn, n[2] / nn)
            d = _dot(n, wi)
        fid = counter[0]
        counter[0] += 1
        faces[fid] = (i, j, k, n, d)
        owner[(i, j)] = owner[(j, k)] = owner[(k, i)] = fid

    for i, j, k, _ in _TET_FACES:
        add_face(i, j, k, True)

    vis_tol = 1e-13 * scale
    # The nearest face distance d is a lower bound of the depth; the support value
    # h = n . w along a face normal n is an upper bound, and the translation h * n
    # separates the shapes whatever the state of the polytope. The answer is the face
    # with the smallest upper bound. In exact arithmetic d never decreases; if rounding
    # makes an established positive d drop, the polytope has lost convexity and the
    # search stops. (Near touching, d may start slightly negative: GJK declares overlap
    # within its tolerance, so the origin can lie just outside the first polytope.)
    kept = None
    upper = (math.inf, None, None, None)  # (h, face, support point of A, of B)
    for _ in range(_MAX_EPA_ITERATIONS):
        best = min(faces, key=lambda f: faces[f][4])
        n, d = faces[best][3], faces[best][4]
        if kept is not None and kept[4] > 1e-9 * scale and d < kept[4] - 1e-12 * scale:
            break
        kept = faces[best]
        a, b = sup(n)
        w = _sub(a, b)
        h = _dot(n, w)
        if h < upper[0]:
            upper = (h, kept, a, b)
        if upper[0] - d <= tol:
            break
        # Visible region grown from the nearest face over adjacency, so that it is
        # connected and its boundary (the horizon) is a single loop.
        visible = {best}
        hidden = set()
        horizon = []
        stack = [best]
        while stack:
            i, j, k, _, _ = faces[stack.pop()]
            for p, q in ((i, j), (j, k), (k, i)):
                g = owner.get((q, p))
                if g is None or g in visible:
                    continue
                if g not in hidden:
                    fg = faces[g]
                    if _dot(fg[3], _sub(w, W[fg[0]])) > vis_tol:
                        visible.add(g)
                        stack.append(g)
                        continue
                    hidden.add(g)
                horizon.append((p, q))
        new = len(W)
        W.append(w)
        A.append(a)
        B.append(b)
        for f in visible:
            i, j, k, _, _ = faces.pop(f)
            for e in ((i, j), (j, k), (k, i)):
                if owner.get(e) == f:
                    del owner[e]
        for p, q in horizon:
            add_face(p, q, new, False)
    h, (i, j, k, n, d), a_sup, b_sup = upper
    # Witness points: barycentric coordinates of the origin's projection d * n on the
    # face (affine, so point_a - point_b = d * n holds exactly even when rounding
    # leaves the projection marginally outside the face), then moved along n onto the
    # supporting planes of A and B, so that point_a - point_b = h * n.
    target = (d * n[0], d * n[1], d * n[2])
    lam = _barycentric(target, W[i], W[j], W[k])
    if min(lam) < -1e-9:
        # On a flat part of M several coplanar faces share the distance; take the one
        # that contains the projection (or the least outside).
        for f in faces.values():
            if abs(f[4] - d) <= 1e-9 * scale and _dot(f[3], n) >= 1.0 - 1e-9:
                lam_f = _barycentric(target, W[f[0]], W[f[1]], W[f[2]])
                if min(lam_f) > min(lam):
                    lam, (i, j, k) = lam_f, f[:3]
                    if min(lam_f) >= -1e-9:
                        break
    pa = _combine(lam, (A[i], A[j], A[k]))
    pb = _combine(lam, (B[i], B[j], B[k]))
    # Polish: a face normal on the side of a cylinder is tilted along the axis by the
    # polytope's facets; the normal with that axial part removed is often better (it is
    # exact when a whole rim circle is optimal, e.g. coaxial shapes).
    for e in axes:
        ne = _dot(n, e)
        u = _add_scaled(n, -ne, e)
        uu = _dot(u, u)
        if ne == 0.0 or uu < 0.99:
            continue
        u = _unit(u)
        a_u, b_u = sup(u)
        h_u = _dot(u, _sub(a_u, b_u))
        if h_u < h - 1e-12 * scale:
            h, n, a_sup, b_sup = h_u, u, a_u, b_u
    pa = _add_scaled(pa, _dot(n, _sub(a_sup, pa)), n)
    pb = _add_scaled(pb, _dot(n, _sub(b_sup, pb)), n)
    # pa - pb has the length h along n; any part across n (left when the polish turned n)
    # is split between the two points, which then move along the cylinders' axes.
    lat = _sub(_sub(pa, pb), tuple(h * x for x in n))
    pa = _add_scaled(pa, -0.5, lat)
    pb = _add_scaled(pb, 0.5, lat)
    return h, n, pa, pb


def _barycentric(p, a, b, c):
    """Barycentric coordinates of p (in the plane of abc) with respect to triangle abc.

    Ratios of signed areas (cross products), which stay accurate for sliver triangles
    where the Gram-determinant formula loses half the digits.
    """
    n = _crs(_sub(b, a), _sub(c, a))
    nn = _dot(n, n)
    if nn <= 1e-300:
        return (1.0, 0.0, 0.0)
    la = _dot(n, _crs(_sub(b, p), _sub(c, p))) / nn
    lb = _dot(n, _crs(_sub(c, p), _sub(a, p))) / nn
    return (la, lb, 1.0 - la - lb)


def gjk_epa(shape_a: Shape, pose_a: np.ndarray, shape_b: Shape, pose_b: np.ndarray):
    """Signed distance between two bounded convex shapes by GJK (+ EPA when overlapping).

    Parameters
    ----------
    shape_a, shape_b : Shape
        Bounded convex shapes (Sphere, Box, Cylinder, Capsule).
    pose_a, pose_b : ndarray, shape (4, 4)
        World poses of the shape frames.

    Returns
    -------
    distance : float
        Signed distance (negative: penetration depth).
    point_a, point_b : ndarray, shape (3,)
        World witness points on the surfaces, ``point_b - point_a = distance * normal``.
    normal : ndarray, shape (3,)
        Unit normal from A to B.
    """
    sup = _Pair(shape_a, pose_a, shape_b, pose_b)
    diff = _sub(sup.pa, sup.pb)
    scale = shape_a.bounding_radius + shape_b.bounding_radius + math.sqrt(_dot(diff, diff))
    res = _gjk(sup, scale)
    if res[0]:
        _, dist, pa, pb, n = res
    else:
        axes = [tuple(X[:3, 2].tolist()) for shape, X in ((shape_a, pose_a), (shape_b, pose_b))
                if isinstance(shape, (Cylinder, Capsule))]
        depth, n, pa, pb = _epa(sup, res[1], res[2], res[3], scale, axes)
        dist = -depth
    ra, rb = shape_a.core_radius, shape_b.core_radius
    if ra:
        pa = _add_scaled(pa, ra, n)
    if rb:
        pb = _add_scaled(pb, -rb, n)
    return dist - ra - rb, np.array(pa), np.array(pb), np.array(n)

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
"""
from __future__ import annotations

import math

import numpy as np

from ._geometry_shapes import Shape

__all__ = ["gjk_epa"]

_MAX_GJK_ITERATIONS = 128
_MAX_EPA_ITERATIONS = 128


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross product of two 3-vectors (much cheaper than np.cross for single vectors)."""
    a0, a1, a2 = a.tolist()
    b0, b1, b2 = b.tolist()
    return np.array((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0))


def _closest_segment(a: np.ndarray, b: np.ndarray):
    """Closest point to the origin on segment ab -> (point, indices, weights)."""
    ab = b - a
    denom = ab @ ab
    t = -(a @ ab) / denom if denom > 0.0 else 0.0
    if t <= 0.0:
        return a, (0,), (1.0,)
    if t >= 1.0:
        return b, (1,), (1.0,)
    return a + t * ab, (0, 1), (1.0 - t, t)


def _closest_triangle(a: np.ndarray, b: np.ndarray, c: np.ndarray):
    """Closest point to the origin on triangle abc (Ericson 2005, 5.1.5) -> (point, idx, w)."""
    ab = b - a
    ac = c - a
    n = _cross(ab, ac)
    nn = n @ n
    if nn <= 1e-24 * (ab @ ab) * (ac @ ac) or nn == 0.0:
        best = None
        for i, j in ((0, 1), (0, 2), (1, 2)):
            p, idx, w = _closest_segment((a, b, c)[i], (a, b, c)[j])
            if best is None or p @ p < best[0] @ best[0]:
                best = (p, tuple((i, j)[k] for k in idx), w)
        return best
    d1 = -(ab @ a)
    d2 = -(ac @ a)
    if d1 <= 0.0 and d2 <= 0.0:
        return a, (0,), (1.0,)
    d3 = -(ab @ b)
    d4 = -(ac @ b)
    if d3 >= 0.0 and d4 <= d3:
        return b, (1,), (1.0,)
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        return a + v * ab, (0, 1), (1.0 - v, v)
    d5 = -(ab @ c)
    d6 = -(ac @ c)
    if d6 >= 0.0 and d5 <= d6:
        return c, (2,), (1.0,)
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        return a + w * ac, (0, 2), (1.0 - w, w)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return b + w * (c - b), (1, 2), (1.0 - w, w)
    denom = 1.0 / (va + vb + vc)
    v = vb * denom
    w = vc * denom
    return a + v * ab + w * ac, (0, 1, 2), (1.0 - v - w, v, w)


_TET_FACES = ((0, 1, 2, 3), (0, 2, 3, 1), (0, 3, 1, 2), (1, 3, 2, 0))


def _closest_tetrahedron(pts):
    """Closest point to the origin on a tetrahedron; idx of length 4 means 'inside'."""
    a, b, c, d = pts
    volume = _cross(b - a, c - a) @ (d - a)
    scale = max(float(np.abs(p).max()) for p in pts) + 1e-300
    degenerate = abs(volume) <= 1e-12 * scale ** 3
    best = None
    inside = True
    for i, j, k, opp in _TET_FACES:
        pi = pts[i]
        n = _cross(pts[j] - pi, pts[k] - pi)
        side_origin = -(n @ pi)
        side_opp = n @ (pts[opp] - pi)
        if degenerate or side_origin * side_opp < 0.0:
            inside = False
            p, idx, w = _closest_triangle(pi, pts[j], pts[k])
            if best is None or p @ p < best[0] @ best[0]:
                best = (p, tuple((i, j, k)[m] for m in idx), w)
    if inside:
        return np.zeros(3), (0, 1, 2, 3), None
    return best


class _Pair:
    """Support mapping of the Minkowski difference of two posed shape cores."""

    __slots__ = ("sa", "Ra", "pa", "sb", "Rb", "pb")

    def __init__(self, sa: Shape, pose_a: np.ndarray, sb: Shape, pose_b: np.ndarray) -> None:
        self.sa, self.Ra, self.pa = sa, pose_a[:3, :3], pose_a[:3, 3]
        self.sb, self.Rb, self.pb = sb, pose_b[:3, :3], pose_b[:3, 3]

    def __call__(self, d: np.ndarray):
        a = self.Ra @ self.sa.core_support(d @ self.Ra) + self.pa
        b = self.Rb @ self.sb.core_support(-(d @ self.Rb)) + self.pb
        return a, b


def _gjk(sup: _Pair, scale: float):
    """GJK on the cores. Returns (True, dist, pa, pb, normal) or (False, W, A, B)."""
    v = sup.pa - sup.pb
    if v @ v <= (1e-12 * scale) ** 2:
        v = np.array([1.0, 0.0, 0.0])
    a, b = sup(-v)
    W, A, B = [a - b], [a], [b]
    lam = (1.0,)
    v = W[0]
    tol = 1e-11 * scale
    best = (math.inf, v, A, B, lam)  # smallest duality gap seen: (gap, v, A, B, weights)
    for _ in range(_MAX_GJK_ITERATIONS):
        vv = v @ v
        if vv <= tol * tol:
            return False, W, A, B
        a, b = sup(-v)
        w = a - b
        nv = math.sqrt(vv)
        gap = (vv - v @ w) / nv  # |v| - (lower bound of the distance along v)
        if gap < best[0]:
            best = (gap, v, A, B, lam)
        if gap <= tol:
            break
        if any((w - wi) @ (w - wi) <= (1e-14 * scale) ** 2 for wi in W):
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
        if p @ p >= vv:  # no progress (rounding): answer with the best iterate
            break
        W = [W[i] for i in idx]
        A = [A[i] for i in idx]
        B = [B[i] for i in idx]
        lam = lam_new
        v = p
    _, v, A, B, lam = best
    pa = sum(l * x for l, x in zip(lam, A))
    pb = sum(l * x for l, x in zip(lam, B))
    dist = math.sqrt(v @ v)
    return True, dist, pa, pb, -v / dist


def _perpendicular(u: np.ndarray) -> np.ndarray:
    k = int(np.argmin(np.abs(u)))
    e = np.zeros(3)
    e[k] = 1.0
    p = _cross(u, e)
    return p / math.sqrt(p @ p)


def _epa(sup: _Pair, W, A, B, scale: float):
    """EPA from GJK's final simplex (origin inside or on it) -> (depth, normal, pa, pb)."""
    W, A, B = list(W), list(A), list(B)
    tol = 1e-12 * scale

    def add(d):
        a, b = sup(d)
        W.append(a - b)
        A.append(a)
        B.append(b)

    if len(W) == 1:
        for d in np.vstack([np.eye(3), -np.eye(3)]):
            add(d)
            if math.sqrt((W[-1] - W[0]) @ (W[-1] - W[0])) > tol:
                break
            W.pop(), A.pop(), B.pop()
    if len(W) == 2:
        u = W[1] - W[0]
        u = u / math.sqrt(u @ u)
        e1 = _perpendicular(u)
        e2 = _cross(u, e1)
        for ang in np.arange(6) * (math.pi / 3.0):
            add(math.cos(ang) * e1 + math.sin(ang) * e2)
            r = W[-1] - W[0]
            r = r - (r @ u) * u
            if r @ r > tol * tol:
                break
            W.pop(), A.pop(), B.pop()
    if len(W) == 3:
        n = _cross(W[1] - W[0], W[2] - W[0])
        n = n / math.sqrt(n @ n)
        add(n)
        h1 = n @ (W[3] - W[0])
        add(-n)
        h2 = -(n @ (W[4] - W[0]))
        drop = 4 if h1 >= h2 else 3
        del W[drop], A[drop], B[drop]
    if len(W) != 4:
        raise RuntimeError("EPA: could not build an initial polytope (degenerate shapes)")

    centroid = (W[0] + W[1] + W[2] + W[3]) / 4.0
    # faces: id -> (i, j, k, normal, distance); owner: directed edge -> face id
    faces: dict[int, tuple] = {}
    owner: dict[tuple[int, int], int] = {}
    counter = [0]

    def add_face(i, j, k, orient):
        n = _cross(W[j] - W[i], W[k] - W[i])
        nn = math.sqrt(n @ n)
        if orient and n @ (W[i] - centroid) < 0.0:
            j, k, n = k, j, -n
        if nn <= 1e-30:
            n, d = np.zeros(3), math.inf
        else:
            n = n / nn
            d = float(n @ W[i])
        fid = counter[0]
        counter[0] += 1
        faces[fid] = (i, j, k, n, d)
        owner[(i, j)] = owner[(j, k)] = owner[(k, i)] = fid

    for i, j, k, _ in _TET_FACES:
        add_face(i, j, k, True)

    vis_tol = 1e-13 * scale
    # In exact arithmetic the nearest-face distance (a lower bound of the depth) never
    # decreases; if rounding makes it drop, the polytope has lost convexity and the
    # last good nearest face is the answer.
    # The nearest face distance d is a lower bound of the depth; the support value
    # h = n . w along a face normal n is an upper bound, and the translation h * n
    # separates the shapes. The answer is the face with the smallest upper bound.
    kept = None
    upper = (math.inf, None, None, None)  # (h, face, support point of A, of B)
    for _ in range(_MAX_EPA_ITERATIONS):
        best = min(faces, key=lambda f: faces[f][4])
        n, d = faces[best][3], faces[best][4]
        if kept is not None and d < kept[4] - 1e-12 * scale:
            break
        kept = faces[best]
        a, b = sup(n)
        w = a - b
        h = n @ w
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
                    if fg[3] @ (w - W[fg[0]]) > vis_tol:
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
    lam = _barycentric(d * n, W[i], W[j], W[k])
    if min(lam) < -1e-9:
        # On a flat part of M several coplanar faces share the distance; take the one
        # that contains the projection (or the least outside).
        best_lam = lam
        for f in faces.values():
            if abs(f[4] - d) <= 1e-9 * scale and f[3] @ n >= 1.0 - 1e-9:
                lam_f = _barycentric(d * n, W[f[0]], W[f[1]], W[f[2]])
                if min(lam_f) > min(best_lam):
                    best_lam, (i, j, k) = lam_f, f[:3]
                    if min(lam_f) >= -1e-9:
                        break
        lam = best_lam
    pa = lam[0] * A[i] + lam[1] * A[j] + lam[2] * A[k]
    pb = lam[0] * B[i] + lam[1] * B[j] + lam[2] * B[k]
    pa = pa + (n @ (a_sup - pa)) * n
    pb = pb + (n @ (b_sup - pb)) * n
    return h, n, pa, pb


def _barycentric(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray):
    """Barycentric coordinates of p (in the plane of abc) with respect to triangle abc.

    Ratios of signed areas (cross products), which stay accurate for sliver triangles
    where the Gram-determinant formula loses half the digits.
    """
    n = _cross(b - a, c - a)
    nn = n @ n
    if nn <= 1e-300:
        return (1.0, 0.0, 0.0)
    la = (n @ _cross(b - p, c - p)) / nn
    lb = (n @ _cross(c - p, a - p)) / nn
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
    diff = sup.pa - sup.pb
    scale = shape_a.bounding_radius + shape_b.bounding_radius + math.sqrt(diff @ diff)
    res = _gjk(sup, scale)
    if res[0]:
        _, dist, pa, pb, n = res
    else:
        depth, n, pa, pb = _epa(sup, res[1], res[2], res[3], scale)
        dist = -depth
    ra, rb = shape_a.core_radius, shape_b.core_radius
    if ra:
        pa = pa + ra * n
    if rb:
        pb = pb - rb * n
    return dist - ra - rb, pa, pb, n

"""The numpy narrow phase, part 1: posed shapes, support functions, halfspace manifolds,
closed forms and GJK + EPA (private part of :mod:`solvers.collision_numpy`; the C routines of
``_collision_c_prims`` and ``_collision_c_gjk``, routine for routine, on tuples of
floats)."""
from __future__ import annotations

import math

import numpy as np

from ._collision_numpy_gjk import axpy, cross, dot, epa, gjk, perpendicular, sub, unit
from ._collision_source import KINDS, MAX_CONTACTS

__all__: list[str] = []  # private module

HALFSPACE, SPHERE, BOX, CAPSULE, CYLINDER, ELLIPSOID, CONVEX = (KINDS[k][0] for k in (
    "halfspace", "sphere", "box", "capsule", "cylinder", "ellipsoid", "convex"))


class Geom:
    """A posed shape: kind, parameters (or vertices), rotation rows, origin, radii.

    ``par``: the kind's parameters (a sequence or array; convex: the (n, 3) vertices);
    ``X``: 12 numbers, the rotation row-major then the origin."""

    __slots__ = ("kind", "par", "verts", "R", "t", "core_radius", "bound")

    def __init__(self, kind, par, X):
        self.kind = kind
        if type(X) is not list:
            X = X.tolist() if isinstance(X, np.ndarray) else [float(x) for x in X]
        self.R = (X[0:3], X[3:6], X[6:9])
        self.t = (X[9], X[10], X[11])
        self.core_radius = 0.0
        self.verts = None
        if kind == CONVEX:
            self.verts = [tuple(v) for v in np.asarray(par, float).tolist()]
            self.par = ()
            self.bound = max(math.sqrt(dot(v, v)) for v in self.verts)
            return
        if type(par) is not tuple:
            par = tuple(par.tolist() if isinstance(par, np.ndarray) else par)
        p = par[:3] + (0.0, 0.0, 0.0)
        self.par = p
        if kind == SPHERE or kind == CAPSULE:
            self.core_radius = p[0]
            self.bound = p[0] if kind == SPHERE else p[1] + p[0]
        elif kind == BOX:
            self.bound = math.sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2])
        elif kind == CYLINDER:
            self.bound = math.hypot(p[0], p[1])
        elif kind == ELLIPSOID:
            self.bound = max(p)
        else:
            self.bound = 0.0

    def col(self, j):
        return (self.R[0][j], self.R[1][j], self.R[2][j])

    def local(self, d):
        (a0, a1, a2), (b0, b1, b2), (c0, c1, c2) = self.R
        x, y, z = d
        return (a0 * x + b0 * y + c0 * z, a1 * x + b1 * y + c1 * z, a2 * x + b2 * y + c2 * z)

    def rot(self, s):
        (a0, a1, a2), (b0, b1, b2), (c0, c1, c2) = self.R
        x, y, z = s
        return (a0 * x + a1 * y + a2 * z, b0 * x + b1 * y + b2 * z, c0 * x + c1 * y + c2 * z)

    def world(self, s):
        (a0, a1, a2), (b0, b1, b2), (c0, c1, c2) = self.R
        x, y, z = s
        t = self.t
        return (a0 * x + a1 * y + a2 * z + t[0], b0 * x + b1 * y + b2 * z + t[1],
                c0 * x + c1 * y + c2 * z + t[2])

    def core_support(self, d):
        k, p = self.kind, self.par
        if k == BOX:
            return tuple(p[i] if d[i] >= 0.0 else -p[i] for i in range(3))
        if k == CAPSULE:
            return (0.0, 0.0, p[1] if d[2] >= 0.0 else -p[1])
        if k == CYLINDER:
            h = p[1] if d[2] >= 0.0 else -p[1]
            rho = math.hypot(d[0], d[1])
            if rho == 0.0:
                return (0.0, 0.0, h)
            s = p[0] / rho
            return (d[0] * s, d[1] * s, h)
        if k == ELLIPSOID:
            ax, by, cz = p[0] * d[0], p[1] * d[1], p[2] * d[2]
            big = max(abs(ax), abs(by), abs(cz))
            if big == 0.0:
                return (p[0], 0.0, 0.0)
            ax, by, cz = ax / big, by / big, cz / big
            n = math.sqrt(ax * ax + by * by + cz * cz)
            return (p[0] * ax / n, p[1] * by / n, p[2] * cz / n)
        if k == CONVEX:
            best, arg = -math.inf, self.verts[0]
            for v in self.verts:
                s = dot(v, d)
                if s > best:
                    best, arg = s, v
            return arg
        return (0.0, 0.0, 0.0)

    def support(self, d):
        return self.world(self.core_support(self.local(d)))


class Sink:
    def __init__(self, cap):
        self.rows, self.cap, self.n = [], cap, 0

    def emit(self, pa, pb, n, d):
        self.n += 1
        if len(self.rows) < self.cap:
            self.rows.append((*pa, *pb, *n, d))

    def record(self, rec):
        """Append one ready record (point_a, point_b, normal, distance: 10 floats)."""
        self.n += 1
        if len(self.rows) < self.cap:
            self.rows.append(rec)


# ---------------------------------------------------------------- halfspace manifolds
def halfspace_points(H: Geom, points, radius, margin, s: Sink):
    (_, _, nx), (_, _, ny), (_, _, nz) = H.R
    ox, oy, oz = H.t
    for px, py, pz in points:
        d = nx * (px - ox) + ny * (py - oy) + nz * (pz - oz)
        if d - radius <= margin:
            s.record((px - d * nx, py - d * ny, pz - d * nz,
                      px - radius * nx, py - radius * ny, pz - radius * nz, nx, ny, nz, d - radius))


def box_corners(g: Geom):
    hx, hy, hz = g.par[0], g.par[1], g.par[2]
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = g.R
    ax = (r00 * hx, r10 * hx, r20 * hx)
    ay = (r01 * hy, r11 * hy, r21 * hy)
    az = (r02 * hz, r12 * hz, r22 * hz)
    cx, cy, cz = g.t
    return [(cx + a * ax[0] + b * ay[0] + c * az[0], cy + a * ax[1] + b * ay[1] + c * az[1],
             cz + a * ax[2] + b * ay[2] + c * az[2])
            for a in (-1.0, 1.0) for b in (-1.0, 1.0) for c in (-1.0, 1.0)]


def _halfspace_cylinder(H, g, margin, s):
    n, e = H.col(2), g.col(2)
    ne = dot(n, e)
    u = tuple(-n[i] + ne * e[i] for i in range(3))
    uu = dot(u, u)
    u = unit(u) if uu > 1e-18 else g.col(0)
    w = cross(e, u)
    r, h = g.par[0], g.par[1]
    rims = [tuple(x * r for x in v) for v in (u, w, tuple(-x for x in u), tuple(-x for x in w))]
    top, bot = axpy(g.t, h, e), axpy(g.t, -h, e)
    pts = [tuple(top[i] + m[i] for i in range(3)) for m in rims] + \
        [tuple(bot[i] + m[i] for i in range(3)) for m in rims]
    halfspace_points(H, pts, 0.0, margin, s)


def _halfspace_capsule(H, g, margin, s):
    n, e = H.col(2), g.col(2)
    ne = dot(n, e)
    if ne > 0.0:
        e, ne = tuple(-x for x in e), -ne
    r, h = g.par[0], g.par[1]
    pts = [axpy(axpy(g.t, h, e), -r, n)]
    m = tuple(n[i] - ne * e[i] for i in range(3))
    mm = dot(m, m)
    if mm > 1e-18:
        pts.append(axpy(axpy(g.t, -h, e), -r / math.sqrt(mm), m))
    halfspace_points(H, pts, 0.0, margin, s)


def _halfspace_convex_points(H, g, margin, s):
    n, o = H.col(2), H.t
    pts = [g.world(v) for v in g.verts]
    inside = [p for p in pts if dot(n, sub(p, o)) <= margin]
    room = s.cap - s.n
    if len(inside) <= room:
        halfspace_points(H, pts, 0.0, margin, s)
        return
    if room <= 0:
        s.n += len(inside)
        return
    want = min(room, MAX_CONTACTS)
    t1 = perpendicular(n)
    t2 = cross(n, t1)
    pick = []
    for m in range(want):
        if m == 0:
            key = [dot(n, sub(p, o)) for p in inside]
        else:
            ang = 2.0 * math.pi * (m - 1) / (want - 1 if want > 1 else 1)
            c, sn = math.cos(ang), math.sin(ang)
            dvec = tuple(c * t1[i] + sn * t2[i] for i in range(3))
            key = [-dot(dvec, p) for p in inside]
        arg = int(np.argmin(key))
        if arg not in pick:
            pick.append(arg)
    halfspace_points(H, [inside[k] for k in pick], 0.0, margin, s)


def halfspace_support(H, g):
    n = H.col(2)
    p = g.support((-n[0], -n[1], -n[2]))
    if g.core_radius > 0.0:
        p = axpy(p, -g.core_radius, n)
    d = dot(n, sub(p, H.t))
    return d, axpy(p, -d, n), p, n


def halfspace_manifold(H, g, margin, s):
    k = g.kind
    if k == SPHERE:
        halfspace_points(H, [g.t], g.par[0], margin, s)
    elif k == BOX:
        halfspace_points(H, box_corners(g), 0.0, margin, s)
    elif k == CYLINDER:
        _halfspace_cylinder(H, g, margin, s)
    elif k == CAPSULE:
        _halfspace_capsule(H, g, margin, s)
    elif k == CONVEX:
        _halfspace_convex_points(H, g, margin, s)
    else:
        d, pa, pb, n = halfspace_support(H, g)
        if d <= margin:
            s.emit(pa, pb, n, d)


# ---------------------------------------------------------------- closed forms
def balls(ca, ra, cb, rb, fallback):
    d = sub(cb, ca)
    length = math.sqrt(dot(d, d))
    n = (d[0] / length, d[1] / length, d[2] / length) if length > 1e-15 else fallback
    return length - ra - rb, axpy(ca, ra, n), axpy(cb, -rb, n), n


def _clamp(x, lo, hi):
    return lo if x < lo else (hi if x > hi else x)


def segments(p1, q1, p2, q2):
    """Closest points of two segments (Ericson 2005, 5.1.9)."""
    d1, d2, r = sub(q1, p1), sub(q2, p2), sub(p1, p2)
    a, e, f = dot(d1, d1), dot(d2, d2), dot(d2, r)
    if a <= 1e-30 and e <= 1e-30:
        return p1, p2
    if a <= 1e-30:
        s, t = 0.0, _clamp(f / e, 0.0, 1.0)
    else:
        c = dot(d1, r)
        if e <= 1e-30:
            t, s = 0.0, _clamp(-c / a, 0.0, 1.0)
        else:
            b = dot(d1, d2)
            den = a * e - b * b
            s = _clamp((b * f - c * e) / den, 0.0, 1.0) if den > 1e-14 * a * e else 0.0
            t = (b * s + f) / e
            if t < 0.0:
                t, s = 0.0, _clamp(-c / a, 0.0, 1.0)
            elif t > 1.0:
                t, s = 1.0, _clamp((b - c) / a, 0.0, 1.0)
    return axpy(p1, s, d1), axpy(p2, t, d2)


def _capsule_segment(g):
    e = g.col(2)
    return axpy(g.t, -g.par[1], e), axpy(g.t, g.par[1], e)


def sphere_capsule(a, b):
    p, q = _capsule_segment(b)
    d = sub(q, p)
    t = _clamp(dot(sub(a.t, p), d) / dot(d, d), 0.0, 1.0)
    return balls(a.t, a.par[0], axpy(p, t, d), b.par[0], b.col(0))


def capsule_capsule(a, b):
    ca, cb = segments(*_capsule_segment(a), *_capsule_segment(b))
    n = cross(a.col(2), b.col(2))
    nn = math.sqrt(dot(n, n))
    fallback = (n[0] / nn, n[1] / nn, n[2] / nn) if nn > 1e-9 else perpendicular(a.col(2))
    return balls(ca, a.par[0], cb, b.par[0], fallback)


def box_sphere(a, b):
    h = a.par
    p = a.local(sub(b.t, a.t))
    q = [_clamp(p[i], -h[i], h[i]) for i in range(3)]
    d = sub(p, q)
    dd = dot(d, d)
    if dd > 0.0:
        length = math.sqrt(dd)
        nl, signed = (d[0] / length, d[1] / length, d[2] / length), length
    else:
        gaps = [h[i] - abs(p[i]) for i in range(3)]
        k = gaps.index(min(gaps))
        nl = [0.0, 0.0, 0.0]
        nl[k] = 1.0 if p[k] >= 0.0 else -1.0
        q = list(p)
        q[k] = nl[k] * h[k]
        signed = -gaps[k]
    n = a.rot(nl)
    return signed - b.par[0], a.world(q), axpy(b.t, -b.par[0], n), n


def cylinder_sphere(a, b):
    p = a.local(sub(b.t, a.t))
    rho = math.hypot(p[0], p[1])
    rad = (p[0] / rho, p[1] / rho, 0.0) if rho > 1e-15 else (1.0, 0.0, 0.0)
    r, h = a.par[0], a.par[1]
    if rho > r or abs(p[2]) > h:
        m = min(rho, r)
        q = (rad[0] * m, rad[1] * m, _clamp(p[2], -h, h))
        d = sub(p, q)
        signed = math.sqrt(dot(d, d))
        nl = (d[0] / signed, d[1] / signed, d[2] / signed)
    else:
        side, cap = r - rho, h - abs(p[2])
        if side <= cap:
            q, nl, signed = (rad[0] * r, rad[1] * r, p[2]), rad, -side
        else:
            sz = 1.0 if p[2] >= 0.0 else -1.0
            q, nl, signed = (p[0], p[1], sz * h), (0.0, 0.0, sz), -cap
    n = a.rot(nl)
    return signed - b.par[0], a.world(q), axpy(b.t, -b.par[0], n), n


def gjk_epa(a: Geom, b: Geom):
    """Signed distance by GJK, EPA when the cores overlap; None when EPA cannot start."""
    def sup(d):
        return a.support(d), b.support((-d[0], -d[1], -d[2]))

    diff = sub(a.t, b.t)
    scale = a.bound + b.bound + math.sqrt(dot(diff, diff))
    res = gjk(sup, a.t, b.t, scale)
    if res[0]:
        _, dist, pa, pb, n = res
    else:
        axes = [g.col(2) for g in (a, b) if g.kind in (CYLINDER, CAPSULE)]
        out = epa(sup, res[1], res[2], res[3], scale, axes)
        if out is None:
            return None
        h, n, pa, pb = out
        dist = -h
    if a.core_radius > 0.0:
        pa = axpy(pa, a.core_radius, n)
    if b.core_radius > 0.0:
        pb = axpy(pb, -b.core_radius, n)
    return dist - a.core_radius - b.core_radius, pa, pb, n

"""The numpy narrow phase (private part of :mod:`solvers.collision`): the algorithms of the
C unit, routine for routine (``_collision_numpy_shapes``, ``_collision_numpy_gjk``,
``_collision_numpy_boxbox``; this module: the dispatch of ``_collision_source``). Used
where no C compiler is found, and by the tests as a second build of the same algorithms.
:func:`collide` and :func:`distance` take the parsed arguments of the C entry points and
write the same records."""
from __future__ import annotations

import math

import numpy as np

from ._collision_numpy_boxbox import box_box, box_box_manifold
from ._collision_numpy_shapes import (BOX, CAPSULE, CONVEX, CYLINDER, HALFSPACE, SPHERE, Geom,
                                      Sink, box_sphere, capsule_capsule, cylinder_sphere,
                                      gjk_epa, halfspace_manifold, halfspace_points,
                                      halfspace_support, sphere_capsule, balls)
from ._collision_numpy_gjk import sub
from ._collision_source import KINDS, MAX_CONTACTS

__all__: list[str] = []  # private module

_NKINDS = len(KINDS)
_RANK = {BOX: 0, CAPSULE: 1, CONVEX: 2, CYLINDER: 3, KINDS["ellipsoid"][0]: 4, SPHERE: 5}
_FLAT_TOL = 1e-6
_CLOSED = {(SPHERE, SPHERE), (SPHERE, CAPSULE), (CAPSULE, CAPSULE), (BOX, SPHERE),
           (CYLINDER, SPHERE), (BOX, BOX)}
_FACE_PAIRS = {(BOX, CYLINDER), (BOX, CAPSULE), (CAPSULE, CYLINDER), (CYLINDER, CYLINDER)}


def _flat_face(g: Geom, d):
    """(face as a Geom with z outward, axis k) of the box face / cylinder cap whose
    outward normal is d, or None."""
    c = g.local(d)
    if g.kind == BOX:
        k = 0
        if abs(c[1]) > abs(c[k]):
            k = 1
        if abs(c[2]) > abs(c[k]):
            k = 2
    elif g.kind == CYLINDER:
        k = 2
    else:
        return None
    if abs(c[k]) < 1.0 - _FLAT_TOL:
        return None
    s = 1.0 if c[k] > 0.0 else -1.0
    half = g.par[k] if g.kind == BOX else g.par[1]
    i, j = (k + 1) % 3, (k + 2) % 3
    R = g.R
    X = [0.0] * 12
    for r in range(3):
        X[3 * r], X[3 * r + 1], X[3 * r + 2] = R[r][i], s * R[r][j], s * R[r][k]
        X[9 + r] = g.t[r] + s * half * R[r][k]
    return Geom(HALFSPACE, (), X), k


def _over(g: Geom, face: Geom, k: int, p) -> bool:
    q = g.local(sub(p, face.t))
    if g.kind == BOX:
        i, j = (k + 1) % 3, (k + 2) % 3
        return abs(q[i]) <= g.par[i] * (1.0 + 1e-9) and abs(q[j]) <= g.par[j] * (1.0 + 1e-9)
    r = g.par[0] * (1.0 + 1e-9)
    return q[0] * q[0] + q[1] * q[1] <= r * r


def _face_manifold(a, b, n, margin, s: Sink):
    fa = _flat_face(a, n)
    if fa is not None:
        t = Sink(MAX_CONTACTS)
        halfspace_manifold(fa[0], b, margin, t)
        for c in t.rows:
            if _over(a, fa[0], fa[1], c[0:3]):
                s.emit(c[0:3], c[3:6], c[6:9], c[9])
    fb = _flat_face(b, (-n[0], -n[1], -n[2]))
    if fb is not None:
        t = Sink(MAX_CONTACTS)
        halfspace_manifold(fb[0], a, margin, t)
        for c in t.rows:
            if _over(b, fb[0], fb[1], c[0:3]):
                s.emit(c[3:6], c[0:3], (-c[6], -c[7], -c[8]), c[9])


def _distance(a: Geom, b: Geom):
    ka, kb = a.kind, b.kind
    if ka == HALFSPACE:
        if kb == SPHERE:
            t = Sink(1)
            halfspace_points(a, [b.t], b.par[0], math.inf, t)
            c = t.rows[0]
            return c[9], c[0:3], c[3:6], c[6:9]
        return halfspace_support(a, b)
    if (ka, kb) == (SPHERE, SPHERE):
        return balls(a.t, a.par[0], b.t, b.par[0], (0.0, 0.0, 1.0))
    if (ka, kb) == (SPHERE, CAPSULE):
        return sphere_capsule(a, b)
    if (ka, kb) == (CAPSULE, CAPSULE):
        return capsule_capsule(a, b)
    if (ka, kb) == (BOX, SPHERE):
        return box_sphere(a, b)
    if (ka, kb) == (CYLINDER, SPHERE):
        return cylinder_sphere(a, b)
    if (ka, kb) == (BOX, BOX):
        return box_box(a, b)
    return gjk_epa(a, b)


def _manifold(a, b, margin, s) -> bool:
    if a.kind == HALFSPACE:
        halfspace_manifold(a, b, margin, s)
        return True
    if a.kind == BOX and b.kind == BOX:
        return box_box_manifold(a, b, margin, s)
    r = _distance(a, b)
    if r is None:
        return False
    if r[0] > margin:
        return True
    if (a.kind, b.kind) in _FACE_PAIRS:
        before = s.n
        _face_manifold(a, b, r[3], margin, s)
        if s.n > before:
            return True
    s.emit(r[1], r[2], r[3], r[0])
    return True


def _closed(ka, kb):
    return (ka == HALFSPACE and kb != HALFSPACE) or (ka, kb) in _CLOSED


def _prepare(ka, pa, Xa, kb, pb, Xb):
    """(first, second, swapped) in canonical order, or None when refused."""
    if not (0 <= ka < _NKINDS and 0 <= kb < _NKINDS) or ka == kb == HALFSPACE:
        return None
    if _closed(ka, kb):
        swap = False
    elif _closed(kb, ka):
        swap = True
    else:
        swap = _RANK[ka] > _RANK[kb]
    if swap:
        return Geom(kb, pb, Xb), Geom(ka, pa, Xa), True
    return Geom(ka, pa, Xa), Geom(kb, pb, Xb), False


def _finish(rows, out, swap) -> int:
    for m, c in enumerate(rows):
        c = np.array(c, dtype=float)
        if swap:
            c = np.concatenate([c[3:6], c[0:3], -c[6:9], c[9:]])
        if not np.all(np.isfinite(c)):
            return -3
        out[m] = c
    return 0


def collide(ka, pa, na, Xa, kb, pb, nb, Xb, margin, out) -> int:
    """As ``dbk_collide``: contacts into ``out`` (cap x 10); their count or a status."""
    g = _prepare(ka, pa, Xa, kb, pb, Xb)
    if g is None or not margin >= 0.0:
        return -1
    s = Sink(out.shape[0])
    if not _manifold(g[0], g[1], margin, s):
        return -2
    if _finish(s.rows, out, g[2]):
        return -3
    return s.n


def distance(ka, pa, na, Xa, kb, pb, nb, Xb, out) -> int:
    """As ``dbk_signed_distance``: one record into ``out`` (10,); 0 or a status."""
    g = _prepare(ka, pa, Xa, kb, pb, Xb)
    if g is None:
        return -1
    r = _distance(g[0], g[1])
    if r is None:
        return -2
    tmp = np.zeros((1, out.shape[0]))
    status = _finish([(*r[1], *r[2], *r[3], r[0])], tmp, g[2])
    out[:] = tmp[0]
    return status

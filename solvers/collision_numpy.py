"""The numpy narrow phase: the algorithms of the compiled narrow phase of
:mod:`solvers.collision`, routine for routine, on plain floats.

One implementation serves two callers: :mod:`solvers.collision` uses it where no C compiler
is found (and its tests as a second build of the C algorithms), and ``multibody.geometry``
answers its ``signed_distance`` and ``contact_points`` with it. Shapes are plain
descriptions: a kind name (``"halfspace"``, ``"sphere"``, ``"box"``, ``"capsule"``,
``"cylinder"``, ``"ellipsoid"``, ``"convex"``) with its parameters in the order of
:data:`PARAMETERS` (convex: the (n, 3) hull vertices), each shape in its own frame as in
:mod:`solvers.collision`; a pose is 12 numbers, the rotation row-major then the origin. The
arguments are not checked here (the callers validate them once).

* closed forms: a halfspace against anything, sphere-sphere, sphere-capsule,
  capsule-capsule, sphere-box, sphere-cylinder (Ericson 2005, 5.1.9);
* box-box: separating axis test on 15 axes with incident-face clipping or edge-edge
  witnesses (Gottschalk, Lin, Manocha 1996);
* every other pair: GJK + EPA on the support functions of the shape cores (Gilbert,
  Johnson, Keerthi 1988; van den Bergen 2001, 2003), with the flat-face manifold for box,
  capsule and cylinder pairs.

Results: ``point_b - point_a = distance * normal``, the unit normal from A to B, negative
distance for penetration.
"""
from __future__ import annotations

import math

import numpy as np

from ._collision_numpy_boxbox import box_box, box_box_manifold
from ._collision_numpy_shapes import (BOX, CAPSULE, CONVEX, CYLINDER, ELLIPSOID, HALFSPACE,
                                      SPHERE, Geom, Sink, balls, box_sphere, capsule_capsule,
                                      cylinder_sphere, gjk_epa, halfspace_manifold,
                                      halfspace_points, halfspace_support, sphere_capsule)
from ._collision_numpy_gjk import sub
from ._collision_source import KINDS, MAX_CONTACTS
from .errors import CollisionQueryError

__all__ = ["PARAMETERS", "pair_distance", "pair_manifold", "pair_gjk_epa", "collide",
           "distance"]

PARAMETERS = {name: names for name, (_, names) in KINDS.items()}
"""Shape kind name -> its parameter names, in order (convex: none, the vertices instead)."""

_ID = {name: kid for name, (kid, _) in KINDS.items()}

_NKINDS = len(KINDS)
_RANK = {BOX: 0, CAPSULE: 1, CONVEX: 2, CYLINDER: 3, ELLIPSOID: 4, SPHERE: 5}
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


def _posed(kind_a, par_a, pose_a, kind_b, par_b, pose_b):
    try:
        ka, kb = _ID[kind_a], _ID[kind_b]
    except KeyError as exc:
        raise CollisionQueryError(f"numpy narrow phase: unknown shape kind {exc.args[0]!r} "
                                  f"(one of {sorted(_ID)})") from None
    g = _prepare(ka, par_a, pose_a, kb, par_b, pose_b)
    if g is None:
        raise CollisionQueryError("numpy narrow phase: halfspace-halfspace has no finite "
                                  "signed distance (two planes intersect or are parallel)")
    return g


def pair_distance(kind_a: str, par_a, pose_a, kind_b: str, par_b, pose_b):
    """Signed distance of two posed shapes with its witnesses.

    Parameters
    ----------
    kind_a, kind_b : str
        Shape kinds (module docstring), not both ``"halfspace"``.
    par_a, par_b : sequence of float, or array_like, shape (n, 3)
        The kinds' parameters (:data:`PARAMETERS`), or a convex hull's vertices.
    pose_a, pose_b : sequence of 12 float
        World poses: the rotation row-major, then the origin.

    Returns
    -------
    tuple or None
        ``(distance, point_a, point_b, normal)``, the points and the unit normal (A to B)
        as 3-tuples with ``point_b - point_a = distance * normal``; None when EPA cannot
        build its first polytope (degenerate shapes).

    Raises
    ------
    CollisionQueryError
        An unknown kind, or halfspace-halfspace.
    """
    a, b, swap = _posed(kind_a, par_a, pose_a, kind_b, par_b, pose_b)
    r = _distance(a, b)
    if r is None or not swap:
        return r
    d, pa, pb, n = r
    return d, pb, pa, (-n[0], -n[1], -n[2])


def pair_manifold(kind_a: str, par_a, pose_a, kind_b: str, par_b, pose_b, margin: float,
                  cap: int = MAX_CONTACTS):
    """Contact points of two posed shapes within ``margin`` (arguments as
    :func:`pair_distance`; ``margin >= 0``).

    Returns
    -------
    list of tuple, or None
        Up to ``cap`` records of 10 floats, as the C unit writes them: point_a, point_b,
        normal, distance (``point_b - point_a = distance * normal``): halfspace against box corners, cylinder
        rim points, capsule ends or hull vertices (reduced to ``cap``), the clipped box-box
        face polygon or one edge-edge point, the points over a box face or cylinder cap for
        box, capsule and cylinder pairs, else the single closest or deepest point. Empty
        when farther apart than ``margin``; None when EPA cannot build its first polytope.
    """
    a, b, swap = _posed(kind_a, par_a, pose_a, kind_b, par_b, pose_b)
    s = Sink(cap)
    if not _manifold(a, b, margin, s):
        return None
    if not swap:
        return s.rows
    return [(c[3], c[4], c[5], c[0], c[1], c[2], -c[6], -c[7], -c[8], c[9]) for c in s.rows]


def pair_gjk_epa(kind_a: str, par_a, pose_a, kind_b: str, par_b, pose_b):
    """Signed distance of two bounded convex shapes by GJK, and EPA when their cores
    overlap, whatever the pair (no closed form, no reordering; arguments and result as
    :func:`pair_distance`)."""
    r = gjk_epa(Geom(_ID[kind_a], par_a, pose_a), Geom(_ID[kind_b], par_b, pose_b))
    return None if r is None else (r[0], r[1], r[2], r[3])


def collide(ka, pa, na, Xa, kb, pb, nb, Xb, margin, out) -> int:
    """The C entry point ``dbk_collide`` in numpy, on the arguments parsed by
    ``solvers.collision.parse_shape`` and ``parse_pose`` (kind ids, parameter arrays,
    vertex counts, 12-number poses).

    Returns
    -------
    int
        The number of contacts written to ``out`` (``(cap, 10)`` records: point_a,
        point_b, normal, distance), or a negative status of ``solvers.collision``
        (-1 refused pair or margin, -2 EPA could not start, -3 non-finite result).
    """
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
    """The C entry point ``dbk_signed_distance`` in numpy (arguments as :func:`collide`):
    one record into ``out``, shape (10,); 0 or a negative status."""
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

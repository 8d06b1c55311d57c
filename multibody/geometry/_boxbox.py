"""Box-box: separating axis test, penetration witness points and face clipping (private).

The separating axis test on the 15 candidate axes (3 face normals of each box and the 9
cross products of their edge directions) decides overlap; for convex polyhedra the
overlapping axis of least overlap is the minimum translation (penetration) direction and
its overlap the penetration depth (Gottschalk, Lin, Manocha 1996; Ericson 2005, 4.4.1).
Separated boxes get their exact distance from GJK. Face contacts are reduced to a
polygon by clipping the incident face of one box against the side planes of the
reference face of the other (Sutherland-Hodgman; the manifold used by Box2D/ODE).
"""
from __future__ import annotations

import math

import numpy as np

from ._analytic import closest_points_segments
from ._gjk import gjk_epa
from ._shapes import Box

__all__ = ["box_box_sat", "box_face_clip", "box_box", "box_box_manifold"]

_EYE = np.eye(3)
# Corner order of a face (counter-clockwise in the (u, w) plane).
_QUAD = np.array([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]])


def box_box_sat(a: Box, pose_a: np.ndarray, b: Box, pose_b: np.ndarray):
    """Separating axis test on the 15 axes.

    Returns
    -------
    separation : float
        Largest separation over the axes (> 0: separated; <= 0: minus the penetration
        depth).
    normal : ndarray, shape (3,)
        The corresponding unit axis in the world, oriented from A to B.
    kind : str
        ``"face_a"``, ``"face_b"`` or ``"edge"``.
    index : tuple
        Face axis ``(i,)`` or edge axes ``(i, j)``.
    """
    Ra = pose_a[:3, :3]
    R = (Ra.T @ pose_b[:3, :3]).tolist()
    T = ((pose_b[:3, 3] - pose_a[:3, 3]) @ Ra).tolist()
    ha, hb = a.half.tolist(), b.half.tolist()
    absR = [[abs(x) + 1e-15 for x in row] for row in R]
    tol = 1e-9 * (a.bounding_radius + b.bounding_radius)
    best, kind, index, axis = -math.inf, "", (), (0.0, 0.0, 0.0)
    for i in range(3):  # face normals of A
        sep = abs(T[i]) - ha[i] - (hb[0] * absR[i][0] + hb[1] * absR[i][1] + hb[2] * absR[i][2])
        if sep > best:
            best, kind, index = sep, "face_a", (i,)
            axis = (float(i == 0), float(i == 1), float(i == 2))
    best_a = best
    for j in range(3):  # face normals of B
        tb = T[0] * R[0][j] + T[1] * R[1][j] + T[2] * R[2][j]
        sep = abs(tb) - hb[j] - (ha[0] * absR[0][j] + ha[1] * absR[1][j] + ha[2] * absR[2][j])
        if sep > best_a + tol and sep > best:
            best, kind, index = sep, "face_b", (j,)
            axis = (R[0][j], R[1][j], R[2][j])
    best_face = best
    for i in range(3):  # edge-edge axes A_i x B_j (Ericson 2005, 4.4.1)
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        for j in range(3):
            norm = math.sqrt(R[i1][j] ** 2 + R[i2][j] ** 2)
            if norm < 1e-6:  # parallel edges: covered by the face axes
                continue
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            ra = ha[i1] * absR[i2][j] + ha[i2] * absR[i1][j]
            rb = hb[j1] * absR[i][j2] + hb[j2] * absR[i][j1]
            tl = T[i2] * R[i1][j] - T[i1] * R[i2][j]
            sep = (abs(tl) - ra - rb) / norm
            if sep > best_face + tol and sep > best:
                best, kind, index = sep, "edge", (i, j)
                ax = [0.0, 0.0, 0.0]
                ax[i1], ax[i2] = -R[i2][j] / norm, R[i1][j] / norm
                axis = tuple(ax)
    s = 1.0 if T[0] * axis[0] + T[1] * axis[1] + T[2] * axis[2] >= 0.0 else -1.0
    return best, Ra @ np.array(axis) * s, kind, index


def _clip(poly: list, axis: int, limit: float) -> list:
    """Clip a polygon (list of [x, y, z] lists) to the slab |x[axis]| <= limit."""
    for sign in (1.0, -1.0):
        out = []
        count = len(poly)
        for m in range(count):
            p, q = poly[m], poly[(m + 1) % count]
            dp, dq = sign * p[axis] - limit, sign * q[axis] - limit
            if dp <= 0.0:
                out.append(p)
            if dp * dq < 0.0:
                t = dp / (dp - dq)
                out.append([p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1]),
                            p[2] + t * (q[2] - p[2])])
        poly = out
        if not poly:
            break
    return poly


def box_face_clip(ref: Box, pose_ref: np.ndarray, k: int, normal: np.ndarray,
                  inc: Box, pose_inc: np.ndarray):
    """Clip the incident face of ``inc`` against face ``k`` of ``ref`` whose outward normal is ``normal``.

    Returns
    -------
    list of (point, separation)
        World points on the incident face (inside the side planes of the reference face)
        and their signed separation from the reference face plane along ``normal``.
    """
    Rr, pr = pose_ref[:3, :3], pose_ref[:3, 3]
    Ri = pose_inc[:3, :3]
    dn = (normal @ Ri).tolist()
    m = max(range(3), key=lambda i: abs(dn[i]))
    t = -1.0 if dn[m] > 0.0 else 1.0
    u, w = (m + 1) % 3, (m + 2) % 3
    hi = inc.half.tolist()
    # incident face in the reference frame: centre c + (+-hu) eu + (+-hw) ew
    M = (Rr.T @ Ri).T.tolist()  # rows: incident axes in the reference frame
    o = ((pose_inc[:3, 3] - pr) @ Rr).tolist()
    c = [o[i] + t * hi[m] * M[m][i] for i in range(3)]
    eu = [hi[u] * M[u][i] for i in range(3)]
    ew = [hi[w] * M[w][i] for i in range(3)]
    poly = [[c[i] + su * eu[i] + sw * ew[i] for i in range(3)] for su, sw in _QUAD.tolist()]
    hr = ref.half.tolist()
    for axis in range(3):
        if axis != k:
            poly = _clip(poly, axis, hr[axis])
            if not poly:
                return []
    s = 1.0 if normal @ Rr[:, k] >= 0.0 else -1.0
    Q = np.array(poly)
    world = Q @ Rr.T + pr
    return [(world[i], s * q[k] - hr[k]) for i, q in enumerate(poly)]


def _face_contacts(a, pose_a, b, pose_b, kind, index, n):
    """Face-contact polygon as a list of (point_a, point_b, separation) with normal n (A to B)."""
    if kind == "face_a":
        out = []
        for p, sep in box_face_clip(a, pose_a, index[0], n, b, pose_b):
            out.append((p - sep * n, p, sep))
        return out
    out = []
    for p, sep in box_face_clip(b, pose_b, index[0], -n, a, pose_a):
        out.append((p, p + sep * n, sep))
    return out


def _edge_witness(a, pose_a, b, pose_b, index, n):
    i, j = index
    Ra, Rb = pose_a[:3, :3], pose_b[:3, :3]
    na = n @ Ra
    ca = np.where(na >= 0.0, a.half, -a.half)
    ca[i] = 0.0
    nb = -(n @ Rb)
    cb = np.where(nb >= 0.0, b.half, -b.half)
    cb[j] = 0.0
    ea = Ra[:, i] * a.half[i]
    eb = Rb[:, j] * b.half[j]
    wa = Ra @ ca + pose_a[:3, 3]
    wb = Rb @ cb + pose_b[:3, 3]
    return closest_points_segments(wa - ea, wa + ea, wb - eb, wb + eb)


def box_box(a: Box, pose_a: np.ndarray, b: Box, pose_b: np.ndarray):
    """Box-box signed distance: SAT when overlapping, GJK when separated.

    Returns ``(distance, point_a, point_b, normal)`` as the other pair functions.
    """
    sep, n, kind, index = box_box_sat(a, pose_a, b, pose_b)
    if sep > 0.0:
        return gjk_epa(a, pose_a, b, pose_b)
    if kind == "edge":
        pa, pb = _edge_witness(a, pose_a, b, pose_b, index, n)
        return sep, pa, pb, n
    contacts = _face_contacts(a, pose_a, b, pose_b, kind, index, n)
    if not contacts:  # numerically empty clip: fall back to EPA
        return gjk_epa(a, pose_a, b, pose_b)
    pa, pb, depth_sep = min(contacts, key=lambda c: c[2])
    return depth_sep, pa, pb, n


def box_box_manifold(a: Box, pose_a: np.ndarray, b: Box, pose_b: np.ndarray, margin: float):
    """Contact manifold of two boxes as a list of (point_a, point_b, distance, normal).

    Face contacts (reference face normal along the contact normal) give the clipped
    incident-face polygon, up to 8 points, keeping those within ``margin``; edge-edge
    contacts give one point.
    """
    sep, n, kind, index = box_box_sat(a, pose_a, b, pose_b)
    if sep > margin:
        return []
    if sep > 0.0:  # separated within the margin: normal from GJK, then pick a face
        dist, pa, pb, n = gjk_epa(a, pose_a, b, pose_b)
        if dist > margin:
            return []
        ca = np.abs(n @ pose_a[:3, :3])
        cb = np.abs(n @ pose_b[:3, :3])
        ia, ib = int(np.argmax(ca)), int(np.argmax(cb))
        if ca[ia] >= cb[ib] and ca[ia] > 1.0 - 1e-9:
            kind, index, n = "face_a", (ia,), np.sign(n @ pose_a[:3, ia]) * pose_a[:3, ia]
        elif cb[ib] > 1.0 - 1e-9:
            kind, index, n = "face_b", (ib,), np.sign(n @ pose_b[:3, ib]) * pose_b[:3, ib]
        else:
            return [(pa, pb, dist, n)]
    elif kind == "edge":
        pa, pb = _edge_witness(a, pose_a, b, pose_b, index, n)
        return [(pa, pb, sep, n)]
    contacts = _face_contacts(a, pose_a, b, pose_b, kind, index, n)
    points = [(pa, pb, s, n) for pa, pb, s in contacts if s <= margin]
    if not points:  # numerically empty clip: the single closest point
        dist, pa, pb, n = box_box(a, pose_a, b, pose_b)
        if dist <= margin:
            points = [(pa, pb, dist, n)]
    return points

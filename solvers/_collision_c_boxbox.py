"""C source of the compiled narrow phase, part 3: box-box (private part of
:mod:`solvers.collision`).

The separating axis test on the 15 axes (Gottschalk, Lin, Manocha 1996; Ericson 2005,
4.4.1), the incident face clipped against the side planes of the reference face
(Sutherland-Hodgman, up to 8 points) for face contacts, the closest points of the two
edges for edge-edge contacts, and GJK for boxes separated within the margin: the
algorithm of ``_collision_numpy_boxbox``, branch for branch. Needs parts 1 and 2.
"""
from __future__ import annotations

__all__: list[str] = []  # private module

SOURCE = r"""
/* ---------------------------------------------------------------- box-box */
enum { CL_FACE_A = 0, CL_FACE_B = 1, CL_EDGE = 2 };

/* separating axis test: largest separation, its world axis (A to B), kind and axes */
static double cl_box_sat(const cl_geom *a, const cl_geom *b, double *normal, int *kind,
                         int *ia, int *jb) {
    const double *Ra = a->X, *Rb = b->X, *ha = a->par, *hb = b->par;
    double R[3][3], A[3][3], T[3], w[3], axis[3] = {0.0, 0.0, 0.0};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            R[i][j] = Ra[i] * Rb[j] + Ra[3 + i] * Rb[3 + j] + Ra[6 + i] * Rb[6 + j];
            A[i][j] = fabs(R[i][j]) + 1e-15;
        }
    cl_sub(b->X + 9, a->X + 9, w);
    cl_to_local(Ra, w, T);
    double tol = 1e-9 * (a->bound + b->bound), best = -HUGE_VAL;
    for (int i = 0; i < 3; ++i) {
        double sep = fabs(T[i]) - ha[i] - (hb[0] * A[i][0] + hb[1] * A[i][1] + hb[2] * A[i][2]);
        if (sep > best) {
            best = sep; *kind = CL_FACE_A; *ia = i;
            cl_set(axis, i == 0, i == 1, i == 2);
        }
    }
    double best_a = best;
    for (int j = 0; j < 3; ++j) {
        double tb = T[0] * R[0][j] + T[1] * R[1][j] + T[2] * R[2][j];
        double sep = fabs(tb) - hb[j] - (ha[0] * A[0][j] + ha[1] * A[1][j] + ha[2] * A[2][j]);
        if (sep > best_a + tol && sep > best) {
            best = sep; *kind = CL_FACE_B; *jb = j;
            cl_set(axis, R[0][j], R[1][j], R[2][j]);
        }
    }
    double best_face = best;
    for (int i = 0; i < 3; ++i) {
        int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
        for (int j = 0; j < 3; ++j) {
            double nrm = sqrt(R[i1][j] * R[i1][j] + R[i2][j] * R[i2][j]);
            if (nrm < 1e-6) continue;          /* parallel edges: the face axes cover them */
            int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            double ra = ha[i1] * A[i2][j] + ha[i2] * A[i1][j];
            double rb = hb[j1] * A[i][j2] + hb[j2] * A[i][j1];
            double tl = T[i2] * R[i1][j] - T[i1] * R[i2][j];
            double sep = (fabs(tl) - ra - rb) / nrm;
            if (sep > best_face + tol && sep > best) {
                best = sep; *kind = CL_EDGE; *ia = i; *jb = j;
                axis[i] = 0.0; axis[i1] = -R[i2][j] / nrm; axis[i2] = R[i1][j] / nrm;
            }
        }
    }
    double s = T[0] * axis[0] + T[1] * axis[1] + T[2] * axis[2] >= 0.0 ? 1.0 : -1.0;
    cl_rot(Ra, axis, normal);
    for (int i = 0; i < 3; ++i) normal[i] *= s;
    return best;
}

/* clip the polygon P (n points, reference frame) to the slab |x[axis]| <= limit */
static int cl_clip(double (*P)[3], int n, int axis, double limit, double (*tmp)[3]) {
    for (int side = 0; side < 2 && n > 0; ++side) {
        double sg = side == 0 ? 1.0 : -1.0;
        int m = 0;
        for (int k = 0; k < n; ++k) {
            const double *p = P[k], *q = P[(k + 1) % n];
            double dp = sg * p[axis] - limit, dq = sg * q[axis] - limit;
            if (dp <= 0.0 && m < CL_MAXPOLY) { cl_copy(p, tmp[m]); ++m; }
            if (dp * dq < 0.0 && m < CL_MAXPOLY) {
                double t = dp / (dp - dq);
                cl_set(tmp[m], p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1]),
                       p[2] + t * (q[2] - p[2]));
                ++m;
            }
        }
        for (int k = 0; k < m; ++k) cl_copy(tmp[k], P[k]);
        n = m;
    }
    return n;
}

/* incident face of inc clipped to face k (outward normal `normal`) of ref: world points
   (pts, 3 per point) and separations from the reference plane; returns the count */
static int cl_box_face_clip(const cl_geom *ref, int k, const double *normal, const cl_geom *inc,
                            double *pts, double *sep) {
    static const double quad[4][2] = {{1.0, 1.0}, {-1.0, 1.0}, {-1.0, -1.0}, {1.0, -1.0}};
    const double *Rr = ref->X, *Ri = inc->X, *hi = inc->par, *hr = ref->par;
    double dn[3], M[3][3], o[3], w[3], c[3], eu[3], ew[3];
    double P[CL_MAXPOLY][3], tmp[CL_MAXPOLY][3];
    cl_to_local(Ri, normal, dn);
    int m = 0;
    if (fabs(dn[1]) > fabs(dn[m])) m = 1;
    if (fabs(dn[2]) > fabs(dn[m])) m = 2;
    double t = dn[m] > 0.0 ? -1.0 : 1.0;
    int u = (m + 1) % 3, v = (m + 2) % 3;
    for (int r = 0; r < 3; ++r)
        for (int i = 0; i < 3; ++i)
            M[r][i] = Rr[i] * Ri[r] + Rr[3 + i] * Ri[3 + r] + Rr[6 + i] * Ri[6 + r];
    cl_sub(inc->X + 9, ref->X + 9, w);
    cl_to_local(Rr, w, o);
    for (int i = 0; i < 3; ++i) {
        c[i] = o[i] + t * hi[m] * M[m][i];
        eu[i] = hi[u] * M[u][i];
        ew[i] = hi[v] * M[v][i];
    }
    for (int q = 0; q < 4; ++q)
        for (int i = 0; i < 3; ++i) P[q][i] = c[i] + quad[q][0] * eu[i] + quad[q][1] * ew[i];
    int n = 4;
    for (int axis = 0; axis < 3 && n > 0; ++axis)
        if (axis != k) n = cl_clip(P, n, axis, hr[axis], tmp);
    double kc[3];
    cl_col(Rr, k, kc);
    double s = cl_dot(normal, kc) >= 0.0 ? 1.0 : -1.0;
    for (int q = 0; q < n; ++q) {
        cl_to_world(ref->X, P[q], pts + 3 * q);
        sep[q] = s * P[q][k] - hr[k];
    }
    return n;
}

/* face contacts (point_a, point_b, separation) with normal n (A to B) */
static int cl_box_face_contacts(const cl_geom *a, const cl_geom *b, int kind, int idx,
                                const double *n, double *pa, double *pb, double *sep) {
    double pts[3 * CL_MAXPOLY], mn[3] = {-n[0], -n[1], -n[2]};
    int cnt;
    if (kind == CL_FACE_A) {
        cnt = cl_box_face_clip(a, idx, n, b, pts, sep);
        for (int q = 0; q < cnt; ++q) {
            cl_axpy(pts + 3 * q, -sep[q], n, pa + 3 * q);
            cl_copy(pts + 3 * q, pb + 3 * q);
        }
    } else {
        cnt = cl_box_face_clip(b, idx, mn, a, pts, sep);
        for (int q = 0; q < cnt; ++q) {
            cl_copy(pts + 3 * q, pa + 3 * q);
            cl_axpy(pts + 3 * q, sep[q], n, pb + 3 * q);
        }
    }
    return cnt;
}

static void cl_box_edge_witness(const cl_geom *a, const cl_geom *b, int i, int j,
                                const double *n, double *pa, double *pb) {
    const double *ha = a->par, *hb = b->par;
    double na[3], nb[3], ca[3], cb[3], ea[3], eb[3], wa[3], wb[3], mn[3] = {-n[0], -n[1], -n[2]};
    double p1[3], q1[3], p2[3], q2[3];
    cl_to_local(a->X, n, na);
    cl_to_local(b->X, mn, nb);
    for (int k = 0; k < 3; ++k) {
        ca[k] = na[k] >= 0.0 ? ha[k] : -ha[k];
        cb[k] = nb[k] >= 0.0 ? hb[k] : -hb[k];
    }
    ca[i] = 0.0; cb[j] = 0.0;
    cl_col(a->X, i, ea); cl_col(b->X, j, eb);
    for (int k = 0; k < 3; ++k) { ea[k] *= ha[i]; eb[k] *= hb[j]; }
    cl_to_world(a->X, ca, wa);
    cl_to_world(b->X, cb, wb);
    cl_sub(wa, ea, p1); cl_axpy(wa, 1.0, ea, q1);
    cl_sub(wb, eb, p2); cl_axpy(wb, 1.0, eb, q2);
    cl_segments(p1, q1, p2, q2, pa, pb);
}

static int cl_gjk_epa(const cl_geom *a, const cl_geom *b, cl_result *r, cl_work *wk);

/* box-box signed distance (_boxbox.box_box) */
static int cl_box_box(const cl_geom *a, const cl_geom *b, cl_result *r, cl_work *wk) {
    double n[3], pa[3 * CL_MAXPOLY], pb[3 * CL_MAXPOLY], sep[CL_MAXPOLY];
    int kind = CL_FACE_A, i = 0, j = 0;
    double s = cl_box_sat(a, b, n, &kind, &i, &j);
    if (s > 0.0) return cl_gjk_epa(a, b, r, wk);
    if (kind == CL_EDGE) {
        cl_box_edge_witness(a, b, i, j, n, r->pa, r->pb);
        r->d = s; cl_copy(n, r->n);
        return 0;
    }
    int cnt = cl_box_face_contacts(a, b, kind, kind == CL_FACE_A ? i : j, n, pa, pb, sep);
    if (cnt == 0) return cl_gjk_epa(a, b, r, wk);
    int m = 0;
    for (int q = 1; q < cnt; ++q) if (sep[q] < sep[m]) m = q;
    r->d = sep[m]; cl_copy(pa + 3 * m, r->pa); cl_copy(pb + 3 * m, r->pb); cl_copy(n, r->n);
    return 0;
}

/* box-box manifold (_boxbox.box_box_manifold) */
static int cl_box_box_manifold(const cl_geom *a, const cl_geom *b, double margin, cl_sink *s,
                               cl_work *wk) {
    double n[3], pa[3 * CL_MAXPOLY], pb[3 * CL_MAXPOLY], sep[CL_MAXPOLY];
    int kind = CL_FACE_A, i = 0, j = 0, idx;
    cl_result r;
    double sp = cl_box_sat(a, b, n, &kind, &i, &j);
    if (sp > margin) return 0;
    idx = kind == CL_FACE_A ? i : j;
    if (sp > 0.0) {
        if (cl_gjk_epa(a, b, &r, wk)) return -1;
        if (r.d > margin) return 0;
        double ca[3], cb[3];
        cl_to_local(a->X, r.n, ca);
        cl_to_local(b->X, r.n, cb);
        int xa = 0, xb = 0;
        for (int k = 0; k < 3; ++k) { ca[k] = fabs(ca[k]); cb[k] = fabs(cb[k]); }
        for (int k = 1; k < 3; ++k) { if (ca[k] > ca[xa]) xa = k; if (cb[k] > cb[xb]) xb = k; }
        if (ca[xa] >= cb[xb] && ca[xa] > 1.0 - 1e-9) {
            double e[3];
            cl_col(a->X, xa, e);
            double sg = cl_dot(r.n, e) > 0.0 ? 1.0 : -1.0;
            kind = CL_FACE_A; idx = xa;
            for (int k = 0; k < 3; ++k) n[k] = sg * e[k];
        } else if (cb[xb] > 1.0 - 1e-9) {
            double e[3];
            cl_col(b->X, xb, e);
            double sg = cl_dot(r.n, e) > 0.0 ? 1.0 : -1.0;
            kind = CL_FACE_B; idx = xb;
            for (int k = 0; k < 3; ++k) n[k] = sg * e[k];
        } else {
            cl_emit(s, r.pa, r.pb, r.n, r.d);
            return 0;
        }
    } else if (kind == CL_EDGE) {
        double wa[3], wb[3];
        cl_box_edge_witness(a, b, i, j, n, wa, wb);
        cl_emit(s, wa, wb, n, sp);
        return 0;
    }
    int cnt = cl_box_face_contacts(a, b, kind, idx, n, pa, pb, sep), kept = 0;
    for (int q = 0; q < cnt; ++q)
        if (sep[q] <= margin) { cl_emit(s, pa + 3 * q, pb + 3 * q, n, sep[q]); ++kept; }
    if (kept == 0) {           /* numerically empty clip: the single closest point */
        if (cl_box_box(a, b, &r, wk)) return -1;
        if (r.d <= margin) cl_emit(s, r.pa, r.pb, r.n, r.d);
    }
    return 0;
}
"""

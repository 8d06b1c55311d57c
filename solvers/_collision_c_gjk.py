"""C source of the compiled narrow phase, part 2: GJK and EPA on support functions
(private part of :mod:`solvers.collision`).

Both work on the Minkowski difference of the shapes' cores (a sphere's centre, a capsule's
axis segment, the shape itself otherwise); the radii are added back afterwards (exact:
the support function of ``K + ball(r)`` is ``h_K + r``; van den Bergen 2003, ch. 4.3).

* GJK (Gilbert, Johnson, Keerthi 1988): the simplex sub-problem by Voronoi-region tests
  (Ericson 2005, 5.1.5-5.1.6), keeping the iterate of smallest duality gap; a poorly
  resolved small separation is handed to EPA.
* EPA (van den Bergen 2001): the visible region grown from the nearest face over face
  adjacency (one horizon loop), the smallest upper bound ``h_M(n)`` reported, a final
  polish of the normal along cylinder and capsule axes.

The algorithm, thresholds and iteration limits are those of ``_collision_numpy_gjk``
(that module's docstring explains each robustness measure); the polytope lives in the
caller's work buffer (``cl_work``: fixed capacity, no allocation): faces stay where they
are made (dead ones flagged), a binary heap orders them by (distance, creation order) --
the face a scan in creation order would pick -- and a directed-edge table gives each
edge's face in O(1), left all -1 after every query. Needs part 1.
"""
from __future__ import annotations

__all__: list[str] = []  # private module

SOURCE = r"""
/* ---------------------------------------------------------------- GJK / EPA */
typedef struct { int i, j, k, alive; double n[3], d; } cl_face;

/* the caller's work buffer (dbk_collide_work_bytes; dbk_collide_work_init once) */
typedef struct {
    int ready;                   /* CL_READY once own[] is all -1 */
    int nv, nf;
    double W[CL_MAXV][3], A[CL_MAXV][3], B[CL_MAXV][3];
    cl_face F[CL_MAXF];          /* every face made, dead ones flagged (creation order) */
    int state[CL_MAXF];          /* 2 iter + 1: visible in iteration iter, 2 iter + 2: hidden */
    int stack[CL_MAXF];
    int vis[CL_MAXF];            /* the faces visible in this iteration */
    int heap[CL_MAXF], nheap;    /* faces by (distance, creation order); dead ones skipped */
    int hor[CL_MAXH][2];
    int own[CL_MAXV * CL_MAXV];  /* face holding the directed edge (p, q), or -1 */
} cl_work;

#define CL_READY 0x636f6c6c

static void cl_work_init(cl_work *wk) {
    for (int e = 0; e < CL_MAXV * CL_MAXV; ++e) wk->own[e] = -1;
    wk->ready = CL_READY;
}

typedef struct { const cl_geom *a, *b; } cl_pair;

/* support points of core A along d and of core B along -d */
static void cl_sup(const cl_pair *s, const double *d, double *a, double *b) {
    double m[3] = {-d[0], -d[1], -d[2]};
    cl_world_support(s->a, d, a);
    cl_world_support(s->b, m, b);
}

/* closest point to the origin on segment ab: point, simplex indices, weights; count */
static int cl_closest_segment(const double *a, const double *b, double *p, int *idx, double *w) {
    double ab[3];
    cl_sub(b, a, ab);
    double den = cl_dot(ab, ab), t = den > 0.0 ? -cl_dot(a, ab) / den : 0.0;
    if (t <= 0.0) { cl_copy(a, p); idx[0] = 0; w[0] = 1.0; return 1; }
    if (t >= 1.0) { cl_copy(b, p); idx[0] = 1; w[0] = 1.0; return 1; }
    cl_axpy(a, t, ab, p);
    idx[0] = 0; idx[1] = 1; w[0] = 1.0 - t; w[1] = t;
    return 2;
}

/* closest point to the origin on triangle abc (Ericson 2005, 5.1.5) */
static int cl_closest_triangle(const double *a, const double *b, const double *c, double *p,
                               int *idx, double *w) {
    double ab[3], ac[3], n[3];
    cl_sub(b, a, ab); cl_sub(c, a, ac); cl_cross(ab, ac, n);
    double nn = cl_dot(n, n);
    if (nn <= 1e-24 * cl_dot(ab, ab) * cl_dot(ac, ac) || nn == 0.0) {
        static const int pr[3][2] = {{0, 1}, {0, 2}, {1, 2}};
        const double *pts[3] = {a, b, c};
        int cnt = 0;
        double best = HUGE_VAL;
        for (int e = 0; e < 3; ++e) {
            double q[3], ww[2];
            int ii[2];
            int m = cl_closest_segment(pts[pr[e][0]], pts[pr[e][1]], q, ii, ww);
            if (e == 0 || cl_dot(q, q) < best) {
                best = cl_dot(q, q); cl_copy(q, p); cnt = m;
                for (int k = 0; k < m; ++k) { idx[k] = pr[e][ii[k]]; w[k] = ww[k]; }
            }
        }
        return cnt;
    }
    double d1 = -cl_dot(ab, a), d2 = -cl_dot(ac, a);
    if (d1 <= 0.0 && d2 <= 0.0) { cl_copy(a, p); idx[0] = 0; w[0] = 1.0; return 1; }
    double d3 = -cl_dot(ab, b), d4 = -cl_dot(ac, b);
    if (d3 >= 0.0 && d4 <= d3) { cl_copy(b, p); idx[0] = 1; w[0] = 1.0; return 1; }
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        double v = d1 / (d1 - d3);
        cl_axpy(a, v, ab, p); idx[0] = 0; idx[1] = 1; w[0] = 1.0 - v; w[1] = v;
        return 2;
    }
    double d5 = -cl_dot(ab, c), d6 = -cl_dot(ac, c);
    if (d6 >= 0.0 && d5 <= d6) { cl_copy(c, p); idx[0] = 2; w[0] = 1.0; return 1; }
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        double t = d2 / (d2 - d6);
        cl_axpy(a, t, ac, p); idx[0] = 0; idx[1] = 2; w[0] = 1.0 - t; w[1] = t;
        return 2;
    }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
        double t = (d4 - d3) / ((d4 - d3) + (d5 - d6)), bc[3];
        cl_sub(c, b, bc);
        cl_axpy(b, t, bc, p); idx[0] = 1; idx[1] = 2; w[0] = 1.0 - t; w[1] = t;
        return 2;
    }
    double den = 1.0 / (va + vb + vc), v = vb * den, t = vc * den, q[3];
    cl_axpy(a, v, ab, q); cl_axpy(q, t, ac, p);
    idx[0] = 0; idx[1] = 1; idx[2] = 2; w[0] = 1.0 - v - t; w[1] = v; w[2] = t;
    return 3;
}

static const int cl_tet[4][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {1, 3, 2, 0}};

/* closest point to the origin on a tetrahedron; returns 4 when the origin is inside */
static int cl_closest_tetrahedron(double (*P)[3], double *p, int *idx, double *w) {
    double e1[3], e2[3], e3[3], n[3];
    cl_sub(P[1], P[0], e1); cl_sub(P[2], P[0], e2); cl_sub(P[3], P[0], e3);
    cl_cross(e1, e2, n);
    double vol = cl_dot(n, e3), scale = 0.0;
    for (int m = 0; m < 4; ++m)
        for (int i = 0; i < 3; ++i) if (fabs(P[m][i]) > scale) scale = fabs(P[m][i]);
    scale += 1e-300;
    int degenerate = fabs(vol) <= 1e-12 * scale * scale * scale, inside = 1, cnt = 0;
    double best = HUGE_VAL;
    for (int f = 0; f < 4; ++f) {
        const int *t = cl_tet[f];
        const double *pi = P[t[0]];
        double u[3], v[3], o[3];
        cl_sub(P[t[1]], pi, u); cl_sub(P[t[2]], pi, v); cl_cross(u, v, n);
        cl_sub(P[t[3]], pi, o);
        double so = -cl_dot(n, pi), sp = cl_dot(n, o);
        if (degenerate || so * sp < 0.0) {
            double q[3], ww[3];
            int ii[3];
            inside = 0;
            int m = cl_closest_triangle(pi, P[t[1]], P[t[2]], q, ii, ww);
            if (cnt == 0 || cl_dot(q, q) < best) {
                best = cl_dot(q, q); cl_copy(q, p); cnt = m;
                for (int k = 0; k < m; ++k) { idx[k] = t[ii[k]]; w[k] = ww[k]; }
            }
        }
    }
    if (inside) { cl_set(p, 0.0, 0.0, 0.0); return 4; }
    return cnt;
}

/* GJK on the cores: 1 with (dist, pa, pb, n) in r, or 0 with the simplex (W, A, B, *ns)
   from which EPA starts */
static int cl_gjk(const cl_pair *s, double scale, cl_result *r, double (*W)[3],
                  double (*A)[3], double (*B)[3], int *ns) {
    double v[3], a[3], b[3], w[3], lam[4] = {1.0};
    double bestv[3], bestA[4][3], bestB[4][3], bestlam[4], bestgap = HUGE_VAL;
    double cW[4][3], cA[4][3], cB[4][3];
    int n = 1, bestn = 1, cn = 1;
    cl_sub(s->a->X + 9, s->b->X + 9, v);
    if (cl_dot(v, v) <= (1e-12 * scale) * (1e-12 * scale)) cl_set(v, 1.0, 0.0, 0.0);
    double mv[3] = {-v[0], -v[1], -v[2]};
    cl_sup(s, mv, A[0], B[0]);
    cl_sub(A[0], B[0], W[0]);
    cl_copy(W[0], v);
    double tol = 1e-11 * scale, dup = (1e-14 * scale) * (1e-14 * scale);
    cl_copy(v, bestv); cl_copy(A[0], bestA[0]); cl_copy(B[0], bestB[0]); bestlam[0] = 1.0;
    cl_copy(W[0], cW[0]); cl_copy(A[0], cA[0]); cl_copy(B[0], cB[0]);
    for (int iter = 0; iter < CL_GJK_ITERATIONS; ++iter) {
        double vv = cl_dot(v, v);
        if (vv <= tol * tol) { *ns = n; return 0; }
        cl_set(mv, -v[0], -v[1], -v[2]);
        cl_sup(s, mv, a, b);
        cl_sub(a, b, w);
        double nv = sqrt(vv), gap = (vv - cl_dot(v, w)) / nv;
        if (gap < bestgap) {
            bestgap = gap; bestn = n; cl_copy(v, bestv);
            for (int k = 0; k < n; ++k) {
                cl_copy(A[k], bestA[k]); cl_copy(B[k], bestB[k]); bestlam[k] = lam[k];
            }
        }
        if (gap <= tol) break;
        int isdup = 0;
        for (int k = 0; k < n; ++k) {
            double e[3];
            cl_sub(w, W[k], e);
            if (cl_dot(e, e) <= dup) isdup = 1;
        }
        if (isdup) break;
        cl_copy(w, W[n]); cl_copy(a, A[n]); cl_copy(b, B[n]); ++n;
        double p[3], lw[4];
        int idx[4], m;
        if (n == 2) m = cl_closest_segment(W[0], W[1], p, idx, lw);
        else if (n == 3) m = cl_closest_triangle(W[0], W[1], W[2], p, idx, lw);
        else {
            m = cl_closest_tetrahedron(W, p, idx, lw);
            if (m == 4) { *ns = 4; return 0; }
        }
        if (cl_dot(p, p) >= vv) break;       /* no progress (rounding) */
        double tW[4][3], tA[4][3], tB[4][3];
        for (int k = 0; k < m; ++k) {
            cl_copy(W[idx[k]], tW[k]); cl_copy(A[idx[k]], tA[k]); cl_copy(B[idx[k]], tB[k]);
        }
        for (int k = 0; k < m; ++k) {
            cl_copy(tW[k], W[k]); cl_copy(tA[k], A[k]); cl_copy(tB[k], B[k]); lam[k] = lw[k];
            cl_copy(tW[k], cW[k]); cl_copy(tA[k], cA[k]); cl_copy(tB[k], cB[k]);
        }
        n = m; cn = m;
        cl_copy(p, v);
    }
    double dist = sqrt(cl_dot(bestv, bestv));
    if (bestgap > tol && bestgap >= 1e-2 * dist) {
        for (int k = 0; k < cn; ++k) { cl_copy(cW[k], W[k]); cl_copy(cA[k], A[k]); cl_copy(cB[k], B[k]); }
        *ns = cn;
        return 0;
    }
    cl_set(r->pa, 0.0, 0.0, 0.0); cl_set(r->pb, 0.0, 0.0, 0.0);
    for (int k = 0; k < bestn; ++k) {
        cl_axpy(r->pa, bestlam[k], bestA[k], r->pa);
        cl_axpy(r->pb, bestlam[k], bestB[k], r->pb);
    }
    r->d = dist;
    cl_set(r->n, -bestv[0] / dist, -bestv[1] / dist, -bestv[2] / dist);
    return 1;
}

static void cl_unit(double *a) {
    double n = sqrt(cl_dot(a, a));
    a[0] /= n; a[1] /= n; a[2] /= n;
}

static void cl_epa_add(cl_work *wk, const cl_pair *s, const double *d) {
    int m = wk->nv++;
    cl_sup(s, d, wk->A[m], wk->B[m]);
    cl_sub(wk->A[m], wk->B[m], wk->W[m]);
}

/* the binary heap of faces, least (distance, creation order) on top: the nearest face as
   the first of equals in creation order, as a scan would find it */
static int cl_face_less(const cl_work *wk, int a, int b) {
    double da = wk->F[a].d, db = wk->F[b].d;
    return da < db || (da == db && a < b);
}

static void cl_heap_push(cl_work *wk, int id) {
    int c = wk->nheap++;
    while (c > 0) {
        int p = (c - 1) / 2;
        if (!cl_face_less(wk, id, wk->heap[p])) break;
        wk->heap[c] = wk->heap[p];
        c = p;
    }
    wk->heap[c] = id;
}

static void cl_heap_pop(cl_work *wk) {
    int last = wk->heap[--wk->nheap], c = 0, n = wk->nheap;
    for (;;) {
        int l = 2 * c + 1, m;
        if (l >= n) break;
        m = (l + 1 < n && cl_face_less(wk, wk->heap[l + 1], wk->heap[l])) ? l + 1 : l;
        if (!cl_face_less(wk, wk->heap[m], last)) break;
        wk->heap[c] = wk->heap[m];
        c = m;
    }
    if (n > 0) wk->heap[c] = last;
}

/* the nearest live face, dead ones dropped from the top; -1 when none */
static int cl_heap_top(cl_work *wk) {
    while (wk->nheap > 0 && !wk->F[wk->heap[0]].alive) cl_heap_pop(wk);
    return wk->nheap > 0 ? wk->heap[0] : -1;
}

static void cl_epa_add_face(cl_work *wk, int i, int j, int k, int orient, const double *centroid) {
    double u[3], v[3], n[3], o[3];
    const double *wi = wk->W[i];
    cl_sub(wk->W[j], wi, u); cl_sub(wk->W[k], wi, v); cl_cross(u, v, n);
    double nn = sqrt(cl_dot(n, n));
    if (orient) {
        cl_sub(wi, centroid, o);
        if (cl_dot(n, o) < 0.0) { int t = j; j = k; k = t; cl_set(n, -n[0], -n[1], -n[2]); }
    }
    int id = wk->nf++;
    cl_face *f = &wk->F[id];
    f->i = i; f->j = j; f->k = k; f->alive = 1;
    wk->state[id] = 0;
    wk->own[i * CL_MAXV + j] = id; wk->own[j * CL_MAXV + k] = id; wk->own[k * CL_MAXV + i] = id;
    if (nn <= 1e-30) { cl_set(f->n, 0.0, 0.0, 0.0); f->d = HUGE_VAL; }
    else { cl_set(f->n, n[0] / nn, n[1] / nn, n[2] / nn); f->d = cl_dot(f->n, wi); }
    cl_heap_push(wk, id);
}

/* drop face f and the edges it owns */
static void cl_epa_kill(cl_work *wk, int f) {
    cl_face *F = &wk->F[f];
    int e[3] = {F->i * CL_MAXV + F->j, F->j * CL_MAXV + F->k, F->k * CL_MAXV + F->i};
    F->alive = 0;
    for (int m = 0; m < 3; ++m) if (wk->own[e[m]] == f) wk->own[e[m]] = -1;
}

static void cl_barycentric(const double *p, const double *a, const double *b, const double *c,
                           double *l) {
    double u[3], v[3], n[3], x[3], y[3];
    cl_sub(b, a, u); cl_sub(c, a, v); cl_cross(u, v, n);
    double nn = cl_dot(n, n);
    if (nn <= 1e-300) { l[0] = 1.0; l[1] = 0.0; l[2] = 0.0; return; }
    cl_sub(b, p, u); cl_sub(c, p, v); cl_cross(u, v, x);
    cl_sub(c, p, u); cl_sub(a, p, v); cl_cross(u, v, y);
    l[0] = cl_dot(n, x) / nn;
    l[1] = cl_dot(n, y) / nn;
    l[2] = 1.0 - l[0] - l[1];
}

static double cl_min3(const double *l) {
    double m = l[0] < l[1] ? l[0] : l[1];
    return m < l[2] ? m : l[2];
}

/* EPA from GJK's final simplex in wk (origin inside or on it): depth h, normal n, pa, pb.
   axes: na world axes of the cylinders and capsules involved (final polish). */
static int cl_epa(const cl_pair *s, cl_work *wk, double scale, const double (*axes)[3], int na,
                  double *h_out, double *n_out, double *pa, double *pb) {
    static const double ax6[6][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1},
                                     {-1, 0, 0}, {0, -1, 0}, {0, 0, -1}};
    double tol = 1e-12 * scale, r[3];
    if (wk->nv == 1) {
        for (int m = 0; m < 6; ++m) {
            cl_epa_add(wk, s, ax6[m]);
            cl_sub(wk->W[wk->nv - 1], wk->W[0], r);
            if (cl_dot(r, r) > tol * tol) break;
            wk->nv--;
        }
    }
    if (wk->nv == 2) {
        double u[3], e1[3], e2[3], d[3];
        cl_sub(wk->W[1], wk->W[0], u); cl_unit(u);
        cl_perpendicular(u, e1);
        cl_cross(u, e1, e2);
        for (int m = 0; m < 6; ++m) {
            double ang = m * 3.14159265358979323846 / 3.0, c = cos(ang), sn = sin(ang);
            for (int i = 0; i < 3; ++i) d[i] = c * e1[i] + sn * e2[i];
            cl_epa_add(wk, s, d);
            cl_sub(wk->W[wk->nv - 1], wk->W[0], r);
            cl_axpy(r, -cl_dot(r, u), u, r);
            if (cl_dot(r, r) > tol * tol) break;
            wk->nv--;
        }
    }
    if (wk->nv == 3) {
        double u[3], v[3], n[3], mn[3], e[3];
        cl_sub(wk->W[1], wk->W[0], u); cl_sub(wk->W[2], wk->W[0], v); cl_cross(u, v, n);
        cl_unit(n);
        cl_epa_add(wk, s, n);
        cl_sub(wk->W[3], wk->W[0], e);
        double h1 = cl_dot(n, e);
        cl_set(mn, -n[0], -n[1], -n[2]);
        cl_epa_add(wk, s, mn);
        cl_sub(wk->W[4], wk->W[0], e);
        double h2 = -cl_dot(n, e);
        if (h1 < h2) {           /* drop the vertex at 3 */
            cl_copy(wk->W[4], wk->W[3]); cl_copy(wk->A[4], wk->A[3]); cl_copy(wk->B[4], wk->B[3]);
        }
        wk->nv = 4;
    }
    if (wk->nv != 4) return -1;
    double centroid[3] = {0.0, 0.0, 0.0};
    for (int m = 0; m < 4; ++m) cl_axpy(centroid, 0.25, wk->W[m], centroid);
    wk->nf = 0;
    wk->nheap = 0;
    for (int f = 0; f < 4; ++f) cl_epa_add_face(wk, cl_tet[f][0], cl_tet[f][1], cl_tet[f][2], 1, centroid);
    double vis_tol = 1e-13 * scale, uh = HUGE_VAL, ua[3] = {0, 0, 0}, ub[3] = {0, 0, 0};
    cl_face kept, up;
    int have_kept = 0;
    up = wk->F[0];
    for (int iter = 0; iter < CL_EPA_ITERATIONS; ++iter) {
        int best = cl_heap_top(wk);
        if (best < 0) break;
        double d = wk->F[best].d, n[3], a[3], b[3], w[3];
        cl_copy(wk->F[best].n, n);
        if (have_kept && kept.d > 1e-9 * scale && d < kept.d - 1e-12 * scale) break;
        kept = wk->F[best]; have_kept = 1;
        cl_sup(s, n, a, b);
        cl_sub(a, b, w);
        double h = cl_dot(n, w);
        if (h < uh) { uh = h; up = kept; cl_copy(a, ua); cl_copy(b, ub); }
        if (uh - d <= tol) break;
        if (wk->nv >= CL_MAXV) break;
        /* visible region grown from the nearest face over adjacency; its border: horizon */
        int vis = 2 * iter + 1, hid = 2 * iter + 2, top = 0, nh = 0, nvis = 0, overflow = 0;
        wk->state[best] = vis;
        wk->stack[top++] = best;
        wk->vis[nvis++] = best;
        while (top > 0) {
            const cl_face *F = &wk->F[wk->stack[--top]];
            int e[3][2] = {{F->i, F->j}, {F->j, F->k}, {F->k, F->i}};
            for (int m = 0; m < 3; ++m) {
                int p = e[m][0], q = e[m][1], g = wk->own[q * CL_MAXV + p];
                if (g < 0 || wk->state[g] == vis) continue;
                if (wk->state[g] != hid) {
                    double o[3];
                    cl_sub(w, wk->W[wk->F[g].i], o);
                    if (cl_dot(wk->F[g].n, o) > vis_tol) {
                        wk->state[g] = vis;
                        wk->stack[top++] = g;
                        wk->vis[nvis++] = g;
                        continue;
                    }
                    wk->state[g] = hid;
                }
                if (nh < CL_MAXH) { wk->hor[nh][0] = p; wk->hor[nh][1] = q; ++nh; }
                else overflow = 1;
            }
        }
        if (overflow || wk->nf + nh > CL_MAXF) break;   /* out of room: keep the bound found */
        int nw = wk->nv;
        cl_copy(w, wk->W[nw]); cl_copy(a, wk->A[nw]); cl_copy(b, wk->B[nw]); wk->nv++;
        for (int m = 0; m < nvis; ++m) cl_epa_kill(wk, wk->vis[m]);
        for (int k = 0; k < nh; ++k) cl_epa_add_face(wk, wk->hor[k][0], wk->hor[k][1], nw, 0, centroid);
    }
    double h = uh, n[3], target[3], lam[3];
    int fi = up.i, fj = up.j, fk = up.k;
    double d = up.d;
    cl_copy(up.n, n);
    for (int i = 0; i < 3; ++i) target[i] = d * n[i];
    cl_barycentric(target, wk->W[fi], wk->W[fj], wk->W[fk], lam);
    if (cl_min3(lam) < -1e-9) {    /* flat part of M: the coplanar face holding the point */
        for (int f = 0; f < wk->nf; ++f) {
            const cl_face *F = &wk->F[f];
            if (F->alive && fabs(F->d - d) <= 1e-9 * scale && cl_dot(F->n, n) >= 1.0 - 1e-9) {
                double lf[3];
                cl_barycentric(target, wk->W[F->i], wk->W[F->j], wk->W[F->k], lf);
                if (cl_min3(lf) > cl_min3(lam)) {
                    lam[0] = lf[0]; lam[1] = lf[1]; lam[2] = lf[2];
                    fi = F->i; fj = F->j; fk = F->k;
                    if (cl_min3(lf) >= -1e-9) break;
                }
            }
        }
    }
    for (int f = 0; f < wk->nf; ++f) if (wk->F[f].alive) cl_epa_kill(wk, f);  /* own[] clean */
    cl_set(pa, 0.0, 0.0, 0.0); cl_set(pb, 0.0, 0.0, 0.0);
    int ids[3] = {fi, fj, fk};
    for (int m = 0; m < 3; ++m) {
        cl_axpy(pa, lam[m], wk->A[ids[m]], pa);
        cl_axpy(pb, lam[m], wk->B[ids[m]], pb);
    }
    for (int m = 0; m < na; ++m) {      /* polish along cylinder / capsule axes */
        double ne = cl_dot(n, axes[m]), u[3], au[3], bu[3], du[3];
        cl_axpy(n, -ne, axes[m], u);
        if (ne == 0.0 || cl_dot(u, u) < 0.99) continue;
        cl_unit(u);
        cl_sup(s, u, au, bu);
        cl_sub(au, bu, du);
        double hu = cl_dot(u, du);
        if (hu < h - 1e-12 * scale) { h = hu; cl_copy(u, n); cl_copy(au, ua); cl_copy(bu, ub); }
    }
    double t1[3], t2[3], lat[3];
    cl_sub(ua, pa, t1); cl_axpy(pa, cl_dot(n, t1), n, pa);
    cl_sub(ub, pb, t2); cl_axpy(pb, cl_dot(n, t2), n, pb);
    cl_sub(pa, pb, lat);
    cl_axpy(lat, -h, n, lat);
    cl_axpy(pa, -0.5, lat, pa);
    cl_axpy(pb, 0.5, lat, pb);
    *h_out = h;
    cl_copy(n, n_out);
    return 0;
}

/* signed distance of two bounded convex shapes by GJK, EPA when the cores overlap
   (_gjk.gjk_epa); returns nonzero when EPA cannot start (degenerate shapes) */
static int cl_gjk_epa(const cl_geom *a, const cl_geom *b, cl_result *r, cl_work *wk) {
    cl_pair s = {a, b};
    double diff[3];
    cl_sub(a->X + 9, b->X + 9, diff);
    double scale = a->bound + b->bound + sqrt(cl_dot(diff, diff));
    int ns = 0;
    if (!cl_gjk(&s, scale, r, wk->W, wk->A, wk->B, &ns)) {
        double axes[2][3], h;
        int na = 0;
        if (a->kind == CL_CYLINDER || a->kind == CL_CAPSULE) cl_col(a->X, 2, axes[na++]);
        if (b->kind == CL_CYLINDER || b->kind == CL_CAPSULE) cl_col(b->X, 2, axes[na++]);
        wk->nv = ns;
        if (wk->ready != CL_READY) cl_work_init(wk);
        if (cl_epa(&s, wk, scale, (const double (*)[3])axes, na, &h, r->n, r->pa, r->pb)) return -1;
        r->d = -h;
    }
    if (a->core_radius > 0.0) cl_axpy(r->pa, a->core_radius, r->n, r->pa);
    if (b->core_radius > 0.0) cl_axpy(r->pb, -b->core_radius, r->n, r->pb);
    r->d -= a->core_radius + b->core_radius;
    return 0;
}
"""

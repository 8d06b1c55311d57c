"""C source of the compiled narrow phase, part 1: vector helpers, posed shapes, support
functions and the closed-form pairs (private part of :mod:`solvers.collision`).

Every function mirrors the numpy routine of :mod:`solvers.collision_numpy` (whose
routines ``multibody.geometry`` uses; a comment may give the name the routine had when it
lived there), branch for branch (same thresholds, same degenerate-case choices), so that the two agree
to rounding. Poses are 12 doubles: the rotation row-major (9), then the origin (3), the
layout of the contact kernel's body poses. Names are prefixed ``cl_`` (static) so that
the unit can be included in another C file.
"""
from __future__ import annotations

__all__: list[str] = []  # private module

SOURCE = r"""
/* ---------------------------------------------------------------- vectors */
static double cl_dot(const double *a, const double *b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
static void cl_cross(const double *a, const double *b, double *o) {
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
           z = a[0] * b[1] - a[1] * b[0];
    o[0] = x; o[1] = y; o[2] = z;
}
static void cl_sub(const double *a, const double *b, double *o) {
    o[0] = a[0] - b[0]; o[1] = a[1] - b[1]; o[2] = a[2] - b[2];
}
static void cl_copy(const double *a, double *o) { o[0] = a[0]; o[1] = a[1]; o[2] = a[2]; }
static void cl_set(double *o, double x, double y, double z) { o[0] = x; o[1] = y; o[2] = z; }
/* o = a + t b */
static void cl_axpy(const double *a, double t, const double *b, double *o) {
    o[0] = a[0] + t * b[0]; o[1] = a[1] + t * b[1]; o[2] = a[2] + t * b[2];
}
static double cl_clamp(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }
/* column j of a row-major rotation */
static void cl_col(const double *R, int j, double *o) { o[0] = R[j]; o[1] = R[3 + j]; o[2] = R[6 + j]; }
/* R^T d (a world direction in the shape frame) */
static void cl_to_local(const double *R, const double *d, double *o) {
    double x = R[0] * d[0] + R[3] * d[1] + R[6] * d[2];
    double y = R[1] * d[0] + R[4] * d[1] + R[7] * d[2];
    double z = R[2] * d[0] + R[5] * d[1] + R[8] * d[2];
    o[0] = x; o[1] = y; o[2] = z;
}
/* R s + p */
static void cl_to_world(const double *X, const double *s, double *o) {
    double x = X[0] * s[0] + X[1] * s[1] + X[2] * s[2] + X[9];
    double y = X[3] * s[0] + X[4] * s[1] + X[5] * s[2] + X[10];
    double z = X[6] * s[0] + X[7] * s[1] + X[8] * s[2] + X[11];
    o[0] = x; o[1] = y; o[2] = z;
}
static void cl_rot(const double *R, const double *s, double *o) {
    double x = R[0] * s[0] + R[1] * s[1] + R[2] * s[2];
    double y = R[3] * s[0] + R[4] * s[1] + R[5] * s[2];
    double z = R[6] * s[0] + R[7] * s[1] + R[8] * s[2];
    o[0] = x; o[1] = y; o[2] = z;
}

/* a unit vector perpendicular to u (_analytic._any_perpendicular) */
static void cl_perpendicular(const double *u, double *o) {
    int k = 0;
    if (fabs(u[1]) < fabs(u[k])) k = 1;
    if (fabs(u[2]) < fabs(u[k])) k = 2;
    double e[3] = {0.0, 0.0, 0.0};
    e[k] = 1.0;
    cl_cross(u, e, o);
    double l = sqrt(cl_dot(o, o));
    o[0] /= l; o[1] /= l; o[2] /= l;
}

/* ---------------------------------------------------------------- posed shapes */
typedef struct {
    int kind;            /* CL_HALFSPACE ... CL_CONVEX */
    int nv;              /* convex: vertex count */
    const double *par;   /* parameters (CL_NPAR), or the convex vertices (nv x 3) */
    const double *X;     /* pose: R row-major (9), origin (3) */
    double core_radius;  /* sphere, capsule: radius swept around the core */
    double bound;        /* radius of a ball about the origin enclosing the shape */
} cl_geom;

static void cl_geom_init(cl_geom *g, int kind, const double *par, int nv, const double *X) {
    g->kind = kind; g->par = par; g->nv = nv; g->X = X; g->core_radius = 0.0;
    switch (kind) {
    case CL_SPHERE: g->core_radius = par[0]; g->bound = par[0]; break;
    case CL_BOX: g->bound = sqrt(par[0] * par[0] + par[1] * par[1] + par[2] * par[2]); break;
    case CL_CAPSULE: g->core_radius = par[0]; g->bound = par[1] + par[0]; break;
    case CL_CYLINDER: g->bound = hypot(par[0], par[1]); break;
    case CL_ELLIPSOID: {
        double m = par[0] > par[1] ? par[0] : par[1];
        g->bound = m > par[2] ? m : par[2];
        break;
    }
    case CL_CONVEX: {
        double m = 0.0;
        for (int i = 0; i < nv; ++i) {
            double r = sqrt(cl_dot(par + 3 * i, par + 3 * i));
            if (r > m) m = r;
        }
        g->bound = m;
        break;
    }
    default: g->bound = 0.0;
    }
}

/* ellipsoid support A^2 d / |A d|, scaled against overflow (Ellipsoid.core_support_xyz) */
static void cl_ellipsoid_support(const double *r, const double *d, double *o) {
    double ax = r[0] * d[0], by = r[1] * d[1], cz = r[2] * d[2];
    double big = fabs(ax);
    if (fabs(by) > big) big = fabs(by);
    if (fabs(cz) > big) big = fabs(cz);
    if (big == 0.0) { cl_set(o, r[0], 0.0, 0.0); return; }
    ax /= big; by /= big; cz /= big;
    double n = sqrt(ax * ax + by * by + cz * cz);
    cl_set(o, r[0] * ax / n, r[1] * by / n, r[2] * cz / n);
}

/* support point of the core in the shape frame along the local direction d */
static void cl_core_support(const cl_geom *g, const double *d, double *o) {
    const double *p = g->par;
    switch (g->kind) {
    case CL_BOX:
        cl_set(o, d[0] >= 0.0 ? p[0] : -p[0], d[1] >= 0.0 ? p[1] : -p[1],
               d[2] >= 0.0 ? p[2] : -p[2]);
        return;
    case CL_CAPSULE: cl_set(o, 0.0, 0.0, d[2] >= 0.0 ? p[1] : -p[1]); return;
    case CL_CYLINDER: {
        double h = d[2] >= 0.0 ? p[1] : -p[1], rho = hypot(d[0], d[1]);
        if (rho == 0.0) { cl_set(o, 0.0, 0.0, h); return; }
        double s = p[0] / rho;
        cl_set(o, d[0] * s, d[1] * s, h);
        return;
    }
    case CL_ELLIPSOID: cl_ellipsoid_support(p, d, o); return;
    case CL_CONVEX: {
        int best = 0;
        double m = -HUGE_VAL;
        for (int i = 0; i < g->nv; ++i) {
            double s = cl_dot(p + 3 * i, d);
            if (s > m) { m = s; best = i; }
        }
        cl_copy(p + 3 * best, o);
        return;
    }
    default: cl_set(o, 0.0, 0.0, 0.0);   /* sphere: its centre */
    }
}

/* world support point of the core along the world direction d */
static void cl_world_support(const cl_geom *g, const double *d, double *o) {
    double l[3], s[3];
    cl_to_local(g->X, d, l);
    cl_core_support(g, l, s);
    cl_to_world(g->X, s, o);
}

/* ---------------------------------------------------------------- contact output */
typedef struct {
    double *out;   /* CL_STRIDE doubles per contact: point_a, point_b, normal, distance */
    int n, cap;
} cl_sink;

static void cl_emit(cl_sink *s, const double *pa, const double *pb, const double *n, double d) {
    if (s->n >= s->cap) { s->n++; return; }     /* counted, not written: caller checks */
    double *o = s->out + CL_STRIDE * s->n++;
    cl_copy(pa, o); cl_copy(pb, o + 3); cl_copy(n, o + 6); o[9] = d;
}

/* single-point result (d, pa, pb, n) emitted when d <= margin */
typedef struct { double d, pa[3], pb[3], n[3]; } cl_result;

/* ---------------------------------------------------------------- halfspace manifolds */
/* balls of radius r at world points P (np of them) against the halfspace of pose Xa
   (_contacts._halfspace_points) */
static void cl_halfspace_points(const double *Xa, const double *P, int np, double radius,
                                double margin, cl_sink *s) {
    double n[3] = {Xa[2], Xa[5], Xa[8]};
    for (int k = 0; k < np; ++k) {
        const double *p = P + 3 * k;
        double d = n[0] * (p[0] - Xa[9]) + n[1] * (p[1] - Xa[10]) + n[2] * (p[2] - Xa[11]);
        double dist = d - radius;
        if (dist <= margin) {
            double pa[3], pb[3];
            cl_axpy(p, -d, n, pa);
            cl_axpy(p, -radius, n, pb);
            cl_emit(s, pa, pb, n, dist);
        }
    }
}

/* the 8 corners, x slowest (_contacts._box_corners) */
static void cl_box_corners(const double *h, const double *X, double *P) {
    double ax[3], ay[3], az[3];
    for (int i = 0; i < 3; ++i) {
        ax[i] = X[3 * i] * h[0]; ay[i] = X[3 * i + 1] * h[1]; az[i] = X[3 * i + 2] * h[2];
    }
    int m = 0;
    for (int a = -1; a <= 1; a += 2)
        for (int b = -1; b <= 1; b += 2)
            for (int c = -1; c <= 1; c += 2, ++m)
                for (int i = 0; i < 3; ++i)
                    P[3 * m + i] = X[9 + i] + a * ax[i] + b * ay[i] + c * az[i];
}

/* four rim points 90 degrees apart on each cap, from the deepest (_halfspace_cylinder) */
static void cl_halfspace_cylinder(const double *Xa, const double *par, const double *Xb,
                                  double margin, cl_sink *s) {
    double n[3], e[3], u[3], w[3], P[24];
    cl_col(Xa, 2, n); cl_col(Xb, 2, e);
    double ne = cl_dot(n, e);
    for (int i = 0; i < 3; ++i) u[i] = -n[i] + ne * e[i];
    double uu = cl_dot(u, u);
    if (uu > 1e-18) { double l = sqrt(uu); for (int i = 0; i < 3; ++i) u[i] /= l; }
    else cl_col(Xb, 0, u);
    cl_cross(e, u, w);
    double r = par[0], h = par[1];
    for (int i = 0; i < 3; ++i) {
        double top = Xb[9 + i] + h * e[i], bot = Xb[9 + i] - h * e[i];
        double rim[4] = {u[i] * r, w[i] * r, -u[i] * r, -w[i] * r};
        for (int k = 0; k < 4; ++k) { P[3 * k + i] = top + rim[k]; P[12 + 3 * k + i] = bot + rim[k]; }
    }
    cl_halfspace_points(Xa, P, 8, 0.0, margin, s);
}

/* the deepest point of the lower cap sphere and the upper end's point on the lowest line
   of the side (_halfspace_capsule) */
static void cl_halfspace_capsule(const double *Xa, const double *par, const double *Xb,
                                 double margin, cl_sink *s) {
    double n[3], e[3], P[6], m[3];
    cl_col(Xa, 2, n); cl_col(Xb, 2, e);
    double ne = cl_dot(n, e);
    if (ne > 0.0) { for (int i = 0; i < 3; ++i) e[i] = -e[i]; ne = -ne; }
    double r = par[0], h = par[1];
    int np = 1;
    for (int i = 0; i < 3; ++i) {
        double low = Xb[9 + i] + h * e[i];
        P[i] = low - r * n[i];
        m[i] = n[i] - ne * e[i];
    }
    double mm = cl_dot(m, m);
    if (mm > 1e-18) {
        double f = r / sqrt(mm);
        for (int i = 0; i < 3; ++i) P[3 + i] = (Xb[9 + i] - h * e[i]) - f * m[i];
        np = 2;
    }
    cl_halfspace_points(Xa, P, np, 0.0, margin, s);
}

/* vertices of a convex hull within the margin; more than the room left (or than
   CL_MAX_CONTACTS): the deepest vertex, then the vertices extreme along directions evenly
   spread in the plane (the support polygon of a resting hull) */
static void cl_halfspace_convex_points(const double *Xa, const cl_geom *g, double margin,
                                       cl_sink *s) {
    double n[3] = {Xa[2], Xa[5], Xa[8]}, p[3];
    int cnt = 0, room = s->cap - s->n;
    for (int k = 0; k < g->nv; ++k) {
        cl_to_world(g->X, g->par + 3 * k, p);
        if (n[0] * (p[0] - Xa[9]) + n[1] * (p[1] - Xa[10]) + n[2] * (p[2] - Xa[11]) <= margin) cnt++;
    }
    if (cnt <= room) {
        for (int k = 0; k < g->nv; ++k) {
            cl_to_world(g->X, g->par + 3 * k, p);
            cl_halfspace_points(Xa, p, 1, 0.0, margin, s);
        }
        return;
    }
    if (room <= 0) { s->n += cnt; return; }
    int want = room < CL_MAX_CONTACTS ? room : CL_MAX_CONTACTS, pick[CL_MAX_CONTACTS], np = 0;
    double t1[3], t2[3];
    cl_perpendicular(n, t1);
    cl_cross(n, t1, t2);
    for (int m = 0; m < want; ++m) {
        double dir[3], best = HUGE_VAL;
        int arg = -1;
        if (m > 0) {
            double ang = 2.0 * 3.14159265358979323846 * (m - 1) / (want > 1 ? want - 1 : 1);
            for (int i = 0; i < 3; ++i) dir[i] = cos(ang) * t1[i] + sin(ang) * t2[i];
        } else cl_copy(n, dir);                       /* the deepest: least along n */
        for (int k = 0; k < g->nv; ++k) {
            cl_to_world(g->X, g->par + 3 * k, p);
            double w[3];
            cl_sub(p, Xa + 9, w);
            if (cl_dot(n, w) > margin) continue;
            double v = m > 0 ? -cl_dot(dir, p) : cl_dot(dir, w);
            if (v < best) { best = v; arg = k; }
        }
        int seen = 0;
        for (int j = 0; j < np; ++j) seen |= pick[j] == arg;
        if (arg >= 0 && !seen) pick[np++] = arg;
    }
    for (int j = 0; j < np; ++j) {
        cl_to_world(g->X, g->par + 3 * pick[j], p);
        cl_halfspace_points(Xa, p, 1, 0.0, margin, s);
    }
}

/* deepest support point along -n (_analytic.halfspace_convex; the sphere: halfspace_sphere) */
static void cl_halfspace_support(const double *Xa, const cl_geom *g, cl_result *r) {
    double n[3] = {Xa[2], Xa[5], Xa[8]}, m[3] = {-n[0], -n[1], -n[2]}, p[3];
    cl_world_support(g, m, p);
    if (g->core_radius > 0.0) cl_axpy(p, -g->core_radius, n, p);
    double d = n[0] * (p[0] - Xa[9]) + n[1] * (p[1] - Xa[10]) + n[2] * (p[2] - Xa[11]);
    r->d = d;
    cl_axpy(p, -d, n, r->pa);
    cl_copy(p, r->pb);
    cl_copy(n, r->n);
}

/* ---------------------------------------------------------------- closed forms */
/* two balls (_analytic._balls) */
static void cl_balls(const double *ca, double ra, const double *cb, double rb,
                     const double *fallback, cl_result *r) {
    double d[3];
    cl_sub(cb, ca, d);
    double len = sqrt(cl_dot(d, d));
    if (len > 1e-15) cl_set(r->n, d[0] / len, d[1] / len, d[2] / len);
    else cl_copy(fallback, r->n);
    r->d = len - ra - rb;
    cl_axpy(ca, ra, r->n, r->pa);
    cl_axpy(cb, -rb, r->n, r->pb);
}

/* closest points of segments [p1, q1], [p2, q2] (_analytic.closest_points_segments) */
static void cl_segments(const double *p1, const double *q1, const double *p2, const double *q2,
                        double *c1, double *c2) {
    double d1[3], d2[3], r[3], s, t;
    cl_sub(q1, p1, d1); cl_sub(q2, p2, d2); cl_sub(p1, p2, r);
    double a = cl_dot(d1, d1), e = cl_dot(d2, d2), f = cl_dot(d2, r);
    if (a <= 1e-30 && e <= 1e-30) { cl_copy(p1, c1); cl_copy(p2, c2); return; }
    if (a <= 1e-30) { s = 0.0; t = cl_clamp(f / e, 0.0, 1.0); }
    else {
        double c = cl_dot(d1, r);
        if (e <= 1e-30) { t = 0.0; s = cl_clamp(-c / a, 0.0, 1.0); }
        else {
            double b = cl_dot(d1, d2), den = a * e - b * b;
            s = den > 1e-14 * a * e ? cl_clamp((b * f - c * e) / den, 0.0, 1.0) : 0.0;
            t = (b * s + f) / e;
            if (t < 0.0) { t = 0.0; s = cl_clamp(-c / a, 0.0, 1.0); }
            else if (t > 1.0) { t = 1.0; s = cl_clamp((b - c) / a, 0.0, 1.0); }
        }
    }
    cl_axpy(p1, s, d1, c1);
    cl_axpy(p2, t, d2, c2);
}

static void cl_capsule_segment(const double *par, const double *X, double *p, double *q) {
    for (int i = 0; i < 3; ++i) {
        double ax = X[3 * i + 2] * par[1];
        p[i] = X[9 + i] - ax; q[i] = X[9 + i] + ax;
    }
}

static void cl_sphere_sphere(const cl_geom *a, const cl_geom *b, cl_result *r) {
    static const double ez[3] = {0.0, 0.0, 1.0};
    cl_balls(a->X + 9, a->par[0], b->X + 9, b->par[0], ez, r);
}

static void cl_sphere_capsule(const cl_geom *a, const cl_geom *b, cl_result *r) {
    double p[3], q[3], d[3], cp[3], c[3], x0[3];
    cl_capsule_segment(b->par, b->X, p, q);
    cl_sub(q, p, d);
    cl_sub(a->X + 9, p, cp);
    double t = cl_clamp(cl_dot(cp, d) / cl_dot(d, d), 0.0, 1.0);
    cl_axpy(p, t, d, c);
    cl_col(b->X, 0, x0);
    cl_balls(a->X + 9, a->par[0], c, b->par[0], x0, r);
}

static void cl_capsule_capsule(const cl_geom *a, const cl_geom *b, cl_result *r) {
    double pa[3], qa[3], pb[3], qb[3], ca[3], cb[3], ea[3], eb[3], n[3];
    cl_capsule_segment(a->par, a->X, pa, qa);
    cl_capsule_segment(b->par, b->X, pb, qb);
    cl_segments(pa, qa, pb, qb, ca, cb);
    cl_col(a->X, 2, ea); cl_col(b->X, 2, eb);
    cl_cross(ea, eb, n);
    double nn = sqrt(cl_dot(n, n));
    if (nn > 1e-9) { n[0] /= nn; n[1] /= nn; n[2] /= nn; }
    else cl_perpendicular(ea, n);
    cl_balls(ca, a->par[0], cb, b->par[0], n, r);
}

/* box (A) - sphere (B): closest point of the box to the centre (_analytic.box_sphere) */
static void cl_box_sphere(const cl_geom *a, const cl_geom *b, cl_result *r) {
    const double *h = a->par, *c = b->X + 9;
    double w[3], p[3], q[3], d[3], nl[3] = {0.0, 0.0, 0.0}, signed_d;
    cl_sub(c, a->X + 9, w);
    cl_to_local(a->X, w, p);
    for (int i = 0; i < 3; ++i) q[i] = cl_clamp(p[i], -h[i], h[i]);
    cl_sub(p, q, d);
    double dd = cl_dot(d, d);
    if (dd > 0.0) {
        double l = sqrt(dd);
        cl_set(nl, d[0] / l, d[1] / l, d[2] / l);
        signed_d = l;
    } else {
        int k = 0;
        double g[3];
        for (int i = 0; i < 3; ++i) g[i] = h[i] - fabs(p[i]);
        if (g[1] < g[k]) k = 1;
        if (g[2] < g[k]) k = 2;
        nl[k] = p[k] >= 0.0 ? 1.0 : -1.0;
        cl_copy(p, q);
        q[k] = nl[k] * h[k];
        signed_d = -g[k];
    }
    double rad = b->par[0];
    cl_rot(a->X, nl, r->n);
    cl_to_world(a->X, q, r->pa);
    cl_axpy(c, -rad, r->n, r->pb);
    r->d = signed_d - rad;
}

/* cylinder (A) - sphere (B) (_analytic.cylinder_sphere) */
static void cl_cylinder_sphere(const cl_geom *a, const cl_geom *b, cl_result *r) {
    const double *c = b->X + 9;
    double w[3], p[3], q[3], nl[3], rad[3] = {1.0, 0.0, 0.0}, signed_d;
    cl_sub(c, a->X + 9, w);
    cl_to_local(a->X, w, p);
    double rho = hypot(p[0], p[1]), cr = a->par[0], h = a->par[1];
    if (rho > 1e-15) cl_set(rad, p[0] / rho, p[1] / rho, 0.0);
    if (rho > cr || fabs(p[2]) > h) {
        double m = rho < cr ? rho : cr, d[3];
        cl_set(q, rad[0] * m, rad[1] * m, cl_clamp(p[2], -h, h));
        cl_sub(p, q, d);
        signed_d = sqrt(cl_dot(d, d));
        cl_set(nl, d[0] / signed_d, d[1] / signed_d, d[2] / signed_d);
    } else {
        double side = cr - rho, cap = h - fabs(p[2]);
        if (side <= cap) {
            cl_set(q, rad[0] * cr, rad[1] * cr, p[2]);
            cl_copy(rad, nl);
            signed_d = -side;
        } else {
            double sz = p[2] >= 0.0 ? 1.0 : -1.0;
            cl_set(q, p[0], p[1], sz * h);
            cl_set(nl, 0.0, 0.0, sz);
            signed_d = -cap;
        }
    }
    cl_rot(a->X, nl, r->n);
    cl_to_world(a->X, q, r->pa);
    cl_axpy(c, -b->par[0], r->n, r->pb);
    r->d = signed_d - b->par[0];
}
"""

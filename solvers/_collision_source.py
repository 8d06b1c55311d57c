"""The compiled narrow phase as C source, generated from one Python description of its
layout (private part of :mod:`solvers.collision`).

The shape kinds, their parameters, the contact record and the capacities are declared
here once (:data:`KINDS`, :data:`CONTACT_FIELDS`, :data:`CAPACITY`); :func:`generate`
writes them into the C unit as ``#define``s and joins the pair families
(``_collision_c_prims``: helpers, support functions, closed forms and halfspace
manifolds; ``_collision_c_gjk``: GJK/EPA; ``_collision_c_boxbox``: box-box) and the
dispatch below. Pure C99, ``math.h`` only, no allocation (outputs and the work buffer are
the caller's), every internal name ``static`` and prefixed ``cl_``: the contact kernel can
include the same text.

Entry points::

    int dbk_collide(int kind_a, const double *par_a, int nv_a, const double *X_a,
                    int kind_b, const double *par_b, int nv_b, const double *X_b,
                    double margin, double *out, int cap, void *work);
    int dbk_signed_distance(<the same shapes>, double *out, void *work);
    int dbk_collide_pairs(int npairs, const int *kinds, const double *const *par,
                          const int *nv, const double *X, double margin, double *out,
                          int cap, int *count, void *work);
    int dbk_collide_work_bytes(void);
    void dbk_collide_work_init(void *work);  /* once, before a work buffer's first use */
    int dbk_collide_layout(int *out);      /* the constants below, for a check at load */

``par`` holds the kind's parameters (:data:`KINDS`), or for a convex hull its vertices
(``nv`` x 3, shape frame, row-major); ``X`` is a pose: rotation row-major (9), then origin
(3). ``dbk_collide`` writes up to ``cap`` contacts of :data:`CONTACT_DOUBLES` doubles
(point on A, point on B, unit normal from A to B, signed distance) and returns how many
it found (more than ``cap`` only from a pair other than halfspace-convex, whose vertices
are reduced to ``cap``; ``cap >= MAX_CONTACTS`` always suffices), or a negative status
(:data:`STATUS`). ``dbk_signed_distance`` writes one such record. ``work`` is a buffer of
``dbk_collide_work_bytes()`` bytes (about 230 kB: the EPA polytope, its faces in a heap by
distance and a directed-edge table), initialised once by ``dbk_collide_work_init`` and
reused by every query of one thread.
"""
from __future__ import annotations

import hashlib

from ._collision_c_boxbox import SOURCE as _BOXBOX
from ._collision_c_gjk import SOURCE as _GJK
from ._collision_c_prims import SOURCE as _PRIMS

__all__: list[str] = []  # private module

VERSION = 2
"""Bumped with any change of the generated code's behaviour."""

KINDS = {
    # name: (id, parameter names)
    "halfspace": (0, ()),
    "sphere": (1, ("radius",)),
    "box": (2, ("half_x", "half_y", "half_z")),
    "capsule": (3, ("radius", "half_length")),
    "cylinder": (4, ("radius", "half_length")),
    "ellipsoid": (5, ("a", "b", "c")),
    "convex": (6, ()),          # vertices instead of parameters
}
"""Shape kinds: C id and parameters (each shape in its own frame: the halfspace ``z <= 0``;
capsule and cylinder axes along z)."""

NPAR = 3
"""Parameter slots per shape (unused ones ignored)."""

CONTACT_FIELDS = (("point_a", 3), ("point_b", 3), ("normal", 3), ("distance", 1))
"""One contact record (doubles, in this order)."""

CONTACT_DOUBLES = sum(n for _, n in CONTACT_FIELDS)

MAX_CONTACTS = 16
"""Most contacts of any pair (a box or cylinder against a cylinder cap: 8 + 8)."""

CAPACITY = {
    "MAXV": 144,           # EPA polytope vertices (4 + the iteration limit + slack)
    "MAXF": 2048,          # EPA faces made in one query (dead ones are kept)
    "MAXH": 1024,          # EPA horizon edges of one expansion
    "MAXPOLY": 16,         # clipped box face polygon
    "GJK_ITERATIONS": 128,
    "EPA_ITERATIONS": 128,
}

STATUS = {-1: "unsupported pair or malformed shape", -2: "EPA could not start (degenerate shape)",
          -3: "non-finite result"}

# canonical order of the pairs, as multibody.geometry dispatches them: a closed-form pair
# in its table order, else the order of the shape class names (Box < Capsule < Convex <
# Cylinder < Ellipsoid < Sphere), so that swapping the arguments mirrors the result exactly
_RANK = {"box": 0, "capsule": 1, "convex": 2, "cylinder": 3, "ellipsoid": 4, "sphere": 5,
         "halfspace": -1}

_DISPATCH = r"""
/* ---------------------------------------------------------------- flat faces */
/* the face of g (box face, cylinder cap) whose outward normal is dir within CL_FLAT_TOL:
   its pose F with z outward; returns its axis k + 1, or 0 (_contacts._flat_face) */
static int cl_flat_face(const cl_geom *g, const double *dir, double *F) {
    const double *R = g->X;
    double c[3];
    int k;
    cl_to_local(R, dir, c);
    if (g->kind == CL_BOX) {
        k = 0;
        if (fabs(c[1]) > fabs(c[k])) k = 1;
        if (fabs(c[2]) > fabs(c[k])) k = 2;
    } else if (g->kind == CL_CYLINDER) k = 2;
    else return 0;
    if (fabs(c[k]) < 1.0 - CL_FLAT_TOL) return 0;
    double s = c[k] > 0.0 ? 1.0 : -1.0, half = g->kind == CL_BOX ? g->par[k] : g->par[1];
    int i = (k + 1) % 3, j = (k + 2) % 3;
    for (int r = 0; r < 3; ++r) {
        F[3 * r] = R[3 * r + i]; F[3 * r + 1] = s * R[3 * r + j]; F[3 * r + 2] = s * R[3 * r + k];
        F[9 + r] = g->X[9 + r] + s * half * R[3 * r + k];
    }
    return k + 1;
}

/* is the point p over that face */
static int cl_over(const cl_geom *g, const double *F, int k, const double *p) {
    double w[3], q[3];
    cl_sub(p, F + 9, w);
    cl_to_local(g->X, w, q);
    if (g->kind == CL_BOX) {
        int i = (k + 1) % 3, j = (k + 2) % 3;
        return fabs(q[i]) <= g->par[i] * (1.0 + 1e-9) && fabs(q[j]) <= g->par[j] * (1.0 + 1e-9);
    }
    double r = g->par[0] * (1.0 + 1e-9);
    return q[0] * q[0] + q[1] * q[1] <= r * r;
}

/* ---------------------------------------------------------------- manifolds */
/* a shape against the halfspace of pose Xh (_contacts._manifold, halfspace branch) */
static void cl_halfspace_manifold(const double *Xh, const cl_geom *g, double margin, cl_sink *s) {
    switch (g->kind) {
    case CL_SPHERE: cl_halfspace_points(Xh, g->X + 9, 1, g->par[0], margin, s); return;
    case CL_BOX: {
        double P[24];
        cl_box_corners(g->par, g->X, P);
        cl_halfspace_points(Xh, P, 8, 0.0, margin, s);
        return;
    }
    case CL_CYLINDER: cl_halfspace_cylinder(Xh, g->par, g->X, margin, s); return;
    case CL_CAPSULE: cl_halfspace_capsule(Xh, g->par, g->X, margin, s); return;
    case CL_CONVEX: cl_halfspace_convex_points(Xh, g, margin, s); return;
    default: {
        cl_result r;
        cl_halfspace_support(Xh, g, &r);
        if (r.d <= margin) cl_emit(s, r.pa, r.pb, r.n, r.d);
    }
    }
}

/* points of each shape against the other's flat face, kept when over it (_face_manifold) */
static void cl_face_manifold(const cl_geom *a, const cl_geom *b, const double *n, double margin,
                             cl_sink *s) {
    double F[12], buf[CL_MAX_CONTACTS * CL_STRIDE], mn[3] = {-n[0], -n[1], -n[2]};
    int k = cl_flat_face(a, n, F);
    if (k) {
        cl_sink t = {buf, 0, CL_MAX_CONTACTS};
        cl_halfspace_manifold(F, b, margin, &t);
        for (int m = 0; m < t.n && m < t.cap; ++m) {
            const double *c = buf + CL_STRIDE * m;
            if (cl_over(a, F, k - 1, c)) cl_emit(s, c, c + 3, c + 6, c[9]);
        }
    }
    k = cl_flat_face(b, mn, F);
    if (k) {
        cl_sink t = {buf, 0, CL_MAX_CONTACTS};
        cl_halfspace_manifold(F, a, margin, &t);
        for (int m = 0; m < t.n && m < t.cap; ++m) {
            const double *c = buf + CL_STRIDE * m;
            double nb[3] = {-c[6], -c[7], -c[8]};
            if (cl_over(b, F, k - 1, c)) cl_emit(s, c + 3, c, nb, c[9]);
        }
    }
}

/* single-point signed distance of a canonical pair (a not a halfspace unless noted) */
static int cl_distance(const cl_geom *a, const cl_geom *b, cl_result *r, cl_work *wk) {
    int ka = a->kind, kb = b->kind;
    if (ka == CL_HALFSPACE) {
        if (kb == CL_SPHERE) {
            cl_sink t = {r->pa, 0, 0};
            double big = HUGE_VAL, o[CL_STRIDE];
            t.out = o; t.cap = 1;
            cl_halfspace_points(a->X, b->X + 9, 1, b->par[0], big, &t);
            cl_copy(o, r->pa); cl_copy(o + 3, r->pb); cl_copy(o + 6, r->n); r->d = o[9];
        } else cl_halfspace_support(a->X, b, r);
        return 0;
    }
    if (ka == CL_SPHERE && kb == CL_SPHERE) cl_sphere_sphere(a, b, r);
    else if (ka == CL_SPHERE && kb == CL_CAPSULE) cl_sphere_capsule(a, b, r);
    else if (ka == CL_CAPSULE && kb == CL_CAPSULE) cl_capsule_capsule(a, b, r);
    else if (ka == CL_BOX && kb == CL_SPHERE) cl_box_sphere(a, b, r);
    else if (ka == CL_CYLINDER && kb == CL_SPHERE) cl_cylinder_sphere(a, b, r);
    else if (ka == CL_BOX && kb == CL_BOX) return cl_box_box(a, b, r, wk);
    else return cl_gjk_epa(a, b, r, wk);
    return 0;
}

static int cl_face_pair(int ka, int kb) {
    return (ka == CL_BOX && (kb == CL_CYLINDER || kb == CL_CAPSULE)) ||
           (kb == CL_CYLINDER && (ka == CL_CAPSULE || ka == CL_CYLINDER));
}

/* the manifold of a canonical pair (_contacts._manifold) */
static int cl_manifold(const cl_geom *a, const cl_geom *b, double margin, cl_sink *s, cl_work *wk) {
    if (a->kind == CL_HALFSPACE) { cl_halfspace_manifold(a->X, b, margin, s); return 0; }
    if (a->kind == CL_BOX && b->kind == CL_BOX) return cl_box_box_manifold(a, b, margin, s, wk);
    cl_result r;
    if (cl_distance(a, b, &r, wk)) return -1;
    if (r.d > margin) return 0;
    if (cl_face_pair(a->kind, b->kind)) {
        int before = s->n;
        cl_face_manifold(a, b, r.n, margin, s);
        if (s->n > before) return 0;
    }
    cl_emit(s, r.pa, r.pb, r.n, r.d);
    return 0;
}

static int cl_closed(int ka, int kb) {
    return (ka == CL_HALFSPACE && kb != CL_HALFSPACE) || (ka == CL_SPHERE && kb == CL_SPHERE) ||
           (ka == CL_SPHERE && kb == CL_CAPSULE) || (ka == CL_CAPSULE && kb == CL_CAPSULE) ||
           (ka == CL_BOX && kb == CL_SPHERE) || (ka == CL_CYLINDER && kb == CL_SPHERE) ||
           (ka == CL_BOX && kb == CL_BOX);
}

/* check the arguments and put the pair in canonical order: 0 or 1 (swapped), -1 refused */
static int cl_prepare(int ka, const double *pa, int na, const double *Xa, int kb,
                      const double *pb, int nb, const double *Xb, cl_geom *g1, cl_geom *g2) {
    static const int rank[CL_NKINDS] = CL_RANKS;
    if (ka < 0 || ka >= CL_NKINDS || kb < 0 || kb >= CL_NKINDS) return -1;
    if (ka == CL_HALFSPACE && kb == CL_HALFSPACE) return -1;
    if ((ka == CL_CONVEX && (na < 1 || !pa)) || (kb == CL_CONVEX && (nb < 1 || !pb))) return -1;
    if (!Xa || !Xb || (ka != CL_HALFSPACE && !pa) || (kb != CL_HALFSPACE && !pb)) return -1;
    int swap;
    if (cl_closed(ka, kb)) swap = 0;
    else if (cl_closed(kb, ka)) swap = 1;
    else swap = rank[ka] > rank[kb];
    if (swap) { cl_geom_init(g1, kb, pb, nb, Xb); cl_geom_init(g2, ka, pa, na, Xa); }
    else { cl_geom_init(g1, ka, pa, na, Xa); cl_geom_init(g2, kb, pb, nb, Xb); }
    return swap;
}

static int cl_finish(double *out, int n, int swap) {
    for (int m = 0; m < n; ++m) {
        double *c = out + CL_STRIDE * m;
        if (swap)
            for (int i = 0; i < 3; ++i) { double t = c[i]; c[i] = c[3 + i]; c[3 + i] = t; c[6 + i] = -c[6 + i]; }
        for (int i = 0; i < CL_STRIDE; ++i) if (!isfinite(c[i])) return -3;
    }
    return 0;
}

int dbk_collide(int ka, const double *pa, int na, const double *Xa, int kb, const double *pb,
                int nb, const double *Xb, double margin, double *out, int cap, void *work) {
    cl_geom g1, g2;
    int swap = cl_prepare(ka, pa, na, Xa, kb, pb, nb, Xb, &g1, &g2);
    if (swap < 0 || !(margin >= 0.0) || cap < 0 || (cap > 0 && !out) || !work) return -1;
    cl_sink s = {out, 0, cap};
    if (cl_manifold(&g1, &g2, margin, &s, (cl_work *)work)) return -2;
    if (cl_finish(out, s.n < cap ? s.n : cap, swap)) return -3;
    return s.n;
}

int dbk_signed_distance(int ka, const double *pa, int na, const double *Xa, int kb,
                        const double *pb, int nb, const double *Xb, double *out, void *work) {
    cl_geom g1, g2;
    cl_result r;
    int swap = cl_prepare(ka, pa, na, Xa, kb, pb, nb, Xb, &g1, &g2);
    if (swap < 0 || !out || !work) return -1;
    if (cl_distance(&g1, &g2, &r, (cl_work *)work)) return -2;
    cl_copy(r.pa, out); cl_copy(r.pb, out + 3); cl_copy(r.n, out + 6); out[9] = r.d;
    return cl_finish(out, 1, swap);
}

/* many pairs in one call (the form the contact kernel uses): pair m has kinds kinds[2m],
   kinds[2m+1], parameters par[2m], par[2m+1], vertex counts nv[2m], nv[2m+1] and poses
   X + 24 m (A, then B); its contacts go to out + m * cap * CL_STRIDE, their number (or a
   negative status) to count[m]; returns the number of pairs with a negative status */
int dbk_collide_pairs(int npairs, const int *kinds, const double *const *par, const int *nv,
                      const double *X, double margin, double *out, int cap, int *count,
                      void *work) {
    int bad = 0;
    for (int m = 0; m < npairs; ++m) {
        count[m] = dbk_collide(kinds[2 * m], par[2 * m], nv[2 * m], X + 24 * m,
                               kinds[2 * m + 1], par[2 * m + 1], nv[2 * m + 1], X + 24 * m + 12,
                               margin, out + (long)m * cap * CL_STRIDE, cap, work);
        bad += count[m] < 0;
    }
    return bad;
}

int dbk_collide_work_bytes(void) { return (int)sizeof(cl_work); }

void dbk_collide_work_init(void *work) { cl_work_init((cl_work *)work); }

int dbk_collide_layout(int *out) {
    static const int v[] = CL_LAYOUT;
    int n = (int)(sizeof(v) / sizeof(v[0]));
    if (out) for (int i = 0; i < n; ++i) out[i] = v[i];
    return n;
}
"""


def layout() -> tuple:
    """The integers the library reports through ``dbk_collide_layout`` (checked at load):
    version, kind ids in :data:`KINDS` order, parameter slots, contact doubles, most
    contacts."""
    return (VERSION, *(k for k, _ in KINDS.values()), NPAR, CONTACT_DOUBLES, MAX_CONTACTS)


def generate() -> str:
    """The C unit: the layout's ``#define``s, then the pair families and the dispatch."""
    ids = {name: kid for name, (kid, _) in KINDS.items()}
    ranks = [0] * len(KINDS)
    for name, kid in ids.items():
        ranks[kid] = _RANK[name]
    lines = ["/* dynablocks compiled narrow phase (generated by solvers/_collision_source.py) */",
             "#include <math.h>", ""]
    lines += [f"#define CL_{name.upper()} {kid}" for name, kid in ids.items()]
    lines += [f"#define CL_NKINDS {len(KINDS)}", f"#define CL_NPAR {NPAR}",
              f"#define CL_STRIDE {CONTACT_DOUBLES}", f"#define CL_MAX_CONTACTS {MAX_CONTACTS}",
              "#define CL_FLAT_TOL 1e-6",
              "#define CL_RANKS {" + ", ".join(map(str, ranks)) + "}",
              "#define CL_LAYOUT {" + ", ".join(map(str, layout())) + "}"]
    lines += [f"#define CL_{k} {v}" for k, v in CAPACITY.items()]
    return "\n".join(lines) + "\n" + _PRIMS + _GJK + _BOXBOX + _DISPATCH


SOURCE = generate()
DIGEST = hashlib.sha256(SOURCE.encode()).hexdigest()

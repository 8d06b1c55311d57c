"""C text of the contact kernel's broad phase and integration (private part of
:mod:`solvers._contact_step_source`, which includes it after the layout's declarations, the
narrow phase and the linear-algebra helpers): a lower bound of a shape pair's distance from
bounding spheres (a pair whose bound exceeds the speculative margin skips the narrow phase),
and the configuration update ``q (+) h N(q) v_next`` with the free joints' velocities
re-expressed in their new frames. Uses the layout's names (``CI_*``, ``CD_*``, ``POSE_*``,
``JNT_*``, ``FRJ_*``) and the narrow phase's shape kinds (``CL_*``).
"""
from __future__ import annotations

__all__: list[str] = []  # private module

SOURCE = r"""
/* broad phase: the radius of a sphere about the shape's origin holding it (-1: no bound) */
static double bound_radius(int kind, const double *par) {
    switch (kind) {
    case CL_SPHERE: return par[0];
    case CL_BOX: return sqrt(par[0] * par[0] + par[1] * par[1] + par[2] * par[2]);
    case CL_CAPSULE: return par[0] + par[1];
    case CL_CYLINDER: return sqrt(par[0] * par[0] + par[1] * par[1]);
    case CL_ELLIPSOID: return fmax(par[0], fmax(par[1], par[2]));
    default: return -1.0;
    }
}

/* a bound lowered by a rounding slack (it must not exclude a pair the narrow phase accepts) */
static double lower_slack(double x) { return x - 1e-12 * (fabs(x) + 1.0); }

/* a lower bound of a shape pair's distance at the current poses (its bounding spheres; a
   halfspace: the other's bounding sphere against its plane), -inf when a shape has no
   bound; a pair whose bound exceeds the margin has no point within it (the narrow phase
   reports none), so the narrow phase is skipped */
static double pair_lower_bound(const int *ci, const double *cd, const double *P) {
    const int ka = ci[CI_SP_SHAPE_A], kb = ci[CI_SP_SHAPE_B];
    const int ba = ci[CI_BODY_A], bb = ci[CI_BODY_B];
    const double *pa = cd + CD_SP_POSE_A, *pb = cd + CD_SP_POSE_B;
    double c[2][3];
    for (int g = 0; g < 2; ++g) {          /* the shapes' origins in the world */
        const double *Pb = P + POSE_SIZE * (g ? bb : ba), *X = g ? pb : pa;
        const double *R = Pb + POSE_ROTATION, *o = Pb + POSE_POSITION, *px = X + POSE_POSITION;
        for (int i = 0; i < 3; ++i)
            c[g][i] = o[i] + R[3 * i] * px[0] + R[3 * i + 1] * px[1] + R[3 * i + 2] * px[2];
    }
    if (ka == CL_HALFSPACE || kb == CL_HALFSPACE) {
        if (ka == kb) return -INFINITY;
        const int h = ka == CL_HALFSPACE ? 0 : 1;
        const double r = bound_radius(h ? ka : kb, h ? cd + CD_SP_PARAM_A : cd + CD_SP_PARAM_B);
        if (r < 0) return -INFINITY;
        /* the plane's normal: the halfspace frame's z axis in the world, R_b (R_x e_z) */
        const double *Pb = P + POSE_SIZE * (h ? bb : ba) + POSE_ROTATION;
        const double *Rx = (h ? pb : pa) + POSE_ROTATION;
        double n[3], d = 0.0;
        for (int i = 0; i < 3; ++i)
            n[i] = Pb[3 * i] * Rx[2] + Pb[3 * i + 1] * Rx[5] + Pb[3 * i + 2] * Rx[8];
        for (int i = 0; i < 3; ++i) d += n[i] * (c[1 - h][i] - c[h][i]);
        return lower_slack(d - r);
    }
    const double ra = bound_radius(ka, cd + CD_SP_PARAM_A), rb = bound_radius(kb, cd + CD_SP_PARAM_B);
    if (ra < 0 || rb < 0) return -INFINITY;
    double d2 = 0.0;
    for (int i = 0; i < 3; ++i) d2 += (c[1][i] - c[0][i]) * (c[1][i] - c[0][i]);
    return lower_slack(sqrt(d2) - ra - rb);
}

/* 7. integrate q (+) h N(q) vn (vector joints q + h v; ball and free joints: the exponential
   map of the quaternion, a free joint's position along a straight line in the world);
   8. each free joint's velocity re-expressed in its body frame at t + h (R1^T R0) */
static void integrate_joints(const int *joints, int nj, const int *frees, int nfree,
                             const double *q, double h, double *vn, double *qn) {
    int i, j, k, r;
    for (j = 0; j < nj; ++j) {
        const int *jt = joints + JNT_SIZE * j;
        const int type = jt[JNT_TYPE], qs = jt[JNT_Q_START], vs = jt[JNT_V_START];
        const int jnq = jt[JNT_NQ];
        if (type == JT_VECTOR) {
            for (i = 0; i < jnq; ++i) qn[qs + i] = q[qs + i] + h * vn[vs + i];
        } else if (type == JT_BALL) {
            quat_exp_mul(q + qs, vn + vs, h, qn + qs);
        } else {                   /* JT_FREE */
            double R[9];
            quat_exp_mul(q + qs, vn + vs, h, qn + qs);
            quat_rot(q + qs, R);
            for (i = 0; i < 3; ++i)
                qn[qs + 4 + i] = q[qs + 4 + i] + h * (R[3 * i] * vn[vs + 3] + R[3 * i + 1] * vn[vs + 4]
                                                      + R[3 * i + 2] * vn[vs + 5]);
        }
    }
    /* 8. free joints' velocities in the body frames at t + h: R1^T R0 */
    for (k = 0; k < nfree; ++k) {
        const int qs = frees[FRJ_SIZE * k + FRJ_Q_START], vs = frees[FRJ_SIZE * k + FRJ_V_START];
        double R0[9], R1[9], Rr[9], t6[6];
        quat_rot(q + qs, R0);
        quat_rot(qn + qs, R1);
        for (i = 0; i < 3; ++i)
            for (j = 0; j < 3; ++j)
                Rr[3 * i + j] = R1[i] * R0[j] + R1[3 + i] * R0[3 + j] + R1[6 + i] * R0[6 + j];
        for (r = 0; r < 2; ++r)
            for (i = 0; i < 3; ++i)
                t6[3 * r + i] = Rr[3 * i] * vn[vs + 3 * r] + Rr[3 * i + 1] * vn[vs + 3 * r + 1]
                                + Rr[3 * i + 2] * vn[vs + 3 * r + 2];
        for (i = 0; i < 6; ++i) vn[vs + i] = t6[i];
    }
}
"""
"""The broad phase's and the integration's C text."""

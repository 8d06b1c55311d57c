"""C text of the contact kernel's small geometry and linear-algebra helpers (private part
of :mod:`solvers._contact_step_source`, which includes it after the layout's declarations):
quaternion to rotation, the exponential-map update of a quaternion, cross and dot products,
a body-frame pose in world axes (the layout's ``POSE_*`` names), and the block Cholesky
factor of ``H + h D`` with its solve (the factor below the diagonal, its transpose above,
the reciprocals of its diagonal on it; the forward substitution starts at the first nonzero
entry of the right-hand side), and the row update of an elimination.
"""
from __future__ import annotations

__all__: list[str] = []  # private module

SOURCE = r"""
static void quat_rot(const double *q, double *R) {
    double w = q[0], x = q[1], y = q[2], z = q[3];
    R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - w * z); R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z); R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y); R[7] = 2 * (y * z + w * x); R[8] = 1 - 2 * (x * x + y * y);
}

static void quat_exp_mul(const double *q, const double *w, double h, double *out) {
    double a = w[0] * h, b = w[1] * h, c = w[2] * h;
    double t2 = a * a + b * b + c * c, cw, s;
    if (t2 < 1e-6) {
        cw = 1 - t2 / 8 + t2 * t2 / 384;
        s = 0.5 - t2 / 48 + t2 * t2 / 3840;
    } else {
        double t = sqrt(t2);
        cw = cos(t / 2);
        s = sin(t / 2) / t;
    }
    double bw = cw, bx = s * a, by = s * b, bz = s * c;
    double aw = q[0], ax = q[1], ay = q[2], az = q[3];
    out[0] = aw * bw - ax * bx - ay * by - az * bz;
    out[1] = aw * bx + ax * bw + ay * bz - az * by;
    out[2] = aw * by - ax * bz + ay * bw + az * bx;
    out[3] = aw * bz + ax * by - ay * bx + az * bw;
}

static void cross3(const double *a, const double *b, double *r) {
    r[0] = a[1] * b[2] - a[2] * b[1];
    r[1] = a[2] * b[0] - a[0] * b[2];
    r[2] = a[0] * b[1] - a[1] * b[0];
}

static double dot3(const double *a, const double *b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* world pose (12 numbers) of a pose X given in the frame of a body: (R_b R_x, p_b + R_b p_x) */
static void world_pose(const double *P, int body, const double *X, double *Xw) {
    const double *R = P + POSE_SIZE * body + POSE_ROTATION, *p = P + POSE_SIZE * body + POSE_POSITION;
    const double *Rx = X + POSE_ROTATION, *px = X + POSE_POSITION;
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j)
            Xw[POSE_ROTATION + 3 * i + j] = R[3 * i] * Rx[j] + R[3 * i + 1] * Rx[3 + j] + R[3 * i + 2] * Rx[6 + j];
        Xw[POSE_POSITION + i] = p[i] + R[3 * i] * px[0] + R[3 * i + 1] * px[1] + R[3 * i + 2] * px[2];
    }
}

/* y[0:n] -= f x[0:n], element by element (two at a time where the compiler has vector
   types: the same products and differences, so the same bits) */
static void row_update(double *restrict y, const double *restrict x, double f, int n) {
    int i = 0;
#if defined(__GNUC__) || defined(__clang__)
    typedef double dbk_v2 __attribute__((vector_size(16)));
    const dbk_v2 fv = {f, f};
    for (; i + 2 <= n; i += 2) {
        dbk_v2 a, b;
        memcpy(&a, y + i, sizeof a);
        memcpy(&b, x + i, sizeof b);
        a -= fv * b;
        memcpy(y + i, &a, sizeof a);
    }
#endif
    for (; i < n; ++i) y[i] -= f * x[i];
}

/* Cholesky of the symmetric block A[s:s+n, s:s+n] (row-major, lda) into L: the factor
   below the diagonal, its transpose above (row-wise back substitution), the reciprocals of
   its diagonal on the diagonal */
static inline __attribute__((always_inline)) int chol_block(const double *A, int lda, int s, int n, double *L) {
    double *Ls = L + s * lda + s;
    for (int j = 0; j < n; ++j) {
        double *lj = Ls + j * lda;
        double d = A[(s + j) * lda + s + j];
        for (int k = 0; k < j; ++k) d -= lj[k] * lj[k];
        if (!(d > 0)) return -1;
        const double rd = 1.0 / sqrt(d);
        lj[j] = rd;
        for (int i = j + 1; i < n; ++i) {
            double *li = Ls + i * lda;
            double t = A[(s + i) * lda + s + j];
            for (int k = 0; k < j; ++k) t -= li[k] * lj[k];
            li[j] = t * rd;
            lj[i] = li[j];
        }
    }
    return 0;
}

/* the explicit inverse of a small block, Minv[s:s+n, s:s+n] = A^-1 = X^T X with X = L^-1
   (lower triangular; chol_block's factor holds the reciprocals of L's diagonal), n <= MINV_MAX:
   Y = M^-1 J^T on a block is then one small matrix-vector product per row */
#define MINV_MAX 12
static inline __attribute__((always_inline)) void chol_inverse_block(const double *L, int lda, int s, int n, double *Minv) {
    const double *Ls = L + s * lda + s;
    double X[MINV_MAX * MINV_MAX];
    for (int i = 0; i < n; ++i) {
        const double *li = Ls + i * lda;
        X[i * n + i] = li[i];
        for (int j = 0; j < i; ++j) {
            double t = 0.0;
            for (int k = j; k < i; ++k) t += li[k] * X[k * n + j];
            X[i * n + j] = -t * li[i];
        }
        for (int j = i + 1; j < n; ++j) X[i * n + j] = 0.0;
    }
    double *Ms = Minv + s * lda + s;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) {
            double t = 0.0;
            for (int k = i; k < n; ++k) t += X[k * n + i] * X[k * n + j];
            Ms[i * lda + j] = t;
            Ms[j * lda + i] = t;
        }
}

/* y[s:s+n] = Minv[s:s+n, s:s+n] x[s:s+n] (a block chol_inverse_block inverted; y != x) */
static void minv_apply_block(const double *Minv, int lda, int s, int n, const double *x,
                             double *y) {
    const double *xs = x + s;
    for (int i = 0; i < n; ++i) {
        const double *m = Minv + (s + i) * lda + s;
        double t = 0.0;
        for (int j = 0; j < n; ++j) t += m[j] * xs[j];
        y[s + i] = t;
    }
}

/* the same with a free body's block size known to the compiler (unrolled; same sums) */
static int chol_block_n(const double *A, int lda, int s, int n, double *L) {
    return n == 6 ? chol_block(A, lda, s, 6, L) : chol_block(A, lda, s, n, L);
}
static void chol_inverse_block_n(const double *L, int lda, int s, int n, double *Minv) {
    if (n == 6) chol_inverse_block(L, lda, s, 6, Minv); else chol_inverse_block(L, lda, s, n, Minv);
}

/* x[s:s+n] <- A^-1 x[s:s+n] with the block's factor (chol_block); the forward substitution
   starts at the first nonzero entry (a row of J touches the block from some column on) */
static inline __attribute__((always_inline)) void chol_solve_block(const double *L, int lda, int s, int n, double *x) {
    const double *Ls = L + s * lda + s;
    double *xs = x + s;
    int i0 = 0;
    while (i0 < n && xs[i0] == 0.0) ++i0;
    for (int i = i0; i < n; ++i) {
        const double *li = Ls + i * lda;
        double t = xs[i];
        for (int k = i0; k < i; ++k) t -= li[k] * xs[k];
        xs[i] = t * li[i];
    }
    if (i0 == n) return;
    for (int i = n - 1; i >= 0; --i) {
        const double *ui = Ls + i * lda;
        double t = xs[i];
        for (int k = i + 1; k < n; ++k) t -= ui[k] * xs[k];
        xs[i] = t * ui[i];
    }
}

/* chol_solve_block with a free body's block size known to the compiler */
static void chol_solve_block_n(const double *L, int lda, int s, int n, double *x) {
    if (n == 6) chol_solve_block(L, lda, s, 6, x); else chol_solve_block(L, lda, s, n, x);
}

"""
"""The helpers' C text."""

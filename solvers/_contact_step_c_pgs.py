"""C text of the contact kernel's solver helpers (private part of
:mod:`solvers._contact_step_source`, which includes it after the layout's declarations):
the largest eigenvalue of a 2 x 2 block, the natural-map residual of a contact block (or of
a one-row block: a joint limit's or joint friction's, projected on its bounds), the velocity update ``vel += Y_k^T p`` on the
blocks a contact touches, and the Newton polish on the active set the projected
Gauss-Seidel found (refined by up to ``POLISH_PASSES`` changes of the slots' modes). Uses the layout's names (``CI``, ``CO_*``, ``COL_*``, ``BLK_*``,
``HDR_*``) and no bare table index.
"""
from __future__ import annotations

__all__: list[str] = []  # private module

SOURCE = r"""
/* over-relaxation of the normal and sticking updates (the fixed points do not change; on
   the 10-sphere pile of bench_time_stepping it halves the sweeps of the hard steps) */
#define OMEGA 1.4
/* a polish at least every POLISH_EVERY sweeps: PGS can stagnate above the acceptance on
   statically indeterminate stacks (box on box: 4 corners each), where the polish on its
   active set is exact */
#define POLISH_EVERY 50
/* once PGS is close (change < 1e-6 of the scale), a polish after POLISH_GAP sweeps, the gap
   doubled after each polish that does not end the step (the active set is not settled yet:
   on the 10-sphere pile's slow settling most such polishes are wasted) */
#define POLISH_GAP 8
/* the sweeps' per-slot constants (gi): 1 / G_nn, the tangent block's inverse (3), a
   nonsingular flag, its largest eigenvalue and reciprocal */
#define GI_SIZE 8

/* y = A y (+ b when b is not NULL), A n x n row-major, through tmp: the loop closures'
   elimination (the layout's cproj, cpv) */
static void affine_map(const double *A, const double *b, int n, double *y, double *tmp) {
    for (int i = 0; i < n; ++i) {
        const double *a = A + (size_t)i * n;
        double s = b ? b[i] : 0.0;
        for (int j = 0; j < n; ++j) s += a[j] * y[j];
        tmp[i] = s;
    }
    memcpy(y, tmp, n * sizeof(double));
}

/* largest eigenvalue of the symmetric 2 x 2 [[a, b], [b, c]] */
static double lmax2(double a, double b, double c) {
    double m = 0.5 * (a + c), d = 0.5 * (a - c);
    return m + sqrt(d * d + b * b);
}

/* (t1, t2) projected on the friction set of a contact whose friction limit is lim = mu p_n:
   the disc t1^2 + t2^2 <= lim^2 (scaled towards 0), or with fbox the box |t_i| <= lim (each
   clamped: ODE's friction pyramid) */
static void friction_project(double *t1, double *t2, double lim, int fbox) {
    if (fbox) {
        *t1 = *t1 > lim ? lim : (*t1 < -lim ? -lim : *t1);
        *t2 = *t2 > lim ? lim : (*t2 < -lim ? -lim : *t2);
        return;
    }
    const double tt = sqrt(*t1 * *t1 + *t2 * *t2);
    if (tt > lim) { double f = tt > 0 ? lim / tt : 0.0; *t1 *= f; *t2 *= f; }
}

/* natural-map residual of one contact block in velocity units (scaled by the block's
   diagonal): the normal complementarity and the friction-disc projection (the normal
   only for a joint limit's block) */
static double block_residual(const double *pk, const double *w, const double *Gk, double mu,
                             int one, double lo, double up, int fbox) {
    if (one == 2) {                             /* a closure: bilateral, |w| per row */
        double m = 0.0;
        for (int r = 0; r < 3; ++r) if (fabs(w[r]) > m) m = fabs(w[r]);
        return m;
    }
    double gn = Gk[0], pn_ = pk[0] - w[0] / gn;
    if (one) {                                  /* a 1 x 1 block: projection on [lo, up] */
        pn_ = pn_ < lo ? lo : (pn_ > up ? up : pn_);
        return fabs(pk[0] - pn_) * gn;
    }
    double rn = fabs(pk[0] - (pn_ > 0 ? pn_ : 0.0)) * gn;
    double g = lmax2(Gk[4], 0.5 * (Gk[5] + Gk[7]), Gk[8]);
    double a1 = pk[1] - w[1] / g, a2 = pk[2] - w[2] / g;
    friction_project(&a1, &a2, mu * pk[0], fbox);
    double rt = sqrt((pk[1] - a1) * (pk[1] - a1) + (pk[2] - a2) * (pk[2] - a2)) * g;
    return rn > rt ? rn : rt;
}

/* d = -G^-1 w for a closure's symmetric 3 x 3 block (Cholesky; a row whose pivot is not
   above 1e-12 of the largest diagonal, a dependent or empty row, gets no impulse) */
static void solve_sym3(const double *G, const double *w, double *d) {
    double Lc[9] = {0}, y[3];
    int live[3];
    double dmax = 0.0;
    for (int r = 0; r < 3; ++r) if (G[4 * r] > dmax) dmax = G[4 * r];
    for (int r = 0; r < 3; ++r) {
        double s = G[4 * r];
        for (int c = 0; c < r; ++c) s -= Lc[3 * r + c] * Lc[3 * r + c];
        live[r] = s > 1e-12 * dmax;
        Lc[4 * r] = live[r] ? sqrt(s) : 0.0;
        for (int i = r + 1; i < 3; ++i) {
            double t = 0.5 * (G[3 * i + r] + G[3 * r + i]);
            for (int c = 0; c < r; ++c) t -= Lc[3 * i + c] * Lc[3 * r + c];
            Lc[3 * i + r] = live[r] ? t / Lc[4 * r] : 0.0;
        }
    }
    for (int r = 0; r < 3; ++r) {
        double t = -w[r];
        for (int c = 0; c < r; ++c) t -= Lc[3 * r + c] * y[c];
        y[r] = live[r] ? t / Lc[4 * r] : 0.0;
    }
    for (int r = 2; r >= 0; --r) {
        double t = y[r];
        for (int c = r + 1; c < 3; ++c) t -= Lc[3 * c + r] * d[c];
        d[r] = live[r] ? t / Lc[4 * r] : 0.0;
    }
}

/* the velocity blocks contact slot k touches (its candidate's): count, then block indices */
static const int *cand_blocks(const int *it, const int *cands, int k) {
    const int *ci = cands + CI * it[it[HDR_CONTACT_CANDIDATE] + k];
    return it + ci[CI_COLUMNS] + COL_SIZE * ci[CI_NUM_COLUMNS];
}

/* vel += Y_k^T (a0, a1, a2) on the blocks candidate k touches (Y_k is zero elsewhere) */
static void add_y(const int *it, const int *cands, const int *blocks, int k, int nv,
                  const double *Yk, double a0, double a1, double a2, double *vel) {
    const int *bl = cand_blocks(it, cands, k);
    for (int b = 0; b < bl[0]; ++b) {
        const int *blk = blocks + BLK_SIZE * bl[1 + b];
        const int s = blk[BLK_START], e = s + blk[BLK_LENGTH];
        for (int i = s; i < e; ++i) vel[i] += Yk[i] * a0 + Yk[nv + i] * a1 + Yk[2 * nv + i] * a2;
    }
}

/* the sweeps' packed copies of the active slots' rows (the same numbers as Jall and Y, laid
   out contiguously in L1-sized runs): Jc per column of the slot's candidate its three J
   entries (column order), Yc per velocity of the candidate's blocks its three M^-1 J^T
   entries (block order); jo, yo each active slot's offsets */
static void pack_rows(int na, const int *act, const int *it, const int *cands,
                      const int *blocks, int nv, const double *Jall, const double *Y,
                      double *Jc, double *Yc, int *jo, int *yo) {
    int oj = 0, oy = 0;
    for (int j = 0; j < na; ++j) {
        const int k = act[j];
        const int *ci = cands + CI * it[it[HDR_CONTACT_CANDIDATE] + k];
        const int *cc = it + ci[CI_COLUMNS], ncol = ci[CI_NUM_COLUMNS];
        const double *Jk = Jall + 3 * nv * k, *Yk = Y + 3 * nv * k;
        jo[j] = oj;
        yo[j] = oy;
        for (int i = 0; i < ncol; ++i, oj += 3) {
            const int col = cc[COL_SIZE * i + COL_COLUMN];
            Jc[oj] = Jk[col]; Jc[oj + 1] = Jk[nv + col]; Jc[oj + 2] = Jk[2 * nv + col];
        }
        const int *bl = cc + COL_SIZE * ncol;
        for (int b = 0; b < bl[0]; ++b) {
            const int *blk = blocks + BLK_SIZE * bl[1 + b];
            const int s = blk[BLK_START], e = s + blk[BLK_LENGTH];
            for (int i = s; i < e; ++i, oy += 3) {
                Yc[oy] = Yk[i]; Yc[oy + 1] = Yk[nv + i]; Yc[oy + 2] = Yk[2 * nv + i];
            }
        }
    }
}

/* add_y on a slot's packed Yc (bl: its candidate's blocks; the same sums as add_y) */
static void add_yc(const int *bl, const int *blocks, const double *yc, double a0, double a1,
                   double a2, double *vel) {
    for (int b = 0; b < bl[0]; ++b) {
        const int *blk = blocks + BLK_SIZE * bl[1 + b];
        const int s = blk[BLK_START], e = s + blk[BLK_LENGTH];
        for (int i = s; i < e; ++i, yc += 3) vel[i] += yc[0] * a0 + yc[1] * a1 + yc[2] * a2;
    }
}

/* vel = v_free + sum_k Y_k p_k over the active contacts */
static void rebuild_vel(int na, const int *act, const int *it, const int *cands,
                        const int *blocks, int nv, const double *co, const double *Y,
                        const double *vfree, double *vel) {
    memcpy(vel, vfree, nv * sizeof(double));
    for (int j = 0; j < na; ++j) {
        const int k = act[j];
        const double *pk = co + CO_SIZE * k + CO_IMPULSE;
        add_y(it, cands, blocks, k, nv, Y + 3 * nv * k, pk[0], pk[1], pk[2], vel);
    }
}

/* max natural-map residual (velocity units) of the disc conditions at vel */
static double residual(int na, const int *act, const int *it, const int *cands, int nv,
                       const double *co, const double *Jall, const double *G,
                       const double *bias, const double *vel, double mu, const double *cfmk,
                       const double *plo, const double *pup, const int *one, const int *bil,
                       int fbox) {
    double res = 0.0;
    for (int j = 0; j < na; ++j) {
        const int k = act[j];
        const int *ci = cands + CI * it[it[HDR_CONTACT_CANDIDATE] + k], *cc = it + ci[CI_COLUMNS], ncol = ci[CI_NUM_COLUMNS];
        const double *pk = co + CO_SIZE * k + CO_IMPULSE, *Jk = Jall + 3 * nv * k, *Gk = G + 9 * k;
        double w[3], s0 = 0.0, s1 = 0.0, s2 = 0.0;   /* three rows in one pass (each in column order) */
        for (int i = 0; i < ncol; ++i) {
            const int col = cc[COL_SIZE * i + COL_COLUMN];
            const double vc = vel[col];
            s0 += Jk[col] * vc; s1 += Jk[nv + col] * vc; s2 += Jk[2 * nv + col] * vc;
        }
        w[0] = s0 + cfmk[k] * pk[0]; w[1] = s1 + cfmk[k] * pk[1]; w[2] = s2 + cfmk[k] * pk[2];
        for (int r = 0; r < 3; ++r) w[r] += bias[3 * k + r];
        double rb = block_residual(pk, w, Gk, mu, one[k] ? 1 : (bil[k] ? 2 : 0), plo[k], pup[k],
                                   fbox);
        if (rb > res) res = rb;
    }
    return res;
}

/* a contact slot's tangent slip w_t = J_t v + cfm p_t + b_t (out: 2 values) */
static void slip_at(const int *it, const int *cands, int nv, const double *Jall,
                    const double *cfmk, const double *bias, int k, const double *p,
                    const double *v, double *out) {
    const int *ci = cands + CI * it[it[HDR_CONTACT_CANDIDATE] + k], *cc = it + ci[CI_COLUMNS];
    const int ncol = ci[CI_NUM_COLUMNS];
    const double *Jk = Jall + 3 * nv * k;
    double w1 = cfmk[k] * p[1] + bias[3 * k + 1], w2 = cfmk[k] * p[2] + bias[3 * k + 2];
    for (int i = 0; i < ncol; ++i) {
        const int col = cc[COL_SIZE * i + COL_COLUMN];
        w1 += Jk[nv + col] * v[col];
        w2 += Jk[2 * nv + col] * v[col];
    }
    out[0] = w1;
    out[1] = w2;
}

/* Newton polish on the active set PGS found, refined: each slot gets a mode (pmode,
   PM_*): a contact with p_n > 0 sticks (w = 0 on its three rows) when its friction is
   strictly inside the disc, else slides (w_n = 0, p_t = mu p_n d, d its current direction);
   without p_n it is off (p = 0); a one-row block's impulse is an unknown strictly inside its
   bounds, else fixed at its value (the right-hand side); a closure's rows are unknowns. One
   dense solve (partial pivoting) per pass; a pass whose solution leaves a sticking friction
   outside the disc (that contact slides along the solved direction), a normal impulse
   negative (the contact goes off) or a one-row impulse outside its bounds (fixed at the
   bound) changes those modes and solves again; so does a feasible solution whose velocity
   (vs) breaks a mode's assumption by more than dtol (an off contact that penetrates: it
   sticks; a fixed one-row block pulled off its bound: free), at most POLISH_PASSES solves
   (a primal active-set method; a sliding contact keeps its direction). Writes p (psol: 3 per active slot,
   scratch) and returns 2 when a pass is consistent, 1 when only feasible (the last pass), else
   leaves p and returns 0. */
#define POLISH_PASSES 8
/* with the friction box: one mode change per pass (the first slot's, in slot order: the
   simultaneous changes of a statically indeterminate stack can cycle), more passes */
#define POLISH_PASSES_BOX 24
static int polish(int na, const int *act, const int *it, const int *cands, int nv,
                  double *co, const double *Jall, const double *Y, const double *bias,
                  const double *vfree, double mu, const double *cfmk, const double *plo,
                  const double *pup, const int *one, const int *bil, double *M, double *x,
                  double *dsl, int *idn, int *idt, int *mode, int *hi, const int *blocks,
                  double *psol, double *vs, double dtol, const double *vel0, double *wsl,
                  int newton, int fbox) {
    int nu, j, l, r, s, i, feasible = 0, consistent = 0;
    for (j = 0; j < na; ++j) {
        const int k = act[j];
        const double *pk = co + CO_SIZE * k + CO_IMPULSE;
        dsl[2 * j] = dsl[2 * j + 1] = 0.0;
        if (bil[k]) { mode[j] = PM_FREE; continue; }
        if (one[k]) {
            mode[j] = (pk[0] > plo[k] && pk[0] < pup[k]) ? PM_FREE : PM_FIXED;
            dsl[2 * j] = pk[0];                 /* a fixed one-row block's value */
            continue;
        }
        mode[j] = PM_OFF;
        if (pk[0] > 0) {
            double tt = sqrt(pk[1] * pk[1] + pk[2] * pk[2]);
            mode[j] = PM_STICK;
            if (fbox) {               /* per tangent row: free (0) or at +-mu p_n (+-1) */
                for (r = 1; r < 3; ++r)
                    dsl[2 * j + r - 1] = (!(fabs(pk[r]) < mu * pk[0] * (1 - 1e-9)) && pk[r] != 0)
                                         ? (pk[r] > 0 ? 1.0 : -1.0) : 0.0;
            } else if (!(tt < mu * pk[0] * (1 - 1e-9)) && tt > 0) {
                mode[j] = PM_SLIDE;
                dsl[2 * j] = pk[1] / tt; dsl[2 * j + 1] = pk[2] / tt;
                wsl[3 * j] = wsl[3 * j + 1] = wsl[3 * j + 2] = 0.0;
                if (newton) {
                    slip_at(it, cands, nv, Jall, cfmk, bias, act[j], pk, vel0, wsl + 3 * j);
                    wsl[3 * j + 2] = pk[0];
                }
            }
        }
    }
    const int npass = fbox ? POLISH_PASSES_BOX : POLISH_PASSES;
    for (int pass = 0; pass < npass; ++pass) {
        nu = 0;
        for (j = 0; j < na; ++j) {
            const int k = act[j];
            idn[j] = idt[j] = -1;
            if (bil[k]) {             /* a closure: all its rows unknowns (idn, then idt) */
                idn[j] = nu;
                if (bil[k] > 1) idt[j] = nu + 1;
                nu += bil[k];
            } else if (mode[j] == PM_FREE) {
                idn[j] = nu++;
            } else if (mode[j] == PM_STICK || mode[j] == PM_SLIDE) {
                idn[j] = nu;
                idt[j] = nu + 1;
                nu += 3;
            }
        }
        if (nu == 0) return 0;
        for (i = 0; i < nu * nu; ++i) M[i] = 0.0;
        for (j = 0; j < na; ++j) {
            const int k = act[j];
            if (idn[j] < 0) continue;
            const int *ci = cands + CI * it[it[HDR_CONTACT_CANDIDATE] + k], *cc = it + ci[CI_COLUMNS], ncol = ci[CI_NUM_COLUMNS];
            const double *Jk = Jall + 3 * nv * k;
            const int nr = bil[k] ? bil[k] : (idt[j] >= 0 ? 3 : 1);
            int rows[3];
            for (r = 0; r < nr; ++r) {
                const int row = rows[r] = r == 0 ? idn[j] : idt[j] + r - 1;
                double s0 = 0.0;
                for (i = 0; i < ncol; ++i) { const int col = cc[COL_SIZE * i + COL_COLUMN]; s0 += Jk[r * nv + col] * vfree[col]; }
                x[row] = -(s0 + bias[3 * k + r]);
            }
            /* the products J_k(r) . Y_l(s) on the velocity blocks k and l share (J_k's full
               rows are zero off k's columns, Y_l's off l's blocks), the nr x 3 of them in
               one pass */
            const int *bk = cand_blocks(it, cands, k);
            for (l = 0; l < na; ++l) {
                const int kl = act[l];
                const int fixed = mode[l] == PM_FIXED;
                if (fixed ? dsl[2 * l] == 0.0 : idn[l] < 0) continue;
                const int *blb = cand_blocks(it, cands, kl);
                const double *Yl = Y + 3 * nv * kl;
                const int ns = fixed ? 1 : 3;
                double D[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
                int shared = 0;
                for (int ba = 0; ba < bk[0]; ++ba) {
                    int in_l = 0;
                    for (int bb = 0; bb < blb[0]; ++bb) in_l |= blb[1 + bb] == bk[1 + ba];
                    if (!in_l) continue;
                    shared = 1;
                    const int *blk = blocks + BLK_SIZE * bk[1 + ba];
                    const int bs = blk[BLK_START], be = bs + blk[BLK_LENGTH];
                    for (i = bs; i < be; ++i) {
                        const double y0 = Yl[i], y1 = Yl[nv + i], y2 = Yl[2 * nv + i];
                        for (r = 0; r < nr; ++r) {
                            const double jr = Jk[r * nv + i];
                            D[r][0] += jr * y0;
                            if (ns == 3) { D[r][1] += jr * y1; D[r][2] += jr * y2; }
                        }
                    }
                }
                if (!shared) continue;
                for (r = 0; r < nr; ++r) {
                    const int row = rows[r];
                    if (fixed) {                  /* a one-row block held at a value */
                        x[row] -= D[r][0] * dsl[2 * l];
                        continue;
                    }
                    double A[3];
                    for (s = 0; s < 3; ++s) A[s] = D[r][s] + ((l == j && r == s) ? cfmk[k] : 0.0);
                    if (bil[kl]) {                    /* a closure's rows */
                        for (s = 0; s < bil[kl]; ++s) M[row * nu + idn[l] + s] += A[s];
                    } else if (idt[l] >= 0) {
                        M[row * nu + idn[l]] += A[0];
                        M[row * nu + idt[l]] += A[1];
                        M[row * nu + idt[l] + 1] += A[2];
                    } else {
                        M[row * nu + idn[l]] += A[0] + mu * (dsl[2 * l] * A[1] + dsl[2 * l + 1] * A[2]);
                    }
                }
            }
        }
        /* a sliding contact's two tangent rows: the sliding law p_t = -mu p_n w_t / |w_t|
           linearised at its point (w0, p_n0) (Newton): p_t + mu h p_n + kap P T p =
           kap P (w0 + x_t), h = w0 / |w0|, P = I - h h^T, kap = mu p_n0 / |w0|, where T p -
           x_t = w_t are the rows assembled above; without a point, or with a slip not above
           dtol (kap = 0), the friction keeps its direction dsl */
        for (j = 0; j < na; ++j) {
            if (mode[j] != PM_SLIDE) continue;
            const double *w0 = wsl + 3 * j;
            const double nw = sqrt(w0[0] * w0[0] + w0[1] * w0[1]);
            double h1 = -dsl[2 * j], h2 = -dsl[2 * j + 1], kap = 0.0;
            if (nw > dtol && w0[2] > 0) { h1 = w0[0] / nw; h2 = w0[1] / nw; kap = mu * w0[2] / nw; }
            const double P00 = kap * (1 - h1 * h1), P01 = -kap * h1 * h2, P11 = kap * (1 - h2 * h2);
            double *ma = M + idt[j] * nu, *mb = ma + nu;
            for (i = 0; i < nu; ++i) {
                const double a = ma[i], b = mb[i];
                ma[i] = P00 * a + P01 * b;
                mb[i] = P01 * a + P11 * b;
            }
            const double xa = w0[0] + x[idt[j]], xb = w0[1] + x[idt[j] + 1];
            x[idt[j]] = kap > 0 ? P00 * xa + P01 * xb : 0.0;
            x[idt[j] + 1] = kap > 0 ? P01 * xa + P11 * xb : 0.0;
            ma[idt[j]] += 1.0; mb[idt[j] + 1] += 1.0;
            ma[idn[j]] += mu * h1; mb[idn[j]] += mu * h2;
        }
        /* a box contact's tangent row at a bound s mu p_n (s = dsl = +-1): p_t - s mu p_n = 0 */
        for (j = 0; fbox && j < na; ++j) {
            if (mode[j] != PM_STICK) continue;
            for (r = 0; r < 2; ++r) {
                if (dsl[2 * j + r] == 0.0) continue;
                double *mr = M + (idt[j] + r) * nu;
                for (i = 0; i < nu; ++i) mr[i] = 0.0;
                mr[idt[j] + r] = 1.0;
                mr[idn[j]] = -mu * dsl[2 * j + r];
                x[idt[j] + r] = 0.0;
            }
        }
        /* Gaussian elimination with partial pivoting; hi[r] bounds row r's nonzero
           columns (contacts on disjoint bodies give zero blocks: a stack's rows are
           banded), so the updates and the back substitution skip exact zeros only */
        double scale = 0.0;
        for (r = 0; r < nu; ++r) {
            int last = r;
            for (i = 0; i < nu; ++i) {
                const double a = fabs(M[r * nu + i]);
                if (a > scale) scale = a;
                if (a != 0.0 && i > last) last = i;
            }
            hi[r] = last;
        }
        for (int c = 0; c < nu; ++c) {
            int piv = c;
            for (r = c + 1; r < nu; ++r) if (fabs(M[r * nu + c]) > fabs(M[piv * nu + c])) piv = r;
            if (!(fabs(M[piv * nu + c]) > 1e-13 * scale)) return 0;
            if (piv != c) {
                const int e = hi[c] > hi[piv] ? hi[c] : hi[piv];
                for (i = c; i <= e; ++i) { double t = M[c * nu + i]; M[c * nu + i] = M[piv * nu + i]; M[piv * nu + i] = t; }
                double t = x[c]; x[c] = x[piv]; x[piv] = t;
                const int th = hi[c]; hi[c] = hi[piv]; hi[piv] = th;
            }
            const double pc = M[c * nu + c];
            const int e = hi[c];
            for (r = c + 1; r < nu; ++r) {
                if (M[r * nu + c] == 0.0) continue;
                double f = M[r * nu + c] / pc;
                if (f == 0.0) continue;
                row_update(M + r * nu + c, M + c * nu + c, f, e - c + 1);
                x[r] -= f * x[c];
                if (e > hi[r]) hi[r] = e;
            }
        }
        for (int c = nu - 1; c >= 0; --c) {
            double t = x[c];
            for (i = c + 1; i <= hi[c]; ++i) t -= M[c * nu + i] * x[i];
            x[c] = t / M[c * nu + c];
        }
        /* feasibility; an infeasible slot changes its mode for the next pass */
        int changed = 0;
        for (j = 0; j < na && !(fbox && changed); ++j) {
            const int k = act[j];
            if (idn[j] < 0 || bil[k]) continue;   /* bilateral: any sign */
            const double pn = x[idn[j]];
            if (!isfinite(pn)) return 0;
            if (one[k]) {
                const double lo = plo[k], up = pup[k];
                if (!(pn >= lo - 1e-9 * fabs(lo))) { mode[j] = PM_FIXED; dsl[2 * j] = lo; changed = 1; }
                else if (!(pn <= up + 1e-9 * fabs(up))) { mode[j] = PM_FIXED; dsl[2 * j] = up; changed = 1; }
                continue;
            }
            if (!(pn >= 0)) { mode[j] = PM_OFF; changed = 1; continue; }
            if (fbox) {            /* a free tangent row beyond +-mu p_n: held at that bound */
                for (r = 0; r < 2; ++r) {
                    const double a = x[idt[j] + r];
                    if (dsl[2 * j + r] == 0.0 && !(fabs(a) <= mu * pn * (1 + 1e-9))) {
                        dsl[2 * j + r] = a > 0 ? 1.0 : -1.0;
                        changed = 1;
                        break;
                    }
                }
                continue;
            }
            if (mode[j] == PM_STICK) {
                const double a = x[idt[j]], b = x[idt[j] + 1], tt = sqrt(a * a + b * b);
                if (!(tt <= mu * pn * (1 + 1e-9))) {
                    mode[j] = PM_SLIDE;
                    dsl[2 * j] = a / tt; dsl[2 * j + 1] = b / tt;
                    wsl[3 * j] = wsl[3 * j + 1] = wsl[3 * j + 2] = 0.0;   /* no point yet */
                    changed = 1;
                }
            }
        }
        if (changed) { feasible = 0; continue; }
        feasible = 1;
        /* the candidate impulses (into psol, 3 per active slot) and their velocity */
        for (j = 0; j < na; ++j) {
            const int k = act[j];
            double *pj = psol + 3 * j;
            pj[0] = pj[1] = pj[2] = 0.0;
            if (bil[k]) { for (r = 0; r < bil[k]; ++r) pj[r] = x[idn[j] + r]; continue; }
            if (one[k]) {
                if (idn[j] >= 0) {
                    const double pn = x[idn[j]];
                    pj[0] = pn < plo[k] ? plo[k] : (pn > pup[k] ? pup[k] : pn);
                } else pj[0] = dsl[2 * j];
                continue;
            }
            if (idn[j] < 0) continue;
            pj[0] = x[idn[j]];
            pj[1] = x[idt[j]]; pj[2] = x[idt[j] + 1];
        }
        memcpy(vs, vfree, nv * sizeof(double));
        for (j = 0; j < na; ++j) {
            const double *pj = psol + 3 * j;
            if (pj[0] != 0.0 || pj[1] != 0.0 || pj[2] != 0.0)
                add_y(it, cands, blocks, act[j], nv, Y + 3 * nv * act[j], pj[0], pj[1], pj[2], vs);
        }
        /* the conditions the modes assume: an off contact separates (w_n >= 0), a fixed
           one-row block's velocity pushes on its bound; a violation beyond dtol changes
           the mode */
        for (j = 0; j < na && !(fbox && changed); ++j) {
            const int k = act[j];
            if (fbox && mode[j] == PM_STICK) {
                /* a row at +mu p_n needs a slip w_t <= 0 (at -mu p_n: >= 0); beyond dtol the
                   row is freed */
                if (dsl[2 * j] == 0.0 && dsl[2 * j + 1] == 0.0) continue;
                double wt[2];
                slip_at(it, cands, nv, Jall, cfmk, bias, k, psol + 3 * j, vs, wt);
                for (r = 0; r < 2; ++r)
                    if (dsl[2 * j + r] * wt[r] > dtol) { dsl[2 * j + r] = 0.0; changed = 1; break; }
                continue;
            }
            if (mode[j] == PM_SLIDE && !newton) continue;   /* directions kept */
            if (mode[j] == PM_SLIDE) {
                /* the sliding law at the solution: the slip gone, the contact sticks; the
                   friction off the slip's opposite direction by more than dtol (velocity
                   units), another Newton pass linearised here */
                const double *pj = psol + 3 * j;
                double wt[3];
                slip_at(it, cands, nv, Jall, cfmk, bias, k, pj, vs, wt);
                const double nwt = sqrt(wt[0] * wt[0] + wt[1] * wt[1]);
                const double tp = sqrt(pj[1] * pj[1] + pj[2] * pj[2]);
                if (nwt <= dtol) { mode[j] = PM_STICK; changed = 1; continue; }
                const double e1 = (tp > 0 ? pj[1] / tp : 0.0) + wt[0] / nwt;
                const double e2 = (tp > 0 ? pj[2] / tp : 0.0) + wt[1] / nwt;
                if (nwt * sqrt(e1 * e1 + e2 * e2) > 0.01 * dtol) {
                    wsl[3 * j] = wt[0]; wsl[3 * j + 1] = wt[1]; wsl[3 * j + 2] = pj[0];
                    changed = 1;
                }
                continue;
            }
            if (mode[j] != PM_OFF && mode[j] != PM_FIXED) continue;
            const int *ci = cands + CI * it[it[HDR_CONTACT_CANDIDATE] + k], *cc = it + ci[CI_COLUMNS], ncol = ci[CI_NUM_COLUMNS];
            const double *Jk = Jall + 3 * nv * k;
            double w0 = cfmk[k] * psol[3 * j] + bias[3 * k];
            for (i = 0; i < ncol; ++i) { const int col = cc[COL_SIZE * i + COL_COLUMN]; w0 += Jk[col] * vs[col]; }
            if (mode[j] == PM_OFF) {
                if (w0 < -dtol) {
                    mode[j] = PM_STICK; changed = 1;
                    if (fbox) {      /* its rows at bounds against the slip there */
                        double wt[2];
                        slip_at(it, cands, nv, Jall, cfmk, bias, k, psol + 3 * j, vs, wt);
                        for (r = 0; r < 2; ++r)
                            dsl[2 * j + r] = fabs(wt[r]) > dtol ? (wt[r] > 0 ? -1.0 : 1.0) : 0.0;
                    }
                }
            } else {
                const double v0 = dsl[2 * j];
                if ((v0 <= plo[k] && w0 < -dtol) || (v0 >= pup[k] && w0 > dtol)) { mode[j] = PM_FREE; changed = 1; }
            }
        }
        consistent = !changed;
        if (consistent || pass == npass - 1) break;
    }
    if (!feasible) return 0;
    /* a consistent pass, or the last feasible one (the caller keeps the better point) */
    for (j = 0; j < na; ++j) memcpy(co + CO_SIZE * act[j] + CO_IMPULSE, psol + 3 * j, 3 * sizeof(double));
    return 1 + consistent;
}

"""
"""The helpers' C text."""

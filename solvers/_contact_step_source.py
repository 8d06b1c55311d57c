"""C source of the compiled contact step (private part of :mod:`solvers.contact_step`).

One entry point, ``dbk_contact_step(it, dt, in, out, work, iwork)``, does everything of a
time step of a rigid-body tree with point contacts after the tree's dynamics terms are
known: block Cholesky of ``H + h D``, the free velocity, the speculative margin, the
contact points of every candidate geometry pair (the narrow phase of
:mod:`solvers.collision`, its C text included here: one library), the active joint-limit
sides and the joint-friction coordinates, their rows, ``M^-1 J^T`` on the touched blocks,
the per-contact 3 x 3 Delassus blocks (1 x 1 for a joint limit's or joint friction's row), block projected
Gauss-Seidel with the friction disc (or ODE's box: header ``friction_box``),
the natural-map residual, the integration of the configuration and the re-expression of
the free joints' velocities. The table layouts are described in
:mod:`solvers.contact_step` (they are written by :class:`ContactStepKernel`).
"""
from __future__ import annotations

from ._collision_source import SOURCE as NARROW_PHASE_SOURCE
from ._contact_layout import c_declarations
from ._contact_step_c_linalg import SOURCE as LINALG_SOURCE
from ._contact_step_c_pgs import SOURCE as PGS_SOURCE
from ._contact_step_c_steps import SOURCE as STEPS_SOURCE

__all__: list[str] = []  # private module

VERSION = 19

_TEMPLATE = r"""
#include <math.h>
#include <string.h>

/*@NARROW_PHASE@*/
/*@LAYOUT@*/
/* the narrow phase's work buffer fits its section */
typedef char dbk_narrow_phase_work_fits[(sizeof(cl_work) <= 8 * NARROW_PHASE_WORK) ? 1 : -1];
/*@LINALG@*/
/*@PGS@*/
/*@STEPS@*/
/* returns 0 on success, 1 singular mass matrix */
int dbk_contact_step(const int *it, const double *dt, const double *in, double *out,
                     double *work, int *iwork) {
    const int nq = it[HDR_NQ], nv = it[HDR_NV], nb = it[HDR_NUM_BODIES];
    const int npairs = it[HDR_NUM_CANDIDATES], nc = it[HDR_NUM_CONTACTS];
    const int nblock = it[HDR_NUM_BLOCKS], nj = it[HDR_NUM_JOINTS], nfree = it[HDR_NUM_FREE];
    const int maxit = it[HDR_MAX_SWEEPS], nreach = it[HDR_NUM_REACH];
    const int *blocks = it + it[HDR_BLOCKS], *joints = it + it[HDR_JOINTS];
    const int *frees = it + it[HDR_FREE], *cands = it + it[HDR_CANDIDATES];
    const int *reach_body = it + it[HDR_REACH], *anc = it + it[HDR_ANCESTORS];
    const int *cslot = it + it[HDR_CONTACT_CANDIDATE];
    const double *cand_d = dt + it[HDR_CAND_DOUBLES], *reach = dt + it[HDR_REACH_RADII];
    const double *hD = dt + it[HDR_DAMPING];
    DBK_IN_SECTIONS(in);
    DBK_OUT_SECTIONS(out);
    DBK_WORK_SECTIONS(work);
    DBK_IWORK_SECTIONS(iwork);
    const double h = scal[S_H], mu = scal[S_MU], erp = scal[S_ERP], cfm = scal[S_CFM] / scal[S_H];
    const int biasmode = (int)scal[S_BIAS_MODE];
    const double tol = scal[S_TOL], ittol = scal[S_IT_TOL];
    const int euler = scal[S_EULER_DAMPING] != 0.0;   /* MuJoCo's Euler damping split */
    const double *W = S, *U = S + 3 * nv;
    int i, j, k, r;

    /* 1. block Cholesky of H + h D (of H with the Euler split: damping after the solve) */
    /* (L is read only inside the blocks, which chol_block writes: no zeroing) */
    for (i = 0; i < nv; ++i) tmp[i] = H[i * nv + i];
    for (i = 0; i < nv; ++i) ((double *)H)[i * nv + i] = tmp[i] + (euler ? 0.0 : hD[i]);
    for (k = 0; k < nblock; ++k) {
        if (chol_block_n(H, nv, blocks[BLK_SIZE * k + BLK_START], blocks[BLK_SIZE * k + BLK_LENGTH], L)) {
            for (i = 0; i < nv; ++i) ((double *)H)[i * nv + i] = tmp[i];
            return 1;
        }
    }
    for (i = 0; i < nv; ++i) ((double *)H)[i * nv + i] = tmp[i];
    /* the small blocks' explicit inverses (free bodies: 6 x 6), for Y = M^-1 J^T */
    for (k = 0; k < nblock; ++k)
        if (blocks[BLK_SIZE * k + BLK_LENGTH] <= MINV_MAX)
            chol_inverse_block_n(L, nv, blocks[BLK_SIZE * k + BLK_START], blocks[BLK_SIZE * k + BLK_LENGTH], Minv);

    /* 2. free velocity: v + h M^-1 (tau - c) + h (0, w x v) at free joints */
    for (i = 0; i < nv; ++i) vfree[i] = h * (tau[i] - c[i]);
    for (k = 0; k < nblock; ++k) chol_solve_block_n(L, nv, blocks[BLK_SIZE * k + BLK_START], blocks[BLK_SIZE * k + BLK_LENGTH], vfree);
    for (i = 0; i < nv; ++i) vfree[i] += v[i];
    for (k = 0; k < nfree; ++k) {
        const int vs = frees[FRJ_SIZE * k + FRJ_V_START];
        double a[3];
        cross3(v + vs, v + vs + 3, a);
        for (i = 0; i < 3; ++i) vfree[vs + 3 + i] += h * a[i];
    }
    /* 2b. loop closures eliminated (header closure_projection): v_free -> cproj v_free + cpv,
       and below each row of M^-1 J^T -> cproj (M^-1 J^T) (the constrained Delassus) */
    const int cproj_on = it[HDR_CLOSURE_PROJECTION], fbox = it[HDR_FRICTION_BOX];
    if (cproj_on) affine_map(cproj, cpv, nv, vfree, tmp);

    /* 3. speculative margin: margin + h (s1 + s2), the two largest speed bounds */
    double s1 = 0.0, s2 = 0.0;
    for (k = 0; k < nreach; ++k) {
        const int b = reach_body[k];
        const int a0 = anc[ANC_SIZE * b + ANC_OFFSET], na = anc[ANC_SIZE * b + ANC_COUNT];
        const int *ac = it + a0;
        double w[3] = {0, 0, 0}, u[3] = {0, 0, 0}, vo[3];
        for (j = 0; j < na; ++j) {
            const int cc = ac[j];
            for (i = 0; i < 3; ++i) { w[i] += W[i * nv + cc] * v[cc]; u[i] += U[i * nv + cc] * v[cc]; }
        }
        cross3(w, P + POSE_SIZE * b + POSE_POSITION, vo);
        for (i = 0; i < 3; ++i) vo[i] += u[i];
        double s = sqrt(dot3(vo, vo)) + sqrt(dot3(w, w)) * reach[k];
        if (s > s1) { s2 = s1; s1 = s; } else if (s > s2) s2 = s;
    }
    const double margin = scal[S_MARGIN] + h * (nreach >= 2 ? s1 + s2 : s1);

    /* 4. candidates: the narrow phase of each geometry pair at the current poses gives up
       to its slots' number of points (point, normal, signed distance) within the margin;
       every point is a contact with its rows */
    int na = 0;
    double bscale = 1.0;
    stat[ST_FAILED_CANDIDATE] = -1.0;
    stat[ST_NARROW_PHASE] = 0.0;
    memset(co, 0, (size_t)nc * CO_SIZE * sizeof(double));
    for (int m = 0; m < npairs; ++m) {
        const int *ci = cands + CI * m;
        const double *cd = cand_d + CD * m;
        if (ci[CI_KIND] == KIND_CLOSURE) {
            /* a loop closure's bilateral rows: J and phi from the input, always active,
               bias erp phi / h, an unprojected block G = J M^-1 J^T + cfm / h I (rows past
               num_rows: G's identity, zero J) */
            const int nr = ci[CI_CL_NUM_ROWS], ncol = ci[CI_NUM_COLUMNS];
            const int *cc = it + ci[CI_COLUMNS];
            k = ci[CI_FIRST_CONTACT];
            double *o = co + CO_SIZE * k;
            double *Jk = Jall + 3 * nv * k, *Yk = Y + 3 * nv * k, *Gk = G + 9 * k;
            double dmax = 0.0;
            for (r = 0; r < nr; ++r) if (fabs(cphi[3 * k + r]) > dmax) dmax = fabs(cphi[3 * k + r]);
            o[CO_DISTANCE] = dmax;
            o[CO_ACTIVE] = 1.0;
            act[na++] = k;
            one[k] = 0;
            bil[k] = nr;
            memcpy(Jk, cJ + 3 * nv * k, 3 * nv * sizeof(double));
            for (i = nr * nv; i < 3 * nv; ++i) Jk[i] = 0.0;
            const int *bl = cc + COL_SIZE * ncol;
            for (r = 0; r < 3; ++r) {
                double *y = Yk + r * nv;
                memcpy(y, Jk + r * nv, nv * sizeof(double));
                for (j = 0; j < bl[0]; ++j)
                    chol_solve_block(L, nv, blocks[BLK_SIZE * bl[1 + j] + BLK_START], blocks[BLK_SIZE * bl[1 + j] + BLK_LENGTH], y);
            }
            cfmk[k] = cd[CD_CL_CFM] / h;
            plo[k] = -INFINITY;
            pup[k] = INFINITY;
            const double *wk = warm + WS_SIZE * k;
            double *p0 = o + CO_IMPULSE;
            for (r = 0; r < 3; ++r) {
                for (i = 0; i < 3; ++i) {
                    double s = 0.0;
                    for (j = 0; j < ncol; ++j) { const int col = cc[COL_SIZE * j + COL_COLUMN]; s += Jk[r * nv + col] * Yk[i * nv + col]; }
                    Gk[3 * r + i] = s;
                }
                if (r < nr) Gk[4 * r] += cfmk[k];
                else Gk[4 * r] = 1.0;
                bias[3 * k + r] = r < nr ? cd[CD_CL_ERP] * cphi[3 * k + r] / h : 0.0;
                double jv = bias[3 * k + r];
                for (j = 0; j < ncol; ++j) { const int col = cc[COL_SIZE * j + COL_COLUMN]; jv += Jk[r * nv + col] * vfree[col]; }
                if (fabs(jv) > bscale) bscale = fabs(jv);
                p0[r] = r >= nr ? 0.0 : (r == 0 ? wk[WS_NORMAL] : wk[WS_FRICTION + r - 1]);
            }
            continue;
        }
        if (ci[CI_KIND] == KIND_JOINT_LIMIT || ci[CI_KIND] == KIND_JOINT_FRICTION) {
            /* a one-dof row: a joint limit's side (J = sign e_vi, phi = sign (q_i - bound),
               active within its margin + h |v_i|, p >= 0) or a joint's Coulomb friction
               (J = e_vi, always active, no bias, |p| <= h F); a 1 x 1 block
               G = (M^-1)_ii + cfm / h */
            const int fric = ci[CI_KIND] == KIND_JOINT_FRICTION;
            k = ci[CI_FIRST_CONTACT];
            double *o = co + CO_SIZE * k;
            const int vi = fric ? ci[CI_JF_VELOCITY] : ci[CI_JL_VELOCITY];
            const double sg = fric ? 1.0 : ci[CI_JL_SIGN];
            const double phi = fric ? 0.0 : sg * (q[ci[CI_JL_COORDINATE]] - cd[CD_JL_BOUND]);
            o[CO_DISTANCE] = phi;
            if (!fric && !(phi <= cd[CD_JL_MARGIN] + h * fabs(v[vi]))) continue;
            o[CO_ACTIVE] = 1.0;
            act[na++] = k;
            one[k] = 1;
            double *Jk = Jall + 3 * nv * k, *Yk = Y + 3 * nv * k, *Gk = G + 9 * k;
            for (i = 0; i < 3 * nv; ++i) { Jk[i] = 0.0; Yk[i] = 0.0; }
            Jk[vi] = sg;
            Yk[vi] = sg;
            const int *bl = it + ci[CI_COLUMNS] + COL_SIZE * ci[CI_NUM_COLUMNS];
            for (j = 0; j < bl[0]; ++j)
                chol_solve_block(L, nv, blocks[BLK_SIZE * bl[1 + j] + BLK_START], blocks[BLK_SIZE * bl[1 + j] + BLK_LENGTH], Yk);
            if (cproj_on) affine_map(cproj, NULL, nv, Yk, tmp);
            for (i = 0; i < 9; ++i) Gk[i] = 0.0;
            cfmk[k] = (fric ? cd[CD_JF_CFM] : cd[CD_JL_CFM]) / h;
            Gk[0] = sg * Yk[vi] + cfmk[k];
            bias[3 * k] = fric ? 0.0 : (phi > 0 ? phi / h : cd[CD_JL_ERP] * phi / h);
            bias[3 * k + 1] = bias[3 * k + 2] = 0.0;
            bil[k] = 0;
            plo[k] = fric ? -cd[CD_JF_BOUND] : 0.0;
            pup[k] = fric ? cd[CD_JF_BOUND] : INFINITY;
            const double jv0 = sg * vfree[vi] + bias[3 * k];
            if (fabs(jv0) > bscale) bscale = fabs(jv0);
            const double wn = warm[WS_SIZE * k + WS_NORMAL];
            o[CO_IMPULSE] = wn < plo[k] ? plo[k] : (wn > pup[k] ? pup[k] : wn);
            continue;
        }
        const double off = cd[CD_SP_PAIR_MARGIN];   /* the geometries' margins (MuJoCo's) */
        if (pair_lower_bound(ci, cd, P) > margin + off) continue;   /* broad phase */
        double Xa[POSE_SIZE], Xb[POSE_SIZE];
        world_pose(P, ci[CI_BODY_A], cd + CD_SP_POSE_A, Xa);
        world_pose(P, ci[CI_BODY_B], cd + CD_SP_POSE_B, Xb);
        const int ns = ci[CI_NUM_CONTACTS];
        const int nf = dbk_collide(ci[CI_SP_SHAPE_A], cd + CD_SP_PARAM_A, 0, Xa,
                                   ci[CI_SP_SHAPE_B], cd + CD_SP_PARAM_B, 0, Xb, margin + off, found,
                                   ns, npwork);
        if (nf < 0 || nf > ns) {          /* refused, EPA failed or more points than slots */
            if (stat[ST_FAILED_CANDIDATE] < 0) {
                stat[ST_FAILED_CANDIDATE] = m;
                stat[ST_NARROW_PHASE] = nf;
            }
            continue;
        }
        for (int e = 0; e < nf; ++e) {
            const double *fe = found + NP_SIZE * e;
            k = ci[CI_FIRST_CONTACT] + e;
            double *o = co + CO_SIZE * k;
            double x[3], n[3];
            const double dist = fe[NP_DISTANCE] - off;
            for (i = 0; i < 3; ++i) {
                x[i] = 0.5 * (fe[NP_POINT_A + i] + fe[NP_POINT_B + i]);
                n[i] = fe[NP_NORMAL + i];
            }
            o[CO_DISTANCE] = dist;
            for (i = 0; i < 3; ++i) { o[CO_POINT + i] = x[i]; o[CO_NORMAL + i] = n[i]; }
            if (!(dist <= margin)) continue;
            o[CO_ACTIVE] = 1.0;
            act[na++] = k;
            /* rows n, a1, a2 (a1: world x, y when |n_x| > 0.9, projected; a2 = n x a1) into
               jl: d . (u + w x x) = d . U + (x x d) . W on the signed columns */
            double a1[3], a2[3], aa[3] = {0, 0, 0};
            if (fabs(n[0]) < 0.9) aa[0] = 1.0; else aa[1] = 1.0;
            const double an = dot3(aa, n);
            for (i = 0; i < 3; ++i) a1[i] = aa[i] - an * n[i];
            const double rtn = 1.0 / sqrt(dot3(a1, a1));
            for (i = 0; i < 3; ++i) a1[i] *= rtn;
            cross3(n, a1, a2);
            const int *cc = it + ci[CI_COLUMNS];
            const int ncol = ci[CI_NUM_COLUMNS];
            const double *dirs[3] = {n, a1, a2};
            double xd[3][3];
            for (r = 0; r < 3; ++r) cross3(x, dirs[r], xd[r]);
            double s1 = 0.0, s2 = 0.0;
            for (j = 0; j < ncol; ++j) {
                const int col = cc[COL_SIZE * j + COL_COLUMN];
                const double sg = cc[COL_SIZE * j + COL_SIGN];
                const double uc[3] = {U[col], U[nv + col], U[2 * nv + col]};
                const double wc[3] = {W[col], W[nv + col], W[2 * nv + col]};
                for (r = 0; r < 3; ++r) jl[3 * j + r] = sg * (dot3(dirs[r], uc) + dot3(xd[r], wc));
                s1 += jl[3 * j + 1] * vfree[col];
                s2 += jl[3 * j + 2] * vfree[col];
            }
            /* t1 against B's slip on A at x under v_free (s1, s2 along a1, a2), t2 = n x t1 */
            double t1[3], t2[3];
            const double speed = sqrt(s1 * s1 + s2 * s2);
            if (speed > 1e-12) {
                const double c = -s1 / speed, sn = -s2 / speed;
                for (i = 0; i < 3; ++i) { t1[i] = c * a1[i] + sn * a2[i]; t2[i] = c * a2[i] - sn * a1[i]; }
                for (j = 0; j < ncol; ++j) {
                    const double j1 = jl[3 * j + 1], j2 = jl[3 * j + 2];
                    jl[3 * j + 1] = c * j1 + sn * j2;
                    jl[3 * j + 2] = c * j2 - sn * j1;
                }
            } else {
                for (i = 0; i < 3; ++i) { t1[i] = a1[i]; t2[i] = a2[i]; }
            }
            for (i = 0; i < 3; ++i) { o[CO_T1 + i] = t1[i]; o[CO_T2 + i] = t2[i]; }
            double *Jk = Jall + 3 * nv * k;
            memset(Jk, 0, 3 * nv * sizeof(double));
            for (j = 0; j < ncol; ++j) {
                const int col = cc[COL_SIZE * j + COL_COLUMN];
                for (r = 0; r < 3; ++r) Jk[r * nv + col] = jl[3 * j + r];
            }
            /* Y = M^-1 J^T from jl on the candidate's blocks only (no reader looks elsewhere;
               the closures' map takes full rows) */
            double *Yk = Y + 3 * nv * k;
            const int *bl = it + ci[CI_COLUMNS] + COL_SIZE * ncol;
            const int nbl = bl[0];
            if (cproj_on) memset(Yk, 0, 3 * nv * sizeof(double));
            for (int b = 0; b < nbl; ++b) {
                const int bk = bl[1 + b];
                const int bs = blocks[BLK_SIZE * bk + BLK_START], bn = blocks[BLK_SIZE * bk + BLK_LENGTH];
                if (bn == 6) {                /* a free body: as below, sizes known */
                    double a0[6] = {0}, a1[6] = {0}, a2[6] = {0};
                    for (j = 0; j < ncol; ++j) {
                        const int col = cc[COL_SIZE * j + COL_COLUMN];
                        if (col < bs || col >= bs + 6) continue;
                        const double *m = Minv + col * nv + bs;
                        const double x0 = jl[3 * j], x1 = jl[3 * j + 1], x2 = jl[3 * j + 2];
                        for (i = 0; i < 6; ++i) { a0[i] += m[i] * x0; a1[i] += m[i] * x1; a2[i] += m[i] * x2; }
                    }
                    memcpy(Yk + bs, a0, sizeof a0);
                    memcpy(Yk + nv + bs, a1, sizeof a1);
                    memcpy(Yk + 2 * nv + bs, a2, sizeof a2);
                } else if (bn <= MINV_MAX) {
                    /* column by column: Minv is symmetric, its row col is its column */
                    double a0[MINV_MAX], a1[MINV_MAX], a2[MINV_MAX];
                    for (i = 0; i < bn; ++i) a0[i] = a1[i] = a2[i] = 0.0;
                    for (j = 0; j < ncol; ++j) {
                        const int col = cc[COL_SIZE * j + COL_COLUMN];
                        if (col < bs || col >= bs + bn) continue;
                        const double *m = Minv + col * nv + bs;
                        const double x0 = jl[3 * j], x1 = jl[3 * j + 1], x2 = jl[3 * j + 2];
                        for (i = 0; i < bn; ++i) { a0[i] += m[i] * x0; a1[i] += m[i] * x1; a2[i] += m[i] * x2; }
                    }
                    memcpy(Yk + bs, a0, bn * sizeof(double));
                    memcpy(Yk + nv + bs, a1, bn * sizeof(double));
                    memcpy(Yk + 2 * nv + bs, a2, bn * sizeof(double));
                } else {
                    for (r = 0; r < 3; ++r) {
                        memcpy(Yk + r * nv + bs, Jk + r * nv + bs, bn * sizeof(double));
                        chol_solve_block(L, nv, bs, bn, Yk + r * nv);
                    }
                }
            }
            if (cproj_on) for (r = 0; r < 3; ++r) affine_map(cproj, NULL, nv, Yk + r * nv, tmp);
            /* G = J Y^T and J v_free on the candidate's columns, in one pass (each of the
               twelve sums in column order) */
            double *Gk = G + 9 * k;
            double gs[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, jv[3] = {0, 0, 0};
            for (j = 0; j < ncol; ++j) {
                const int col = cc[COL_SIZE * j + COL_COLUMN];
                const double y0 = Yk[col], y1 = Yk[nv + col], y2 = Yk[2 * nv + col];
                const double vc = vfree[col];
                for (r = 0; r < 3; ++r) {
                    const double jr = jl[3 * j + r];
                    gs[3 * r] += jr * y0; gs[3 * r + 1] += jr * y1; gs[3 * r + 2] += jr * y2;
                    jv[r] += jr * vc;
                }
            }
            for (i = 0; i < 9; ++i) Gk[i] = gs[i];
            for (r = 0; r < 3; ++r) Gk[4 * r] += cfm;
            cfmk[k] = cfm;
            plo[k] = 0.0;
            pup[k] = INFINITY;
            one[k] = 0;
            bil[k] = 0;
            bias[3 * k] = (biasmode == 1 || dist > 0) ? dist / h : erp * dist / h;
            bias[3 * k + 1] = bias[3 * k + 2] = 0.0;
            /* scale of the acceptance: |J v_free + b| */
            jv[0] += bias[3 * k];
            for (r = 0; r < 3; ++r) if (fabs(jv[r]) > bscale) bscale = fabs(jv[r]);
            /* warm start: last step's normal impulse and world friction impulse */
            const double *wk = warm + WS_SIZE * k, *wf = wk + WS_FRICTION;
            double *p0 = o + CO_IMPULSE;
            p0[0] = wk[WS_NORMAL] > 0 ? wk[WS_NORMAL] : 0.0;
            p0[1] = wf[0] * t1[0] + wf[1] * t1[1] + wf[2] * t1[2];
            p0[2] = wf[0] * t2[0] + wf[1] * t2[1] + wf[2] * t2[2];
            friction_project(p0 + 1, p0 + 2, mu * p0[0], fbox);
        }
    }

    /* 5. block projected Gauss-Seidel in velocity form: vel = v_free + sum Y_k p_k */
    memcpy(vel, vfree, nv * sizeof(double));
    for (j = 0; j < na; ++j) {
        k = act[j];
        const double *pk = co + CO_SIZE * k + CO_IMPULSE, *Yk = Y + 3 * nv * k;
        add_y(it, cands, blocks, k, nv, Yk, pk[0], pk[1], pk[2], vel);
    }
    pack_rows(na, act, it, cands, blocks, nv, Jall, Y, Jc, Yc, jo, yo);
    /* per slot the sweeps' constants: 1 / G_nn; the tangent block's inverse [[c, -b],
       [-b, a]] / det (when it is not singular) and its largest eigenvalue g, 1 / g */
    for (j = 0; j < na; ++j) {
        k = act[j];
        const double *Gk = G + 9 * k;
        double *gk = gi + GI_SIZE * k;
        gk[0] = 1.0 / Gk[0];
        const double a = Gk[4], b = 0.5 * (Gk[5] + Gk[7]), cdd = Gk[8];
        const double det = a * cdd - b * b;
        gk[6] = det > 1e-300 * (a * cdd + 1e-300);
        gk[1] = cdd / det; gk[2] = b / det; gk[3] = a / det;
        gk[4] = lmax2(a, b, cdd);
        gk[5] = 1.0 / gk[4];
    }
    int iter = 0, last_polish = 0, gap = POLISH_GAP, newton = 1;   /* newton: see the polish */
    double change = 0.0;
    for (iter = 0; iter < maxit && na > 0; ++iter) {
        change = 0.0;
        for (j = 0; j < na; ++j) {
            k = act[j];
            const int *ci = cands + CI * cslot[k];
            const int *cc = it + ci[CI_COLUMNS];
            const int ncol = ci[CI_NUM_COLUMNS];
            const int *bl = cc + COL_SIZE * ncol;
            double *pk = co + CO_SIZE * k + CO_IMPULSE;
            const double *jc = Jc + jo[j], *yc = Yc + yo[j], *Gk = G + 9 * k;
            double w[3], s0 = 0.0, s1 = 0.0, s2 = 0.0;   /* three rows in one pass (each in column order) */
            for (i = 0; i < ncol; ++i, jc += 3) {
                const double vc = vel[cc[COL_SIZE * i + COL_COLUMN]];
                s0 += jc[0] * vc; s1 += jc[1] * vc; s2 += jc[2] * vc;
            }
            w[0] = s0 + cfmk[k] * pk[0]; w[1] = s1 + cfmk[k] * pk[1]; w[2] = s2 + cfmk[k] * pk[2];
            for (r = 0; r < 3; ++r) w[r] += bias[3 * k + r];
            if (bil[k]) {              /* a closure: its unprojected block solved exactly */
                double d[3];
                solve_sym3(Gk, w, d);
                double ch = 0.0;
                for (r = 0; r < 3; ++r) {
                    if (fabs(d[r]) * Gk[4 * r] > ch) ch = fabs(d[r]) * Gk[4 * r];
                    pk[r] += d[r];
                }
                if (ch > change) change = ch;
                if (ch != 0.0) add_yc(bl, blocks, yc, d[0], d[1], d[2], vel);
                continue;
            }
            /* normal */
            const double om = iter < 2 ? 1.0 : OMEGA;   /* plain sweeps before the first polish */
            const double *gk = gi + GI_SIZE * k;
            double pn = pk[0] - om * w[0] * gk[0];
            if (pn < plo[k]) pn = plo[k];
            if (pn > pup[k]) pn = pup[k];
            double dpn = pn - pk[0];
            if (one[k]) {                               /* a 1 x 1 block: no friction */
                const double ch = fabs(dpn) * Gk[0];
                if (ch > change) change = ch;
                pk[0] = pn;
                if (dpn != 0.0) add_yc(bl, blocks, yc, dpn, 0.0, 0.0, vel);
                continue;
            }
            /* tangent: exact 2x2 stick if inside the disc, else projected step 1/lambda_max */
            double wt1 = w[1] + Gk[3] * dpn, wt2 = w[2] + Gk[6] * dpn;
            double lim = mu * pn, pt1 = 0.0, pt2 = 0.0;
            int inside = 0;                  /* (squared lengths: no square root to test) */
            if (gk[6] != 0.0) {
                pt1 = pk[1] - om * (gk[1] * wt1 - gk[2] * wt2);
                pt2 = pk[2] - om * (gk[3] * wt2 - gk[2] * wt1);
                inside = fbox ? fabs(pt1) <= lim && fabs(pt2) <= lim : pt1 * pt1 + pt2 * pt2 <= lim * lim;
            }
            const double g = gk[4];
            if (!inside) {
                pt1 = pk[1] - wt1 * gk[5];
                pt2 = pk[2] - wt2 * gk[5];
                const double t2 = pt1 * pt1 + pt2 * pt2;
                if (fbox) friction_project(&pt1, &pt2, lim, 1);
                else if (t2 > lim * lim) {
                    const double tt = sqrt(t2), f = tt > 0 ? lim / tt : 0.0;
                    pt1 *= f; pt2 *= f;
                }
            }
            double d1 = pt1 - pk[1], d2 = pt2 - pk[2];
            double ch = fabs(dpn) * Gk[0];
            if (fabs(d1) * g > ch) ch = fabs(d1) * g;
            if (fabs(d2) * g > ch) ch = fabs(d2) * g;
            if (ch > change) change = ch;
            pk[0] = pn; pk[1] = pt1; pk[2] = pt2;
            if (dpn != 0.0 || d1 != 0.0 || d2 != 0.0)
                add_yc(bl, blocks, yc, dpn, d1, d2, vel);
        }
        if (change <= ittol * bscale) { ++iter; break; }
        /* polish on PGS's active set (after the first sweep: a warm start's set; later once
           PGS is close, so that its set is likely right, and every POLISH_EVERY sweeps);
           keep it when it is exact */
        if (iter == 1 || (change < 1e-6 * bscale && iter - last_polish >= gap)
            || iter - last_polish >= POLISH_EVERY) {
            last_polish = iter;
            if (iter > 1) gap *= 2;        /* a polish that does not end the step: back off */
            for (j = 0; j < na; ++j) memcpy(psave + 3 * j, co + CO_SIZE * act[j] + CO_IMPULSE, 3 * sizeof(double));
            const double r0 = residual(na, act, it, cands, nv, co, Jall, G, bias, vel, mu, cfmk, plo, pup, one, bil, fbox);
            /* sliding law by Newton (fixed directions after a Newton miss, or if it fails) */
            int got = polish(na, act, it, cands, nv, co, Jall, Y, bias, vfree, mu, cfmk, plo, pup,
                             one, bil, Mp, xp, dsl, idn, idt, pmode, prow, blocks, psol2, vtmp,
                             ittol * bscale, vel, wsl, newton, fbox);
            if (!got && newton && !fbox)
                got = polish(na, act, it, cands, nv, co, Jall, Y, bias, vfree, mu, cfmk, plo, pup,
                             one, bil, Mp, xp, dsl, idn, idt, pmode, prow, blocks, psol2, vtmp,
                             ittol * bscale, vel, wsl, 0, fbox);
            if (got) {
                /* exact on the right active set: done; else keep whichever point is better
                   (the polished one often is, and PGS continues from it) */
                rebuild_vel(na, act, it, cands, blocks, nv, co, Y, vfree, vtmp);
                const double r1 = residual(na, act, it, cands, nv, co, Jall, G, bias, vtmp, mu, cfmk, plo, pup, one, bil, fbox);
                if (r1 <= ittol * bscale) { memcpy(vel, vtmp, nv * sizeof(double)); ++iter; break; }
                newton = !newton;     /* a point not ending the step: the other kind next */
                if (r1 < r0) memcpy(vel, vtmp, nv * sizeof(double));
                else {
                    for (j = 0; j < na; ++j) memcpy(co + CO_SIZE * act[j] + CO_IMPULSE, psave + 3 * j, 3 * sizeof(double));
                }
            }
        }
    }

    /* 6. the velocity from the impulses (fixed order), the residual, J^T p / h */
    memcpy(vn, vfree, nv * sizeof(double));
    for (i = 0; i < nv; ++i) tauc[i] = 0.0;
    for (j = 0; j < na; ++j) {
        k = act[j];
        const int *ci = cands + CI * cslot[k];
        const int *cc = it + ci[CI_COLUMNS];
        const int ncol = ci[CI_NUM_COLUMNS];
        const int *bl = cc + COL_SIZE * ncol;
        const double *pk = co + CO_SIZE * k + CO_IMPULSE, *Yk = Y + 3 * nv * k, *Jk = Jall + 3 * nv * k;
        /* Y_k is zero off the candidate's blocks, J_k off its columns */
        for (r = 0; r < 3; ++r) {
            if (pk[r] == 0.0) continue;
            const double *y = Yk + r * nv, *jr = Jk + r * nv, pr = pk[r];
            for (int b = 0; b < bl[0]; ++b) {
                const int s = blocks[BLK_SIZE * bl[1 + b] + BLK_START];
                const int e = s + blocks[BLK_SIZE * bl[1 + b] + BLK_LENGTH];
                for (i = s; i < e; ++i) vn[i] += y[i] * pr;
            }
            const double prh = pr / h;
            for (i = 0; i < ncol; ++i) { const int col = cc[COL_SIZE * i + COL_COLUMN]; tauc[col] += jr[col] * prh; }
        }
    }
    double res = 0.0;
    for (j = 0; j < na; ++j) {
        k = act[j];
        const int *ci = cands + CI * cslot[k];
        const int *cc = it + ci[CI_COLUMNS];
        const int ncol = ci[CI_NUM_COLUMNS];
        double *o = co + CO_SIZE * k, *pk = o + CO_IMPULSE;
        const double *Jk = Jall + 3 * nv * k, *Gk = G + 9 * k;
        double w[3];
        for (r = 0; r < 3; ++r) {
            double s = 0.0;
            for (i = 0; i < ncol; ++i) { const int col = cc[COL_SIZE * i + COL_COLUMN]; s += Jk[r * nv + col] * vn[col]; }
            w[r] = s;
        }
        o[CO_SLIP] = w[1];                  /* slip along t1, t2 at the new velocity */
        o[CO_SLIP + 1] = w[2];
        for (r = 0; r < 3; ++r) w[r] += cfmk[k] * pk[r];
        for (r = 0; r < 3; ++r) w[r] += bias[3 * k + r];
        double rb = block_residual(pk, w, Gk, mu, one[k] ? 1 : (bil[k] ? 2 : 0), plo[k], pup[k], fbox);
        if (rb > res) res = rb;
        /* warm start for the next step: normal impulse, world friction impulse */
        for (i = 0; i < 3; ++i)
            o[CO_WARM + WS_FRICTION + i] = pk[1] * o[CO_T1 + i] + pk[2] * o[CO_T2 + i];
        if (bil[k]) {                       /* a closure's rows 1, 2 as they are */
            o[CO_WARM + WS_FRICTION] = pk[1];
            o[CO_WARM + WS_FRICTION + 1] = pk[2];
            o[CO_WARM + WS_FRICTION + 2] = 0.0;
        }
        o[CO_WARM + WS_NORMAL] = pk[0];
        /* the block's impulses: normals first, then (t1, t2) per contact */
        imp[j] = pk[0];
        imp[na + 2 * j] = pk[1];
        imp[na + 2 * j + 1] = pk[2];
    }
    for (k = 0; k < nc; ++k)
        memcpy(wout + WS_SIZE * k, co + CO_SIZE * k + CO_WARM, WS_SIZE * sizeof(double));
    stat[ST_CONVERGED] = (res <= tol * bscale && stat[ST_FAILED_CANDIDATE] < 0) ? 1.0 : 0.0;
    stat[ST_SWEEPS] = iter;
    stat[ST_ACTIVE_CONTACTS] = na;
    stat[ST_RESIDUAL] = res / bscale;
    stat[ST_MARGIN] = margin;

    /* 6b. MuJoCo's Euler split: the constraints held v_M = vn; the damping is implicit on
       the resulting acceleration, vn = v + (H + h D)^-1 H (v_M - v) (block by block; the
       factor of H is no longer needed: L takes H + h D); the slips at the new vn */
    if (euler) {
        for (i = 0; i < nv; ++i) vtmp[i] = vn[i] - v[i];
        for (k = 0; k < nblock; ++k) {
            const int s = blocks[BLK_SIZE * k + BLK_START], n = blocks[BLK_SIZE * k + BLK_LENGTH];
            for (i = s; i < s + n; ++i) {
                double t = 0.0;
                for (j = s; j < s + n; ++j) t += H[i * nv + j] * vtmp[j];
                tmp[i] = t;
            }
        }
        for (i = 0; i < nv; ++i) vtmp[i] = H[i * nv + i];
        for (i = 0; i < nv; ++i) ((double *)H)[i * nv + i] = vtmp[i] + hD[i];
        int bad = 0;
        for (k = 0; k < nblock && !bad; ++k)
            bad = chol_block(H, nv, blocks[BLK_SIZE * k + BLK_START], blocks[BLK_SIZE * k + BLK_LENGTH], L);
        for (i = 0; i < nv; ++i) ((double *)H)[i * nv + i] = vtmp[i];
        if (bad) return 1;
        for (k = 0; k < nblock; ++k) chol_solve_block(L, nv, blocks[BLK_SIZE * k + BLK_START], blocks[BLK_SIZE * k + BLK_LENGTH], tmp);
        for (i = 0; i < nv; ++i) vn[i] = v[i] + tmp[i];
        for (j = 0; j < na; ++j) {
            k = act[j];
            const int *ci = cands + CI * cslot[k];
            const int *cc = it + ci[CI_COLUMNS];
            const int ncol = ci[CI_NUM_COLUMNS];
            const double *Jk = Jall + 3 * nv * k;
            for (r = 1; r < 3; ++r) {
                double t = 0.0;
                for (i = 0; i < ncol; ++i) { const int col = cc[COL_SIZE * i + COL_COLUMN]; t += Jk[r * nv + col] * vn[col]; }
                co[CO_SIZE * k + CO_SLIP + r - 1] = t;
            }
        }
    }

    integrate_joints(joints, nj, frees, nfree, q, h, vn, qn);   /* 7., 8. (q, free joints) */
    for (i = 0; i < nv; ++i) acc[i] = (vn[i] - v[i]) / h;
    return 0;
}
"""

SOURCE = (_TEMPLATE.replace("/*@NARROW_PHASE@*/", NARROW_PHASE_SOURCE)
          .replace("/*@LAYOUT@*/", c_declarations()).replace("/*@LINALG@*/", LINALG_SOURCE)
          .replace("/*@PGS@*/", PGS_SOURCE).replace("/*@STEPS@*/", STEPS_SOURCE))
"""The C source with the layout of :mod:`solvers._contact_layout` generated into it."""

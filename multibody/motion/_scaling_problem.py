"""The least-squares problem of the segment-scaling fit and its Levenberg-Marquardt steps
(private; used by :func:`multibody.motion.fit_segment_scales`, whose module docstring
states the problem: marker residuals over the frames' poses, the segment scales and the
marker offsets, with priors and joint limits; the pose blocks eliminated by their Schur
complement)."""
from __future__ import annotations

import numpy as np

__all__: list[str] = []  # private module


class ScalingProblem:
    """The joint least-squares problem of :func:`~multibody.motion.fit_segment_scales` (see
    :mod:`multibody.motion.scaling`) and its Levenberg-Marquardt steps."""

    def __init__(self, tree, fun, X, weights, q_ref, pose_prior, scale_prior, offset_prior,
                 n_scales, fit_scales, fit_offsets, bounds, held=()):
        self.tree, self.fun, self.X = tree, fun, X
        K, M = X.shape[0], X.shape[1]
        vis = np.all(np.isfinite(X), axis=2)
        self.rows = [np.repeat(v, 3) for v in vis]
        self.target = [X[k][vis[k]].ravel() for k in range(K)]
        self.wr = [np.repeat(weights[vis[k]], 3) for k in range(K)]
        self.q_ref, self.lq = q_ref, float(pose_prior)
        self.ls, self.ld = float(scale_prior), float(offset_prior)
        self.S, self.M = n_scales, M
        # parameter columns: the scales, then the offsets (each only when fitted)
        # (the markers ``held`` keep their nominal placement: no offset columns)
        free = np.setdiff1d(np.arange(M), np.asarray(held, int))
        ocols = (3 * free[:, None] + np.arange(3)).ravel()
        self.pcols = np.concatenate([np.arange(n_scales) if fit_scales else [],
                                     n_scales + ocols if fit_offsets else []]
                                    ).astype(int)
        self.lo_s, self.hi_s = bounds
        nv = tree.nv
        self.prior_v = np.array([j.v_start + k for j in tree.joints if j.type != "free"
                                 for k in range(j.nv)], dtype=int)
        lo, hi = tree.position_limits()
        self.lo, self.hi = np.asarray(lo, float), np.asarray(hi, float)
        lim_q, lim_v = [], []
        for j in tree.joints:
            if j.type in ("free", "ball") or j.nq != j.nv:
                continue
            for k in range(j.nq):
                if np.isfinite(self.lo[j.q_start + k]) or np.isfinite(self.hi[j.q_start + k]):
                    lim_q.append(j.q_start + k)
                    lim_v.append(j.v_start + k)
        self.lim_q, self.lim_v = np.array(lim_q, int), np.array(lim_v, int)
        self.nv = nv

    # params p = [s; d] (all of them; only pcols move)
    def evaluate(self, Q, p):
        s, d = p[:self.S], p[self.S:]
        out, cost = [], 0.0
        for k, q in enumerate(Q):
            pk, Jv, Js, Jd = self.fun(q, s, d)
            rows, w = self.rows[k], self.wr[k]
            r = (np.asarray(pk)[rows] - self.target[k]) * w
            Jv = np.asarray(Jv)[rows] * w[:, None]
            Jp = np.hstack([np.asarray(Js).reshape(len(pk), -1),
                            np.asarray(Jd)])[rows][:, self.pcols] * w[:, None]
            rq = self.lq * np.asarray(self.tree.difference(self.q_ref, q)).ravel()[self.prior_v]
            cost += float(r @ r + rq @ rq)
            out.append((r, Jv, Jp, rq))
        rs = self.ls * (s - 1.0)
        rd = self.ld * d
        rp = np.concatenate([rs, rd])[self.pcols]
        lam = np.concatenate([np.full(self.S, self.ls), np.full(3 * self.M, self.ld)])[self.pcols]
        cost += float(rs @ rs + rd @ rd)
        return cost, out, rp, lam

    def step(self, Q, p, lin, mu):
        """One damped Gauss-Newton step ``(dv (K, nv), dp (P,), predicted decrease)`` with the
        coordinates resting on a bound and pushed outward held (three active-set passes)."""
        frames, rp, lam = lin
        K, nv, P = len(Q), self.nv, self.pcols.size
        blocks = []
        Hpp = np.diag(lam ** 2)
        gp = lam * rp
        for r, Jv, Jp, rq in frames:
            Hvv = Jv.T @ Jv
            Hvv[self.prior_v, self.prior_v] += self.lq ** 2
            gv = Jv.T @ r
            gv[self.prior_v] += self.lq * rq
            blocks.append((Hvv, Jv.T @ Jp, gv))
            Hpp += Jp.T @ Jp
            gp += Jp.T @ r
        free_v = [np.ones(nv, bool) for _ in range(K)]
        free_p = np.ones(P, bool)
        s_idx = np.flatnonzero(self.pcols < self.S)
        for _ in range(3):
            dv, dp = self._solve(blocks, Hpp, gp, free_v, free_p, mu)
            changed = False
            if self.lim_q.size:
                for k in range(K):
                    ql, st = Q[k][self.lim_q], dv[k][self.lim_v]
                    out = ((ql <= self.lo[self.lim_q] + 1e-12) & (st < 0)) | \
                          ((ql >= self.hi[self.lim_q] - 1e-12) & (st > 0))
                    if out.any() and free_v[k][self.lim_v[out]].any():
                        free_v[k][self.lim_v[out]] = False
                        changed = True
            if s_idx.size:
                sv, st = p[self.pcols[s_idx]], dp[s_idx]
                out = (((sv <= self.lo_s + 1e-12) & (st < 0))
                       | ((sv >= self.hi_s - 1e-12) & (st > 0)))
                if out.any() and free_p[s_idx[out]].any():
                    free_p[s_idx[out]] = False
                    changed = True
            if not changed:
                break
        # predicted decrease of the linearised cost (undamped model)
        pred = 0.0
        for (r, Jv, Jp, rq), dvk in zip(frames, dv):
            rl = r + Jv @ dvk + Jp @ dp
            rql = rq + self.lq * dvk[self.prior_v]
            pred += float(r @ r + rq @ rq - rl @ rl - rql @ rql)
        rpl = rp + lam * dp
        pred += float(rp @ rp - rpl @ rpl)
        return dv, dp, pred

    @staticmethod
    def _solve(blocks, Hpp, gp, free_v, free_p, mu):
        """Schur complement of the per-frame pose blocks (module docstring)."""
        fp = np.flatnonzero(free_p)
        Sred = Hpp[np.ix_(fp, fp)].copy()
        Sred += mu * (np.diag(np.diag(Sred)) + np.eye(fp.size))
        rhs = -gp[fp].copy()
        sols = []
        for (Hvv, Hvp, gv), fv in zip(blocks, free_v):
            f = np.flatnonzero(fv)
            A = Hvv[np.ix_(f, f)]
            A = A + mu * (np.diag(np.diag(A)) + np.eye(f.size))
            B = Hvp[np.ix_(f, fp)]
            Z = np.linalg.solve(A, np.column_stack([B, gv[f]]))
            Sred -= B.T @ Z[:, :-1]
            rhs += B.T @ Z[:, -1]
            sols.append((f, Z))
        dpf = np.linalg.solve(Sred, rhs) if fp.size else np.zeros(0)
        dp = np.zeros(free_p.size)
        dp[fp] = dpf
        dv = []
        for (f, Z), fv in zip(sols, free_v):
            x = np.zeros(fv.size)
            x[f] = -(Z[:, -1] + Z[:, :-1] @ dpf)
            dv.append(x)
        return dv, dp

    def move(self, Q, p, dv, dp):
        Qn = np.array([np.asarray(self.tree.integrate(q, v, 1.0), float).ravel()
                       for q, v in zip(Q, dv)])
        if self.lim_q.size:
            Qn[:, self.lim_q] = np.clip(Qn[:, self.lim_q], self.lo[self.lim_q],
                                        self.hi[self.lim_q])
        pn = p.copy()
        pn[self.pcols] += dp
        pn[:self.S] = np.clip(pn[:self.S], self.lo_s, self.hi_s)
        return Qn, pn

"""Unilateral part of :class:`~multibody.plants.RigidBodySystem`: the acceleration-level
complementarity problem of the sites in contact, for the modes chosen by
:mod:`._rbs_modes`.

Acceleration problem (Baraff 1994)
----------------------------------
With ``M^{-1}`` the inverse mass matrix, rows ``a = J_a vdot + b`` and forces acting as
``J_f^T x`` (``J_f = J_a`` except for sliding normal rows, which carry the friction
``-mu f_n s``, ``s`` the point's unit slip),

.. math::

    a = J_a M^{-1} J_f^T x + J_a M^{-1} (\tau - c) + b ,

a boxed LCP in ``x``: equality rows free (``a = 0``), normal rows ``x >= 0 _|_ a >= 0``,
sticking points two tangent rows ``a_t = 0`` with the friction in Coulomb's circle
``|f_t| <= mu f_n``.

Friction circle. The solve first holds every row active with unbounded friction
(``A x = -b``, minimum norm): these are the forces that keep the current modes. When every
normal force is ``>= 0`` and each sticking site's total friction lies in the circle,
``|sum f_t| <= mu sum f_n``, that is the answer (every solution of ``A x = -b`` gives the
same ``J^T x`` when ``A = J M^-1 J^T``, so how the minimum-norm answer shares the load
among a site's coplanar points does not change the accelerations). Otherwise the LCP
decides, with each sticking point's tangent pair turned so that its first tangent lies
along the friction that sticking needs: the per-row bound ``|x_t1| <= mu x_n`` is then the
circle where it binds (fixed world-aligned tangents would let ``|f_t|`` reach
``sqrt(2) mu f_n`` at 45 degrees and hold a box that must slide).

Solved by :func:`solvers.lcp.solve_boxed_lcp` (Dantzig, then Lemke, then projected
Gauss-Seidel) with a tiny diagonal ``REGULARIZATION`` on the contact rows; a pivoting
that meets a singular basis (identical rows of redundant contacts) is retried with
``RETRY_REGULARIZATION``. No verified solution raises :class:`PainleveError` (an
inconsistent configuration, e.g. Painleve's paradox, or the pivoting failing even when
regularized), naming the system.

References
----------
D. Baraff, "Fast contact force computation for nonpenetrating rigid bodies", SIGGRAPH
1994. R. W. Cottle, J.-S. Pang and R. E. Stone, *The Linear Complementarity Problem*, 1992.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from solvers import lcp
from solvers.lcp import LCPFallbackWarning
from ..constraints import ContactResults, PointContactResult
from ..errors import PainleveError
from .solutions import RigidBodySolution

__all__ = ["PainleveError", "SiteSolution", "solve_accelerations", "assemble", "cho_inv",
           "regularized_lcp", "turn_pairs", "ACCEPT_RESIDUAL", "REGULARIZATION", "RETRY_REGULARIZATION",
           "SLIP_BLEND_SPEED"]

SLIP_BLEND_SPEED = 1e-4
"""A sliding point's friction opposes ``v_t + max(0, SLIP_BLEND_SPEED - |v_t|) s_0`` (m/s;
``s_0`` the site's slip direction at mode entry): its slip direction above this speed,
turned continuously (no jump for the integrator to resolve) into ``s_0`` as the slip
vanishes: at slide entry the direction of a vanishing slip velocity is noise, and a
straight slip keeps its friction constant through its stop (until ``v_t . s_0 <
-SLIP_BLEND_SPEED / 2``), so the stop guard crosses zero on a smooth trajectory."""
ACCEPT_RESIDUAL = 1e-6
"""An LCP answer the pivoting solvers flag "inaccurate" (degenerate contact sets) is
accepted when its natural-map residual is below this (relative to max(1, |b|)); the
active-set polish that follows then makes it exact."""
REGULARIZATION = 1e-10
"""Relative diagonal added to the unilateral block of the contact LCP."""
RETRY_REGULARIZATION = 1e-7
"""Relative diagonal of the retry when the pivoting meets a singular basis."""


@dataclass
class SiteSolution:
    """Solved rows of one site in contact: its points and forces (world axes)."""

    index: int
    points: list
    fn: np.ndarray
    ft: np.ndarray
    at: np.ndarray


def cho_inv(sys, H, t):
    """``H^{-1}`` (nv x nv) by Cholesky; ValueError naming ``sys`` if ``H`` is not
    positive definite."""
    try:
        return sla.cho_solve(sla.cho_factor(H), np.eye(H.shape[0]))
    except (np.linalg.LinAlgError, ValueError):
        raise ValueError(f"RigidBodySystem '{sys.name}' at t={t:.6g}: the mass matrix is not "
                         "positive definite (a massless body on a moving joint?)") from None


def _site_rows(sys, q, v, modes):
    """Gather the unilateral rows of the sites in contact."""
    Ja, Jf, b, lo, hi, fi, owners = [], [], [], [], [], [], []
    sites = []
    for k, ((blk, i), mode) in enumerate(zip(sys.sites, modes)):
        if mode is None:
            continue
        pts = blk.site_points(q, v, i)
        rec = []
        for p in pts:
            n_idx = len(b)
            Ja.append(p.Jn)
            b.append(p.jdv_n + blk.alpha * p.vn + blk.beta * p.phi)
            lo.append(0.0), hi.append(np.inf), fi.append(-1)
            jf = p.Jn
            t_idx = None
            if p.Jt is not None and p.mu > 0:
                if mode[0] == "slide":
                    # the slip direction, turning smoothly into the site's entry
                    # direction as the slip vanishes (a continuous right-hand side)
                    w = max(0.0, SLIP_BLEND_SPEED - float(np.linalg.norm(p.vt)))
                    s2 = p.vt + w * (p.tangents @ mode[1])
                    s2 = s2 / max(float(np.linalg.norm(s2)), 1e-300)
                    jf = p.Jn - p.mu * (s2 @ p.Jt)
                    rec.append((p, n_idx, None, -p.mu * (s2 @ p.tangents), p.tangents))
                else:
                    t_idx = len(b)
                    Jf.append(jf)
                    owners.append(k)
                    for r in range(2):
                        Ja.append(p.Jt[r])
                        Jf.append(p.Jt[r])
                        b.append(p.jdv_t[r] + blk.alpha * p.vt[r])
                        lo.append(-p.mu), hi.append(p.mu), fi.append(n_idx)
                        owners.append(k)
                    rec.append((p, n_idx, t_idx, None, p.tangents))
                    continue
            else:
                rec.append((p, n_idx, None, None, p.tangents))
            Jf.append(jf)
            owners.append(k)
        sites.append((k, rec))
    return Ja, Jf, b, lo, hi, fi, sites


class _SingularLCP(Exception):
    """The pivoting met a singular basis (a numerical failure, not a proof that the
    contact problem has no solution); caught by :func:`_regularized_lcp`."""


def _lcp(sys, A, bb, lo, hi, fi, t, what):
    singular = None
    with warnings.catch_warnings():
        # a failed Dantzig solve (unsymmetric sliding rows) falls back to Lemke quietly;
        # a failure of both is reported below
        warnings.simplefilter("ignore", LCPFallbackWarning)
        try:
            res = lcp.solve_boxed_lcp(A, bb, lo, hi, fi, method="dantzig", fallback="lemke")
        except np.linalg.LinAlgError as err:
            raise _SingularLCP(str(err)) from None
        if res.status in ("singular", "breakdown"):   # a (numerically) singular basis
            singular = res.message
        if not res.success:
            # degenerate friction problems (coplanar corners at the stick/slip threshold)
            # can defeat both pivoting methods; projected Gauss-Seidel still converges
            pgs = lcp.solve_boxed_lcp(A, bb, lo, hi, fi, method="pgs", x0=res.x, max_iter=2000)
            if pgs.success or pgs.residual < res.residual:
                res = pgs
    scale = max(1.0, float(np.max(np.abs(bb))) if bb.size else 1.0)
    if not res.success and not (res.status == "inaccurate" and res.residual <= ACCEPT_RESIDUAL * scale):
        if singular is not None:
            raise _SingularLCP(singular)
        raise PainleveError(
            f"RigidBodySystem '{sys.name}' at t={t:.9g}: the {what} problem has no solution "
            f"({res.status}, residual {res.residual:.3g}): the contact configuration is "
            "inconsistent (Painleve's paradox: with this friction the normal force would have "
            "to be negative or unbounded); not integrating it")
    return res.x


def regularized_lcp(sys, A, bb, lo, hi, fi, rows, t, what, regs):
    """:func:`_lcp` with ``reg * max(1, mean |A_ii|)`` added to the diagonal of ``rows``,
    for each ``reg`` of ``regs`` in turn while the pivoting meets a singular basis (the
    identical rows of redundant contacts can defeat it); then :class:`PainleveError`
    naming the system. Returns ``(x, reg)``."""
    base = max(1.0, float(np.mean(np.abs(np.diag(A)[rows])))) if rows.size else 1.0
    last = None
    for reg in regs:
        Ar = A
        if reg:
            Ar = A.copy()
            Ar[rows, rows] += reg * base
        try:
            return _lcp(sys, Ar, bb, lo, hi, fi, t, what), reg
        except _SingularLCP as err:
            last = err
    raise PainleveError(
        f"RigidBodySystem '{sys.name}' at t={t:.9g}: the {what} problem could not be solved: "
        f"the pivoting met a singular basis ({last}) even with the regularization raised to "
        f"{regs[-1]:g} (redundant or degenerate contact rows)")


def _all_active(A, b, lo, hi, fi, groups):
    """The common case first: every row active (``A x + b = 0``, minimum-norm least
    squares, which also splits the load evenly over redundant contact points). Returned
    when it is consistent and within the bounds, else None (the LCP decides): every normal
    force ``x_n >= 0`` and, per sticking site, the total friction in Coulomb's circle,
    ``|sum f_t| <= mu sum f_n`` (``groups``: per site ``(mu, normal rows, tangent row
    pairs, tangents)``). The circle is checked on the site's totals because a site's
    coplanar points share their load as the body needs: every solution of ``A x = -b``
    gives the same generalized force ``J^T x`` (``A = J M^-1 J^T``), so the accelerations
    do not depend on how the minimum-norm answer splits the friction among the points."""
    x = -np.linalg.pinv(A, rcond=1e-12) @ b
    scale = max(1.0, float(np.max(np.abs(b))))
    if not np.all(np.isfinite(x)) or np.max(np.abs(A @ x + b)) > 1e-10 * scale:
        return None
    tol = 1e-12 * max(1.0, float(np.max(np.abs(x))))
    plain = fi < 0
    if not (np.all(x[plain] >= lo[plain] - tol) and np.all(x[plain] <= hi[plain] + tol)):
        return None
    for mu, normals, pairs, tangents in groups:
        fn = float(np.sum(x[normals]))
        ft = sum(x[i] * T[0] + x[i + 1] * T[1] for i, T in zip(pairs, tangents))
        if np.linalg.norm(ft) > mu * fn + tol:
            return None
    return x


def _all_inactive(A, b, meq, fi):
    """The other easy case: no unilateral force (every site separating at this instant);
    the equality rows alone, then every normal row must have ``a >= 0``. Returns x or None."""
    x = np.zeros(b.shape[0])
    if meq:
        x[:meq] = -np.linalg.pinv(A[:meq, :meq], rcond=1e-12) @ b[:meq]
    a = A @ x + b
    normal = np.flatnonzero(fi < 0) + meq
    scale = max(1.0, float(np.max(np.abs(b))))
    if np.all(np.isfinite(x)) and (normal.size == 0 or np.min(a[normal]) >= -1e-12 * scale):
        return x
    return None


def _polish(A, b, x, lo, hi, fi):
    """Re-solve the rows the regularized LCP left free (``lo < x < hi``) exactly, with the
    other rows fixed at their bounds: ``A_SS x_S = -(b_S + A_SF x_F)`` in the minimum-norm
    least-squares sense. Kept only if it stays within the (friction) bounds."""
    lo_e, hi_e = lo.copy(), hi.copy()
    f = fi >= 0
    lo_e[f] = -np.abs(lo[f] * x[fi[f]])
    hi_e[f] = np.abs(hi[f] * x[fi[f]])
    tol = 1e-9 * max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)
    free = (x > lo_e + tol) & (x < hi_e - tol) | (np.isinf(lo_e) & np.isinf(hi_e))
    if not free.any():
        return x
    S, F = np.flatnonzero(free), np.flatnonzero(~free)
    y = x.copy()
    y[S] = -np.linalg.pinv(A[np.ix_(S, S)], rcond=1e-12) @ (b[S] + A[np.ix_(S, F)] @ x[F])
    lo_y, hi_y = lo_e.copy(), hi_e.copy()
    lo_y[f] = -np.abs(lo[f] * y[fi[f]])
    hi_y[f] = np.abs(hi[f] * y[fi[f]])
    if np.all(y >= lo_y - tol) and np.all(y <= hi_y + tol) and np.all(np.isfinite(y)):
        return y
    return x


def turn_pairs(mats, vecs, starts, x0) -> list:
    """Turn tangent row pairs ``(i, i + 1)`` for ``i`` in ``starts``, in place in every
    matrix of ``mats`` (rows) and vector of ``vecs``, so that the pair's first row lies
    along ``(x0[i], x0[i + 1])``, the friction that holding the rows takes: then the LCP's
    per-row bound ``|x_t1| <= mu x_n`` on the turned pair is Coulomb's friction circle where
    it binds, whatever the heading (a fixed basis would let ``|f_t|`` reach
    ``sqrt(2) mu f_n`` at 45 degrees). Returns per pair ``(c, s)``: new rows
    ``(c r1 + s r2, c r2 - s r1)``, ``(1, 0)`` where ``x0`` has no friction there."""
    out = []
    scale = 1e-12 * max(1.0, float(np.max(np.abs(x0))) if x0.size else 1.0)
    for i in starts:
        fx, fy = float(x0[i]), float(x0[i + 1])
        r = float(np.hypot(fx, fy))
        if r <= scale:
            out.append((1.0, 0.0))
            continue
        c, s = fx / r, fy / r
        for M in mats:
            a, b = M[i].copy(), M[i + 1].copy()
            M[i], M[i + 1] = c * a + s * b, c * b - s * a
        for w in vecs:
            a, b = w[i], w[i + 1]
            w[i], w[i + 1] = c * a + s * b, c * b - s * a
        out.append((c, s))
    return out


def _align_stick_rows(JA, JF, bvec, x0, meq, sites) -> list:
    """Turn the tangent pair of every sticking point (:func:`turn_pairs`) along the
    friction that sticking needs, ``x0`` (the unbounded solution). Returns the site
    records with the turned tangents."""
    starts = [meq + ti for _, rec in sites for _, _, ti, _, _ in rec if ti is not None]
    turns = iter(turn_pairs((JA, JF), (bvec,), starts, x0))
    out = []
    for k, rec in sites:
        new = []
        for p, ni, ti, slide_f, T in rec:
            if ti is not None:
                c, s = next(turns)
                T = np.vstack([c * T[0] + s * T[1], c * T[1] - s * T[0]])
            new.append((p, ni, ti, slide_f, T))
        out.append((k, new))
    return out


def _solve_lcp(sys, A, bb, lov, hiv, fiv, meq, nu, t):
    """The contact LCP with a tiny diagonal on its unilateral and friction rows, which
    makes their (often degenerate: four coplanar corners) block positive definite, so the
    solution is unique and the pivoting robust; it perturbs the row accelerations by
    ``reg * f`` (the Baumgarte terms remove the resulting drift). A singular pivoting basis
    is retried with ``RETRY_REGULARIZATION``. Polished afterwards (:func:`_polish`)."""
    x, _ = regularized_lcp(sys, A, bb, lov, hiv, fiv, np.arange(meq, meq + nu), t,
                            "acceleration-level contact",
                            (REGULARIZATION, RETRY_REGULARIZATION))
    return _polish(A, bb, x, lov, hiv, fiv)


def assemble(sys, q, v, tau, modes, t):
    """Rows of the current modes: ``(Minv, rhs, JA, JF, bvec, meq, lo, hi, fi, sites)``."""
    H, c, Jeq, beq, _ = sys.parts(q, v)
    Minv = cho_inv(sys, H, t)
    Ja, Jf, b, lo, hi, fi, sites = _site_rows(sys, q, v, modes) if modes else ([],) * 6 + ([],)
    nu = len(b)
    JA = np.vstack([Jeq] + ([np.array(Ja)] if nu else []))
    JF = np.vstack([Jeq] + ([np.array(Jf)] if nu else []))
    bvec = np.concatenate([beq, np.array(b, float)])
    return Minv, tau - c, JA, JF, bvec, Jeq.shape[0], lo, hi, fi, sites


def solve_accelerations(sys, ctx, q, v, tau, modes):
    """Accelerations, forces and contact results with unilateral rows (numbers)."""
    t = float(ctx.time)
    Minv, rhs, JA, JF, bvec, meq, lo, hi, fi, sites = assemble(sys, q, v, tau, modes, t)
    nu = len(lo)
    if meq + nu == 0:
        vdot = Minv @ rhs
        return RigidBodySolution(vdot, np.zeros(0), np.zeros(sys.nv), tau, ContactResults(t))
    A = JA @ Minv @ JF.T
    bb = JA @ (Minv @ rhs) + bvec
    if nu == 0:
        x = -np.linalg.pinv(A, rcond=1e-10) @ bb
    else:
        # every row active with unbounded friction: the forces keeping the current modes,
        # whose friction directions align the sticking points' tangent pairs
        x0 = -np.linalg.pinv(A, rcond=1e-12) @ bb
        sites = _align_stick_rows(JA, JF, bvec, x0, meq, sites)
        A = JA @ Minv @ JF.T
        bb = JA @ (Minv @ rhs) + bvec
        lov = np.concatenate([np.full(meq, -np.inf), lo])
        hiv = np.concatenate([np.full(meq, np.inf), hi])
        fiv = np.concatenate([np.full(meq, -1),
                              np.where(np.array(fi) >= 0, np.array(fi) + meq, -1)]).astype(int)
        groups = []
        for k, rec in sites:
            stick = [(meq + ni, meq + ti, T, p.mu) for p, ni, ti, _, T in rec if ti is not None]
            if stick:
                groups.append((stick[0][3], [meq + ni for _, ni, _, _, _ in rec],
                               [r[1] for r in stick], [r[2] for r in stick]))
        x = _all_active(A, bb, lov, hiv, fiv, groups)
        if x is None:
            x = _all_inactive(A, bb, meq, np.array(fi))
        if x is None:
            x = _solve_lcp(sys, A, bb, lov, hiv, fiv, meq, nu, t)
    tau_c = JF.T @ x
    vdot = Minv @ (rhs + tau_c)
    w = A @ x + bb
    contacts, sols = [], []
    for k, rec in sites:
        fns, fts, ats = [], [], []
        for p, ni, ti, slide_f, T in rec:
            fn = float(x[meq + ni])
            if ti is not None:
                ft = x[meq + ti:meq + ti + 2] @ T
                at = w[meq + ti:meq + ti + 2] @ T
            elif slide_f is not None:
                ft, at = slide_f * fn, np.zeros(3)
            else:
                ft, at = np.zeros(3), np.zeros(3)
            fns.append(fn), fts.append(ft), ats.append(at)
            if p.geometry_b != "" or p.normal.any():
                contacts.append(PointContactResult(p.body_a, p.body_b, p.geometry_a, p.geometry_b,
                                                   p.point, p.normal, p.phi, fn, ft,
                                                   p.vt @ p.tangents))
        sols.append(SiteSolution(k, [r[0] for r in rec], np.array(fns), np.array(fts).reshape(-1, 3),
                                 np.array(ats).reshape(-1, 3)))
    return RigidBodySolution(vdot, x[:meq], tau_c, tau, ContactResults(t, tuple(contacts)), sols)

"""Unilateral part of :class:`~multibody.plants.RigidBodySystem`: the
acceleration-level LCP, contact modes, witness functions and touchdown impulses.

Acceleration problem (Baraff 1994)
----------------------------------
With ``M^{-1}`` the inverse mass matrix, rows ``a = J_a vdot + b`` and forces acting as
``J_f^T x`` (``J_f = J_a`` except for sliding normal rows, which carry the friction
``-mu f_n s``),

.. math::

    a = J_a M^{-1} J_f^T x + J_a M^{-1} (\\tau - c) + b ,

a boxed LCP in ``x``: equality rows free (``a = 0``), normal rows ``x >= 0 _|_ a >= 0``,
sticking friction rows ``|x_t| <= mu x_n`` (friction index). Solved by
:func:`solvers.lcp.solve_boxed_lcp` (Dantzig, then Lemke); no verified solution raises
:class:`PainleveError` (an inconsistent configuration, e.g. Painleve's paradox).

Modes and events
----------------
Per site (a geometry pair or a joint-limit side) the mode is ``None`` (separated),
``("stick", None)``, ``("slide", s)`` (``s``: the world slip direction at mode entry) or
``("active", None)`` (frictionless). Witness functions per site: ``touchdown`` (signed
distance, separated sites; impulse), ``liftoff`` (total normal force reaching zero;
separate), ``stop`` (slip velocity along ``s`` reaching zero; stick, with the slip
projected out), ``slip`` (``mu sum f_n - |sum f_t|`` reaching zero; slide).

Touchdown impulse: boxed LCP on ``P`` with ``v^+ = v^- + M^{-1} J^T P``: equality rows
``J v^+ = 0``; normal rows of the impacting site ``J_n v^+ + e min(J_n v^-, 0) >= 0 _|_
P_n >= 0`` (Newton), of the other sites in contact ``J_n v^+ >= 0``; tangent rows
``J_t v^+ = 0`` inside ``|P_t| <= mu P_n``. The site then stays in contact when its
normal velocity after the impulse is below ``REST_VELOCITY``, else it is separated.

Simultaneous witness triggers of one system in one step are evaluated from the same
pre-event context, and the last applied wins (sites rarely trigger together; a box
falling flat lands on one site, its four corners being one manifold).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from solvers import lcp
from solvers.lcp import LCPFallbackWarning
from ..constraints import ContactResults, PointContactResult
from .solutions import RigidBodySolution

__all__ = ["PainleveError", "SiteSolution", "solve_accelerations", "declare_witnesses",
           "initial_modes", "REST_VELOCITY", "SLIP_VELOCITY"]

REST_VELOCITY = 1e-4
"""Normal velocity (m/s) below which a site stays in contact after an impulse."""
SLIP_VELOCITY = 1e-7
"""Slip speed (m/s) below which a site in contact sticks."""
SLIP_DIRECTION_SPEED = 1e-4
"""Below this slip speed (m/s) a sliding point's friction keeps the site's slip direction
at mode entry (the direction of a vanishing slip velocity is noise)."""
ACCEPT_RESIDUAL = 1e-6
"""An LCP answer the pivoting solvers flag "inaccurate" (degenerate contact sets) is
accepted when its natural-map residual is below this (relative to max(1, |b|)); the
active-set polish that follows then makes it exact."""
REGULARIZATION = 1e-10
"""Relative diagonal added to the unilateral block of the contact LCP."""
RETRY_REGULARIZATION = 1e-7
"""Relative diagonal of the retry when the pivoting meets a singular basis."""
SEPARATION_GAP = 1e-12
"""Signed distance (m) a separating site is left at after its touchdown impulse."""
GAP_TOLERANCE = 1e-6
"""Signed distance (m) within which a site counts as touching at initialization."""
STICK_TOLERANCE = 1e-9
"""Relative margin by which sticking friction may exceed ``mu f_n`` at stick entry
(roundoff at the friction angle itself) before the site slides instead."""


class PainleveError(RuntimeError):
    """The acceleration-level contact problem has no solution (inconsistent configuration)."""


@dataclass
class SiteSolution:
    """Solved rows of one site in contact: its points and forces (world axes)."""

    index: int
    points: list
    fn: np.ndarray
    ft: np.ndarray
    at: np.ndarray


def _cho_inv(sys, H, t):
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
                    vt = p.vt
                    sp = float(np.linalg.norm(vt))
                    if sp > SLIP_DIRECTION_SPEED:
                        s2 = vt / sp
                    else:
                        s2 = p.tangents @ mode[1]
                        s2 = s2 / max(np.linalg.norm(s2), 1e-300)
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
        if res.status == "singular":
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


def _regularized_lcp(sys, A, bb, lo, hi, fi, rows, t, what, regs):
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


def _align_stick_rows(JA, JF, bvec, x0, meq, sites) -> list:
    """Turn the tangent pair of every sticking point (in place) so that its first tangent
    points along the friction that sticking needs, ``x0`` (the unbounded solution): then
    the LCP's per-row bound ``|x_t1| <= mu x_n`` on the aligned pair is Coulomb's friction
    circle at the point, whatever the heading (a fixed basis would let ``|f_t|`` reach
    ``sqrt(2) mu f_n``). Returns the records with the turned tangents."""
    out = []
    scale = 1e-12 * max(1.0, float(np.max(np.abs(x0))) if x0.size else 1.0)
    for k, rec in sites:
        new = []
        for p, ni, ti, slide_f, T in rec:
            if ti is not None:
                i = meq + ti
                fx, fy = float(x0[i]), float(x0[i + 1])
                r = float(np.hypot(fx, fy))
                if r > scale:
                    c, s = fx / r, fy / r
                    for M in (JA, JF):
                        a, b = M[i].copy(), M[i + 1].copy()
                        M[i], M[i + 1] = c * a + s * b, c * b - s * a
                    a, b = bvec[i], bvec[i + 1]
                    bvec[i], bvec[i + 1] = c * a + s * b, c * b - s * a
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
    x, _ = _regularized_lcp(sys, A, bb, lov, hiv, fiv, np.arange(meq, meq + nu), t,
                            "acceleration-level contact",
                            (REGULARIZATION, RETRY_REGULARIZATION))
    return _polish(A, bb, x, lov, hiv, fiv)


def _assemble(sys, q, v, tau, modes, t):
    """Rows of the current modes: ``(Minv, rhs, JA, JF, bvec, meq, lo, hi, fi, sites)``."""
    H, c, Jeq, beq, _ = sys.parts(q, v)
    Minv = _cho_inv(sys, H, t)
    Ja, Jf, b, lo, hi, fi, sites = _site_rows(sys, q, v, modes) if modes else ([],) * 6 + ([],)
    nu = len(b)
    JA = np.vstack([Jeq] + ([np.array(Ja)] if nu else []))
    JF = np.vstack([Jeq] + ([np.array(Jf)] if nu else []))
    bvec = np.concatenate([beq, np.array(b, float)])
    return Minv, tau - c, JA, JF, bvec, Jeq.shape[0], lo, hi, fi, sites


def solve_accelerations(sys, ctx, q, v, tau, modes):
    """Accelerations, forces and contact results with unilateral rows (numbers)."""
    t = float(ctx.time)
    Minv, rhs, JA, JF, bvec, meq, lo, hi, fi, sites = _assemble(sys, q, v, tau, modes, t)
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


# ---------------------------------------------------------------------- modes and events
def _contact_mode(blk, pts):
    """Mode of a touching site from its points' slip velocities."""
    if blk.mu <= 0 or not pts or pts[0].Jt is None:
        return ("active", None)
    slip = np.mean([p.vt @ p.tangents for p in pts], axis=0)
    sp = float(np.linalg.norm(slip))
    if sp > SLIP_VELOCITY:
        return ("slide", slip / sp)
    return ("stick", None)


class _Time:
    def __init__(self, t):
        self.time = t


def _pushes(sys, t, q, v, tau, modes, k, mode) -> bool:
    """Whether site ``k`` in ``mode`` carries a positive normal force at ``(q, v)`` (else
    it separates right away and is better left separated, its touchdown guard armed)."""
    trial = list(modes)
    trial[k] = mode
    try:
        sol = solve_accelerations(sys, _Time(t), q, v, tau, tuple(trial))
    except PainleveError:
        return True
    for s in sol.sites:
        if s.index == k:
            return float(np.sum(s.fn)) > 1e-12
    return False


def initial_modes(sys, ctx) -> tuple:
    """Modes from the state: touching (gap within ``GAP_TOLERANCE``) and not separating."""
    x = np.asarray(ctx.continuous_state, float)
    q, v = x[:sys.nq], x[sys.nq:sys.nq + sys.nv]
    out = []
    for blk, i in sys.sites:
        mode = None
        if blk.gap(q, i) <= GAP_TOLERANCE:
            pts = blk.site_points(q, v, i)
            if pts and max(p.vn for p in pts) <= REST_VELOCITY:
                mode = _contact_mode(blk, pts)
        out.append(mode)
    tau = _tau(sys, ctx, x)
    t = float(ctx.time)
    for k, mode in enumerate(out):
        if mode is not None:
            out[k] = mode = _entry_mode(sys, t, q, v, tau, out, k)
        if mode is not None and not _pushes(sys, t, q, v, tau, out, k, mode):
            out[k] = None
    return tuple(out)


def _tau(sys, ctx, x):
    tau = sys.actuation(ctx, x)
    return np.zeros(sys.nv) if tau is None else np.asarray(tau, float).ravel()


def _qv(sys, ctx):
    x = np.asarray(ctx.continuous_state, float)
    return x, x[:sys.nq], x[sys.nq:sys.nq + sys.nv]


def _site_solution(sys, ctx, k):
    for s in sys.solve(ctx).sites:
        if s.index == k:
            return s
    return None


def _unbounded(sys, t, q, v, tau, modes, k):
    """``(sum f_n, sum f_t)`` of site ``k`` with every row of ``modes`` held active and
    the friction rows unbounded (the forces that keeping the contact as it is would take).
    Unlike the LCP's forces these are not clamped at their bounds, so the liftoff
    (``sum f_n``) and slip (``mu sum f_n - |sum f_t|``) guards cross zero cleanly instead
    of touching it."""
    Minv, rhs, JA, JF, bvec, meq, _, _, _, sites = _assemble(sys, q, v, tau, modes, t)
    A = JA @ Minv @ JF.T
    f = -np.linalg.pinv(A, rcond=1e-12) @ (JA @ (Minv @ rhs) + bvec)
    for kk, rec in sites:
        if kk != k:
            continue
        fn, ft = 0.0, np.zeros(3)
        for p, ni, ti, slide_f, T in rec:
            fni = float(f[meq + ni])
            fn += fni
            if ti is not None:
                ft = ft + f[meq + ti:meq + ti + 2] @ T
            elif slide_f is not None:
                ft = ft + slide_f * fni
        return fn, ft
    return 0.0, np.zeros(3)


def _unclamped(sys, ctx, k):
    """:func:`_unbounded` at the state and modes of ``ctx``."""
    x, q, v = _qv(sys, ctx)
    return _unbounded(sys, float(ctx.time), q, v, _tau(sys, ctx, x), sys.modes(ctx), k)


def _entry_mode(sys, t, q, v, tau, modes, k):
    """The mode site ``k`` enters when ``modes[k]`` is about to be set: a sticking site
    whose sticking friction lies outside Coulomb's circle (``|sum f_t| > mu sum f_n``,
    e.g. released on a slope steeper than the friction angle, or stopped there after
    sliding uphill) slides at once, along the impending slip ``-sum f_t``; any other mode
    is kept. Without this a site entering 'stick' outside the circle would never switch:
    its slip guard ``mu sum f_n - |sum f_t|`` starts negative and cannot cross zero."""
    mode = modes[k]
    if mode is None or mode[0] != "stick":
        return mode
    fn, ftv = _unbounded(sys, t, q, v, tau, modes, k)
    ft = float(np.linalg.norm(ftv))
    mu = sys.sites[k][0].mu
    if fn > 0.0 and ft > mu * fn * (1.0 + STICK_TOLERANCE) + 1e-12:
        return ("slide", -ftv / ft)
    return mode


def _set(state, sys, k, mode, x=None):
    modes = list(state.abstract_state[sys.mode_index])
    modes[k] = mode
    state.set_abstract_state(sys.mode_index, tuple(modes))
    if x is not None:
        state.set_continuous_state(x)


def _project_slip(sys, q, v, pts, t):
    """Remove the tangential slip of ``pts`` with the smallest kinetic-energy change."""
    return _project_rows(sys, q, v, np.vstack([p.Jt for p in pts]), t)


def _project_rows(sys, q, v, J, t):
    """``v`` with ``J v = 0`` (and the equality rows kept), changed least in the
    kinetic-energy metric: ``v - M^{-1} J^T (J M^{-1} J^T)^+ J v``."""
    H, _, Jeq, _, _ = sys.parts(q, v)
    Minv = _cho_inv(sys, H, t)
    J = np.vstack([Jeq, J])
    dv = -Minv @ J.T @ np.linalg.pinv(J @ Minv @ J.T, rcond=1e-10) @ (J @ v)
    return v + dv


def impact(sys, ctx, state, k: int) -> None:
    """Touchdown of site ``k``: impulse with restitution and friction (module docstring)."""
    x, q, v = _qv(sys, ctx)
    t = float(ctx.time)
    blk, i = sys.sites[k]
    modes = sys.modes(ctx)
    H, _, Jeq, _, _ = sys.parts(q, v)
    Minv = _cho_inv(sys, H, t)
    rows, bvec, lo, hi, fi = [Jeq], [Jeq @ v], [np.full(Jeq.shape[0], -np.inf)], \
        [np.full(Jeq.shape[0], np.inf)], [np.full(Jeq.shape[0], -1)]
    m = Jeq.shape[0]
    own = []
    for kk, ((b2, i2), mode) in enumerate(zip(sys.sites, modes)):
        if kk != k and mode is None:
            continue
        for p in b2.site_points(q, v, i2):
            e = b2.restitution if kk == k else 0.0
            ni = m
            rows.append(p.Jn[None]), bvec.append([p.vn + e * min(p.vn, 0.0)])
            lo.append([0.0]), hi.append([np.inf]), fi.append([-1])
            m += 1
            if kk == k:
                own.append(ni)
            if p.Jt is not None and p.mu > 0:
                rows.append(p.Jt), bvec.append(p.vt)
                lo.append([-p.mu] * 2), hi.append([p.mu] * 2), fi.append([ni, ni])
                m += 2
    J = np.vstack(rows)
    A = J @ Minv @ J.T
    P, _ = _regularized_lcp(sys, A, np.concatenate(bvec), np.concatenate(lo),
                            np.concatenate(hi), np.concatenate(fi).astype(int),
                            np.arange(Jeq.shape[0], m), t, "impact",
                            (0.0, RETRY_REGULARIZATION))
    v_new = v + Minv @ (J.T @ P)
    pts = blk.site_points(q, v_new, i)
    mode = None
    if pts and max(p.vn for p in pts) <= REST_VELOCITY:
        # comes to rest on the surface: a plastic impact (normal velocity removed), and
        # the slip too when it sticks
        mode = _contact_mode(blk, pts)
        rows = [p.Jn[None] for p in pts]
        if mode[0] == "stick":
            rows += [p.Jt for p in pts]
        v_new = _project_rows(sys, q, v_new, np.vstack(rows), t)
    tau = _tau(sys, ctx, x)
    if mode is not None:
        trial = list(modes)
        trial[k] = mode
        mode = _entry_mode(sys, t, q, v_new, tau, tuple(trial), k)
    if mode is not None and not _pushes(sys, t, q, v_new, tau, modes, k, mode):
        mode = None
    # The event is isolated just after the crossing (a tiny penetration): move the site's
    # points back to the surface (in contact) or just above it (separating, so that the
    # touchdown guard starts positive again), by a minimum-norm position step.
    target = 0.0 if mode is not None else SEPARATION_GAP
    if pts:
        phi = np.array([p.phi for p in pts])
        if np.any(phi < target):
            Jn = np.vstack([p.Jn for p in pts])
            dq = np.linalg.pinv(Jn, rcond=1e-10) @ np.maximum(target - phi, 0.0)
            q = np.asarray(sys.tree.integrate(q, dq, 1.0), float).ravel()
    x_new = x.copy()
    x_new[:sys.nq] = q
    x_new[sys.nq:sys.nq + sys.nv] = v_new
    _set(state, sys, k, mode, x_new)


def declare_witnesses(sys) -> None:
    """Four witness functions per unilateral site (module docstring)."""
    for k, ((blk, i), name) in enumerate(zip(sys.sites,
                                             [n for c in sys.unilateral_constraints
                                              for n in c.site_names()])):
        def touchdown(ctx, k=k, blk=blk, i=i):
            if sys.modes(ctx)[k] is not None:
                return 1.0
            return blk.gap(_qv(sys, ctx)[1], i)

        def liftoff(ctx, k=k):
            if sys.modes(ctx)[k] is None:
                return 1.0
            return _unclamped(sys, ctx, k)[0]

        def on_liftoff(ctx, state, k=k):
            _set(state, sys, k, None)

        def stop(ctx, k=k):
            mode = sys.modes(ctx)[k]
            if mode is None or mode[0] != "slide":
                return 1.0
            s = _site_solution(sys, ctx, k)
            if s is None or not s.points:
                return 1.0
            slip = np.mean([p.vt @ p.tangents for p in s.points], axis=0)
            return float(slip @ mode[1])

        def on_stop(ctx, state, k=k, blk=blk, i=i):
            x, q, v = _qv(sys, ctx)
            t = float(ctx.time)
            pts = blk.site_points(q, v, i)
            if pts:
                slip = np.mean([p.vt @ p.tangents for p in pts], axis=0)
                sp = float(np.linalg.norm(slip))
                if sp > SLIP_DIRECTION_SPEED:
                    # the slip turned away from its entry direction without stopping
                    # (a sideways force): keep sliding, along the slip as it is now
                    _set(state, sys, k, ("slide", slip / sp))
                    return
            x_new = x.copy()
            if pts:
                x_new[sys.nq:sys.nq + sys.nv] = _project_slip(sys, q, v, pts, t)
            trial = list(sys.modes(ctx))
            trial[k] = ("stick", None)
            # sticking needs more friction than the circle holds (stopped on a slope
            # steeper than the friction angle): it slides back at once
            mode = _entry_mode(sys, t, q, x_new[sys.nq:sys.nq + sys.nv], _tau(sys, ctx, x),
                               tuple(trial), k)
            _set(state, sys, k, mode, x_new)

        def slip(ctx, k=k):
            mode = sys.modes(ctx)[k]
            if mode is None or mode[0] != "stick":
                return 1.0
            fn, ftv = _unclamped(sys, ctx, k)
            ft = float(np.linalg.norm(ftv))
            if ft <= 1e-9 * max(1.0, abs(fn)):
                return 1.0  # no friction needed: a vanishing normal force is a liftoff
            return sys.sites[k][0].mu * fn - ft

        def on_slip(ctx, state, k=k):
            fn, ft = _unclamped(sys, ctx, k)
            if fn <= 0.0:
                _set(state, sys, k, None)  # the normal force vanished too: separation
                return
            # it starts to slide against the friction that sticking would need
            if np.linalg.norm(ft) < 1e-12:
                return
            _set(state, sys, k, ("slide", -ft / np.linalg.norm(ft)))

        sys.declare_witness_function(f"{name}.touchdown", "positive_then_nonpositive", touchdown,
                                     lambda ctx, state, k=k: impact(sys, ctx, state, k))
        sys.declare_witness_function(f"{name}.liftoff", "positive_then_nonpositive", liftoff,
                                     on_liftoff)
        if getattr(blk, "mu", 0.0) > 0:
            sys.declare_witness_function(f"{name}.stop", "positive_then_nonpositive", stop, on_stop)
            sys.declare_witness_function(f"{name}.slip", "positive_then_nonpositive", slip, on_slip)

"""Contact modes of :class:`~multibody.plants.RigidBodySystem`: the initial modes, the
mode a site enters, the witness functions that switch them and the touchdown impulse (the
acceleration problem they select is solved in :mod:`._rbs_unilateral`).

Modes and events
----------------
Per site (a geometry pair or a joint-limit side) the mode is ``None`` (separated),
``("stick", None)``, ``("slide", s)`` (``s``: the world slip direction at mode entry) or
``("active", None)`` (frictionless). Witness functions per site: ``touchdown`` (signed
distance, separated sites; impulse), ``liftoff`` (total normal force reaching zero;
separate), ``stop`` (slip velocity along ``s`` reaching zero; stick, with the slip
projected out), ``slip`` (``mu sum f_n - |sum f_t|`` reaching zero: the friction that
sticking needs leaves Coulomb's circle; slide along the impending slip ``-sum f_t``). The
forces of the liftoff and slip guards are those that keep the current modes with
unbounded friction, so the guards cross zero instead of touching it.

Stick entry. A site about to stick (at initialization, after a plastic touchdown, when its
slip stops) whose sticking friction is already outside the circle slides at once, along
the impending slip (a box released on a slope steeper than the friction angle, or
stopping there after sliding uphill): its slip guard would start negative and never
cross. A ``stop`` trigger at a slip speed above ``STOP_SPEED`` (the slip turned
away from its entry direction without stopping) keeps sliding along the slip as it is.

Touchdown impulse: boxed LCP on ``P`` with ``v^+ = v^- + M^{-1} J^T P``: equality rows
``J v^+ = 0``; normal rows of the impacting site ``J_n v^+ + e min(J_n v^-, 0) >= 0 _|_
P_n >= 0`` (Newton), of the other sites in contact ``J_n v^+ >= 0``; tangent rows
``J_t v^+ = 0`` inside Coulomb's circle ``|P_t| <= mu P_n`` (each point's tangent pair
turned along the impulse that would stop its slip, as for sticking forces). The site then stays in contact when its
normal velocity after the impulse is below ``REST_VELOCITY``, else it is separated.

Simultaneous witness triggers of one system in one step are evaluated from the same
pre-event context, and the last applied wins. The liftoff, stop and slip updates
therefore switch every site whose guard has crossed zero at that state, not only their
own (redundant sites, e.g. two contact blocks on one geometry pair, cross together and
must switch together); a touchdown updates its own site (a box falling flat lands on one
site, its four corners being one manifold).

References
----------
D. Baraff, "Fast contact force computation for nonpenetrating rigid bodies", SIGGRAPH 1994;
D. Baraff, "Coping with friction for non-penetrating rigid body simulation", SIGGRAPH 1991.
"""
from __future__ import annotations

import numpy as np

from ._rbs_unilateral import (RETRY_REGULARIZATION, PainleveError,
                              assemble, cho_inv, regularized_lcp, solve_accelerations,
                              turn_pairs)

__all__ = ["initial_modes", "declare_witnesses", "impact", "REST_VELOCITY", "SLIP_VELOCITY"]

REST_VELOCITY = 1e-4
"""Normal velocity (m/s) below which a site stays in contact after an impulse."""
SLIP_VELOCITY = 1e-7
"""Slip speed (m/s) below which a site in contact sticks."""
SEPARATION_GAP = 1e-12
"""Signed distance (m) a separating site is left at after its touchdown impulse."""
GAP_TOLERANCE = 1e-6
"""Signed distance (m) within which a site counts as touching at initialization."""
STOP_SPEED = 1e-6
"""A ``stop`` trigger at a slip speed above this (m/s) is the slip turning away from its
entry direction, not stopping: the site keeps sliding."""
STICK_TOLERANCE = 1e-9
"""Relative margin by which sticking friction may exceed ``mu f_n`` at stick entry
(roundoff at the friction angle itself) before the site slides instead."""


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
    Minv, rhs, JA, JF, bvec, meq, _, _, _, sites = assemble(sys, q, v, tau, modes, t)
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
    Minv = cho_inv(sys, H, t)
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
    Minv = cho_inv(sys, H, t)
    rows, bvec, lo, hi, fi = [Jeq], [Jeq @ v], [np.full(Jeq.shape[0], -np.inf)], \
        [np.full(Jeq.shape[0], np.inf)], [np.full(Jeq.shape[0], -1)]
    m = Jeq.shape[0]
    own, pairs = [], []
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
                pairs.append(m)
                m += 2
    J = np.vstack(rows)
    bvec = np.concatenate(bvec)
    if pairs:
        # friction in Coulomb's circle: tangent pairs turned along the impulse that would
        # stop the slip (every row held, friction unbounded)
        A = J @ Minv @ J.T
        turn_pairs((J,), (bvec,), pairs, -np.linalg.pinv(A, rcond=1e-12) @ bvec)
    A = J @ Minv @ J.T
    P, _ = regularized_lcp(sys, A, bvec, np.concatenate(lo),
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


def _liftoff_guard(sys, ctx, k) -> float:
    if sys.modes(ctx)[k] is None:
        return 1.0
    return _unclamped(sys, ctx, k)[0]


def _stop_guard(sys, ctx, k) -> float:
    mode = sys.modes(ctx)[k]
    if mode is None or mode[0] != "slide":
        return 1.0
    s = _site_solution(sys, ctx, k)
    if s is None or not s.points:
        return 1.0
    slip = np.mean([p.vt @ p.tangents for p in s.points], axis=0)
    return float(slip @ mode[1])


def _slip_guard(sys, ctx, k) -> float:
    mode = sys.modes(ctx)[k]
    if mode is None or mode[0] != "stick":
        return 1.0
    fn, ftv = _unclamped(sys, ctx, k)
    ft = float(np.linalg.norm(ftv))
    if ft <= 1e-9 * max(1.0, abs(fn)):
        return 1.0  # no friction needed: a vanishing normal force is a liftoff
    return sys.sites[k][0].mu * fn - ft


def _crossed(sys, ctx, k, guard) -> list:
    """Site ``k`` and every other site whose ``guard`` has crossed zero at this state too
    (redundant sites, e.g. two blocks on one geometry pair, cross together; handling them
    in one update keeps their modes consistent, whichever trigger is applied last)."""
    return [k] + [kk for kk in range(len(sys.sites))
                  if kk != k and guard(sys, ctx, kk) <= 0.0]


def _on_liftoff(sys, ctx, state, k) -> None:
    modes = list(sys.modes(ctx))
    for kk in _crossed(sys, ctx, k, _liftoff_guard):
        modes[kk] = None
    state.set_abstract_state(sys.mode_index, tuple(modes))


def _on_slip(sys, ctx, state, k) -> None:
    modes = list(sys.modes(ctx))
    for kk in _crossed(sys, ctx, k, _slip_guard):
        fn, ft = _unclamped(sys, ctx, kk)
        if fn <= 0.0:
            modes[kk] = None             # the normal force vanished too: separation
        elif np.linalg.norm(ft) >= 1e-12:
            # it starts to slide against the friction that sticking would need
            modes[kk] = ("slide", -ft / np.linalg.norm(ft))
    state.set_abstract_state(sys.mode_index, tuple(modes))


def _on_stop(sys, ctx, state, k) -> None:
    x, q, v = _qv(sys, ctx)
    t = float(ctx.time)
    modes = list(sys.modes(ctx))
    stopping, pts_all = [], []
    for kk in _crossed(sys, ctx, k, _stop_guard):
        blk, i = sys.sites[kk]
        pts = blk.site_points(q, v, i)
        if pts:
            slip = np.mean([p.vt @ p.tangents for p in pts], axis=0)
            sp = float(np.linalg.norm(slip))
            if sp > STOP_SPEED:
                # the slip turned away from its entry direction without stopping
                # (a sideways force): keep sliding, along the slip as it is now
                modes[kk] = ("slide", slip / sp)
                continue
        stopping.append(kk)
        pts_all += pts
        modes[kk] = ("stick", None)
    x_new = x.copy()
    if pts_all:
        x_new[sys.nq:sys.nq + sys.nv] = _project_slip(sys, q, v, pts_all, t)
    tau = _tau(sys, ctx, x)
    for kk in stopping:
        # sticking needs more friction than the circle holds (stopped on a slope steeper
        # than the friction angle): it slides back at once
        modes[kk] = _entry_mode(sys, t, q, x_new[sys.nq:sys.nq + sys.nv], tau, tuple(modes), kk)
    state.set_abstract_state(sys.mode_index, tuple(modes))
    state.set_continuous_state(x_new)


def declare_witnesses(sys) -> None:
    """Four witness functions per unilateral site (module docstring)."""
    for k, ((blk, i), name) in enumerate(zip(sys.sites,
                                             [n for c in sys.unilateral_constraints
                                              for n in c.site_names()])):
        def touchdown(ctx, k=k, blk=blk, i=i):
            if sys.modes(ctx)[k] is not None:
                return 1.0
            return blk.gap(_qv(sys, ctx)[1], i)

        sys.declare_witness_function(f"{name}.touchdown", "positive_then_nonpositive", touchdown,
                                     lambda ctx, state, k=k: impact(sys, ctx, state, k))
        sys.declare_witness_function(f"{name}.liftoff", "positive_then_nonpositive",
                                     lambda ctx, k=k: _liftoff_guard(sys, ctx, k),
                                     lambda ctx, state, k=k: _on_liftoff(sys, ctx, state, k))
        if getattr(blk, "mu", 0.0) > 0:
            sys.declare_witness_function(f"{name}.stop", "positive_then_nonpositive",
                                         lambda ctx, k=k: _stop_guard(sys, ctx, k),
                                         lambda ctx, state, k=k: _on_stop(sys, ctx, state, k))
            sys.declare_witness_function(f"{name}.slip", "positive_then_nonpositive",
                                         lambda ctx, k=k: _slip_guard(sys, ctx, k),
                                         lambda ctx, state, k=k: _on_slip(sys, ctx, state, k))

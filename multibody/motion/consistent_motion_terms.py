"""Pieces of :class:`~multibody.motion.ConsistentMotion`'s solve: the IPOPT iteration monitor
with the stall rule, the warm start of the cone coefficients, and the per-frame blocks of the
Gauss-Newton Hessian (with the optional contact-curvature term).

Each function takes the :class:`~multibody.motion.ConsistentMotion` ``cm`` whose public
settings it reads (``tree``, ``cid``, ``sigma``, ``weight``, ``max_force``, ``contact_band``,
``force_weight``, ``prior_weight``, ``joint_q``).

References
----------
P. B. Stark, R. L. Parker, "Bounded-variable least-squares: an algorithm and applications",
Computational Statistics 10, 1995. J. Nocedal, S. J. Wright, "Numerical Optimization", 2nd
ed., Springer, 2006, section 10.3 (the Gauss-Newton Hessian).
"""
from __future__ import annotations

import casadi as ca
import numpy as np
from scipy.optimize import lsq_linear

from solvers.progress import ProgressLine
from .errors import ContactError

__all__ = ["IterationMonitor", "feasible_cone_coefficients", "gauss_newton_blocks",
           "add_contact_curvature", "add_contact_height", "marker_errors",
           "inset_contact_points", "support_margin_pair", "sole_pairs", "level_cost",
           "add_level", "smooth_step"]


class IterationMonitor(ca.Callback):
    """IPOPT iteration callback: draws a :class:`ProgressLine`, records the objective and the
    largest constraint violation of each iteration, and asks IPOPT to stop when the stall
    rule holds (:class:`~multibody.motion.ConsistentMotion`, ``stall_tolerance``). Only ``f``
    and ``g`` are passed in (the other outputs are declared empty, so no copy of ``x`` or the
    multipliers is made per iteration).

    Parameters
    ----------
    ng : int
        Number of constraints ``g``.
    bar : ProgressLine
    window, tolerance, violation : int, float, float
        ``stall_iterations``, ``stall_tolerance``, ``stall_violation`` (N).

    Attributes
    ----------
    objective, max_violation : list of float
        Per iteration (the start first).
    stalled : bool
        Whether the stall rule stopped the solve.
    """

    def __init__(self, ng: int, bar: ProgressLine, window: int, tolerance: float,
                 violation: float) -> None:
        ca.Callback.__init__(self)
        self.ng, self.bar, self.count = ng, bar, 0
        self.window, self.tol, self.violation = int(window), float(tolerance), float(violation)
        self.objective, self.max_violation, self.stalled = [], [], False
        self.construct("consistent_motion_progress", {})

    def get_n_in(self):
        return ca.nlpsol_n_out()

    def get_n_out(self):
        return 1

    def get_name_in(self, i):
        return ca.nlpsol_out(i)

    def get_name_out(self, i):
        return "ret"

    def get_sparsity_in(self, i):
        n = ca.nlpsol_out(i)
        if n == "f":
            return ca.Sparsity.scalar()
        if n == "g":
            return ca.Sparsity.dense(self.ng)
        return ca.Sparsity(0, 0)

    def eval(self, arg):
        f = float(arg[1])
        g = np.asarray(arg[2]).ravel()
        viol = float(np.max(g, initial=0.0))
        self.objective.append(f)
        self.max_violation.append(viol)
        self.count = len(self.objective) - 1                 # IPOPT's iteration number
        self.bar.update(self.count, f"iteration {self.count}, objective {f:.4g}, "
                                    f"contact violation {viol:.2g} N")
        n = self.window
        if self.tol > 0 and len(self.objective) > n:
            best_before = min(self.objective[:-n])
            best_now = min(self.objective[-n:])
            if best_before - best_now <= self.tol * abs(best_now) and viol <= self.violation:
                self.stalled = True
                return [1]
        return [0]


def feasible_cone_coefficients(cm, warm, beta0, cand, floor, D):
    """Warm-start cone coefficients (T, P, E) within the smoothed contact model.

    Per frame, ``beta`` minimises the frame's residual and force terms of the cost,
    ``|w^F|^2 / sigma_F^2 + |w^M|^2 / sigma_M^2 + rho |beta|^2`` (``w`` linear in
    ``beta`` at the warm-start motion), over the candidate points with ``0 <= beta_je <=
    F_max s(u_j) / (W sum_e n . d_e)`` (so ``f^n_j <= F_max s(u_j)``), by bounded-variable
    least squares (Stark and Parker 1995, ``scipy.optimize.lsq_linear``). Scaling the
    contact inverse dynamics' forces down to the cap instead left their share of the
    weight to the residual (68.8 N RMS at the start on the HDM walk, against 16.5 N for
    the contact inverse dynamics itself).

    Parameters
    ----------
    cm : ConsistentMotion
    warm : JointTrajectory
        The warm-start motion at the T frames.
    beta0 : (T, P, E) ndarray
        The contact inverse dynamics' forces as cone coefficients (units of body weight).
    cand : (T, P) ndarray of bool
        The points allowed to push.
    floor : Floor
    D : (E, 3) ndarray
        The cone edges.

    Returns
    -------
    (T, P, E) ndarray
        Coefficients ``>= 0`` meeting ``f^n_j <= F_max s(u_j)``.
    """
    cid, tree = cm.cid, cm.tree
    T, P, E = beta0.shape
    h0, h1 = cm.contact_band
    cn = float(np.sum(D @ floor.normal))
    sm, sF, sM, sv = cm.sigma
    w = np.r_[[1 / sM] * 3, [1 / sF] * 3]
    rv = cid.root_v
    out = beta0.copy()
    for k in range(T):
        p, J, _ = cid.contact_kinematics(warm.q[k], warm.v[k])
        if cm.force_cid is not cid:                   # the forces act at the inset points
            J = cm.force_cid.contact_kinematics(warm.q[k], warm.v[k])[1]
        x_ = np.clip((floor.height(p) - h0) / (h1 - h0), 0.0, 1.0)
        cap = cm.max_force * (1 - 3 * x_ ** 2 + 2 * x_ ** 3) / cm.weight
        cols = np.flatnonzero(np.repeat(cand[k] & (cap > 0), E))
        if cols.size == 0:
            out[k] = 0.0
            continue
        tau = np.asarray(tree.inverse_dynamics(warm.q[k], warm.v[k], warm.vdot[k]),
                         float).ravel()[rv]
        G = np.einsum("pkn,ek->npe", J.reshape(P, 3, -1), D).reshape(tree.nv, P * E)
        A = np.vstack([w[:, None] * cm.weight * G[rv][:, cols],
                       np.sqrt(max(cm.force_weight, 1e-12)) * np.eye(cols.size)])
        b = np.r_[w * tau, np.zeros(cols.size)]
        ub = np.repeat(cap / cn, E)[cols]
        x0 = np.clip(out[k].ravel()[cols], 0.0, ub)
        sol = lsq_linear(A, b, bounds=(np.zeros(cols.size), np.maximum(ub, 1e-15)),
                         method="bvls")
        beta = np.zeros(P * E)
        # keep the better of the solution and the scaled contact inverse dynamics
        r_new, r_old = A @ sol.x - b, A @ x0 - b
        # (BVLS may leave a bound by rounding: clipped back)
        beta[cols] = np.clip(sol.x, 0.0, ub) if r_new @ r_new <= r_old @ r_old else x0
        out[k] = beta.reshape(P, E)
    return out


def add_contact_curvature(cm, H, Jphi, phi, lam, T, P):
    """Add the convex part of ``lam_g`` times the contact constraints' curvature to the
    per-frame Hessians ``H`` (in place): ``g = f^n - F_max s(u)``, ``u = (phi - h_0) /
    (h_1 - h_0)``, whose Hessian in ``y`` holds ``-F_max s''(u) / (h_1 - h_0)^2 grad(phi)
    grad(phi)^T``; kept where it is positive (``s'' = 12 u - 6 < 0``, the lower half of
    the band), the term with the curvature of ``phi`` itself left out.

    Parameters
    ----------
    cm : ConsistentMotion
    H : (T, 3 nq + P E, 3 nq + P E) ndarray
        The per-frame Hessians, changed in place (their leading ``nq`` block).
    Jphi : (P, T nq) ndarray
        ``d phi / d y`` of every frame side by side (the mapped CasADi output).
    phi : (P, T) ndarray
        Heights of the points (m).
    lam : (T, P) ndarray
        IPOPT's multipliers of the contact constraints.
    T, P : int
    """
    nq = cm.tree.nq
    h0, h1 = cm.contact_band
    u = (phi.T - h0) / (h1 - h0)                                  # (T, P)
    c = np.where((u > 0) & (u < 0.5), 6.0 - 12.0 * u, 0.0)
    c *= np.maximum(lam, 0.0) * cm.max_force / (h1 - h0) ** 2
    if np.any(c):
        _add_height_gram(H, Jphi, c, nq)


def add_contact_height(cm, H, Jphi, c, lam_f):
    """Add the Gauss-Newton block ``2 lam_f J_phi^T diag(c) J_phi`` of a weighted sum of
    squared point heights ``sum_j c_j phi_j^2`` to the per-frame Hessians ``H`` (in place):
    the loaded-height term (``c = f^n / (W sigma_h^2 T)``, the normal forces held, as the
    slip term) and the soft non-penetration term (``c = [phi < 0] / (sigma_p^2 T)``).

    Parameters
    ----------
    cm : ConsistentMotion
    H : (T, 3 nq + P E, 3 nq + P E) ndarray
        The per-frame Hessians, changed in place (their leading ``nq`` block).
    Jphi : (P, T nq) ndarray
        ``d phi / d y`` of every frame side by side.
    c : (T, P) ndarray
        The weights.
    lam_f : float
        IPOPT's objective factor.
    """
    _add_height_gram(H, Jphi, 2.0 * lam_f * c, cm.tree.nq)


def sole_pairs(point_bodies, points) -> np.ndarray:
    """Pairs of contact points across a sole: same body, the same coordinate along the sole,
    opposite sides of the body's point centroid across it.

    The sole's axes are those of :func:`inset_contact_points` (per body, the two body-frame
    axes along which its points spread most: the length, then the width). Points whose
    along-coordinates round to the same micrometre form a row; a row's point furthest on the negative
    side across pairs with its point furthest on the positive side (a box foot's four
    corners: the heel pair and the toe pair).

    Parameters
    ----------
    point_bodies : sequence of str
        The body of each point (P,).
    points : (P, 3) array_like
        The points in their bodies' frames.

    Returns
    -------
    (n, 2) ndarray of int
        Indices ``(a, b)`` into the points, ``a`` on the negative side across.
    """
    pts = np.asarray(points, float).reshape(-1, 3)
    bodies = np.asarray(list(point_bodies), object)
    out = []
    for body in dict.fromkeys(bodies):
        idx = np.flatnonzero(bodies == body)
        if idx.size < 2:
            continue
        P = pts[idx]
        along, across = np.argsort(-np.ptp(P, axis=0), kind="stable")[:2]
        u = P[:, across] - P[:, across].mean()
        rows = np.round(P[:, along] / 1e-6).astype(np.int64)
        for r in dict.fromkeys(rows):
            row = np.flatnonzero(rows == r)
            a, b = row[np.argmin(u[row])], row[np.argmax(u[row])]
            if u[a] < 0 < u[b]:
                out.append((idx[a], idx[b]))
    return np.array(out, int).reshape(-1, 2)


def smooth_step(x, lib=ca):
    """``s(x) = 1 - 3 u^2 + 2 u^3`` with ``u = x`` clipped to [0, 1]: 1 at and below 0, 0 at
    and above 1, continuously differentiable; ``lib`` ``casadi`` (symbols) or ``numpy``. The
    contact model's bound on a point's normal force at ``x = (phi - h_0) / (h_1 - h_0)``."""
    u = lib.fmin(lib.fmax(x, 0.0), 1.0)
    return 1 - 3 * u ** 2 + 2 * u ** 3


def _touch(cm, phi, lib):
    """:func:`smooth_step` of the height ``phi`` in ``cm``'s contact band: 1 on the floor, 0
    from the band's top ``h_1`` on."""
    h0, h1 = cm.contact_band
    return smooth_step((phi - h0) / (h1 - h0), lib)


def level_cost(cm, phi, T: int):
    """The levelling term of one frame, ``sum_(a,b) (s_a + s_b) / 2 (phi_a - phi_b)^2 /
    (sigma_l^2 T)`` over the pairs across a sole (:func:`sole_pairs` of ``cm.cid``'s
    points): a foot that touches the floor lies level across its width (not on one edge).
    ``s_j = s(u_j)`` is the contact model's smooth step of the point's height (1 up to
    ``h_0``, 0 from ``h_1`` on): a pair on the floor weighs 1, a foot above the band 0.
    (Weighting by the normal forces instead, ``(f^n_a + f^n_b) / W``, let the optimiser
    unload a tilted foot rather than level it: on the walker standing, a foot rolled 8 deg
    ended with its load moved to the other foot and the roll kept.) 0 when
    ``cm.level_scale`` is None.

    HDM walk, the second rigid stage (``examples/_human_experiments.RIGID_STAGES``) from the
    first stage's motion, ``level_scale=0.003``: the loaded feet's roll across the sole
    (median height difference of the two sides where a foot carries half the weight) 7.1
    mm, against 13.6 and 10.7 mm without the term; markers 10.26 mm (8.47 without),
    residual 0.37 N, loaded points 3.56 mm above the floor load-weighted (1.47 without) --
    and the forward pass (``benchmarks/bench_forward_pass.py``) worse: 33.6 mm with
    ``LQRWeights()`` (18.2 without), 15.6 mm holding the body (13.3). With
    ``contact_height_scale=0.0015`` as well: roll 7.5-7.7 mm, loaded points 3.11 mm, the
    forward pass falls with ``LQRWeights()`` and gives 16.4 mm holding the body; weighted by
    the normal forces (``level_scale=0.002``): roll 6.5-6.8 mm, markers 10.30 mm, forward
    pass 24.5 and 14.3 mm. The term is off in the example's stages.

    Parameters
    ----------
    cm : ConsistentMotion
        Its ``level_scale`` ``sigma_l`` (m), ``contact_band`` and ``cid`` (the points).
    phi : (P,) casadi.SX
        The points' heights (m).
    T : int
        Frames.

    Returns
    -------
    casadi.SX or float
    """
    if cm.level_scale is None:
        return 0.0
    pairs = sole_pairs(cm.cid.point_bodies, cm.cid.points)
    if len(pairs) == 0:
        return 0.0
    a, b = pairs[:, 0].tolist(), pairs[:, 1].tolist()
    s = _touch(cm, phi, ca)
    return ca.dot(s[a] + s[b], (phi[a] - phi[b]) ** 2) / (2 * cm.level_scale ** 2 * T)


def add_level(cm, H, Jphi, phi, lam_f) -> None:
    """Add the Gauss-Newton block of :func:`level_cost` to the per-frame Hessians ``H`` (in
    place): ``2 lam_f (J_a - J_b)^T diag(c) (J_a - J_b)`` with ``J = d phi / d y`` and
    ``c = (s_a + s_b) / (2 sigma_l^2 T)`` (the weights held, as the normal forces of the
    loaded-height term). Nothing when ``cm.level_scale`` is None.

    Parameters
    ----------
    cm : ConsistentMotion
    H : (T, 3 nq + P E, 3 nq + P E) ndarray
        The per-frame Hessians.
    Jphi : (P, T nq) ndarray
        ``d phi / d y`` of every frame side by side.
    phi : (P, T) ndarray
        Heights of the points (m).
    lam_f : float
        IPOPT's objective factor.
    """
    if cm.level_scale is None:
        return
    pairs = sole_pairs(cm.cid.point_bodies, cm.cid.points)
    if len(pairs) == 0:
        return
    a, b = pairs[:, 0], pairs[:, 1]
    T = phi.shape[1]
    s = _touch(cm, np.asarray(phi, float), np)
    c = (s[a] + s[b]).T / (2 * cm.level_scale ** 2 * T)
    _add_height_gram(H, Jphi[a] - Jphi[b], 2.0 * lam_f * c, cm.tree.nq)


def _add_height_gram(H, Jphi, w, nq: int) -> None:
    """``H[k, :nq, :nq] += J_k^T diag(w_k) J_k`` per frame ``k``: ``J_k`` (P, nq) the
    frame's rows of ``Jphi`` (P, T nq), ``w`` (T, P)."""
    T, P = w.shape
    Jp = Jphi.reshape(P, T, nq).transpose(1, 0, 2)               # (T, P, nq)
    H[:, :nq, :nq] += np.matmul(Jp.transpose(0, 2, 1) * w[:, None, :], Jp)


def gauss_newton_blocks(cm, Jm, Jr, Jv, fn, sq, mw, T, mbar, lam_f):
    """Per-frame Gauss-Newton Hessians (T, 3 nq + P E, 3 nq + P E) of the cost.

    ``2 lam_f J^T W J`` of the least-squares terms of frame ``k`` in ``z_k = [y; y'; y'';
    beta]``: markers (``J_m`` in ``y``), the root residual (``J_res`` in ``z``), the slip
    (``f^n |v^t|^2`` with ``f^n`` held: ``J_vt`` in ``[y; y']``), the joint prior, the
    quaternion norm of the root and ``rho |beta|^2``.

    Parameters
    ----------
    cm : ConsistentMotion
    Jm, Jr, Jv : ndarray
        The mapped Jacobians ``(3M, T nq)``, ``(6, T nz)``, ``(3P, T 2nq)``.
    fn : (P, T) ndarray
        Normal forces (N).
    sq : (4, T) ndarray
        The root's quaternion spline values.
    mw : (T, M) ndarray
        Marker weights of the cost.
    T : int
    mbar : float
        Visible markers per frame.
    lam_f : float
        IPOPT's objective factor.

    Returns
    -------
    (T, nz, nz) ndarray
    """
    nq = cm.tree.nq
    sm, sF, sM, sv = cm.sigma
    Jm = Jm.reshape(-1, T, nq).transpose(1, 0, 2)
    Jr = Jr.reshape(6, T, -1).transpose(1, 0, 2)
    Jv = Jv.reshape(-1, T, 2 * nq).transpose(1, 0, 2)
    nz = Jr.shape[2]
    S = np.r_[[1 / sM ** 2] * 3, [1 / sF ** 2] * 3] / T
    # (batched matrix products: J^T diag(w) J of every frame)
    H = np.matmul(Jr.transpose(0, 2, 1) * S, Jr)
    H[:, :nq, :nq] += np.matmul(Jm.transpose(0, 2, 1) * np.repeat(mw, 3, axis=1)[:, None, :],
                                Jm)
    c = np.repeat(np.maximum(fn.T, 0.0) / (cm.weight * sv ** 2 * T), 3, axis=1)
    H[:, :2 * nq, :2 * nq] += np.matmul(Jv.transpose(0, 2, 1) * c[:, None, :], Jv)
    jq = cm.joint_q
    H[:, jq, jq] += (cm.prior_weight / sm) ** 2 / mbar / T
    r0 = cm.tree.joints[0].q_start
    sq = sq.T
    H[:, r0:r0 + 4, r0:r0 + 4] += 4 * np.einsum("ki,kj->kij", sq, sq) / T
    b = np.arange(3 * nq, nz)
    H[:, b, b] += cm.force_weight / T
    return (2.0 * lam_f) * H


def marker_errors(cm, Q, X, vis, offsets=None):
    """Distances (T, M) (m) between the modelled markers of the motion ``Q`` (T, nq) and the
    measured ``X`` (T, M, 3); NaN where ``vis`` (T, M) is false.

    Parameters
    ----------
    cm : ConsistentMotion
        Its ``tree``, ``marker_bodies`` and ``marker_offsets``.
    Q : (T, nq) ndarray
    X : (T, M, 3) ndarray
    vis : (T, M) ndarray of bool
    offsets : (M, 3) ndarray, optional
        Marker offsets used instead of ``cm.marker_offsets``.

    Returns
    -------
    (T, M) ndarray
    """
    q = ca.SX.sym("q", cm.tree.nq)
    P = []
    for body, o in zip(cm.marker_bodies, cm.marker_offsets if offsets is None else offsets):
        Tb = cm.tree.body_pose(body, q)
        P.append(Tb[0:3, 3] + Tb[0:3, 0:3] @ ca.DM(o))
    fun = ca.Function("markers", [q], [ca.vertcat(*P)])
    Xm = np.asarray(fun.map(len(Q))(np.asarray(Q).T)).T.reshape(X.shape)
    return np.where(vis, np.linalg.norm(Xm - np.where(vis[..., None], X, 0.0), axis=2),
                    np.nan)


def inset_contact_points(contact_points: dict, margin) -> dict:
    """Contact points moved ``margin`` toward their body's point centroid along the sole.

    Per body, the sole's axes are the two body-frame axes along which its points spread
    most (a box foot's length, then its width); each point's coordinate along either axis
    moves toward the centroid's by that axis's margin, never past it (``c + sign(u)
    max(|u| - m, 0)``); the third coordinate is kept. For a rectangle of corner points this is the rectangle
    shrunk by ``margin`` on every side: a force distribution on the inset points has its
    centre of pressure at least ``margin`` inside the true rectangle's edges.

    Parameters
    ----------
    contact_points : dict
        ``{body: [(3,) point in the body frame, ...]}``.
    margin : float or (float, float)
        ``m`` (m, >= 0) on both axes, or ``(along, across)``: along the sole's length and
        across it (``(0, m)`` keeps the toe and heel, insets the sides).

    Returns
    -------
    dict
        ``{body: (n, 3) ndarray}``, the points in the same order.
    """
    m2 = np.broadcast_to(np.asarray(margin, float), (2,))
    out = {}
    for body, pts in contact_points.items():
        P = np.array([np.asarray(p, float).ravel() for p in pts], float).reshape(-1, 3)
        c = P.mean(axis=0)
        spread = np.ptp(P, axis=0) if len(P) else np.zeros(3)
        Q = P.copy()
        for a, m in zip(np.argsort(-spread, kind="stable")[:2], m2):
            u = P[:, a] - c[a]
            Q[:, a] = c[a] + np.sign(u) * np.maximum(np.abs(u) - m, 0.0)
        out[body] = Q
    return out


def support_margin_pair(margin, who: str = "ConsistentMotion"):
    """``support_margin`` checked: None, or ``(along, across)`` (2,) metres, both finite and
    >= 0 and one > 0 (a number stands for both).

    Raises
    ------
    ContactError
        Another shape, a negative or non-finite entry, or both zero; the message names
        ``who``.
    """
    if margin is None:
        return None
    m = np.asarray(margin, float).ravel()
    if m.size == 1:
        m = np.repeat(m, 2)
    if m.shape != (2,) or not np.all(np.isfinite(m)) or np.any(m < 0) or not np.any(m > 0):
        raise ContactError(f"{who}: support_margin must be None or finite and > 0 (m), or "
                           f"(along, across) the sole both >= 0 and one > 0, got {margin!r}")
    return m

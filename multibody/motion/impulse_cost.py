"""The trajectory LQR's cost on its model's contact impulses (``LQRWeights(contact_force=c)``,
:mod:`~multibody.motion.trajectory_lqr`).

The LQR's model holds the stance points as bilateral equalities: an optimal correction may
ask a held point to pull on the floor, which the simulated (unilateral) contact cannot do --
the foot tips about its loaded edge instead. The standard remedy keeps the model bilateral
and prices the change of the held points' impulses. With the impulses of the step
linearised exactly, ``delta p = P_x delta x + P_u delta u`` (3 per point, world frame;
:class:`~multibody.motion.trajectory_lqr.ConstrainedStep`), the stage cost gains

.. math::

    \\sum_i W_i\\,(n^T \\delta p_i)^2 + W_i\\,\\tau\\,|(I - n n^T) \\delta p_i|^2, \\qquad
    W_i = \\frac{c}{h^2 (\\max(F_i, 0) + F_0)^2},

``n`` the floor's normal, ``F_i`` the normal load of held point ``i`` in the reference (its
contact forces; without them the model's own impulse at the reference, ``n^T p_i / h``),
``h`` the time step, ``F_0`` an offset (N) and ``tau`` the tangential share: the relative
change of each point's normal load, so the most lightly loaded points -- the nearest to
lifting off -- are protected most. (On the HDM walk the model's impulses at the reference
are no guide: where the reference's held points move, the model stops them in one step with
internal impulses of thousands of newtons between the points of a foot.) Or per foot
(``LQRWeights.contact_feet``, :func:`foot_rows`): its relative load change and its centre
of pressure's shift, free of the internal impulses between its points. In the LQR's terms, with ``G_x = E P_x``, ``G_u = E
P_u`` (``E`` the weighted projections stacked): ``Q += G_x^T G_x``, ``R += G_u^T G_u`` and
the cross term ``N = G_x^T G_u`` (:func:`~multibody.motion.trajectory_lqr.
finite_horizon_lqr`). A one-sided cost (only a decrease of the normal impulse priced) is not
quadratic, so not an LQR: the cost is symmetric, and a correction that loads a point more is
priced as one that unloads it.

References
----------
P. M. Wensing, M. Posa, Y. Hu, A. Escande, N. Mansard, A. Del Prete, "Optimization-Based
Control for Dynamic Legged Robots", IEEE Trans. Robotics 40, 2024 (a survey: contact forces
in the costs of whole-body controllers); Anderson and Moore, *Optimal Control:
Linear Quadratic Methods*, 1990, sec. 2.4 (the cross term).
"""
from __future__ import annotations

import numpy as np

from .errors import MotionError

__all__ = ["impulse_weights", "point_rows", "foot_rows", "impulse_cost_terms",
           "contact_cost_rows"]


def impulse_weights(loads, held, time_step: float, scale: float, offset: float) -> np.ndarray:
    """The weights ``W_i = c / (h (max(F_i, 0) + F_0))^2`` of the held points' impulse
    changes (module docstring); zero on the points not held.

    Parameters
    ----------
    loads : (P,) array_like
        The points' normal loads ``F_i = n^T p_i / h`` at the reference (N).
    held : (P,) array_like
        The held points (nonzero: held).
    time_step, scale, offset : float
        ``h`` (s), ``c`` and ``F_0`` (N).

    Returns
    -------
    W : (P,) ndarray
        In 1/(N s)^2.

    Raises
    ------
    MotionError
        ``loads`` not one per point of ``held``, or ``offset`` not > 0.
    """
    held = np.asarray(held, float).ravel() != 0
    F = np.asarray(loads, float).ravel()
    if F.shape != held.shape:
        raise MotionError(f"impulse_weights: loads must be ({len(held)},) (one per point), "
                          f"got {F.shape}")
    if not (np.isfinite(offset) and offset > 0):
        raise MotionError(f"impulse_weights: offset must be finite and > 0, got {offset!r}")
    h = float(time_step)
    return np.where(held, float(scale) / (h * (np.maximum(F, 0.0) + float(offset))) ** 2, 0.0)


def point_rows(weights, normal, tangential: float = 0.0) -> np.ndarray:
    """The feature rows ``E`` (3 P, 3 P) of the points' cost (module docstring): ``dp^T E^T E
    dp = sum_i W_i ((n^T dp_i)^2 + tau |(I - n n^T) dp_i|^2)``, ``weights`` ``W`` (P,),
    ``tangential`` ``tau``."""
    W = np.asarray(weights, float).ravel()
    n = np.asarray(normal, float) / np.linalg.norm(normal)
    # per point: n n^T + tau (I - n n^T) = L L^T with L's columns the scaled axes
    M = np.outer(n, n) + float(tangential) * (np.eye(3) - np.outer(n, n))
    w, V = np.linalg.eigh(M)
    root = V * np.sqrt(np.maximum(w, 0.0))
    return np.kron(np.diag(np.sqrt(W)), root.T)


def impulse_cost_terms(P_x, P_u, E) -> tuple:
    """The additions to the LQR's stage cost of the cost ``|E dp|^2`` on the impulse change
    ``dp = P_x dx + P_u du`` (module docstring).

    Parameters
    ----------
    P_x, P_u : (3 P, nx), (3 P, nu) array_like
        The impulses' Jacobians.
    E : (m, 3 P) array_like
        The priced features (:func:`point_rows`, :func:`foot_rows`).

    Returns
    -------
    dQ, dR, N : (nx, nx), (nu, nu), (nx, nu) ndarray
        ``E P_x`` and ``E P_u`` squared and crossed.
    """
    P_x, P_u, E = np.asarray(P_x, float), np.asarray(P_u, float), np.asarray(E, float)
    if P_x.shape[0] != E.shape[1] or P_u.shape[0] != E.shape[1]:
        raise MotionError(f"impulse_cost_terms: P_x and P_u must have {E.shape[1]} rows (E's "
                          f"columns), got {P_x.shape} and {P_u.shape}")
    Gx, Gu = E @ P_x, E @ P_u
    return Gx.T @ Gx, Gu.T @ Gu, Gx.T @ Gu


def foot_rows(x, loads, held, groups, normal, time_step: float, offset: float,
              length: float) -> np.ndarray:
    """The feature rows ``E`` of the feet's cost (``LQRWeights.contact_feet``): per foot (a
    group of points, e.g. a foot's and its toes'), with ``F`` the reference's load on its held
    points and ``c`` their centre of pressure, the relative change of the foot's normal load
    and the centre of pressure's shift in the floor plane over ``length``,

    .. math::

        \\frac{\\sum_i n^T \\delta p_i}{h (F + F_0)}, \\qquad
        \\frac{\\sum_i t_a^T (x_i - c)\\, n^T \\delta p_i}{h (F + F_0)\\, L}, \\; a = 1, 2,

    (the shift to first order in the loads, the points held still) -- the sums over a
    foot's points leave out the internal impulses between its points and between a foot
    and its toes, which the bilateral model may trade freely.

    Parameters
    ----------
    x : (P, 3) array_like
        The points in the world at the reference (m).
    loads, held, groups : (P,) array_like
        The reference's normal loads (N), the held points (nonzero), a foot label per point.
    normal : (3,) array_like
    time_step, offset, length : float
        ``h`` (s), ``F_0`` (N) and ``L`` (m).

    Returns
    -------
    E : (3 G, 3 P) ndarray
        ``G`` the feet with a held point; ``dp^T E^T E dp`` is the cost.
    """
    x, F = np.asarray(x, float).reshape(-1, 3), np.maximum(np.asarray(loads, float), 0.0)
    held, groups = np.asarray(held, float) != 0, np.asarray(groups)
    n = np.asarray(normal, float) / np.linalg.norm(normal)
    t = np.linalg.svd(n[None])[2][1:]                 # two tangents orthonormal to n
    P, rows = len(x), []
    for g in dict.fromkeys(groups[held]):
        idx = np.nonzero(held & (groups == g))[0]
        Ft = F[idx].sum()
        c = F[idx] @ x[idx] / Ft if Ft > 0 else x[idx].mean(axis=0)
        s = 1.0 / (float(time_step) * (Ft + float(offset)))
        r = np.zeros((3, P, 3))
        r[0, idx] = s * n
        r[1:, idx] = s / float(length) * ((x[idx] - c) @ t.T).T[:, :, None] * n
        rows.append(r.reshape(3, 3 * P))
    return np.vstack(rows) if rows else np.zeros((0, 3 * P))


def contact_cost_rows(tree, contact_points, q, loads, held, normal, time_step: float,
                      weights) -> np.ndarray:
    """The priced features per frame of ``LQRWeights`` ``weights`` (``contact_force`` ``c``,
    ``contact_force_offset``, ``contact_force_tangential``, ``contact_feet``,
    ``contact_cop_length``): ``sqrt(c)`` times :func:`point_rows` or, with ``contact_feet``,
    :func:`foot_rows` (a foot: a contact body whose parent carries none, with its contact
    children), zero-padded to one shape.

    Parameters
    ----------
    tree : RigidBodyTree
    contact_points : dict
        ``{body: (P_b, 3)}`` (body frames).
    q : (K, nq) array_like
        The reference (the points' positions for the feet's centres of pressure).
    loads, held : (K, P) array_like
        The reference's normal loads (N) and the held points.
    normal : (3,) array_like
    time_step : float

    Returns
    -------
    E : (K, m, 3 P) ndarray

    Raises
    ------
    MotionError
        ``loads`` or ``held`` not (K, P), one per frame of ``q`` and contact point.
    """
    bodies = [b for b, ps in contact_points.items() for _ in np.asarray(ps).reshape(-1, 3)]
    local = np.vstack([np.asarray(ps, float).reshape(-1, 3) for ps in contact_points.values()])
    parent = {j.child: j.parent for j in tree.joints}
    groups = np.array([parent[b] if parent[b] in contact_points else b for b in bodies])
    loads, held = np.asarray(loads, float), np.asarray(held, float)
    shape = (len(q), len(bodies))
    if loads.shape != shape or held.shape != shape:
        raise MotionError(f"contact_cost_rows: loads and held must be {shape} (frames, contact "
                          f"points), got {loads.shape} and {held.shape}")
    c, F0 = float(weights.contact_force), float(weights.contact_force_offset)
    out = []
    for k, qk in enumerate(np.asarray(q, float)):
        if weights.contact_feet:
            T = {b: np.asarray(tree.body_pose(b, qk), float) for b in contact_points}
            x = np.array([T[b][:3, :3] @ p + T[b][:3, 3] for b, p in zip(bodies, local)])
            E = foot_rows(x, loads[k], held[k], groups, normal, time_step, F0,
                          weights.contact_cop_length)
        else:
            E = point_rows(impulse_weights(loads[k], held[k], time_step, 1.0, F0), normal,
                           weights.contact_force_tangential)
        out.append(np.sqrt(c) * E)
    m = max(E.shape[0] for E in out)
    return np.array([np.vstack([E, np.zeros((m - len(E), 3 * len(bodies)))]) for E in out])

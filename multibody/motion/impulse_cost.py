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
internal impulses of thousands of newtons between the points of a foot.) In the LQR's terms, with ``G_x = E P_x``, ``G_u = E
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

__all__ = ["impulse_weights", "impulse_cost_terms"]


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


def impulse_cost_terms(P_x, P_u, weights, normal, tangential: float = 0.0) -> tuple:
    """The additions to the LQR's stage cost of the impulse cost (module docstring).

    Parameters
    ----------
    P_x, P_u : (3 P, nx), (3 P, nu) array_like
        The impulses' Jacobians.
    weights : (P,) array_like
        ``W`` (:func:`impulse_weights`).
    normal : (3,) array_like
    tangential : float
        ``tau``, the tangential components' share of ``W``.

    Returns
    -------
    dQ, dR, N : (nx, nx), (nu, nu), (nx, nu) ndarray
    """
    P_x, P_u = np.asarray(P_x, float), np.asarray(P_u, float)
    W = np.asarray(weights, float).ravel()
    if P_x.shape[0] != 3 * len(W) or P_u.shape[0] != 3 * len(W):
        raise MotionError(f"impulse_cost_terms: P_x and P_u must have {3 * len(W)} rows (3 "
                          f"per weight), got {P_x.shape} and {P_u.shape}")
    n = np.asarray(normal, float)
    n = n / np.linalg.norm(n)
    # per point: W (n n^T + tau (I - n n^T)) = L L^T with L's columns the scaled axes
    M = np.outer(n, n) + float(tangential) * (np.eye(3) - np.outer(n, n))
    w, V = np.linalg.eigh(M)
    root = V * np.sqrt(np.maximum(w, 0.0))            # M = root root^T
    E = np.kron(np.diag(np.sqrt(W)), root.T)          # (3 P, 3 P)
    Gx, Gu = E @ P_x, E @ P_u
    return Gx.T @ Gx, Gu.T @ Gu, Gx.T @ Gu

"""Post-stabilization of a time step's positions (private to :mod:`multibody.plants`).

After :class:`~multibody.plants.TimeSteppingRigidBodySystem` integrates ``q_n``, the
position errors ``phi(q_n)`` of its rigid bilateral blocks (closures and welds without CFM or
spring softening) are removed by Gauss-Newton steps

.. math::

    \\Delta q = -H^{-1} J^T (J H^{-1} J^T)^{+} \\phi(q_n)

(mass-weighted least-norm correction; Cline & Pai 2003, "Post-stabilization for rigid body
simulation with contact and constraints", ICRA), so loop closures do not drift.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

__all__ = ["project_positions"]


def project_positions(plant, context, xd: np.ndarray, qn: np.ndarray, vn: np.ndarray,
                      Minv: np.ndarray, t: float) -> np.ndarray:
    """Gauss-Newton steps on the rigid bilateral blocks' position errors at ``qn``.

    Stops once the error is below 1e-11 or after a step from an error below 1e-6 (Newton's
    quadratic convergence leaves ~1e-12), at most three steps.

    Parameters
    ----------
    plant : TimeSteppingRigidBodySystem
    context : Context
        The plant's context (the blocks' parameters are read from it).
    xd : ndarray, shape (nxd,)
        The discrete state at the start of the step.
    qn : ndarray, shape (nq,)
        Integrated positions.
    vn : ndarray, shape (nv,)
        Next velocities (only for the kinematics call).
    Minv : ndarray, shape (nv, nv)
        Inverse of ``H + h D`` at the start of the step.
    t : float
        Time at the start of the step.

    Returns
    -------
    ndarray, shape (nq,)
        The projected positions.
    """
    blocks = [c for c in plant.constraints if c.is_bilateral() and not c.spring
              and plant.block_context(c, context, xd).get_parameter("cfm")[0] == 0]
    if not blocks:
        return qn
    for _ in range(3):
        _, _, kn = plant.kinematics(qn, vn, t + plant.time_step)
        rows = [c.calc_rows(plant.block_context(c, context, xd), kn) for c in blocks]
        phi = np.concatenate([r.phi for r in rows])
        err = float(np.max(np.abs(phi))) if phi.size else 0.0
        if err < 1e-11:
            break
        J = np.vstack([r.J for r in rows])
        live = np.any(J != 0.0, axis=1)
        J, phi = J[live], phi[live]
        MinvJT = Minv @ J.T
        G = J @ MinvJT
        try:
            lam = sla.cho_solve(sla.cho_factor(G, check_finite=False), phi, check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            lam = np.linalg.lstsq(G, phi, rcond=1e-12)[0]
        qn = plant.integrate(qn, -MinvJT @ lam, 1.0)
        if err < 1e-6:
            break
    return qn

"""What the plants' solves return: :class:`RigidBodySolution` (continuous time, at one
state) and :class:`StepSolution` (time stepping, one step)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..constraints import ContactResults

__all__ = ["RigidBodySolution", "StepSolution"]


@dataclass(frozen=True, eq=False)
class RigidBodySolution:
    """Accelerations and forces at one state (returned by :meth:`RigidBodySystem.solve`).

    Attributes
    ----------
    vdot : ndarray (nv,)
    f : ndarray (m,)
        Equality-row forces, in the order of :meth:`RigidBodySystem.equality_row_names`.
    tau_constraint : ndarray (nv,)
        ``J^T f`` of all rows (equality and unilateral).
    tau_actuators : ndarray (nv,)
    contact_results : ContactResults
    sites : list
        Per active unilateral site, its solved rows (:class:`multibody._rbs_unilateral.SiteSolution`).
    """

    vdot: np.ndarray
    f: np.ndarray
    tau_constraint: np.ndarray
    tau_actuators: np.ndarray
    contact_results: ContactResults
    sites: list = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class StepSolution:
    """Solution of the step ``[time, time + h]`` (value of the ``step`` output port).

    Attributes
    ----------
    time : float
    q_next, v_next : ndarray
        Configuration (nq,) and velocity (nv,) at ``time + h``.
    xd_next : ndarray
        The whole next discrete state (with the blocks' states).
    tau_actuators : ndarray, shape (nv,)
        Sum of the actuator forces.
    tau_constraint : ndarray, shape (nv,)
        Mean generalized constraint force ``J^T p / h``.
    impulses : list of ndarray
        Per constraint block, the impulses of its rows.
    rows : list of ConstraintRows
    report : SolveReport
        LCP status, method, residual and size.
    generalized_acceleration : ndarray, shape (nv,)
        ``(v_next - v) / h`` of the step.
    warm_start : tuple
        The impulses (and cone multipliers) by row key, which the next step starts from.
    make_contacts : callable
        Builds the :class:`ContactResults` of the step (called on first access of
        :attr:`contact_results`).
    """

    time: float
    q_next: np.ndarray
    v_next: np.ndarray
    xd_next: np.ndarray
    tau_actuators: np.ndarray
    tau_constraint: np.ndarray
    impulses: list
    rows: list
    report: Any
    generalized_acceleration: np.ndarray
    warm_start: Any
    make_contacts: Callable

    @property
    def contact_results(self) -> ContactResults:
        """The contacts of the step (:class:`ContactResults`), built on first access."""
        res = self.__dict__.get("_contacts")
        if res is None:
            res = self.make_contacts()
            object.__setattr__(self, "_contacts", res)
        return res

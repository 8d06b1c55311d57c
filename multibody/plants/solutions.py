"""What the plants' solves return: :class:`RigidBodySolution` (continuous time, at one
state) and :class:`StepSolution` (time stepping, one step), with the step's records
:class:`StepStatus` (how the step was taken) and :class:`ContactWarmStart` (the impulses the
next step starts from, held in the context)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..constraints import ContactResults

__all__ = ["RigidBodySolution", "StepSolution", "StepStatus", "ContactWarmStart"]


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


@dataclass(frozen=True)
class StepStatus:
    """How one time step was taken (``step.status``; ``step.report`` is its ``report``).

    Attributes
    ----------
    method : str
        The step method that produced the step: ``"compiled_pgs"``, ``"numpy_pgs"``,
        ``"lcp"`` or a custom :class:`~multibody.plants.StepMethod`'s ``name``.
    converged : bool
        The accepted impulses meet the method's tolerance (``lcp_tolerance`` on the
        natural-map residual). A method that does not converge hands the step to its
        fallback, so a returned step has ``True`` unless its method has no such test, or
        the step is the last resort when the fallback failed too: the method's own
        iterate kept within the near-miss bound 1e-5 (``report.status == "near_miss"``,
        warned once per plant; ``fallback_reason`` names both failures).
    sweeps : int
        Projected Gauss-Seidel sweeps (0 for a pivoting solve).
    active_contacts : int
        Contact points with rows in this step.
    residual : float
        The solve's residual (velocity units, relative as the method documents).
    rows : int
        Constraint rows solved.
    report : SolveReport
        The solver's own report (``status``, ``method``, ``residual``, ``size``,
        ``iterations``).
    fallback_from : str or None
        The method that could not take this step (this one is its fallback's), else None.
    fallback_reason : str or None
        Why it could not (e.g. ``"the kernel did not converge: residual ..."``).
    """

    method: str
    converged: bool
    sweeps: int
    active_contacts: int
    residual: float
    rows: int
    report: Any
    fallback_from: Optional[str] = None
    fallback_reason: Optional[str] = None


@dataclass(frozen=True, eq=False)
class ContactWarmStart:
    """The impulses the next step starts from: the last committed step's, by key (held in
    the context's memory under ``"warm_start"``; one record for every step method).

    Entries are keyed, so rows that changed between steps (contacts made or broken, another
    method's rows) map by key: an entry a method does not find starts from zero. It is a hint
    only: every solution is verified, and a warm start that fails is retried cold.

    Attributes
    ----------
    method : str
        The step method that wrote it (``StepStatus.method``).
    keys : sequence
        One key per entry. The pivoting step: its row keys (contacts: ``(block, geometry a,
        geometry b, point, "n" or direction)``, else ``(block index, row)``); the compiled
        step: ``(block, geometry a, geometry b, "candidate", index, part)`` with ``part`` in
        ``"n", "fx", "fy", "fz"`` (normal impulse, world-axes friction impulse).
    impulses : ndarray, shape (len(keys),)
        The impulses (N s) of the entries.
    multipliers : ndarray, shape (len(keys),), optional
        The maximum-dissipation multipliers of the friction-cone LCP at the normal rows
        (the pivoting step; None otherwise).
    """

    method: str
    keys: Sequence
    impulses: np.ndarray
    multipliers: Optional[np.ndarray] = None

    def __init__(self, method: str, keys: Sequence, impulses: np.ndarray,
                 multipliers: Optional[np.ndarray] = None) -> None:
        # (fields written into the instance dict at once, as StepSolution's)
        self.__dict__.update(method=method, keys=keys, impulses=impulses,
                             multipliers=multipliers)

    def lookup(self, keys: Sequence) -> tuple:
        """``(impulses, multipliers)`` at ``keys`` (arrays of ``len(keys)``; 0 where a key
        is not in this record)."""
        if keys is self.keys:
            lam = np.zeros(len(keys)) if self.multipliers is None else self.multipliers
            return self.impulses, lam
        prev = dict(zip(self.keys, self.impulses.tolist()))
        lam = {} if self.multipliers is None else \
            {k: s for k, s in zip(self.keys, self.multipliers.tolist()) if s}
        return (np.array([prev.get(k, 0.0) for k in keys], dtype=float),
                np.array([lam.get(k, 0.0) for k in keys], dtype=float))


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
    generalized_acceleration : ndarray, shape (nv,)
        ``(v_next - v) / h`` of the step.
    warm_start : ContactWarmStart or None
        The impulses by key which the next step starts from (None: no rows).
    make_contacts : callable
        Builds the :class:`ContactResults` of the step (called on first access of
        :attr:`contact_results`).
    make_status : callable
        Builds the :class:`StepStatus` of the step (called on first access of
        :attr:`status`).
    """

    time: float
    q_next: np.ndarray
    v_next: np.ndarray
    xd_next: np.ndarray
    tau_actuators: np.ndarray
    tau_constraint: np.ndarray
    impulses: list
    rows: list
    generalized_acceleration: np.ndarray
    warm_start: Optional[ContactWarmStart]
    make_contacts: Callable
    make_status: Callable

    def __init__(self, time: float, q_next: np.ndarray, v_next: np.ndarray,
                 xd_next: np.ndarray, tau_actuators: np.ndarray, tau_constraint: np.ndarray,
                 impulses: list, rows: list, generalized_acceleration: np.ndarray,
                 warm_start: Optional[ContactWarmStart], make_contacts: Callable,
                 make_status: Callable) -> None:
        # the fields written straight into the instance dict (the frozen dataclass's own
        # __init__ sets them one object.__setattr__ at a time: ~1.5 us of every step)
        self.__dict__.update(
            time=time, q_next=q_next, v_next=v_next, xd_next=xd_next,
            tau_actuators=tau_actuators, tau_constraint=tau_constraint, impulses=impulses,
            rows=rows, generalized_acceleration=generalized_acceleration,
            warm_start=warm_start, make_contacts=make_contacts, make_status=make_status)

    @property
    def contact_results(self) -> ContactResults:
        """The contacts of the step (:class:`ContactResults`), built on first access."""
        res = self.__dict__.get("_contacts")
        if res is None:
            res = self.make_contacts()
            object.__setattr__(self, "_contacts", res)
        return res

    @property
    def status(self) -> StepStatus:
        """How the step was taken (:class:`StepStatus`), built on first access."""
        st = self.__dict__.get("_status")
        if st is None:
            st = self.make_status()
            object.__setattr__(self, "_status", st)
        return st

    @property
    def report(self):
        """The solver's report (``status.report``: LCP status, solver, residual, size,
        sweeps)."""
        return self.status.report

    def fell_back(self, method: str, reason: str) -> "StepSolution":
        """This step (taken by a fallback method) marked as the fallback of ``method``,
        which could not take it because of ``reason``."""
        inner = self.make_status
        return dataclasses.replace(self, make_status=lambda: dataclasses.replace(
            inner(), fallback_from=method, fallback_reason=reason))

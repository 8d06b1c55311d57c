"""The result record of :meth:`multibody.motion.ConsistentMotion.solve` (the optimised
motion, its forces, the independent inverse-dynamics check and the solver's history)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .contact_inverse_dynamics import ContactInverseDynamicsResult, Floor
from .smoothing import JointTrajectory

__all__ = ["ConsistentMotionResult"]


@dataclass
class ConsistentMotionResult:
    """Result of :meth:`ConsistentMotion.solve` (T frames, M markers, P contact points).

    Attributes
    ----------
    trajectory : JointTrajectory
        The optimised motion at the capture's times: ``q``, and ``v``, ``vdot`` exact
        derivatives of the spline (use these, not a re-filtered ``q``).
    tau : (T, nv) ndarray
        Generalized forces with the optimiser's contact forces: the residual root wrench in
        the root rows, the joint torques elsewhere.
    residual : (T, 6) ndarray
        The optimiser's residual root wrench ``[torque (N m); force (N)]``, root frame.
    contact_forces : (T, P, 3) ndarray
        The optimiser's world contact forces (N).
    marker_errors : (T, M) ndarray
        Distances (m) between modelled and measured markers; NaN where occluded.
    marker_rms_before : float
        RMS marker distance of the warm start (m).
    inverse_dynamics : ContactInverseDynamicsResult
        The check: :class:`ContactInverseDynamics` solved on ``trajectory`` (its own forces).
    inverse_dynamics_before : ContactInverseDynamicsResult
        The same on the warm start.
    floor : Floor
    status : str
        IPOPT's return status, or "Stalled" when the stall rule stopped it (the result is
        then IPOPT's last iterate, not the best one of the window).
    success : bool
        IPOPT's success, or the stall rule's stop (``status == "Stalled"``).
    iterations : int
    seconds : float
        Wall time of the solve (building the NLP included).
    cpu_seconds : float
        CPU time of the process over the solve (all its threads; the machine may be shared).
    objective_history : list of float
        The objective at each IPOPT iteration (the start first).
    violation_history : list of float
        The largest contact-constraint violation (N) at each iteration.
    marker_offsets : (M, 3) ndarray, optional
        The marker offsets (body frames, m) of ``marker_errors``: the given ones, or the
        refined ones (``offset_scale``), to be used as the model's from then on.
    force_points : (P, 3) ndarray, optional
        Where ``contact_forces`` act, in their bodies' frames (m): the contact points, or
        the points inset by ``support_margin``; the forces map one to one onto the true
        points of a flat, loaded foot (same order).
    """

    trajectory: JointTrajectory
    tau: np.ndarray
    residual: np.ndarray
    contact_forces: np.ndarray
    marker_errors: np.ndarray
    marker_rms_before: float
    inverse_dynamics: ContactInverseDynamicsResult
    inverse_dynamics_before: ContactInverseDynamicsResult
    floor: Floor
    status: str
    success: bool
    iterations: int
    seconds: float
    cpu_seconds: float = float("nan")
    objective_history: list = field(default_factory=list)
    violation_history: list = field(default_factory=list)
    marker_offsets: Optional[np.ndarray] = None
    force_points: Optional[np.ndarray] = None

    @property
    def marker_rms(self) -> float:
        """RMS marker distance over all visible samples (m)."""
        e = self.marker_errors[np.isfinite(self.marker_errors)]
        return float(np.sqrt(np.mean(e ** 2))) if e.size else float("nan")

    @property
    def residual_force_rms(self) -> float:
        """RMS residual root force (N) of the independent check (``inverse_dynamics``)."""
        return self.inverse_dynamics.residual_force_rms

    @property
    def residual_force_rms_before(self) -> float:
        """RMS residual root force (N) of the warm start (``inverse_dynamics_before``)."""
        return self.inverse_dynamics_before.residual_force_rms

    @property
    def joint_torques(self) -> np.ndarray:
        """Joint torques (T, nj) of the check (``inverse_dynamics.joint_torques``)."""
        return self.inverse_dynamics.joint_torques

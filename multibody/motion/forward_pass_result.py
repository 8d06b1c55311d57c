"""The result of one forward pass (:class:`ForwardPassResult`, returned by
:meth:`multibody.motion.forward_pass.ForwardPass.run` and ``run_batch``)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["ForwardPassResult"]


@dataclass
class ForwardPassResult:
    """One forward pass (:meth:`~multibody.motion.forward_pass.ForwardPass.run`).

    Attributes
    ----------
    t : (K,) ndarray
        The reference frames' times (s).
    q : (K, nq) ndarray
        Simulated configurations at ``t`` (the tree's order).
    v : (K, nv) ndarray
        Simulated velocities at ``t``.
    joint_angle_rms_deg : float
        RMS over frames and joint coordinates (root excluded) of ``q - q_ref`` (degrees).
    joint_angle_error : (K, nv - 6) ndarray
        Per frame and joint coordinate ``difference(q_ref, q)`` (rad), root excluded.
    wall_seconds : float
        Wall time of the simulation (built and compiled beforehand).
    realtime_factor : float
        Simulated time over the CPU time of the simulation: the calling thread's
        (``time.thread_time``), which the run takes whole, so neither other processes on a
        shared machine nor this process's background compilations count (the wall time
        does; ``realtime_factor_wall`` is that one).
    realtime_factor_wall : float
        Simulated time over ``wall_seconds``.
    fallback_steps : list
        ``(time, reason)`` of steps the compiled loop handed to Python.
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    joint_angle_rms_deg: float
    joint_angle_error: np.ndarray
    wall_seconds: float
    realtime_factor: float
    realtime_factor_wall: float
    fallback_steps: list = field(default_factory=list)

"""Trajectory optimization on CasADi, on the same Systems and Diagrams that simulate.

Lives here: :class:`DirectCollocation` (Hermite-Simpson, free time steps),
:class:`DirectTranscription` (fixed step: forward Euler, or the exact update of a
discrete-time system) and :class:`DirectShooting` (multiple shooting with RK4 or CVODES per
interval), all on the common interface of :class:`MultipleShooting` (Drake's names in snake
case: ``time()``, ``state()``, ``input()`` placeholders, ``add_running_cost``,
``add_final_cost``, ``add_constraint_to_all_knot_points``, ``add_bounding_box_constraint``,
``add_input_bounds``, ``add_equal_time_intervals_constraints``, ``add_duration_bounds``,
``set_initial_trajectory``, ``solve``, ``reconstruct_state_trajectory``,
``reconstruct_input_trajectory``; the :class:`casadi.Opti` problem is ``.opti``), and
:class:`TrajectoryOptimizationResult`. Imports :mod:`systems.symbolic` and
:mod:`systems.trajectories`; nothing of multibody (a rigid-body plant is just a System here).
"""
from .direct_collocation import DirectCollocation
from .direct_shooting import DirectShooting
from .direct_transcription import DirectTranscription
from .multiple_shooting import MultipleShooting
from .result import TrajectoryOptimizationError, TrajectoryOptimizationResult

__all__ = ["DirectCollocation", "DirectTranscription", "DirectShooting", "MultipleShooting",
           "TrajectoryOptimizationResult", "TrajectoryOptimizationError"]

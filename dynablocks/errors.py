"""The roots of the project's exceptions and warnings.

``except DynablocksError`` catches everything dynablocks raises on purpose: every project
error class subclasses :class:`DynablocksError` through its package's root
(:class:`systems.errors.SystemsError`, :class:`multibody.errors.MultibodyError`,
:class:`solvers.errors.SolversError`, :class:`sensors.errors.SensorsError`) and also keeps
the built-in base callers caught before (``ValueError``, ``RuntimeError``, ``TypeError``,
...). Likewise every project warning subclasses :class:`DynablocksWarning` through its
package's warning root and keeps its category (``RuntimeWarning``, ``UserWarning``), so
``warnings.filterwarnings("ignore", category=DynablocksWarning)`` silences them all and
existing filters on the categories still work.

Errors raised by more than one package, where neither package may import the other, are
defined here once: :class:`TrajectoryError` (``systems.trajectories`` and
``multibody.motion``).

This module imports nothing of the project (it is the lowest layer).
"""
from __future__ import annotations

__all__ = ["DynablocksError", "DynablocksWarning", "TrajectoryError"]


class DynablocksError(Exception):
    """Root of every exception dynablocks raises on purpose (``except DynablocksError``).

    Not raised itself: each package raises subclasses of its own root, which also subclass
    a built-in exception (``ValueError``, ``RuntimeError``, ...). Messages name the culprit
    (system, port, joint, link, file and line) and what was expected.
    """


class DynablocksWarning(UserWarning):
    """Root of every warning dynablocks issues (filter them all with
    ``category=DynablocksWarning``); each package's warnings subclass its own warning root
    and keep their category (``RuntimeWarning``, ``UserWarning``)."""


class TrajectoryError(DynablocksError, ValueError):
    """Bad times or samples given to a trajectory: breaks or times not strictly increasing,
    too few samples, non-finite values, sizes that do not match (the message names the
    argument and what was expected).

    Raised by :class:`systems.trajectories.PiecewisePolynomial` and by
    :mod:`multibody.motion` (:func:`~multibody.motion.smooth_trajectory`,
    :func:`~multibody.motion.joint_work`); defined here because neither package may import
    the other. Importable from ``systems.trajectories``, ``systems.errors``,
    ``multibody.motion`` and ``multibody.motion.errors`` (the same class).
    """

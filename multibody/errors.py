"""Exceptions and warnings of the multibody package.

Every error is a :class:`MultibodyError` (a :class:`dynablocks.errors.DynablocksError` and a
``ValueError``; some also keep another built-in base callers caught before, e.g.
:class:`PainleveError` is a ``RuntimeError``); every message names the object (tree, body,
joint, frame, plant) and what was expected. Every warning is a :class:`MultibodyWarning` (a
:class:`dynablocks.errors.DynablocksWarning`) and keeps its category (``RuntimeWarning``,
``UserWarning``). The sub-packages with errors of their own have their own errors module
(:mod:`multibody.parsing.errors`, :mod:`multibody.motion.errors`,
:mod:`multibody.visualization.errors`); the plants' errors and warnings live here (and are
importable from :mod:`multibody.plants` too: the same objects).
"""
from __future__ import annotations

from dynablocks.errors import DynablocksError, DynablocksWarning

__all__ = ["MultibodyError", "MultibodyWarning", "JointError", "BodyError", "FrameError",
           "TreeError", "InputSizeError", "SingularMassMatrixError", "PainleveError",
           "StepMethodWarning", "TimeSteppingWarning", "RedundantConstraintWarning"]


class MultibodyError(DynablocksError, ValueError):
    """Root of the multibody errors (``except MultibodyError`` catches them all); a
    ``ValueError``, as it always was."""


class MultibodyWarning(DynablocksWarning):
    """Root of the multibody warnings."""


class JointError(MultibodyError):
    """An invalid joint definition (axis, origin, limits, parameters, unknown body)."""


class BodyError(MultibodyError):
    """An invalid body (mass, inertia, COM) or an unknown body name."""


class FrameError(MultibodyError, KeyError):
    """An unknown or duplicate frame name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class TreeError(MultibodyError):
    """An invalid tree topology (missing parent, cycle, duplicate names) or misuse."""


class InputSizeError(MultibodyError):
    """An argument of the wrong size, e.g. ``q has size 6 but tree 'arm' has nq = 7``."""


class SingularMassMatrixError(MultibodyError):
    """The mass matrix is singular: a joint moves no mass or inertia (a link of zero mass and
    zero inertia at the end of a prismatic joint), so forward dynamics has no solution. The
    message names the tree and the joints."""


class StepMethodWarning(MultibodyWarning, RuntimeWarning):
    """A time-stepping plant leaves the compiled contact step (issued once per plant).

    Either the scene takes the pivoting (Lemke) step for every step -- the message names the
    plant, the constraint block or geometry pair the compiled step does not cover and why --
    or a step fell back to it because the compiled kernel did not converge (the message
    names the plant, the time and the residual). Not issued when ``contact_solver="lcp"``
    asks for the pivoting step explicitly.
    """


class TimeSteppingWarning(MultibodyWarning, RuntimeWarning):
    """A step's constraint solve used its fallback (message: system, time, residual)."""


class RedundantConstraintWarning(MultibodyWarning, UserWarning):
    """Equality constraints are redundant or conflicting; forces come from least squares."""


class PainleveError(MultibodyError, RuntimeError):
    """The acceleration-level contact problem has no solution (inconsistent configuration).

    A :class:`MultibodyError` (so a ``ValueError``) and, as before, a ``RuntimeError``.
    """

"""Exceptions of the multibody package (all subclass built-in exceptions).

Every message names the object (tree, body, joint, frame) and what was expected.
"""
from __future__ import annotations

__all__ = ["MultibodyError", "JointError", "BodyError", "FrameError", "TreeError",
           "InputSizeError", "SingularMassMatrixError", "StepMethodWarning"]


class MultibodyError(ValueError):
    """Base class of the multibody modelling errors."""


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


class StepMethodWarning(RuntimeWarning):
    """A time-stepping plant leaves the compiled contact step (issued once per plant).

    Either the scene takes the pivoting (Lemke) step for every step -- the message names the
    plant, the constraint block or geometry pair the compiled step does not cover and why --
    or a step fell back to it because the compiled kernel did not converge (the message
    names the plant, the time and the residual). Not issued when ``contact_solver="lcp"``
    asks for the pivoting step explicitly.
    """

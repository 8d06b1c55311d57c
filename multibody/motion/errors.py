"""Exceptions of :mod:`multibody.motion` (all subclass built-in exceptions through
:class:`multibody.errors.MultibodyError`, a ``ValueError``).

Every message names the culprit (marker, body, joint, frame index, argument) and what was
expected.
"""
from __future__ import annotations

import warnings

from ..errors import MultibodyError

__all__ = ["MotionError", "MarkerSetError", "MarkerFitError", "TrajectoryError",
           "ContactError", "MarkerFitWarning", "ContactWarning"]


class MotionError(MultibodyError):
    """Base class of the motion-analysis errors."""


class MarkerSetError(MotionError):
    """A marker set that does not fit the tree or the data: an unknown body, a duplicate or
    missing marker name, an offset that is not 3 finite numbers, data of the wrong shape."""


class MarkerFitError(MotionError):
    """A fit that cannot be posed: too few visible markers on the first frame, an initial
    configuration of the wrong size, a locked joint that does not exist."""


class TrajectoryError(MotionError):
    """A trajectory that cannot be smoothed or differentiated: times not increasing, too few
    samples, non-finite configurations, sizes that do not match the tree."""


class ContactError(MotionError):
    """Contact points on an unknown body, a non-positive friction coefficient, a trajectory
    that does not match the tree."""


class MarkerFitWarning(UserWarning):
    """A frame fitted with too few visible markers (the pose is held from the previous
    frame) or a fit that did not converge."""


class ContactWarning(UserWarning):
    """A frame of contact inverse dynamics whose torque limits cannot be met."""


def warn_contact(message: str) -> None:
    """Issue a :class:`ContactWarning` at the caller's caller."""
    warnings.warn(message, ContactWarning, stacklevel=3)


def warn(message: str) -> None:
    """Issue a :class:`MarkerFitWarning` at the caller's caller."""
    warnings.warn(message, MarkerFitWarning, stacklevel=3)

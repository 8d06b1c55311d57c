"""Exceptions and warnings of :mod:`multibody.motion`.

The errors are :class:`MotionError` subclasses (so :class:`multibody.errors.MultibodyError`,
a ``ValueError``), except :class:`TrajectoryError`, which :mod:`systems.trajectories` raises
too and which is therefore defined once in :mod:`dynablocks.errors` (a
:class:`~dynablocks.errors.DynablocksError` and a ``ValueError``; neither package may import
the other). The warnings are :class:`~multibody.errors.MultibodyWarning` and ``UserWarning``.

Every message names the culprit (marker, body, joint, frame index, argument) and what was
expected.
"""
from __future__ import annotations

import warnings

from dynablocks.errors import TrajectoryError

from ..errors import MultibodyError, MultibodyWarning

__all__ = ["MotionError", "MarkerSetError", "MarkerFitError", "ScalingError", "TrajectoryError",
           "ContactError", "MarkerFitWarning", "ContactWarning"]


class MotionError(MultibodyError):
    """Base class of the motion-analysis errors."""


class MarkerSetError(MotionError):
    """A marker set that does not fit the tree or the data: an unknown body, a duplicate or
    missing marker name, an offset that is not 3 finite numbers, data of the wrong shape."""


class MarkerFitError(MotionError):
    """A fit that cannot be posed: too few visible markers on the first frame, an initial
    configuration of the wrong size, a locked joint that does not exist."""


class ScalingError(MotionError):
    """A scaling fit that cannot be posed: positions of the wrong shape, unknown segments,
    bad weights or bounds, too few visible markers in the chosen frames."""


class ContactError(MotionError):
    """Contact points on an unknown body, a non-positive friction coefficient, a trajectory
    that does not match the tree."""


class MarkerFitWarning(MultibodyWarning, UserWarning):
    """A frame fitted with too few visible markers (the pose is held from the previous
    frame) or a fit that did not converge."""


class ContactWarning(MultibodyWarning, UserWarning):
    """A frame of contact inverse dynamics whose torque limits cannot be met."""


def warn_contact(message: str) -> None:
    """Issue a :class:`ContactWarning` at the caller's caller."""
    warnings.warn(message, ContactWarning, stacklevel=3)


def warn(message: str) -> None:
    """Issue a :class:`MarkerFitWarning` at the caller's caller."""
    warnings.warn(message, MarkerFitWarning, stacklevel=3)

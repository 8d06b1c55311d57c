"""Exceptions of :mod:`multibody.visualization`: :class:`~multibody.errors.MultibodyError`
subclasses (so ``ValueError``); :class:`ViewerUnavailableError` is an ``ImportError`` too.

Every message names the object (visualizer, body, geometry, file, recording) and what was
expected.
"""
from __future__ import annotations

from ..errors import MultibodyError

__all__ = ["VisualizationError", "ViewerUnavailableError", "INSTALL_HINT"]

#: How to install the optional browser viewer (the ``[viz]`` extra: viser and trimesh).
INSTALL_HINT = "pip install 'dynablocks[viz]'"


class VisualizationError(MultibodyError):
    """Bad input to the viewer: an unknown body, a mesh file that cannot be read, a
    recording that does not fit the tree, a non-positive publish period (a ``ValueError``)."""


class ViewerUnavailableError(ImportError, MultibodyError):
    """The optional viewer library (``viser``, or ``trimesh`` for mesh files) is not
    installed; the message says ``pip install 'dynablocks[viz]'``. An ``ImportError`` as
    before, and a :class:`~multibody.errors.MultibodyError` (so also a ``ValueError``)."""

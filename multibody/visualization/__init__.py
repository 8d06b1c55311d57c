"""Browser viewer: draw a rigid-body tree, its contacts and markers, record, replay, export.

Lives here: :class:`Visualizer` (a diagram block with a ``state`` input and an optional
``contact_results`` input that publishes body poses at a set rate to a ``viser`` scene and
records them in its context), :func:`add_visualizer` (adds and connects one for a plant),
:class:`Recording` (the published frames; replay, ``.npz`` files, HTML export through
``Visualizer.export_html``), the scene description (:class:`VisualItem`, :func:`visual_items`,
:func:`body_poses`, :class:`BodyPoseFunction`, :func:`pose_quaternions`) and the errors
(:class:`VisualizationError`, :class:`ViewerUnavailableError`). May import ``systems``, :mod:`multibody.tree`,
:mod:`multibody.geometry` and :mod:`multibody.constraints` (contact results); never the
plants. ``viser`` and ``trimesh`` (the optional ``[viz]`` extra) are imported only when a
scene is drawn; without them the error says ``pip install 'dynablocks[viz]'``.
"""
from .errors import INSTALL_HINT, ViewerUnavailableError, VisualizationError
from .recording import Recording
from .scene import (DEFAULT_COLORS, BodyPoseFunction, VisualItem, body_poses, capsule_mesh,
                    mesh_arrays, pose_quaternions, visual_items)
from .visualizer import Visualizer, add_visualizer, require_viewer, show_run

__all__ = ["Visualizer", "add_visualizer", "require_viewer", "show_run", "Recording",
           "VisualItem", "visual_items", "body_poses", "BodyPoseFunction", "pose_quaternions",
           "capsule_mesh", "mesh_arrays", "DEFAULT_COLORS", "VisualizationError",
           "ViewerUnavailableError", "INSTALL_HINT"]

"""A marker set on a tree: the one check of ``[(name, body, offset)]`` lists used by the
marker fitter (:class:`~multibody.motion.MarkerFitter`), the marker sensor
(:class:`sensors.MarkerSensor`) and the browser viewer.

Markers are points fixed on bodies (motion-capture markers); the lists come from a model
builder (:func:`multibody.models.human_model`'s ``markers``) or from a marker-placement file
(:func:`multibody.parsing.marker_offsets`).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .errors import MarkerSetError

__all__ = ["marker_set_arrays", "marker_weight_array"]


def marker_set_arrays(tree, markers: Sequence, who: str = "marker set"
                      ) -> tuple[list[str], list[str], np.ndarray]:
    """Validate ``markers`` = [(name, body, offset (3,))] against ``tree``.

    Frames are resolved to their body: a marker at ``o`` in frame ``F`` (pose ``X_B,F`` in its
    body ``B``) is at ``R_B,F o + p_B,F`` in the body frame.

    Parameters
    ----------
    tree : RigidBodyTree
    markers : sequence of (name, body, offset)
        Marker name, body or frame name, and its position (3,) in that frame (m).
    who : str
        The owner named in error messages (``"MarkerSensor 'mocap'"``).

    Returns
    -------
    names : list of str
    bodies : list of str
        The body each marker is fixed on.
    offsets : (M, 3) ndarray
        Marker positions in their body frames (m).

    Raises
    ------
    MarkerSetError
        An empty set, a malformed entry, a duplicate name, an unknown body or frame, an
        offset that is not 3 finite numbers.
    """
    names, bodies, offsets = [], [], []
    for entry in markers:
        try:
            name, body, offset = entry
        except (TypeError, ValueError):
            raise MarkerSetError(f"{who}: each marker is (name, body, offset), got "
                                 f"{entry!r}") from None
        if name in names:
            raise MarkerSetError(f"{who}: duplicate marker name {name!r}")
        try:
            frame = tree.get_frame(body)
        except (KeyError, ValueError, TypeError):
            raise MarkerSetError(f"{who}: marker {name!r} is on {body!r}, which is not a body "
                                 f"or frame of tree '{tree.name}'") from None
        p = np.asarray(offset, dtype=float).ravel()
        if p.shape != (3,) or not np.all(np.isfinite(p)):
            raise MarkerSetError(f"{who}: marker {name!r} offset must be 3 finite numbers, "
                                 f"got {offset!r}")
        X = np.asarray(frame.pose, float)
        names.append(str(name))
        bodies.append(frame.body)
        offsets.append(X[:3, :3] @ p + X[:3, 3])
    if not names:
        raise MarkerSetError(f"{who}: no markers given")
    return names, bodies, np.array(offsets)


def marker_weight_array(weights, count: int, who: str = "marker set",
                        error: type = MarkerSetError) -> np.ndarray:
    """Per-marker weights checked: ``(count,)`` finite numbers >= 0 (None: all ones).

    Parameters
    ----------
    weights : (count,) array_like or None
    count : int
        Number of markers M.
    who : str
        How the message names the caller.
    error : type
        The exception raised (a :class:`~multibody.motion.MotionError`).

    Returns
    -------
    (M,) ndarray

    Raises
    ------
    MarkerSetError (or ``error``)
        Wrong size, a non-finite or negative weight; the message names ``who``.
    """
    w = np.ones(count) if weights is None else np.asarray(weights, float).ravel()
    if w.shape != (count,) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise error(f"{who}: marker_weights must be {count} finite numbers >= 0, got "
                    f"{weights!r}")
    return w

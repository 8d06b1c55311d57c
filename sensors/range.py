"""``RangeSensor``: distances along rays from a frame on a body to the scene's geometry.

Rays start at the sensor frame's origin (pose ``X_BS`` on a body) along unit directions given
in the sensor frame; each reads the distance to the nearest collision geometry of the tree
(the world's included, the sensor's own body excluded), or ``max_range`` when nothing is
hit within it (multibody.geometry.ray_cast's closed forms per shape).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from multibody.geometry import Mesh, ray_cast
from .base import Sensor

__all__ = ["RangeSensor"]


class RangeSensor(Sensor):
    """Ray distances to the scene (module docstring). Numeric only (not symbolic).

    Parameters
    ----------
    tree : RigidBodyTree
    body : str
        Body or frame carrying the sensor.
    directions : array_like (k, 3)
        Ray directions in the sensor frame (normalized here).
    max_range : float
        > 0 (m).
    X_BS : array_like (4, 4), optional
        Sensor pose on the body (default identity).
    name : str, optional

    Ports
    -----
    input ``state``; output ``distances`` (k).

    Raises
    ------
    ValueError
        An unknown body, zero directions, a non-positive range.
    """

    def __init__(self, tree, body: str, directions, max_range: float, X_BS=None,
                 name: Optional[str] = None):
        super().__init__(tree, name=name)
        who = f"RangeSensor '{self.name}'"
        try:
            frame = tree.get_frame(body)
        except (KeyError, ValueError, TypeError):
            raise ValueError(f"{who}: tree '{tree.name}' has no body or frame named {body!r}") from None
        D = np.atleast_2d(np.asarray(directions, dtype=float))
        norms = np.linalg.norm(D, axis=1) if D.ndim == 2 and D.shape[1] == 3 else np.zeros(0)
        if D.ndim != 2 or D.shape[1] != 3 or not np.all(norms > 0) or not np.all(np.isfinite(D)):
            raise ValueError(f"{who}: directions must be nonzero finite 3-vectors, got shape "
                             f"{np.shape(directions)}")
        if not (np.isfinite(max_range) and max_range > 0):
            raise ValueError(f"{who}: max_range must be finite and > 0, got {max_range!r}")
        X = np.eye(4) if X_BS is None else np.asarray(X_BS, float)
        self._body = frame.body
        self._X_BS = np.asarray(frame.pose, float) @ X
        self.directions = D / norms[:, None]
        self.max_range = float(max_range)
        self._targets = [g for b in tree.bodies for g in b.collision_geometries
                         if b.name != self._body and not isinstance(g.shape, Mesh)]
        self.declare_output_port("distances", D.shape[0], self._distances, feedthrough=True)

    def _distances(self, context):
        q = np.asarray(self.state_port.eval(context), float)[:self.nq]
        T = self.tree.body_pose(self._body, q) @ self._X_BS
        origin, R = T[:3, 3], T[:3, :3]
        poses = {}
        out = np.full(self.directions.shape[0], self.max_range)
        for k, d in enumerate(self.directions):
            dw = R @ d
            for g in self._targets:
                X = poses.get(g.body)
                if X is None:
                    X = poses[g.body] = np.asarray(self.tree.body_pose(g.body, q), float)
                t = ray_cast(g.shape, X @ g.pose, origin, dw)
                if t < out[k]:
                    out[k] = t
        return out

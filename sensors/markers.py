"""``MarkerSensor``: world positions of points fixed on bodies (motion-capture markers).

Each marker ``k`` is a point ``p_k`` given in the frame of body ``b_k``; the sensor reads
``X_W,b_k(q) p_k`` for every marker, stacked (3 per marker), from the plant's state. The same
block synthesizes marker data from a simulation and, on CasADi symbols, gives the exact
Jacobians a marker-fitting problem needs.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from solvers import ops
from .base import Sensor

__all__ = ["MarkerSensor"]


class MarkerSensor(Sensor):
    """World positions of body-fixed markers (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    markers : sequence of (name, body, offset)
        Marker name, body (or frame) name, and its position (3,) in that frame (m).
    name : str, optional

    Ports
    -----
    input ``state``; output ``positions`` (3 per marker, in the order given).

    Raises
    ------
    ValueError
        An unknown body, a duplicate marker name, or an offset that is not 3 finite numbers.
    """

    def __init__(self, tree, markers: Sequence, name: Optional[str] = None):
        super().__init__(tree, name=name)
        who = f"MarkerSensor '{self.name}'"
        names, bodies, offsets = [], [], []
        for entry in markers:
            try:
                mname, body, offset = entry
            except (TypeError, ValueError):
                raise ValueError(f"{who}: each marker is (name, body, offset), got {entry!r}") from None
            if mname in names:
                raise ValueError(f"{who}: duplicate marker name {mname!r}")
            try:
                frame = tree.get_frame(body)
            except (KeyError, ValueError, TypeError):
                raise ValueError(f"{who}: marker {mname!r} is on {body!r}, which is not a body or "
                                 f"frame of tree '{tree.name}'") from None
            p = np.asarray(offset, dtype=float).ravel()
            if p.shape != (3,) or not np.all(np.isfinite(p)):
                raise ValueError(f"{who}: marker {mname!r} offset must be 3 finite numbers, got "
                                 f"{offset!r}")
            X = np.asarray(frame.pose, float)
            names.append(mname)
            bodies.append(frame.body)
            offsets.append(X[:3, :3] @ p + X[:3, 3])
        if not names:
            raise ValueError(f"{who}: no markers given")
        self.marker_names, self.marker_bodies = names, bodies
        self.marker_offsets = np.array(offsets)
        self.declare_output_port("positions", 3 * len(names), self._positions, feedthrough=True)

    def _positions(self, context):
        q = self.state_port.eval(context)[:self.nq]
        out = []
        for body, p in zip(self.marker_bodies, self.marker_offsets):
            T = self.tree.body_pose(body, q)
            out.append(T[0:3, 3] + T[0:3, 0:3] @ p)
        return ops.vertcat(*out)

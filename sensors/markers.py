"""``MarkerSensor``: world positions of points fixed on bodies (motion-capture markers).

Each marker ``k`` is a point ``p_k`` given in the frame of body ``b_k``; the sensor reads
``X_W,b_k(q) p_k`` for every marker, stacked (3 per marker), from the plant's state. The same
block synthesizes marker data from a simulation and, on CasADi symbols, gives the exact
Jacobians a marker-fitting problem needs.
"""
from __future__ import annotations

from typing import Optional, Sequence

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
    multibody.motion.MarkerSetError
        (a ``ValueError``) An empty set, a malformed entry, a duplicate marker name, an
        unknown body or frame, or an offset that is not 3 finite numbers
        (:func:`multibody.motion.marker_set_arrays`, shared with the marker fitter).
    """

    def __init__(self, tree, markers: Sequence, name: Optional[str] = None):
        super().__init__(tree, name=name)
        # imported here: ``import sensors`` need not load multibody.motion's scipy modules
        from multibody.motion import marker_set_arrays
        names, bodies, offsets = marker_set_arrays(tree, markers, f"MarkerSensor '{self.name}'")
        self.marker_names, self.marker_bodies = names, bodies
        self.marker_offsets = offsets
        self.declare_output_port("positions", 3 * len(names), self._positions, feedthrough=True)

    def _positions(self, context):
        q = self.state_port.eval(context)[:self.nq]
        out = []
        for body, p in zip(self.marker_bodies, self.marker_offsets):
            T = self.tree.body_pose(body, q)
            out.append(T[0:3, 3] + T[0:3, 0:3] @ p)
        return ops.vertcat(*out)

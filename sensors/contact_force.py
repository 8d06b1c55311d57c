"""``ContactForceSensor``: the total contact wrench on a body, from a plant's contact results.

Sums every contact that involves the body: the force on the body (``+f`` when it is body B of
the contact, ``-f`` when it is A) and its moment about the body origin, reported in world axes
as ``[torque; force]`` (6). Both rigid-body plants provide ``contact_results`` (the
time-stepping plant's are the mean forces over the step that starts at the context's time,
the continuous plant's the forces at the context's state), so the sensor works in either.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .base import Sensor

__all__ = ["ContactForceSensor"]


class ContactForceSensor(Sensor):
    """Total contact wrench on ``body`` (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    body : str
    name : str, optional

    Ports
    -----
    inputs ``state``, ``contact_results`` (abstract); output ``wrench`` (6: world-axes
    torque about the body origin, then force), not symbolic.

    Raises
    ------
    ValueError
        An unknown body.
    """

    def __init__(self, tree, body: str, name: Optional[str] = None):
        super().__init__(tree, needs_contact_results=True, name=name)
        try:
            tree.get_body(body)
        except (KeyError, ValueError, TypeError):
            raise ValueError(f"ContactForceSensor '{self.name}': tree '{tree.name}' has no body "
                             f"named {body!r}") from None
        self.body = body
        self.declare_output_port("wrench", 6, self._wrench, feedthrough=True)

    def _wrench(self, context):
        x = np.asarray(self.state_port.eval(context), float)
        results = self.contact_port.eval(context)
        origin = self.tree.body_pose(self.body, x[:self.nq])[:3, 3]
        torque, force = np.zeros(3), np.zeros(3)
        for c in results:
            if self.body == c.body_b:
                f = c.force
            elif self.body == c.body_a:
                f = -c.force
            else:
                continue
            force += f
            torque += np.cross(c.point - origin, f)
        return np.concatenate([torque, force])

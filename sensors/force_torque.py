"""``JointForceTorqueSensor``: the six-axis wrench a joint transmits.

For a joint between a parent and a child body, the sensor reads the wrench ``[torque; force]``
the parent exerts on the child's whole subtree through the joint, in the child frame about
its origin (the joint frame): the joint's row of the recursive Newton-Euler algorithm's
backward pass (:meth:`RigidBodyTree.joint_wrench`), from the plant's state and
accelerations. At rest it carries the subtree's weight; its projection on the joint's motion
subspace is the joint's generalized force, the rest is the constraint wrench.
"""
from __future__ import annotations

from typing import Optional

from .base import Sensor

__all__ = ["JointForceTorqueSensor"]


class JointForceTorqueSensor(Sensor):
    """Wrench through ``joint`` (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    joint : str
    name : str, optional

    Ports
    -----
    inputs ``state``, ``generalized_acceleration``; output ``wrench`` (6: torque, force).

    Raises
    ------
    ValueError
        An unknown joint.
    """

    def __init__(self, tree, joint: str, name: Optional[str] = None):
        super().__init__(tree, needs_acceleration=True, name=name)
        try:
            tree.get_joint(joint)
        except (KeyError, ValueError):
            raise ValueError(f"JointForceTorqueSensor '{self.name}': tree '{tree.name}' has no "
                             f"joint named {joint!r}") from None
        self.joint = joint
        self.declare_output_port("wrench", 6, self._wrench, feedthrough=True)

    def _wrench(self, context):
        x = self.state_port.eval(context)
        vdot = self.acceleration_port.eval(context)
        return self.tree.joint_wrench(self.joint, x[:self.nq], x[self.nq:], vdot)

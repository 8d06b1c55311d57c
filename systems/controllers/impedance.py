"""``JointImpedanceController``: a spring-damper on every joint about a desired state, with
optional gravity compensation.

``tau = K (q_d - q) + D (v_d - v) + g(q)`` (the last term when ``gravity_compensation``): the
closed loop behaves like joints held by springs of stiffness ``K`` and dampers ``D`` whatever
the arm's weight (N. Hogan, "Impedance control: an approach to manipulation", ASME J. Dyn. Sys.
Meas. Control 107, 1985). Unlike :class:`InverseDynamicsController` it does not cancel the
inertia, so an external push meets the arm's own inertia and the programmed compliance.
"""
from __future__ import annotations

from typing import Optional

from ..leaf_system import LeafSystem
from .inverse_dynamics import check_joint_tree, gain_vector

__all__ = ["JointImpedanceController"]


class JointImpedanceController(LeafSystem):
    """Joint stiffness ``K`` and damping ``D`` about a desired state (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
        nq == nv.
    stiffness, damping : float or array_like (nv,)
        ``K`` (N m/rad or N/m) and ``D`` (N m s/rad or N s/m), >= 0.
    gravity_compensation : bool
        Add ``g(q)`` (default True).
    name : str, optional

    Ports
    -----
    inputs ``estimated_state`` (2 nv), ``desired_state`` (2 nv); output ``generalized_force``.

    Raises
    ------
    ControllerError
        Gains of the wrong size or negative, or a tree with quaternion joints.
    """

    def __init__(self, tree, stiffness, damping, gravity_compensation: bool = True,
                 name: Optional[str] = None):
        super().__init__(name)
        who = f"JointImpedanceController '{self.name}'"
        check_joint_tree(tree, who)
        self.tree = tree
        n = tree.nv
        self.K = gain_vector(stiffness, n, "stiffness", who)
        self.D = gain_vector(damping, n, "damping", who)
        self.gravity_compensation = bool(gravity_compensation)
        self.estimated_state = self.declare_input_port("estimated_state", 2 * n)
        self.desired_state = self.declare_input_port("desired_state", 2 * n)
        self.declare_output_port("generalized_force", n, self._calc, feedthrough=True)

    def _calc(self, context):
        n = self.tree.nv
        x, xd = self.estimated_state.eval(context), self.desired_state.eval(context)
        tau = self.K * (xd[:n] - x[:n]) + self.D * (xd[n:] - x[n:])
        if self.gravity_compensation:
            tau = tau + self.tree.gravity_forces(x[:n])
        return tau

"""Model-based joint controllers: inverse dynamics, gravity compensation, and inverse-dynamics
control with a PID on the joint positions (Drake's ``InverseDynamics`` and
``InverseDynamicsController`` semantics and port names).

With the plant ``H(q) vdot + C(q, v) = tau + tau_passive(q, v)`` (``C`` with gravity,
``tau_passive`` the joints' damping and springs, as :class:`~multibody.plants.RigidBodyPlant`
integrates it), the controllers compute

* :class:`InverseDynamics`, ``mode="inverse_dynamics"``: ``tau = H(q) vdot_d + C(q, v) -
  tau_passive(q, v)`` for a desired acceleration;
* ``mode="gravity_compensation"``: ``tau = g(q)`` (gravity only, Drake's convention: a tree
  with joint springs will still move);
* :class:`InverseDynamicsController`: the same inverse dynamics for the reference acceleration
  ``vdot_r = vdot_d + kp (q_d - q) + kd (v_d - v) + ki integral (q_d - q) dt``, which makes the
  exact model's error obey ``e'' + kd e' + kp e + ki integral e = 0`` (computed-torque control;
  J. J. Craig, *Introduction to Robotics*, 3rd ed., section 10.4).

Everything is written with the tree's symbolic-capable methods, so a diagram with these
controllers converts to CasADi (linearization, trajectory optimization, compiled simulation).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from solvers import ops
from ..errors import ControllerError
from ..leaf_system import LeafSystem

__all__ = ["InverseDynamics", "InverseDynamicsController", "ControllerError", "gain_vector",
           "check_joint_tree"]


def gain_vector(value, n: int, name: str, who: str) -> np.ndarray:
    """A gain as a vector of size ``n`` (a scalar broadcasts), finite and >= 0; raises
    :class:`ControllerError` naming ``who`` and ``name`` otherwise."""
    g = np.asarray(value, dtype=float)
    if g.ndim == 0:
        g = np.full(n, float(g))
    g = g.ravel()
    if g.shape[0] != n:
        raise ControllerError(f"{who}: {name} has {g.shape[0]} entries, expected 1 or nv = {n}")
    if not np.all(np.isfinite(g)) or np.any(g < 0):
        raise ControllerError(f"{who}: {name} must be finite and >= 0, got {g.tolist()}")
    return g


def check_joint_tree(tree, who: str) -> None:
    """Finalize ``tree`` and refuse one with quaternion joints (nq != nv), naming ``who``."""
    tree.finalize()
    if tree.nq != tree.nv:
        raise ControllerError(f"{who}: tree '{tree.name}' has nq = {tree.nq} != nv = {tree.nv} "
                              "(quaternion joints); these controllers need joint coordinates "
                              "with nq == nv")


class InverseDynamics(LeafSystem):
    """Inverse dynamics or gravity compensation of a tree as a block (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    mode : {"inverse_dynamics", "gravity_compensation"}
    name : str, optional

    Ports
    -----
    inputs ``estimated_state`` (nq + nv) and, in ``"inverse_dynamics"`` mode,
    ``desired_acceleration`` (nv); output ``generalized_force`` (nv).

    Raises
    ------
    ControllerError
        An unknown mode or a tree with quaternion joints.
    """

    MODES = ("inverse_dynamics", "gravity_compensation")

    def __init__(self, tree, mode: str = "inverse_dynamics", name: Optional[str] = None):
        super().__init__(name)
        who = f"InverseDynamics '{self.name}'"
        if mode not in self.MODES:
            raise ControllerError(f"{who}: mode must be one of {self.MODES}, got {mode!r}")
        check_joint_tree(tree, who)
        self.tree, self.mode = tree, mode
        n = tree.nv
        self.estimated_state = self.declare_input_port("estimated_state", 2 * n)
        self.desired_acceleration = (self.declare_input_port("desired_acceleration", n)
                                     if mode == "inverse_dynamics" else None)
        self.declare_output_port("generalized_force", n, self._calc, feedthrough=True)

    def _calc(self, context):
        x = self.estimated_state.eval(context)
        n = self.tree.nv
        q, v = x[:n], x[n:]
        if self.mode == "gravity_compensation":
            return self.tree.gravity_forces(q)
        vd = self.desired_acceleration.eval(context)
        return self.tree.inverse_dynamics(q, v, vd) - self.tree.joint_passive_forces(q, v)


class InverseDynamicsController(LeafSystem):
    """Computed-torque control of a tree with a PID on the joint positions (module docstring;
    Drake's ``InverseDynamicsController``).

    Parameters
    ----------
    tree : RigidBodyTree
        The model (nq == nv).
    kp, ki, kd : float or array_like (nv,)
        Gains (>= 0).
    has_reference_acceleration : bool
        Add the input ``desired_acceleration`` (feedforward ``vdot_d``; zero otherwise).
    name : str, optional

    Ports
    -----
    inputs ``estimated_state`` [q; v] (2 nv), ``desired_state`` [q_d; v_d] (2 nv), optionally
    ``desired_acceleration`` (nv); output ``generalized_force`` (nv). Continuous state: the
    integral of ``q_d - q`` (nv).

    Raises
    ------
    ControllerError
        Gains of the wrong size or negative, or a tree with quaternion joints.
    """

    def __init__(self, tree, kp, ki, kd, has_reference_acceleration: bool = False,
                 name: Optional[str] = None):
        super().__init__(name)
        who = f"InverseDynamicsController '{self.name}'"
        check_joint_tree(tree, who)
        self.tree = tree
        n = tree.nv
        self.kp, self.ki, self.kd = (gain_vector(g, n, nm, who) for g, nm in
                                     ((kp, "kp"), (ki, "ki"), (kd, "kd")))
        self.declare_continuous_state(n)
        self.estimated_state = self.declare_input_port("estimated_state", 2 * n)
        self.desired_state = self.declare_input_port("desired_state", 2 * n)
        self.desired_acceleration = (self.declare_input_port("desired_acceleration", n)
                                     if has_reference_acceleration else None)
        self.declare_output_port("generalized_force", n, self._calc, feedthrough=True)

    def time_derivatives(self, context):
        """``d/dt integral = q_d - q``."""
        n = self.tree.nv
        return self.desired_state.eval(context)[:n] - self.estimated_state.eval(context)[:n]

    def _calc(self, context):
        n = self.tree.nv
        x, xd = self.estimated_state.eval(context), self.desired_state.eval(context)
        q, v = x[:n], x[n:]
        e, ed = xd[:n] - q, xd[n:] - v
        z = context.continuous_state
        vr = self.kp * e + self.kd * ed + self.ki * z
        if self.desired_acceleration is not None:
            vr = vr + self.desired_acceleration.eval(context)
        vr = ops.vector(vr)
        return self.tree.inverse_dynamics(q, v, vr) - self.tree.joint_passive_forces(q, v)

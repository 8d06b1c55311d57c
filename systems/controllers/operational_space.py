"""``OperationalSpaceController``: task-space control of a point on a tree with a null-space
posture task (Khatib's operational-space formulation).

With ``J`` the translational Jacobian (3 x nv) of the task point, ``M`` the mass matrix, ``h``
the bias (Coriolis, gravity, minus the joints' damping and springs) and the task-space inertia
``Lambda = (J M^-1 J^T)^-1``, the controller applies

.. math::

    \\tau = J^T \\Lambda \\left(a^* - \\dot J v + J M^{-1} h\\right)
          + (I - J^T \\bar J^T)\\, \\tau_0, \\qquad
    a^* = \\ddot x_d + K_p (x_d - x) + K_d (\\dot x_d - J v),

with ``J-bar = M^-1 J^T Lambda`` the dynamically consistent inverse and ``tau_0 = K_{p0} (q_0 -
q) - K_{d0} v + h`` a joint posture task projected into the null space of the task (O.
Khatib, "A unified approach for motion and force control of robot manipulators: the
operational space formulation", IEEE J. Robotics and Automation 3(1), 1987). On the exact
model the point obeys ``e'' + K_d e' + K_p e = 0`` whatever the posture task does.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from solvers import ops
from ..leaf_system import LeafSystem
from .inverse_dynamics import ControllerError, check_joint_tree, gain_vector

__all__ = ["OperationalSpaceController"]


class OperationalSpaceController(LeafSystem):
    """Position control of a point of ``body`` with a null-space posture (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
        nq == nv.
    body : str
        Body (or frame) carrying the task point.
    point : array_like (3,)
        The task point in that body's frame (default its origin).
    kp, kd : float or array_like (3,)
        Task gains (>= 0).
    posture_kp, posture_kd : float or array_like (nv,)
        Null-space posture gains (>= 0).
    posture : array_like (nv,), optional
        Posture ``q_0`` (default the tree's neutral configuration).
    name : str, optional

    Ports
    -----
    inputs ``estimated_state`` (2 nv) and ``desired_motion`` (9: ``[x_d; xdot_d; xddot_d]``,
    world frame); output ``generalized_force`` (nv).

    Raises
    ------
    ControllerError
        A body not in the tree, gains of the wrong size, a tree with quaternion joints.
    """

    def __init__(self, tree, body: str, point: Sequence[float] = (0.0, 0.0, 0.0), *, kp=100.0,
                 kd=20.0, posture_kp=10.0, posture_kd=5.0, posture=None,
                 name: Optional[str] = None):
        super().__init__(name)
        who = f"OperationalSpaceController '{self.name}'"
        check_joint_tree(tree, who)
        try:
            tree.get_frame(body)
        except (KeyError, ValueError, TypeError):
            raise ControllerError(f"{who}: tree '{tree.name}' has no body or frame named "
                                  f"{body!r}") from None
        n = tree.nv
        self.tree, self.body = tree, body
        self.point = np.asarray(point, dtype=float).ravel()
        if self.point.shape != (3,):
            raise ControllerError(f"{who}: point must have 3 entries, got {point!r}")
        self.kp, self.kd = gain_vector(kp, 3, "kp", who), gain_vector(kd, 3, "kd", who)
        self.kp0 = gain_vector(posture_kp, n, "posture_kp", who)
        self.kd0 = gain_vector(posture_kd, n, "posture_kd", who)
        q0 = tree.neutral_configuration() if posture is None else np.asarray(posture, float)
        if q0.shape != (n,):
            raise ControllerError(f"{who}: posture has shape {q0.shape}, expected ({n},)")
        self.posture = q0
        self.estimated_state = self.declare_input_port("estimated_state", 2 * n)
        self.desired_motion = self.declare_input_port("desired_motion", 9)
        self.declare_output_port("generalized_force", n, self._calc, feedthrough=True)

    def _calc(self, context):
        t, n = self.tree, self.tree.nv
        x = self.estimated_state.eval(context)
        d = self.desired_motion.eval(context)
        q, v = x[:n], x[n:]
        M = t.mass_matrix(q)
        h = t.bias_forces(q, v) - t.joint_passive_forces(q, v)
        J = t.jacobian(self.body, q, self.point)[3:6, :]
        jdv = ops.vector(t.jacobian_dot_times_v(self.body, q, v, self.point))[3:6]
        T = t.body_pose(self.body, q)
        p = T[0:3, 3] + T[0:3, 0:3] @ self.point
        a_star = d[6:9] + self.kp * (d[0:3] - p) + self.kd * (d[3:6] - J @ v)
        Minv_JT = ops.solve(M, ops.transpose(J))                    # M^-1 J^T (nv x 3)
        Lam = ops.inv(J @ Minv_JT)                                   # task-space inertia
        Minv_h = ops.solve(M, h)
        tau_task = ops.transpose(J) @ (Lam @ (a_star - jdv + J @ Minv_h))
        tau0 = self.kp0 * (self.posture - q) - self.kd0 * v + h
        Jbar = Minv_JT @ Lam                                         # dynamically consistent
        tau_null = tau0 - ops.transpose(J) @ (ops.transpose(Jbar) @ tau0)
        return tau_task + tau_null

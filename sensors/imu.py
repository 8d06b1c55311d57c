"""``Imu``: an inertial measurement unit fixed on a body.

With the sensor frame S at pose ``X_BS`` on body B, world rotation ``R_WS = R_WB R_BS``, the
world acceleration ``a_S`` of its origin (``J(q) vdot + Jdot(q, v) v``, the tree's point
Jacobian terms) and the body's world angular velocity ``w``, the IMU reads

* ``acceleration``: the specific force ``R_WS^T (a_S - g)`` (what an accelerometer measures:
  at rest ``-R_WS^T g``, i.e. +9.81 m/s^2 along the world's up axis; zero in free fall);
* ``angular_velocity``: ``R_WS^T w`` (a gyroscope), in the sensor frame.

Inputs are the plant's ``state`` and ``generalized_acceleration`` (both rigid-body plants
provide them; a plant fixes them when the IMU is one of its sensors). Written with the
tree's symbolic-capable methods, so a diagram with an IMU converts to CasADi.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from solvers import ops
from .base import Sensor
from .imu_noise import ImuNoise

__all__ = ["Imu"]


class Imu(Sensor):
    """An IMU on ``body_name`` (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    body_name : str
        A body (or frame) of ``tree``.
    X_BS : array_like (4, 4), optional
        Pose of the sensor in the body frame (default identity).
    noise : ImuNoise, optional
        White noise and bias random walk (:class:`~sensors.ImuNoise`); the readings are then
        sampled every ``noise.sampling_period`` and held, with the biases and the draw
        counter as discrete state. Default: exact readings.
    name : str, optional

    Raises
    ------
    ValueError
        An unknown body, a pose that is not a 4 x 4 rigid transform, or a noise argument.
    """

    def __init__(self, tree, body_name: str, X_BS=None, noise=None, name: Optional[str] = None):
        super().__init__(tree, needs_acceleration=True, name=name)
        who = f"Imu '{self.name}'"
        if noise is not None and not isinstance(noise, ImuNoise):
            raise ValueError(f"{who}: noise must be an ImuNoise (or None), got {noise!r}")
        if noise is not None:
            noise.check(who)
        self.noise = noise
        try:
            frame = tree.get_frame(body_name)
        except (KeyError, ValueError, TypeError):
            raise ValueError(f"{who}: tree '{tree.name}' has no body or frame named "
                             f"{body_name!r}") from None
        X = np.eye(4) if X_BS is None else np.asarray(X_BS, dtype=float)
        if X.shape != (4, 4) or not np.allclose(X[:3, :3].T @ X[:3, :3], np.eye(3), atol=1e-9) \
                or not np.allclose(X[3], [0, 0, 0, 1]) or np.linalg.det(X[:3, :3]) < 0:
            raise ValueError(f"{who}: X_BS must be a 4 x 4 rigid transform (rotation and "
                             f"translation), got {np.array2string(X, precision=3)}")
        self.body_name = body_name
        self._body = frame.body                           # a frame's pose is on its body
        self._X_BS = np.asarray(frame.pose, float) @ X
        if noise is None:
            self.declare_output_port("acceleration", 3, self._acceleration, feedthrough=True)
            self.declare_output_port("angular_velocity", 3, self._angular_velocity,
                                     feedthrough=True)
        else:
            # [reading (6), bias (6), counter]: sampled and held
            self.declare_discrete_state(np.zeros(13))
            self.declare_periodic_discrete_update(noise.sampling_period, 0.0, self._sample)
            self.declare_output_port("acceleration", 3, lambda c: c.discrete_state[0:3],
                                     feedthrough=False, prerequisites=["discrete_state"])
            self.declare_output_port("angular_velocity", 3, lambda c: c.discrete_state[3:6],
                                     feedthrough=False, prerequisites=["discrete_state"])

    def _sample(self, context):
        """Sample the true readings and add this step's bias and white noise."""
        xd = context.discrete_state
        k, bias = int(xd[12]), np.asarray(xd[6:12])
        true = np.concatenate([np.asarray(self._acceleration(context), float).ravel(),
                               np.asarray(self._angular_velocity(context), float).ravel()])
        bias_next, white = self.noise.step(bias, k)
        return np.concatenate([true + bias + white, bias_next, [k + 1.0]])

    def _terms(self, context):
        x = self.state_port.eval(context)
        q, v = x[:self.nq], x[self.nq:]
        R_WB = self.tree.body_pose(self._body, q)[0:3, 0:3]
        R_WS = R_WB @ self._X_BS[:3, :3]
        return q, v, R_WS

    def _acceleration(self, context):
        q, v, R_WS = self._terms(context)
        vdot = self.acceleration_port.eval(context)
        p = self._X_BS[:3, 3]
        J = self.tree.jacobian(self._body, q, p)
        a = J[3:6, :] @ vdot + ops.vector(self.tree.jacobian_dot_times_v(self._body, q, v, p))[3:6]
        return ops.transpose(R_WS) @ (a - self.tree.gravity)

    def _angular_velocity(self, context):
        q, v, R_WS = self._terms(context)
        w = self.tree.jacobian(self._body, q)[0:3, :] @ v
        return ops.transpose(R_WS) @ w

"""PID control: :class:`PidController` (Drake's port names and sign convention)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..leaf_system import LeafSystem

__all__ = ["PidController"]

#: Up to this many positions, numeric evaluations add Python floats (the same sums).
_SMALL = 16
_NDARRAY, _ARRAY, _EMPTY = np.ndarray, np.array, np.empty


def _gains(value, name: str) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(value, dtype=float)).ravel()
    if arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ValueError(f"PidController: {name} must be a non-empty finite scalar or vector, "
                         f"got {value!r}")
    return arr


class PidController(LeafSystem):
    """A PID controller on n positions.

    Inputs ``estimated_state`` = [x; xdot] and ``desired_state`` = [x_d; xdot_d] (size 2n),
    output ``control`` (size n)::

        u = kp * (x_d - x) + ki * z + kd * (xdot_d - xdot),     zdot = x_d - x

    with elementwise gains and the integral of the position error z as continuous state
    (initially zero). Drake's convention (``systems::controllers::PidController``).
    Arithmetic and indexing only, so it evaluates on CasADi symbols too.

    Parameters
    ----------
    kp, ki, kd : float or array_like of shape (n,)
        Gains; scalars are broadcast to the size of the vector ones (n = 1 if all are
        scalars).
    """

    def __init__(self, kp, ki, kd, name: Optional[str] = None):
        super().__init__(name)
        gains = [_gains(kp, "kp"), _gains(ki, "ki"), _gains(kd, "kd")]
        n = max(g.shape[0] for g in gains)
        if any(g.shape[0] not in (1, n) for g in gains):
            sizes = ", ".join(str(g.shape[0]) for g in gains)
            raise ValueError(f"PidController: gains kp, ki, kd have sizes {sizes}; give scalars "
                             f"or vectors of one size")
        self.kp, self.ki, self.kd = (np.full(n, g[0]) if g.shape[0] == 1 else g for g in gains)
        self._gain_list = list(zip(self.kp.tolist(), self.ki.tolist(), self.kd.tolist()))
        self.num_positions = n
        self._small, self._one = n <= _SMALL, n == 1
        self.declare_continuous_state(n)
        self._x = self.declare_input_port("estimated_state", 2 * n)
        self._xd = self.declare_input_port("desired_state", 2 * n)
        # the callbacks read their inputs by index from their own context (the port's eval
        # without its frame; the same value and errors)
        self._ix, self._ixd = self._x.index, self._xd.index
        # an integral-only PID (kp = kd = 0) has no direct feedthrough (Drake): no false loop
        self._feeds = feeds = bool(np.any(self.kp) or np.any(self.kd))
        self.declare_output_port("control", n, self._control, feedthrough=feeds,
                                 prerequisites=["continuous_state"])

    def get_input_port_estimated_state(self):
        """The ``estimated_state`` input [x; xdot]."""
        return self._x

    def get_input_port_desired_state(self):
        """The ``desired_state`` input [x_d; xdot_d]."""
        return self._xd

    def get_output_port_control(self):
        """The ``control`` output u."""
        return self.output_ports[0]

    def set_integral_value(self, context, value) -> None:
        """Set the integral of the position error z in ``context``."""
        self.get_my_context_from_root(context).set_continuous_state(value)

    def _control(self, context):
        z = context.continuous_state
        if not self._feeds:
            return self.ki * z
        read = context.eval_input
        xd, x = read(self._ixd), read(self._ix)
        if self._small and type(z) is _NDARRAY and type(x) is _NDARRAY and type(xd) is _NDARRAY:
            # numeric and small: the same sums on Python floats (no numpy call per term)
            if self._one:
                p, i, d = self._gain_list[0]
                a, b = xd.tolist()
                c, e = x.tolist()
                u = _EMPTY(1)   # (cheaper than an array made from a tuple)
                u[0] = p * (a - c) + i * z.item(0) + d * (b - e)
                return u
            n = self.num_positions
            xdl, xl, zl = xd.tolist(), x.tolist(), z.tolist()
            return _ARRAY([p * (xdl[j] - xl[j]) + i * zl[j] + d * (xdl[n + j] - xl[n + j])
                           for j, (p, i, d) in enumerate(self._gain_list)])
        n = self.num_positions
        e = xd - x   # [x_d - x; xdot_d - xdot]
        return self.kp * e[0:n] + self.ki * z + self.kd * e[n:2 * n]

    def time_derivatives(self, context):
        read = context.eval_input
        xd, x = read(self._ixd), read(self._ix)
        if self._one and type(x) is _NDARRAY and type(xd) is _NDARRAY:
            return (xd.item(0) - x.item(0),)   # a tuple of floats (LeafSystem's list contract)
        n = self.num_positions
        return xd[0:n] - x[0:n]

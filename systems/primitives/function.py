"""Blocks defined by a function or by CasADi expressions."""
from __future__ import annotations

from typing import Callable, Optional

import casadi as ca
import numpy as np

from solvers import ops
from ..leaf_system import LeafSystem

__all__ = ["FunctionSystem", "SymbolicVectorSystem"]


class FunctionSystem(LeafSystem):
    """y = f(t, u): a stateless block around a Python function.

    ``f`` receives the time and the input vector (numpy, or CasADi symbols during
    symbolic evaluation when written with :mod:`solvers.ops`) and returns a vector of
    ``output_size``. Direct feedthrough is inferred symbolically unless given.
    """

    def __init__(self, function: Callable, input_size: int, output_size: int,
                 feedthrough: Optional[bool] = None, name: Optional[str] = None):
        super().__init__(name)
        if not callable(function):
            raise TypeError(f"FunctionSystem expects a callable, got {type(function).__name__}")
        self.function = function
        u = self.declare_input_port("u", input_size) if input_size else None
        empty = np.zeros(0)
        self.declare_output_port(
            "y", output_size, lambda c: function(c.time, u.eval(c) if u is not None else empty),
            feedthrough=feedthrough if u is not None else False,
            prerequisites=["time"])


class SymbolicVectorSystem(LeafSystem):
    """A system given by CasADi ``SX`` expressions (Drake's SymbolicVectorSystem).

    Continuous: xdot = dynamics(t, x, u); discrete (``time_period > 0``): x[n+1] = dynamics;
    y = output(t, x, u) (the state if ``output`` is omitted). Ports ``u`` and ``y``.

    Parameters
    ----------
    time : casadi.SX scalar, optional
    state, input : casadi.SX column vectors (symbols), optional
    dynamics : casadi.SX, same size as ``state``
    output : casadi.SX, optional
    time_period : float
    """

    def __init__(self, *, time=None, state=None, input=None, dynamics=None, output=None,
                 time_period: float = 0.0, name: Optional[str] = None):
        super().__init__(name)
        t = ca.SX.sym("t") if time is None else time
        x = ca.SX(0, 1) if state is None else ca.vec(ca.SX(state))
        u = ca.SX(0, 1) if input is None else ca.vec(ca.SX(input))
        f = ca.SX(0, 1) if dynamics is None else ca.vec(ca.SX(dynamics))
        g = x if output is None else ca.vec(ca.SX(output))
        if f.numel() != x.numel():
            raise ValueError(f"SymbolicVectorSystem: dynamics has {f.numel()} entries but the "
                             f"state has {x.numel()}")
        for what, s in (("time", t), ("state", x), ("input", u)):
            if s.numel() and not s.is_valid_input():
                raise ValueError(f"SymbolicVectorSystem: {what} must be made of pure symbols")
        self._fun = ca.Function("symbolic_vector_system", [t, x, u], [f, g], ["t", "x", "u"], ["f", "g"])
        self.time_period = float(time_period)
        nx, nu, ny = x.numel(), u.numel(), g.numel()
        self._u = self.declare_input_port("u", nu) if nu else None
        if self.time_period > 0:
            self.declare_discrete_state(nx)
            if nx:
                self.declare_periodic_discrete_update(self.time_period, 0.0, lambda c: self._eval(c, 0))
        elif nx:
            self.declare_continuous_state(nx)
        ft = bool(nu) and bool(ca.depends_on(g, u)) if nu else False
        self.declare_output_port("y", ny, lambda c: self._eval(c, 1), feedthrough=ft)

    def _eval(self, context, which: int):
        x = context.discrete_state if self.time_period > 0 else context.continuous_state
        u = self._u.eval(context) if self._u is not None else np.zeros(0)
        t = context.time
        out = self._fun(t, x, u)[which]
        if ops.any_symbolic(t, x, u):
            return out
        return np.asarray(out.full(), dtype=float).ravel()

    def time_derivatives(self, context):
        return self._eval(context, 0)

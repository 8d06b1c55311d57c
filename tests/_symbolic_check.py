"""Test helper: evaluate a leaf system symbolically and compare with its numeric evaluation."""
from __future__ import annotations

import casadi as ca
import numpy as np

from solvers import ops


def symbolic_vs_numeric(system, context, inputs=()):
    """Compare every output, the time derivatives and the discrete updates of ``system``.

    ``context`` is a numeric context of ``system`` with the values to compare at;
    ``inputs`` are numeric values for its vector input ports (fixed into ``context``).
    Returns the number of quantities compared (so a test can assert it is > 0).
    """
    for port, value in zip(system.input_ports, inputs):
        port.fix_value(context, value)
    sym_ctx, s = system.symbolic_context()
    args_sym = [s["t"], s["x"], s["xd"], s["p"]] + [u for u in s["u"] if u is not None]
    args_num = [context.time, np.asarray(context.continuous_state), np.asarray(context.discrete_state),
                np.asarray(context.parameters)] + [np.asarray(v, float) for v in inputs]
    compared = 0

    def check(expr_sym, value_num, what):
        nonlocal compared
        expr = ops.vector(expr_sym)
        f = ca.Function("f", args_sym, [ca.SX(expr) if not isinstance(expr, np.ndarray) else ca.SX(ca.DM(expr))])
        got = np.asarray(f(*args_num).full()).ravel()
        np.testing.assert_allclose(got, np.asarray(value_num, float).ravel(), rtol=1e-12, atol=1e-12,
                                   err_msg=f"{system.name}: symbolic {what} differs from numeric")
        compared += 1

    for port in system.output_ports:
        if port.size is not None:
            check(port.calc(sym_ctx), port.eval(context), f"output '{port.name}'")
    if system.num_continuous_states():
        check(system.eval_time_derivatives(sym_ctx), system.eval_time_derivatives(context), "xdot")
    for ev in system.events():
        if getattr(ev, "kind", None) == "discrete":
            check(ev.callback(sym_ctx), ev.callback(context), "discrete update")
    return compared

"""Diagram -> CasADi: any system of symbolic-capable blocks as CasADi functions.

:func:`to_casadi` evaluates a system once on CasADi ``SX`` symbols (time t, continuous state
x, discrete state xd, inputs u, numeric parameters p) and returns a
:class:`CasadiSystem` holding

* ``f(t, x, xd, u, p) -> xdot``  (continuous dynamics),
* ``g(t, x, xd, u, p) -> y``     (vector output ports, concatenated in port order),
* ``update(t, x, xd, u, p) -> xd_next`` (every periodic discrete update of one period),

plus the sizes, names and slices of each part and helpers to map a context to
``(t, x, xd, u, p)`` and back. Linearization, LQR, compiled simulation and trajectory
optimization all start from here, with no per-system boilerplate.

A block that cannot be evaluated on symbols (it calls a numpy-only function, converts
to ``float``, or branches on a value) makes :func:`to_casadi` raise
:class:`~systems.errors.SymbolicEvaluationError` naming that block.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import casadi as ca
import numpy as np

from solvers import ops
from .errors import SymbolicEvaluationError, SystemCallbackError
from .events import PeriodicEvent
from .system import System

__all__ = ["CasadiSystem", "to_casadi", "converted_input_ports"]


def converted_input_ports(system: System) -> list:
    """The input ports that make up ``u`` in :func:`to_casadi`: every input port but the
    optional ones (which read as zeros while unconnected, e.g. a plant's applied forces)."""
    return [port for port in system.input_ports if not getattr(port, "optional", False)]


def _has_nan_constant(expr) -> bool:
    expr = ca.SX(expr)
    for i in range(expr.numel()):
        e = expr[i]
        if e.is_constant() and math.isnan(float(e)):
            return True
    return False


@dataclass
class CasadiSystem:
    """CasADi functions of a system over flattened (t, x, xd, u, p).

    Attributes
    ----------
    system : System
    f, g, update : casadi.Function
        ``f(t, x, xd, u, p) -> xdot`` (nx), ``g(...) -> y`` (ny), ``update(...) -> xd_next``
        (nxd; the identity when the system has no discrete update).
    nx, nxd, nu, ny, np : int
        Sizes of x, xd, u, y and p.
    input_slices, output_slices : dict
        Port name -> slice of u or y.
    state_names, parameter_names : list of str
        ``"leaf[i]"`` per state entry and ``"leaf.param[i]"`` per parameter entry.
    update_period, update_offset : float or None
        Period and offset of the discrete update (None without discrete updates).
    unconverted_events : list of str
        Events that none of the functions represents (unrestricted updates, witness
        functions, publishes), as ``"system: kind EventType"``; the compiled simulator
        refuses systems that have any besides log sinks.
    """

    system: System
    f: ca.Function
    g: ca.Function
    update: ca.Function
    nx: int
    nxd: int
    nu: int
    ny: int
    np: int
    input_slices: Dict[str, slice]
    output_slices: Dict[str, slice]
    state_names: List[str]
    discrete_state_names: List[str]
    parameter_names: List[str]
    update_period: Optional[float] = None
    update_offset: Optional[float] = None
    unconverted_events: List[str] = field(default_factory=list)
    symbols: Dict[str, ca.SX] = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ context mapping
    def from_context(self, context) -> Tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(t, x, xd, u, p) of a numeric root context of the system.

        Inputs are read from their fixed values; an input that is not fixed raises
        :class:`~systems.errors.InputNotConnectedError`.
        """
        ctx = context if context.system is self.system else self.system.get_my_context_from_root(context)
        u = [np.asarray(port.eval(ctx), float) for port in converted_input_ports(self.system)]
        return (float(ctx.time), np.array(ctx.continuous_state, float), np.array(ctx.discrete_state, float),
                np.concatenate(u) if u else np.zeros(0), np.array(ctx.parameters, float))

    def to_context(self, context, *, t=None, x=None, xd=None, u=None, p=None) -> None:
        """Write the given parts into ``context`` (inputs are fixed, port by port)."""
        ctx = context if context.system is self.system else self.system.get_my_context_from_root(context)
        if t is not None:
            ctx.set_time(t)
        if x is not None:
            ctx.set_continuous_state(x)
        if xd is not None:
            ctx.set_discrete_state(xd)
        if p is not None:
            ctx.set_parameters(p)
        if u is not None:
            u = np.asarray(u, float).ravel()
            if u.shape[0] != self.nu:
                raise ValueError(f"system '{self.system.name}': u has size {u.shape[0]}, expected {self.nu}")
            for port in converted_input_ports(self.system):
                port.fix_value(ctx, u[self.input_slices[port.name]])

    def output_value(self, name: str, y):
        """The part of an output vector ``y`` that belongs to port ``name``."""
        return np.asarray(y).ravel()[self.output_slices[name]]


def _leaf_names(system: System, what: str) -> List[str]:
    names = []
    for leaf in system.leaf_systems():
        n = leaf.num_continuous_states() if what == "x" else leaf.num_discrete_states()
        names.extend(f"{leaf.name}[{i}]" for i in range(n))
    return names


def _discrete_updates(system: System):
    """Per leaf: its periodic discrete update event (one per leaf), and the common period."""
    per_leaf = {}
    periods = set()
    for ev in system.events():
        if ev.kind != "discrete":
            continue
        if not isinstance(ev, PeriodicEvent):
            raise SymbolicEvaluationError(
                f"system '{ev.system.name}' has a {type(ev).__name__} discrete update; only periodic "
                f"discrete updates convert to a CasADi update function")
        if id(ev.system) in per_leaf:
            raise SymbolicEvaluationError(
                f"system '{ev.system.name}' declares several periodic discrete updates; the CasADi "
                f"conversion supports one per block")
        per_leaf[id(ev.system)] = ev
        periods.add((ev.period, ev.offset))
    if len(periods) > 1:
        raise SymbolicEvaluationError(
            f"system '{system.name}' has discrete updates with different (period, offset): "
            f"{sorted(periods)}; the CasADi update function needs a single period")
    period, offset = next(iter(periods)) if periods else (None, None)
    return per_leaf, period, offset


def _symbolic_error(leaf, what, exc) -> SymbolicEvaluationError:
    return SymbolicEvaluationError(
        f"system '{leaf.name}' ({type(leaf).__name__}) cannot be evaluated on CasADi symbols: "
        f"its {what} raised {type(exc).__name__}: {exc}. Write it with arithmetic, indexing and "
        f"solvers.ops functions (no float(), numpy-only calls or if-statements on values)")


def to_casadi(system: System) -> CasadiSystem:
    """Convert ``system`` (leaf or diagram) to CasADi functions of (t, x, xd, u, p).

    Parameters
    ----------
    system : System
        Every leaf must be symbolic-capable; vector input and output ports only (abstract
        outputs are left out of ``g``; an abstract input is an error).

    Returns
    -------
    CasadiSystem

    Raises
    ------
    SymbolicEvaluationError
        Naming the block that cannot be evaluated on symbols and why.
    """
    inputs = converted_input_ports(system)
    for port in inputs:
        if port.size is None:
            raise SymbolicEvaluationError(f"input port '{port.full_name()}' is abstract; only vector "
                                          f"inputs convert to CasADi")
    ctx = system.create_default_context()
    nx, nxd, npar = system.num_continuous_states(), system.num_discrete_states(), system.num_numeric_parameters()
    t = ca.SX.sym("t")
    x = ca.SX.sym("x", nx)
    xd = ca.SX.sym("xd", nxd)
    p = ca.SX.sym("p", npar)
    u_parts, input_slices, k = [], {}, 0
    for port in inputs:
        s = ca.SX.sym(f"u_{port.name}", port.size)
        u_parts.append(s)
        input_slices[port.name] = slice(k, k + port.size)
        k += port.size
    u = ca.vertcat(*u_parts) if u_parts else ca.SX(0, 1)
    nu = k
    ctx.set_time(t)
    if nx:
        ctx.set_continuous_state(x)
    if nxd:
        ctx.set_discrete_state(xd)
    if npar:
        ctx.set_parameters(p)
    for port, s in zip(inputs, u_parts):
        port.fix_value(ctx, s)

    leaves = ctx.leaf_contexts()
    # Continuous dynamics, leaf by leaf so that a failure names its block.
    xdot_parts = []
    for leaf_ctx in leaves:
        leaf = leaf_ctx.system
        if leaf.num_continuous_states() == 0:
            continue
        try:
            part = leaf.eval_time_derivatives(leaf_ctx)
        except SystemCallbackError as exc:
            raise SymbolicEvaluationError(f"{exc} (while converting '{system.name}' to CasADi)") from exc
        except Exception as exc:  # noqa: BLE001
            raise _symbolic_error(leaf, "time_derivatives", exc) from exc
        if _has_nan_constant(ops.vector(part)) if ops.is_symbolic(part) else not np.all(np.isfinite(part)):
            raise _symbolic_error(leaf, "time_derivatives", ValueError("it evaluated to nan on symbols"))
        xdot_parts.append(ca.SX(ops.vector(part)) if ops.is_symbolic(part) else ca.SX(ca.DM(part)))
    xdot = ca.vertcat(*xdot_parts) if xdot_parts else ca.SX(0, 1)

    # Outputs.
    y_parts, output_slices, k = [], {}, 0
    for port in system.output_ports:
        if port.size is None:
            continue
        try:
            val = port.eval(ctx)
        except SystemCallbackError as exc:
            raise SymbolicEvaluationError(f"{exc} (while converting '{system.name}' to CasADi)") from exc
        val = ca.SX(val) if ops.is_symbolic(val) else ca.SX(ca.DM(np.asarray(val, float)))
        if _has_nan_constant(val):
            raise SymbolicEvaluationError(
                f"output port '{port.full_name()}' evaluates to nan on symbols: a block upstream "
                f"converts a symbol to float; write it with solvers.ops")
        y_parts.append(val)
        output_slices[port.name] = slice(k, k + port.size)
        k += port.size
    y = ca.vertcat(*y_parts) if y_parts else ca.SX(0, 1)

    # Discrete update.
    per_leaf, period, offset = _discrete_updates(system)
    xd_next_parts = []
    for leaf_ctx in leaves:
        leaf = leaf_ctx.system
        if leaf.num_discrete_states() == 0:
            continue
        ev = per_leaf.get(id(leaf))
        if ev is None:
            xd_next_parts.append(ca.SX(leaf_ctx.discrete_state))
            continue
        try:
            nxt = ops.vector(ev.callback(leaf_ctx))
        except Exception as exc:  # noqa: BLE001
            raise _symbolic_error(leaf, "discrete update", exc) from exc
        if nxt.shape[0] != leaf.num_discrete_states():
            raise SymbolicEvaluationError(f"system '{leaf.name}': discrete update returned size "
                                          f"{nxt.shape[0]}, expected {leaf.num_discrete_states()}")
        xd_next_parts.append(ca.SX(nxt) if ops.is_symbolic(nxt) else ca.SX(ca.DM(nxt)))
    xd_next = ca.vertcat(*xd_next_parts) if xd_next_parts else ca.SX(0, 1)

    args, names = [t, x, xd, u, p], ["t", "x", "xd", "u", "p"]
    param_names = [f"{leaf.name}.{n}[{i}]" for leaf in system.leaf_systems()
                   for n, v in zip(getattr(leaf, "_param_names", []), getattr(leaf, "_p0", []))
                   for i in range(v.shape[0])]
    return CasadiSystem(
        system=system,
        f=ca.Function(ops.function_name(system.name, "f"), args, [xdot], names, ["xdot"]),
        g=ca.Function(ops.function_name(system.name, "g"), args, [y], names, ["y"]),
        update=ca.Function(ops.function_name(system.name, "update"), args, [xd_next], names, ["xd_next"]),
        nx=nx, nxd=nxd, nu=nu, ny=k, np=npar,
        input_slices=input_slices, output_slices=output_slices,
        state_names=_leaf_names(system, "x"), discrete_state_names=_leaf_names(system, "xd"),
        parameter_names=param_names, update_period=period, update_offset=offset,
        unconverted_events=[f"{ev.system.name}: {getattr(ev, 'kind', 'witness')} {type(ev).__name__}"
                            for ev in system.events() if getattr(ev, "kind", None) != "discrete"],
        symbols={"t": t, "x": x, "xd": xd, "u": u, "p": p},
    )

"""Input and output ports of systems.

A port belongs to one system, has a name unique among that system's ports of the same
direction, and is either vector-valued with a fixed ``size`` or abstract (any Python
object, ``size is None``). Values are 1-D numpy arrays of shape ``(size,)`` in numeric
evaluation and CasADi columns ``(size, 1)`` in symbolic evaluation.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

import casadi as ca
import numpy as np

from solvers import ops
from .errors import NonFiniteOutputError, PortValueError


__all__ = ["InputPort", "OutputPort", "normalize_vector"]

_NDARRAY = np.ndarray


def normalize_vector(value: Any, size: int, what: str):
    """Return ``value`` as a vector of ``size`` elements, or raise naming ``what``.

    Numeric values become float64 arrays of shape ``(size,)``; CasADi values (or
    sequences holding them) become CasADi columns ``(size, 1)``.
    """
    if type(value) is _NDARRAY and value.dtype == np.float64 and value.shape == (size,):
        return value
    if value is None:
        raise PortValueError(f"{what}: got None, expected a vector of size {size} (did a calc "
                             "function forget to return its value?)")
    try:
        vec = ops.vector(value)
    except Exception as exc:  # noqa: BLE001 - report any conversion failure with the culprit
        raise PortValueError(f"{what}: cannot convert a {type(value).__name__} to a vector of "
                             f"size {size} ({exc})") from exc
    n = vec.shape[0]
    if n != size or (ops.is_casadi(vec) and vec.shape[1] != 1):
        raise PortValueError(f"{what}: got a value of size {n}, expected size {size}")
    return vec


class _Port:
    __slots__ = ("system", "index", "name", "size", "model_value")

    def __init__(self, system: "System", index: int, name: str, size: Optional[int],
                 model_value: Any = None):
        self.system = system
        self.index = index
        self.name = name
        self.size = size
        self.model_value = model_value

    @property
    def is_abstract(self) -> bool:
        """True for ports carrying arbitrary Python objects instead of vectors."""
        return self.size is None

    def full_name(self) -> str:
        """``system.port`` as used in error messages."""
        return f"{self.system.name}.{self.name}"

    def __repr__(self) -> str:
        kind = "abstract" if self.size is None else f"size {self.size}"
        return f"<{type(self).__name__} '{self.full_name()}' ({kind})>"


class InputPort(_Port):
    """An input port: its value comes from a connected output, a diagram input, or a fixed value.

    An *optional* port (``declare_input_port(..., optional=True)``) reads as zeros while it
    has no value, and :func:`systems.symbolic.to_casadi` leaves it out of ``u`` (it is zero
    there): a plant's applied forces, for instance.
    """

    __slots__ = ("optional",)

    def __init__(self, system, index: int, name: str, size, model_value: Any = None,
                 optional: bool = False):
        super().__init__(system, index, name, size, model_value)
        self.optional = bool(optional)

    def eval(self, context: "Context"):
        """Value of this input in ``context`` (the system's context or any enclosing one).

        Raises
        ------
        InputNotConnectedError
            When the port is neither connected, exported nor fixed.
        """
        if context.system is self.system and not self.optional:   # the usual call
            return context.eval_input(self.index)
        ctx = context if context.system is self.system else self.system.get_my_context_from_root(context)
        if self.optional and not ctx.has_input_value(self.index):
            return np.zeros(self.size)
        return ctx.eval_input(self.index)

    def has_value(self, context: "Context") -> bool:
        """Whether this input has a value in ``context`` (connected, exported and fed, or
        fixed); optional inputs (a plant's applied forces) are read only when it does."""
        ctx = context if context.system is self.system else self.system.get_my_context_from_root(context)
        return ctx.has_input_value(self.index)

    def fix_value(self, context: "Context", value: Any):
        """Fix this input to ``value`` in ``context`` (the system's context or an enclosing one).

        Vector ports check the size and refuse non-finite numbers; abstract ports take any
        object. Returns the stored value.
        """
        ctx = context if context.system is self.system else self.system.get_my_context_from_root(context)
        what = f"input port '{self.full_name()}'"
        if self.size is None:
            stored = value
        else:
            stored = normalize_vector(value, self.size, what)
            if isinstance(stored, np.ndarray):
                if not np.all(np.isfinite(stored)):
                    raise PortValueError(f"{what}: fixed value must be finite, got {stored}")
                stored = stored.copy()
        ctx.fix_input(self.index, stored)
        return stored

    def is_fixed(self, context: "Context") -> bool:
        """Whether a value is fixed for this port in ``context``."""
        ctx = context if context.system is self.system else self.system.get_my_context_from_root(context)
        return ctx.is_input_fixed(self.index)


class OutputPort(_Port):
    """An output port; ``eval(context)`` returns its (cached) value.

    Leaf output ports own a ``calc(context)`` callback; diagram output ports forward to an
    output port of a subsystem.
    """

    __slots__ = ("calc", "feedthrough", "prerequisites", "source")

    def __init__(self, system, index, name, size, calc: Optional[Callable] = None,
                 feedthrough=None, prerequisites=None, model_value=None, source=None):
        super().__init__(system, index, name, size, model_value)
        self.calc = calc
        self.feedthrough = feedthrough
        self.prerequisites = prerequisites
        self.source = source  # for diagram ports: the subsystem's OutputPort

    def fix_value(self, context: "Context", value: Any):
        """Outputs are computed from the context, not stored: raises a TypeError that says
        to fix an input port (or set state or parameters) instead."""
        raise TypeError(f"output port '{self.full_name()}' cannot be fixed: outputs are "
                        "computed from the context; fix an input port (port.fix_value on an "
                        "InputPort) or set the state or parameters instead")

    def eval(self, context: "Context", *, allow_non_finite: bool = False):
        """Value of this output in ``context`` (the system's context or any enclosing one).

        Values are cached in the context and recomputed only after something they depend on
        (time, state, parameters, or an upstream value) changed. The returned array must not
        be modified in place.

        Parameters
        ----------
        context : Context
        allow_non_finite : bool
            Return a vector holding NaN or infinity instead of raising (to inspect a
            diverged state, or for a port whose infinities are meaningful).

        Returns
        -------
        numpy.ndarray of shape (size,), a CasADi column (size, 1) in symbolic evaluation,
        or any object for an abstract port.

        Raises
        ------
        NonFiniteOutputError
            When a numeric vector value has a NaN or infinite entry (and
            ``allow_non_finite`` is False); the message names the leaf system and port that
            computed it, the entry and the time. The check costs one sum of the vector.
            Values read by other systems' calc functions (through their input ports) are
            not checked here; the Simulator checks states, derivatives and the values its
            publishes read.
        """
        ctx = context if context.system is self.system else self.system.get_my_context_from_root(context)
        value = ctx.eval_output(self.index)
        if type(value) is _NDARRAY and self.size is not None and not allow_non_finite and \
                not math.isfinite(sum(value.tolist()) if value.shape[0] <= 32 else float(value.sum())):
            _raise_non_finite(self, ctx, value)
        return value


def _raise_non_finite(port: OutputPort, ctx, value: np.ndarray) -> None:
    """Raise :class:`NonFiniteOutputError` for ``value`` of ``port`` unless it is finite
    after all (a sum that overflowed) or the context holds symbols (a CasADi trace: the
    tracer reports NaN constants itself)."""
    bad = np.flatnonzero(~np.isfinite(value))
    t = ctx.time
    if bad.size == 0 or not isinstance(t, (float, int)):
        return
    i = int(bad[0])
    leaf = port
    while leaf.source is not None:  # a diagram port: name the leaf port that computed it
        leaf = leaf.source
    origin = "" if leaf is port else \
        f" (computed by output port '{leaf.name}' of system '{leaf.system.name}')"
    raise NonFiniteOutputError(
        f"output port '{port.name}' of system '{port.system.name}'{origin} is {value[i]} "
        f"(entry {i} of {value.shape[0]}) at t={t!r}; expected finite values. Pass "
        f"allow_non_finite=True to eval to get the value anyway")


def _is_finite_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def check_port_name(name: Any, owner: str) -> str:
    """Validate a port name (non-empty string without '.')."""
    if not isinstance(name, str) or not name or "." in name:
        raise ValueError(f"{owner}: port name must be a non-empty string without '.', got {name!r}")
    return name


def check_port_size(size: Any, owner: str) -> int:
    """Validate a vector port size (integer >= 0)."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise ValueError(f"{owner}: port size must be an integer >= 0, got {size!r}")
    return int(size)


def symbolic_input(port: InputPort):
    """A fresh CasADi ``SX`` symbol column for a vector input port."""
    return ca.SX.sym(f"{port.system.name}_{port.name}", port.size)

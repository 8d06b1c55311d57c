"""Signal routing and elementwise blocks: Adder, Multiplexer, Demultiplexer, PassThrough
(vector or abstract), Saturation, PortSwitch, Selector, WrapToSystem."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np

from solvers import ops
from ..errors import PortValueError
from ..leaf_system import LeafSystem

__all__ = ["Adder", "Multiplexer", "Demultiplexer", "PassThrough", "Saturation", "PortSwitch",
           "Selector", "WrapToSystem"]


class Adder(LeafSystem):
    """sum = u0 + u1 + ... + u{n-1}: ``num_inputs`` inputs of ``size``, output ``sum``."""

    def __init__(self, num_inputs: int, size: int, name: Optional[str] = None):
        super().__init__(name)
        if num_inputs < 1:
            raise ValueError(f"Adder: num_inputs must be >= 1, got {num_inputs}")
        self._ins = [self.declare_input_port(f"u{i}", size) for i in range(num_inputs)]
        self.declare_output_port("sum", size, self._calc, feedthrough=True, prerequisites=())

    def _calc(self, context):
        total = self._ins[0].eval(context)
        for port in self._ins[1:]:
            total = total + port.eval(context)
        return total


class Multiplexer(LeafSystem):
    """Stack inputs into one vector: ``Multiplexer(3)`` (three scalars) or ``Multiplexer([2, 3])``.

    Inputs ``u0``, ``u1``, ...; output ``y`` of the summed size.
    """

    def __init__(self, input_sizes: Union[int, Sequence[int]], name: Optional[str] = None):
        super().__init__(name)
        sizes = [1] * int(input_sizes) if np.isscalar(input_sizes) else [int(s) for s in input_sizes]
        if not sizes:
            raise ValueError("Multiplexer needs at least one input")
        self.input_sizes = sizes
        self._ins = [self.declare_input_port(f"u{i}", n) for i, n in enumerate(sizes)]
        self.declare_output_port("y", sum(sizes), lambda c: ops.vertcat(*[p.eval(c) for p in self._ins]),
                                 feedthrough=True, prerequisites=())


class Demultiplexer(LeafSystem):
    """Split a vector: ``Demultiplexer(size, output_ports_size=1)`` or ``Demultiplexer([2, 3])``.

    Input ``u``; outputs ``y0``, ``y1``, ...
    """

    def __init__(self, size: Union[int, Sequence[int]], output_ports_size: int = 1,
                 name: Optional[str] = None):
        super().__init__(name)
        if np.isscalar(size):
            if size % output_ports_size:
                raise ValueError(f"Demultiplexer: size {size} is not a multiple of "
                                 f"output_ports_size {output_ports_size}")
            sizes = [output_ports_size] * (int(size) // output_ports_size)
        else:
            sizes = [int(s) for s in size]
        self.output_sizes = sizes
        u = self.declare_input_port("u", sum(sizes))
        start = 0
        for i, n in enumerate(sizes):
            self.declare_output_port(f"y{i}", n, (lambda a, b: lambda c: u.eval(c)[a:b])(start, start + n),
                                     feedthrough=True, prerequisites=())
            start += n


class PassThrough(LeafSystem):
    """y = u, for a vector of ``size`` or (Drake's abstract form, ``PassThrough(
    abstract_model_value=value)``) any Python object of the model value's kind."""

    def __init__(self, size: Optional[int] = None, name: Optional[str] = None, *,
                 abstract_model_value: Any = None):
        super().__init__(name)
        if (size is None) == (abstract_model_value is None):
            raise ValueError(f"PassThrough '{self.name}': give exactly one of size (a vector "
                             f"pass-through) and abstract_model_value (an abstract one)")
        if abstract_model_value is not None:
            u = self.declare_abstract_input_port("u", abstract_model_value)
            self.declare_abstract_output_port("y", lambda c: u.eval(c), model_value=abstract_model_value,
                                              feedthrough=True, prerequisites=())
            return
        u = self.declare_input_port("u", size)
        self.declare_output_port("y", size, lambda c: u.eval(c), feedthrough=True, prerequisites=())


class Saturation(LeafSystem):
    """y = min(max(u, min_value), max_value), elementwise."""

    def __init__(self, min_value, max_value, name: Optional[str] = None):
        super().__init__(name)
        lo = np.atleast_1d(np.asarray(min_value, dtype=float)).ravel()
        hi = np.atleast_1d(np.asarray(max_value, dtype=float)).ravel()
        if lo.shape != hi.shape:
            raise ValueError(f"Saturation: min_value has size {lo.shape[0]} but max_value has {hi.shape[0]}")
        if np.any(lo > hi):
            bad = int(np.flatnonzero(lo > hi)[0])
            raise ValueError(f"Saturation: min_value[{bad}] = {lo[bad]} exceeds max_value[{bad}] = {hi[bad]}")
        self.min_value, self.max_value = lo, hi
        u = self.declare_input_port("u", lo.shape[0])
        self.declare_output_port("y", lo.shape[0], lambda c: ops.clip(u.eval(c), lo, hi),
                                 feedthrough=True, prerequisites=())


class PortSwitch(LeafSystem):
    """Pass one of several vector inputs to the output ``value``, chosen by ``port_selector``.

    Drake's ``PortSwitch``: input 0 is ``port_selector``; inputs added with
    :meth:`declare_input_port` (each of ``vector_size``) are the choices. The selector
    carries the *input port index* of the chosen input (so ``1`` is the first one added,
    as Drake's ``InputPortIndex``); here it is a vector input of size 1 (a number, rounded
    to the nearest integer), which keeps the block symbolic-capable:

    .. math:: y = \\sum_i [\\mathrm{round}(s) = i]\\, u_i .

    A selector naming no switched input raises :class:`~systems.errors.PortValueError`.
    Numerically only the selected input is evaluated (Drake's pull semantics). With
    ``abstract_model_value`` (Drake's abstract form) the switched inputs and the output
    carry any Python object (not symbolic).

    Parameters
    ----------
    vector_size : int, optional
        Size of every switched input and of the output (vector form).
    input_names : sequence of str, optional
        Inputs to declare at once (same as calling :meth:`declare_input_port` for each).
    abstract_model_value : object, optional
        Model value of the inputs and output (abstract form; instead of ``vector_size``).

    References
    ----------
    Drake, ``drake/systems/primitives/port_switch.h``.
    """

    def __init__(self, vector_size: Optional[int] = None, input_names: Sequence[str] = (),
                 name: Optional[str] = None, *, abstract_model_value: Any = None):
        super().__init__(name)
        self._model = abstract_model_value
        if (vector_size is None) == (abstract_model_value is None):
            raise ValueError(f"PortSwitch '{self.name}': give exactly one of vector_size (a vector "
                             f"switch) and abstract_model_value (an abstract one)")
        self._selector = super().declare_input_port("port_selector", 1)
        self._choices = []
        if abstract_model_value is not None:
            self.vector_size = None
            self.declare_abstract_output_port("value", self._calc, model_value=abstract_model_value,
                                              feedthrough=True, prerequisites=())
        else:
            if isinstance(vector_size, bool) or not isinstance(vector_size, (int, np.integer)) \
                    or vector_size < 1:
                raise ValueError(f"PortSwitch '{self.name}': vector_size must be an integer >= 1, "
                                 f"got {vector_size!r}")
            self.vector_size = int(vector_size)
            self.declare_output_port("value", self.vector_size, self._calc, feedthrough=True,
                                     prerequisites=())
        for n in input_names:
            self.declare_input_port(n)

    def declare_input_port(self, name: str, size: Optional[int] = None, optional: bool = False):
        """Add a switched input named ``name`` (of ``vector_size``); returns the port, whose
        ``index`` is the selector value that picks it."""
        if self.vector_size is None:
            if size is not None:
                raise ValueError(f"PortSwitch '{self.name}': input '{name}' is abstract (the switch "
                                 f"was made with abstract_model_value); do not give a size")
            port = self.declare_abstract_input_port(name, self._model)
            self._choices.append(port)
            return port
        if size is not None and size != self.vector_size:
            raise ValueError(f"PortSwitch '{self.name}': input '{name}' must have size "
                             f"{self.vector_size} (the switch's vector_size), got {size}")
        port = super().declare_input_port(name, self.vector_size, optional)
        self._choices.append(port)
        return port

    def get_port_selector_input_port(self):
        """The ``port_selector`` input (port 0)."""
        return self._selector

    def _calc(self, context):
        s = self._selector.eval(context)
        if not self._choices:
            raise PortValueError(f"PortSwitch '{self.name}' has no inputs to switch between; call "
                                 f"declare_input_port(name) first")
        if ops.is_symbolic(s):
            k = ops.floor(s[0] + 0.5)
            out = 0.0 * self._choices[0].eval(context)
            for port in self._choices:
                out = out + ops.if_else(k == port.index, port.eval(context), 0.0 * out)
            return out
        value = float(np.asarray(s).reshape(-1)[0])
        k = int(round(value)) if np.isfinite(value) else -1
        for port in self._choices:
            if port.index == k:
                return port.eval(context)
        choices = ", ".join(f"{p.index} ('{p.name}')" for p in self._choices)
        raise PortValueError(f"PortSwitch '{self.name}': port_selector is {value!r}, which names no "
                             f"switched input; expected one of {choices}")


class Selector(LeafSystem):
    """Outputs made of chosen elements of the inputs (Drake's ``Selector``).

    ``Selector(input_sizes, output_selections)``: inputs ``u0``, ``u1``, ... of the
    given sizes; output ``y{j}`` is the vector whose ``m``-th element is element
    ``e`` of input ``i`` for ``output_selections[j][m] == (i, e)``:

    .. math:: y_j[m] = u_{i_{jm}}[e_{jm}] .

    Parameters
    ----------
    input_sizes : sequence of int
    output_selections : sequence of sequence of (int, int)
        Per output, the (input index, element index) pairs in output order.
    input_names, output_names : sequence of str, optional
        Port names (default ``u0, u1, ...`` and ``y0, y1, ...``).

    References
    ----------
    Drake, ``drake/systems/primitives/selector.h`` (``SelectorParams``: inputs, outputs,
    selections of ``input_port_index`` and ``input_start``).
    """

    def __init__(self, input_sizes: Sequence[int], output_selections, input_names=None,
                 output_names=None, name: Optional[str] = None):
        super().__init__(name)
        owner = f"Selector '{self.name}'"
        sizes = [int(n) for n in input_sizes]
        if any(n < 0 for n in sizes):
            raise ValueError(f"{owner}: input sizes must be >= 0, got {sizes}")
        in_names = list(input_names) if input_names is not None else [f"u{i}" for i in range(len(sizes))]
        out_names = list(output_names) if output_names is not None else \
            [f"y{j}" for j in range(len(output_selections))]
        if len(in_names) != len(sizes) or len(out_names) != len(output_selections):
            raise ValueError(f"{owner}: {len(in_names)} input names for {len(sizes)} inputs, "
                             f"{len(out_names)} output names for {len(output_selections)} outputs")
        self._ins = [self.declare_input_port(n, k) for n, k in zip(in_names, sizes)]
        self.selections = []
        for j, (oname, picks) in enumerate(zip(out_names, output_selections)):
            checked = []
            for m, pick in enumerate(picks):
                try:
                    i, e = (int(v) for v in pick)
                except (TypeError, ValueError):
                    raise ValueError(f"{owner}: output '{oname}' element {m} must be a pair "
                                     f"(input index, element index), got {pick!r}") from None
                if not 0 <= i < len(sizes):
                    raise ValueError(f"{owner}: output '{oname}' element {m} selects input {i}; "
                                     f"there are {len(sizes)} inputs")
                if not 0 <= e < sizes[i]:
                    raise ValueError(f"{owner}: output '{oname}' element {m} selects element {e} "
                                     f"of input '{in_names[i]}', which has size {sizes[i]}")
                checked.append((i, e))
            self.selections.append(checked)
            self.declare_output_port(oname, len(checked), (lambda sel: lambda c: self._pick(c, sel))(checked),
                                     feedthrough=sorted({i for i, _ in checked}), prerequisites=())

    def _pick(self, context, selection):
        values = {}
        parts = []
        for i, e in selection:
            if i not in values:
                values[i] = self._ins[i].eval(context)
            parts.append(values[i][e])
        return ops.vertcat(*parts) if parts else np.zeros(0)


class WrapToSystem(LeafSystem):
    """Wrap chosen elements of ``u`` into intervals: ``y = u`` except ``y[i] in [low, high)``.

    Drake's ``WrapToSystem(size)`` with ``set_interval(index, low, high)``:

    .. math:: y_i = \\mathrm{low}_i + (u_i - \\mathrm{low}_i) - (\\mathrm{high}_i -
              \\mathrm{low}_i) \\left\\lfloor \\frac{u_i - \\mathrm{low}_i}
              {\\mathrm{high}_i - \\mathrm{low}_i} \\right\\rfloor

    for the elements given an interval (e.g. an angle into ``[-pi, pi)``); the others pass
    through. Symbolic-capable (``floor``).

    Parameters
    ----------
    size : int
    intervals : dict, optional
        ``{index: (low, high)}``, same as calling :meth:`set_interval` for each.

    References
    ----------
    Drake, ``drake/systems/primitives/wrap_to_system.h``.
    """

    def __init__(self, size: int, intervals=None, name: Optional[str] = None):
        super().__init__(name)
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise ValueError(f"WrapToSystem '{self.name}': size must be an integer >= 1, got {size!r}")
        self.size = int(size)
        self._intervals = {}
        u = self.declare_input_port("u", self.size)
        self.declare_output_port("y", self.size, lambda c: self._wrap(u.eval(c)), feedthrough=True,
                                 prerequisites=())
        for index, (low, high) in (intervals or {}).items():
            self.set_interval(index, low, high)

    def set_interval(self, index: int, low: float, high: float) -> None:
        """Wrap element ``index`` into ``[low, high)`` (``high > low``, both finite)."""
        if self.parent_diagram is not None:
            raise RuntimeError(f"WrapToSystem '{self.name}': set intervals before the system is "
                               f"part of a diagram")
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < self.size:
            raise ValueError(f"WrapToSystem '{self.name}': index must be an integer in [0, {self.size}), "
                             f"got {index!r}")
        low, high = float(low), float(high)
        if not (np.isfinite(low) and np.isfinite(high) and high > low):
            raise ValueError(f"WrapToSystem '{self.name}': interval of element {index} must have "
                             f"finite low < high, got [{low}, {high})")
        self._intervals[int(index)] = (low, high)

    def _wrap(self, u):
        if not self._intervals:
            return u
        parts = []
        for i in range(self.size):
            if i in self._intervals:
                low, high = self._intervals[i]
                w = high - low
                parts.append(u[i] - w * ops.floor((u[i] - low) / w))
            else:
                parts.append(u[i])
        return ops.vertcat(*parts)

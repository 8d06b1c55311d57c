"""Signal routing and elementwise blocks: Adder, Multiplexer, Demultiplexer, PassThrough,
Saturation."""
from __future__ import annotations

from typing import Optional, Sequence, Union

import numpy as np

from solvers import ops
from ..leaf_system import LeafSystem

__all__ = ["Adder", "Multiplexer", "Demultiplexer", "PassThrough", "Saturation"]


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
    """y = u."""

    def __init__(self, size: int, name: Optional[str] = None):
        super().__init__(name)
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

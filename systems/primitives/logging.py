"""Logging sinks: :class:`VectorLogSink`, :func:`LogVectorOutput` and their :class:`VectorLog`.

A log stores its samples in preallocated blocks: times in a float64 array, values in a
``(block, size)`` float64 array written one row per sample, so a sample of an ``n``-vector
costs ``8 (n + 1)`` bytes plus the unused tail of the last block (blocks grow from 256 to
65,536 samples, so that tail is below 7 % of a long log and a short log stays small).
Before, every sample was kept as two separate numpy arrays (about 624 bytes for a
2-vector); ``benchmarks/bench_logger_memory.py`` measures both. With ``capacity`` the log
is a ring buffer that keeps the latest ``capacity`` samples in one array.
"""
from __future__ import annotations

import copy
from typing import List, Optional

import numpy as np

from ..errors import PortValueError
from ..leaf_system import LeafSystem

__all__ = ["VectorLog", "VectorLogSink", "LogVectorOutput"]

_FIRST_BLOCK = 256
_MAX_BLOCK = 65536


class VectorLog:
    """Samples recorded by a :class:`VectorLogSink` (one log per context).

    Parameters
    ----------
    size : int
        Length ``n`` of each recorded vector.
    capacity : int, optional
        Keep only the latest ``capacity`` samples (a ring buffer; older samples are
        dropped, :meth:`num_dropped` counts them). Default: keep every sample.

    Notes
    -----
    ``sample_times()`` has shape ``(N,)`` and ``data()`` shape ``(n, N)``, both fresh copies
    in time order. Memory: ``8 (n + 1)`` bytes per sample plus less than one block of slack
    (module docstring); a ring buffer allocates ``8 (n + 1) capacity`` bytes once it is full.
    A sample at the same time as the previous one replaces it (a step's publish repeated
    at an event time).
    """

    def __init__(self, size: int, capacity: Optional[int] = None):
        size = int(size)
        if size < 0:
            raise PortValueError(f"VectorLog: size must be >= 0, got {size}")
        if capacity is not None and (not isinstance(capacity, (int, np.integer))
                                     or isinstance(capacity, bool) or capacity < 1):
            raise PortValueError(f"VectorLog(size={size}): capacity must be a positive integer "
                                 f"or None, got {capacity!r}")
        self._size = size
        self._capacity = None if capacity is None else int(capacity)
        self.clear()

    # ------------------------------------------------------------------ storage
    def clear(self) -> None:
        """Forget every sample (and the dropped count)."""
        self._times: List[np.ndarray] = []      # blocks, (block,)
        self._data: List[np.ndarray] = []       # blocks, (block, size)
        self._used = 0                          # samples in the last block (growing log)
        self._n = 0                             # samples held
        self._head = 0                          # ring: index of the oldest sample
        self._dropped = 0
        self._last_t: Optional[float] = None

    def _new_block(self) -> None:
        if self._capacity is None:
            m = min(_FIRST_BLOCK << len(self._times), _MAX_BLOCK)
        else:  # ring: grow to the capacity by doubling, in a single block
            m = min(self._capacity, max(_FIRST_BLOCK, 2 * (self._times[0].size if self._times
                                                             else 0)))
        t = np.empty(m)
        d = np.empty((m, self._size))
        if self._capacity is not None and self._times:
            t[:self._n] = self._times[0][:self._n]
            d[:self._n] = self._data[0][:self._n]
            self._times, self._data = [t], [d]
        else:
            self._times.append(t)
            self._data.append(d)
            self._used = 0

    def _slot(self) -> tuple[np.ndarray, np.ndarray, int]:
        """(times block, data block, index) where the next sample goes."""
        if self._capacity is None:
            if not self._times or self._used == self._times[-1].size:
                self._new_block()
            i = self._used
            self._used += 1
            self._n += 1
            return self._times[-1], self._data[-1], i
        if self._n < self._capacity:
            if not self._times or self._n == self._times[0].size:
                self._new_block()
            self._n += 1
            return self._times[0], self._data[0], self._n - 1
        i = self._head                          # full: overwrite the oldest
        self._head = (self._head + 1) % self._capacity
        self._dropped += 1
        return self._times[0], self._data[0], i

    def _last_index(self) -> tuple[np.ndarray, np.ndarray, int]:
        if self._capacity is None:
            return self._times[-1], self._data[-1], self._used - 1
        return self._times[0], self._data[0], (self._head + self._n - 1) % self._capacity

    # ------------------------------------------------------------------ recording
    def add(self, t: float, value) -> None:
        """Append one sample: time ``t`` and ``value`` with ``size`` entries (any shape)."""
        t = float(t)
        v = np.asarray(value, dtype=float)
        if v.size != self._size:
            raise PortValueError(f"VectorLog(size={self._size}).add: the value has {v.size} "
                                 f"entries, expected {self._size}")
        if t == self._last_t:
            times, data, i = self._last_index()
        else:
            times, data, i = self._slot()
            self._last_t = t
        times[i] = t
        data[i] = v.reshape(self._size)

    def extend(self, times, values) -> None:
        """Append samples: ``times`` (N,) increasing, ``values`` (size, N)."""
        times = np.asarray(times, dtype=float).reshape(-1)
        values = np.asarray(values, dtype=float)
        if values.size != self._size * times.size:
            raise PortValueError(f"VectorLog(size={self._size}).extend: values of shape "
                                 f"{values.shape} for {times.size} times, expected "
                                 f"({self._size}, {times.size})")
        values = values.reshape(self._size, times.size)
        if times.size == 0:
            return
        start = 0
        if times[0] == self._last_t:            # replaces the previous sample
            tb, db, i = self._last_index()
            db[i] = values[:, 0]
            start = 1
        if self._capacity is not None and times.size - start > self._capacity:
            self._dropped += times.size - start - self._capacity
            start = times.size - self._capacity
        k = start
        while k < times.size:
            if self._capacity is None:
                if not self._times or self._used == self._times[-1].size:
                    self._new_block()
                tb, db = self._times[-1], self._data[-1]
                m = min(times.size - k, tb.size - self._used)
                tb[self._used:self._used + m] = times[k:k + m]
                db[self._used:self._used + m] = values[:, k:k + m].T
                self._used += m
                self._n += m
                k += m
            else:
                tb, db, i = self._slot()
                tb[i] = times[k]
                db[i] = values[:, k]
                k += 1
        self._last_t = float(times[-1])

    # ------------------------------------------------------------------ reading
    def _ordered(self, blocks: List[np.ndarray]) -> List[np.ndarray]:
        if not blocks:
            return []
        if self._capacity is None:
            return blocks[:-1] + [blocks[-1][:self._used]]
        b = blocks[0]
        if self._n < self._capacity:
            return [b[:self._n]]
        return [b[self._head:], b[:self._head]]

    def sample_times(self) -> np.ndarray:
        """Times of the samples held, shape (N,), oldest first."""
        parts = self._ordered(self._times)
        return np.concatenate(parts) if parts else np.zeros(0)

    def data(self) -> np.ndarray:
        """Recorded values, shape (size, N), oldest first."""
        parts = self._ordered(self._data)
        if not parts:
            return np.zeros((self._size, 0))
        return np.ascontiguousarray(np.concatenate(parts, axis=0).T)

    def num_samples(self) -> int:
        """Number of samples held."""
        return self._n

    def num_dropped(self) -> int:
        """Number of samples a ring buffer (``capacity``) has dropped; 0 otherwise."""
        return self._dropped

    @property
    def capacity(self) -> Optional[int]:
        """Most samples held (ring buffer), or None for an unbounded log."""
        return self._capacity

    def nbytes(self) -> int:
        """Bytes held by the sample arrays (allocated blocks, used or not)."""
        return sum(t.nbytes + d.nbytes for t, d in zip(self._times, self._data))

    def __deepcopy__(self, memo):
        new = copy.copy(self)
        new._times = [t.copy() for t in self._times]
        new._data = [d.copy() for d in self._data]
        return new


class VectorLogSink(LeafSystem):
    """Records its input ``data`` per simulator step (``publish_period == 0``) or periodically.

    Parameters
    ----------
    input_size : int
        Size of the logged vector.
    publish_period : float
        Seconds between samples; 0 records once per simulator step.
    name : str, optional
    capacity : int, optional
        Keep only the latest ``capacity`` samples (:class:`VectorLog` ring buffer).

    Notes
    -----
    The log lives in the context: ``sink.find_log(context)`` returns its :class:`VectorLog`.
    The Simulator (interpreted and compiled) raises
    :class:`~systems.errors.NonFiniteOutputError` when a sample it records is NaN or
    infinite, naming the output port that computed it and the time; the log then ends
    with that sample. ``Simulator(..., allow_non_finite_outputs=True)`` records such
    samples instead. A per-step sink called twice at one time (``advance_to`` of the
    current time) keeps the later sample (:class:`VectorLog`).
    """

    def __init__(self, input_size: int, publish_period: float = 0.0, name: Optional[str] = None,
                 capacity: Optional[int] = None):
        super().__init__(name)
        self._u = self.declare_input_port("data", input_size)
        self._log_index = self.declare_abstract_state(VectorLog(input_size, capacity))
        self.publish_period = float(publish_period)
        if self.publish_period > 0:
            self.declare_periodic_publish(self.publish_period, 0.0, self._record)
        else:
            self.declare_per_step_publish(self._record)

    def _record(self, context) -> None:
        context.abstract_state[self._log_index].add(context.time, self._u.eval(context))

    def find_log(self, context) -> VectorLog:
        """The log of this sink in ``context`` (its own context or an enclosing one)."""
        return self.get_my_context_from_root(context).abstract_state[self._log_index]

    get_log = find_log


def LogVectorOutput(output_port, builder, publish_period: float = 0.0,
                    capacity: Optional[int] = None) -> VectorLogSink:
    """Add a :class:`VectorLogSink` to ``builder`` recording ``output_port``; returns the sink.

    ``capacity`` keeps only the latest samples (see :class:`VectorLog`).
    """
    if output_port.size is None:
        raise ValueError(f"LogVectorOutput: output port '{output_port.full_name()}' is abstract; "
                         f"only vector ports can be logged")
    sink = VectorLogSink(output_port.size, publish_period, capacity=capacity)
    sink.set_default_name(f"{output_port.system.name}_{output_port.name}_log")  # unique on add
    builder.add_system(sink)
    builder.connect(output_port, sink.get_input_port())
    return sink

"""Logging sinks: VectorLogSink and LogVectorOutput."""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from ..leaf_system import LeafSystem

__all__ = ["VectorLog", "VectorLogSink", "LogVectorOutput"]


class VectorLog:
    """Samples recorded by a :class:`VectorLogSink` (one per context).

    ``sample_times()`` has shape (N,), ``data()`` shape (size, N). Samples are kept in
    chunks so that bulk appends (:meth:`extend`) cost one array copy.
    """

    def __init__(self, size: int):
        self._size = size
        self._times: List[np.ndarray] = []
        self._data: List[np.ndarray] = []
        self._n = 0

    def _last_time(self):
        return self._times[-1][-1] if self._times else None

    def add(self, t: float, value) -> None:
        """Append a sample; a repeated time replaces the previous sample at that time."""
        self.extend(np.array([float(t)]), np.asarray(value, dtype=float).reshape(self._size, 1))

    def extend(self, times, values) -> None:
        """Append samples: ``times`` (N,) increasing, ``values`` (size, N)."""
        times = np.array(times, dtype=float).reshape(-1)
        values = np.array(values, dtype=float).reshape(self._size, times.shape[0])
        if times.size == 0:
            return
        if self._last_time() is not None and times[0] == self._last_time():
            self._data[-1] = self._data[-1].copy()
            self._data[-1][:, -1] = values[:, 0]
            times, values = times[1:], values[:, 1:]
            if times.size == 0:
                return
        self._times.append(times)
        self._data.append(values)
        self._n += times.size

    def _consolidate(self) -> None:
        if len(self._times) > 1:
            self._times = [np.concatenate(self._times)]
            self._data = [np.concatenate(self._data, axis=1)]

    def sample_times(self) -> np.ndarray:
        """Times of the samples, shape (N,)."""
        self._consolidate()
        return self._times[0].copy() if self._times else np.zeros(0)

    def data(self) -> np.ndarray:
        """Recorded values, shape (size, N)."""
        self._consolidate()
        return self._data[0].copy() if self._data else np.zeros((self._size, 0))

    def num_samples(self) -> int:
        """Number of samples recorded."""
        return self._n

    def clear(self) -> None:
        """Forget every sample."""
        self._times, self._data, self._n = [], [], 0

    def __deepcopy__(self, memo):
        new = VectorLog(self._size)
        self._consolidate()
        new._times = [t.copy() for t in self._times]
        new._data = [d.copy() for d in self._data]
        new._n = self._n
        return new


class VectorLogSink(LeafSystem):
    """Records its input ``data`` per simulator step (``publish_period == 0``) or periodically.

    The log lives in the context: ``sink.find_log(context)`` returns its :class:`VectorLog`.
    """

    def __init__(self, input_size: int, publish_period: float = 0.0, name: Optional[str] = None):
        super().__init__(name)
        self._u = self.declare_input_port("data", input_size)
        self._log_index = self.declare_abstract_state(VectorLog(input_size))
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


def LogVectorOutput(output_port, builder, publish_period: float = 0.0) -> VectorLogSink:
    """Add a :class:`VectorLogSink` to ``builder`` recording ``output_port``; returns the sink."""
    if output_port.size is None:
        raise ValueError(f"LogVectorOutput: output port '{output_port.full_name()}' is abstract; "
                         f"only vector ports can be logged")
    sink = VectorLogSink(output_port.size, publish_period)
    sink.set_default_name(f"{output_port.system.name}_{output_port.name}_log")  # unique on add
    builder.add_system(sink)
    builder.connect(output_port, sink.get_input_port())
    return sink

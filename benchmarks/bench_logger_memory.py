"""Memory per logged sample of :class:`systems.primitives.VectorLog`, before and after the
switch to preallocated blocks (issue 13 C).

Records N samples of a 2-vector one ``add`` at a time (as ``VectorLogSink`` does every
simulator step) and prints, for N = 1e3, 1e5, 1e6:

* bytes per sample, measured with ``tracemalloc`` (numpy reports its allocations there):
  the memory the log holds after recording, divided by N. The raw data is 24 bytes
  (time + 2 values, float64);
* CPU time per ``add`` (``time.process_time``), median of interleaved rounds.

Rows: ``before``, the previous storage (every sample kept as two separate numpy arrays in
Python lists, reproduced by :class:`PerSampleArrays` below since the class itself changed);
``blocks``, the current :class:`VectorLog`; ``ring 10k``, a :class:`VectorLog` with
``capacity=10_000`` (memory bounded whatever N).

Run: ``.venv/bin/python benchmarks/bench_logger_memory.py`` (about a minute; ``--max-n``
lowers the largest N).
"""
from __future__ import annotations

import statistics
import time
import tracemalloc
from typing import Callable, List

import numpy as np
from threadpoolctl import threadpool_limits

from systems.primitives import VectorLog
import os  # noqa: E402
import sys  # noqa: E402
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from _cli import script_parser  # noqa: E402


class PerSampleArrays:
    """The previous VectorLog storage, its ``add`` path line for line: ``add`` called
    ``extend`` with a (1,) time array and a (size, 1) value array, which copied and
    reshaped both (a view over a copy) and appended them to two Python lists (concatenated
    only when read)."""

    def __init__(self, size: int):
        self._size = size
        self._times: List[np.ndarray] = []
        self._data: List[np.ndarray] = []
        self._n = 0

    def add(self, t: float, value) -> None:
        self.extend(np.array([float(t)]), np.asarray(value, dtype=float).reshape(self._size, 1))

    def extend(self, times, values) -> None:
        times = np.array(times, dtype=float).reshape(-1)
        values = np.array(values, dtype=float).reshape(self._size, times.shape[0])
        if times.size == 0:
            return
        last = self._times[-1][-1] if self._times else None
        if last is not None and times[0] == last:  # repeated time (not hit here)
            self._data[-1] = self._data[-1].copy()
            self._data[-1][:, -1] = values[:, 0]
            times, values = times[1:], values[:, 1:]
            if times.size == 0:
                return
        self._times.append(times)
        self._data.append(values)
        self._n += times.size

    def num_samples(self) -> int:
        return self._n


STORAGES: dict[str, Callable[[], object]] = {
    "before (per-sample arrays)": lambda: PerSampleArrays(2),
    "blocks (VectorLog)": lambda: VectorLog(2),
    "ring 10k (VectorLog capacity=10_000)": lambda: VectorLog(2, capacity=10_000),
}
RAW = 24


def record(make: Callable[[], object], n: int, progress: bool = False) -> object:
    log = make()
    x = np.array([0.25, -1.5])
    step = max(n // 10, 1)
    for k in range(n):
        log.add(1e-3 * k, x)
        if progress and k % step == step - 1:
            print(".", end="", flush=True)
    return log


def bytes_per_sample(make: Callable[[], object], n: int) -> float:
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        log = record(make, n, progress=n >= 100_000)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert log.num_samples() == min(n, getattr(log, "capacity", None) or n)
    return held / n


def cpu_us_per_add(n: int, rounds: int) -> dict[str, float]:
    """Median CPU microseconds per add; the storages alternate within every round."""
    samples: dict[str, list[float]] = {k: [] for k in STORAGES}
    for _ in range(rounds):
        for name, make in STORAGES.items():
            t0 = time.process_time()
            record(make, n)
            samples[name].append((time.process_time() - t0) / n * 1e6)
    return {k: statistics.median(v) for k, v in samples.items()}


def main(argv: list[str] | None = None) -> None:
    parser = script_parser(__doc__)
    parser.add_argument("--max-n", type=int, default=1_000_000, help="largest N (1e3..1e6)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds")
    opts = parser.parse_args(argv)
    sizes = [n for n in (1_000, 100_000, 1_000_000) if n <= opts.max_n]
    with threadpool_limits(limits=1):
        table = {}
        for name, make in STORAGES.items():
            for n in sizes:
                print(f"measuring {name}, N = {n:,} ", end="", flush=True)
                table[name, n] = bytes_per_sample(make, n)
                print(f" {table[name, n]:.1f} B/sample", flush=True)
        timing = cpu_us_per_add(20_000, opts.rounds)
    print(f"\nbytes per sample of a 2-vector (raw data {RAW} B), tracemalloc")
    head = "".join(f"{f'N = {n:,}':>14s}" for n in sizes)
    print(f"{'storage':40s}{head}{'us/add (CPU)':>15s}")
    for name in STORAGES:
        row = "".join(f"{table[name, n]:14.1f}" for n in sizes)
        print(f"{name:40s}{row}{timing[name]:15.2f}")
    base = STORAGES and list(STORAGES)[0]
    new = list(STORAGES)[1]
    ratios = "".join(f"{table[base, n] / table[new, n]:13.1f}x" for n in sizes)
    print(f"{'memory ratio before / blocks':40s}{ratios}"
          f"{timing[base] / timing[new]:14.2f}x")
    print(f"(CPU time: median of {opts.rounds} interleaved rounds of 20,000 adds each)")


if __name__ == "__main__":
    main()

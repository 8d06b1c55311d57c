"""Per-call cost of :class:`solvers.compiled.CompiledFunction` against CasADi's own call.

Builds a function of 10 inputs with about 100 operations (chained sin/cos/mul/add), once
with 10 scalar inputs and once with one 10-vector input, and prints the median time per
call (microseconds of CPU time; ``repeats`` batches of ``number`` calls) of:

* CasADi ``Function.__call__`` with numpy/float inputs and with ``DM`` inputs,
* CasADi's ``FunctionBuffer`` (its own preallocated-buffer call, virtual machine),
* ``CompiledFunction`` (C backend): default call (fresh output array; through the
  C-extension caller where Python's headers exist), the pure ``ctypes`` path,
  ``call_into`` a preallocated array, ``call_view`` (views of internal buffers),
* ``CompiledFunction(backend="casadi")`` (the fallback path),
* a compiled trivial function f(x) = x: the fixed cost of a call.

The paths are timed in interleaved rounds (each round times one batch of every path in
turn) with the process CPU time (``time.process_time``: on a shared machine, time other
processes run is not counted), and the table gives medians over the rounds, with BLAS
limited to one thread.

A last table gives the cost of the first build in a fresh process: compiling into an
empty cache against loading from a warm one (the cache's integrity checks, a manifest and
a sha256 of the library, run here, once per library and process, never per call).

Target: the default compiled call at most 3 us. Run:
``.venv/bin/python benchmarks/bench_compiled_call.py`` (about 10 s on an idle machine).
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable

import casadi as ca
import numpy as np
from threadpoolctl import threadpool_limits

from solvers.compiled import CompiledFunction
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from _cli import script_parser  # noqa: E402


def build_function(vector_input: bool, n_ops: int = 100) -> ca.Function:
    """A function of 10 inputs with ``n_ops`` chained sin/cos/mul/add operations."""
    if vector_input:
        x = ca.SX.sym("x", 10)
        xs = [x[i] for i in range(10)]
        ins = [x]
    else:
        xs = [ca.SX.sym(f"x{i}") for i in range(10)]
        ins = xs
    acc = xs[0]
    ops = 0
    k = 0
    while ops < n_ops:
        acc = ca.sin(acc) * xs[k % 10] + ca.cos(xs[(k + 3) % 10])  # 4 operations
        ops += 4
        k += 1
    name = "bench_vec" if vector_input else "bench_scalars"
    return ca.Function(name, ins, [acc])


def time_interleaved(calls: list[tuple[str, Callable[[], object], int]], repeats: int
                     ) -> list[tuple[float, float]]:
    """(median, minimum) seconds per call of each ``(label, fn, number)``: ``repeats``
    rounds, each timing one batch of ``number`` calls of every path in turn (interleaved,
    so that a change of machine load affects all paths alike)."""
    samples: list[list[float]] = [[] for _ in calls]
    for _ in range(repeats):
        for k, (_, fn, number) in enumerate(calls):
            t0 = time.process_time()
            for _ in range(number):
                fn()
            samples[k].append((time.process_time() - t0) / number)
    return [(statistics.median(s), min(s)) for s in samples]


def bench(vector_input: bool, number: int, repeats: int, cache_dir: str) -> list[tuple]:
    f = build_function(vector_input)
    vals = np.linspace(0.1, 1.0, 10)
    if vector_input:
        args_np: tuple = (vals.copy(),)
        args_dm: tuple = (ca.DM(vals),)
    else:
        args_np = tuple(float(v) for v in vals)
        args_dm = tuple(ca.DM(v) for v in vals)
    cf = CompiledFunction(f, cache_dir=cache_dir, lazy=False)
    cv = CompiledFunction(f, backend="casadi", lazy=False)
    assert cf.backend == "c", "no C compiler: the compiled path cannot be measured"
    ref = float(f(*args_np))
    assert abs(cf(*args_np)[0] - ref) < 1e-12 and abs(cv(*args_np)[0] - ref) < 1e-12
    fbuf, feval = f.buffer()
    flat_in = [np.array(a, dtype=float).reshape(-1) for a in args_np]
    out_b = np.zeros(1)
    for i, a in enumerate(flat_in):
        fbuf.set_arg(i, memoryview(a))
    fbuf.set_res(0, memoryview(out_b))
    os.environ["DYNABLOCKS_NO_FASTCALL"] = "1"
    try:
        cc = CompiledFunction(f, cache_dir=cache_dir, lazy=False)  # pure ctypes path
    finally:
        del os.environ["DYNABLOCKS_NO_FASTCALL"]
    x = ca.SX.sym("x")
    trivial = CompiledFunction(ca.Function("trivial", [x], [x]), cache_dir=cache_dir,
                               lazy=False)
    out = np.empty(1)
    slow = max(number // 20, 100)  # CasADi's Function call is ~100x slower
    calls = [
        ("casadi Function(numpy/float)", lambda: f(*args_np), slow),
        ("casadi Function(DM)", lambda: f(*args_dm), slow),
        ("casadi FunctionBuffer eval", feval, number),
        ("compiled, backend='casadi'", lambda: cv(*args_np), number),
        ("compiled, ctypes only", lambda: cc(*args_np), number),
        ("compiled (fresh output)", lambda: cf(*args_np), number),
        ("compiled call_into(out)", lambda: cf.call_into(out, *args_np), number),
        ("compiled call_view", lambda: cf.call_view(*args_np), number),
        ("compiled trivial f(x)=x (floor)", lambda: trivial(0.5), number),
    ]
    rows = list(zip([c[0] for c in calls], time_interleaved(calls, repeats)))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = script_parser(__doc__)
    parser.add_argument("--number", type=int, default=5000, help="calls per batch")
    parser.add_argument("--repeats", type=int, default=20, help="batches")
    parser.add_argument("--load-runs", type=int, default=3,
                        help="processes per cell of the load-time table")
    opts = parser.parse_args(argv)
    if hasattr(os, "getloadavg"):
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs (times scale "
              f"with it; the speed-up column much less)")
    with tempfile.TemporaryDirectory() as cache_dir, threadpool_limits(limits=1):
        for vector_input in (False, True):
            rows = bench(vector_input, opts.number, opts.repeats, cache_dir)
            base = rows[0][1][0]
            title = "one 10-vector input" if vector_input else "10 scalar inputs"
            n_instr = build_function(vector_input).n_instructions()
            print(f"\n{title} ({n_instr} instructions), median of {opts.repeats} x "
                  f"{opts.number} calls")
            print(f"{'path':32s} {'median us':>10s} {'min us':>8s} {'speed-up vs casadi call':>24s}")
            for label, (med, best) in rows:
                print(f"{label:32s} {med * 1e6:10.2f} {best * 1e6:8.2f} {base / med:23.1f}x")
            ours = dict(rows)["compiled (fresh output)"][0] * 1e6
            print(f"compiled default call: {ours:.2f} us "
                  f"({'meets' if ours <= 3.0 else 'MISSES'} the 3 us target)")
        load_table(cache_dir, opts.load_runs)


_LOAD_CODE = """
import resource, sys
from solvers.compiled import CompiledFunction
sys.path.insert(0, sys.argv[2])
from bench_compiled_call import build_function
def cpu():  # this process and its finished children (the compiler)
    a = resource.getrusage(resource.RUSAGE_SELF)
    b = resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime
f = build_function(True, n_ops=int(sys.argv[3]))
t1 = cpu()
cf = CompiledFunction(f, cache_dir=sys.argv[1], lazy=False)
t2 = cpu()
assert cf.backend == "c"
print(t2 - t1)
"""


def load_table(cache_dir: str, runs: int) -> None:
    """First build in a fresh process: compiling into an empty cache against loading from a
    warm one (code generation, manifest and hash check, ``dlopen``), in CPU ms, medians of
    ``runs`` processes (cold and warm alternate)."""
    here = os.path.dirname(os.path.abspath(__file__))
    print(f"\nfirst build in a new process (CPU ms incl. the compiler, median of {runs} processes)")
    print(f"{'operations':>10s} {'compile (cold)':>15s} {'load (warm)':>12s} {'library KB':>11s}")
    for n_ops in (100, 4000):
        cold, warm = [], []
        for r in range(runs):
            with tempfile.TemporaryDirectory() as fresh:
                for d, out in ((fresh, cold), (cache_dir, warm)):
                    res = subprocess.run([sys.executable, "-c", _LOAD_CODE, d, here, str(n_ops)],
                                         capture_output=True, text=True, check=True)
                    out.append(float(res.stdout.strip().splitlines()[-1]) * 1e3)
        size = max(os.path.getsize(os.path.join(cache_dir, n)) for n in os.listdir(cache_dir)
                   if n.startswith("dbk_bench_vec") and n.endswith(".so"))
        print(f"{n_ops:10d} {statistics.median(cold):15.1f} {statistics.median(warm):12.1f} "
              f"{size / 1e3:11.0f}")


if __name__ == "__main__":
    main()

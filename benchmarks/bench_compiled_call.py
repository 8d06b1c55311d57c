"""Per-call cost of :class:`solvers.compiled.CompiledFunction` against CasADi's own call.

Builds a function of 10 inputs with about 100 operations (chained sin/cos/mul/add), once
with 10 scalar inputs and once with one 10-vector input, and prints the median time per
call (microseconds; ``repeats`` batches of ``number`` calls timed with
``time.perf_counter``) of:

* CasADi ``Function.__call__`` with numpy/float inputs and with ``DM`` inputs,
* CasADi's ``FunctionBuffer`` (its own preallocated-buffer call, virtual machine),
* ``CompiledFunction`` (C backend): default call (fresh output array; through the
  C-extension caller where Python's headers exist), the pure ``ctypes`` path,
  ``call_into`` a preallocated array, ``call_view`` (views of internal buffers),
* ``CompiledFunction(backend="casadi")`` (the fallback path),
* a compiled trivial function f(x) = x: the fixed cost of a call.

Target: the default compiled call at most 3 us. Run:
``.venv/bin/python benchmarks/bench_compiled_call.py`` (about 10 s on an idle machine).
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from typing import Callable

import casadi as ca
import numpy as np

from solvers.compiled import CompiledFunction


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


def time_call(fn: Callable[[], object], number: int, repeats: int) -> tuple[float, float]:
    """(median, minimum) seconds per call over ``repeats`` batches of ``number`` calls."""
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return statistics.median(samples), min(samples)


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
    rows = [
        ("casadi Function(numpy/float)", time_call(lambda: f(*args_np), slow, repeats)),
        ("casadi Function(DM)", time_call(lambda: f(*args_dm), slow, repeats)),
        ("casadi FunctionBuffer eval", time_call(feval, number, repeats)),
        ("compiled, backend='casadi'", time_call(lambda: cv(*args_np), number, repeats)),
        ("compiled, ctypes only", time_call(lambda: cc(*args_np), number, repeats)),
        ("compiled (fresh output)", time_call(lambda: cf(*args_np), number, repeats)),
        ("compiled call_into(out)", time_call(lambda: cf.call_into(out, *args_np),
                                              number, repeats)),
        ("compiled call_view", time_call(lambda: cf.call_view(*args_np), number, repeats)),
        ("compiled trivial f(x)=x (floor)", time_call(lambda: trivial(0.5), number, repeats)),
    ]
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=5000, help="calls per batch")
    parser.add_argument("--repeats", type=int, default=20, help="batches")
    opts = parser.parse_args(argv)
    if hasattr(os, "getloadavg"):
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs (times scale "
              f"with it; the speed-up column much less)")
    with tempfile.TemporaryDirectory() as cache_dir:
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


if __name__ == "__main__":
    main()

"""Per-tree cache of CasADi Functions and their numeric evaluators.

Every algorithm of :mod:`multibody.tree.kinematics`/:mod:`multibody.tree.dynamics` is traced once per
tree (and per frame arguments) with ``SX`` symbols into a ``casadi.Function``. A numeric call
goes through :class:`_Numeric`: CasADi's virtual machine for the first ``compile_after``
calls of a function (backend "auto"), then the compiled C code of
``solvers.compiled.CompiledFunction`` (compiled in a background thread, the VM serving
calls until the library is ready; ``tree.compile()`` waits for it); backend "c" compiles at
the first call and "casadi" never does. A long function is compiled in two stages
(``staged`` of ``CompiledFunction``): a quick library in parallel parts within seconds, then
the optimised one in the background, which replaces it; ``tree.compile(wait=False)``
returns after the first stage. A symbolic call (SX/MX arguments) calls the
``casadi.Function`` symbolically.

Batched calls (arguments with a leading batch axis, ``(N, n)``) go through
:class:`_Batched`: serially in the compiled library's own loop
(``CompiledFunction.call_batch``, about 0.3 us per state cheaper than CasADi's ``map``);
split over threads (``map(N, "thread", k)``, large batches with ``tree.batch_threads > 1``)
or without a compiler through CasADi's ``Function.map`` over N copies of the function, on
the compiled code (the library loaded as a ``casadi.external``) or on CasADi's VM. The numpy
arrays are handed over without copies: a C-ordered ``(N, n)`` array is exactly the
column-major ``(n, N)`` argument of the map.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

import casadi as ca
import numpy as np

from solvers import ops

__all__ = ["FunctionCache", "COMPILE_FLAGS", "BATCH_THREADS", "BATCH_THREAD_MIN"]

BATCH_THREADS: int = 1
"""Default threads of a batched call's ``map`` (CasADi ``"thread"`` parallelization). One:
on the shared 2-core machine the benchmarks run on, splitting even N = 1000 over 2 threads
was slower in wall time than the serial map (``benchmarks/bench_batched.py``); set
``tree.batch_threads`` where cores are free."""

BATCH_THREAD_MIN: int = 512
"""Smallest batch split over threads: starting the threads costs tens of microseconds."""


COMPILE_FLAGS: tuple[str, ...] = ("-O1",)
"""Compiler flags for the tree's (optimised) libraries: on the long straight-line code of
dynamics algorithms ``-O1`` runs as fast as ``-O2`` (measured 22.5 vs 21.5 us for a 40-DOF
ABA) and compiles about a third faster; ``-Og`` compiles faster still but ran up to 5 %
slower (``benchmarks/bench_cold_compile.py --breakdown``). Long functions serve first from
a quick library (module doc), so this build's time is mostly hidden."""


def _compiled_class():
    try:
        from solvers.compiled import CompiledFunction
    except ImportError:  # pragma: no cover - the compiled path is optional
        return None
    return CompiledFunction


class _CasadiEval:
    """Numeric evaluation with ``casadi.Function`` (numpy in, numpy out)."""

    def __init__(self, fun: ca.Function) -> None:
        self.fun = fun
        self.vec_out = [fun.size2_out(i) == 1 for i in range(fun.n_out())]
        self.single = fun.n_out() == 1

    def __call__(self, *args: Any):
        res = self.fun.call(list(args))
        outs = [r.full().ravel() if vec else r.full() for r, vec in zip(res, self.vec_out)]
        return outs[0] if self.single else tuple(outs)


class _Numeric:
    """Numeric evaluator switching from CasADi's VM to compiled code (see module doc)."""

    def __init__(self, fun: ca.Function, backend: str, compile_after: int) -> None:
        self.fun = fun
        self.backend = backend
        self.calls = 0
        self.compile_after = compile_after
        self.compiled = None
        self.entry = None
        self._vm = None
        self._thread = None
        cls = _compiled_class()
        if backend == "c" and cls is not None:
            self.compiled = cls(fun, backend="c", flags=COMPILE_FLAGS)
            self.impl = self.compiled
        elif backend == "casadi" or cls is None:
            self.impl = cls(fun, backend="casadi") if cls is not None else _CasadiEval(fun)
        else:
            self.impl = self._counting
        self.counting = self.impl == self._counting

    def _counting(self, *args: Any):
        self.calls += 1
        if self.calls > self.compile_after and self._thread is None:
            self._compile_in_background()
        if self._vm is None:
            cls = _compiled_class()
            self._vm = cls(self.fun, backend="casadi") if cls is not None else \
                _CasadiEval(self.fun)
        return self._vm(*args)

    def _compile_in_background(self) -> None:
        """Generate and compile in a thread (the compiler runs as a subprocess, so the
        caller keeps evaluating with CasADi's VM meanwhile); switch when done."""
        import threading
        cls = _compiled_class()

        def work() -> None:
            try:
                cf = cls(self.fun, backend="auto", flags=COMPILE_FLAGS).build()
            except Exception:  # pragma: no cover - stay on the VM
                return
            self._install(cf)

        self._thread = threading.Thread(target=work, daemon=True,
                                        name=f"compile {self.fun.name()}")
        self._thread.start()

    def _install(self, cf: Any) -> None:
        self.compiled = cf
        self.impl = cf
        if self.entry is not None:
            self.entry.numeric = cf

    def compile(self, flags: Any = None, wait: bool = True) -> None:
        """Switch to the compiled path now, waiting for a background compilation if one is
        running (backend "auto"/"c"); ``flags``: compiler flags; ``wait``: return only once
        the optimised library serves calls (else possibly a quick one, see the module doc)."""
        if self.backend == "casadi":
            return
        cls = _compiled_class()
        if cls is None:
            return
        if self._thread is not None:
            self._thread.join()
        if self.compiled is not None:
            if self.compiled.backend is None:
                if wait:
                    self.compiled.staged = False
                self.compiled.build()
            if wait:
                self.compiled.wait_optimized()
            return
        self._install(cls(self.fun, backend="auto", staged=not wait,
                          flags=COMPILE_FLAGS if flags is None else tuple(flags)).build())

    def __call__(self, *args: Any):
        return self.impl(*args)


class _Entry:
    """A built Function, its numeric evaluator (replaced by the compiled function itself
    once compiled, to shorten the call path), input sizes and names."""

    __slots__ = ("fun", "numeric", "sizes", "shapes", "names", "evaluator", "batched")

    def __init__(self, fun: ca.Function, evaluator: _Numeric, sizes: tuple, names: tuple):
        self.fun = fun
        self.evaluator = evaluator
        self.numeric = evaluator if evaluator.counting else evaluator.impl
        self.sizes = sizes
        self.shapes = tuple((n,) for n in sizes)
        self.names = names
        self.batched = None
        evaluator.entry = self


class _Batched:
    """Evaluator of one Function on N argument sets at once (see the module doc).

    ``__call__(args, n, threads)``: ``args`` are C-contiguous float64 arrays of shape ``(n, size_i)``;
    returns one array per output: ``(n, rows)`` for a column-vector output, ``(n, rows,
    cols)`` for a matrix output (dense, zeros outside the sparsity pattern; for a dense
    pattern a transposed view of CasADi's column-major result, not C-contiguous).
    """

    def __init__(self, fun: ca.Function, evaluator: _Numeric) -> None:
        self.fun = fun
        self.evaluator = evaluator
        self.base = None  # the function to map: compiled external, or fun on the VM
        self.base_path = None  # the library it was loaded from
        self.maps: dict[tuple[int, int], tuple] = {}
        self.lock = threading.Lock()
        self.out_sp = [fun.sparsity_out(i) for i in range(fun.n_out())]
        # per output: None (dense column: the raw (N, rows) result is the answer) or the
        # C-order positions of the nonzeros in a (rows, cols) matrix
        self.out_pos = []
        for sp in self.out_sp:
            rows, cols = sp.shape
            if cols == 1 and sp.is_dense():
                self.out_pos.append(None)
            else:
                r, c = np.asarray(sp.get_triplet()[0]), np.asarray(sp.get_triplet()[1])
                self.out_pos.append((r * cols + c).astype(np.intp))

    def _base(self) -> ca.Function:
        cf = self.evaluator.compiled
        if self.base is not None and (cf is None or cf.library_path == self.base_path):
            return self.base
        self.maps.clear()  # first use, or an optimised library replaced a quick one
        ev = self.evaluator
        if ev.backend != "casadi":
            ev.compile()
        cf = ev.compiled
        path = getattr(cf, "library_path", None) if cf is not None else None
        base = self.fun
        if path is not None and getattr(cf, "backend", None) == "c":
            try:
                base = ca.external(cf.c_name, str(path))
            except RuntimeError:
                import warnings
                from solvers.compiled import CompilationWarning
                warnings.warn(f"batched calls of '{self.fun.name()}' run on CasADi's virtual "
                              f"machine: its function was not found in {path.name}",
                              CompilationWarning, stacklevel=4)
        self.base = base
        self.base_path = path
        return base

    def _loop(self, args: list, raw: list, n: int) -> bool:
        """Serial batch in the compiled library's own loop (``CompiledFunction.call_batch``:
        no CasADi ``map`` per evaluation); False when there is no compiled library."""
        ev = self.evaluator
        if ev.backend == "casadi":
            return False
        cf = ev.compiled
        if cf is None or cf.backend is None:
            ev.compile()  # compiles (once), as the map path does
            cf = ev.compiled
        return cf is not None and cf.call_batch(n, args, raw)

    def _buffer(self, n: int, threads: int):
        key = (n, threads)
        base = self._base()  # clears the maps when the library changed
        m = self.maps.get(key)
        if m is None:
            fm = base.map(n, "thread", threads) if threads > 1 else base.map(n)
            m = self.maps[key] = fm.buffer()
            if len(self.maps) > 16:  # keep a few batch sizes
                del self.maps[next(iter(self.maps))]
        return m

    def __call__(self, args: list, n: int, threads: int = 1) -> list:
        raw = [np.empty((n, sp.nnz())) for sp in self.out_sp]
        # one buffer per batch size holds raw pointers to the arrays: calls from several
        # threads take turns (interleaved set_arg/eval corrupted memory)
        with self.lock:
            ret = 0
            if threads > 1 or not self._loop(args, raw, n):
                fbuf, feval = self._buffer(n, max(1, min(int(threads), n)))
                for i, a in enumerate(args):
                    fbuf.set_arg(i, memoryview(a))
                for i, r in enumerate(raw):
                    fbuf.set_res(i, memoryview(r))
                feval()
                ret = fbuf.ret()
        if ret != 0:
            raise RuntimeError(f"batched evaluation of '{self.fun.name()}' failed "
                               f"(return code {ret})")
        outs = []
        for r, sp, pos in zip(raw, self.out_sp, self.out_pos):
            if pos is None:
                outs.append(r)
                continue
            rows, cols = sp.shape
            if sp.is_dense():  # column-major blocks: a transposed view, no copy
                outs.append(r.reshape(n, cols, rows).transpose(0, 2, 1))
                continue
            dense = np.zeros((n, rows * cols))
            dense[:, pos] = r
            outs.append(dense if cols == 1 else dense.reshape(n, rows, cols))
        return outs


class FunctionCache:
    """Lazily built Functions of one finalized tree, keyed by name and frame arguments."""

    def __init__(self, tree, backend: str, compile_after: int) -> None:
        self.tree = tree
        self.backend = backend
        self.compile_after = compile_after
        self.entries: dict[Any, _Entry] = {}

    def get(self, key: Any, build: Callable[[], tuple[list, list, list, list]]) -> _Entry:
        e = self.entries.get(key)
        if e is None:
            ins, names, outs, out_names = build()
            name = ops.function_name(self.tree.name, *((key,) if isinstance(key, str) else key))
            fun = ca.Function(name, ins, outs, names, out_names)
            sizes = tuple(int(s.numel()) for s in ins)
            e = _Entry(fun, _Numeric(fun, self.backend, self.compile_after), sizes,
                       tuple(names))
            self.entries[key] = e
        return e

    def batched(self, e: _Entry) -> _Batched:
        """The batched evaluator of entry ``e`` (created on first use)."""
        if e.batched is None:
            e.batched = _Batched(e.fun, e.evaluator)
        return e.batched


"""Private hot path of :mod:`solvers.compiled`: packing inputs, unpacking outputs.

:func:`make_call_paths` returns two closures over a flat input buffer (the nonzeros of all
inputs back to back, CasADi's column-major order), a flat output buffer and a zero-argument
``evaluate()`` (the compiled library's entry point, or CasADi's ``FunctionBuffer``).

Per call, each argument takes a quick path when it is already in final form (a float64
ndarray of the exact expected shape: one numpy slice assignment; a Python float for a
scalar input), and otherwise goes through :func:`_write_input`, which validates and
converts it (or raises an error naming the function, the input and the expected size).
Functions whose inputs are all scalars pack all arguments with one ``struct.pack_into``.
"""
from __future__ import annotations

import struct
from typing import Any, Callable

import casadi as ca
import numpy as np


__all__: list[str] = []  # private module

_F64 = np.dtype(np.float64)
_ND = np.ndarray
_NEVER = object()  # a shape that no argument has: forces the validating path


def _input_label(cf: Any, i: int) -> str:
    r, c = cf.shape_in[i]
    return (f"input {i} ('{cf.name_in[i]}') of function '{cf.name}' expects shape "
            f"({r}, {c}), i.e. {r * c} values")


def _count_error(cf: Any, args: tuple) -> ValueError:
    return ValueError(f"function '{cf.name}' takes {cf.n_in} inputs "
                      f"({', '.join(cf.name_in)}), got {len(args)}")


def _write_input(cf: Any, i: int, a: Any, region: np.ndarray) -> None:
    """Validate argument ``a`` for input ``i`` and write its nonzeros into ``region``."""
    sp = cf.sparsities_in[i]
    r, c = sp.shape
    if isinstance(a, (ca.SX, ca.MX)):
        raise TypeError(f"{_input_label(cf, i)}; got a symbolic {type(a).__name__}: call "
                        f"the casadi.Function itself for symbolic evaluation")
    if isinstance(a, ca.DM):
        a = a.full()
    arr = np.asarray(a)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{_input_label(cf, i)}; got a non-real value of dtype {arr.dtype} "
                        f"({type(a).__name__})")
    if arr.size != r * c:
        raise ValueError(f"{_input_label(cf, i)}; got an array of shape {arr.shape}")
    if r == 1 or c == 1 or arr.ndim <= 1:
        flat = arr.reshape(-1)                 # vectors: any shape; matrices: column-major
    elif arr.shape == (r, c):
        flat = arr.reshape(-1, order="F")
    else:
        raise ValueError(f"{_input_label(cf, i)}; got an array of shape {arr.shape} (a "
                         f"matrix input takes shape ({r}, {c}) or a flat column-major array)")
    if sp.is_dense():
        region[:] = flat
    else:
        region[:] = flat[np.asarray(sp.find(), dtype=np.intp)]


def _output_views(cf: Any, out_buf: np.ndarray
                  ) -> list[tuple[np.ndarray, Callable[[], np.ndarray] | None]]:
    """Per output: (read-only dense view, filler for sparse outputs or None)."""
    views = []
    off = 0
    for sp in cf.sparsities_out:
        r, c = sp.shape
        nnz = sp.nnz()
        region = out_buf[off:off + nnz]
        off += nnz
        if sp.is_dense():
            view = region if c == 1 else region.reshape(c, r).T
            view = view.view()
            fill = None
        else:
            rows, cols = (np.asarray(t, dtype=np.intp) for t in sp.get_triplet())
            shape = (r,) if c == 1 else (r, c)
            dense = np.zeros(shape)
            idx = (rows,) if c == 1 else (rows, cols)

            def fill(dense=dense, idx=idx, region=region) -> np.ndarray:
                dense[idx] = region
                return dense

            view = dense.view()
        view.flags.writeable = False
        views.append((view, fill))
    return views


def _fresh_getter(view: np.ndarray, fill: Callable[[], np.ndarray] | None
                  ) -> Callable[[], np.ndarray]:
    if fill is None:
        return view.copy
    return lambda: fill().copy()


def _view_getter(view: np.ndarray, fill: Callable[[], np.ndarray] | None
                 ) -> Callable[[], np.ndarray]:
    if fill is None:
        return lambda: view
    def get() -> np.ndarray:
        fill()
        return view
    return get


def make_call_paths(cf: Any, in_buf: np.ndarray, out_buf: np.ndarray,
                    evaluate: Callable[[], int]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """Closures ``(call, call_view)`` evaluating ``cf`` through the given buffers."""
    n_in = cf.n_in
    regions = []
    off = 0
    for nnz in cf.nnz_in:
        regions.append(in_buf[off:off + nnz])
        off += nnz

    # ---- packing
    def pack_slow(args: tuple) -> None:
        if len(args) != n_in:
            raise _count_error(cf, args)
        for i, a in enumerate(args):
            _write_input(cf, i, a, regions[i])

    all_scalar = all(sp.is_dense() and sp.numel() == 1 for sp in cf.sparsities_in)
    if all_scalar:
        pack_into = struct.Struct(f"={n_in}d").pack_into
        in_mem = memoryview(in_buf)  # packing into a memoryview is a little faster

        def pack(args: tuple) -> None:
            try:
                pack_into(in_mem, 0, *args)
            except Exception:  # wrong count or type: validate and explain
                pack_slow(args)
    else:
        table = []
        for i, sp in enumerate(cf.sparsities_in):
            r, c = sp.shape
            region = regions[i]
            if not sp.is_dense():
                table.append((_NEVER, None, None, False))
            elif c == 1 or r == 1:
                table.append(((r * c,), region.__setitem__, slice(None), r * c == 1))
            else:
                table.append(((r, c), region.reshape(c, r).T.__setitem__, Ellipsis, False))
        table = tuple(table)

        def pack(args: tuple) -> None:
            if len(args) != n_in:
                raise _count_error(cf, args)
            for i, (a, (shape, setitem, key, scalar)) in enumerate(zip(args, table)):
                t = type(a)
                if t is _ND:
                    if a.shape == shape and a.dtype is _F64:
                        setitem(key, a)
                        continue
                elif t is float and scalar:
                    setitem(key, a)
                    continue
                _write_input(cf, i, a, regions[i])

    # ---- evaluation failure
    def fail(code: int) -> None:
        raise RuntimeError(f"evaluating function '{cf.name}' failed in the {cf.backend} "
                           f"backend (return code {code})")

    # ---- outputs
    outs = _output_views(cf, out_buf)
    fresh = [_fresh_getter(v, f) for v, f in outs]
    views = [_view_getter(v, f) for v, f in outs]

    if cf.n_out == 1 and outs[0][1] is None and all_scalar:
        copy = outs[0][0].copy
        view0 = outs[0][0]

        def call(*args: Any) -> np.ndarray:
            try:
                pack_into(in_mem, 0, *args)
            except Exception:
                pack_slow(args)
            code = evaluate()
            if code:
                fail(code)
            return copy()

        def call_view(*args: Any) -> np.ndarray:
            try:
                pack_into(in_mem, 0, *args)
            except Exception:
                pack_slow(args)
            code = evaluate()
            if code:
                fail(code)
            return view0
    elif cf.n_out == 1:
        get, get_view = fresh[0], views[0]

        def call(*args: Any) -> np.ndarray:
            pack(args)
            code = evaluate()
            if code:
                fail(code)
            return get()

        def call_view(*args: Any) -> np.ndarray:
            pack(args)
            code = evaluate()
            if code:
                fail(code)
            return get_view()
    else:
        fresh_t, views_t = tuple(fresh), tuple(views)

        def call(*args: Any) -> tuple[np.ndarray, ...]:
            pack(args)
            code = evaluate()
            if code:
                fail(code)
            return tuple([g() for g in fresh_t])

        def call_view(*args: Any) -> tuple[np.ndarray, ...]:
            pack(args)
            code = evaluate()
            if code:
                fail(code)
            return tuple([g() for g in views_t])

    return call, call_view


def run_batch(cf: Any, batch: Any, n: int, args: Any, outs: Any) -> None:
    """``CompiledFunction.call_batch`` on the library's batch entry ``batch`` (checks every
    array, then one C loop)."""
    import ctypes
    if len(args) != cf.n_in or len(outs) != cf.n_out:
        raise ValueError(f"call_batch of function '{cf.name}' expects {cf.n_in} input "
                         f"and {cf.n_out} output arrays, got {len(args)} and {len(outs)}")
    in_p, in_s, out_p, out_s = [], [], [], []
    for kind, arrs, nnzs, names, ptrs, strides in (
            ("input", args, cf.nnz_in, cf.name_in, in_p, in_s),
            ("output", outs, cf.nnz_out, cf.name_out, out_p, out_s)):
        for a, nnz, nm in zip(arrs, nnzs, names):
            ok = (isinstance(a, np.ndarray) and a.dtype == np.float64
                  and a.flags.c_contiguous and (a.shape == (n, nnz) or
                                                (kind == "input" and a.shape == (nnz,))))
            if not ok or (kind == "output" and not a.flags.writeable):
                got = getattr(a, "shape", type(a).__name__)
                raise ValueError(f"{kind} '{nm}' of call_batch of function '{cf.name}' "
                                 f"needs a C-contiguous float64 array of shape ({n}, {nnz})"
                                 f"{' or (%d,)' % nnz if kind == 'input' else ''}, got {got}")
            ptrs.append(a.ctypes.data)
            strides.append(nnz if a.ndim == 2 else 0)
    P, L = ctypes.c_void_p, ctypes.c_longlong
    ret = batch(n, (P * max(1, len(in_p)))(*in_p), (L * max(1, len(in_s)))(*in_s),
                (P * max(1, len(out_p)))(*out_p), (L * max(1, len(out_s)))(*out_s))
    if ret != 0:
        raise RuntimeError(f"evaluating function '{cf.name}' failed in the C backend "
                           f"(return code {ret}, batch call)")

"""Tests of solvers.compiled: the compiled C path and the CasADi fallback against CasADi."""
from __future__ import annotations

import os
import warnings

import casadi as ca
import numpy as np
import pytest

from solvers import _compiled_build as build
from solvers import _compiled_ext as fastcall
from solvers import compiled
from solvers.compiled import CompilationWarning, CompiledFunction, clear_cache

HAVE_CC = compiled.find_compiler() is not None
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler")


@pytest.fixture(params=[pytest.param("c-fastcall", marks=needs_cc),
                        pytest.param("c-ctypes", marks=needs_cc), "casadi"])
def backend(request, monkeypatch):
    """The backend to request; "c-ctypes" disables the optional C-extension caller."""
    if request.param == "c-ctypes":
        monkeypatch.setattr(fastcall, "caller_type", lambda cache_dir, compiler: None)
    return request.param.split("-")[0]


def uses_fastcall(cf: CompiledFunction) -> bool:
    return type(cf._impl).__name__ == "Caller"


@pytest.fixture(autouse=True)
def _fresh_state(monkeypatch, tmp_path):
    """A private cache directory and fresh warn-once / failure memories per test."""
    monkeypatch.setenv("DYNABLOCKS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(compiled, "_WARNED", set())
    monkeypatch.setattr(compiled, "_FAILED", {})


def reference(fun: ca.Function, *args) -> list[np.ndarray]:
    """CasADi's own evaluation, dense, as numpy 2-D arrays."""
    res = fun.call([ca.DM(np.asarray(a, dtype=float)) if np.ndim(a) < 2 else ca.DM(a)
                    for a in args])
    return [np.asarray(r.full()) for r in res]


def as_list(out) -> list[np.ndarray]:
    return list(out) if isinstance(out, tuple) else [out]


def assert_matches(fun, out, *args) -> None:
    """Outputs agree with CasADi to 1e-12, with the documented shapes."""
    ref = reference(fun, *args)
    out = as_list(out)
    assert len(out) == len(ref)
    for i, (o, r) in enumerate(zip(out, ref)):
        rows, cols = fun.size_out(i)
        expected_shape = (rows,) if cols == 1 else (rows, cols)
        assert o.shape == expected_shape
        np.testing.assert_allclose(o, r.reshape(expected_shape), rtol=0, atol=1e-12)


# ---------------------------------------------------------------- functions under test
def vector_fun() -> ca.Function:
    x = ca.SX.sym("x", 4)
    return ca.Function("vec", [x], [ca.vertcat(ca.sin(x[0]) * x[1], x[2] ** 2 - x[3],
                                               ca.exp(x[0] - x[3]))], ["x"], ["y"])


def multi_fun() -> ca.Function:
    """Several inputs (vector, scalar, matrix), several outputs (vector, matrix, scalar)."""
    x = ca.SX.sym("x", 3)
    s = ca.SX.sym("s")
    A = ca.SX.sym("A", 2, 3)
    y = A @ x * s
    M = ca.horzcat(x, 2 * x, x ** 2, ca.cos(x)).T     # 4 x 3, non-square
    return ca.Function("multi", [x, s, A], [y, M, ca.sumsqr(x) + s],
                       ["x", "s", "A"], ["y", "M", "c"])


def sparse_fun() -> ca.Function:
    """A sparse (diagonal) jacobian and a sparse column vector."""
    x = ca.SX.sym("x", 4)
    e = ca.sin(x) * ca.vertcat(1, 2, 3, 4)
    J = ca.jacobian(e, x)
    v = ca.sparsify(ca.vertcat(x[0], 0, x[2] * x[1], 0))
    assert not J.sparsity().is_dense() and not v.sparsity().is_dense()
    return ca.Function("sparse", [x], [J, v], ["x"], ["J", "v"])


# ---------------------------------------------------------------- agreement
def test_vector_in_out(backend):
    f = vector_fun()
    cf = CompiledFunction(f, backend=backend)
    x = np.array([0.3, -1.2, 2.5, 0.7])
    out = cf(x)
    assert cf.backend == backend
    assert_matches(f, out, x)
    np.testing.assert_allclose(out, [np.sin(0.3) * -1.2, 2.5 ** 2 - 0.7, np.exp(0.3 - 0.7)],
                               rtol=0, atol=1e-14)
    # Other accepted shapes of a vector input: (4, 1), (1, 4), list, casadi.DM.
    for alt in (x.reshape(4, 1), x.reshape(1, 4), list(x), ca.DM(x)):
        np.testing.assert_array_equal(cf(alt), out)


def test_several_inputs_outputs_and_matrix_order(backend):
    f = multi_fun()
    cf = CompiledFunction(f, backend=backend)
    assert (cf.n_in, cf.n_out) == (3, 3)
    assert cf.shape_in == ((3, 1), (1, 1), (2, 3)) and cf.shape_out == ((2, 1), (4, 3), (1, 1))
    x = np.array([0.5, -2.0, 1.5])
    A = np.array([[1.0, 2.0, 3.0], [-4.0, 5.0, -6.0]])
    y, M, c = cf(x, 1.5, A)
    assert_matches(f, (y, M, c), x, 1.5, A)
    # Column-major -> numpy: row 1 of M is 2*x, row 3 is cos(x); y = A x s.
    np.testing.assert_allclose(M[1], 2 * x, atol=1e-15)
    np.testing.assert_allclose(M[3], np.cos(x), atol=1e-15)
    np.testing.assert_allclose(y, A @ x * 1.5, atol=1e-13)
    assert M.flags.c_contiguous and c.shape == (1,)
    # A flat input to the matrix is read in column-major order (CasADi's).
    out_flat = cf(x, 1.5, A.reshape(-1, order="F"))
    np.testing.assert_array_equal(out_flat[0], y)


def test_sparse_outputs_are_filled_with_zeros(backend):
    f = sparse_fun()
    cf = CompiledFunction(f, backend=backend)
    x = np.array([0.1, 0.2, 0.3, 0.4])
    J, v = cf(x)
    assert_matches(f, (J, v), x)
    np.testing.assert_allclose(J, np.diag(np.cos(x) * [1, 2, 3, 4]), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(v, [0.1, 0.0, 0.3 * 0.2, 0.0])
    # Views and call_into give the same values.
    Jv, vv = cf.call_view(x)
    np.testing.assert_array_equal(Jv, J)
    outJ, outv = np.full((4, 4), np.nan), np.full(4, np.nan)
    cf.call_into((outJ, outv), x)
    np.testing.assert_array_equal(outJ, J)
    np.testing.assert_array_equal(outv, v)


def test_sparse_input(backend):
    A = ca.SX.sym("A", ca.Sparsity.lower(2))
    f = ca.Function("tri", [A], [ca.vertcat(A[0, 0], A[1, 0], A[1, 1])])
    cf = CompiledFunction(f, backend=backend)
    M = np.array([[1.0, 99.0], [2.0, 3.0]])  # 99 is outside the pattern: ignored
    np.testing.assert_array_equal(cf(M), [1.0, 2.0, 3.0])


def test_scalar_inputs_as_floats_ints_and_arrays(backend):
    xs = [ca.SX.sym(f"x{i}") for i in range(3)]
    f = ca.Function("scal", xs, [xs[0] * ca.sin(xs[1]) + xs[2] ** 3])
    cf = CompiledFunction(f, backend=backend)
    expected = 0.5 * np.sin(1.25) + (-2.0) ** 3
    for args in ((0.5, 1.25, -2.0), (0.5, 1.25, -2), (np.float64(0.5), np.array(1.25),
                                                      np.array([-2.0])),
                 (0.5, ca.DM(1.25), np.array([[-2.0]]))):
        out = cf(*args)
        assert out.shape == (1,)
        assert out[0] == pytest.approx(expected, abs=1e-14)
    assert_matches(f, cf(0.5, 1.25, -2.0), 0.5, 1.25, -2.0)


def test_function_without_inputs(backend):
    f = ca.Function("const", [], [ca.DM([[1.0, 2.0], [3.0, 4.0]]), ca.DM([5.0, 6.0])])
    cf = CompiledFunction(f, backend=backend)
    A, b = cf()
    np.testing.assert_array_equal(A, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(b, [5.0, 6.0])


def test_mx_function_with_linear_solve(backend):
    x = ca.MX.sym("x", 3)
    K = ca.MX(np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]]))
    f = ca.Function("mxsolve", [x], [ca.solve(K + ca.diag(x * x), x)])
    cf = CompiledFunction(f, backend=backend)
    x0 = np.array([0.2, -0.4, 1.1])
    out = cf(x0)
    Kn = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]]) + np.diag(x0 ** 2)
    np.testing.assert_allclose(out, np.linalg.solve(Kn, x0), rtol=0, atol=1e-12)
    assert_matches(f, out, x0)


def test_outputs_are_fresh_and_views_read_only(backend):
    f = vector_fun()
    cf = CompiledFunction(f, backend=backend)
    a = cf(np.array([0.1, 0.2, 0.3, 0.4]))
    a_copy = a.copy()
    b = cf(np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(a, a_copy)  # not overwritten by the next call
    assert not np.shares_memory(a, b)
    v = cf.call_view(np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(v, b)
    assert not v.flags.writeable
    out = np.empty(3)
    assert cf.call_into(out, np.array([1.0, 2.0, 3.0, 4.0])) is out
    np.testing.assert_array_equal(out, b)


def test_non_finite_values_pass_through(backend):
    x = ca.SX.sym("x", 2)
    cf = CompiledFunction(ca.Function("sq", [x], [ca.sqrt(x)]), backend=backend)
    out = cf(np.array([-1.0, 4.0]))
    assert np.isnan(out[0]) and out[1] == 2.0


# ---------------------------------------------------------------- errors
def test_bad_inputs_raise_errors_naming_function_and_input(backend):
    cf = CompiledFunction(multi_fun(), backend=backend)
    x, A = np.zeros(3), np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"function 'multi' takes 3 inputs \(x, s, A\), got 2"):
        cf(x, 1.0)
    with pytest.raises(ValueError, match=r"input 0 \('x'\) of function 'multi' expects shape "
                                         r"\(3, 1\), i.e. 3 values; got an array of shape"
                                         r" \(4,\)"):
        cf(np.zeros(4), 1.0, A)
    with pytest.raises(ValueError, match=r"input 1 \('s'\).*1 values"):
        cf(x, np.zeros(2), A)
    with pytest.raises(ValueError, match=r"input 2 \('A'\).*\(2, 3\).*shape \(3, 2\)"):
        cf(x, 1.0, np.zeros((3, 2)))
    with pytest.raises(TypeError, match=r"input 1 \('s'\).*non-real"):
        cf(x, 1j, A)
    with pytest.raises(TypeError, match=r"input 0 \('x'\).*symbolic"):
        cf(ca.SX.sym("x", 3), 1.0, A)
    with pytest.raises(ValueError, match=r"output 1 \('M'\).*shape \(4, 3\)"):
        cf.call_into((None, np.zeros((3, 4)), None), x, 1.0, A)


def test_all_scalar_fast_path_errors():
    xs = [ca.SX.sym(f"x{i}") for i in range(2)]
    cf = CompiledFunction(ca.Function("two", xs, [xs[0] + xs[1]]), backend="casadi")
    with pytest.raises(ValueError, match=r"function 'two' takes 2 inputs"):
        cf(1.0, 2.0, 3.0)
    with pytest.raises(ValueError, match=r"input 1 \('i1'\) of function 'two'.*shape \(3,\)"):
        cf(1.0, np.zeros(3))
    with pytest.raises(TypeError, match=r"input 0 .*non-real"):
        cf("a", 1.0)


def test_constructor_arguments_are_checked():
    with pytest.raises(TypeError, match="casadi.Function"):
        CompiledFunction(lambda x: x)
    with pytest.raises(ValueError, match=r"backend of CompiledFunction\('vec'\)"):
        CompiledFunction(vector_fun(), backend="fortran")


# ---------------------------------------------------------------- cache
@needs_cc
def test_cache_reuses_library_and_keys_differ(monkeypatch, tmp_path):
    calls = []
    real = build._run_compiler
    monkeypatch.setattr(build, "_run_compiler", lambda argv: calls.append(argv) or real(argv))
    cache = tmp_path / "own_cache"
    f = vector_fun()
    cf1 = CompiledFunction(f, cache_dir=cache, lazy=False)
    assert cf1.backend == "c" and len(calls) == 1
    path = cf1.library_path
    assert path.parent == cache and path.exists() and path.with_suffix(".c").exists()
    mtime = os.stat(path).st_mtime_ns
    # Same function, rebuilt from scratch: same key, no compilation, same library.
    cf2 = CompiledFunction(vector_fun(), cache_dir=cache, lazy=False)
    assert len(calls) == 1 and cf2.library_path == path
    assert os.stat(path).st_mtime_ns == mtime
    x = np.array([0.3, -1.2, 2.5, 0.7])
    np.testing.assert_array_equal(cf1(x), cf2(x))
    # A library already on disk but not yet loaded (another process compiled it) is reused.
    build._RUNTIMES.pop(str(path))
    cf3 = CompiledFunction(vector_fun(), cache_dir=cache, lazy=False)
    assert len(calls) == 1 and cf3.backend == "c"
    np.testing.assert_array_equal(cf3(x), cf1(x))
    # A different function (or different flags) gets a different key and is compiled.
    y = ca.SX.sym("x", 4)
    g = ca.Function("vec", [y], [ca.vertcat(ca.cos(y[0]), y[1], y[2])], ["x"], ["y"])
    cg = CompiledFunction(g, cache_dir=cache, lazy=False)
    assert len(calls) == 2 and cg.library_path != path
    cf4 = CompiledFunction(f, cache_dir=cache, flags=("-O1",), lazy=False)
    assert len(calls) == 3 and cf4.library_path != path
    np.testing.assert_allclose(cg(x), [np.cos(0.3), -1.2, 2.5], atol=1e-15)
    # clear_cache removes the libraries and sources; loaded libraries keep working.
    assert clear_cache(cache) >= 6  # plus the fast-call extension when it was built here
    assert not list(cache.glob("dbk_*"))
    np.testing.assert_array_equal(cf1(x), cf2(x))


@needs_cc
def test_default_cache_dir_from_environment(tmp_path):
    cf = CompiledFunction(vector_fun(), lazy=False)
    assert cf.library_path.parent == tmp_path / "cache"
    assert compiled.default_cache_dir() == tmp_path / "cache"


@needs_cc
def test_function_named_like_a_libm_symbol():
    x = ca.SX.sym("x")
    cf = CompiledFunction(ca.Function("sin", [x], [2 * ca.sin(x)]), lazy=False)
    assert cf.backend == "c"
    assert cf(0.5)[0] == pytest.approx(2 * np.sin(0.5), abs=1e-15)


# ---------------------------------------------------------------- fallback
def test_no_compiler_warns_once_and_falls_back(monkeypatch):
    monkeypatch.setattr(build, "find_compiler", lambda compiler=None: None)
    f, g = vector_fun(), multi_fun()
    x = np.array([0.3, -1.2, 2.5, 0.7])
    with pytest.warns(CompilationWarning, match=r"no C compiler found.*'vec'") as rec:
        cf = CompiledFunction(f)
        out = cf(x)
        cg = CompiledFunction(g, lazy=False)
    assert len([w for w in rec if issubclass(w.category, CompilationWarning)]) == 1
    assert cf.backend == "casadi" and cg.backend == "casadi"
    assert_matches(f, out, x)
    with pytest.raises(RuntimeError, match=r"no C compiler found.*'vec'"):
        CompiledFunction(f, backend="c")


def test_broken_compiler_warns_and_falls_back(tmp_path):
    f = vector_fun()
    x = np.array([0.3, -1.2, 2.5, 0.7])
    with pytest.warns(CompilationWarning,
                      match=r"compiling CasADi function 'vec' failed.*false.*exited with status"):
        cf = CompiledFunction(f, compiler="/bin/false", cache_dir=tmp_path)
        out = cf(x)
    assert cf.backend == "casadi" and cf.library_path is None
    assert_matches(f, out, x)
    assert not list(tmp_path.glob("dbk_*"))  # no partial file left behind
    # The failure is remembered: a second instance does not retry nor warn again.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cf2 = CompiledFunction(f, compiler="/bin/false", cache_dir=tmp_path, lazy=False)
    assert cf2.backend == "casadi"
    with pytest.raises(RuntimeError, match=r"compiling CasADi function 'vec' failed"):
        CompiledFunction(f, compiler="/bin/false", cache_dir=tmp_path, backend="c").build()


def test_missing_explicit_compiler_is_no_compiler():
    with pytest.warns(CompilationWarning, match=r"compiler 'no-such-cc-xyz' not found"):
        cf = CompiledFunction(vector_fun(), compiler="no-such-cc-xyz", lazy=False)
    assert cf.backend == "casadi"


def test_backend_casadi_never_compiles(monkeypatch):
    def boom(argv):
        raise AssertionError("compiler called")
    monkeypatch.setattr(build, "_run_compiler", boom)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cf = CompiledFunction(multi_fun(), backend="casadi", lazy=False)
    assert cf.backend == "casadi" and cf.library_path is None


def test_backend_attribute_is_none_until_built():
    cf = CompiledFunction(vector_fun(), backend="casadi")
    assert cf.backend is None and "not built" in repr(cf)
    cf(np.zeros(4))
    assert cf.backend == "casadi"


@needs_cc
def test_fastcall_extension_is_used_and_agrees(monkeypatch):
    """Where Python's C headers exist, the C-extension caller is used for dense layouts."""
    if fastcall.caller_type(compiled.default_cache_dir(), compiled.find_compiler()) is None:
        pytest.skip("Python C headers unavailable: the ctypes path is used")
    f = multi_fun()
    cf = CompiledFunction(f, lazy=False)
    assert uses_fastcall(cf)
    assert not uses_fastcall(CompiledFunction(sparse_fun(), lazy=False))  # sparse: Python path
    x, A = np.array([0.5, -2.0, 1.5]), np.array([[1.0, 2.0, 3.0], [-4.0, 5.0, -6.0]])
    out = cf(x, 1.5, A.reshape(-1, order="F"))     # all in the extension's fast form
    assert_matches(f, out, x, 1.5, A)
    # np.float64 (a float subclass) stays in C; 2-D, strided or float32 arrays go to Python.
    for args in ((x, 1.5, A), (x.astype(np.float32), 1.5, A), (x, np.float64(1.5), A),
                 (np.array([0.5, 9.0, -2.0, 9.0, 1.5])[::2], 1.5, A)):
        for o, r in zip(cf(*args), out):
            np.testing.assert_allclose(o, r, rtol=0, atol=1e-6)


@needs_cc
def test_instances_are_garbage_collected():
    import gc
    import weakref
    cf = CompiledFunction(vector_fun(), lazy=False)
    cf(np.zeros(4))
    ref = weakref.ref(cf)
    del cf
    gc.collect()
    assert ref() is None


def test_auto_flags_lower_optimisation_for_long_code():
    assert compiled.auto_flags("x\n" * 100) == ("-O2",)
    assert compiled.auto_flags("x\n" * 8000) == ("-O1",)
    assert compiled.auto_flags("x\n" * 50000) == ("-O0",)


@needs_cc
def test_compiler_timeout_falls_back(monkeypatch, tmp_path):
    script = tmp_path / "slowcc"
    script.write_text("#!/bin/sh\nsleep 30\n")
    script.chmod(0o755)
    monkeypatch.setattr(build, "_COMPILE_TIMEOUT_S", 0.5)
    with pytest.warns(CompilationWarning, match=r"'vec' failed.*timed out"):
        cf = CompiledFunction(vector_fun(), compiler=str(script), cache_dir=tmp_path,
                              lazy=False)
    assert cf.backend == "casadi"


class _Square(ca.Callback):
    """A Python callback: CasADi cannot generate C code for it."""

    def __init__(self):
        ca.Callback.__init__(self)
        self.construct("square_cb", {})

    def get_n_in(self):
        return 1

    def get_n_out(self):
        return 1

    def eval(self, arg):
        return [arg[0] ** 2]


@needs_cc
def test_function_without_code_generation_falls_back(monkeypatch):
    calls = []
    monkeypatch.setattr(build, "_run_compiler", lambda argv: calls.append(argv))
    cb = _Square()
    x = ca.MX.sym("x")
    f = ca.Function("with_callback", [x], [cb(x) + 1.0])
    with pytest.warns(CompilationWarning, match=r"'with_callback' failed.*cannot generate C "
                                                r"code.*CallbackInternal") as rec:
        cf = CompiledFunction(f)
        out = cf(3.0)
    assert rec[0].filename == __file__  # attributed to the caller, not to solvers/
    assert calls == [] and cf.backend == "casadi"
    np.testing.assert_array_equal(out, [10.0])


@needs_cc
def test_concurrent_builds_in_threads():
    from concurrent.futures import ThreadPoolExecutor
    x = ca.SX.sym("x", 5)
    f = ca.Function("threaded", [x], [ca.cumsum(ca.sin(x)) * x[0]])
    with ThreadPoolExecutor(3) as pool:
        built = list(pool.map(lambda _: CompiledFunction(f).build(), range(3)))
    xv = np.linspace(-1.0, 1.0, 5)
    for cf in built:
        assert cf.backend == "c"
        assert_matches(f, cf(xv), xv)

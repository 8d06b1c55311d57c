"""Staged compilation of long functions (solvers._compiled_split, CompiledFunction(staged=))
and the compiled batch loop (CompiledFunction.call_batch).

A long function is first compiled cut into parts (quick library), then whole in the
background (optimised library); both must give bitwise the results of CasADi's own
evaluation, the second replaces the first, and a later process loads the optimised one
directly. Kept small (about 6,000 statements, compiled at -O0 and -O1 in a few seconds)."""
import platform
import re

import casadi as ca
import numpy as np
import pytest

from solvers import _compiled_build as build
from solvers import _compiled_split as split
from solvers import compiled
from solvers.compiled import CompilationWarning, CompiledFunction

needs_cc = pytest.mark.skipif(compiled.find_compiler() is None, reason="no C compiler")


def long_function(n_steps: int = 1500) -> ca.Function:
    """About 4 statements per step; values from early steps feed late ones, so that many
    temporaries live across the cut points; a vector and a matrix output."""
    x = ca.SX.sym("x", 8)
    y = ca.SX.sym("y", 3)
    vals = [x[i] for i in range(8)] + [y[i] for i in range(3)]
    for k in range(n_steps):
        a, b, c = vals[-1], vals[(k * 7) % len(vals)], vals[k // 3]
        vals.append(ca.sin(a) * ca.cos(b) + 0.5 * c)
    out_v = ca.vertcat(*vals[-5:], vals[20], vals[n_steps // 2])
    out_m = ca.reshape(ca.vertcat(*vals[100:106]), 2, 3) * vals[-1]
    return ca.Function("long_fun", [x, y], [out_v, out_m], ["x", "y"], ["v", "M"])


def reference(f: ca.Function, x: np.ndarray, y: np.ndarray):
    v, M = f(x, y)
    return np.asarray(v).ravel(), np.asarray(M)


# x86-64 has no fused multiply-add in its baseline instruction set, so every build computes
# the same IEEE operations: bitwise equal. Elsewhere (aarch64) GCC may fuse a*b+c when
# optimising: equal to rounding.
BITWISE = platform.machine().lower() in ("x86_64", "amd64")


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return np.array_equal(a, b) if BITWISE else np.allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.fixture(scope="module")
def fun():
    return long_function()


def test_split_source_cuts_long_bodies_only(fun):
    src = build.generate_source(fun)
    parts = split.split_source(src, "dbk_test")
    assert parts is not None and len(parts.parts) >= 3
    # every part but the first loads temporaries written by an earlier part
    assert all("=s[" in p for p in parts.parts[1:])
    main, units = split.translation_units(parts, 2)
    assert len(units) == 2 and "dbk_test_part0(arg, res, s);" in main
    x = ca.SX.sym("x")
    assert split.split_source(build.generate_source(ca.Function("short", [x], [x * 2])),
                              "dbk_short") is None


def test_split_source_leaves_unknown_bodies_alone(fun):
    src = build.generate_source(fun)
    k = re.search(r"^  a\d+=", src, re.M).start()
    odd = src[:k] + "  w[0]=1.;\n" + src[k:]  # a statement of another shape
    assert split.split_source(odd, "dbk_test") is None
    x = ca.MX.sym("x", 2)
    g = ca.Function("mx_fun", [x], [fun(ca.vertcat(x, x, x, x), x[0:1].T @ np.ones((1, 3)))[0]])
    assert split.split_source(build.generate_source(g), "dbk_mx") is None


@needs_cc
def test_staged_build_is_bitwise_exact_then_replaced(fun, tmp_path):
    rng = np.random.default_rng(3)
    xs = [(rng.normal(size=8), rng.normal(size=3)) for _ in range(3)]
    cf = CompiledFunction(fun, cache_dir=tmp_path, lazy=False)
    assert cf.backend == "c"
    quick = cf.library_path
    for x, y in xs:
        v, M = cf(x, y)
        rv, rM = reference(fun, x, y)
        assert same(v, rv) and same(M, rM)
    cf.wait_optimized()
    assert cf.optimized and cf.library_path != quick
    for x, y in xs:
        v, M = cf(x, y)
        rv, rM = reference(fun, x, y)
        assert same(v, rv) and same(M, rM)
    # a later instance (another process alike) loads the optimised library, compiles nothing
    calls = []
    real = build._run_compiler
    build._run_compiler = lambda argv: calls.append(argv) or real(argv)
    try:
        again = CompiledFunction(fun, cache_dir=tmp_path, lazy=False)
    finally:
        build._run_compiler = real
    assert calls == [] and again.optimized and again.library_path == cf.library_path


@needs_cc
def test_unstaged_build_compiles_once_whole(fun, tmp_path, monkeypatch):
    calls = []
    real = build._run_compiler
    monkeypatch.setattr(build, "_run_compiler", lambda argv: calls.append(argv) or real(argv))
    cf = CompiledFunction(fun, cache_dir=tmp_path, staged=False, lazy=False, flags=("-O0",))
    assert cf.optimized and len(calls) == 1 and "-O0" in calls[0] and "-c" not in calls[0]
    x, y = np.linspace(0, 1, 8), np.linspace(-1, 0, 3)
    assert same(cf(x, y)[0], reference(fun, x, y)[0])


@needs_cc
def test_failing_unit_names_the_command(tmp_path):
    with pytest.raises(build.CompileError, match=r"unit0\.c.*exited with status"):
        build.compile_library("int ok(void) { return 0; }\n", tmp_path / "dbk_bad.so",
                              build.find_compiler(), ("-O0",), "k" * 64,
                              units=["this is not C;\n"])


def test_staged_without_compiler_falls_back(fun, monkeypatch, tmp_path):
    monkeypatch.setattr(build, "find_compiler", lambda compiler=None: None)
    monkeypatch.setattr(compiled, "_WARNED", set())
    with pytest.warns(CompilationWarning, match="no C compiler"):
        cf = CompiledFunction(fun, cache_dir=tmp_path, lazy=False)
    assert cf.backend == "casadi"
    x, y = np.full(8, 0.3), np.full(3, -0.2)
    assert np.allclose(cf(x, y)[0], reference(fun, x, y)[0], rtol=0, atol=1e-14)
    out = [np.empty((2, 7)), np.empty((2, 6))]
    assert cf.call_batch(2, [np.zeros((2, 8)), np.zeros(3)], out) is False


@needs_cc
def test_call_batch_equals_single_calls(tmp_path):
    q = ca.SX.sym("q", 3)
    p = ca.SX.sym("p", 2)
    f = ca.Function("batch_fun", [q, p], [ca.sin(q) * p[0] + p[1], q @ q.T])
    cf = CompiledFunction(f, cache_dir=tmp_path, lazy=False)
    rng = np.random.default_rng(0)
    Q = rng.normal(size=(5, 3))
    P = rng.normal(size=2)  # shared by the five evaluations
    out = [np.empty((5, 3)), np.empty((5, 9))]
    assert cf.call_batch(5, [Q, P], out) is True
    for k in range(5):
        v, M = cf(Q[k], P)
        assert np.array_equal(out[0][k], v)
        assert np.array_equal(out[1][k], M.ravel(order="F"))  # column-major nonzeros
    with pytest.raises(ValueError, match=r"input 'i0'.*shape \(5, 3\)"):
        cf.call_batch(5, [Q[:, :2].copy(), P], out)
    with pytest.raises(ValueError, match=r"output 'o1'"):
        cf.call_batch(5, [Q, P], [out[0], np.empty((5, 9), dtype=np.float32)])

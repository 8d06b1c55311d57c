"""Private helper of :mod:`solvers._compiled_build`: the C source of a CasADi ``Function``.

:func:`generate_source` renames the function (so that its exported C symbol cannot collide
with a C library symbol such as ``sin``), generates its C code with ``casadi.CodeGenerator``
and appends a small runtime (:func:`_runtime_source`): static input/output buffers holding
the nonzeros of all inputs/outputs back to back, work arrays sized by the generated
``*_work`` function, and a zero-argument entry point ``dynablocks_rt_call()`` (a
zero-argument ``ctypes`` call is the cheapest one).
"""
from __future__ import annotations

from typing import Sequence

import casadi as ca

from solvers._compiled_cache import CompileError

__all__: list[str] = []  # private module

RUNTIME_VERSION = 3
"""Bumped whenever the generated runtime or the compile command changes."""

_FUN_PREFIX = "dbfun_"
_GEN_STEM = "dynablocks_gen"


def c_function_name(fun) -> str:
    """The C symbol under which the generated library holds ``fun``."""
    return _FUN_PREFIX + fun.name()


def _renamed(fun: ca.Function, cname: str) -> ca.Function:
    """Same function under the C-safe name ``cname``."""
    names = dict(name_in=fun.name_in(), name_out=fun.name_out())
    if fun.is_a("SXFunction"):
        sx = fun.sx_in()
        return ca.Function(cname, sx, fun.call(sx), names["name_in"], names["name_out"])
    mx = fun.mx_in()
    return ca.Function(cname, mx, fun.call(mx), names["name_in"], names["name_out"])


def offsets(sizes: Sequence[int]) -> list[int]:
    out, acc = [], 0
    for s in sizes:
        out.append(acc)
        acc += s
    return out


def _runtime_source(cname: str, nnz_in: Sequence[int], nnz_out: Sequence[int]) -> str:
    """C runtime appended to the generated code (see the module docstring)."""
    n_in, n_out = len(nnz_in), len(nnz_out)
    off_in, off_out = offsets(nnz_in), offsets(nnz_out)
    set_arg = "\n".join(
        f"  dynablocks_rt_arg[{i}] = dynablocks_rt_in_buf + {o};" for i, o in enumerate(off_in))
    set_res = "\n".join(
        f"  dynablocks_rt_res[{i}] = dynablocks_rt_out_buf + {o};" for i, o in enumerate(off_out))
    return f"""
/* ---- dynablocks runtime v{RUNTIME_VERSION}: static buffers, zero-argument entry ---- */
#include <stdlib.h>
static casadi_real dynablocks_rt_in_buf[{max(1, sum(nnz_in))}];
static casadi_real dynablocks_rt_out_buf[{max(1, sum(nnz_out))}];
static const casadi_real** dynablocks_rt_arg = 0;
static casadi_real** dynablocks_rt_res = 0;
static casadi_int* dynablocks_rt_iw = 0;
static casadi_real* dynablocks_rt_w = 0;
static int dynablocks_rt_mem = -1;
static const casadi_real** dynablocks_rt_barg = 0;
static casadi_real** dynablocks_rt_bres = 0;

CASADI_SYMBOL_EXPORT int dynablocks_rt_version(void) {{ return {RUNTIME_VERSION}; }}
CASADI_SYMBOL_EXPORT casadi_real* dynablocks_rt_in(void) {{ return dynablocks_rt_in_buf; }}
CASADI_SYMBOL_EXPORT casadi_real* dynablocks_rt_out(void) {{ return dynablocks_rt_out_buf; }}

CASADI_SYMBOL_EXPORT int dynablocks_rt_init(void) {{
  casadi_int sz_arg = 0, sz_res = 0, sz_iw = 0, sz_w = 0;
  if (dynablocks_rt_mem >= 0) return 0;
  if ({cname}_work(&sz_arg, &sz_res, &sz_iw, &sz_w)) return 1;
  if (sz_arg < {n_in}) sz_arg = {n_in};
  if (sz_res < {n_out}) sz_res = {n_out};
  dynablocks_rt_arg = (const casadi_real**) calloc(sz_arg + 1, sizeof(casadi_real*));
  dynablocks_rt_res = (casadi_real**) calloc(sz_res + 1, sizeof(casadi_real*));
  dynablocks_rt_iw = (casadi_int*) calloc(sz_iw + 1, sizeof(casadi_int));
  dynablocks_rt_w = (casadi_real*) calloc(sz_w + 1, sizeof(casadi_real));
  dynablocks_rt_barg = (const casadi_real**) calloc(sz_arg + 1, sizeof(casadi_real*));
  dynablocks_rt_bres = (casadi_real**) calloc(sz_res + 1, sizeof(casadi_real*));
  if (!dynablocks_rt_arg || !dynablocks_rt_res || !dynablocks_rt_iw || !dynablocks_rt_w
      || !dynablocks_rt_barg || !dynablocks_rt_bres) return 2;
{set_arg}
{set_res}
  {cname}_incref();
  dynablocks_rt_mem = {cname}_checkout();
  return dynablocks_rt_mem < 0 ? 3 : 0;
}}

CASADI_SYMBOL_EXPORT int dynablocks_rt_call(void) {{
  return {cname}(dynablocks_rt_arg, dynablocks_rt_res, dynablocks_rt_iw, dynablocks_rt_w,
                 dynablocks_rt_mem);
}}

/* n evaluations: input i of evaluation k at in[i] + k * in_stride[i] (stride 0: shared),
   output i at out[i] + k * out_stride[i]; stops at the first nonzero return code. */
CASADI_SYMBOL_EXPORT int dynablocks_rt_batch(long long n, const casadi_real* const* in,
                                             const long long* in_stride,
                                             casadi_real* const* out,
                                             const long long* out_stride) {{
  long long k;
  int i, ret;
  for (k = 0; k < n; ++k) {{
    for (i = 0; i < {n_in}; ++i) dynablocks_rt_barg[i] = in[i] + k * in_stride[i];
    for (i = 0; i < {n_out}; ++i) dynablocks_rt_bres[i] = out[i] + k * out_stride[i];
    ret = {cname}(dynablocks_rt_barg, dynablocks_rt_bres, dynablocks_rt_iw, dynablocks_rt_w,
                  dynablocks_rt_mem);
    if (ret) return ret;
  }}
  return 0;
}}
"""


def generate_source(fun: ca.Function) -> str:
    """C source of ``fun`` plus the dynablocks runtime.

    Raises
    ------
    CompileError
        When CasADi cannot generate code for ``fun`` (e.g. it embeds a plugin solver
        without code generation support).
    """
    cname = c_function_name(fun)
    try:
        renamed = _renamed(fun, cname)
        gen = ca.CodeGenerator(_GEN_STEM + ".c", {"with_header": False, "verbose": False})
        gen.add(renamed)
        body = gen.dump()
    except Exception as exc:  # CasADi raises RuntimeError with a long trace
        raise CompileError(f"CasADi code generation failed: {str(exc).strip()[-500:]}") from exc
    if "#error" in body:  # e.g. an embedded Callback: C code cannot be compiled
        line = next(ln.strip() for ln in body.splitlines() if "#error" in ln)
        raise CompileError(f"CasADi cannot generate C code for all of it ({line})")
    nnz_in = [fun.sparsity_in(i).nnz() for i in range(fun.n_in())]
    nnz_out = [fun.sparsity_out(i).nnz() for i in range(fun.n_out())]
    return body + _runtime_source(cname, nnz_in, nnz_out)

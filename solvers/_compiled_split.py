"""Private helper of :mod:`solvers._compiled_build`: cut the one straight-line C function
CasADi generates for an ``SX`` Function into parts of bounded length.

Why: GCC's optimiser (its register allocator above all) takes time that grows faster than
linearly with the length of one function. The 40-DOF humanoid's mass matrix (15,500
statements in one function) took 3-4 s at ``-O1``; cut into parts of
:data:`PART_STATEMENTS` statements it takes a fraction of that
(``benchmarks/bench_cold_compile.py``), and the parts can be compiled as separate
translation units on several cores.

How: the body of CasADi's ``casadi_f0`` for an SX function is a list of one-line statements
``aNNNN=<expression>;`` (scalar temporaries ``aNNNN``, reused), reads ``arg[i]? arg[i][k] :
0`` and writes ``if (res[i]!=0) res[i][k]=aNNNN;``. Each part becomes a function
``void <cname>_part<k>(const double** arg, double** res, double* s)``: the temporaries the
part reads before writing them are loaded from the array ``s`` (one slot per temporary),
those it writes and a later part reads before writing are stored back to ``s``. The same
operations run in the same order on the same IEEE doubles: results are those of the uncut
function, bitwise where the compiler fuses no multiply-adds (x86-64). Any body of another
shape (loops, calls of other functions, work vectors) is left uncut (:func:`split_source`
returns None).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__: list[str] = []  # private module

PART_STATEMENTS = 1500
"""Statements per part: at ``-O1`` GCC compiles parts of this length at a roughly constant
rate per statement (measured on the humanoid's functions); longer parts cost more per
statement, shorter ones add load/store traffic at the part boundaries."""

MIN_SPLIT_STATEMENTS = 5000
"""Functions with fewer statements are compiled as CasADi generated them."""

_HIDDEN = ("#ifndef DBK_HIDDEN\n#if defined(__GNUC__) && !defined(_WIN32)\n"
           "#define DBK_HIDDEN __attribute__((visibility(\"hidden\")))\n#else\n"
           "#define DBK_HIDDEN\n#endif\n#endif\n")
_HEAD = re.compile(r"^static int casadi_f0\(const casadi_real\*\* arg, casadi_real\*\* res, "
                   r"casadi_int\* iw, casadi_real\* w, int mem\) \{$", re.M)
_DECL = re.compile(r"^  casadi_real (a\d+(?:, a\d+)*);$")
_ASSIGN = re.compile(r"^  (a\d+)=(.*);$")
_WRITE = re.compile(r"^  if \(res\[\d+\]!=0\) res\[\d+\]\[\d+\]=(a\d+);$")
_VAR = re.compile(r"\ba(\d+)\b")
# Expressions may use temporaries, input reads, numbers, operators, ternaries and calls of
# math functions and CasADi's static helpers; nothing that touches w, iw or other memory.
_SAFE_EXPR = re.compile(r"^(?:[a-z_0-9]+\(|arg\[\d+\]\? arg\[\d+\]\[\d+\] : 0|a\d+|"
                        r"[-+*/().,<>=!&|?: ]|\d+\.?\d*(?:e[-+]?\d+)?)*$")
_IDENT_CALL = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\(")
_ALLOWED_CALLS = {
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh",
    "acosh", "atanh", "exp", "log", "log1p", "expm1", "sqrt", "pow", "fabs", "floor", "ceil",
    "fmin", "fmax", "fmod", "erf", "copysign", "casadi_sq", "casadi_sign", "casadi_fmin",
    "casadi_fmax", "casadi_log1p", "casadi_expm1", "casadi_hypot", "casadi_printme",
}


@dataclass
class Split:
    """The parts of a cut function.

    Attributes
    ----------
    prelude : str
        The generated file up to (not including) ``casadi_f0``: macros, helpers.
    parts : list of str
        C definitions of the part functions (each needs the prelude's macros).
    driver : str
        The new ``casadi_f0`` calling the parts in order, followed by the rest of the file.
    n_slots : int
        Length of the array ``s``.
    """

    prelude: str
    parts: list[str]
    driver: str
    n_slots: int


def _statements(body: list[str]) -> list[str] | None:
    """The statement lines of ``casadi_f0`` (declarations dropped), or None when a line has
    another shape than those this module knows."""
    out = []
    for ln in body:
        if _DECL.match(ln):
            continue
        m = _ASSIGN.match(ln)
        if m:
            expr = m.group(2)
            if not _SAFE_EXPR.match(expr):
                return None
            if any(c not in _ALLOWED_CALLS for c in _IDENT_CALL.findall(expr)):
                return None
            out.append(ln)
            continue
        if _WRITE.match(ln):
            out.append(ln)
            continue
        return None
    return out


def _reads_writes(stmts: list[str]) -> tuple[set[int], set[int]]:
    """Temporaries read before being written in ``stmts``, and those written."""
    reads, writes = set(), set()
    for ln in stmts:
        m = _ASSIGN.match(ln)
        if m:
            for v in _VAR.findall(m.group(2)):
                if int(v) not in writes:
                    reads.add(int(v))
            writes.add(int(m.group(1)[1:]))
        else:
            v = int(_WRITE.match(ln).group(1)[1:])
            if v not in writes:
                reads.add(v)
    return reads, writes


def _decl(names: list[int], width: int) -> list[str]:
    lines = []
    for i in range(0, len(names), 12):
        chunk = ", ".join(f"a{n:0{width}d}" for n in names[i:i + 12])
        lines.append(f"  casadi_real {chunk};")
    return lines


def split_source(source: str, cname: str, part_statements: int = PART_STATEMENTS,
                 min_statements: int = MIN_SPLIT_STATEMENTS) -> Split | None:
    """Cut ``casadi_f0`` of the generated ``source`` into parts (module docstring).

    Returns None when the function is short (under ``min_statements`` statements), when the
    file holds other functions of CasADi's (``casadi_f1``, ...) or when its body has a shape
    this module does not know.
    """
    m = _HEAD.search(source)
    if m is None or "static int casadi_f1(" in source:
        return None
    start = m.end() + 1
    end = source.find("\n  return 0;\n}\n", start)
    if end < 0:
        return None
    body = source[start:end].split("\n")
    stmts = _statements(body)
    if stmts is None or len(stmts) < min_statements:
        return None
    width = len(_VAR.search(source, start).group(1)) if _VAR.search(source, start) else 4
    chunks = [stmts[i:i + part_statements] for i in range(0, len(stmts), part_statements)]
    rw = [_reads_writes(c) for c in chunks]
    later_reads: list[set[int]] = [set() for _ in chunks]
    acc: set[int] = set()
    for k in range(len(chunks) - 1, -1, -1):
        later_reads[k] = set(acc)
        acc |= rw[k][0]
    slots: set[int] = set()
    parts = []
    for k, (c, (reads, writes)) in enumerate(zip(chunks, rw)):
        store = sorted(writes & later_reads[k])
        load = sorted(reads)
        slots.update(store)
        used = sorted(reads | writes)
        lines = [f"DBK_HIDDEN void {cname}_part{k}(const casadi_real** arg, casadi_real** res, "
                 f"casadi_real* s) {{"]
        lines += _decl(used, width)
        lines += [f"  a{v:0{width}d}=s[{v}];" for v in load]
        lines += c
        lines += [f"  s[{v}]=a{v:0{width}d};" for v in store]
        lines.append("}")
        parts.append("\n".join(lines) + "\n")
    parts[0] = _HIDDEN + parts[0]
    n_slots = max(slots, default=0) + 1
    protos = _HIDDEN + "".join(f"DBK_HIDDEN void {cname}_part{k}(const casadi_real** arg, "
                               f"casadi_real** res, casadi_real* s);\n"
                               for k in range(len(parts)))
    calls = "".join(f"  {cname}_part{k}(arg, res, s);\n" for k in range(len(parts)))
    driver = (protos + source[m.start():m.end()] + f"\n  casadi_real s[{n_slots}];\n"
              + calls + source[end:].lstrip("\n"))
    return Split(prelude=source[:m.start()], parts=parts, driver=driver, n_slots=n_slots)


_HELPER = re.compile(r"^casadi_real (casadi_\w+\()", re.M)
_EXPORTED = re.compile(r"^CASADI_SYMBOL_EXPORT ", re.M)


def translation_units(split: Split, n_units: int) -> tuple[str, list[str]]:
    """The split function as separately compilable C files.

    Returns
    -------
    main : str
        The prelude and the driver (the runtime and the key are appended by the caller).
    units : list of str
        ``n_units`` (at most one per part) files holding the parts, each with the prelude,
        its helper functions made ``static`` (every unit has its own copy) and CasADi's
        exported version queries made ``static`` too (so that only ``main`` exports them).
    """
    head = _EXPORTED.sub("static ", _HELPER.sub(r"static casadi_real \1", split.prelude))
    n = max(1, min(n_units, len(split.parts)))
    size = -(-len(split.parts) // n)
    units = [head + "\n" + _HIDDEN + "".join(split.parts[i:i + size])
             for i in range(0, len(split.parts), size)]
    return split.prelude + split.driver, units


QUICK_FLAGS: tuple[str, ...] = ("-O0",)
"""Flags of the quick (staged) library: see ``benchmarks/bench_cold_compile.py``."""


def units_for(n_parts: int) -> int:
    """Translation units for ``n_parts`` parts: one per core (at least one)."""
    import os
    return max(1, min(n_parts, os.cpu_count() or 1))


def build_quick(source: str, fun, compiler: list[str], cache_dir, n_in: int, n_out: int,
                failed: dict):
    """Load (or build, then load) the quick library of the generated ``source`` of ``fun``:
    its function cut into parts, the parts in :func:`units_for` translation units compiled
    in parallel with :data:`QUICK_FLAGS`, through the project's verified loader.

    Parameters
    ----------
    n_in, n_out : int
        Total input and output nonzeros (the runtime's buffers).
    failed : dict
        Cache keys that failed to build in this process (read and updated).

    Returns
    -------
    solvers._compiled_build.Runtime or None
        None when the function is short or has a body this module does not cut, or the
        build failed (the caller then builds the whole function).
    """
    from solvers import _compiled_build as build
    parts = split_source(source, build.c_function_name(fun) + "_p")
    if parts is None:
        return None
    main, units = translation_units(parts, units_for(len(parts.parts)))
    key = build.cache_key(main + "\0".join(units), compiler, QUICK_FLAGS + ("split",))
    if key in failed:
        return None
    try:
        return build.cached_library(
            cache_dir, build.library_path(cache_dir, fun.name(), key).name, key,
            build=lambda path: build.compile_library(main, path, compiler, QUICK_FLAGS, key,
                                                     units),
            load=lambda path, fresh: build.load_runtime(path, n_in, n_out, key,
                                                        fresh_name=fresh),
            loaded=build.loaded_runtime)
    except (build.CompileError, OSError) as exc:
        failed[key] = str(exc)
        return None

"""Private helpers of :mod:`solvers.compiled`: C code generation, compilation, and the one
loader of every compiled library of the project.

A CasADi ``Function`` is turned into a shared library in four steps:

1. :func:`generate_source` (:mod:`solvers._compiled_codegen`) generates its C code with a
   small runtime: static input/output buffers and a zero-argument entry point
   ``dynablocks_rt_call()``.
2. :func:`cache_key` hashes (sha256) the source, the compiler command and the flags.
3. :func:`compile_library` compiles in a private build directory inside the cache
   directory (a fixed file name there, so that every process builds the same bytes), writes
   the manifest (the key and the sha256 of the library) and renames both atomically into
   place (integrity and housekeeping: :mod:`solvers._compiled_cache`).
4. :func:`load_runtime` loads a library once per process through :func:`open_library`
   and exposes numpy views of its buffers.

Every compiled library (these functions, the contact kernel of
:mod:`solvers.contact_step`, the call accelerator of :mod:`solvers._compiled_ext`) is
loaded through :func:`cached_library`, the only place that decides whether a file may be
loaded: the cache directory must be private (:func:`private_cache_dir`: else a warning and
a private per-user directory instead), the library and its manifest must be this user's and
match (:func:`solvers._compiled_cache.verify_library`), else the library is compiled again;
after ``dlopen`` :func:`open_library` checks the key compiled into it
(``dynablocks_rt_key``) and compiles again under a fresh name when it differs.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shlex
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence, TypeVar

import casadi as ca
import numpy as np

from solvers import _compiled_cache as cache
from solvers._compiled_codegen import (RUNTIME_VERSION, c_function_name, generate_source,
                                       offsets)
from solvers._compiled_cache import (CacheSecurityWarning, CompileError, CompilerNotFound,
                                     UnsafeCacheError, private_cache_dir)

__all__: list[str] = []  # private module

_COMPILE_TIMEOUT_S = 600.0
# Generated-code line counts up to which -O2, then -O1, are used (see auto_flags).
_O2_MAX_LINES = 4000
_O1_MAX_LINES = 10000
_CACHE_ENV = "DYNABLOCKS_CACHE_DIR"
_KEY_SYMBOL = "dynablocks_rt_key"


def missing_compiler_reason(compiler: str | Sequence[str] | None = None) -> str:
    """Why :func:`find_compiler` found nothing, e.g. ``"compiler 'clang' not found"``."""
    if compiler is not None:
        return f"compiler {compiler!r} not found"
    if os.environ.get("CC"):
        return f"the compiler CC={os.environ['CC']!r} is not found"
    return "no C compiler found (CC is unset and none of cc, gcc, clang is on the PATH)"


def compiler_install_hint() -> str:
    """How to get a C compiler on this platform (for the no-compiler message)."""
    if sys.platform == "darwin":
        how = "run 'xcode-select --install' (Apple's command line tools provide clang)"
    elif sys.platform == "win32":
        how = ("install MinGW-w64 gcc or LLVM clang and put it on the PATH (or "
               "'conda install -c conda-forge m2w64-toolchain')")
    else:
        how = ("install gcc: 'sudo apt install gcc' (Debian/Ubuntu), 'sudo dnf install gcc' "
               "(Fedora), 'apk add gcc musl-dev' (Alpine) or 'conda install -c conda-forge "
               "c-compiler'")
    return (f"{how}, or set CC to a compiler command; then build a model's functions once "
            "with 'python -m solvers.compiled precompile model.urdf'")


def default_cache_dir() -> Path:
    """``$DYNABLOCKS_CACHE_DIR`` if set, else ``~/.cache/dynablocks/compiled``: the requested
    cache directory (the one used is :func:`private_cache_dir` of it)."""
    env = os.environ.get(_CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "dynablocks" / "compiled"


def find_compiler(compiler: str | Sequence[str] | None = None) -> list[str] | None:
    """Command of the C compiler to use, or None when none is found.

    Order: the ``compiler`` argument, the ``CC`` environment variable, then ``cc``,
    ``gcc``, ``clang`` on the ``PATH``. The first word is resolved to an absolute path.
    """
    if compiler is not None:
        candidates = [compiler]
    elif os.environ.get("CC"):
        candidates = [os.environ["CC"]]
    else:
        candidates = ["cc", "gcc", "clang"]
    for cand in candidates:
        argv = shlex.split(cand) if isinstance(cand, str) else [str(c) for c in cand]
        if not argv:
            continue
        exe = shutil.which(argv[0])
        if exe is not None:
            return [exe, *argv[1:]]
    return None


# No fused multiply-add contraction (``-march=native`` would allow it at -O1 and up, but
# not at -O0): a function's quick and optimised libraries, and every optimisation level,
# give the same bits, so a run that switches libraries midway stays bitwise reproducible.
FP_FLAGS = ("-ffp-contract=off",)


def auto_flags(source: str) -> tuple[str, ...]:
    """Optimisation flags for generated C code, chosen by its length in lines.

    GCC's optimiser (register allocation above all) takes time that grows faster than
    linearly with the length of the single straight-line function CasADi generates: on a
    2-core machine a 9,000-line function takes about 1 s at ``-O0``, 6 s at ``-O1``, and a
    34,000-line one about 8 s at ``-O0`` but minutes at ``-O1``; ``-O0`` code is still about
    2x faster than CasADi's virtual machine (``-O1`` about 4x). Hence ``-O2`` up to 4,000
    lines, ``-O1`` up to 10,000 lines, ``-O0`` beyond. (``-Og`` compiles 1.5-2x faster than
    ``-O1`` with call times within about 5 %, ``benchmarks/bench_cold_compile.py
    --breakdown``.) Long functions are first built quickly in parallel parts (``staged`` of
    :class:`solvers.compiled.CompiledFunction`): these flags set the library that replaces
    the quick one in the background.
    """
    n = source.count("\n")
    if n <= _O2_MAX_LINES:
        return ("-O2",)
    if n <= _O1_MAX_LINES:
        return ("-O1",)
    return ("-O0",)


def cache_key(source: str, compiler: Sequence[str], flags: Sequence[str]) -> str:
    """sha256 hex digest of everything that determines the library's content."""
    h = hashlib.sha256()
    for part in (f"runtime-v{RUNTIME_VERSION}", sys.platform, platform.machine(),
                 ca.__version__, "\0".join(compiler), "\0".join((*flags, *FP_FLAGS)), source):
        h.update(part.encode())
        h.update(b"\0\1\0")
    return h.hexdigest()


def library_path(cache_dir: Path, name: str, key: str) -> Path:
    """Path of the cached library of function ``name`` with hash ``key``."""
    safe = "".join(c if c.isalnum() or c == "_" else "_" for c in name)[:48]
    suffix = ".dll" if sys.platform == "win32" else ".so"
    return cache_dir / f"dbk_{safe}_{key[:32]}{suffix}"


_BACKGROUND = threading.local()
_BACKGROUND_NICE = 10


class background_priority:
    """Context manager: compilers started by this thread meanwhile run at a lower priority
    (``nice`` 10; the optimised rebuild of a staged function, which must not slow down the
    simulation that uses its quick library)."""

    def __enter__(self) -> None:
        _BACKGROUND.active = True

    def __exit__(self, *exc: object) -> None:
        _BACKGROUND.active = False


def _run_compiler(argv: list[str]) -> subprocess.CompletedProcess:
    """Run one compiler command (separate function so tests can count compilations).

    The compiler runs in its own process group, killed as a whole (driver and ``cc1``)
    after ``_COMPILE_TIMEOUT_S`` seconds (``subprocess.TimeoutExpired`` is then raised) or
    when this Python process exits first.
    """
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=(os.name == "posix")) as proc, \
            cache.tracked_process(proc):
        if getattr(_BACKGROUND, "active", False) and hasattr(os, "setpriority"):
            try:  # the whole group (driver, cc1): the foreground keeps the cores first
                os.setpriority(os.PRIO_PGRP, proc.pid, _BACKGROUND_NICE)
            except OSError:
                pass
        try:
            out, err = proc.communicate(timeout=_COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            cache.kill_process_group(proc)
            proc.communicate()
            raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _key_source(key: str) -> str:
    """C function returning the cache key, appended to every compiled source: a library
    loaded under a key must answer it (a last check after ``dlopen``)."""
    return (f"\n/* dynablocks cache key */\nconst char* {_KEY_SYMBOL}(void);\n"
            f"const char* {_KEY_SYMBOL}(void) {{ return \"{key}\"; }}\n")


def compile_library(source: str, target: Path, compiler: Sequence[str],
                    flags: Sequence[str], key: str, units: Sequence[str] = ()) -> None:
    """Compile ``source`` into the shared library ``target`` with its manifest (key ``key``).

    Compiles in a private temporary directory of the cache directory, then renames the
    library, its C source (``target`` with suffix ``.c``, kept for inspection; the
    ``units`` follow the main source there) and the manifest into place, each atomically
    and without group/other write permission (see :mod:`solvers._compiled_cache`).

    ``units``: further C files linked into the same library (the parts of a split function,
    :mod:`solvers._compiled_split`); they and ``source`` are then compiled to objects in
    parallel, one compiler process per file (at most one per core at a time), and linked.

    Raises
    ------
    CompileError
        With the compiler's command line and (truncated) error output.
    """
    cache.make_private_directory(target.parent)
    with cache.build_directory(target.parent) as tmp:
        tmp_c = tmp / (target.stem + ".c")
        tmp_so = tmp / target.name           # same name in every process: same bytes
        tmp_c.write_text(source + _key_source(key))
        if units:
            files = [tmp_c]
            for k, u in enumerate(units):
                files.append(tmp / f"{target.stem}_unit{k}.c")
                files[-1].write_text(u)
            objs = [f.with_suffix(".o") for f in files]
            _run_all([[*compiler, *flags, *FP_FLAGS, "-fPIC", "-c", "-o", str(o), str(f)]
                      for f, o in zip(files, objs)])
            _run_all([[*compiler, *flags, *FP_FLAGS, "-shared", "-fPIC", "-o", str(tmp_so),
                       *map(str, objs), "-lm"]])
            with open(tmp_c, "a") as out:  # the inspection copy holds every unit
                for k, u in enumerate(units):
                    out.write(f"\n/* ---- unit {k} (a separate file when compiled) ---- */\n"
                              + u)
        else:
            _run_all([[*compiler, *flags, *FP_FLAGS, "-shared", "-fPIC", "-o", str(tmp_so),
                       str(tmp_c), "-lm"]])
        if not tmp_so.exists():
            raise CompileError(f"the compiler wrote no library {tmp_so}")
        tmp_manifest = tmp / "manifest"
        tmp_manifest.write_text(cache.manifest_text(key, cache.sha256_file(tmp_so)),
                                encoding="ascii")
        for p in (tmp_so, tmp_c, tmp_manifest):
            cache.drop_shared_write(p)
        cache.fsync(tmp_so)
        cache.fsync(tmp_manifest)
        os.replace(tmp_so, target)
        os.replace(tmp_c, target.with_suffix(".c"))
        os.replace(tmp_manifest, cache.manifest_path(target))


def _run_all(commands: list[list[str]]) -> None:
    """Run compiler commands, at most one per core at a time; raise :class:`CompileError`
    naming the first that failed."""
    if len(commands) == 1:
        results = [_run_checked(commands[0])]
    else:
        from concurrent.futures import ThreadPoolExecutor
        bg = getattr(_BACKGROUND, "active", False)

        def run(argv: list[str]) -> CompileError | None:
            _BACKGROUND.active = bg  # the pool's threads inherit the caller's priority
            return _run_checked(argv)
        with ThreadPoolExecutor(max_workers=min(len(commands), os.cpu_count() or 1)) as pool:
            results = list(pool.map(run, commands))
    for r in results:
        if isinstance(r, CompileError):
            raise r


def _run_checked(argv: list[str]) -> CompileError | None:
    try:
        proc = _run_compiler(argv)
    except (OSError, subprocess.SubprocessError) as exc:
        return CompileError(f"running {shlex.join(argv)} failed: {exc}")
    if proc is None or proc.returncode != 0:
        code = proc.returncode if proc is not None else "?"
        err = ((proc.stderr or proc.stdout or "") if proc is not None else "").strip()
        return CompileError(f"{shlex.join(argv)} exited with status {code}"
                            + (f": {err[-1500:]}" if err else ""))
    return None


@dataclass
class Runtime:
    """A loaded library: its entry point and numpy views of its static buffers."""

    path: Path
    call: ctypes._CFuncPtr  # zero-argument, returns int (0 on success)
    batch: ctypes._CFuncPtr  # (n, in pointers, in strides, out pointers, out strides) -> int
    in_buf: np.ndarray      # (sum of input nnz,)
    out_buf: np.ndarray     # (sum of output nnz,)


_RUNTIMES: dict[str, Runtime] = {}
LOCK = threading.RLock()
"""Guards the per-process state of loading (libraries, the extension): builds may run in
background threads (``multibody`` compiles while CasADi's VM serves calls)."""


def loaded_runtime(path: Path) -> Runtime | None:
    """The runtime of ``path`` if this process has loaded it already."""
    with LOCK:
        return _RUNTIMES.get(str(path))


T = TypeVar("T")


def cached_library(cache_dir: str | Path, file_name: str, key: str,
                   build: Callable[[Path], None] | None, load: Callable[[Path, bool], T], *,
                   loaded: Callable[[Path], T | None] | None = None) -> T:
    """Load the library ``file_name`` of cache key ``key`` from the cache, building it first
    when it is missing or may not be loaded: the one loader of every compiled library.

    Parameters
    ----------
    cache_dir : str or Path
        The requested cache directory (made private or replaced by
        :func:`private_cache_dir`).
    file_name : str
        The library's file name in that directory.
    key : str
        Its cache key (in its manifest and compiled into it).
    build : callable or None
        ``build(path)`` writes the library and its manifest at ``path`` (usually
        :func:`compile_library`); raises :class:`CompileError`. None: only look, and
        return None when the library is not there (or may not be loaded).
    load : callable
        ``load(path, fresh_name)`` loads it through :func:`open_library`; raises
        :class:`CompileError` when the key compiled into it differs.
    loaded : callable, optional
        ``loaded(path)``: what this process loaded from ``path`` already, or None.

    Returns
    -------
    The result of ``load`` (or ``loaded``); None when ``build`` is None and nothing was
    loaded.

    Raises
    ------
    CompileError
        When the library cannot be built or loaded; :class:`UnsafeCacheError` when no
        private cache directory is available.
    """
    path = private_cache_dir(cache_dir) / file_name
    if loaded is not None:
        hit = loaded(path)
        if hit is not None:
            return hit
    # Hash and ownership check before loading: a truncated or bit-flipped library, another
    # library under this name or a file others could write is compiled again (loading it
    # could crash the process, give wrong numbers or run someone else's code).
    retry = False
    if cache.verify_library(path, key):
        try:
            return load(path, False)
        except CompileError:
            retry = True  # not the library of this key after all: compile it again
    if build is None:
        return None
    build(path)
    return load(path, retry)


_SOURCE_LOCK = threading.Lock()


def load_c_source_library(name: str, tag: str, source: str, compiler: Sequence[str],
                          flags: Sequence[str], cache_dir: str | Path | None,
                          finish: Callable[[Path, ctypes.CDLL], T], loaded: dict) -> T:
    """Build once per machine, load once per process, a library compiled from one
    hand-written C source (the narrow phase, the contact-step kernel).

    The cache key hashes ``tag`` (name and layout version), the platform, the compiler
    command, the flags and the source; the library is ``<name>_<key[:32]>.so`` in the
    private cache, built by :func:`compile_library` and opened by :func:`open_library`
    through :func:`cached_library` (the one verified loader).

    Parameters
    ----------
    name : str
        File name prefix, e.g. ``"dbk_collision"``.
    tag : str
        What the key must change with besides the source, e.g. ``"collision-v3"``.
    source : str
        The C source.
    compiler : sequence of str
        The compiler command (:func:`find_compiler`).
    flags : sequence of str
        Compiler flags.
    cache_dir : str or Path or None
        The requested cache directory (None: :func:`default_cache_dir`).
    finish : callable
        ``finish(path, library)`` wraps the opened library (checks its entry points;
        raises :class:`CompileError`).
    loaded : dict
        The caller's per-process table, key -> what ``finish`` returned.

    Returns
    -------
    What ``finish`` returned, now or in an earlier call of this process.

    Raises
    ------
    CompileError, OSError
        When the library cannot be built or loaded, or no private cache directory is
        available (:class:`UnsafeCacheError`).
    """
    h = hashlib.sha256()
    for part in (tag, sys.platform, platform.machine(), " ".join(compiler), " ".join(flags),
                 source):
        h.update(part.encode() + b"\0")
    key = h.hexdigest()
    with _SOURCE_LOCK:
        if key in loaded:
            return loaded[key]

        def load(path: Path, fresh: bool) -> T:
            return open_library(path, key, lambda lib, file: finish(path, lib),
                                fresh_name=fresh)

        lib = cached_library(cache_dir if cache_dir else default_cache_dir(),
                             f"{name}_{key[:32]}.so", key,
                             build=lambda path: compile_library(source, path, compiler,
                                                                flags, key),
                             load=load)
        loaded[key] = lib
        return lib


def open_library(path: Path, key: str, finish: Callable[[ctypes.CDLL, Path], T], *,
                 fresh_name: bool = False) -> T:
    """``dlopen`` the library at ``path``, check the key compiled into it, then return
    ``finish(library, file)`` (``file``: the name it was opened under).

    Call it through :func:`cached_library`, which verifies the file first: loading a
    damaged library can crash the process. ``fresh_name=True`` loads it through a temporary
    hard link of another name: the dynamic loader returns the library already loaded under
    a name (one that failed the key check, say) instead of the file now there.

    Raises
    ------
    CompileError
        When the library cannot be loaded or was built for another key, or what ``finish``
        raises.
    """
    with LOCK:
        if not fresh_name:
            return _open_locked(path, path, key, finish)
        alias = path.with_name(f"{cache.TMP_PREFIX}{cache.HOST}-{os.getpid()}-load-"
                               f"{time.time_ns()}{path.suffix}")
        try:
            try:
                os.link(path, alias)
            except OSError:
                shutil.copyfile(path, alias)
            return _open_locked(path, alias, key, finish)
        finally:
            try:
                os.unlink(alias)
            except OSError:
                pass


def _open_locked(path: Path, file: Path, key: str,
                 finish: Callable[[ctypes.CDLL, Path], T]) -> T:
    try:
        lib = ctypes.CDLL(str(file))
        key_fn = getattr(lib, _KEY_SYMBOL)
        key_fn.restype = ctypes.c_char_p
        found = key_fn()
    except (OSError, AttributeError) as exc:
        raise CompileError(f"loading {path} failed: {exc}") from exc
    if found != key.encode():
        raise CompileError(f"{path} was built for another key (cache key "
                           f"{(found or b'?').decode(errors='replace')[:16]}..., "
                           f"expected {key[:16]}...)")
    return finish(lib, file)


def load_runtime(path: Path, n_in_total: int, n_out_total: int, key: str, *,
                 fresh_name: bool = False) -> Runtime:
    """Load (once per process) and initialise the function library at ``path`` built for
    ``key`` (through :func:`open_library`; arguments as there).

    Raises
    ------
    CompileError
        When the library cannot be loaded or initialised, or was built for another key.
    """
    with LOCK:
        rt = _RUNTIMES.get(str(path))
        if rt is not None:
            return rt
        rt = open_library(path, key, lambda lib, file: _init_runtime(path, lib, n_in_total,
                                                                     n_out_total),
                          fresh_name=fresh_name)
        _RUNTIMES[str(path)] = rt
        return rt


def _init_runtime(path: Path, lib: ctypes.CDLL, n_in_total: int, n_out_total: int) -> Runtime:
    try:
        version = lib.dynablocks_rt_version
        version.restype = ctypes.c_int
        if version() != RUNTIME_VERSION:
            raise CompileError(f"{path} has runtime version {version()}, "
                               f"expected {RUNTIME_VERSION}")
        init = lib.dynablocks_rt_init
        init.restype = ctypes.c_int
        status = init()
        if status != 0:
            raise CompileError(f"initialising {path} failed with status {status}")
        bufs = []
        for sym, n in (("dynablocks_rt_in", n_in_total), ("dynablocks_rt_out", n_out_total)):
            getter = getattr(lib, sym)
            getter.restype = ctypes.c_void_p
            arr = (ctypes.c_double * max(1, n)).from_address(getter())
            bufs.append(np.frombuffer(arr, dtype=np.float64)[:n])
        call = lib.dynablocks_rt_call
        call.argtypes = []
        call.restype = ctypes.c_int
        batch = lib.dynablocks_rt_batch
        batch.argtypes = [ctypes.c_longlong] + [ctypes.c_void_p] * 4
        batch.restype = ctypes.c_int
    except (OSError, AttributeError) as exc:
        raise CompileError(f"loading {path} failed: {exc}") from exc
    return Runtime(path=path, call=call, batch=batch, in_buf=bufs[0], out_buf=bufs[1])


_C_LIBRARIES: dict[str, ctypes.CDLL] = {}


def load_c_library(source: str, name: str, *, flags: Sequence[str] = ("-O2",),
                   compiler: str | Sequence[str] | None = None,
                   cache_dir: str | Path | None = None) -> ctypes.CDLL:
    """Compile the C ``source`` into a shared library (once per machine: the disk cache,
    keyed by the sha256 of source, compiler and flags) and load it (once per process)
    through the project's one verified loader (manifest and owner checks before ``dlopen``,
    the key compiled into it after; see "Caching" and "Cache permissions" in
    :mod:`solvers.compiled`).

    Parameters
    ----------
    source : str
        A complete C translation unit (CasADi-generated code plus a hand-written driver,
        say); its exported symbols are read with ``ctypes`` by the caller.
    name : str
        Stem of the cached file name (sanitised).
    flags : sequence of str
        Compiler flags (``-shared -fPIC`` are added).

    Returns
    -------
    ctypes.CDLL

    Raises
    ------
    CompilerNotFound
        When no C compiler is found (the message says how to get one).
    CompileError
        When the compiler fails (its command line and error output).
    """
    cc = find_compiler(compiler)
    if cc is None:
        raise CompilerNotFound(f"C library '{name}': {missing_compiler_reason(compiler)}; "
                                      f"{compiler_install_hint()}")
    key = cache_key(source, cc, tuple(flags))
    if key in _C_LIBRARIES:
        return _C_LIBRARIES[key]
    d = Path(cache_dir) if cache_dir is not None else default_cache_dir()

    def load(path: Path, fresh: bool) -> ctypes.CDLL:
        return open_library(path, key, lambda lib, file: lib, fresh_name=fresh)

    lib = cached_library(
        d, library_path(Path("."), name, key).name, key,
        build=lambda path: compile_library(source, path, cc, tuple(flags), key), load=load)
    _C_LIBRARIES[key] = lib
    return lib

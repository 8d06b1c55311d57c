"""``python -m solvers.compiled precompile MODEL.urdf ...``: compile a model's functions ahead
of time (private; the command line of :mod:`solvers.compiled`).

A rigid-body tree compiles its dynamics functions to C on first heavy use, in a background
thread (``multibody.tree``); a short script, a fresh container or each worker of a cluster
then pays the compilation again or runs on CasADi's virtual machine meanwhile. This command
builds the standard functions of each model into the cache directory
(``--cache-dir``, else ``$DYNABLOCKS_CACHE_DIR``, else ``~/.cache/dynablocks/compiled``)
with the flags the tree uses, so that later runs load them at once (a cache hit is keyed by
the generated code, so the same model gives the same key). A cache directory that others
can write is set aside with a warning (``solvers.compiled.CacheSecurityWarning``) and the
directory used instead is printed. It prints one progress line per function and exits with
status 0 on success, 1 when a model cannot be read, a function fails to compile or no
private cache directory is available, 2 when no C compiler is found (the message says how
to get one).

Layering: this is an application entry point, not library code. The model file is read by
the package registered for its suffix (``.urdf``: ``multibody``), imported by name at run
time; the library modules of :mod:`solvers` never import the layers above them.
"""
from __future__ import annotations

import argparse
import importlib
import os
import pathlib
import sys
import time
import warnings
from typing import Callable, Sequence

__all__: list[str] = []  # private module

FUNCTIONS = ("forward_dynamics", "inverse_dynamics", "mass_matrix", "bias_forces",
             "gravity_forces", "qdot", "coriolis_matrix")
"""Functions built by default: those of ``RigidBodyTree.casadi_function``."""

# suffix -> (module imported by name, attribute path of the loader(path, floating_base))
_LOADERS = {".urdf": ("multibody", "RigidBodyTree.from_urdf")}


def _loader(path: pathlib.Path) -> Callable:
    suffix = path.suffix.lower()
    if suffix not in _LOADERS:
        raise ValueError(f"{path}: no model reader for '{suffix}' files "
                         f"(known: {', '.join(sorted(_LOADERS))})")
    module, attr = _LOADERS[suffix]
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m solvers.compiled",
        description="Compiled CasADi functions: ahead-of-time builds into the disk cache.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("precompile", help="compile a model's dynamics functions now",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("models", nargs="+", type=pathlib.Path, help="model files (URDF)")
    p.add_argument("--floating-base", action="store_true",
                   help="attach each model's root link with a free joint")
    p.add_argument("--functions", default=",".join(FUNCTIONS),
                   help=f"comma-separated function names (default: {','.join(FUNCTIONS)})")
    p.add_argument("--cache-dir", type=pathlib.Path, default=None,
                   help="cache directory (default: $DYNABLOCKS_CACHE_DIR or "
                        "~/.cache/dynablocks/compiled)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (see the module docstring)."""
    args = _parser().parse_args(argv)
    from solvers import _compiled_build as build
    # The warning class the library raises: that of the module imported as
    # ``solvers.compiled`` (by the tree), not of ``__main__`` when run with ``python -m``.
    CompilationWarning = importlib.import_module("solvers.compiled").CompilationWarning

    if args.cache_dir is not None:
        os.environ["DYNABLOCKS_CACHE_DIR"] = str(args.cache_dir)
    if build.find_compiler() is None:
        print(f"error: {build.missing_compiler_reason()}. To get one: "
              f"{build.compiler_install_hint()}.", file=sys.stderr)
        return 2
    names = [n.strip() for n in args.functions.split(",") if n.strip()]
    unknown = sorted(set(names) - set(FUNCTIONS))
    if unknown:
        print(f"error: unknown functions {unknown} (known: {', '.join(FUNCTIONS)})",
              file=sys.stderr)
        return 1
    try:   # the directory actually used: a directory others can write is set aside
        cache_dir = build.private_cache_dir(build.default_cache_dir())
    except build.UnsafeCacheError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    os.environ["DYNABLOCKS_CACHE_DIR"] = str(cache_dir)
    print(f"cache directory: {cache_dir}", flush=True)
    status = 0
    for path in args.models:
        try:
            tree = _loader(path)(str(path), floating_base=args.floating_base)
        except (OSError, ValueError, TypeError) as exc:
            print(f"error: {path}: {exc}", file=sys.stderr)
            status = 1
            continue
        for i, name in enumerate(names, 1):
            t0 = time.perf_counter()
            print(f"[{i}/{len(names)}] {path.name}: {name} ...", end=" ", flush=True)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", CompilationWarning)
                tree.casadi_function(name)
                tree.compile([name])
            failed = [w for w in caught if issubclass(w.category, CompilationWarning)]
            if failed:
                print("FAILED", flush=True)
                print(f"error: {failed[0].message}", file=sys.stderr)
                status = 1
            else:
                print(f"done ({time.perf_counter() - t0:.1f} s)", flush=True)
    return status

"""Numerical back ends: numpy/CasADi operations, compiled CasADi calls, LCP solvers,
the compiled contact step and narrow phase, and mathematical programs; ``progress``, the one
progress line of long loops (the lowest layer every package may import).

Submodules are imported on first use (``solvers.ops``, ``solvers.lcp``, ...; PEP 562), so
that the lower layers (``multibody``) can use ``solvers.ops`` without pulling in higher
ones. Every public submodule (a module of this folder whose name does not start with ``_``)
is reachable this way and listed by ``dir(solvers)``, including one added later.
"""

import importlib as _importlib
import pkgutil as _pkgutil

__all__ = ["errors", "ops", "compiled", "lcp", "contact_step", "progress"]


def _public_submodules() -> list:
    return [m.name for m in _pkgutil.iter_modules(__path__) if not m.name.startswith("_")]


def __getattr__(name: str):
    """Import a public submodule on first use."""
    if not name.startswith("_") and name in _public_submodules():
        return _importlib.import_module(f"solvers.{name}")
    raise AttributeError(f"module 'solvers' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | set(_public_submodules()))

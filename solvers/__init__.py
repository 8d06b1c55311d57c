"""Numerical back ends: numpy/CasADi operations, compiled CasADi calls, LCP solvers and
mathematical programs; ``progress``, the one progress line of long loops (the lowest layer
every package may import).

Submodules are imported on first use (``solvers.ops``, ``solvers.lcp``, ...), so that the
lower layers (``multibody``) can use ``solvers.ops`` without pulling in higher ones.
"""

__all__ = ["ops", "compiled", "lcp", "contact_step", "progress"]


def __getattr__(name: str):
    """Import a submodule listed in ``__all__`` on first use."""
    if name in __all__:
        import importlib
        return importlib.import_module(f"solvers.{name}")
    raise AttributeError(f"module 'solvers' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))

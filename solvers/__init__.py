"""Numerical back ends: numpy/CasADi operations, compiled CasADi calls, LCP solvers and
mathematical programs.

Submodules are imported on first use (``solvers.ops``, ``solvers.lcp``, ...), so that the
lower layers (``multibody``) can use ``solvers.ops`` without pulling in higher ones.
"""

__all__ = ["ops", "compiled", "lcp"]

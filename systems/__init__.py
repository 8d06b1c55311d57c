"""Block-diagram systems framework: systems, contexts, ports, diagrams and builders.

Public names
------------
System, LeafSystem, Diagram, DiagramBuilder, Context, InputPort, OutputPort, and the
error classes of :mod:`systems.errors`. Subpackages, imported on first use
(``systems.primitives.Gain`` needs no import of its own) and listed by ``dir(systems)``:
:mod:`systems.primitives`, :mod:`systems.analysis` (simulation), :mod:`systems.controllers`,
:mod:`systems.trajectory_optimization`, :mod:`systems.trajectories`,
:mod:`systems.symbolic`, :mod:`systems.drawing`.
"""
from .builder import DiagramBuilder
from .context import Context, DiagramContext, LeafContext
from .diagram import Diagram
from .errors import (AlgebraicLoopError, DiagramBuildError, InputNotConnectedError,
                     PortSizeError, PortValueError, SymbolicEvaluationError, SystemCallbackError,
                     SystemsError, SystemsWarning)
from .events import State, WitnessFunction
from .leaf_system import FeedthroughInferenceWarning, LeafSystem
from .ports import InputPort, OutputPort
from .system import System

_SUBPACKAGES = ("analysis", "primitives", "controllers", "trajectory_optimization",
                "trajectories", "symbolic", "drawing")
"""Imported on first use (PEP 562): ``import systems; systems.primitives.Gain`` works, and
``dir(systems)`` lists them, without importing scipy-heavy analysis code up front."""

__all__ = [
    "System", "LeafSystem", "Diagram", "DiagramBuilder", "Context", "LeafContext",
    "DiagramContext", "InputPort", "OutputPort", "State", "WitnessFunction",
    "DiagramBuildError", "PortSizeError", "AlgebraicLoopError", "InputNotConnectedError",
    "PortValueError", "SymbolicEvaluationError", "SystemCallbackError",
    "SystemsError", "SystemsWarning", "FeedthroughInferenceWarning", "Simulator", *_SUBPACKAGES,
]


def __getattr__(name: str):
    """``systems.Simulator`` and the subpackages are imported on first use (they build on
    this package)."""
    if name == "Simulator":
        from .analysis.simulator import Simulator
        return Simulator
    if name in _SUBPACKAGES or (not name.startswith("_") and name in _public_submodules()):
        import importlib
        return importlib.import_module(f"systems.{name}")
    raise AttributeError(f"module 'systems' has no attribute {name!r}")


def _public_submodules() -> list:
    """Every public module or subpackage of this folder (one added later included)."""
    import pkgutil
    return [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]


def __dir__():
    return sorted(set(globals()) | set(__all__) | set(_public_submodules()))

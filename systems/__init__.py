"""Block-diagram systems framework: systems, contexts, ports, diagrams and builders.

Public names
------------
System, LeafSystem, Diagram, DiagramBuilder, Context, InputPort, OutputPort, and the
error classes of :mod:`systems.errors`. Subpackages: :mod:`systems.primitives`,
:mod:`systems.analysis` (simulation), :mod:`systems.controllers`, :mod:`systems.drawing`.
"""
from .builder import DiagramBuilder
from .context import Context, DiagramContext, LeafContext
from .diagram import Diagram
from .errors import (AlgebraicLoopError, DiagramBuildError, InputNotConnectedError,
                     PortSizeError, PortValueError, SymbolicEvaluationError, SystemCallbackError)
from .events import State, WitnessFunction
from .leaf_system import FeedthroughInferenceWarning, LeafSystem
from .ports import InputPort, OutputPort
from .system import System

__all__ = [
    "System", "LeafSystem", "Diagram", "DiagramBuilder", "Context", "LeafContext",
    "DiagramContext", "InputPort", "OutputPort", "State", "WitnessFunction",
    "DiagramBuildError", "PortSizeError", "AlgebraicLoopError", "InputNotConnectedError",
    "PortValueError", "SymbolicEvaluationError", "SystemCallbackError",
    "FeedthroughInferenceWarning", "Simulator",
]


def __getattr__(name: str):
    """``systems.Simulator`` is imported on first use (it builds on this package)."""
    if name == "Simulator":
        from .analysis.simulator import Simulator
        return Simulator
    raise AttributeError(f"module 'systems' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))

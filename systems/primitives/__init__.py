"""Primitive blocks (constructor arguments follow Drake's where Drake has the block).

Sources: ConstantVectorSource, Sine, Step, Ramp, TrajectorySource, RandomSource.
Linear: Gain, MatrixGain, Integrator, LinearSystem, AffineSystem, FirstOrderLowPassFilter.
Routing: Adder, Multiplexer, Demultiplexer, PassThrough, Saturation.
Sampled data: ZeroOrderHold, DiscreteTimeDelay.
Functions: FunctionSystem, SymbolicVectorSystem.
Logging: VectorLogSink, LogVectorOutput.
"""
from .discrete import DiscreteTimeDelay, ZeroOrderHold
from .function import FunctionSystem, SymbolicVectorSystem
from .linear import AffineSystem, FirstOrderLowPassFilter, Gain, Integrator, LinearSystem, MatrixGain
from .logging import LogVectorOutput, VectorLog, VectorLogSink
from .random_source import RandomSource
from .routing import Adder, Demultiplexer, Multiplexer, PassThrough, Saturation
from .sources import ConstantVectorSource, Ramp, Sine, Step, TrajectorySource

__all__ = [
    "ConstantVectorSource", "Sine", "Step", "Ramp", "TrajectorySource", "RandomSource",
    "Gain", "MatrixGain", "Integrator", "LinearSystem", "AffineSystem", "FirstOrderLowPassFilter",
    "Adder", "Multiplexer", "Demultiplexer", "PassThrough", "Saturation",
    "ZeroOrderHold", "DiscreteTimeDelay", "FunctionSystem", "SymbolicVectorSystem",
    "VectorLogSink", "VectorLog", "LogVectorOutput",
]

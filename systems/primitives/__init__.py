"""Primitive blocks (constructor arguments follow Drake's where Drake has the block).

Sources: ConstantVectorSource, ConstantValueSource, Sine, Step, Ramp, TrajectorySource,
RandomSource.
Linear: Gain, MatrixGain, Integrator, LinearSystem, AffineSystem, FirstOrderLowPassFilter,
TrajectoryAffineSystem (time-varying), discrete_time_approximation (zero-order hold).
Routing: Adder, Multiplexer, Demultiplexer, PassThrough, Saturation, PortSwitch, Selector,
WrapToSystem.
Sampled data: ZeroOrderHold, DiscreteTimeDelay, DiscreteDerivative, DiscreteTimeIntegrator.
Functions: FunctionSystem, SymbolicVectorSystem.
Logging: VectorLogSink, LogVectorOutput.
"""
from .discretization import DiscreteTimeApproximation, discrete_time_approximation
from .discrete import DiscreteDerivative, DiscreteTimeDelay, DiscreteTimeIntegrator, ZeroOrderHold
from .function import FunctionSystem, SymbolicVectorSystem
from .linear import AffineSystem, FirstOrderLowPassFilter, Gain, Integrator, LinearSystem, MatrixGain
from .logging import LogVectorOutput, VectorLog, VectorLogSink
from .random_source import RandomSource
from .routing import (Adder, Demultiplexer, Multiplexer, PassThrough, PortSwitch, Saturation, Selector,
                      WrapToSystem)
from .sources import ConstantValueSource, ConstantVectorSource, Ramp, Sine, Step, TrajectorySource
from .time_varying import TrajectoryAffineSystem

__all__ = [
    "ConstantVectorSource", "Sine", "Step", "Ramp", "TrajectorySource", "RandomSource",
    "Gain", "MatrixGain", "Integrator", "LinearSystem", "AffineSystem", "FirstOrderLowPassFilter",
    "Adder", "Multiplexer", "Demultiplexer", "PassThrough", "Saturation",
    "ZeroOrderHold", "DiscreteTimeDelay", "DiscreteDerivative", "DiscreteTimeIntegrator",
    "PortSwitch", "Selector", "WrapToSystem", "ConstantValueSource", "TrajectoryAffineSystem",
    "discrete_time_approximation", "DiscreteTimeApproximation",
    "FunctionSystem", "SymbolicVectorSystem",
    "VectorLogSink", "VectorLog", "LogVectorOutput",
]

"""Controllers as systems, and controller design from models.

Public names
------------
PidController, InverseDynamicsController, InverseDynamics, JointImpedanceController,
LinearQuadraticRegulator, DiscreteTimeLinearQuadraticRegulator,
FiniteHorizonLinearQuadraticRegulator, FiniteHorizonLQRResult, TimeVaryingLQRController.
"""
from .lqr import (DiscreteTimeLinearQuadraticRegulator, FiniteHorizonLinearQuadraticRegulator,
                  FiniteHorizonLQRResult, LinearQuadraticRegulator, TimeVaryingLQRController)
from .impedance import JointImpedanceController
from .inverse_dynamics import ControllerError, InverseDynamics, InverseDynamicsController
from .pid import PidController

__all__ = ["PidController", "InverseDynamicsController", "InverseDynamics", "ControllerError",
           "JointImpedanceController", "LinearQuadraticRegulator", "DiscreteTimeLinearQuadraticRegulator",
           "FiniteHorizonLinearQuadraticRegulator", "FiniteHorizonLQRResult",
           "TimeVaryingLQRController"]

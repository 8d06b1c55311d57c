"""Controllers as systems, and controller design from models.

Public names
------------
PidController, PidControlledSystem, InverseDynamicsController, InverseDynamics, JointImpedanceController,
LinearQuadraticRegulator, DiscreteTimeLinearQuadraticRegulator,
FiniteHorizonLinearQuadraticRegulator, FiniteHorizonLQRResult, TimeVaryingLQRController.
"""
from .lqr import (DiscreteTimeLinearQuadraticRegulator, FiniteHorizonLinearQuadraticRegulator,
                  FiniteHorizonLQRResult, LinearQuadraticRegulator, TimeVaryingLQRController)
from .impedance import JointImpedanceController
from .inverse_dynamics import ControllerError, InverseDynamics, InverseDynamicsController
from .mpc import LinearModelPredictiveController
from .operational_space import OperationalSpaceController
from .pid import PidController
from .pid_controlled_system import PidControlledSystem

__all__ = ["PidController", "InverseDynamicsController", "InverseDynamics", "ControllerError",
           "JointImpedanceController", "PidControlledSystem", "OperationalSpaceController",
           "LinearModelPredictiveController", "LinearQuadraticRegulator", "DiscreteTimeLinearQuadraticRegulator",
           "FiniteHorizonLinearQuadraticRegulator", "FiniteHorizonLQRResult",
           "TimeVaryingLQRController"]

"""Actuator blocks: systems that map a plant's state and a command to a generalized force.

:class:`Actuator` is the base (inputs ``state`` and ``command``, output
``generalized_force``); :class:`GeneralizedForceActuator` commands selected joint DOFs with a
gear ratio and effort limits; :class:`DcMotor` drives joints through gears from a voltage,
with its current as state and its rotor inertia reflected to the joints; :class:`PdServo`
is a position servo tuned by bandwidth; :class:`FirstOrderLagActuator` lags its command;
:class:`JointFriction` is viscous and smoothed Coulomb friction for continuous plants;
:class:`SeriesElasticActuator` drives a joint through a spring; :class:`HillMuscle` is a
Hill-type muscle (activation dynamics, force-length, force-velocity) on a moment arm;
:class:`AffineJointActuator` is MuJoCo's fixed-gain, affine-bias actuator (motor, position
and velocity servos) with its control and force ranges.
"""
from .affine import AffineJointActuator
from .base import Actuator
from .dc_motor import DcMotor
from .friction import JointFriction
from .joint import GeneralizedForceActuator
from .lag import FirstOrderLagActuator
from .muscle import HillMuscle
from .series_elastic import SeriesElasticActuator
from .servo import PdServo

__all__ = ["Actuator", "GeneralizedForceActuator", "DcMotor", "PdServo",
           "FirstOrderLagActuator", "JointFriction", "SeriesElasticActuator",
           "HillMuscle", "AffineJointActuator"]

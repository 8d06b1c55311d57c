"""Rigid-body plants: the tree block with actuator, sensor and constraint blocks as one System
(a :class:`~multibody.tree.RigidBodyTree` is itself a System block: ``builder.add_system(tree)``).

Lives here: :class:`RigidBodySystemBase` (blocks, actuation, block contexts, sensor outputs,
state access: everything but the solve; by default the inputs are the actuators' commands
and the outputs the sensors' outputs), :class:`RigidBodyPlant` (the tree block with options:
continuous, no constraints, ``vdot`` by ABA, bitwise the tree's own dynamics),
:class:`RigidBodySystem` (continuous: accelerations and constraint forces solved together,
contact events by witness functions) and :class:`TimeSteppingRigidBodySystem` (discrete:
next velocities and impulses solved together; each step taken by a :class:`StepMethod`,
with a :class:`StepStatus` and a :class:`ContactWarmStart` record). They may import the
tree, geometry, constraints, ``systems``, ``actuators``'s and ``sensors``'s base classes and ``solvers``.
"""
from __future__ import annotations

from .base import RigidBodySystemBase
from .rigid_body_plant import RigidBodyPlant
from .rigid_body_system import (PainleveError, RedundantConstraintWarning, RigidBodySolution,
                                RigidBodySystem)
from ._pivoting_step import PivotingStep
from ._step_method import StepFailure, StepInputs, StepMethod
from .solutions import ContactWarmStart, StepSolution, StepStatus
from .time_stepping import TimeSteppingRigidBodySystem, TimeSteppingWarning

__all__ = ["RigidBodySystemBase", "RigidBodyPlant", "RigidBodySystem", "RigidBodySolution", "PainleveError",
           "RedundantConstraintWarning", "TimeSteppingRigidBodySystem", "StepSolution",
           "TimeSteppingWarning", "StepMethod", "StepInputs", "StepFailure", "PivotingStep",
           "StepStatus", "ContactWarmStart"]

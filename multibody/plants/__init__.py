"""Rigid-body plants: a tree with actuator, sensor and constraint blocks as one System.

Lives here: :class:`RigidBodySystemBase` (blocks, actuation, block contexts, sensor outputs,
state access: everything but the solve), :class:`RigidBodyPlant` (continuous, no constraints: ``vdot`` by ABA),
:class:`RigidBodySystem` (continuous: accelerations and constraint forces solved together,
contact events by witness functions) and :class:`TimeSteppingRigidBodySystem` (discrete:
next velocities and impulses solved together). They may import the tree, geometry,
constraints, ``systems``, ``actuators``'s and ``sensors``'s base classes and ``solvers``.
"""
from __future__ import annotations

from .base import RigidBodySystemBase
from .rigid_body_plant import RigidBodyPlant
from .rigid_body_system import (PainleveError, RedundantConstraintWarning, RigidBodySolution,
                                RigidBodySystem)
from .solutions import StepSolution
from .time_stepping import TimeSteppingRigidBodySystem, TimeSteppingWarning

__all__ = ["RigidBodySystemBase", "RigidBodyPlant", "RigidBodySystem", "RigidBodySolution", "PainleveError",
           "RedundantConstraintWarning", "TimeSteppingRigidBodySystem", "StepSolution",
           "TimeSteppingWarning"]

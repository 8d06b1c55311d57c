"""Constraint-force blocks: one vocabulary for both rigid-body plants.

Lives here: :class:`ConstraintForce` (the base: softening for each plant, ERP/CFM or a
spring-damper or MuJoCo's solref/solimp (:class:`MuJoCoSoftening`) for time stepping,
Baumgarte for continuous time) and the kinds, each defined
once by its position error and Jacobian and usable in :class:`~multibody.plants.RigidBodySystem`
(acceleration-level rows) and :class:`~multibody.plants.TimeSteppingRigidBodySystem`
(velocity-level rows): :class:`BallConstraint`, :class:`WeldConstraint`,
:class:`DistanceConstraint`, :class:`PointOnLineConstraint` (closures between frames),
:class:`JointLimitConstraint`, :class:`PointContactConstraint` (frictional contact between
collision geometries) and :class:`JointFrictionConstraint` (time stepping only); the
kinematics views they are written against (:mod:`~multibody.constraints.kinematics`); the
rows they return (:class:`ConstraintRows`, :class:`ContactPointRows`) and the contact reports
(:class:`ContactResults`). May import the tree, geometry, ``systems`` and ``solvers``; never
the plants.
"""
from .base import (BILATERAL, BOUNDED, COMPLEMENTARITY, EQUALITY, FRICTION_BOX, FRICTION_CONE,
                   UNILATERAL, ConstraintForce, ConstraintRows, baumgarte_gains,
                   softening_from_spring)
from .closure import BallConstraint, DistanceConstraint, PointOnLineConstraint, WeldConstraint
from .contact import PointContactConstraint, tangent_basis
from .contact_results import ContactResults, PointContactResult
from .contact_rows import ContactPointRows
from .joint_friction import JointFrictionConstraint
from .joint_limit import JointLimitConstraint
from .kinematics import StepKinematics, TreeKinematics
from .mujoco_softening import MuJoCoSoftening, mujoco_invweights

__all__ = [
    "ConstraintForce", "ConstraintRows", "ContactPointRows", "StepKinematics", "TreeKinematics",
    "softening_from_spring", "baumgarte_gains",
    "BILATERAL", "UNILATERAL", "BOUNDED", "FRICTION_BOX", "FRICTION_CONE", "EQUALITY",
    "COMPLEMENTARITY",
    "BallConstraint", "WeldConstraint", "DistanceConstraint", "PointOnLineConstraint",
    "JointLimitConstraint", "PointContactConstraint", "tangent_basis", "JointFrictionConstraint",
    "ContactResults", "PointContactResult", "MuJoCoSoftening", "mujoco_invweights",
]

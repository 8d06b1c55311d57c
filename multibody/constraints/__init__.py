"""Time-stepping constraint blocks: rows ``J``, bias and complementarity type per step.

:class:`TimeSteppingConstraintForce` (base, ERP/CFM or spring-damper softening) and its
implementations: :class:`PointContactConstraint` (frictional contact between collision
geometries), :class:`JointLimitConstraint`, :class:`JointFrictionConstraint`, and the
bilateral :class:`BallConstraint`, :class:`WeldConstraint`, :class:`DistanceConstraint`
between frames (loop closures). Used by
:class:`~multibody.plants.TimeSteppingRigidBodySystem`.
"""
from .base import (BILATERAL, BOUNDED, FRICTION_BOX, FRICTION_CONE, UNILATERAL, ConstraintRows,
                   StepKinematics, TimeSteppingConstraintForce, softening_from_spring)
from .closure import BallConstraint, DistanceConstraint, WeldConstraint
from .contact import PointContactConstraint, tangent_basis
from .joint_friction import JointFrictionConstraint
from .joint_limit import JointLimitConstraint
from .contact_results import ContactResults, PointContactResult

__all__ = [
    "TimeSteppingConstraintForce", "ConstraintRows", "StepKinematics", "softening_from_spring",
    "BILATERAL", "UNILATERAL", "BOUNDED", "FRICTION_BOX", "FRICTION_CONE",
    "PointContactConstraint", "tangent_basis", "JointLimitConstraint", "JointFrictionConstraint",
    "ContactResults", "PointContactResult",
    "BallConstraint", "WeldConstraint", "DistanceConstraint",
]

"""Rigid-body modelling: spatial algebra, joints, trees, parsing, dynamics algorithms and plants.

Public names (curated): :class:`RigidBodyTree` and its parts (:class:`Body`, :class:`Frame`,
:class:`GeometryInstance`), the joint types, the error classes, and the ``spatial``,
``kinematics`` and ``dynamics`` modules. Geometry shapes (``multibody.geometry``) and the
URDF parser (``multibody.urdf``) are re-exported when those modules are present.
"""
from __future__ import annotations

from . import dynamics, kinematics, spatial
from .errors import (BodyError, FrameError, InputSizeError, JointError, MultibodyError,
                     TreeError)
from .joints import (JOINT_TYPES, Ball, Euler, Free, Joint, Planar, Prismatic, Revolute, Screw,
                     Translational, Universal, Weld)
from .tree import Body, Frame, GeometryInstance, RigidBodyTree

__all__ = [
    "RigidBodyTree", "Body", "Frame", "GeometryInstance",
    "Joint", "Weld", "Revolute", "Prismatic", "Screw", "Universal", "Euler", "Ball", "Planar",
    "Translational", "Free", "JOINT_TYPES",
    "MultibodyError", "JointError", "BodyError", "FrameError", "TreeError", "InputSizeError",
    "spatial", "kinematics", "dynamics",
]

_LAZY = {"Shape": "geometry", "Sphere": "geometry", "Box": "geometry", "Cylinder": "geometry",
         "Capsule": "geometry", "Halfspace": "geometry", "Mesh": "geometry",
         "DistanceResult": "geometry", "signed_distance": "geometry",
         "ContactPoint": "geometry", "contact_points": "geometry",
         "CollisionFilter": "geometry", "CandidatePair": "geometry",
         "parse_urdf": "urdf", "model_path": "urdf", "URDFError": "urdf",
         "RigidBodyPlant": "plant",
         "RigidBodySystem": "rigid_body_system", "RigidBodySolution": "rigid_body_system",
         "PainleveError": "rigid_body_system", "RedundantConstraintWarning": "rigid_body_system",
         "ContinuousTimeConstraintForce": "continuous_constraints",
         "BallClosure": "continuous_constraints", "WeldClosure": "continuous_constraints",
         "DistanceClosure": "continuous_constraints", "JointLimitForce": "continuous_constraints",
         "PointContactForce": "continuous_constraints",
         "TimeSteppingRigidBodySystem": "time_stepping", "StepSolution": "time_stepping",
         "TimeSteppingWarning": "time_stepping",
         "ContactResults": "contact_results", "PointContactResult": "contact_results",
         "TimeSteppingConstraintForce": "constraints", "PointContactConstraint": "constraints",
         "JointLimitConstraint": "constraints", "JointFrictionConstraint": "constraints",
         "BallConstraint": "constraints", "WeldConstraint": "constraints",
         "DistanceConstraint": "constraints"}
__all__ += sorted(_LAZY)


def __getattr__(name: str):
    """Geometry (``multibody.geometry``), the URDF parser (``multibody.urdf``) and the
    System-making modules (``plant``, ``rigid_body_system``, ``continuous_constraints``,
    ``time_stepping``, ``constraints``, ``contact_results``, which build on ``systems``) are imported on first use, so the core (spatial, joints, tree,
    algorithms) depends on none of them."""
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'multibody' has no attribute {name!r}")
    import importlib
    return getattr(importlib.import_module(f"multibody.{mod}"), name)

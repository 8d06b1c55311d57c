"""Rigid-body modelling: the tree, its geometry, model files, constraints and plants.

Package map (each sub-package's docstring says what lives there and what it may import)::

    multibody.tree         spatial algebra, joints, RigidBodyTree, kinematics and dynamics
    multibody.geometry     shapes, signed distance, contact manifolds, collision filters
    multibody.parsing      URDF, HDM skeleton and marker files -> RigidBodyTree; URDF writer
    multibody.models       shipped URDF files (model_path), small builders, the human model
    multibody.constraints  one constraint vocabulary for both plants (contact, limits, closures)
    multibody.plants       RigidBodyPlant, RigidBodySystem, TimeSteppingRigidBodySystem
    multibody.motion       marker fitting, inverse dynamics with ground contact, energetics
    multibody.visualization  browser viewer block (viser), recordings, HTML export

Layers, lowest first: ``errors`` < ``tree`` < ``geometry`` < ``parsing`` < ``models`` <
``motion`` < ``constraints`` < ``plants`` < ``visualization``. The first six never import
``systems``. The most used names
are re-exported here (``from multibody import RigidBodyTree, RigidBodySystem``); the
System-making ones (constraints, plants) are imported on first use.
"""
from __future__ import annotations

import importlib

from . import geometry, parsing, tree
from .errors import (BodyError, FrameError, InputSizeError, JointError, MultibodyError,
                     MultibodyWarning, SingularMassMatrixError, StepMethodWarning, TreeError)
from .tree import (JOINT_TYPES, Ball, Body, Euler, Frame, Free, GeometryInstance, Joint, Planar,
                   Prismatic, RigidBodyTree, Revolute, Screw, Translational, Universal, Weld,
                   dynamics, kinematics, spatial)

_EAGER = [
    "RigidBodyTree", "Body", "Frame", "GeometryInstance",
    "Joint", "Weld", "Revolute", "Prismatic", "Screw", "Universal", "Euler", "Ball", "Planar",
    "Translational", "Free", "JOINT_TYPES",
    "MultibodyError", "MultibodyWarning", "SingularMassMatrixError",
    "JointError", "BodyError", "FrameError", "TreeError", "InputSizeError",
    "StepMethodWarning",
    "spatial", "kinematics", "dynamics", "tree", "geometry", "parsing",
]

_LAZY = {
    # geometry
    "Shape": "geometry", "Sphere": "geometry", "Box": "geometry", "Cylinder": "geometry",
    "Capsule": "geometry", "Halfspace": "geometry", "Mesh": "geometry",
    "DistanceResult": "geometry", "signed_distance": "geometry",
    "ContactPoint": "geometry", "contact_points": "geometry",
    "CollisionFilter": "geometry", "CandidatePair": "geometry",
    # parsing and models
    "parse_urdf": "parsing", "URDFError": "parsing",
    "model_path": "models", "available_models": "models", "models": None,
    # plants
    "RigidBodyPlant": "plants", "RigidBodySystem": "plants", "RigidBodySolution": "plants",
    "PainleveError": "plants", "RedundantConstraintWarning": "plants",
    "TimeSteppingRigidBodySystem": "plants", "StepSolution": "plants",
    "TimeSteppingWarning": "plants", "plants": None,
    # motion analysis
    "motion": None,
    # constraints
    "constraints": None,
    "ContactResults": "constraints", "PointContactResult": "constraints",
    "ConstraintForce": "constraints", "PointContactConstraint": "constraints",
    "PointOnLineConstraint": "constraints",
    "JointLimitConstraint": "constraints", "JointFrictionConstraint": "constraints",
    "BallConstraint": "constraints", "WeldConstraint": "constraints",
    "DistanceConstraint": "constraints",
    # browser viewer (viser imported only when drawing)
    "visualization": None, "Visualizer": "visualization", "Recording": "visualization",
}

__all__ = _EAGER + sorted(_LAZY)


def __getattr__(name: str):
    """Import the constraint and plant layers (which build on ``systems``) on first use, so
    the tree, geometry and parsers depend on none of them."""
    if name not in _LAZY:
        raise AttributeError(f"module 'multibody' has no attribute {name!r}")
    mod = _LAZY[name]
    if mod is None:
        return importlib.import_module(f"multibody.{name}")
    return getattr(importlib.import_module(f"multibody.{mod}"), name)


def __dir__():
    return sorted(set(globals()) | set(__all__))

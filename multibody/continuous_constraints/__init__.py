"""Continuous-time (acceleration-level) constraint force blocks for
:class:`~multibody.plants.RigidBodySystem`: loop closures between frames,
joint limits and frictional point contact."""
from __future__ import annotations

from .base import COMPLEMENTARITY, EQUALITY, ContinuousTimeConstraintForce, baumgarte_gains
from .closure import BallClosure, DistanceClosure, WeldClosure
from .contact import ContactPointRows, PointContactForce, tangent_basis
from .joint_limit import JointLimitForce

__all__ = ["ContinuousTimeConstraintForce", "EQUALITY", "COMPLEMENTARITY", "baumgarte_gains",
           "BallClosure", "WeldClosure", "DistanceClosure", "JointLimitForce",
           "PointContactForce", "ContactPointRows", "tangent_basis"]

"""The rigid-body tree: spatial algebra, joints, :class:`RigidBodyTree` and its algorithms.

Lives here: :mod:`~multibody.tree.spatial` (Featherstone spatial algebra, [angular; linear]),
the ten joint types (:mod:`~multibody.tree.joints`), :class:`RigidBodyTree` (bodies, joints,
frames, geometry attached to bodies; topology frozen by :meth:`RigidBodyTree.finalize` or the
first algorithm call) and the algorithms written once for numpy and CasADi
(:mod:`~multibody.tree.kinematics`: poses, Jacobians, J-dot v, center of mass;
:mod:`~multibody.tree.dynamics`: RNEA, CRBA, ABA, bias and gravity forces, energies), built
into compiled CasADi functions per tree. A tree is also a System block
(:mod:`~multibody.tree.tree_system`: input ``generalized_force``, output ``state``). May
import :mod:`multibody.errors`, :mod:`solvers` and the System base (``systems`` sits below
``multibody``); never the geometry queries, the parsers or the plants.
"""
from __future__ import annotations

from . import dynamics, kinematics, spatial
from .joints import (JOINT_TYPES, Ball, Euler, Free, Joint, Planar, Prismatic, Revolute, Screw,
                     Translational, Universal, Weld)
from .rigid_body_tree import Body, Frame, GeometryInstance, RigidBodyTree, register_file_loader
from .tree_system import TreeSystem, block_dynamics

__all__ = ["RigidBodyTree", "Body", "Frame", "GeometryInstance", "register_file_loader",
           "Joint", "Weld", "Revolute", "Prismatic", "Screw", "Universal", "Euler", "Ball",
           "Planar", "Translational", "Free", "JOINT_TYPES", "spatial", "kinematics", "dynamics",
           "TreeSystem", "block_dynamics"]

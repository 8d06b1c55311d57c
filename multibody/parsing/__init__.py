"""Model file readers that build a :class:`~multibody.tree.RigidBodyTree`.

Lives here: the URDF reader (:func:`parse_urdf`, :func:`read_urdf_model`, line-numbered
:class:`URDFError`; every reader's error subclasses :class:`ModelParseError`); the HDM / pagoda skeleton reader (:func:`read_skeleton`,
:func:`skeleton_tree`, :class:`SkeletonError`) and marker-placement reader
(:func:`read_marker_set`); the URDF writer (:func:`write_urdf`, with the coordinate maps to the
exported model's order); the SDFormat reader (:func:`parse_sdf`, :class:`SDFError`).
Readers may import the tree and geometry layers, never the plants or ``systems``. Importing
this package registers the URDF reader with :meth:`RigidBodyTree.from_urdf`.
"""
from __future__ import annotations

from ..tree import register_file_loader
from .errors import (MJCFError, MJCFWarning, ModelParseError, ModelParseWarning, SDFError,
                     SDFWarning, URDFError, URDFWarning)
from .urdf import parse_urdf, read_urdf_model
from .mjcf import (MJCFActuator, MJCFModel, MJCFOptions, mjcf_actuators, mjcf_collision_filter,
                   mjcf_contact, mjcf_joint_limits, mjcf_softening, parse_mjcf, read_mjcf_model)
from .sdf import parse_sdf
from .skeleton import (Segment, Skeleton, SkeletonError, SkeletonJoint, parse_skeleton,
                       read_skeleton, skeleton_tree)
from .marker_set import MarkerPlacement, marker_offsets, parse_marker_set, read_marker_set
from .urdf_writer import (configuration_from_urdf_order, configuration_to_urdf_order,
                          urdf_joint_order, velocity_from_urdf_order, velocity_to_urdf_order,
                          write_urdf)

register_file_loader("urdf", parse_urdf)
register_file_loader("mjcf", parse_mjcf)
register_file_loader("sdf", parse_sdf)

__all__ = ["ModelParseError", "ModelParseWarning", "URDFError", "URDFWarning", "SDFError",
           "SDFWarning", "MJCFError", "MJCFWarning", "parse_urdf", "read_urdf_model", "parse_sdf"]
__all__ += ["parse_mjcf", "read_mjcf_model", "MJCFModel", "MJCFOptions", "MJCFActuator",
            "mjcf_actuators", "mjcf_collision_filter", "mjcf_contact", "mjcf_joint_limits",
            "mjcf_softening"]
__all__ += ["SkeletonError", "Segment", "SkeletonJoint", "Skeleton", "parse_skeleton",
            "read_skeleton", "skeleton_tree", "MarkerPlacement", "parse_marker_set",
            "read_marker_set", "marker_offsets", "write_urdf", "urdf_joint_order",
            "configuration_to_urdf_order", "velocity_to_urdf_order",
            "configuration_from_urdf_order", "velocity_from_urdf_order"]

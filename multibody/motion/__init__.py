"""Motion analysis of a tree from marker data: marker fitting, inverse dynamics with ground
contact, energetics.

Lives here: :class:`MarkerFitter` (per-frame inverse kinematics from motion-capture markers,
Levenberg-Marquardt with exact Jacobians, warm start, joint limits, occlusions),
:func:`smooth_trajectory` (``q(t)`` filtered and splined on the configuration manifold into
``q, v, vdot``), :class:`ContactInverseDynamics` (joint torques, ground reaction forces in
friction cones and a minimised residual wrench on the root, one small QP per frame;
:func:`estimate_floor` fits the ground plane) and :func:`joint_work` (joint powers, positive
and absolute work); :func:`marker_set_arrays`, the one check of a marker list against a tree
(also used by :class:`sensors.MarkerSensor`); :func:`fit_segment_scales` (segment scales,
marker offsets and frame poses fitted together; the scaled model with masses from the shapes,
exportable as URDF); :func:`gaussian_pose_prior` (a joint stiffness toward a posture learnt from
a few fitted poses, coupled across axes: the prior of fits with fewer markers). Further
sub-modules load on first use, by name: ``smooth_marker_fit`` (whole-trial fit with temporal
smoothness), ``flat_feet`` (feet flat where they rest), ``foot_calibration``, ``balance``,
``swing_lift``, ``tracking_controller``, ``trajectory_lqr`` (the forward pass's time-varying
LQR: ``LQRWeights``), ``support_limit``, ``contact_allocation``. May import :mod:`multibody.tree`,
:mod:`multibody.parsing`, :mod:`multibody.models`, :mod:`solvers`, casadi and scipy; not
:mod:`sensors` (which imports this package); :mod:`multibody.plants` and the rest of
:mod:`systems` only in :mod:`~multibody.motion.forward_pass` (:class:`ForwardPass`, imported on
first use).
"""
from __future__ import annotations

from .consistent_motion import ConsistentMotion, ConsistentMotionResult
from .contact_inverse_dynamics import (ContactInverseDynamics, ContactInverseDynamicsResult,
                                       Floor, estimate_floor)
from .energetics import JointWork, joint_powers, joint_work
from .errors import (ContactError, ContactWarning, MarkerFitError, MarkerFitWarning, MarkerSetError,
                     MotionError, TrajectoryError)
from .marker_fit import MarkerFitResult, MarkerFitter
from .marker_set import marker_set_arrays
from .pose_prior import GaussianPosePrior, gaussian_pose_prior, shrinkage_intensity
from .scaling import ScalingError, ScalingResult, bone_lengths, fit_segment_scales
from .smoothing import JointTrajectory, smooth_trajectory

__all__ = ["MarkerFitter", "MarkerFitResult", "marker_set_arrays", "JointTrajectory",
           "smooth_trajectory", "ContactInverseDynamics", "ContactInverseDynamicsResult",
           "Floor", "estimate_floor", "JointWork", "joint_powers", "joint_work",
           "MotionError", "MarkerSetError", "MarkerFitError", "TrajectoryError",
           "ContactError", "MarkerFitWarning", "ContactWarning",
           "fit_segment_scales", "ScalingResult", "ScalingError", "bone_lengths"]
__all__ += ["ConsistentMotion", "ConsistentMotionResult"]
__all__ += ["GaussianPosePrior", "gaussian_pose_prior", "shrinkage_intensity"]
# the forward pass builds Systems (multibody.plants, systems): imported on first use
_FORWARD = ("ForwardPass", "ForwardPassResult", "JointTrackingController", "penetration_allowance")
__all__ += list(_FORWARD)


# sub-modules not imported above (the forward pass, its balance feedback, the foot
# calibration, ...) are loaded on first use, found by name in this package's folder
def _submodules() -> set:
    import pkgutil
    return {m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")}


def __getattr__(name):
    if name in _FORWARD or name in _submodules():
        import importlib
        module = importlib.import_module(f"{__name__}.{'forward_pass' if name in _FORWARD else name}")
        return getattr(module, name) if name in _FORWARD else module
    raise AttributeError(f"module 'multibody.motion' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_FORWARD) | _submodules())

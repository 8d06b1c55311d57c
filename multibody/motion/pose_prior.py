"""A Gaussian prior on the joint angles learnt from a few fitted poses: a coupled joint
stiffness toward the subject's posture, for fits that see only some of the segments.

From ``n`` configurations ``q_1 ... q_n`` (e.g. the calibration frames of a capture, fitted
with every marker) :func:`gaussian_pose_prior` takes the posture ``mu`` (the joints' mean on
the configuration manifold, the root's coordinates from a reference) and the deviations
``d_k = ominus(mu, q_k)_J`` on the joint velocity coordinates ``J`` (the free root left out),
their sample covariance ``S = (1/n) sum_k d_k d_k^T`` and a shrunk covariance

.. math::

    \\Sigma_{ii} = \\max(S_{ii}, \\sigma_\\text{min}^2), \\qquad
    \\Sigma_{ij} = (1 - \\lambda) S_{ij} \\quad (i \\ne j),

shrinkage toward the target ``D = diag(S)``, which keeps each axis's own variance and drops the
correlations (Schaefer and Strimmer keep the diagonal as it is: ``lambda D + (1 - lambda) S``
has the diagonal of ``S``), with each variance floored at ``sigma_min^2`` so that an axis
the poses barely move is held no stiffer than one standard deviation of ``sigma_min``. With
fewer poses than joint axes ``S`` is singular; the shrinkage intensity ``lambda`` is by
default the analytic estimate of Schaefer and Strimmer (2005, target "D"),

.. math::

    \\lambda^* = \\frac{\\sum_{i \\ne j} \\widehat{\\mathrm{Var}}(r_{ij})}
                      {\\sum_{i \\ne j} r_{ij}^2}, \\qquad
    \\widehat{\\mathrm{Var}}(r_{ij}) = \\frac{n}{(n-1)^3} \\sum_k (w_{kij} - \\bar w_{ij})^2,

clipped to ``[0, 1]`` (``r_ij`` the sample correlations, ``w_kij`` the products of the
standardised deviations), which needs no tuning and keeps only the correlations the poses
support. The prior's residual matrix is ``W = s C^{-1}`` with ``C C^T = Sigma`` (Cholesky), so
``|W ominus(mu, q)_J|^2 = s^2 d^T Sigma^{-1} d``: ``s`` (m) is the marker error one
standard deviation of the pose is worth. ``W`` is the ``prior_weight`` matrix of
:class:`~multibody.motion.MarkerFitter` (and so of
:class:`~multibody.motion.smooth_marker_fit.SmoothMarkerFitter`): a joint stiffness toward the
posture that couples the axes the way they moved together, so the markers that see some
segments say where the unseen ones are (the hip swings with the foot, the arms against the
legs).

References
----------
J. Schaefer, K. Strimmer, "A shrinkage approach to large-scale covariance matrix estimation
and implications for functional genomics", Statistical Applications in Genetics and
Molecular Biology 4(1), 2005 (target D and the estimate of lambda, table 1 and appendix).
O. Ledoit, M. Wolf, "A well-conditioned estimator for large-dimensional covariance
matrices", Journal of Multivariate Analysis 88, 2004.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from scipy.linalg import solve_triangular

from .errors import MarkerFitError

__all__ = ["GaussianPosePrior", "gaussian_pose_prior", "shrinkage_intensity"]


@dataclass
class GaussianPosePrior:
    """Result of :func:`gaussian_pose_prior` (``nv`` velocity coordinates; the root's rows
    and columns are zero).

    Attributes
    ----------
    posture : (nq,) ndarray
        ``mu``: the joints' mean, the root's coordinates from the reference.
    matrix : (nv, nv) ndarray
        ``W = s C^{-1}``: the ``prior_weight`` of :class:`~multibody.motion.MarkerFitter`.
    covariance : (nv, nv) ndarray
        ``Sigma`` (rad^2 for angles).
    shrinkage : float
        ``lambda``.
    std : (nv,) ndarray
        ``sqrt(diag(S))``: each axis's spread over the poses.
    """

    posture: np.ndarray
    matrix: np.ndarray
    covariance: np.ndarray
    shrinkage: float
    std: np.ndarray


def shrinkage_intensity(D: Any) -> float:
    """Schaefer and Strimmer's ``lambda*`` (module docstring) for deviations ``D`` (n, p).

    Axes without spread (standard deviation below 1e-12) have no correlations and are left
    out.

    Parameters
    ----------
    D : (n, p) array_like
        ``n`` finite samples of ``p`` coordinates (e.g. pose deviations, rad or m).

    Returns
    -------
    float
        1 when fewer than two axes or two samples remain (no correlation can be estimated),
        else ``lambda*`` clipped to ``[0, 1]``: the weight of the diagonal target in the
        shrunk correlation matrix.

    Raises
    ------
    MarkerFitError
        ``D`` not 2-D or not finite.
    """
    D = np.asarray(D, float)
    if D.ndim != 2:
        raise MarkerFitError(f"shrinkage_intensity: D must be a 2-D (n, p) array of samples, "
                             f"got shape {D.shape}")
    if not np.all(np.isfinite(D)):
        bad = ~np.isfinite(D).all(axis=1)
        raise MarkerFitError(f"shrinkage_intensity: D must be finite, not at row "
                             f"{int(np.argmax(bad))}")
    n = D.shape[0]
    Xc = D - D.mean(axis=0)
    sd = Xc.std(axis=0, ddof=1) if n > 1 else np.zeros(D.shape[1])
    keep = sd > 1e-12
    if n < 2 or keep.sum() < 2:
        return 1.0
    Z = Xc[:, keep] / sd[keep]
    Wk = Z[:, :, None] * Z[:, None, :]                          # (n, p, p)
    Wm = Wk.mean(axis=0)
    R = Wm * n / (n - 1)                                        # sample correlations
    var_r = n / (n - 1) ** 3 * np.sum((Wk - Wm) ** 2, axis=0)
    off = ~np.eye(R.shape[0], dtype=bool)
    den = float(np.sum(R[off] ** 2))
    return 1.0 if den == 0 else float(np.clip(np.sum(var_r[off]) / den, 0.0, 1.0))


def gaussian_pose_prior(tree, poses: Any, *, reference_q: Any = None, scale: float = 0.01,
                        min_std: float = np.radians(1.0), shrinkage: Optional[float] = None,
                        mean_iterations: int = 5) -> GaussianPosePrior:
    """The Gaussian pose prior of ``poses`` (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    poses : (n, nq) array_like
        Configurations (n >= 2), e.g. fitted calibration frames.
    reference_q : (nq,) array_like, optional
        Gives the posture's root coordinates and the start of the mean (default: the first
        pose).
    scale : float
        ``s`` > 0 (m): marker error worth one standard deviation.
    min_std : float
        ``sigma_min`` > 0 (rad): the smallest standard deviation of an axis in ``Sigma``.
    shrinkage : float, optional
        ``lambda`` in ``[0, 1]`` (default: :func:`shrinkage_intensity` of the deviations).
    mean_iterations : int
        Iterations of the manifold mean ``mu <- mu (+) mean_k ominus(mu, q_k)`` on the
        joints (one suffices when every joint's velocity is its coordinates' derivative).

    Returns
    -------
    GaussianPosePrior

    Raises
    ------
    MarkerFitError
        Poses of the wrong shape, fewer than two or not finite; a reference of the wrong
        size; ``scale``, ``min_std`` or ``shrinkage`` out of range; a covariance that is not
        positive definite (``lambda = 0`` with fewer poses than axes).
    """
    who = f"gaussian_pose_prior on tree '{tree.name}'"
    Q = np.asarray(poses, float)
    if Q.ndim != 2 or Q.shape[1] != tree.nq or Q.shape[0] < 2 or not np.all(np.isfinite(Q)):
        raise MarkerFitError(f"{who}: poses must be at least 2 finite configurations, shape "
                             f"(n, {tree.nq}) (nq), got {Q.shape}")
    ref = Q[0] if reference_q is None else np.asarray(reference_q, float).ravel()
    if ref.shape != (tree.nq,) or not np.all(np.isfinite(ref)):
        raise MarkerFitError(f"{who}: reference_q must be {tree.nq} finite numbers (nq), got "
                             f"shape {ref.shape}")
    if not (np.isfinite(scale) and scale > 0) or not (np.isfinite(min_std) and min_std > 0):
        raise MarkerFitError(f"{who}: scale and min_std must be > 0, got {scale!r} and "
                             f"{min_std!r}")
    if shrinkage is not None and not 0.0 <= shrinkage <= 1.0:
        raise MarkerFitError(f"{who}: shrinkage must be in [0, 1], got {shrinkage!r}")
    nv = tree.nv
    joint_v = np.array([j.v_start + k for j in tree.joints if j.type != "free"
                        for k in range(j.nv)], dtype=int)
    root_v = np.setdiff1d(np.arange(nv), joint_v)
    mu = ref.copy()
    for _ in range(max(1, int(mean_iterations))):
        step = np.mean([np.asarray(tree.difference(mu, q), float).ravel() for q in Q], axis=0)
        step[root_v] = 0.0
        mu = np.asarray(tree.integrate(mu, step, 1.0), float).ravel()
        if np.max(np.abs(step)) < 1e-12:
            break
    dev = np.array([np.asarray(tree.difference(mu, q), float).ravel() for q in Q])[:, joint_v]
    S = dev.T @ dev / Q.shape[0]
    lam = shrinkage_intensity(dev) if shrinkage is None else float(shrinkage)
    Sig = (1.0 - lam) * (S - np.diag(np.diag(S))) + np.diag(np.maximum(np.diag(S),
                                                                     min_std ** 2))
    ev = np.linalg.eigvalsh(Sig)
    if ev[0] <= 1e-12 * max(ev[-1], min_std ** 2):
        raise MarkerFitError(f"{who}: the covariance of {Q.shape[0]} poses over {joint_v.size} "
                             f"joint axes is not positive definite with shrinkage {lam:g}; "
                             "use a shrinkage > 0")
    C = np.linalg.cholesky(Sig)
    W = np.zeros((nv, nv))
    W[np.ix_(joint_v, joint_v)] = scale * solve_triangular(C, np.eye(joint_v.size), lower=True)
    cov = np.zeros((nv, nv))
    cov[np.ix_(joint_v, joint_v)] = Sig
    std = np.zeros(nv)
    std[joint_v] = np.sqrt(np.diag(S))
    return GaussianPosePrior(mu, W, cov, lam, std)

"""Dynamically consistent motion from marker data: one trajectory optimisation over the whole
trial that trades marker error against the residual wrench on the root.

The motion of a tree with a free root joint is a B-spline ``y(t)`` of its coordinates
(:class:`~multibody.motion.spline_motion.UniformBSpline`, control points ``C``; ``q, v,
vdot`` from :func:`~multibody.motion.spline_motion.spline_state`), evaluated at the ``T``
frames of the capture. Contact points ``c_j`` on the feet push with forces in a linearised
friction cone, ``f_jk = W D^T beta_jk``, ``beta_jk >= 0`` (the cone edges of
:meth:`ContactInverseDynamics.cone_edges`; ``W`` the body weight, so ``beta`` is of order 1). The joint torques are free (fully actuated
joints), so only the root rows of the equations of motion matter; their mismatch is the
residual wrench on the root,

.. math::

    w_k = \\big[\\mathrm{ID}(q_k, v_k, \\dot v_k) - \\textstyle\\sum_j J_j(q_k)^T f_{jk}
    \\big]_{root} \\qquad ([\\text{torque}; \\text{force}] \\text{ in the root frame}),

and the joint rows give the torques ``tau_J``. The problem is

.. math::

    \\min_{C,\\,\\beta \\ge 0} \\; \\frac{1}{N \\sigma_m^2} \\sum_{k,i} \\lVert p_i(q_k) -
    m_{ik} \\rVert^2 + \\frac{1}{T} \\sum_k \\Big( \\frac{\\lVert w_k^F \\rVert^2}{\\sigma_F^2}
    + \\frac{\\lVert w_k^M \\rVert^2}{\\sigma_M^2} + \\sum_j \\frac{f^n_{jk}
    \\lVert v^t_{jk} \\rVert^2}{W \\sigma_v^2} + \\rho \\lVert \\beta_k \\rVert^2
    + \\frac{\\lambda^2}{\\bar M \\sigma_m^2} \\lVert q_{k,J} - q^0_{k,J} \\rVert^2 \\Big)

subject to the **smoothed contact model** ``f^n_jk <= F_max s(phi_j(q_k))``: the normal force
``f^n = n . f`` of a point at height ``phi`` above the floor is bounded by a smooth step
``s`` (C1 cubic) that is 1 up to ``h_0`` and 0 from ``h_1`` on, a relaxed complementarity
``phi f^n = 0`` (a point pushes only where it touches the floor, within the band the marker
data can resolve); a point that pushes and slides pays ``f^n |v^t|^2`` (``v^t`` its speed
along the floor). Joint limits bound the control points (so the whole spline). The sums run
over the ``N`` visible marker samples (``m_ik`` measured, ``p_i`` modelled) and the ``T``
frames; ``W`` is the body weight, ``q^0`` the warm start, ``lambda`` a weak prior (m/rad)
on the joint coordinates. Optional terms keep a rigid foot's contacts (``contact_height_scale``,
``penetration``, ``penetration_scale``: loaded points pulled onto the floor, no point in it).
``support_margin`` applies each point's force at the point inset toward its body's centroid
(the centre of pressure kept that far inside the sole; geometry stays the true points'), and
``offset_scale`` alternates the solve with a closed-form refinement of the marker offsets
(:func:`~multibody.motion.marker_set.refine_marker_offsets`, as AddBiomechanics' marker
step) so that flat, planted feet and the leg markers can agree. HDM walk, two stages from the
band solution (``examples/_human_experiments.RIGID_STAGES``, adaptive barrier): markers 8.47
mm, residual 0.58 N, centre of pressure >= 18.5 mm inside the feet's side edges in every
single-stance frame (without margin and offsets 11.1 mm).

The NLP is built with CasADi (one symbolic function per frame, mapped over the frames, exact first
and second derivatives) and solved by IPOPT. Points far from the floor in the warm start (higher
than ``candidate_height`` or faster than ``candidate_speed``) get no force variable. The warm start
is the spline fitted to the per-frame marker fit and, per frame, the cone coefficients that best
balance the root within the contact model's bounds (bounded least squares, started from the forces
of :class:`ContactInverseDynamics` on it). The basis matrices enter the NLP as sparse matrices, so
the constraint Jacobian keeps the spline's band (each frame sees ``degree + 1`` control points).
IPOPT stops on its own tests or on the stall rule (``stall_tolerance``): the Gauss-Newton Hessian
makes the last digits slow. The result is checked independently: :class:`ContactInverseDynamics` is
solved on the optimised motion (its own forces, same cones, the points the contact model lets push)
and its residual is the one reported.

Why not :class:`~systems.trajectory_optimization.DirectCollocation`: it transcribes a
``System`` through its forward dynamics (here 96 states, contact forces and residual as
inputs, the articulated-body algorithm in every constraint, no place for a marker cost on
occluded data); the inverse-dynamics form needs the six root rows of one RNEA per frame.

References
----------
M. Posa, C. Cantu, R. Tedrake, "A direct method for trajectory optimization of rigid bodies
through contact", IJRR 33(1), 2014 (contact forces as decision variables, relaxed
complementarity). K. Werling et al., "AddBiomechanics: automating model scaling, inverse
kinematics, and inverse dynamics from human motion data through sequential optimization",
PLoS ONE, 2023 (dynamic consistency against markers). A. Waechter, L. T. Biegler, "On the
implementation of an interior-point filter line-search algorithm", Math. Prog. 106, 2006.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Optional, Sequence

import casadi as ca
import numpy as np
from scipy.optimize import nnls
from scipy.sparse import csc_matrix

from solvers.progress import ProgressLine
from .contact_inverse_dynamics import ContactInverseDynamics, Floor, estimate_floor
from .errors import ContactError, MarkerSetError, TrajectoryError
from .marker_set import marker_set_arrays, marker_weight_array, refine_marker_offsets
from .smoothing import JointTrajectory
from .consistent_motion_terms import (IterationMonitor, add_contact_curvature, add_contact_height,
                                      add_level, level_cost, smooth_step,
                                      marker_errors, inset_contact_points, support_margin_pair,
                                      feasible_cone_coefficients, gauss_newton_blocks)
from .spline_hessian import HessianCallback, SplineBlockHessian
from .spline_motion import VQDOT_JOINT_TYPES, UniformBSpline, spline_state
from .consistent_motion_result import ConsistentMotionResult

__all__ = ["ConsistentMotion", "ConsistentMotionResult"]


class ConsistentMotion:
    """Trajectory optimisation of a marker-captured motion for dynamic consistency (module
    docstring).

    Parameters
    ----------
    tree : RigidBodyTree
        Root joint: a free joint from the world; other joints ball, free or ``v = qdot``.
    markers : sequence of (name, body, offset)
        The marker set (e.g. a calibrated :class:`MarkerFitter`'s ``marker_names``,
        ``marker_bodies``, ``marker_offsets`` zipped).
    contact_points : dict
        ``{body: [(3,) point in the body frame, ...]}`` (the feet).
    floor : Floor, optional
        Default: fitted to the warm start's contact points at rest (:func:`estimate_floor`).
    friction, edges : float, int
        Coulomb coefficient and edges of the linearised cone.
    marker_weights : (M,) array_like, optional
    knot_interval : float
        Spacing of the spline knots (s).
    marker_scale, residual_force_scale, residual_torque_scale, slip_speed_scale : float
        ``sigma_m`` (m), ``sigma_F`` (N), ``sigma_M`` (N m), ``sigma_v`` (m/s).
    force_weight : float
        ``rho``, the regularisation of the cone coefficients.
    prior_weight : float
        ``lambda`` (m/rad), the pull of the joint coordinates to the warm start.
    contact_band : (float, float)
        ``h_0 < h_1`` (m) of the smoothed contact model.
    max_force : float, optional
        ``F_max`` per point (N; default twice the body weight).
    candidate_height, candidate_speed : float
        Points higher (m) or faster (m/s) than this in the warm start get no force.
    max_iterations : int
    tolerance : float
        IPOPT's ``tol``.
    hessian : {"gauss-newton", "exact", "limited-memory"}
        The Hessian IPOPT uses: ``2 J^T J`` of the least-squares terms, assembled from
        exact per-frame Jacobians (default; the curvature of the contact constraints is
        left out), CasADi's exact Hessian (slow beyond a few frames) or IPOPT's L-BFGS.
    stall_tolerance, stall_iterations, stall_violation : float, int, float
        The stopping rule besides IPOPT's own tests: stop ("Stalled", counted a success)
        when the best objective of the last ``stall_iterations`` iterations is lower than the
        best before them by at most ``stall_tolerance`` of its value while no contact
        constraint is violated by more than ``stall_violation`` (N). (With the Gauss-Newton
        Hessian IPOPT converges only linearly near the end: many iterations that change
        neither residual nor markers measurably.) ``stall_tolerance=0`` turns it off.
    contact_height_scale : float, optional
        ``sigma_h`` (m) of the loaded-height term ``sum_j f^n_j phi_j^2 / (W sigma_h^2)``
        (per frame, over ``T``): a point that pushes is pulled onto the floor (the flat
        stance of a rigid foot); None (default): off.
    level_scale : float, optional
        ``sigma_l`` (m) of the levelling term, a touching sole level across its width
        (:func:`~multibody.motion.consistent_motion_terms.level_cost`); None (default): off.
    penetration : float, optional
        Bound every point's height at every frame from below, ``phi >= -penetration`` (m;
        constraints in mm, so their violation and ``stall_violation`` compare as mm); None
        (default): no bound.
    penetration_scale : float, optional
        ``sigma_p`` (m) of the soft non-penetration term ``sum_j min(phi_j, 0)^2 /
        sigma_p^2`` (per frame, over ``T``); None (default): off.
    contact_curvature : bool
        Add the convex part of the contact constraints' curvature (times their multipliers)
        to the Gauss-Newton Hessian
        (:func:`~multibody.motion.consistent_motion_terms.add_contact_curvature`).
    support_margin : float or (float, float), optional
        A centre-of-pressure margin (m; or ``(along, across)`` the sole): each point's force
        acts at the point moved this far
        toward its body's point centroid along the sole's axes
        (:func:`~multibody.motion.consistent_motion_terms.inset_contact_points`), while
        heights, slip and penetration stay those of the true points. The centre of
        pressure of a flat foot then lies at least the margin inside its support polygon
        (a rigid foot simulated on the true points does not tip onto an edge); None
        (default): forces at the points.
    offset_scale : float, optional
        ``sigma_o`` (m): refine the marker offsets on the optimised motion
        (:func:`~multibody.motion.marker_set.refine_marker_offsets`, the corrections' prior
        scaled by ``sigma_o`` against the markers' ``sigma_m``) and optimise again from it
        with them, ``offset_rounds`` times; the result's ``marker_offsets`` and marker
        errors are the refined ones (the model's offsets from then on, as a subject
        calibration's). A round whose marker RMS exceeds 1.5 times its own warm start's
        (the round before; a diverged solve) is dropped and ends the rounds (its
        iterations still counted, its status not). None
        (default): the offsets are kept.
    offset_rounds : int
        Refinements when ``offset_scale`` is set (each one more optimisation).
    ipopt_options : dict, optional
        IPOPT options over the defaults (``{"print_level": 5}``; ``{"mu_strategy":
        "adaptive"}`` for a far warm start: the fixed ``mu = 1e-6`` suits a near one).

    Raises
    ------
    ContactError
        What :class:`ContactInverseDynamics` refuses (no free root, unknown bodies, bad
        friction), a bad contact band or scale.
    MarkerSetError
        Markers that do not fit the tree, or bad marker weights.

    Attributes
    ----------
    joint_q : (n,) ndarray of int
        Indices in ``q`` of the joints of :data:`~multibody.motion.spline_motion.VQDOT_JOINT_TYPES`
        (``v = qdot``; not the free root), which ``prior_weight`` pulls to the warm start.
    """

    def __init__(self, tree, markers: Sequence, contact_points: dict, *,
                 floor: Optional[Floor] = None, friction: float = 0.8, edges: int = 4,
                 marker_weights: Any = None, knot_interval: float = 1 / 30,
                 marker_scale: float = 0.01, residual_force_scale: float = 0.5,
                 residual_torque_scale: float = 2.0, slip_speed_scale: float = 0.1,
                 force_weight: float = 1e-3, prior_weight: float = 0.01,
                 contact_band: tuple = (0.04, 0.07), max_force: Optional[float] = None,
                 candidate_height: float = 0.1, candidate_speed: float = 1.0,
                 max_iterations: int = 100, tolerance: float = 1e-6,
                 hessian: str = "gauss-newton", ipopt_options: Optional[dict] = None,
                 stall_tolerance: float = 0.01, stall_iterations: int = 5,
                 stall_violation: float = 1.0, contact_curvature: bool = False,
                 penetration: Optional[float] = None,
                 contact_height_scale: Optional[float] = None,
                 penetration_scale: Optional[float] = None,
                 support_margin: Any = None, offset_scale: Optional[float] = None,
                 offset_rounds: int = 1, level_scale: Optional[float] = None) -> None:
        who = f"ConsistentMotion on tree '{tree.name}'"
        self.tree = tree.finalize()
        h0, h1 = (float(x) for x in contact_band)
        self.cid = ContactInverseDynamics(tree, contact_points, floor=floor, friction=friction,
                                          edges=edges, height_threshold=h1,
                                          speed_threshold=float(candidate_speed))
        self.floor = floor
        self.marker_names, self.marker_bodies, self.marker_offsets = \
            marker_set_arrays(tree, markers, who)
        self.marker_weights = marker_weight_array(marker_weights, len(self.marker_names), who)
        scales = {"knot_interval": knot_interval, "marker_scale": marker_scale,
                  "residual_force_scale": residual_force_scale,
                  "residual_torque_scale": residual_torque_scale,
                  "slip_speed_scale": slip_speed_scale, "candidate_height": candidate_height,
                  "candidate_speed": candidate_speed}
        for name, val in scales.items():
            if not (np.isfinite(val) and val > 0):
                raise ContactError(f"{who}: {name} must be finite and > 0, got {val!r}")
        for name, val in (("force_weight", force_weight), ("prior_weight", prior_weight)):
            if not (np.isfinite(val) and val >= 0):
                raise ContactError(f"{who}: {name} must be finite and >= 0, got {val!r}")
        if not (0 <= h0 < h1):
            raise ContactError(f"{who}: contact_band must be 0 <= h0 < h1 (m), got "
                               f"{contact_band!r}")
        if hessian not in ("gauss-newton", "exact", "limited-memory"):
            raise ContactError(f"{who}: hessian must be 'gauss-newton', 'exact' or "
                               f"'limited-memory', got {hessian!r}")
        self.knot_interval = float(knot_interval)
        self.sigma = (float(marker_scale), float(residual_force_scale),
                      float(residual_torque_scale), float(slip_speed_scale))
        self.force_weight, self.prior_weight = float(force_weight), float(prior_weight)
        self.contact_band = (h0, h1)
        self.weight = self.tree.total_mass() * float(np.linalg.norm(self.tree.gravity))
        self.max_force = 2.0 * self.weight if max_force is None else float(max_force)
        self.candidate_height, self.candidate_speed = float(candidate_height), float(candidate_speed)
        self.max_iterations, self.tolerance, self.hessian = int(max_iterations), float(tolerance), hessian
        self.ipopt_options = dict(ipopt_options or {})
        if not (np.isfinite(stall_tolerance) and stall_tolerance >= 0 and int(stall_iterations) >= 1
                and np.isfinite(stall_violation) and stall_violation >= 0):
            raise ContactError(f"{who}: stall_tolerance and stall_violation must be finite and "
                               f">= 0 and stall_iterations >= 1, got {stall_tolerance!r}, "
                               f"{stall_violation!r}, {stall_iterations!r}")
        self.stall_tolerance, self.stall_iterations = float(stall_tolerance), int(stall_iterations)
        self.stall_violation = float(stall_violation)
        self.contact_curvature = bool(contact_curvature)
        for name, val, low in (("penetration", penetration, 0.0),
                               ("contact_height_scale", contact_height_scale, 1e-300),
                               ("penetration_scale", penetration_scale, 1e-300),
                               ("offset_scale", offset_scale, 1e-300),
                               ("level_scale", level_scale, 1e-300)):
            if val is not None and not (np.isfinite(val) and val >= low):
                raise ContactError(f"{who}: {name} must be None or finite and "
                                   f"{'>=' if low == 0 else '>'} 0, got {val!r}")
            setattr(self, name, None if val is None else float(val))
        if int(offset_rounds) < 1:
            raise ContactError(f"{who}: offset_rounds must be >= 1, got {offset_rounds!r}")
        self.support_margin = support_margin_pair(support_margin, who)
        self.offset_rounds = int(offset_rounds)
        # where the forces act: the points, or the points inset by the margin
        self.force_cid = self.cid if support_margin is None else ContactInverseDynamics(
            tree, inset_contact_points(contact_points, self.support_margin), floor=floor,
            friction=friction, edges=edges, height_threshold=h1,
            speed_threshold=float(candidate_speed))
        self._who = who
        self.joint_q = np.array([j.q_start + c for j in self.tree.joints
                                  if j.type in VQDOT_JOINT_TYPES for c in range(j.nq)], int)
        self._state = self._state_function()

    # ------------------------------------------------------------------ functions
    def _state_function(self) -> ca.Function:
        nq = self.tree.nq
        y, yd, ydd = (ca.SX.sym(n, nq) for n in ("y", "yd", "ydd"))
        q, v, a = spline_state(self.tree, y, yd, ydd)
        return ca.Function("spline_state", [y, yd, ydd], [q, v, a])

    def _frame_functions(self, floor: Floor, T: int, mbar: float, offsets):
        """Per-frame cost and contact constraints, diagnostics, and the Jacobians of the
        Gauss-Newton Hessian (module docstring)."""
        tree, cid = self.tree, self.cid
        nq, nv = tree.nq, tree.nv
        P, E, M = len(cid.points), cid.edges, len(self.marker_names)
        y, yd, ydd = (ca.SX.sym(n, nq) for n in ("y", "yd", "ydd"))
        beta = ca.SX.sym("beta", P * E)
        meas, mw, qref = ca.SX.sym("m", 3 * M), ca.SX.sym("mw", M), ca.SX.sym("qref", nq)
        q, v, a = spline_state(tree, y, yd, ydd)
        tau_id = tree.inverse_dynamics(q, v, a)
        D = ca.DM(cid.cone_edges())                    # (E, 3)
        n = ca.DM(floor.normal)
        poses = {}

        def pose(body):
            if body not in poses:
                poses[body] = tree.body_pose(body, q)
            return poses[body]

        gen = ca.SX.zeros(nv)
        forces, phi, slip, fn, vt_all = [], [], [], [], []
        for j, (body, p) in enumerate(zip(cid.point_bodies, cid.points)):
            Tb = pose(body)
            x = Tb[0:3, 3] + Tb[0:3, 0:3] @ ca.DM(p)
            J = tree.jacobian(body, q, ca.DM(p), "world")[3:6, :]
            f = self.weight * (D.T @ beta[j * E:(j + 1) * E])
            pf = self.force_cid.points[j]                # where the force acts
            Jf = J if self.force_cid is cid else tree.jacobian(body, q, ca.DM(pf), "world")[3:6, :]
            gen += Jf.T @ f
            vel = J @ v
            vt = vel - n * ca.dot(n, vel)
            forces.append(f)
            phi.append(ca.dot(n, x - ca.DM(floor.point)))
            slip.append(ca.dot(vt, vt))
            vt_all.append(vt)
            fn.append(ca.dot(n, f))
        tau = tau_id - gen
        rv = cid.root_v
        res = tau[int(rv[0]):int(rv[-1]) + 1]
        X = []
        for body, o in zip(self.marker_bodies, offsets):
            Tb = pose(body)
            X.append(Tb[0:3, 3] + Tb[0:3, 0:3] @ ca.DM(o))
        X = ca.vertcat(*X)
        e = ca.reshape(X - meas, 3, M)
        phi, slip, fn = ca.vertcat(*phi), ca.vertcat(*slip), ca.vertcat(*fn)
        sm, sF, sM, sv = self.sigma
        W = self.weight
        jq = self.joint_q
        dq = q[jq] - qref[jq] if jq.size else ca.SX(0)
        r0 = tree.joints[0].q_start
        s = y[r0:r0 + 4]
        cost = (ca.sum2(ca.sum1(e ** 2) * mw.T)
                + (ca.sumsqr(res[3:6]) / sF ** 2 + ca.sumsqr(res[0:3]) / sM ** 2
                   + ca.dot(fn, slip) / (W * sv ** 2) + self.force_weight * ca.sumsqr(beta)
                   + (self.prior_weight / sm) ** 2 / mbar * ca.sumsqr(dq)
                   + (ca.dot(s, s) - 1) ** 2) / T)
        if self.contact_height_scale is not None:      # loaded points on the floor
            cost += ca.dot(fn, phi ** 2) / (W * self.contact_height_scale ** 2 * T)
        if self.penetration_scale is not None:         # no point in the floor (soft)
            cost += ca.sumsqr(ca.fmin(phi, 0)) / (self.penetration_scale ** 2 * T)
        cost += level_cost(self, phi, T)               # a touching sole level (off: 0)
        h0, h1 = self.contact_band
        g = fn - self.max_force * smooth_step((phi - h0) / (h1 - h0))
        if self.penetration is not None:                # no point below -penetration (mm)
            g = ca.vertcat(g, 1e3 * (-phi - self.penetration))
        ins = [y, yd, ydd, beta, meas, mw, qref]
        names = ["y", "yd", "ydd", "beta", "m", "mw", "qref"]
        nlp = ca.Function("consistent_frame_cost", ins, [cost], names, ["cost"])
        gfun = ca.Function("consistent_frame_contact", ins, [g], names, ["g"])
        diag = ca.Function("consistent_frame_out", ins, [q, v, a, tau, ca.vertcat(*forces), X,
                                                         phi],
                           names, ["q", "v", "vdot", "tau", "f", "x", "phi"])
        # pieces of the Gauss-Newton Hessian: Jacobians of the least-squares residuals
        z = ca.vertcat(y, yd, ydd, beta)
        jac = ca.Function("consistent_frame_jac", ins,
                          [ca.jacobian(X, y), ca.jacobian(res, z),
                           ca.jacobian(ca.vertcat(*vt_all), ca.vertcat(y, yd)), fn, s,
                           ca.jacobian(phi, y), phi],
                          names, ["Jm", "Jres", "Jvt", "fn", "s", "Jphi", "phi"])
        return nlp, gfun, diag, jac

    # ------------------------------------------------------------------ helpers
    def _check(self, t, positions, q_init):
        tree, who = self.tree, self._who
        t = np.asarray(t, float).ravel()
        X = np.asarray(positions, float)
        Q = np.asarray(q_init, float)
        M = len(self.marker_names)
        T = t.size
        if T < 4 or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
            raise TrajectoryError(f"{who}: t must hold at least 4 finite, strictly increasing "
                                  f"times, got {T}")
        if X.shape != (T, M, 3):
            raise MarkerSetError(f"{who}: positions must have shape (T, M, 3) = ({T}, {M}, 3) "
                                 f"(markers in the order {self.marker_names[:3]}...), got "
                                 f"{X.shape}")
        if Q.shape != (T, tree.nq):
            raise TrajectoryError(f"{who}: q_init must have shape (T, nq) = ({T}, {tree.nq}), "
                                  f"got {Q.shape}")
        bad = ~np.all(np.isfinite(Q), axis=1)
        if bad.any():
            raise TrajectoryError(f"{who}: q_init is not finite at frame {int(np.argmax(bad))}")
        return t, X, Q

    def _evaluate(self, spline, t, C):
        Y, Yd, Ydd = (spline.basis(t, d) @ C for d in (0, 1, 2))
        q, v, a = self._state.map(len(t))(Y.T, Yd.T, Ydd.T)
        return JointTrajectory(t.copy(), np.asarray(q).T, np.asarray(v).T, np.asarray(a).T)

    def _floor(self, traj):
        if self.floor is not None:
            return self.floor
        P, S = [], []
        for q, v in zip(traj.q, traj.v):
            p, _, pd = self.cid.contact_kinematics(q, v)
            P.append(p)
            S.append(np.linalg.norm(pd, axis=1))
        try:
            return estimate_floor(np.array(P), np.array(S))
        except ContactError:
            return Floor(np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, float(np.min(P))]))

    def _bounds(self, K):
        lo, hi = (np.asarray(x, float) for x in self.tree.position_limits())
        lb = np.full(self.tree.nq, -np.inf)
        ub = np.full(self.tree.nq, np.inf)
        jq = self.joint_q
        lb[jq], ub[jq] = lo[jq], hi[jq]
        return np.tile(lb, K), np.tile(ub, K)

    # ------------------------------------------------------------------ solve
    def solve(self, t: Any, positions: Any, q_init: Any, *,
              progress: Optional[bool] = None) -> ConsistentMotionResult:
        """Optimise the motion over the whole trial.

        Parameters
        ----------
        t : (T,) array_like
            Frame times (s), strictly increasing.
        positions : (T, M, 3) array_like
            Measured markers (m, world), in the order of ``markers``; NaN where occluded.
        q_init : (T, nq) array_like
            Warm start, e.g. :meth:`MarkerFitter.fit`'s ``q``.
        progress : bool, optional
            Show IPOPT's iterations on a progress line (default: when stderr is a terminal).

        Returns
        -------
        ConsistentMotionResult

        Raises
        ------
        TrajectoryError
            Times not increasing, ``q_init`` of the wrong shape or not finite.
        MarkerSetError
            ``positions`` of the wrong shape.
        """
        t, X, Q = self._check(t, positions, q_init)
        start, cpu_start = time.perf_counter(), time.process_time()
        offsets = self.marker_offsets
        out = first = self._solve_once(t, X, Q, offsets, self.floor, progress)
        rounds = [first]
        for _ in range(self.offset_rounds if self.offset_scale is not None else 0):
            offsets = refine_marker_offsets(
                self.tree, self.marker_bodies, offsets, out.trajectory.q, X,
                offset_scale=self.offset_scale, marker_scale=self.sigma[0],
                weights=self.marker_weights, who=self._who)
            new = self._solve_once(t, X, out.trajectory.q, offsets, out.floor, progress)
            rounds.append(new)
            if not new.marker_rms <= 1.5 * out.marker_rms:
                break            # a diverged round (vs its own warm start) is dropped; rounds stop
            out = new
        kept = rounds[:next(i for i, r in enumerate(rounds) if r is out) + 1]
        return dataclasses.replace(
            out, marker_rms_before=first.marker_rms_before,
            inverse_dynamics_before=first.inverse_dynamics_before,
            success=all(r.success for r in kept), iterations=sum(r.iterations for r in rounds),
            seconds=time.perf_counter() - start, cpu_seconds=time.process_time() - cpu_start,
            objective_history=[f for r in rounds for f in r.objective_history],
            violation_history=[v for r in rounds for v in r.violation_history])

    def _solve_once(self, t, X, Q, offsets, floor, progress) -> ConsistentMotionResult:
        """One optimisation with the given marker offsets and floor (None: fitted)."""
        start, cpu_start = time.perf_counter(), time.process_time()
        tree, cid = self.tree, self.cid
        T, M, nq = t.size, len(self.marker_names), tree.nq
        P, E = len(cid.points), cid.edges
        # warm start: the spline through the per-frame fit, quaternions sign-continuous
        Q = Q.copy()
        for j in tree.joints:
            if j.type in ("ball", "free"):
                for k in range(1, T):
                    if Q[k, j.q_start:j.q_start + 4] @ Q[k - 1, j.q_start:j.q_start + 4] < 0:
                        Q[k, j.q_start:j.q_start + 4] *= -1
        spline = UniformBSpline(t[0], t[-1], self.knot_interval)
        K = spline.size
        lbc, ubc = self._bounds(K)
        C0 = np.clip(spline.fit(t, Q).ravel(), lbc, ubc).reshape(K, nq)
        warm = self._evaluate(spline, t, C0)
        floor = self._floor(warm) if floor is None else floor
        cid.floor = self.force_cid.floor = floor
        before = self.force_cid.solve(warm, progress=False, active=np.array(  # (at the force
            [cid.active_points(qk, vk) for qk, vk in zip(warm.q, warm.v)]))  # points)
        # candidates and cone coefficients of the warm start
        D = cid.cone_edges()
        cand = np.zeros((T, P), bool)
        beta0 = np.zeros((T, P, E))
        for k in range(T):
            p, _, pd = cid.contact_kinematics(warm.q[k], warm.v[k])
            cand[k] = (floor.height(p) < self.candidate_height) & \
                (np.linalg.norm(pd, axis=1) < self.candidate_speed)
            for j in np.flatnonzero(before.contact_forces[k].any(axis=1)):
                beta0[k, j] = nnls(D.T, before.contact_forces[k, j] / self.weight)[0]
        cand |= before.active
        # a feasible start: no force where the contact model allows none, and the forces of
        # the points in the band re-distributed (one bounded least-squares problem per frame)
        beta0 = feasible_cone_coefficients(self, warm, beta0, cand, floor, D)
        # data
        vis = np.all(np.isfinite(X), axis=2)                       # (T, M)
        nvis = max(int(vis.sum()), 1)
        mw = (vis * self.marker_weights[None, :]) / (nvis * self.sigma[0] ** 2)
        meas = np.where(vis[..., None], X, 0.0).reshape(T, 3 * M)
        nlp, gfun, diag, jac = self._frame_functions(floor, T, nvis / T, offsets)
        data = (meas.T, mw.T, warm.q.T)
        data_dm = tuple(ca.DM(d) for d in data)          # converted once, not per Hessian
        bases = [spline.basis(t, d) for d in (0, 1, 2)]
        # NLP
        Cs = ca.MX.sym("C", nq, K)
        Bs = ca.MX.sym("beta", P * E, T)
        # the bases as sparse matrices: frame k sees only degree + 1 control points, so the
        # constraint Jacobian and the gradient keep that band (dense DMs made every frame's
        # constraints depend on every control point: T x K n structural non-zeros)
        Y, Yd, Ydd = (ca.mtimes(Cs, ca.DM(csc_matrix(b.T))) for b in bases)
        f = ca.sum2(nlp.map(T)(Y, Yd, Ydd, Bs, *(ca.DM(d) for d in data)))
        g = ca.vec(gfun.map(T)(Y, Yd, Ydd, Bs, *(ca.DM(d) for d in data)))
        x = ca.vertcat(ca.vec(Cs), ca.vec(Bs))
        x0 = np.r_[C0.ravel(), beta0.reshape(T, P * E).ravel()]
        lbx = np.r_[lbc, np.zeros(T * P * E)]
        ubx = np.r_[ubc, np.where(np.repeat(cand, E, axis=1), np.inf, 0.0).ravel()]
        hess = SplineBlockHessian(bases, nq, P * E, spline.degree)
        jmap = jac.map(T)

        def gauss_newton(xv, lam_f, lam_g):
            Cv = xv[:nq * K].reshape(K, nq)
            Yv = [b @ Cv for b in bases]
            Jm, Jr, Jv, fn, sq, Jphi, phi = (np.asarray(o) for o in jmap(
                Yv[0].T, Yv[1].T, Yv[2].T, xv[nq * K:].reshape(T, P * E).T, *data_dm))
            H = gauss_newton_blocks(self, Jm, Jr, Jv, fn, sq, mw, T, nvis / T, lam_f)
            if self.contact_height_scale is not None:
                add_contact_height(self, H, Jphi, np.maximum(fn.T, 0.0) / (
                    self.weight * self.contact_height_scale ** 2 * T), lam_f)
            if self.penetration_scale is not None:
                add_contact_height(self, H, Jphi, (phi.T < 0) / (
                    self.penetration_scale ** 2 * T), lam_f)
            add_level(self, H, Jphi, phi, lam_f)
            if self.contact_curvature:
                add_contact_curvature(self, H, Jphi, phi, lam_g.reshape(T, -1)[:, :P], T, P)
            return hess.values(H)
        bar = ProgressLine(self.max_iterations, "consistent motion", enabled=progress, delay=0.5)
        cb = IterationMonitor(g.numel(), bar, self.stall_iterations, self.stall_tolerance,
                       self.stall_violation)
        opts = {"ipopt": {"max_iter": self.max_iterations, "tol": self.tolerance,
                          "print_level": 0, "hessian_approximation": self.hessian,
                          "mu_strategy": "monotone", "mu_init": 1e-6,
                          "nlp_scaling_method": "none", "bound_push": 1e-6,
                          "bound_frac": 1e-6, "acceptable_tol": 1e-4,
                          "acceptable_iter": 5},
                "print_time": False, "iteration_callback": cb}
        opts["ipopt"].update(self.ipopt_options)
        if self.hessian == "gauss-newton":
            hcb = HessianCallback(x.numel(), g.numel(), 0, hess.sparsity, gauss_newton)
            opts["hess_lag"] = hcb
            opts["ipopt"]["hessian_approximation"] = "exact"
        solver = ca.nlpsol("consistent_motion", "ipopt", {"x": x, "f": f, "g": g}, opts)
        sol = solver(x0=x0, lbx=lbx, ubx=ubx, lbg=-np.inf, ubg=0.0)
        bar.close()
        stats = solver.stats()
        xs = np.asarray(sol["x"]).ravel()
        C = xs[:nq * K].reshape(K, nq)
        beta = xs[nq * K:].reshape(T, P * E).T
        traj = self._evaluate(spline, t, C)
        Y, Yd, Ydd = (b @ C for b in bases)
        o = diag.map(T)(Y.T, Yd.T, Ydd.T, beta, *data)
        tau = np.asarray(o[3]).T
        forces = np.asarray(o[4]).T.reshape(T, P, 3)
        Xm = np.asarray(o[5]).T.reshape(T, M, 3)
        phi = np.asarray(o[6]).T
        err = np.where(vis, np.linalg.norm(Xm - np.where(vis[..., None], X, 0.0), axis=2), np.nan)
        e0 = marker_errors(self, warm.q, X, vis, offsets)
        allowed = cand & (phi < self.contact_band[1])
        check = self.force_cid.solve(traj, progress=False, active=allowed)
        rv = cid.root_v
        return ConsistentMotionResult(
            traj, tau, tau[:, rv], forces, err, float(np.sqrt(np.nanmean(e0 ** 2))), check,
            before, floor, "Stalled" if cb.stalled else str(stats.get("return_status", "")),
            bool(cb.stalled or stats.get("success", False)),
            int(stats.get("iter_count", cb.count)), time.perf_counter() - start,
            time.process_time() - cpu_start,
            list(cb.objective), list(cb.max_violation), np.array(offsets, float),
            self.force_cid.points.copy())

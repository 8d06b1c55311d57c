"""Finite-horizon, time-varying LQR around a reference motion of a body standing on its feet
(the forward pass's optional pelvis stabilisation, ``ForwardPass(lqr=LQRWeights(...))``).

The plant is linearised along the reference at every step ``t_n = t_0 + n h`` of the
forward pass, with the joint PD of :class:`~multibody.motion.tracking_controller.
JointTrackingController` inside it and the stance contacts as equality constraints:

.. math::

    (H + h D)\\,v_{n+1} = H v_n + h\\,(S^T c - C(q_n, v_n)) + J_s^T p, \\qquad
    J_s v_{n+1} = -\\epsilon\\, p, \\qquad q_{n+1} = q_n \\oplus h\\,v_{n+1},

``c = u(t_n) - K_p q_{j} + \\delta u`` the command (feedforward table, the PD's stiffness
part, the LQR's correction ``delta u``), ``D`` the PD's implicit damping ``K_d + h K_p`` on
the joints, ``J_s`` the world velocity Jacobians of the contact points the reference loads at
that step (3 rows each; ``-epsilon`` on the KKT system's diagonal, so redundant points --
four corners of a flat foot -- share the impulse by least squares). The state error lives
in the tangent space: ``delta x = (ominus(q_ref, q), v - v_ref)`` (the log map on the free
root and ball joints), and ``A_n, B_n`` are the exact Jacobians (CasADi, forward mode) of
``delta x_{n+1} = ominus(f(x_ref), f(x_ref (+) delta x, delta u))`` at zero. This is a model:
the plant's free-body world-aligned step, the friction cone and the unilateral contacts are
not in it.

The gains come from the backward Riccati recursion (:func:`finite_horizon_lqr`; Drake's
``FiniteHorizonLinearQuadraticRegulator`` in discrete time)

.. math::

    K_n = (R + B_n^T S_{n+1} B_n)^{-1} B_n^T S_{n+1} A_n, \\qquad
    S_n = Q + A_n^T S_{n+1} (A_n - B_n K_n), \\qquad S_N = Q_f,

and ``delta u = -K_n delta x``. The weights (:class:`LQRWeights`): ``Q`` mostly on the root's
pose and velocity (the joints already follow their PD; what drifts is the unactuated pelvis),
``R`` on the joint torques; ``Q_f = Q``. The gains and the reference states are tables over
the frames (the gains sampled at the frame times), looked up by CasADi's linear interpolant
(a binary search and one blend per entry, code-generated with the constant tables), so a
``42 x 96`` gain table costs one matrix-vector product per step.

With ``LQRWeights(contact_force=c)`` the stage cost also prices the change of the held
points' contact impulses, ``dp = P_x dx + P_u du`` (the KKT solve's impulses, linearised
exactly; :mod:`~multibody.motion.impulse_cost`): ``Q += P_x^T W P_x``, ``R += P_u^T W P_u``
and the cross term ``N = P_x^T W P_u``, so the optimal correction prefers corrections that
keep the loaded points pushing (a bilateral model's standard remedy; a one-sided cost is not
quadratic, so the price is symmetric).

On the HDM walk (``benchmarks/bench_forward_pass.py``: rigid references ``/tmp/h62/G`` and
``G2``, swing lift, ankles' PD at 0.35; the gains cost about 25 s of CPU for 684 steps of the
48-velocity body) it replaces the pelvis feedback of :mod:`~multibody.motion.balance` (the
two together fall): ``LQRWeights()`` on ``G`` 18 mm markers, perturbed median 20 mm (the
feedback: 28 and 36 mm). Its model's feet are bolted down where the reference loads them,
the simulated ones tip: on ``G2`` the corrections reach 300-600 N m on a stance ankle's roll
axis and the foot rolls onto its edge (74 mm, median 67 mm). ``hold_body=True,
max_torque=150`` walks both (medians 34 and 37 mm); ``max_height``, ``min_load``, a softer
model, ``joint_torque`` or ``lift_fade`` did not help. Each point's relative load priced
(``contact_force=1``) walks ``G2`` at 23 mm (median 25 mm) but blows up on ``G`` (the
internal impulses between a foot's and its toes' held points make gain spikes); clamped
(``max_torque=150``) ``G`` 16 mm (17 mm), ``G2`` 47 mm (41 mm). Each foot's load and centre
of pressure priced instead (``contact_feet=True, contact_force=3``): ``G`` 21 mm (21 mm),
``G2`` 32 mm (39 mm). Default off (measurements: ``benchmarks/bench_forward_pass.py``).

References
----------
B. D. O. Anderson, J. B. Moore, *Optimal Control: Linear Quadratic Methods*, Prentice Hall,
1990 (ch. 2: the finite-horizon discrete regulator).
R. Tedrake, *Underactuated Robotics*, ch. 8 (time-varying LQR along a trajectory) and
Drake's ``FiniteHorizonLinearQuadraticRegulator``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

import numpy as np

import casadi as ca

from .errors import MotionError
from .impulse_cost import contact_cost_rows, impulse_cost_terms

__all__ = ["LQRWeights", "finite_horizon_lqr", "ConstrainedStep", "lqr_feedback_function",
           "trajectory_gains", "forward_pass_feedback", "held_points",
           "lift_fade_function"]


@dataclass(frozen=True)
class LQRWeights:
    """Weights of the trajectory LQR (module docstring): ``Q`` diagonal in the tangent state
    error, ``R = torque * I`` on the joint torque corrections.

    Attributes
    ----------
    root_rotation, root_position : float
        ``Q`` on the root's rotation (1/rad^2) and position (1/m^2) error.
    root_angular_velocity, root_linear_velocity : float
        ``Q`` on the root's velocity error (s^2/rad^2, s^2/m^2).
    joint_position, joint_velocity : float
        ``Q`` on the joints' errors (the PD already tracks them).
    torque : float
        ``R`` (1/(N m)^2): larger, softer corrections.
    regularization : float
        ``epsilon`` of the contact KKT system (m/s per N s).
    min_load : float
        A contact point is held at a step where the reference loads it with more than this
        normal force (N) (without loads: where it lies within 5 mm of the floor).
    max_torque : float, optional
        Clamp each coordinate's correction to +- this (N m); None: unclamped.
    max_height : float, optional
        With loads: a loaded point is held only while the (swing-lifted) reference also
        carries it within this height (m) of the floor -- a point the reference loads above
        the floor is in the air on the simulated foot; None: the loads alone.
    contact_force : float
        ``c`` of the cost on the held points' impulse changes (:mod:`~multibody.motion.
        impulse_cost`: ``c`` times the squared relative change of each normal load); 0: off.
    contact_force_offset : float
        ``F_0`` (N) of that cost's relative change, ``> 0``.
    contact_force_tangential : float
        Its tangential components' share (0: the normal impulses alone).
    contact_force_state : bool
        Price the whole impulse change ``P_x dx + P_u du`` (``Q``, ``R`` and the cross term
        ``N``); False: the correction's share ``P_u du`` alone (``R`` only).
    contact_feet : bool
        Price each foot's relative load change and centre-of-pressure shift (over
        ``contact_cop_length``, m) instead of each point's load (:func:`~multibody.motion.
        impulse_cost.foot_rows`).
    """

    root_rotation: float = 1e4
    root_position: float = 3e3
    root_angular_velocity: float = 10.0
    root_linear_velocity: float = 10.0
    joint_position: float = 1.0
    joint_velocity: float = 1e-2
    torque: float = 1e-3
    regularization: float = 1e-6
    min_load: float = 20.0
    max_torque: Optional[float] = None
    max_height: Optional[float] = None
    joint_torque: Optional[Mapping] = None
    lift_fade: Optional[float] = None
    hold_body: bool = False
    contact_force: float = 0.0
    contact_force_offset: float = 50.0
    contact_force_tangential: float = 0.0
    contact_force_state: bool = True
    contact_feet: bool = False
    contact_cop_length: float = 0.05

    def __post_init__(self) -> None:
        for name in ("root_rotation", "root_position", "root_angular_velocity",
                     "root_linear_velocity", "joint_position", "joint_velocity", "torque",
                     "regularization", "min_load", "max_torque", "max_height", "lift_fade",
                     "contact_force", "contact_force_offset", "contact_force_tangential",
                     "contact_cop_length"):
            x = getattr(self, name)
            if x is None and name in ("max_torque", "max_height", "lift_fade"):
                continue
            pos = name in ("torque", "max_torque", "lift_fade", "contact_force_offset",
                           "contact_cop_length")
            if not (np.isfinite(x) and x >= 0) or (pos and x <= 0):
                raise MotionError(f"LQRWeights: {name} must be finite and "
                                  f"{'> 0' if pos else '>= 0'}, "
                                  f"got {x!r}")
        for name, f in (self.joint_torque or {}).items():
            if not (np.isfinite(f) and f > 0):
                raise MotionError(f"LQRWeights: joint_torque of joint {name!r} must be finite "
                                  f"and > 0, got {f!r}")

    def r_matrix(self, tree, velocity_indices) -> np.ndarray:
        """``R`` (n, n), diagonal: ``torque`` on the actuated velocities ``velocity_indices``
        (n,), times ``joint_torque``'s factor on those of the named joints of ``tree``.

        Raises
        ------
        JointError
            A ``joint_torque`` joint that is not in ``tree``.
        MotionError
            One that is not actuated.
        """
        vi = np.asarray(velocity_indices, int)
        d = np.full(len(vi), float(self.torque))
        for name, f in (self.joint_torque or {}).items():
            j = tree.get_joint(name)                # JointError names a missing one
            hit = np.isin(vi, np.arange(j.v_start, j.v_start + j.nv))
            if not hit.any():
                raise MotionError(f"LQRWeights: joint_torque names joint {name!r}, which is "
                                  "not actuated")
            d[hit] *= float(f)
        return np.diag(d)

    def q_matrix(self, nv: int, floating: bool) -> np.ndarray:
        """``Q`` (2 nv, 2 nv), diagonal; the root's entries when ``floating`` (rotation
        first, as the free joint's tangent)."""
        d = np.r_[np.full(nv, self.joint_position), np.full(nv, self.joint_velocity)]
        if floating:
            d[:3], d[3:6] = self.root_rotation, self.root_position
            d[nv:nv + 3], d[nv + 3:nv + 6] = self.root_angular_velocity, self.root_linear_velocity
        return np.diag(d)


def finite_horizon_lqr(A, B, Q, R, Qf=None, N=None) -> tuple:
    """Backward Riccati recursion of the discrete time-varying LQR (module docstring), with
    the stage cost ``x^T Q x + 2 x^T N u + u^T R u`` when a cross term ``N`` is given:
    ``K_n = (R + B^T S B)^{-1} (B^T S A + N^T)``, ``S_n = Q + A^T S A - (A^T S B + N) K_n``
    (Drake's ``FiniteHorizonLinearQuadraticRegulatorOptions.N``; ``s`` of scipy's
    ``solve_discrete_are``).

    Parameters
    ----------
    A : (N, nx, nx) array_like
    B : (N, nx, nu) array_like
    Q : (nx, nx) or (N, nx, nx) array_like
        State weight (symmetric, positive semidefinite).
    R : (nu, nu) or (N, nu, nu) array_like
        Input weight (symmetric, positive definite).
    Qf : (nx, nx) array_like, optional
        Final cost ``S_N`` (default ``Q``, or ``Q[-1]``).
    N : (nx, nu) or (N, nx, nu) array_like, optional
        Cross weight (default zero); ``[[Q, N], [N^T, R]]`` positive semidefinite.

    Returns
    -------
    K : (N, nu, nx) ndarray
        ``u_n = -K_n x_n``.
    S : (N + 1, nx, nx) ndarray
        The cost-to-go matrices.

    Raises
    ------
    MotionError
        Shapes that do not match, or ``R + B^T S B`` not positive definite at some step.
    """
    A, B = np.asarray(A, float), np.asarray(B, float)
    if A.ndim != 3 or B.ndim != 3 or A.shape[1] != A.shape[2] or B.shape[:2] != A.shape[:2]:
        raise MotionError(f"finite_horizon_lqr: A must be (N, nx, nx) and B (N, nx, nu); got "
                          f"{A.shape} and {B.shape}")
    T, nx, nu = B.shape
    Q, R = np.asarray(Q, float), np.asarray(R, float)
    X = np.zeros((nx, nu)) if N is None else np.asarray(N, float)
    if Q.shape not in ((nx, nx), (T, nx, nx)) or R.shape not in ((nu, nu), (T, nu, nu)) \
            or (Qf is not None and np.shape(Qf) != (nx, nx)) \
            or X.shape not in ((nx, nu), (T, nx, nu)):
        raise MotionError(f"finite_horizon_lqr: Q and Qf must be ({nx}, {nx}), R ({nu}, "
                          f"{nu}) and N ({nx}, {nu}) (Q, R and N may be one per step); got "
                          f"{Q.shape}, {None if Qf is None else np.shape(Qf)}, {R.shape} "
                          f"and {X.shape}")
    Qs = np.broadcast_to(Q, (T, nx, nx)) if Q.ndim == 2 else Q
    Rs = np.broadcast_to(R, (T, nu, nu)) if R.ndim == 2 else R
    Xs = np.broadcast_to(X, (T, nx, nu)) if X.ndim == 2 else X
    for name, M in (("A", A), ("B", B), ("Q", Q), ("R", R), ("Qf", Qf), ("N", X)):
        if M is not None and not np.all(np.isfinite(M)):
            raise MotionError(f"finite_horizon_lqr: {name} has non-finite entries (a NaN "
                              "linearisation or weight)")
    S = np.empty((T + 1, nx, nx))
    S[T] = Qs[-1] if Qf is None else np.asarray(Qf, float)
    K = np.empty((T, nu, nx))
    for n in range(T - 1, -1, -1):
        SB, SA = S[n + 1] @ B[n], S[n + 1] @ A[n]
        G = Rs[n] + B[n].T @ SB
        try:
            L = np.linalg.cholesky(0.5 * (G + G.T))
        except np.linalg.LinAlgError:
            raise MotionError(f"finite_horizon_lqr: R + B^T S B is not positive definite at "
                              f"step {n} (check R)") from None
        K[n] = np.linalg.solve(L.T, np.linalg.solve(L, B[n].T @ SA + Xs[n].T))
        Sn = Qs[n] + A[n].T @ SA - (SB.T @ A[n] + Xs[n].T).T @ K[n]
        S[n] = 0.5 * (Sn + Sn.T)
    return K, S


class ConstrainedStep:
    """The step of the forward pass's plant with the PD and the stance contacts as
    equality constraints, on CasADi symbols, and its linearisation (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    time_step : float
        h (s).
    q_indices, v_indices : (n,) array_like of int
        The actuated joint coordinates and velocities.
    kp, damping : (n,) array_like
        The PD's stiffness and the implicit damping ``K_d + h K_p`` on ``v_indices``.
    contact_points : dict
        ``{body: (P, 3)}`` in the body frames; the held ones are chosen per step by a 0/1
        weight each (``points`` in order).
    regularization : float
        ``epsilon`` (module docstring).
    """

    def __init__(self, tree, time_step: float, q_indices, v_indices, kp, damping,
                 contact_points: Mapping, regularization: float = 1e-6) -> None:
        self.tree, self.h = tree, float(time_step)
        self.q_indices = np.asarray(q_indices, int)
        self.v_indices = np.asarray(v_indices, int)
        self.points = [(b, np.asarray(p, float)) for b, ps in contact_points.items()
                       for p in np.asarray(ps, float).reshape(-1, 3)]
        nq, nv, n, P = tree.nq, tree.nv, len(self.q_indices), len(self.points)
        q0, z = tree.neutral_configuration(), np.zeros(nv)
        tree.integrate(q0, z, 1.0)
        Hf, Cf = tree.casadi_function("mass_matrix"), tree.casadi_function("bias_forces")
        intf, qdot = tree.casadi_function("integrate"), tree.casadi_function("qdot")
        jac = {}
        for b, _ in self.points:
            if b not in jac:
                tree.jacobian(b, q0)
                jac[b] = tree.casadi_function("jacobian", b, "world")
        D = np.zeros(nv)
        D[self.v_indices] = np.asarray(damping, float)
        S = np.zeros((nv, n))
        S[self.v_indices, np.arange(n)] = 1.0
        kp = np.asarray(kp, float)
        eps = float(regularization)

        q, v, u, w = ca.MX.sym("q", nq), ca.MX.sym("v", nv), ca.MX.sym("u", n), ca.MX.sym("w", P)
        H = Hf(q)
        c = u - ca.DM(kp) * q[self.q_indices.tolist()]
        rhs = ca.mtimes(H, v) + self.h * (ca.mtimes(ca.DM(S), c) - Cf(q, v))
        if P:
            J = ca.vertcat(*[w[i] * jac[b](q, ca.DM(p))[3:, :]
                             for i, (b, p) in enumerate(self.points)])
            KKT = ca.blockcat([[H + ca.diag(ca.DM(self.h * D)), J.T],
                               [J, -eps * ca.DM.eye(3 * P)]])
            sol = ca.solve(KKT, ca.vertcat(rhs, ca.DM.zeros(3 * P)))
            vn, pn = sol[:nv], -sol[nv:]
        else:
            vn, pn = ca.solve(H + ca.diag(ca.DM(self.h * D)), rhs), ca.MX.zeros(0)
        qn = intf(q, vn, self.h)
        self.step = ca.Function("constrained_step", [q, v, u, w], [qn, vn],
                                ["q", "v", "u", "w"], ["q_next", "v_next"])
        """``(q, v, u, w) -> (q_next, v_next)``: ``u`` the command's table value (without
        ``-K_p q``), ``w`` (P,) the held points' 0/1 weights."""
        self.impulses = ca.Function("contact_impulses", [q, v, u, w], [pn],
                                    ["q", "v", "u", "w"], ["p"])
        """``(q, v, u, w) -> p`` (3 P,): the held points' contact impulses ``p`` of the
        step (N s, world frame, ``points`` order; zero on the others)."""
        dq, dv, du = ca.MX.sym("dq", nv), ca.MX.sym("dv", nv), ca.MX.sym("du", n)
        q1, v1 = self.step(q, v, u, w)
        q2, v2 = self.step(q + qdot(q, dq), v + dv, u + du, w)
        dp = self.impulses(q + qdot(q, dq), v + dv, u + du, w) - self.impulses(q, v, u, w)
        # first-order retraction and its inverse (N(q) the qdot map, N^+ = (N^T N)^-1 N^T):
        # the exact first derivatives of the exponential and log maps at zero, without
        # their removable singularity there
        N1 = ca.jacobian(qdot(q1, dv), dv)
        err = ca.vertcat(ca.solve(ca.mtimes(N1.T, N1), ca.mtimes(N1.T, q2 - q1)), v2 - v1, dp)
        z = ca.vertcat(dq, dv, du)
        Jz = ca.substitute(ca.jacobian(err, z), z, ca.DM.zeros(z.shape[0]))
        nx = 2 * nv
        self.linearization = ca.Function(
            "step_linearization", [q, v, u, w],
            [Jz[:nx, :nx], Jz[:nx, nx:], Jz[nx:, :nx], Jz[nx:, nx:]],
            ["q", "v", "u", "w"], ["A", "B", "P_x", "P_u"])
        """``(q, v, u, w) -> (A, B, P_x, P_u)`` (2 nv x 2 nv, 2 nv x n, 3 P x 2 nv, 3 P x n):
        the tangent state error's, and the impulses' ``dp = P_x dx + P_u du``."""

    def linearize(self, q, v, u, w, impulses: bool = False) -> tuple:
        """``(A, B)`` ndarrays at the reference state ``(q, v)``, command table value ``u``
        and held points ``w`` (module docstring); with ``impulses`` also ``(P_x, P_u)``, the
        contact impulses' Jacobians (:attr:`impulses`)."""
        out = tuple(np.asarray(M, float) for M in self.linearization(q, v, u, w))
        return out if impulses else out[:2]


def lqr_feedback_function(tree, times, K, q_ref, v_ref, max_torque=None) -> ca.Function:
    """The correction ``(t, q, v) -> delta u = -K(t) (ominus(q_ref(t), q), v - v_ref(t))``
    with ``K`` (T, n, 2 nv), ``q_ref`` (T, nq), ``v_ref`` (T, nv) tables at ``times`` (T,),
    interpolated linearly (CasADi ``interpolant``, constant data; held outside the span; the
    root quaternion of ``q_ref`` renormalised after interpolation); each entry clamped to
    ``+- max_torque`` when given.

    Returns
    -------
    casadi.Function
        ``(t, q, v) -> du`` (n,), symbolic-capable (SX) and code-generating.
    """
    times = np.asarray(times, float)
    K, q_ref, v_ref = (np.asarray(a, float) for a in (K, q_ref, v_ref))
    T, n, nx = K.shape
    nq, nv = tree.nq, tree.nv
    if nx != 2 * nv or q_ref.shape != (T, nq) or v_ref.shape != (T, nv) or len(times) != T:
        raise MotionError(f"lqr_feedback_function: K must be ({len(times)}, n, {2 * nv}), q_ref "
                          f"({len(times)}, {nq}), v_ref ({len(times)}, {nv}); got {K.shape}, "
                          f"{q_ref.shape}, {v_ref.shape}")
    grid = [list(times)]
    tab = np.hstack([K.reshape(T, -1), q_ref, v_ref])   # a row per time (outputs fastest)
    F = ca.interpolant("lqr_table", "linear", grid, tab.ravel().tolist())
    t, q, v = ca.SX.sym("t"), ca.SX.sym("q", nq), ca.SX.sym("v", nv)
    tc = ca.fmin(ca.fmax(t, float(times[0])), float(times[-1]))
    row = F(tc)
    Kt = ca.reshape(row[:n * nx], nx, n).T
    qr = row[n * nx:n * nx + nq]
    vr = row[n * nx + nq:]
    if tree.joints[0].type == "free":
        qr = ca.vertcat(qr[:4] / ca.norm_2(qr[:4]), qr[4:])
    du = -ca.mtimes(Kt, ca.vertcat(tree.difference(qr, q), v - vr))
    if max_torque is not None:
        du = ca.fmin(ca.fmax(du, -float(max_torque)), float(max_torque))
    return ca.Function("lqr_feedback", [t, q, v], [du], ["t", "q", "v"], ["du"])


def trajectory_gains(step: ConstrainedStep, times, q, v, u, held, Q, R, contact_rows=None,
                     contact_state: bool = True) -> np.ndarray:
    """The time-varying LQR gains along a reference at the frames ``times`` (K,): the model
    ``step`` linearised at every step ``t_0 + n h`` (the reference interpolated: ``q`` along
    the tangent, ``v`` and ``u`` linearly, the held points of the frame at or before), the
    Riccati recursion over the steps (:func:`finite_horizon_lqr`, ``Q_f = Q``), the gains
    taken at the steps nearest the frames; with ``contact_rows`` ``E`` (K, m, 3 P) the cost
    ``|E (P_x dx + P_u du)|^2`` on the impulse changes added per step (the frame's ``E``;
    :mod:`~multibody.motion.impulse_cost`), with ``contact_state`` False on ``P_u du`` alone.

    Parameters
    ----------
    step : ConstrainedStep
    times : (K,) array_like
    q, v : (K, nq), (K, nv) array_like
        The reference motion.
    u : (K, n) array_like
        The controller's table (:meth:`~multibody.motion.forward_pass.ForwardPass.feedforward`).
    held : (K, P) array_like of bool
        The contact points held per frame (``step.points`` order).
    Q, R : (2 nv, 2 nv), (n, n) array_like

    Returns
    -------
    K : (K, n, 2 nv) ndarray
    """
    tree, h = step.tree, step.h
    times = np.asarray(times, float)
    q, v, u = (np.asarray(a, float) for a in (q, v, u))
    held = np.asarray(held, float)
    if held.shape != (len(times), len(step.points)):
        raise MotionError(f"trajectory_gains: held must be ({len(times)}, {len(step.points)}) "
                          f"(frames, contact points), got {held.shape}")
    N = max(1, int(round((times[-1] - times[0]) / h)))
    As, Bs, Qs, Rs, Ns = [], [], [], [], []
    for n in range(N):
        t = times[0] + n * h
        k = int(np.clip(np.searchsorted(times, t + 1e-9, side="right") - 1, 0, len(times) - 2))
        s = (t - times[k]) / (times[k + 1] - times[k])
        qn = np.asarray(tree.integrate(q[k], np.asarray(tree.difference(q[k], q[k + 1]), float)
                                       .ravel(), s), float).ravel()
        args = (qn, (1 - s) * v[k] + s * v[k + 1], (1 - s) * u[k] + s * u[k + 1], held[k])
        A, B, Px, Pu = step.linearize(*args, impulses=True)
        As.append(A)
        Bs.append(B)
        if contact_rows is not None:
            dQ, dR, dN = impulse_cost_terms(Px if contact_state else 0 * Px, Pu,
                                            contact_rows[k])
            Qs.append(Q + dQ)
            Rs.append(R + dR)
            Ns.append(dN)
    if contact_rows is not None:
        K, _ = finite_horizon_lqr(np.array(As), np.array(Bs), np.array(Qs), np.array(Rs), Q,
                                  np.array(Ns))
    else:
        K, _ = finite_horizon_lqr(np.array(As), np.array(Bs), Q, R)
    idx = np.clip(np.round((times - times[0]) / h).astype(int), 0, N - 1)
    return K[idx]


def forward_pass_feedback(fp, weights: LQRWeights, reference, contact_forces=None
                          ) -> ca.Function:
    """The LQR correction of a :class:`~multibody.motion.forward_pass.ForwardPass` ``fp``
    around the ``reference`` ``(q, v, tau)`` (K, nq), (K, nv), (K, nv) at ``fp.times``: its
    (swing-lifted) reference and feedforward table, its PD, its placed contact points held
    where :func:`held_points` says (on the lifted reference).

    Returns
    -------
    casadi.Function
        ``(t, q, v) -> du`` (:func:`lqr_feedback_function`).

    Raises
    ------
    MotionError
        No ``reference``, or ``contact_forces`` not (K, P, 3).
    """
    if reference is None or len(reference) != 3:
        raise MotionError("ForwardPass: lqr needs lqr_reference, the (q, v, tau) to follow")
    tree, (q, v, tau) = fp.tree, reference
    ql, vl = fp.lifted_reference(q, v)
    u = fp.feedforward(ql, vl, tau)
    step = ConstrainedStep(tree, fp.time_step, fp.q_indices, fp.actuated_velocity_indices,
                           fp.kp, fp.kd + fp.time_step * fp.kp, fp.contact_points,
                           weights.regularization)
    held = held_points(fp, weights, ql, contact_forces)
    nv = tree.nv
    Q = weights.q_matrix(nv, fp.floating)
    R = weights.r_matrix(tree, fp.actuated_velocity_indices)
    rows = None
    if weights.contact_force:
        n = np.asarray(fp.floor.normal, float) / np.linalg.norm(fp.floor.normal)
        loads = (np.asarray(contact_forces, float) @ n if contact_forces is not None else
                 np.array([np.asarray(step.impulses(*a), float).reshape(-1, 3) @ n
                           for a in zip(ql, vl, u, held.astype(float))]) / fp.time_step)
        rows = contact_cost_rows(tree, fp.contact_points, ql, loads, held, n, fp.time_step,
                                 weights)
    gains = trajectory_gains(step, fp.times, ql, vl, u, held, Q, R, rows,
                             weights.contact_force_state)
    fb = lqr_feedback_function(tree, fp.times, gains, ql, vl, weights.max_torque)
    if weights.lift_fade is None:
        return fb
    fade = lift_fade_function(fp, tau, held, weights.lift_fade)
    t, qs, vs = ca.SX.sym("t"), ca.SX.sym("q", tree.nq), ca.SX.sym("v", tree.nv)
    return ca.Function("lqr_feedback", [t, qs, vs], [fb(t, qs, vs) + fade(t, qs, vs)],
                       ["t", "q", "v"], ["du"])


def held_points(fp, weights: LQRWeights, q, contact_forces=None) -> np.ndarray:
    """The contact points the LQR's model holds per frame (``fp.contact_points`` order):
    where ``contact_forces`` (K, P, 3) load them with more than ``weights.min_load`` along the
    floor normal and, with ``weights.max_height``, the reference ``q`` (K, nq) carries them
    within that height of ``fp.floor``; without forces: where ``q`` carries them within 5 mm;
    with ``weights.hold_body`` every point of a body that has a held one.

    Returns
    -------
    held : (K, P) ndarray of bool

    Raises
    ------
    MotionError
        ``contact_forces`` not (K, P, 3).
    """
    tree = fp.tree
    points = [(b, p) for b, ps in fp.contact_points.items() for p in np.asarray(ps, float)]
    K, P = len(fp.times), len(points)
    near = None
    if contact_forces is None or weights.max_height is not None:
        limit = 0.005 if contact_forces is None else weights.max_height
        near = np.zeros((K, P), bool)
        for i, qi in enumerate(np.asarray(q, float)):
            for j, (b, p) in enumerate(points):
                T = np.asarray(tree.body_pose(b, qi), float)
                near[i, j] = float(fp.floor.height(T[:3, :3] @ p + T[:3, 3])) < limit
    if contact_forces is None or not P:
        return near if near is not None else np.zeros((K, P), bool)
    F = np.asarray(contact_forces, float)
    if F.shape != (K, P, 3):
        raise MotionError(f"forward_pass_feedback: contact_forces must be ({K}, {P}, 3), "
                          f"got {F.shape}")
    n = np.asarray(fp.floor.normal, float)
    held = F @ (n / np.linalg.norm(n)) > weights.min_load
    held = held & near if near is not None else held
    if weights.hold_body:
        for b in {b for b, _ in points}:
            cols = [j for j, (c, _) in enumerate(points) if c == b]
            held[:, cols] = held[:, cols].any(axis=1, keepdims=True)
    return held


def lift_fade_function(fp, tau, held, height: float) -> ca.Function:
    """The correction that fades a lifted foot's feedforward torque (``LQRWeights.lift_fade``):
    per foot (a contact body of ``fp`` whose parent carries none, with its contact-carrying
    children), ``du_j = -w(t) s(z) tau_j(t)`` on the joints of those bodies, ``w`` the
    reference's share of frames holding one of the foot's points (``held`` (K, P),
    interpolated linearly), ``z`` the lowest simulated point's height above ``fp.floor``,
    ``s(z) = clip(z / h_f - 1, 0, 1)``, ``tau`` (K, nv) the reference's joint torques.

    Returns
    -------
    casadi.Function
        ``(t, q, v) -> du`` (n,) in ``fp.q_indices``'s joint order.
    """
    tree, h = fp.tree, float(height)
    times = np.asarray(fp.times, float)
    vi = np.asarray(fp.actuated_velocity_indices, int)
    bodies = list(fp.contact_points)
    joint_of = {j.child: j for j in tree.joints}
    counts = np.cumsum([0] + [len(np.asarray(fp.contact_points[b]).reshape(-1, 3))
                              for b in bodies])
    t, q = ca.SX.sym("t"), ca.SX.sym("q", tree.nq)
    du = ca.SX.zeros(len(vi))
    tc = ca.fmin(ca.fmax(t, float(times[0])), float(times[-1]))
    held = np.asarray(held, float)
    tau = np.asarray(tau, float)
    for i, b in enumerate(bodies):
        if joint_of[b].parent in fp.contact_points:
            continue                                    # a toe: part of its foot
        group = [b] + [c for c in bodies if joint_of[c].parent == b]
        cols = np.concatenate([np.arange(counts[bodies.index(c)], counts[bodies.index(c) + 1])
                               for c in group])
        zs = []
        for c in group:
            T = tree.body_pose(c, q)
            for p in np.asarray(fp.contact_points[c], float).reshape(-1, 3):
                x = ca.mtimes(T[:3, :3], ca.DM(p)) + T[:3, 3]
                zs.append(ca.dot(x - ca.DM(np.asarray(fp.floor.point, float)),
                                 ca.DM(np.asarray(fp.floor.normal, float))))
        s = ca.fmin(ca.fmax(ca.mmin(ca.vertcat(*zs)) / h - 1.0, 0.0), 1.0)
        pos = np.concatenate([np.searchsorted(vi, np.arange(joint_of[c].v_start,
                                                            joint_of[c].v_start + joint_of[c].nv))
                              for c in group])
        tab = np.hstack([held[:, cols].any(axis=1, keepdims=True).astype(float),
                         tau[:, vi[pos]]])
        F = ca.interpolant(f"lift_fade_{i}", "linear", [list(times)], tab.ravel().tolist())
        row = F(tc)
        du[pos.tolist()] = -row[0] * s * row[1:]
    v = ca.SX.sym("v", tree.nv)
    return ca.Function("lift_fade", [t, q, v], [du], ["t", "q", "v"], ["du"])

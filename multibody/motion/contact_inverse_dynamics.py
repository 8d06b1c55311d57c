"""Inverse dynamics of a floating-base tree with ground contact: joint torques, ground
reaction forces and a residual wrench on the root, one small quadratic program per frame.

For a frame ``(q, v, vdot)`` the recursive Newton-Euler algorithm gives the generalized
force ``tau_ID = H vdot + C`` the motion needs. Contact points ``c_k`` (fixed on foot
bodies) that are on the floor (height below ``height_threshold`` and speed below
``speed_threshold``) may push with a force ``f_k`` in a linearised friction cone
``f_k = D_k beta_k``, ``beta_k >= 0`` (the ``E`` edges ``(n + mu t_e)/|n + mu t_e|`` around
the floor normal ``n``). The equations of motion split into the root rows (the free
joint's 6 coordinates: the wrench on the root body in its own frame) and the joint rows:

.. math::

    \\tau_{ID} = \\begin{bmatrix} w_{res} \\\\ \\tau_J \\end{bmatrix}
               + \\sum_k J_k^T f_k

where ``J_k`` is the world-aligned linear Jacobian of point ``k``, ``tau_J`` the joint torques
and ``w_res = [n_res; f_res]`` the residual wrench on the root (the "waist joint" of Liu,
Cooper and Ballard's human dynamic model: the part of the motion the contact forces cannot
explain). The QP minimises

.. math::

    \\lVert w_{res} \\rVert^2 + \\epsilon_\\tau \\lVert \\tau_J \\rVert^2
    + \\epsilon_f \\lVert f \\rVert^2
    \\quad \\text{over } \\beta \\ge 0, \\quad \\tau_{lo} \\le \\tau_J \\le \\tau_{hi}

a non-negative least-squares problem (Lawson-Hanson active set, ``scipy.optimize.nnls``)
without torque limits, and a convex QP through CasADi's ``conic`` interface (its active-set
solver ``qrqp``) with them. Torque limits only bind what the contact forces can change (the
stance legs); a frame whose limits cannot be met issues a :class:`ContactWarning` and keeps
the solution without limits.

References
----------
R. Featherstone, "Rigid Body Dynamics Algorithms", Springer, 2008, section 5.3 (RNEA).
C. L. Lawson, R. J. Hanson, "Solving Least Squares Problems", SIAM, 1995, chapter 23 (NNLS).
R. Liu, J. Cooper, D. Ballard, "A human dynamic model" (HDM, the waist residual),
https://github.com/EmbodiedCognition/pagoda.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import casadi as ca
import numpy as np
from scipy.optimize import nnls

from solvers.compiled import CompiledFunction
from solvers.progress import ProgressLine
from .errors import ContactError, warn_contact

__all__ = ["Floor", "estimate_floor", "ContactInverseDynamics", "ContactInverseDynamicsResult"]


@dataclass
class Floor:
    """The plane ``n . (x - point) = 0`` (world frame).

    Attributes
    ----------
    normal : (3,) ndarray
        Unit normal pointing up, out of the floor.
    point : (3,) ndarray
        A point of the plane (m).
    """

    normal: np.ndarray
    point: np.ndarray

    def height(self, x: Any) -> np.ndarray:
        """Signed height above the plane of points ``x`` (..., 3) (m)."""
        return (np.asarray(x, float) - self.point) @ self.normal

    @property
    def tilt_degrees(self) -> float:
        """Angle between the normal and the world z axis (degrees)."""
        return float(np.degrees(np.arccos(np.clip(self.normal[2], -1.0, 1.0))))


def estimate_floor(points: Any, speeds: Any, *, speed_threshold: float = 0.2,
                   band: float = 0.02) -> Floor:
    """Fit the floor plane to contact points at rest.

    Samples slower than ``speed_threshold`` and within ``band`` of the lowest of them are
    candidates; the plane ``z = a x + b y + c`` is fitted by least squares and refitted twice
    on the candidates within ``band`` of it (a trimmed fit).

    Parameters
    ----------
    points : (T, P, 3) array_like
        World positions of the contact points over time (m).
    speeds : (T, P) array_like
        Their speeds (m/s).
    speed_threshold, band : float

    Returns
    -------
    Floor

    Raises
    ------
    ContactError
        Shapes that do not match, or fewer than 3 samples at rest.
    """
    X = np.asarray(points, float).reshape(-1, 3)
    s = np.asarray(speeds, float).ravel()
    if s.size != X.shape[0]:
        raise ContactError(f"estimate_floor: {X.shape[0]} points but {s.size} speeds")
    ok = np.isfinite(s) & np.all(np.isfinite(X), axis=1) & (s < speed_threshold)
    C = X[ok]
    if len(C) < 3:
        raise ContactError(f"estimate_floor: {len(C)} contact-point samples slower than "
                           f"{speed_threshold} m/s, at least 3 needed to fit the floor")
    low = np.percentile(C[:, 2], 5)
    C = C[C[:, 2] < low + band]
    coef = np.array([0.0, 0.0, low])
    for _ in range(3):
        A = np.column_stack([C[:, 0], C[:, 1], np.ones(len(C))])
        if len(C) >= 3 and np.linalg.matrix_rank(A) == 3:
            coef = np.linalg.lstsq(A, C[:, 2], rcond=None)[0]
        else:
            coef = np.array([0.0, 0.0, float(np.mean(C[:, 2]))])
        res = np.asarray(points, float).reshape(-1, 3)[ok]
        d = res[:, 2] - (coef[0] * res[:, 0] + coef[1] * res[:, 1] + coef[2])
        keep = np.abs(d) < band
        if keep.sum() < 3:
            break
        C = res[keep]
    n = np.array([-coef[0], -coef[1], 1.0])
    n /= np.linalg.norm(n)
    return Floor(n, np.array([0.0, 0.0, coef[2]]))


@dataclass
class ContactInverseDynamicsResult:
    """Per-frame result of :meth:`ContactInverseDynamics.solve` (T frames, P points).

    Attributes
    ----------
    t : (T,) ndarray
    tau : (T, nv) ndarray
        Generalized forces: the residual wrench on the root in the root's rows (its free
        joint's ``[torque; force]`` in the root frame), the joint torques elsewhere.
    residual : (T, 6) ndarray
        Residual root wrench ``[torque (N m); force (N)]`` in the root frame.
    contact_forces : (T, P, 3) ndarray
        World contact force at each point (N); zero where inactive.
    grf : (T, 3) ndarray
        Total ground reaction force (N, world).
    active : (T, P) ndarray of bool
        Points on the floor.
    point_bodies : list of str
        Body of each contact point.
    weight : float
        Body weight ``m |g|`` (N).
    joint_v : (nj,) ndarray of int
        Velocity indices of the joint (non-root) coordinates.
    """

    t: np.ndarray
    tau: np.ndarray
    residual: np.ndarray
    contact_forces: np.ndarray
    grf: np.ndarray
    active: np.ndarray
    point_bodies: list
    weight: float
    joint_v: np.ndarray

    @property
    def joint_torques(self) -> np.ndarray:
        """Joint torques (T, nj) (N m or N), the non-root rows of ``tau``."""
        return self.tau[:, self.joint_v]

    @property
    def residual_force_rms(self) -> float:
        """RMS of the residual root force magnitude (N)."""
        return float(np.sqrt(np.mean(np.sum(self.residual[:, 3:] ** 2, axis=1))))

    @property
    def residual_torque_rms(self) -> float:
        """RMS of the residual root torque magnitude (N m)."""
        return float(np.sqrt(np.mean(np.sum(self.residual[:, :3] ** 2, axis=1))))

    def body_forces(self, body: str) -> np.ndarray:
        """Total contact force on ``body`` (T, 3) (N, world)."""
        idx = [i for i, b in enumerate(self.point_bodies) if b == body]
        if not idx:
            raise ContactError(f"no contact points on body {body!r}; bodies: "
                               f"{sorted(set(self.point_bodies))}")
        return self.contact_forces[:, idx].sum(axis=1)


class ContactInverseDynamics:
    """Joint torques, ground reaction forces and root residual per frame (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
        A tree whose root joint is a free joint from the world.
    contact_points : dict
        ``{body: [(3,) point in the body frame, ...]}``.
    floor : Floor, optional
        The ground plane (default ``z = 0``); :func:`estimate_floor` fits one.
    friction : float
        Coulomb friction coefficient ``mu`` (finite, > 0).
    edges : int
        Edges of the linearised friction cone (>= 3).
    height_threshold : float
        Points lower than this above the floor may be in contact (m).
    speed_threshold : float
        ... and slower than this (m/s).
    torque_weight, force_weight : float
        ``epsilon_tau`` and ``epsilon_f``: the small regularisation of joint torques and
        contact forces that picks one solution when the feet share the load.
    torque_limits : (nj,) array_like, optional
        Symmetric bounds on the joint torques (the joint rows in velocity order); with them
        each frame is a QP (CasADi ``qrqp``).

    Raises
    ------
    ContactError
        No free root joint, an unknown body, bad points, a non-finite or non-positive
        ``friction``, ``edges < 3``, negative weights or thresholds, torque limits of the
        wrong size.
    """

    def __init__(self, tree, contact_points: dict, *, floor: Optional[Floor] = None,
                 friction: float = 0.8, edges: int = 4, height_threshold: float = 0.03,
                 speed_threshold: float = 0.3, torque_weight: float = 1e-5,
                 force_weight: float = 1e-7, torque_limits: Any = None) -> None:
        who = f"ContactInverseDynamics on tree '{tree.name}'"
        self.tree = tree.finalize()
        root = tree.joints[0] if tree.joints else None
        if root is None or root.type != "free" or root.parent != "world":
            raise ContactError(f"{who}: the root joint must be a free joint from the world "
                               f"(got {getattr(root, 'type', None)!r})")
        self.root_v = np.arange(root.v_start, root.v_start + 6)
        self.joint_v = np.setdiff1d(np.arange(tree.nv), self.root_v)
        bodies, pts = [], []
        for body, plist in dict(contact_points).items():
            try:
                tree.get_body(body)
            except (KeyError, ValueError):
                raise ContactError(f"{who}: contact points on {body!r}, which is not a body of "
                                   "the tree") from None
            for p in plist:
                p = np.asarray(p, float).ravel()
                if p.shape != (3,) or not np.all(np.isfinite(p)):
                    raise ContactError(f"{who}: contact point on {body!r} must be 3 finite "
                                       f"numbers, got {p!r}")
                bodies.append(body)
                pts.append(p)
        if not pts:
            raise ContactError(f"{who}: no contact points given")
        if not (np.isfinite(friction) and friction > 0) or int(edges) < 3:
            raise ContactError(f"{who}: friction must be finite and > 0 and edges >= 3, got "
                               f"{friction!r}, {edges!r}")
        for name, val in (("height_threshold", height_threshold),
                          ("speed_threshold", speed_threshold),
                          ("torque_weight", torque_weight), ("force_weight", force_weight)):
            if not np.isfinite(val) or val < 0:
                raise ContactError(f"{who}: {name} must be finite and >= 0, got {val!r}")
        self.point_bodies, self.points = bodies, np.array(pts)
        self.floor = floor if floor is not None else Floor(np.array([0.0, 0, 1]), np.zeros(3))
        self.friction, self.edges = float(friction), int(edges)
        self.height_threshold, self.speed_threshold = float(height_threshold), float(speed_threshold)
        self.torque_weight, self.force_weight = float(torque_weight), float(force_weight)
        nj = self.joint_v.size
        if torque_limits is None:
            self.torque_limits = None
        else:
            lim = np.asarray(torque_limits, float).ravel()
            if lim.shape != (nj,) or np.any(~(lim > 0)):
                raise ContactError(f"{who}: torque_limits must be {nj} numbers > 0 (the joint "
                                   f"coordinates in velocity order), got shape {lim.shape}")
            self.torque_limits = lim
        self._kin = CompiledFunction(self._build_function())
        self._qp = None

    # ------------------------------------------------------------------ pieces
    def _build_function(self) -> ca.Function:
        tree = self.tree
        q = ca.SX.sym("q", tree.nq)
        v = ca.SX.sym("v", tree.nv)
        P, J = [], []
        poses = {}
        for body, p in zip(self.point_bodies, self.points):
            if body not in poses:
                poses[body] = tree.body_pose(body, q)
            T = poses[body]
            P.append(T[0:3, 3] + T[0:3, 0:3] @ ca.DM(p))
            J.append(tree.jacobian(body, q, ca.DM(p), "world")[3:6, :])
        Pv, Jv = ca.vertcat(*P), ca.vertcat(*J)
        return ca.Function("contact_kinematics", [q, v], [Pv, Jv, Jv @ v],
                           ["q", "v"], ["p", "J", "pdot"])

    def cone_edges(self) -> np.ndarray:
        """Unit edges (E, 3) of the linearised friction cone around the floor normal."""
        n = self.floor.normal
        a = np.array([1.0, 0, 0]) if abs(n[0]) < 0.9 else np.array([0.0, 1, 0])
        t1 = a - (a @ n) * n
        t1 /= np.linalg.norm(t1)
        t2 = np.cross(n, t1)
        ang = 2 * np.pi * np.arange(self.edges) / self.edges
        D = n[None, :] + self.friction * (np.cos(ang)[:, None] * t1 + np.sin(ang)[:, None] * t2)
        return D / np.linalg.norm(D, axis=1, keepdims=True)

    def contact_kinematics(self, q: Any, v: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """World positions (P, 3), Jacobians (3P, nv) and velocities (P, 3) of the points."""
        p, J, pd = self._kin(np.asarray(q, float), np.asarray(v, float))
        return np.asarray(p).reshape(-1, 3), np.asarray(J), np.asarray(pd).reshape(-1, 3)

    def active_points(self, q: Any, v: Any) -> np.ndarray:
        """Which points (P,) are on the floor: height below ``height_threshold`` and speed
        below ``speed_threshold``."""
        p, _, pd = self.contact_kinematics(q, v)
        return (self.floor.height(p) < self.height_threshold) & \
            (np.linalg.norm(pd, axis=1) < self.speed_threshold)

    # ------------------------------------------------------------------ one frame
    def solve_frame(self, q: Any, v: Any, vdot: Any, active: Any = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Solve one frame.

        Parameters
        ----------
        q, v, vdot : array_like
            (nq,), (nv,), (nv,).
        active : (P,) array_like of bool, optional
            Points allowed to push (default :meth:`active_points`).

        Returns
        -------
        tau : (nv,) ndarray
            Residual root wrench in the root rows, joint torques elsewhere.
        forces : (P, 3) ndarray
            World contact forces (N).
        residual : (6,) ndarray
            ``[torque; force]`` residual on the root, root frame.
        """
        q, v, vdot = (np.asarray(x, float).ravel() for x in (q, v, vdot))
        tau_id = np.asarray(self.tree.inverse_dynamics(q, v, vdot), float).ravel()
        p, J, pd = self.contact_kinematics(q, v)
        if active is None:
            active = (self.floor.height(p) < self.height_threshold) & \
                (np.linalg.norm(pd, axis=1) < self.speed_threshold)
        active = np.asarray(active, bool).ravel()
        Pn, E = len(self.points), self.edges
        D = self.cone_edges()                                    # (E, 3)
        forces = np.zeros((Pn, 3))
        beta = np.zeros(Pn * E)
        if active.any() or self.torque_limits is not None:
            # generalized-force columns of every edge of every point: (nv, P E)
            G = np.einsum("pkn,ek->npe", J.reshape(Pn, 3, -1), D).reshape(self.tree.nv, Pn * E)
            if self.torque_limits is None:
                cols = np.flatnonzero(np.repeat(active, E))
                A, b = self._lsq(G[:, cols], tau_id, len(cols))
                beta[cols] = nnls(A, b, maxiter=50 * max(len(cols), 1))[0]
            else:
                beta = self._solve_qp(G, tau_id, np.repeat(active, E))
            forces = (beta.reshape(Pn, E) @ D)
            gen = G @ beta
        else:
            gen = np.zeros(self.tree.nv)
        tau = tau_id - gen
        return tau, forces, tau[self.root_v]

    def _lsq(self, G, tau_id, ncol):
        sw_t, sw_f = np.sqrt(self.torque_weight), np.sqrt(self.force_weight)
        A = np.vstack([G[self.root_v], sw_t * G[self.joint_v], sw_f * np.eye(ncol)])
        b = np.concatenate([tau_id[self.root_v], sw_t * tau_id[self.joint_v], np.zeros(ncol)])
        return A, b

    def _solve_qp(self, G, tau_id, allowed):
        n = G.shape[1]
        A, b = self._lsq(G, tau_id, n)
        H = A.T @ A
        g = -A.T @ b
        Gj = G[self.joint_v]
        if self._qp is None:
            self._qp = ca.conic("contact_qp", "qrqp",
                                {"h": ca.Sparsity.dense(n, n), "a": ca.Sparsity.dense(*Gj.shape)},
                                {"print_iter": False, "print_header": False,
                                 "print_info": False, "error_on_fail": False})
        tj = tau_id[self.joint_v]
        lim = self.torque_limits
        sol = self._qp(h=H, g=g, a=Gj, lbx=np.zeros(n), ubx=np.where(allowed, np.inf, 0.0),
                       lba=tj - lim, uba=tj + lim)
        if not self._qp.stats().get("success", False):
            warn_contact(f"ContactInverseDynamics on tree '{self.tree.name}': the torque limits "
                         "cannot be met at this frame; solved without them")
            beta = np.zeros(n)
            cols = np.flatnonzero(allowed)
            A, b = self._lsq(G[:, cols], tau_id, len(cols))
            beta[cols] = nnls(A, b, maxiter=50 * max(len(cols), 1))[0]
            return beta
        return np.maximum(np.asarray(sol["x"]).ravel(), 0.0)

    # ------------------------------------------------------------------ a trial
    def solve(self, trajectory, *, progress: Optional[bool] = None, active: Any = None
              ) -> ContactInverseDynamicsResult:
        """Solve every frame of a :class:`~multibody.motion.JointTrajectory`.

        Parameters
        ----------
        trajectory : JointTrajectory
            ``t``, ``q``, ``v``, ``vdot`` (from :func:`~multibody.motion.smooth_trajectory`).
        progress : bool, optional
            Show a progress bar (default: when stderr is a terminal).
        active : (T, P) array_like of bool, optional
            Points allowed to push at each frame (default: :meth:`active_points`, the
            height and speed thresholds).

        Returns
        -------
        ContactInverseDynamicsResult

        Raises
        ------
        ContactError
            A trajectory whose sizes do not match the tree, a non-finite sample (the
            frame is named), or ``active`` of the wrong shape.
        """
        t, Q, V, A = trajectory.t, trajectory.q, trajectory.v, trajectory.vdot
        T = len(t)
        if Q.shape != (T, self.tree.nq) or V.shape != (T, self.tree.nv) or A.shape != V.shape:
            raise ContactError(f"ContactInverseDynamics on tree '{self.tree.name}': trajectory "
                               f"shapes q {Q.shape}, v {V.shape}, vdot {A.shape} do not match "
                               f"T = {T}, nq = {self.tree.nq}, nv = {self.tree.nv}")
        for name, arr in (("q", Q), ("v", V), ("vdot", A)):
            bad = ~np.all(np.isfinite(arr), axis=1)
            if bad.any():
                raise ContactError(f"ContactInverseDynamics on tree '{self.tree.name}': {name} "
                                   f"is not finite at frame {int(np.argmax(bad))} (t = "
                                   f"{float(t[int(np.argmax(bad))]):g} s)")
        Pn = len(self.points)
        if active is not None:
            active = np.asarray(active, bool)
            if active.shape != (T, Pn):
                raise ContactError(f"ContactInverseDynamics on tree '{self.tree.name}': active "
                                   f"must have shape (T, P) = ({T}, {Pn}), got {active.shape}")
        tau = np.zeros((T, self.tree.nv))
        res = np.zeros((T, 6))
        F = np.zeros((T, Pn, 3))
        act = np.zeros((T, Pn), bool)
        bar = ProgressLine(T, "inverse dynamics", enabled=progress, delay=0.5,
                           note_format=f"{{:.0f}}/{T} frames")
        for k in range(T):
            act[k] = self.active_points(Q[k], V[k]) if active is None else active[k]
            tau[k], F[k], res[k] = self.solve_frame(Q[k], V[k], A[k], act[k])
            bar.update(k + 1)
        bar.close()
        weight = self.tree.total_mass() * float(np.linalg.norm(self.tree.gravity))
        return ContactInverseDynamicsResult(np.asarray(t, float).copy(), tau, res, F,
                                            F.sum(axis=1), act, list(self.point_bodies),
                                            weight, self.joint_v.copy())

"""``TimeSteppingRigidBodySystem``: a rigid-body tree with actuators, sensors and
time-stepping constraint forces (contact, joint limits, loop closures, joint friction) as one
discrete-time System.

Every ``time_step`` h the periodic discrete update solves, for the next velocity ``vn``
and the constraint impulses ``p`` together,

.. math::

    (H(q) + h D)(v_n - v) = h\\,(\\tau_{act} + \\tau_{passive}(q, v) - C(q, v)) + J^T p ,

with every constraint row ``w = J v_n + b + cfm/h p`` complementary to ``p``
(:mod:`multibody.constraints.base`; ``D`` the joint damping, taken implicitly), as an LCP
or boxed LCP over the Delassus operator ``J (H + h D)^{-1} J^T + diag(cfm/h)``
(:mod:`multibody.plants._time_stepping_solve`); then ``q_n = q (+) h N(q) v_n``
(:meth:`TimeSteppingRigidBodySystem.integrate`: exponential map on quaternions, a free
body's position along ``h R v``). With ``project_positions`` (default), the position
errors of the rigid bilateral blocks (closures, welds without CFM or spring softening)
are then removed by up to three Gauss-Newton steps
``dq = -H^{-1} J^T (J H^{-1} J^T)^+ phi(q_n)`` (post-stabilization, Cline & Pai 2003;
:mod:`multibody.plants._ts_projection`), so loop closures do not drift.

Free bodies: their velocities are body-frame (the tree's convention); the step is taken
in world-aligned coordinates, as Drake does for free bodies (the rotating-frame term of
``C`` is removed and ``v_n`` is re-expressed in the body frame at ``t + h``), so a
tumbling body keeps its world velocity and a rolling ball keeps its speed.

Warm start: the previous step's impulses, by row key (contacts: geometry pair and point),
seed the pivoting solvers. It is kept in the context's memory (``"warm_start"``); it is only
a hint: every solution is verified and a failed warm start is retried cold.

The compiled step (default where it applies)
--------------------------------------------
With one :class:`~multibody.constraints.PointContactConstraint` (friction ``"cone"``) whose
pairs have closed-form points (halfspace-sphere, halfspace-box, sphere-sphere) and joints that
integrate as ``q + h v`` or by a quaternion's exponential map, a step is two compiled calls:
the fused dynamics/kinematics function and the C kernel of :mod:`solvers.contact_step`
(candidates, rows, 3 x 3 Delassus blocks, block PGS with the friction *disc* ``|p_t| <= mu
p_n`` -- isotropic by construction -- and an exact active-set polish, the integration; no
BLAS calls). Its warm start and buffers are kept in the context's memory. A step whose PGS
misses ``lcp_tolerance`` within ``pgs_max_sweeps`` sweeps is taken by the interpreted path
(Lemke; ``step.report.method``). ``contact_solver="lcp"`` always takes the interpreted step;
:attr:`~TimeSteppingRigidBodySystem.step_method` tells which step a system takes and
:attr:`~TimeSteppingRigidBodySystem.step_method_reason` why not the compiled one. Without a
C compiler the kernel runs in numpy (``"numpy_pgs"``, slower). Leaving the compiled step is
never silent: a scene it does not cover warns at construction, and the first step that falls
back warns, each once per plant, with a :class:`~multibody.errors.StepMethodWarning` naming
the plant, the constraint or geometry pair (or the time and residual) and the reason
(:mod:`multibody.plants._step_method`); ``contact_solver="lcp"`` does not warn.

Ports: listed in the class docstring of :class:`TimeSteppingRigidBodySystem`.

Timing: the update is periodic with offset 0, like the framework's discrete
``LinearSystem``; the update at ``t`` takes the state at ``t`` to the state at ``t + h``.
The Simulator applies the updates due at a time before publishing, so after
``Simulator.advance_to(T)`` the context holds the state of ``T + h`` (``T/h + 1`` updates,
the first at ``t = 0``). :meth:`TimeSteppingRigidBodySystem.advance` applies ``n`` updates
and sets the time to ``t + n h``, so time and state agree there.

Blocks (actuators, sensors, constraints) are evaluated through their own contexts (one
scratch context per block, fully overwritten before every evaluation: time, the block's
discrete state, parameters and inputs). Their discrete state is part of this system's
discrete state ``[q; v; block states...]`` and their periodic discrete updates must have
the period ``time_step``. Their numeric parameters become this system's parameters
``"<block>.<parameter>"`` (e.g. ``"contact.mu"``).

Not symbolic: the LCP solve pivots, so every callback raises
:class:`~systems.SymbolicEvaluationError` on CasADi symbols (``to_casadi`` names this
system). A failed LCP solve falls back as documented in
:mod:`multibody.plants._time_stepping_solve` with a :class:`TimeSteppingWarning` naming the
system, the time and the residual (or raises :class:`~solvers.lcp.LCPSolveError` with
``lcp_failure="raise"``).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from solvers import ops
from solvers.compiled import CompiledFunction
from systems import SymbolicEvaluationError
from systems.events import PeriodicEvent

from ..constraints import ConstraintRows, ContactResults, StepKinematics, softening_from_spring
from ..constraints.kinematics import cross_rows
from ._time_stepping_kinematics import ancestor_mask, fused_function, quat_to_rot
from ._time_stepping_solve import (SolveReport, TimeSteppingWarning, one_blas_thread,
                                   solve_impulses)
from ._step_method import StepMethodNotice, select_step_method
from ._ts_projection import project_positions
from ._ts_compiled import PGS_TAG, CompiledContactStep
from .base import RigidBodySystemBase
from .solutions import StepSolution

__all__ = ["TimeSteppingRigidBodySystem", "StepSolution", "TimeSteppingWarning"]


PGS_SWEEP_TOL = 1e-10
"""The compiled PGS stops when no impulse changes by more than this (velocity units,
relative to ``max(1, |J v_free + b|)``)."""


class TimeSteppingRigidBodySystem(RigidBodySystemBase):
    """A rigid-body tree with actuator, sensor and constraint blocks, advanced by a
    velocity-level time-stepping scheme (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    time_step : float
        h > 0 (s).
    actuators : sequence of Actuator
        Blocks with inputs ``state`` (nq + nv) and ``command``, output
        ``generalized_force`` (nv), built on ``tree``.
    sensors : sequence of Sensor
        Blocks with input ``state`` (and optionally ``generalized_acceleration``,
        ``contact_results``), built on ``tree``.
    constraints : sequence of ConstraintForce
    include_passive_forces : bool
        Joint damping (implicit) and springs (default True).
    project_positions : bool
        Post-stabilize the bilateral blocks' position errors (default True).
    lcp_failure : {"fallback", "raise"}
        What a failed LCP solve does (module docstring).
    lcp_tolerance : float
        Acceptance of the LCP's natural-map residual (velocity units, m/s or rad/s,
        relative to ``max(1, ||b||)``; default 1e-7).
    backend : {"auto", "c", "casadi"}
        Evaluation of the fused dynamics/kinematics function (compiled C by default).
    contact_solver : {"auto", "pgs", "lcp"}
        ``"auto"``: the compiled step with the block-PGS contact solver where it applies
        (module docstring), else the interpreted step; ``"pgs"``: the compiled step or a
        ``ValueError`` saying why it does not apply; ``"lcp"``: the interpreted step with
        the pivoting LCP solvers.
    pgs_max_sweeps : int
        Sweeps of the compiled step's PGS before that step falls back to the interpreted
        one (default 500).
    name : str, optional

    Ports
    -----
    Inputs:

    * one per actuator with a command, named after the actuator, of its ``command`` size
      (``command_ports``, in ``actuators`` order);
    * ``applied_generalized_force`` (nv, optional): a generalized force added to the
      actuation over the step, zero when unconnected;
    * ``applied_spatial_force`` (6 per moving body, optional): per body but the world, in
      ``tree.bodies`` order, a wrench ``[torque; force]`` in world axes about the body
      origin (N m, N), constant over the step, zero when unconnected.

    Outputs:

    * ``state`` (nq + nv): ``[q; v]`` of the context's discrete state;
    * ``generalized_acceleration`` (nv): ``(v_next - v) / h`` of the step from the context's
      state;
    * ``contact_results`` (abstract :class:`~multibody.constraints.ContactResults`): the
      contacts of the step that starts at the context's time (forces = impulses / h);
      depends on the commands (direct feedthrough);
    * ``step`` (abstract :class:`StepSolution`): the whole solution of that step (cached:
      the discrete update and ``contact_results`` share one solve);
    * one per sensor output port, named after the sensor when it has one output port, else
      ``"<sensor>_<port>"`` (``sensor_ports``); a sensor reading
      ``generalized_acceleration`` or ``contact_results`` gets those of the step starting
      at the context's time.

    Raises
    ------
    ValueError
        ``time_step <= 0``, a block built on another tree or with sizes that do not match
        the tree, duplicate block names, unsupported block state or events, a bad
        ``contact_solver`` or ``pgs_max_sweeps``, ``contact_solver="pgs"`` where the
        compiled step does not apply.
    solvers.contact_step.ContactStepBuildError
        The C compiler failed on the contact kernel.

    Warns
    -----
    multibody.errors.StepMethodWarning
        Once per plant: the scene takes the pivoting step (names the constraint or geometry
        pair the compiled step does not cover), or a step fell back to it (names the time
        and the residual). Not with ``contact_solver="lcp"``.
    """

    def __init__(self, tree, time_step: float, actuators: Sequence = (), sensors: Sequence = (),
                 constraints: Sequence = (), *, include_passive_forces: bool = True,
                 project_positions: bool = True, lcp_failure: str = "fallback",
                 lcp_tolerance: float = 1e-7, backend: str = "auto",
                 contact_solver: str = "auto", pgs_max_sweeps: int = 500,
                 name: Optional[str] = None) -> None:
        nm = f"TimeSteppingRigidBodySystem '{name or tree.name + '_time_stepping'}'"
        try:
            h = float(time_step)
        except (TypeError, ValueError):
            raise ValueError(f"{nm}: time_step must be a number, got {time_step!r}") from None
        if not (np.isfinite(h) and h > 0):
            raise ValueError(f"{nm}: time_step must be finite and > 0, got {time_step!r}")
        if contact_solver not in ("auto", "pgs", "lcp"):
            raise ValueError(f"{nm}: contact_solver must be 'auto', 'pgs' or 'lcp', got "
                             f"{contact_solver!r}")
        if int(pgs_max_sweeps) != pgs_max_sweeps or pgs_max_sweeps < 1:
            raise ValueError(f"{nm}: pgs_max_sweeps must be an integer >= 1, got "
                             f"{pgs_max_sweeps!r}")
        if lcp_failure not in ("fallback", "raise"):
            raise ValueError(f"{nm}: lcp_failure must be 'fallback' or 'raise', got "
                             f"{lcp_failure!r}")
        self.time_step = h
        super().__init__(tree, actuators, sensors, constraints,
                         name=name or f"{tree.name}_time_stepping".replace(".", "_"),
                         reserved={"state", "step", "contact_results",
                                   "generalized_acceleration"})
        nq, nv = self.nq, self.nv
        self.project_positions = bool(project_positions)
        self.lcp_failure = lcp_failure
        self.lcp_tolerance = float(lcp_tolerance)
        # discrete state: [q; v; block states]
        x0 = [tree.neutral_configuration(), np.zeros(nv)]
        self._xd_slices: dict = {}
        k = nq + nv
        for blk in self.actuators + self.sensors + self.constraints:
            n = blk.num_discrete_states()
            if n:
                self._xd_slices[blk] = slice(k, k + n)
                x0.append(blk.default_discrete_state())
                k += n
        self.declare_discrete_state(np.concatenate(x0))
        self._params: dict = {}
        for blk in self.actuators + self.sensors + self.constraints:
            for pname, pval in zip(blk.parameter_names(), blk.default_parameters()):
                full = f"{blk.name}.{pname}"
                self.declare_numeric_parameter(full, pval)
                self._params.setdefault(blk, []).append((full, pname))
        self._no_params = not self._params
        self._declare_command_ports()
        self._declare_applied_force_inputs()
        self.declare_output_port("state", nq + nv, self._calc_state, feedthrough=False,
                                 prerequisites=["discrete_state"])
        self.declare_output_port("generalized_acceleration", nv,
                                 lambda c: self.get_output_port("step").eval(c)
                                 .generalized_acceleration, feedthrough=True)
        self.declare_abstract_output_port("step", self._calc_step, model_value=None,
                                          feedthrough=True)
        self.declare_abstract_output_port("contact_results", self._calc_contacts,
                                          model_value=ContactResults(), feedthrough=True)
        self._declare_sensor_outputs(self._calc_sensor)
        self.declare_periodic_discrete_update(h, 0.0, self._update)
        self._fun = fused_function(tree, include_passive_forces)
        self._fnum = CompiledFunction(self._fun, backend=backend)
        self._mask = ancestor_mask(tree)
        damping = np.zeros(nv)
        if include_passive_forces:
            for j in tree.joints:
                if j.nv:
                    damping[j.v_start:j.v_start + j.nv] = np.broadcast_to(
                        np.asarray(getattr(j, "damping", 0.0), float), (j.nv,))
        self._hD = h * np.diag(damping)
        free = [j for j in tree.joints if j.type == "free"]
        self._free_q = np.array([j.q_start for j in free], int)
        self._free_v = np.array([j.v_start for j in free], int)
        self._fq_quat = self._free_q[:, None] + np.arange(4)
        self._fq_pos = self._free_q[:, None] + np.arange(4, 7)
        self._fv_ang = self._free_v[:, None] + np.arange(3)
        self._fv_lin = self._free_v[:, None] + np.arange(3, 6)
        # decoupled velocity blocks: one per subtree hanging from the world (DFS order makes
        # each a contiguous range); grouped by size for batched inversion
        starts = [j.v_start for j in tree.joints if j.parent == "world"] + [nv]
        self._blocks = [(a, b) for a, b in zip(starts[:-1], starts[1:]) if b > a] or [(0, nv)]
        self.contact_solver = contact_solver
        self._compiled, reason = select_step_method(
            tree, self.constraints, contact_solver, nm,
            lambda kernel: CompiledContactStep(tree, self.constraints[0], kernel, h,
                                               np.diag(self._hD).copy(), self._blocks,
                                               self._mask, int(pgs_max_sweeps)))
        self._notice = StepMethodNotice(self.label)
        self._notice.scene(reason, contact_solver, self.constraints)
        if self._compiled is not None:
            cn = self.constraints[0]
            soft = ("kp", "kd") if cn.spring else ("erp", "cfm")
            self._compiled_params = tuple(self.parameter_index(f"{cn.name}.{n}")
                                          for n in ("mu",) + soft)
        self.step_method = "lcp" if self._compiled is None else \
            ("compiled_pgs" if self._compiled.kernel.compiled else "numpy_pgs")
        """``"compiled_pgs"`` (the compiled step with the block-PGS contact solver),
        ``"numpy_pgs"`` (the same step in numpy, where no C compiler is found) or ``"lcp"``
        (the interpreted step with the pivoting LCP solvers)."""
        self.step_method_reason = reason
        """Why the compiled step is not used (None when it is)."""
        sizes = sorted({b - a for a, b in self._blocks})
        self._block_groups = [(np.array([a for a, b in self._blocks if b - a == n]), n)
                              for n in sizes]
        # Warm start of the LCP: the last committed step's impulses and cone multipliers by
        # row key (contact rows: geometry pair, point, direction), kept in the context's
        # memory (a hint only: the solvers verify every solution and retry cold).

    # ------------------------------------------------------------------ validation
    def _check_block(self, role: str, blk) -> None:
        nm = self.label
        if blk.num_continuous_states():
            raise ValueError(f"{nm}: {role} '{blk.name}' has continuous state, which a "
                             "time-stepping system cannot integrate")
        if blk.num_abstract_states():
            raise ValueError(f"{nm}: {role} '{blk.name}' has abstract state (not supported)")
        for ev in blk.events():
            if not (isinstance(ev, PeriodicEvent) and ev.kind == "discrete"
                    and abs(ev.period - self.time_step) <= 1e-12 * ev.period
                    and ev.offset == 0.0):
                raise ValueError(f"{nm}: {role} '{blk.name}' has a {type(ev).__name__} "
                                 f"({ev.kind}); only periodic discrete updates with period "
                                 f"time_step = {self.time_step} and offset 0 are supported")
        if role == "constraint" and not blk.time_stepping:
            raise TypeError(f"{nm}: constraint '{blk.name}' ({type(blk).__name__}) has no "
                            "velocity-level form")

    # ------------------------------------------------------------------ helpers
    def _numeric(self, context, what: str) -> None:
        # fast exit for the common numeric context; Context.load_symbols makes time, state
        # and every parameter symbolic together, so the first parameter stands for all
        if type(context.discrete_state) is np.ndarray and type(context.time) is float and \
                (self._no_params or type(context.get_parameter(0)) is np.ndarray):
            return
        if ops.is_symbolic(context.discrete_state) or ops.is_symbolic(context.time) or \
                ops.is_symbolic(context.parameters):
            raise SymbolicEvaluationError(
                f"system '{self.name}' (TimeSteppingRigidBodySystem) cannot be evaluated on "
                f"CasADi symbols: its {what} solves an LCP with pivoting (Lemke/Dantzig), "
                "which has no symbolic form")

    def _load_block(self, blk, ctx, context, xd) -> None:
        """Load the block's slice of the discrete state and its parameters
        (``"<block>.<name>"``) from ``context``; a parameter is set only when it is not
        already the same stored array (stored arrays are read-only and replaced on every
        set, and the block's context shares the plant's, so identity tells)."""
        sl = self._xd_slices.get(blk)
        if sl is not None:
            ctx.set_discrete_state(xd[sl])
        for full, pname in self._params.get(blk, ()):
            val = context.get_parameter(full)
            if ctx.get_parameter(pname) is not val:
                ctx.set_parameter(pname, val)             # shares the stored array; invalidates

    def kinematics(self, q: np.ndarray, v: np.ndarray, time: float = 0.0):
        """``(H, c, StepKinematics)`` at ``(q, v)``: mass matrix, ``C - tau_passive`` and the
        kinematics the constraint blocks use."""
        H, c, P, S = self._fnum(q, v)
        N = self._mask.shape[0]
        P = P.reshape(N, 12)
        R = P[:, :9].reshape(N, 3, 3)
        kinm = StepKinematics(self.tree, q, v, self.time_step, time, R, P[:, 9:], S[:3], S[3:],
                              self._mask)
        return H, c, kinm

    def _frame_rate_term(self, v: np.ndarray) -> np.ndarray:
        """``(0, w_b x v_b)`` at each free joint (zeros elsewhere).

        A free joint's velocity is expressed in its moving body frame, so ``C(q, v)`` holds
        the rotating-frame term ``-w x v``. The step is taken in world-aligned coordinates
        ``v' = T(q) v`` (``T = diag(R, R)`` per free joint, as Drake does for free bodies):
        with ``T^{-1} dT/dt v = (0, w x v)`` the update becomes
        ``v_free = v + h H^{-1}(tau - C) + h (0, w x v)`` in frame-n coordinates, and the
        result is re-expressed in the frame at ``t + h`` (:meth:`_to_new_frames`). Taking
        ``-w x v`` explicitly in the body frame instead makes a spinning body gain speed
        (a rolling ball accelerates by ``h w^2`` per step)."""
        a = np.zeros_like(v)
        if self._free_v.shape[0]:
            a[self._fv_lin] = cross_rows(v[self._fv_ang], v[self._fv_lin])
        return a

    def _to_new_frames(self, q: np.ndarray, qn: np.ndarray, vn: np.ndarray) -> np.ndarray:
        """Free joints' velocities (computed in the body frames at ``t``) re-expressed in
        the body frames at ``t + h``: ``R_{n+1}^T R_n`` on the angular and linear parts."""
        if not self._free_q.shape[0]:
            return vn
        R0 = quat_to_rot(q[self._fq_quat])
        R1 = quat_to_rot(qn[self._fq_quat])
        Rrel = np.matmul(R1.transpose(0, 2, 1), R0)
        out = vn.copy()
        for idx in (self._fv_ang, self._fv_lin):
            out[idx] = np.matmul(Rrel, vn[idx][:, :, None])[:, :, 0]
        return out

    def integrate(self, q: np.ndarray, v: np.ndarray, h: float) -> np.ndarray:
        """``q (+) h N(q) v``: ``tree.integrate`` (exponential map of the rotations, so
        quaternions stay unit), except that a free joint's position moves along the straight
        line ``p + h R(q) v_lin`` (rotation and translation integrated separately, SO(3) x
        R^3, as ``q_{n+1} = q + h N(q) v_{n+1}`` asks) rather than along the screw of
        ``exp_se3`` -- the screw's curvature would move a rolling ball's centre off the
        plane its contact rows linearize about."""
        qn = self.tree.integrate(q, v, h)
        if self._free_q.shape[0]:
            R = quat_to_rot(q[self._fq_quat])
            dp = np.matmul(R, v[self._fv_lin][:, :, None])[:, :, 0]
            qn[self._fq_pos] = q[self._fq_pos] + h * dp
        return qn

    def _inverse(self, M: np.ndarray) -> np.ndarray:
        """Inverse of the (block-diagonal) mass matrix: the subtrees hanging from the world
        are decoupled, so equal-sized blocks are inverted together (one batched call)."""
        if len(self._blocks) == 1:
            return np.linalg.inv(M)
        out = np.zeros_like(M)
        for starts, n in self._block_groups:
            idx = starts[:, None] + np.arange(n)
            sub = M[idx[:, :, None], idx[:, None, :]]
            out[idx[:, :, None], idx[:, None, :]] = np.linalg.inv(sub)
        return out

    @staticmethod
    def _row_keys(i: int, r: ConstraintRows) -> list:
        """Keys identifying rows across steps (for the warm start): the block's own
        ``info["keys"]`` when it gives them (contacts: geometry pair and point), else
        (block index, row index)."""
        if isinstance(r.info, dict) and "keys" in r.info:
            return r.info["keys"]
        return [(i, k) for k in range(r.m)]

    def _rows(self, context, xd, kinm) -> list:
        return [c.calc_rows(self._block_context(c, context, xd), kinm) for c in self.constraints]

    # ------------------------------------------------------------------ the step
    def _calc_step(self, context) -> StepSolution:
        self._numeric(context, "step")
        h, nq, nv = self.time_step, self.nq, self.nv
        xd = np.asarray(context.discrete_state)
        t = float(context.time)
        q, v = xd[:nq], xd[nq:nq + nv]
        x = xd[:nq + nv]
        tau = self.actuation(context, xd)
        tau = np.zeros(nv) if tau is None else np.asarray(tau, float)
        ext = self.applied_forces(context, q)
        if ext is not None:
            tau = tau + np.asarray(ext, float).ravel()
        if self._compiled is not None:
            sol = self._compiled_step(context, xd, t, q, v, tau)
            if sol is not None:
                self._update_blocks(context, xd, x, sol)
                return sol
            self._notice.fallback(t, context.get_memory()["compiled_step_scratch"].failure)
        with one_blas_thread():            # no BLAS threads spinning on small products
            return self._interpreted_step(context, xd, t, q, v, x, tau)

    def _interpreted_step(self, context, xd, t, q, v, x, tau) -> StepSolution:
        """The step with numpy and the pivoting LCP solvers (module docstring)."""
        h, nq, nv = self.time_step, self.nq, self.nv
        H, c, kinm = self.kinematics(q, v, t)
        Meff = H + self._hD
        try:
            Minv = self._inverse(Meff)
        except np.linalg.LinAlgError:
            Minv = None
        if Minv is None or not np.all(np.isfinite(Minv)) or np.any(np.diagonal(Minv) <= 0):
            raise ValueError(f"system '{self.name}' at t={t:.6g}: the mass matrix of tree "
                             f"'{self.tree.name}' is singular (a massless body without inertia "
                             "on a moving joint?)")
        v_free = v + Minv @ (h * (tau - c)) + h * self._frame_rate_term(v)
        kinm.v_free = v_free          # contacts align their friction directions with it
        rows = self._rows(context, xd, kinm)
        sizes = [r.m for r in rows]
        m = sum(sizes)
        if m:
            J = np.vstack([r.J for r in rows])
            offs = np.cumsum([0] + sizes[:-1])
            normal = np.concatenate([np.where(r.normal >= 0, r.normal + o, -1)
                                     for r, o in zip(rows, offs)])
            kind = np.concatenate([r.kind for r in rows])
            MinvJT = Minv @ J.T
            A = J @ MinvJT
            A[np.diag_indices(m)] += np.concatenate([r.cfm for r in rows]) / h
            b = J @ v_free + np.concatenate([r.bias for r in rows])
            keys = [k for i, r in enumerate(rows) for k in self._row_keys(i, r)]
            warm = None
            last = context.get_memory().get("warm_start")
            if last is not None and last[0] != PGS_TAG:
                prev_p, prev_l = last
                warm = (np.array([prev_p.get(k, 0.0) for k in keys]),
                        np.array([prev_l.get(k, 0.0) for k in keys]))
            p, report, lam = solve_impulses(
                A, b, kind, np.concatenate([r.lo for r in rows]),
                np.concatenate([r.hi for r in rows]), normal,
                f"system '{self.name}' at t={t:.6g}", self.lcp_failure, warm,
                self.lcp_tolerance)
            warm_next = (dict(zip(keys, p.tolist())),
                         {} if lam is None else {k: s for k, s in zip(keys, lam.tolist()) if s})
            vn = v_free + MinvJT @ p
            tau_c = J.T @ p / h
            impulses = np.split(p, np.cumsum(sizes)[:-1])
        else:
            vn, tau_c, impulses = v_free, np.zeros(nv), [np.zeros(0) for _ in rows]
            report = SolveReport("no_rows", "none", 0.0, 0)
            warm_next = None
        qn = self.integrate(q, vn, h)
        if self.project_positions:
            qn = project_positions(self, context, xd, qn, vn, Minv, t)
        constraints = self.constraints

        def make_contacts() -> ContactResults:
            contacts = []
            for cblk, r, pi in zip(constraints, rows, impulses):
                if r.m:
                    contacts.extend(cblk.results(r, pi, vn, kinm))
            return ContactResults(t, tuple(contacts))
        vn = self._to_new_frames(q, qn, vn)
        xd_next = np.array(xd, dtype=float)
        xd_next[:nq], xd_next[nq:nq + nv] = qn, vn
        sol = StepSolution(t, qn, vn, xd_next, tau, tau_c, impulses, rows, report,
                           (vn - v) / h, warm_next, make_contacts)
        self._update_blocks(context, xd, x, sol)
        return sol

    def _update_blocks(self, context, xd, x, sol) -> None:
        """The blocks' discrete updates into ``sol.xd_next`` (inputs of the step)."""
        for blk, sl in self._xd_slices.items():
            ctx = self._block_context(blk, context, xd)
            self._fix_block_inputs(blk, ctx, x, sol)
            nxt = xd[sl]
            for ev in blk.events():
                nxt = np.asarray(ev.callback(ctx), float).ravel()
            sol.xd_next[sl] = nxt

    def _compiled_step(self, context, xd, t, q, v, tau):
        """The step by the compiled kernel (:mod:`._ts_compiled`), or None when it did not
        converge (or the mass matrix is singular): the interpreted step then runs."""
        contact = self.constraints[0]
        i_mu, i_a, i_b = self._compiled_params
        a, b = float(context.get_parameter(i_a)[0]), float(context.get_parameter(i_b)[0])
        erp, cfm = softening_from_spring(a, b, self.time_step) if contact.spring else (a, b)
        mode = 1.0 if (contact.formulation == "stewart_trinkle" and not contact.spring) else 0.0
        scalars = (contact.margin, float(context.get_parameter(i_mu)[0]), erp, cfm, mode,
                   self.lcp_tolerance, PGS_SWEEP_TOL)
        mem = context.get_memory()
        scratch = mem.get("compiled_step_scratch")
        if scratch is None:
            scratch = mem["compiled_step_scratch"] = self._compiled.scratch()
        return self._compiled.run(t, xd, tau, self._fnum(q, v), scalars,
                                  mem.get("warm_start"), scratch)

    def _fix_block_inputs(self, blk, ctx, x, sol) -> None:
        blk.get_input_port("state").fix_value(ctx, x) if blk.has_input_port("state") else None
        if blk.has_input_port("generalized_acceleration"):
            blk.get_input_port("generalized_acceleration").fix_value(
                ctx, sol.generalized_acceleration)
        if blk.has_input_port("contact_results"):
            blk.get_input_port("contact_results").fix_value(ctx, sol.contact_results)

    # ------------------------------------------------------------------ callbacks
    def _update(self, context):
        self._numeric(context, "discrete update")
        sol = self.get_output_port("step").eval(context)
        context.get_memory()["warm_start"] = sol.warm_start      # the committed step's impulses
        return sol.xd_next

    def _calc_state(self, context):
        self._numeric(context, "output 'state'")
        return context.discrete_state[:self.nq + self.nv]

    def _calc_contacts(self, context) -> ContactResults:
        return self.get_output_port("step").eval(context).contact_results

    def _calc_sensor(self, context, sensor, port):
        self._numeric(context, f"output of sensor '{sensor.name}'")
        xd = np.asarray(context.discrete_state)
        ctx = self._block_context(sensor, context, xd)
        x = xd[:self.nq + self.nv]
        sensor.get_input_port("state").fix_value(ctx, x)
        if sensor.has_input_port("generalized_acceleration") or \
                sensor.has_input_port("contact_results"):
            self._fix_block_inputs(sensor, ctx, x, self.get_output_port("step").eval(context))
        return port.eval(ctx)

    # ------------------------------------------------------------------ conveniences
    def _state_vector(self, ctx):
        return ctx.discrete_state

    def _write_state(self, ctx, x) -> None:
        ctx.set_discrete_state(x)

    def advance(self, context, num_steps: int) -> None:
        """Apply ``num_steps`` discrete updates to ``context`` directly (time advances by
        ``num_steps * time_step``); a lightweight alternative to the Simulator for a
        system used on its own, with the same update."""
        ctx = self.get_my_context_from_root(context)
        t0 = float(ctx.time)
        for k in range(int(num_steps)):
            xd = self._update(ctx)
            ctx.set_discrete_state(xd)
            ctx.set_time(t0 + (k + 1) * self.time_step)

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
(:mod:`multibody.plants._time_stepping_solve`) -- or, with ``damping_scheme="mujoco_euler"``,
as MuJoCo's Euler integrator does: the constraints solved with ``H`` and the damping explicit,
then ``v_n = v + (H + h D)^{-1} H (v_M - v)`` from that step's velocity ``v_M``
(:mod:`multibody.plants._pivoting_step`); then ``q_n = q (+) h N(q) v_n``
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

Step methods: a step is taken by the plant's :class:`~multibody.plants.StepMethod`, chosen
once when the plant is built (:attr:`TimeSteppingRigidBodySystem.stepper`): the compiled step
below, or the pivoting step (:mod:`multibody.plants._pivoting_step`), or a subclass passed as
``contact_solver`` (the contract: :mod:`multibody.plants._step_method`). Each step's
:class:`~multibody.plants.StepStatus` (``step.status``) names the method that took it, its
sweeps, active contacts and residual.

Warm start: the previous step's impulses, by key (contacts: geometry pair and point), seed
the next step's solver: one :class:`~multibody.plants.ContactWarmStart` record kept in the
context's memory (``"warm_start"``), written and read by every method (entries a method does
not find start from zero); it is only a hint: every solution is verified and a failed warm
start is retried cold.

The compiled step (default where it applies)
--------------------------------------------
With at most one :class:`~multibody.constraints.PointContactConstraint` (friction
``"cone"`` or ``"box"``, any ``geometry_margins``, no MuJoCo softening, any shape pair of
:mod:`multibody.geometry`), joint limits, joint friction and
loop closures (ball, weld, distance, point-on-line) and joints that integrate as ``q + h v``
or by a quaternion's exponential map, a step is two compiled calls: the fused
dynamics/kinematics function and the C kernel of :mod:`solvers.contact_step` (candidates,
rows, 3 x 3 Delassus blocks, block PGS with the friction *disc* ``|p_t| <= mu p_n`` --
isotropic by construction -- or, for ``friction="box"``, ODE's box ``|p_t1|, |p_t2| <=
mu p_n`` along the pivoting step's tangents (t1 against the free slip), and an exact
active-set polish, the integration; no BLAS calls). Loop closures are eliminated exactly before the contact problem (one more compiled
call per step: the contacts see the closures' constrained Delassus operator, as the
pivoting step's Schur complement has it; :mod:`multibody.plants._ts_closures`). Its warm
start and buffers are kept in the context's memory. A step whose PGS
misses ``lcp_tolerance`` within ``pgs_max_sweeps`` sweeps is taken by the method's fallback,
the interpreted step (Lemke; ``step.status.fallback_from``). ``contact_solver="lcp"``
always takes the interpreted step;
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

from ..constraints import ContactResults, StepKinematics
from ..tree import Joint
from ._pivoting_step import PivotingStep
from ._step_method import StepMethod, implicit_damping, select_step_method, velocity_blocks
from ._time_stepping_kinematics import ancestor_mask, fused_function, quat_to_rot, split_dynamics
from ._time_stepping_solve import TimeSteppingWarning
from ._ts_compiled import CompiledContactStep, CompiledStep, unsupported_reason
from ._ts_whole_run import whole_run_protocol
from .base import RigidBodySystemBase
from .solutions import StepSolution

__all__ = ["TimeSteppingRigidBodySystem", "StepSolution", "TimeSteppingWarning"]


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
    damping_scheme : {"implicit", "mujoco_euler"}
        Where the joint damping ``D`` enters the step. ``"implicit"`` (default): in the
        constraint solve, ``(H + h D)(v_n - v) = h (tau - c) + J^T p`` with the constraints
        on ``v_n``. ``"mujoco_euler"``: MuJoCo's Euler integrator (``mj_Euler``): the
        constraint impulses of the undamped step (``H``, damping explicit in ``c``), then
        ``v_n = v + (H + h D)^{-1} (h (tau - c) + J^T p)`` (MuJoCo's ``qvel += h (M + h
        D)^{-1} (qfrc_smooth + qfrc_constraint)``); the pivoting step only (the compiled step
        refuses it by name). :attr:`MJCFModel.damping_scheme
        <multibody.parsing.MJCFModel>` gives the one matching an MJCF file's integrator.
    project_positions : bool
        Post-stabilize the bilateral blocks' position errors (default True).
    lcp_failure : {"fallback", "raise"}
        What a failed LCP solve does (module docstring).
    lcp_tolerance : float
        Acceptance of the LCP's natural-map residual (velocity units, m/s or rad/s,
        relative to ``max(1, ||b||)``; default 1e-7).
    backend : {"auto", "c", "casadi"}
        Evaluation of the fused dynamics/kinematics function (compiled C by default).
    contact_solver : {"auto", "pgs", "lcp"} or StepMethod subclass
        ``"auto"``: the compiled step with the block-PGS contact solver where it applies
        (module docstring), else the interpreted step; ``"pgs"``: the compiled step or a
        ``ValueError`` saying why it does not apply; ``"lcp"``: the interpreted step with
        the pivoting LCP solvers; a :class:`~multibody.plants.StepMethod` subclass: built
        once as ``contact_solver(plant)``, it takes every step.
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
                 damping_scheme: str = "implicit",
                 project_positions: bool = True, lcp_failure: str = "fallback",
                 lcp_tolerance: float = 1e-7, backend: str = "auto",
                 contact_solver: str = "auto", pgs_max_sweeps: int = 500,
                 name: Optional[str] = None) -> None:
        nm = f"TimeSteppingRigidBodySystem '{name or tree.name + '_time_stepping'}'"
        self.time_step = self._checked_arguments(nm, time_step, contact_solver, pgs_max_sweeps,
                                                 lcp_failure)
        super().__init__(tree, actuators, sensors, constraints,
                         name=name or f"{tree.name}_time_stepping".replace(".", "_"),
                         reserved={"state", "step", "contact_results",
                                   "generalized_acceleration"})
        self.include_passive_forces = bool(include_passive_forces)
        """Joint damping (implicit) and springs are in the step."""
        if damping_scheme not in ("implicit", "mujoco_euler"):
            raise ValueError(f"{nm}: damping_scheme must be 'implicit' or 'mujoco_euler', got "
                             f"{damping_scheme!r}")
        self.damping_scheme = damping_scheme
        """``"implicit"`` or ``"mujoco_euler"``: where the joint damping enters the step."""
        self.project_positions = bool(project_positions)
        self.lcp_failure = lcp_failure
        self.lcp_tolerance = float(lcp_tolerance)
        self._declare_state_and_parameters()
        self._declare_ports()
        self._build_dynamics(backend)
        self._build_step_method(contact_solver, int(pgs_max_sweeps))

    @staticmethod
    def _checked_arguments(nm: str, time_step, contact_solver, pgs_max_sweeps,
                           lcp_failure) -> float:
        """``time_step`` as a float, after checking the constructor's arguments."""
        try:
            h = float(time_step)
        except (TypeError, ValueError):
            raise ValueError(f"{nm}: time_step must be a number, got {time_step!r}") from None
        if not (np.isfinite(h) and h > 0):
            raise ValueError(f"{nm}: time_step must be finite and > 0, got {time_step!r}")
        custom = isinstance(contact_solver, type) and issubclass(contact_solver, StepMethod)
        if not custom and contact_solver not in ("auto", "pgs", "lcp"):
            raise ValueError(f"{nm}: contact_solver must be 'auto', 'pgs' or 'lcp' (or a "
                             f"StepMethod subclass), got {contact_solver!r}")
        if int(pgs_max_sweeps) != pgs_max_sweeps or pgs_max_sweeps < 1:
            raise ValueError(f"{nm}: pgs_max_sweeps must be an integer >= 1, got "
                             f"{pgs_max_sweeps!r}")
        if lcp_failure not in ("fallback", "raise"):
            raise ValueError(f"{nm}: lcp_failure must be 'fallback' or 'raise', got "
                             f"{lcp_failure!r}")
        return h

    def _declare_state_and_parameters(self) -> None:
        """The discrete state ``[q; v; block states]`` and the blocks' parameters
        ``"<block>.<name>"``."""
        nq, nv = self.nq, self.nv
        x0 = [self.tree.neutral_configuration(), np.zeros(nv)]
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

    def _declare_ports(self) -> None:
        """The ports of the class docstring and the periodic discrete update."""
        nq, nv = self.nq, self.nv
        self._declare_command_ports()
        self._declare_applied_force_inputs()
        self.declare_output_port("state", nq + nv, self._calc_state, feedthrough=False,
                                 prerequisites=["discrete_state"])
        self.declare_output_port("generalized_acceleration", nv,
                                 lambda c: self.get_output_port("step").eval(c)
                                 .generalized_acceleration, feedthrough=True)
        self._step_port = self.declare_abstract_output_port(
            "step", self._calc_step, model_value=None, feedthrough=True)
        self.declare_abstract_output_port("contact_results", self._calc_contacts,
                                          model_value=ContactResults(), feedthrough=True)
        self._declare_sensor_outputs(self._calc_sensor)
        self.declare_periodic_discrete_update(self.time_step, 0.0, self._update)

    def _build_dynamics(self, backend: str) -> None:
        """The fused dynamics/kinematics function (compiled), the ancestor mask and the
        free joints' coordinates (for :meth:`integrate`)."""
        tree = self.tree
        self._fun = fused_function(tree, self.include_passive_forces)
        self._fnum = CompiledFunction(self._fun, backend=backend)
        self._mask = ancestor_mask(tree)
        free_q = np.array([j.q_start for j in tree.joints if j.type == "free"], int)
        free_v = np.array([j.v_start for j in tree.joints if j.type == "free"], int)
        self._fq_quat = free_q[:, None] + np.arange(4)
        self._fq_pos = free_q[:, None] + np.arange(4, 7)
        self._fv_lin = free_v[:, None] + np.arange(3, 6)
        # joints that keep the base class's integrate (q + dt v) with nq == nv: integrate is
        # q + h v for the whole tree (no tree call)
        self._linear_q = all(type(j).integrate is Joint.integrate and j.nq == j.nv
                             for j in tree.joints if j.nq)

    def _build_step_method(self, contact_solver, max_sweeps: int) -> None:
        """The step method, chosen once (module docstring), and the scene's warning."""
        tree, h = self.tree, self.time_step

        def compiled(kernel) -> StepMethod:
            tables = CompiledContactStep(
                tree, list(self.constraints), kernel, h,
                h * implicit_damping(tree, self.include_passive_forces), velocity_blocks(tree),
                self._mask, max_sweeps)
            return CompiledStep(self, tables, self._fnum, PivotingStep(self))
        self.contact_solver = contact_solver
        # unsupported_reason names every block the kernel does not cover (MuJoCo softening too)
        method, reason = select_step_method(self, contact_solver,
                                            unsupported_reason(tree, self.constraints,
                                                               self.damping_scheme),
                                            compiled, lambda: PivotingStep(self))
        if isinstance(contact_solver, str):
            method.notice.scene(reason, contact_solver, self.constraints, stacklevel=4)
        self._stepper = method
        self.step_method = method.name
        """``"compiled_pgs"`` (the compiled step with the block-PGS contact solver),
        ``"numpy_pgs"`` (the same step in numpy, where no C compiler is found), ``"lcp"``
        (the interpreted step with the pivoting LCP solvers) or a custom method's name."""
        self.step_method_reason = reason
        """Why the compiled step is not used (None when it is)."""

    @property
    def stepper(self) -> StepMethod:
        """The :class:`~multibody.plants.StepMethod` that takes every step of this plant
        (built once; ``stepper.fallback`` takes the steps it cannot)."""
        return self._stepper

    def compiled_step_protocol(self):
        """This plant's compiled step as data (kernel, tables, dynamics function), for
        ``Simulator(diagram, compiled=True)`` to run whole runs in C (:mod:`._ts_whole_run`)."""
        return whole_run_protocol(self)

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
        H, c, P, S = split_dynamics(self._fnum(q, v), self.nv)
        N = self._mask.shape[0]
        P = P.reshape(N, 12)
        R = P[:, :9].reshape(N, 3, 3)
        kinm = StepKinematics(self.tree, q, v, self.time_step, time, R, P[:, 9:], S[:3], S[3:],
                              self._mask)
        return H, c, kinm

    def integrate(self, q: np.ndarray, v: np.ndarray, h: float) -> np.ndarray:
        """``q (+) h N(q) v``: ``tree.integrate`` (exponential map of the rotations, so
        quaternions stay unit), except that a free joint's position moves along the straight
        line ``p + h R(q) v_lin`` (rotation and translation integrated separately, SO(3) x
        R^3, as ``q_{n+1} = q + h N(q) v_{n+1}`` asks) rather than along the screw of
        ``exp_se3`` -- the screw's curvature would move a rolling ball's centre off the
        plane its contact rows linearize about."""
        if self._linear_q:              # every joint moves q + h v (the tree's call, unrolled)
            return np.asarray(q, float) + np.asarray(v, float) * h
        qn = self.tree.integrate(q, v, h)
        if self._fq_quat.shape[0]:
            R = quat_to_rot(q[self._fq_quat])
            dp = np.matmul(R, v[self._fv_lin][:, :, None])[:, :, 0]
            qn[self._fq_pos] = q[self._fq_pos] + h * dp
        return qn

    # ------------------------------------------------------------------ the step
    def _calc_step(self, context) -> StepSolution:
        self._numeric(context, "step")
        sol = self._stepper.step(context)
        if self._xd_slices:
            xd = np.asarray(context.discrete_state)
            self._update_blocks(context, xd, xd[:self.nq + self.nv], sol)
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

    def _fix_block_inputs(self, blk, ctx, x, sol) -> None:
        blk.get_input_port("state").fix_value(ctx, x) if blk.has_input_port("state") else None
        if blk.has_input_port("generalized_acceleration"):
            blk.get_input_port("generalized_acceleration").fix_value(
                ctx, sol.generalized_acceleration)
        if blk.has_input_port("contact_results"):
            blk.get_input_port("contact_results").fix_value(ctx, sol.contact_results)

    # ------------------------------------------------------------------ callbacks
    def _update(self, context):
        # (symbolic contexts are refused by _calc_step: a cached step was computed on the
        # same numbers, any change of state, time or parameters invalidates it)
        sol = self._step_port.eval(context)     # (the port by name: a search per step)
        context.get_memory()["warm_start"] = sol.warm_start      # the committed step's impulses
        return sol.xd_next

    def _calc_state(self, context):   # symbolic-capable: compiled whole runs trace on it
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

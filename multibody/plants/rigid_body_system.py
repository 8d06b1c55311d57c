"""``RigidBodySystem``: a rigid-body tree with actuators, sensors and continuous-time
constraint forces as one continuous-time System.

State ``x = [q; v; z]`` (``z``: the blocks' continuous internal state). The time
derivatives solve, for the accelerations ``vdot`` and the constraint forces ``f`` together,

.. math::

    H(q)\\,\\dot v + C(q, v) = \\tau_{act} + \\tau_{passive}(q, v) + J(q)^T f ,
    \\qquad \\dot q = N(q)\\, v ,

with every constraint row ``a = J vdot + b`` (:mod:`multibody.constraints`)

* equality rows ``a = 0``: a KKT system (:mod:`multibody._rbs_equality`), one CasADi
  function ``(q, v, tau) -> (vdot, f)`` evaluated compiled for numbers and on symbols for
  the symbolic conversion (a closed-chain mechanism linearizes); redundant or conflicting
  rows are solved by least squares with a :class:`RedundantConstraintWarning` naming them;
* unilateral rows (contacts with Coulomb friction, joint limits) in contact: an
  acceleration-level (boxed) LCP, Baraff 1994 (:mod:`multibody.plants._rbs_unilateral`),
  friction in Coulomb's circle (isotropic: no world axis preferred), with the contact
  modes (separated / sliding / sticking) held in abstract state and switched by witness
  functions on the signed distance, the normal force, the slip velocity and the friction
  that sticking needs (:mod:`multibody.plants._rbs_modes`); a
  touchdown applies an impulse with Newton restitution and Coulomb friction as an
  unrestricted update. No LCP solution (Painleve) raises :class:`PainleveError`.

Ports: listed in the class docstring of :class:`RigidBodySystem`.

Blocks are evaluated through their own contexts (their inputs fixed from this system's
state, commands and solution).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from solvers import ops
from solvers.compiled import CompiledFunction
from systems import SymbolicEvaluationError

from ..constraints import ContactResults
from . import _rbs_modes as modes_
from . import _rbs_unilateral as uni
from ._rbs_equality import (RedundantConstraintWarning, equality_functions, redundant_rows,
                            warn_redundant)
from ._rbs_unilateral import PainleveError
from .base import RigidBodySystemBase
from .solutions import RigidBodySolution

__all__ = ["RigidBodySystem", "RigidBodySolution", "PainleveError", "RedundantConstraintWarning"]


class RigidBodySystem(RigidBodySystemBase):
    """Continuous-time rigid-body system (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    actuators : sequence of Actuator
        Inputs ``state`` and ``command``, output ``generalized_force`` (nv); may have
        continuous state.
    sensors : sequence of Sensor
        Input ``state`` (optionally ``generalized_acceleration``, ``contact_results``).
    constraints : sequence of ConstraintForce
        Any kind with an acceleration-level form (every kind but joint friction).
    include_passive_forces : bool
        Joint damping and springs (default True).
    backend : {"auto", "c", "casadi"}
        Evaluation of the fused functions.
    name : str, optional

    Ports
    -----
    Inputs:

    * one per actuator with a command, named after the actuator, of its ``command`` size
      (``command_ports``, in ``actuators`` order);
    * ``applied_generalized_force`` (nv, optional): a generalized force added to the
      actuation, zero when unconnected;
    * ``applied_spatial_force`` (6 per moving body, optional): per body but the world, in
      ``tree.bodies`` order, a wrench ``[torque; force]`` in world axes about the body
      origin (N m, N), zero when unconnected.

    Outputs:

    * ``state`` (nq + nv): ``[q; v]``;
    * ``actuator_state`` (nz, only when ``nz > 0``): the actuators' and sensors' continuous
      states ``z``;
    * ``generalized_acceleration`` (nv): ``vdot`` solved with the constraint forces;
    * ``generalized_constraint_force`` (nv): ``J^T f``;
    * ``contact_results`` (abstract :class:`~multibody.constraints.ContactResults`): the
      contact forces at the context's state;
    * one per sensor output port, named after the sensor when it has one output port, else
      ``"<sensor>_<port>"`` (``sensor_ports``).

    Raises
    ------
    TypeError, ValueError
        A block of the wrong type, built on another tree, with mismatched sizes or a
        duplicate name.
    """

    def __init__(self, tree, actuators: Sequence = (), sensors: Sequence = (),
                 constraints: Sequence = (), *, include_passive_forces: bool = True,
                 backend: str = "auto", name: Optional[str] = None) -> None:
        super().__init__(tree, actuators, sensors, constraints,
                         name=name or f"{tree.name}_system".replace(".", "_"),
                         reserved={"state", "generalized_acceleration", "actuator_state",
                                   "generalized_constraint_force", "contact_results"})
        nq, nv = self.nq, self.nv
        self.equality_constraints = [c for c in self.constraints if not c.unilateral]
        self.unilateral_constraints = [c for c in self.constraints if c.unilateral]
        # continuous state [q; v; z]
        x0 = [tree.neutral_configuration(), np.zeros(nv)]
        self._z: dict = {}
        k = nq + nv
        for blk in self.actuators + self.sensors:
            n = blk.num_continuous_states()
            if n:
                self._z[blk] = slice(k, k + n)
                x0.append(blk.default_continuous_state())
                k += n
        self.declare_continuous_state(k, num_q=nq, num_v=nv, initial=np.concatenate(x0))
        self._declare_command_ports()
        self._declare_applied_force_inputs()
        # equality rows: fused functions
        self._row_names = [n for c in self.equality_constraints for n in c.row_names()]
        dyn, parts, qd = equality_functions(tree, self.equality_constraints,
                                            include_passive_forces, False, self.name)
        parts_num = CompiledFunction(parts, backend=backend)
        dependent, rank = redundant_rows(parts_num, tree, self._row_names)
        self.redundant_rows = dependent
        if dependent:
            warn_redundant(self.name, dependent, rank, len(self._row_names))
            dyn, parts, qd = equality_functions(tree, self.equality_constraints,
                                                include_passive_forces, True, self.name)
        self._dyn, self._parts, self._qdot = dyn, parts, qd
        self._dyn_num = CompiledFunction(dyn, backend=backend) if not dependent else None
        self._parts_num = parts_num
        self._qdot_num = CompiledFunction(qd, backend=backend)
        # unilateral sites, modes (abstract state) and witness functions
        self.sites = [(c, i) for c in self.unilateral_constraints for i in range(c.num_sites)]
        self.mode_index = None
        if self.sites:
            self.mode_index = self.declare_abstract_state(tuple(None for _ in self.sites))
            self.declare_initialization_unrestricted_update(self._init_modes)
            modes_.declare_witnesses(self)
        # ports
        self.declare_output_port("state", nq + nv, lambda c: c.continuous_state[:nq + nv],
                                 feedthrough=False, prerequisites=["continuous_state"])
        self.declare_output_port("generalized_acceleration", nv,
                                 lambda c: self._vdot_out(c, 0), feedthrough=True)
        nz = k - nq - nv
        if nz:
            self.declare_output_port("actuator_state", nz,
                                     lambda c: c.continuous_state[nq + nv:], feedthrough=False,
                                     prerequisites=["continuous_state"])
        self.declare_output_port("generalized_constraint_force", nv,
                                 lambda c: self._vdot_out(c, 2), feedthrough=True)
        self.declare_abstract_output_port("contact_results",
                                          lambda c: self.solve(c).contact_results,
                                          model_value=ContactResults(), feedthrough=True)
        self._declare_sensor_outputs(self._calc_sensor)

    # ------------------------------------------------------------------ blocks
    def _check_block(self, role: str, blk) -> None:
        if blk.num_discrete_states() or blk.num_abstract_states() or \
                (role != "constraint" and blk.events()):
            raise ValueError(f"{self.label}: {role} '{blk.name}' has discrete/abstract state or "
                             "events, which a continuous RigidBodySystem does not support")
        if role == "constraint" and not blk.continuous:
            raise TypeError(f"{self.label}: constraint '{blk.name}' ({type(blk).__name__}) has no "
                            "acceleration-level form; use it with TimeSteppingRigidBodySystem, or "
                            "model the effect as a (smoothed) force on the joint")

    def _block_context(self, blk, context, x):
        if ops.is_symbolic(x) or ops.is_symbolic(context.time):
            ctx = blk.create_default_context()
            xs = x[self._z[blk]] if blk in self._z else ctx.continuous_state
            ctx.load_symbols(context.time, xs, ctx.discrete_state,
                             [ctx.get_parameter(i) for i in range(len(blk.parameter_names()))], {})
            return ctx
        return self.block_context(blk, context, x)

    def _load_block(self, blk, ctx, context, x) -> None:
        if x is not None and blk in self._z:
            ctx.set_continuous_state(np.asarray(x[self._z[blk]], float))

    def _input_forces(self, context, x):
        """Actuators plus the applied-force inputs (None when there are none)."""
        tau = self.actuation(context, x)
        ext = self.applied_forces(context, x[:self.nq])
        if ext is None:
            return tau
        return ext if tau is None else tau + ext

    # ------------------------------------------------------------------ solve
    def equality_row_names(self) -> list:
        """Names of the equality rows, in the order of ``f``."""
        return list(self._row_names)

    def modes(self, context) -> tuple:
        """Per unilateral site: ``None`` (separated), ``("stick", None)`` or
        ``("slide", direction)`` for contacts, ``("active", None)`` for joint limits."""
        if self.mode_index is None:
            return ()
        return self.get_my_context_from_root(context).abstract_state[self.mode_index]

    def solve(self, context) -> RigidBodySolution:
        """Accelerations and constraint forces at the state (and commands) of ``context``
        (numbers only; cached per state)."""
        ctx = self.get_my_context_from_root(context)
        x = ctx.continuous_state
        if ops.is_symbolic(x):
            raise SymbolicEvaluationError(f"RigidBodySystem '{self.name}': solve() is numeric; "
                                          "use time_derivatives on symbols")
        x = np.asarray(x, float)
        tau = self._input_forces(ctx, x)
        tau = np.zeros(self.nv) if tau is None else np.asarray(tau, float).ravel()
        modes = self.modes(ctx)
        key = (x.tobytes(), tau.tobytes(), float(ctx.time), id(modes), modes)
        memo = ctx.get_memory().get("solve")      # the last solve, per context
        if memo is not None and memo[0] == key:
            return memo[1]
        q, v = x[:self.nq], x[self.nq:self.nq + self.nv]
        if self._dyn_num is not None and not any(m is not None for m in modes):
            vdot, f, tau_c = self._dyn_num(q, v, tau)
            sol = RigidBodySolution(np.asarray(vdot).ravel(), np.asarray(f).ravel(),
                                    np.asarray(tau_c).ravel(), tau, ContactResults(float(ctx.time)))
        else:
            sol = uni.solve_accelerations(self, ctx, q, v, tau, modes)
        ctx.get_memory()["solve"] = (key, sol)
        return sol

    def _vdot_out(self, context, which: int):
        x = context.continuous_state
        if ops.is_symbolic(x) or ops.is_symbolic(context.time):
            self._require_symbolic_capable()
            tau = self._input_forces(context, x)
            tau = ops.zeros(self.nv, x) if tau is None else tau
            return self._dyn(x[:self.nq], x[self.nq:self.nq + self.nv], tau)[which]
        sol = self.solve(context)
        return sol.vdot if which == 0 else sol.tau_constraint

    def _require_symbolic_capable(self) -> None:
        if self.sites:
            names = [c.name for c in self.unilateral_constraints]
            raise SymbolicEvaluationError(
                f"RigidBodySystem '{self.name}' cannot be evaluated on CasADi symbols: its "
                f"unilateral constraints {names} need an LCP solve with pivoting and contact "
                "modes; only equality constraints convert to CasADi")

    def time_derivatives(self, context):
        x = context.continuous_state
        nq, nv = self.nq, self.nv
        q, v = x[:nq], x[nq:nq + nv]
        if ops.is_symbolic(x) or ops.is_symbolic(context.time):
            vdot = self._vdot_out(context, 0)
            parts = [self._qdot(q, v), vdot]
        else:
            vdot = self.solve(context).vdot
            parts = [self._qdot_num(q, v), vdot]
        for blk, sl in self._z.items():
            ctx = self._block_context(blk, context, x)
            self._fix_block_inputs(blk, ctx, context, x, vdot)
            parts.append(blk.eval_time_derivatives(ctx))
        return ops.vertcat(*parts)

    def map_velocity_to_qdot(self, context, v):
        q = context.continuous_state[:self.nq]
        if ops.any_symbolic(q, v):
            return self._qdot(q, v)
        return self._qdot_num(q, v)

    def _fix_block_inputs(self, blk, ctx, context, x, vdot=None) -> None:
        xs = x[:self.nq + self.nv]
        if blk in self.actuators:
            i = self.actuators.index(blk)
            blk.get_input_port("state").fix_value(ctx, xs)
            port = self.command_ports[i]
            blk.get_input_port("command").fix_value(
                ctx, port.eval(context) if port is not None else np.zeros(0))
            return
        blk.get_input_port("state").fix_value(ctx, xs)
        if blk.has_input_port("generalized_acceleration"):
            if vdot is None:
                vdot = self._vdot_out(context, 0)
            blk.get_input_port("generalized_acceleration").fix_value(ctx, vdot)
        if blk.has_input_port("contact_results"):
            blk.get_input_port("contact_results").fix_value(
                ctx, ContactResults() if ops.is_symbolic(x) else self.solve(context).contact_results)

    def _calc_sensor(self, context, sensor, port):
        x = context.continuous_state
        ctx = self._block_context(sensor, context, x)
        self._fix_block_inputs(sensor, ctx, context, x)
        return port.eval(ctx)

    # ------------------------------------------------------------------ events
    def _init_modes(self, context, state) -> None:
        state.set_abstract_state(self.mode_index, modes_.initial_modes(self, context))

    def reset_modes(self, context) -> tuple:
        """Set the contact modes in ``context`` from its state (as the Simulator's
        initialization does): a site within 1e-6 m and not separating is in contact,
        sliding when its slip exceeds 1e-7 m/s, else sticking. Returns the modes."""
        if self.mode_index is None:
            return ()
        ctx = self.get_my_context_from_root(context)
        modes = modes_.initial_modes(self, ctx)
        ctx.set_abstract_state(self.mode_index, modes)
        return modes

    # ------------------------------------------------------------------ conveniences
    def _state_vector(self, ctx):
        return ctx.continuous_state

    def _write_state(self, ctx, x) -> None:
        ctx.set_continuous_state(x)

    def parts(self, q, v):
        """``(H, c, J, b, phi)`` at ``(q, v)`` (numbers): mass matrix (nv x nv),
        ``C - tau_passive`` (nv,), equality rows ``J`` (m x nv), ``b`` (m,) and ``phi`` (m,)."""
        H, c, J, b, phi = self._parts_num(np.asarray(q, float), np.asarray(v, float))
        m = len(self._row_names)
        return (np.asarray(H, float).reshape(self.nv, self.nv), np.asarray(c, float).ravel(),
                np.asarray(J, float).reshape(m, self.nv), np.asarray(b, float).ravel(),
                np.asarray(phi, float).ravel())

    def constraint_violation(self, q) -> np.ndarray:
        """Position errors ``phi(q)`` of the equality rows (m,)."""
        return self.parts(q, np.zeros(self.nv))[4]

    def velocity_violation(self, q, v) -> np.ndarray:
        """``J(q) v`` of the equality rows (m,)."""
        return self.parts(q, v)[2] @ np.asarray(v, float)

    def project_state(self, q, v, *, tol: float = 1e-13, max_iter: int = 50):
        """A consistent state near ``(q, v)``: Gauss-Newton on ``phi(q) = 0`` (minimum-norm
        steps through ``tree.integrate``) then ``v`` projected on the null space of ``J``.

        Returns ``(q, v)``; raises RuntimeError naming this system if it does not converge.
        """
        q = np.asarray(q, float).copy()
        v = np.asarray(v, float).copy()
        if not self._row_names:
            return q, v
        for _ in range(max_iter):
            _, _, J, _, phi = self.parts(q, np.zeros(self.nv))
            if np.max(np.abs(phi)) < tol:
                break
            dq = -np.linalg.lstsq(J, phi, rcond=1e-12)[0]
            q = np.asarray(self.tree.integrate(q, dq, 1.0), float).ravel()
        else:
            raise RuntimeError(f"RigidBodySystem '{self.name}': project_state did not reach "
                               f"|phi| < {tol} (last {np.max(np.abs(phi)):.3g})")
        J = self.parts(q, v)[2]
        v = v - np.linalg.pinv(J, rcond=1e-12) @ (J @ v)
        return q, v

"""``RigidBodySystemBase``: what every rigid-body plant shares.

A plant is the tree block (:class:`~multibody.tree.RigidBodyTree`, itself a System) plus
lists of actuator, sensor and constraint-force blocks, made one :class:`~systems.LeafSystem`
(Drake's 2016 design note). By default its inputs are its actuators' inputs (one port per
actuator with a command, named after it: :meth:`actuator_input_port`) and its outputs its
sensors' outputs (:meth:`sensor_output_port`); the state, accelerations and contact results
stay available as outputs one can ask for, and the applied-force inputs are optional. The
base owns everything but the solve:

* the blocks and their checks (built on this tree, unique names, sizes that fit, constraint
  kinds this plant can solve);
* actuation: one input port per actuator (its ``command``), and the sum of the actuators'
  generalized forces at a state;
* the blocks' evaluation contexts (kept in the plant context's memory, so a plant object can
  serve many contexts at once);
* sensor output ports (one per sensor output);
* the optional inputs ``applied_generalized_force`` (nv) and ``applied_spatial_force``
  (6 per moving body: for every body but the world, in ``tree.bodies`` order, a wrench
  ``[torque; force]`` in world axes about the body origin, mapped by the body's
  world-aligned Jacobian, ``tau = sum_b J_b^T w_b``); unconnected, they contribute nothing
  (Drake's port names; Drake takes the spatial forces as an abstract list);
* state access: :meth:`get_positions`, :meth:`get_velocities`,
  :meth:`get_positions_and_velocities`, :meth:`set_positions`, :meth:`set_velocities`,
  :meth:`set_positions_and_velocities` (sizes and finiteness checked: a named error naming
  the plant, the expected and the given size, or the joint of a NaN entry),
  :meth:`total_energy`.

Subclasses declare their state (continuous ``[q; v; z]`` or discrete ``[q; v; ...]``), give
:meth:`_state_vector` / :meth:`_write_state`, load a block's own state and parameters in
:meth:`_load_block`, and solve: :class:`~multibody.plants.RigidBodyPlant` (ABA),
:class:`~multibody.plants.RigidBodySystem` (accelerations and forces together) and
:class:`~multibody.plants.TimeSteppingRigidBodySystem` (velocities and impulses together).
"""
from __future__ import annotations

from typing import Callable, Iterable, Optional, Sequence

import numpy as np

from solvers import ops
from systems import LeafSystem
from systems.errors import PortValueError
from ..constraints import ConstraintForce
from ..errors import InputSizeError

__all__ = ["RigidBodySystemBase"]


class RigidBodySystemBase(LeafSystem):
    """Base of the rigid-body plants (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
        Finalized here (its topology is frozen).
    actuators : sequence of LeafSystem
        Blocks built on ``tree`` with inputs ``state`` (nq + nv) and ``command``, output
        ``generalized_force`` (nv).
    sensors : sequence of LeafSystem
        Blocks built on ``tree`` with input ``state`` (optionally
        ``generalized_acceleration``, ``contact_results``).
    constraints : sequence of ConstraintForce
    name : str
    reserved : iterable of str
        The plant's own port names (blocks may not take them).

    Raises
    ------
    TypeError, ValueError
        A block of the wrong type, built on another tree, with sizes that do not fit, a
        duplicate name, or a constraint kind the plant cannot solve (each message names the
        plant and the block).
    """

    kind = "rigid-body plant"

    def __init__(self, tree, actuators: Sequence = (), sensors: Sequence = (),
                 constraints: Sequence = (), *, name: str, reserved: Iterable[str] = ()) -> None:
        super().__init__(name)
        tree.finalize()
        self.tree = tree
        self.nq, self.nv = tree.nq, tree.nv
        self.actuators, self.sensors = list(actuators), list(sensors)
        self.constraints = list(constraints)
        self._check_blocks(set(reserved))

    @property
    def label(self) -> str:
        """``"<Kind> '<name>'"``, how messages name this plant."""
        return f"{type(self).__name__} '{self.name}'"

    # ------------------------------------------------------------------ checks
    def _check_blocks(self, reserved: set) -> None:
        """Refuse blocks that do not fit (module docstring); per-kind rules in
        :meth:`_check_block`."""
        nm, tree = self.label, self.tree
        names = set(reserved)
        nx, nv = tree.nq + tree.nv, tree.nv
        for role, blocks in (("actuator", self.actuators), ("sensor", self.sensors),
                             ("constraint", self.constraints)):
            for blk in blocks:
                if not isinstance(blk, LeafSystem):
                    raise TypeError(f"{nm}: {role} {blk!r} is not a LeafSystem block")
                other = getattr(blk, "tree", None)
                if other is not tree:
                    raise ValueError(f"{nm}: {role} '{blk.name}' was built on tree "
                                     f"'{getattr(other, 'name', None)}', not on this system's "
                                     f"tree '{tree.name}' (a block built on another tree does "
                                     "not fit)")
                if blk.name in names:
                    raise ValueError(f"{nm}: duplicate block or port name '{blk.name}'")
                names.add(blk.name)
                if role == "constraint":
                    if not isinstance(blk, ConstraintForce):
                        raise TypeError(f"{nm}: constraint '{blk.name}' is not a ConstraintForce")
                else:
                    n = blk.get_input_port("state").size
                    if n != nx:
                        raise ValueError(f"{nm}: {role} '{blk.name}' input 'state' has size {n}, "
                                         f"expected nq + nv = {nx}")
                if role == "actuator":
                    if not (blk.has_output_port("generalized_force")
                            and blk.has_input_port("command")):
                        raise ValueError(f"{nm}: actuator '{blk.name}' needs a 'command' input "
                                         "and a 'generalized_force' output")
                    m = blk.get_output_port("generalized_force").size
                    if m != nv:
                        raise ValueError(f"{nm}: actuator '{blk.name}' output "
                                         f"'generalized_force' has size {m} but tree "
                                         f"'{tree.name}' has nv = {nv}")
                self._check_block(role, blk)

    def _check_block(self, role: str, blk) -> None:
        """Override: the plant's own rules for a block (state, events, constraint kinds)."""

    # ------------------------------------------------------------------ ports
    def _declare_command_ports(self) -> None:
        """One input port per actuator with a command, named after it, of its ``command``
        size (``None`` in the list for an actuator without command, e.g. friction)."""
        self.command_ports = [self.declare_input_port(a.name, a.get_input_port("command").size)
                              if a.get_input_port("command").size else None
                              for a in self.actuators]

    def _declare_sensor_outputs(self, calc: Callable) -> None:
        """One output per sensor output port, named after the sensor (``"<sensor>_<port>"``
        when it has several), computed by ``calc(context, sensor, port)``; it feeds through
        when the sensor reads accelerations or contact results (which depend on inputs)."""
        self.sensor_ports = {}
        for s in self.sensors:
            feeds = s.has_input_port("generalized_acceleration") or \
                s.has_input_port("contact_results")
            for port in s.output_ports:
                pname = s.name if len(s.output_ports) == 1 else f"{s.name}_{port.name}"
                fn = (lambda c, s=s, port=port: calc(c, s, port))
                if port.size is None:
                    self.declare_abstract_output_port(pname, fn, feedthrough=feeds)
                else:
                    self.declare_output_port(pname, port.size, fn, feedthrough=feeds)
                self.sensor_ports[pname] = (s, port)

    def _declare_applied_force_inputs(self) -> None:
        """The optional inputs ``applied_generalized_force`` and ``applied_spatial_force``."""
        nb = len(self.tree.bodies) - 1
        self.applied_generalized_force = self.declare_input_port(
            "applied_generalized_force", self.nv, optional=True)
        self.applied_spatial_force = self.declare_input_port(
            "applied_spatial_force", 6 * nb, optional=True)
        self._wrench_bodies = [b.name for b in self.tree.bodies[1:]]

    def applied_forces(self, context, q):
        """Generalized force (nv) of the applied-force inputs at ``q`` (numbers or CasADi),
        or ``None`` when neither input has a value."""
        tau = None
        if self.applied_generalized_force.has_value(context):
            tau = self.applied_generalized_force.eval(context)
        if self.applied_spatial_force.has_value(context):
            w = self.applied_spatial_force.eval(context)
            for k, body in enumerate(self._wrench_bodies):
                J = self.tree.jacobian(body, q)
                t = ops.transpose(J) @ w[6 * k:6 * k + 6]
                tau = t if tau is None else tau + t
        return tau

    def get_input_port(self, name_or_index=None):
        """An input port by name or index; with no argument the only input a user must
        connect (the one actuator's command: the optional applied-force inputs aside), as
        Drake's ``get_input_port()`` gives the only port.

        Raises
        ------
        ValueError, IndexError
            No such port, or no argument while there are several required inputs (the
            message lists the ports).
        """
        if name_or_index is None:
            required = [p for p in self.input_ports if not p.optional]
            if len(required) == 1:
                return required[0]
        return super().get_input_port(name_or_index)

    def get_output_port(self, name_or_index=None):
        """An output port by name or index; with no argument the one sensor output when the
        plant has exactly one (its state and contact results are asked for by name).

        Raises
        ------
        ValueError, IndexError
            No such port, or no argument while the plant has no single sensor output.
        """
        if name_or_index is None:
            sensor_ports = getattr(self, "sensor_ports", {})
            if len(sensor_ports) == 1:
                return super().get_output_port(next(iter(sensor_ports)))
        return super().get_output_port(name_or_index)

    def actuator_input_port(self, actuator):
        """The plant's input port carrying ``actuator``'s ``command`` (an actuator block of
        this plant, or its name).

        Raises
        ------
        ValueError
            ``actuator`` is not one of this plant's actuators, or has no command input
            (e.g. joint friction); the message lists the actuators.
        """
        for a, port in zip(self.actuators, getattr(self, "command_ports", ())):
            if a is actuator or a.name == actuator:
                if port is None:
                    raise ValueError(f"{self.label}: actuator '{a.name}' has no command input")
                return port
        raise ValueError(f"{self.label} has no actuator {getattr(actuator, 'name', actuator)!r}; "
                         f"its actuators are {[a.name for a in self.actuators]}")

    def sensor_output_port(self, sensor, port: Optional[str] = None):
        """The plant's output port carrying ``sensor``'s output ``port`` (default: its only
        output); ``sensor`` is a sensor block of this plant or its name.

        Raises
        ------
        ValueError
            ``sensor`` is not one of this plant's sensors, or ``port`` is not one of its
            outputs (the message lists what there is).
        """
        ports = getattr(self, "sensor_ports", {})
        for pname, (s, p) in ports.items():
            if (s is sensor or s.name == sensor) and (port is None or p.name == port):
                if port is None and len(s.output_ports) > 1:
                    raise ValueError(f"{self.label}: sensor '{s.name}' has outputs "
                                     f"{[q.name for q in s.output_ports]}; name one")
                return self.get_output_port(pname)
        raise ValueError(f"{self.label} has no sensor output {getattr(sensor, 'name', sensor)!r}"
                         f"{'' if port is None else f' port {port!r}'}; its sensor outputs are "
                         f"{sorted(ports)}")

    # ------------------------------------------------------------------ blocks
    def block_context(self, blk, context, x=None):
        """The context in which block ``blk`` is evaluated for this plant's ``context``:
        kept in the plant context's memory (one per block), with the plant's time and the
        block's own state and parameters loaded (:meth:`_load_block`)."""
        mem = context.get_memory()
        ctxs = mem.get("blocks")
        if ctxs is None:
            ctxs = mem["blocks"] = {}
        ctx = ctxs.get(id(blk))
        if ctx is None:
            ctx = ctxs[id(blk)] = blk.create_default_context()
        if ctx.time != context.time:
            ctx.set_time(context.time)
        self._load_block(blk, ctx, context, x)
        return ctx

    def _load_block(self, blk, ctx, context, x) -> None:
        """Override: load the block's own state and parameters from the plant's context."""

    def _block_context(self, blk, context, x):
        """The context to evaluate ``blk`` in (override for symbolic evaluation)."""
        return self.block_context(blk, context, x)

    def actuation(self, context, x) -> Optional[np.ndarray]:
        """Sum of the actuators' generalized forces (nv) at the plant state ``x`` (its first
        ``nq + nv`` entries are ``[q; v]``; numbers, or CasADi symbols where the plant is
        symbolic-capable) and the commands in ``context``; ``None`` without actuators."""
        tau = None
        xs = x[:self.nq + self.nv]
        for a, port in zip(self.actuators, self.command_ports):
            ctx = self._block_context(a, context, x)
            a.get_input_port("state").fix_value(ctx, xs)
            a.get_input_port("command").fix_value(
                ctx, port.eval(context) if port is not None else np.zeros(0))
            t = a.get_output_port("generalized_force").eval(ctx)
            tau = t if tau is None else tau + t
        return tau

    def fix_sensor_inputs(self, blk, ctx, x, acceleration: Callable, contacts: Callable) -> None:
        """Fix a sensor's inputs: ``state`` from ``x``, and when it has them
        ``generalized_acceleration`` and ``contact_results`` from the callables (evaluated
        only then)."""
        blk.get_input_port("state").fix_value(ctx, x[:self.nq + self.nv])
        if blk.has_input_port("generalized_acceleration"):
            blk.get_input_port("generalized_acceleration").fix_value(ctx, acceleration())
        if blk.has_input_port("contact_results"):
            blk.get_input_port("contact_results").fix_value(ctx, contacts())

    # ------------------------------------------------------------------ state access
    def _state_vector(self, ctx):
        """Override: the plant's state vector in its own context (``[q; v; ...]``)."""
        raise NotImplementedError

    def _write_state(self, ctx, x) -> None:
        """Override: store the plant's state vector in its own context."""
        raise NotImplementedError

    def get_positions(self, context) -> np.ndarray:
        """q (nq) in ``context`` (this plant's or an enclosing diagram's)."""
        return np.array(self._state_vector(self.get_my_context_from_root(context))[:self.nq],
                        float)

    def get_velocities(self, context) -> np.ndarray:
        """v (nv) in ``context``."""
        x = self._state_vector(self.get_my_context_from_root(context))
        return np.array(x[self.nq:self.nq + self.nv], float)

    def get_positions_and_velocities(self, context) -> np.ndarray:
        """``[q; v]`` (nq + nv) in ``context``."""
        x = self._state_vector(self.get_my_context_from_root(context))
        return np.array(x[:self.nq + self.nv], float)

    def set_positions(self, context, q) -> None:
        """Set q (nq) in ``context`` (this plant's or an enclosing diagram's).

        Raises
        ------
        multibody.errors.InputSizeError
            ``q`` does not have nq entries (the message names the plant, nq and the size
            given).
        systems.errors.PortValueError
            ``q`` is not numeric or has a NaN or infinite entry (names the entry's joint).
        """
        self._set_state_part(context, q, 0, self.nq, "q", "nq")

    def set_velocities(self, context, v) -> None:
        """Set v (nv) in ``context``; refused as :meth:`set_positions` refuses q."""
        self._set_state_part(context, v, self.nq, self.nv, "v", "nv")

    def set_positions_and_velocities(self, context, x) -> None:
        """Set ``[q; v]`` (nq + nv) in ``context`` (Drake's ``SetPositionsAndVelocities``);
        refused as :meth:`set_positions` refuses q."""
        self._set_state_part(context, x, 0, self.nq + self.nv, "[q; v]", "nq + nv")

    def _set_state_part(self, context, value, start: int, n: int, what: str,
                        size_name: str) -> None:
        """Write ``value`` into entries ``[start, start + n)`` of the plant's state after
        checking its size and that it is finite (errors name the plant and the joint)."""
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError) as exc:
            raise PortValueError(f"{self.label}: {what} must be numeric ({size_name} = {n} "
                                 f"numbers), got {type(value).__name__} ({exc})") from None
        if arr.size != n or (arr.ndim > 1 and max(arr.shape) != arr.size):
            shape = f" (shape {arr.shape})" if arr.ndim > 1 else ""
            raise InputSizeError(f"{self.label}: {what} has size {arr.size}{shape} but tree "
                                 f"'{self.tree.name}' has {size_name} = {n}")
        arr = arr.ravel()
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            i = start + int(bad[0])
            raise PortValueError(f"{self.label}: {what}[{int(bad[0])}] is {arr[bad[0]]} (joint "
                                 f"'{self._joint_of_state(i)}'); positions and velocities "
                                 "must be finite")
        ctx = self.get_my_context_from_root(context)
        x = np.array(self._state_vector(ctx), float)
        x[start:start + n] = arr
        self._write_state(ctx, x)

    def _joint_of_state(self, i: int) -> str:
        """The joint owning entry ``i`` of ``[q; v]``."""
        for j in self.tree.joints:
            if j.q_start <= i < j.q_start + j.nq or \
                    j.v_start <= i - self.nq < j.v_start + j.nv:
                return j.name
        return "?"

    def total_energy(self, context) -> float:
        """Kinetic plus potential energy at the state in ``context``."""
        q, v = self.get_positions(context), self.get_velocities(context)
        return float(self.tree.kinetic_energy(q, v) + self.tree.potential_energy(q))

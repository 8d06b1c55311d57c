"""The rigid-body tree as a System: :class:`RigidBodyPlant`.

State x = [q; v] (``num_q = nq``, ``num_v = nv``), input ``generalized_force`` tau (nv),
outputs ``state`` (nq + nv) and ``generalized_acceleration`` (nv). The time derivatives are

    qdot = N(q) v,    vdot = ABA(q, v, tau + tau_passive(q, v)),

with tau_passive the joint damping and spring forces (Featherstone 2008, ch. 7, for ABA).
Both are one CasADi function of (q, v, tau), built once and evaluated through the compiled
path of :mod:`solvers.compiled` for numbers, or called on symbols for the symbolic
conversion (linearization, trajectory optimization).
"""
from __future__ import annotations

from typing import Optional

import casadi as ca
import numpy as np

from solvers import ops
from solvers.compiled import CompiledFunction
from ..tree import RigidBodyTree
from .base import RigidBodySystemBase

__all__ = ["RigidBodyPlant"]


class RigidBodyPlant(RigidBodySystemBase):
    """A :class:`~multibody.tree.RigidBodyTree` as a continuous-time System (no actuator,
    sensor or constraint blocks: the generalized force comes in on one port; see
    :class:`RigidBodySystem` for blocks and constraints).

    Parameters
    ----------
    tree : RigidBodyTree
    include_passive_forces : bool
        Add the joints' damping and spring forces (default True).
    backend : str
        ``"auto"``, ``"c"`` or ``"casadi"`` for the numeric evaluation.
    name : str, optional
        Default: the tree's name.

    Ports
    -----
    Input:

    * ``generalized_force`` (nv): ``tau``, the generalized force on the joints (N m, N).

    Outputs:

    * ``state`` (nq + nv): ``[q; v]``;
    * ``generalized_acceleration`` (nv): ``vdot = ABA(q, v, tau + tau_passive)`` (direct
      feedthrough of ``generalized_force``).

    Notes
    -----
    Default initial state: the tree's neutral configuration and zero velocity.
    """

    def __init__(self, tree: RigidBodyTree, *, include_passive_forces: bool = True,
                 backend: str = "auto", name: Optional[str] = None):
        super().__init__(tree, name=name or tree.name.replace(".", "_"))
        nq, nv = self.nq, self.nv
        self._nq = nq
        x0 = np.concatenate([tree.neutral_configuration(), np.zeros(nv)])
        self.declare_continuous_state(nq + nv, num_q=nq, num_v=nv, initial=x0)
        self._tau = self.declare_input_port("generalized_force", nv)
        self.declare_output_port("state", nq + nv, lambda c: c.continuous_state, feedthrough=False,
                                 prerequisites=["continuous_state"])
        self.declare_output_port("generalized_acceleration", nv,
                                 lambda c: self.eval_time_derivatives(c)[nq:], feedthrough=True)
        q, v, tau = ca.SX.sym("q", nq), ca.SX.sym("v", nv), ca.SX.sym("tau", nv)
        total = tau + tree.joint_passive_forces(q, v) if include_passive_forces else tau
        xdot = ca.vertcat(tree.qdot(q, v), tree.forward_dynamics(q, v, total))
        self._f = ca.Function(ops.function_name(self.name, "dynamics"), [q, v, tau], [xdot], ["q", "v", "tau"], ["xdot"])
        self._qdot = ca.Function(ops.function_name(self.name, "qdot"), [q, v], [tree.qdot(q, v)], ["q", "v"], ["qdot"])
        self._f_num = CompiledFunction(self._f, backend=backend)
        self._qdot_num = CompiledFunction(self._qdot, backend=backend)

    def time_derivatives(self, context):
        x = context.continuous_state
        q, v = x[:self._nq], x[self._nq:]
        tau = self._tau.eval(context)
        if ops.any_symbolic(x, tau):
            return self._f(q, v, tau)
        return self._f_num(q, v, tau)

    def map_velocity_to_qdot(self, context, v):
        q = context.continuous_state[:self._nq]
        if ops.any_symbolic(q, v):
            return self._qdot(q, v)
        return self._qdot_num(q, v)

    def _state_vector(self, ctx):
        return ctx.continuous_state

    def _write_state(self, ctx, x) -> None:
        ctx.set_continuous_state(x)

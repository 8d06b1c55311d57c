""":class:`RigidBodyPlant`: the tree block with options and the plants' state access.

A :class:`~multibody.tree.RigidBodyTree` is itself a System block (input
``generalized_force``, output ``state``; :mod:`multibody.tree.tree_system`), and
``builder.add_system(tree)`` is the plain way to simulate a bare tree. ``RigidBodyPlant(tree)``
is kept as that block with options: the same state x = [q; v] (``num_q = nq``,
``num_v = nv``), input ``generalized_force`` tau (nv) and output ``state`` (nq + nv), plus the
output ``generalized_acceleration`` (nv), ``include_passive_forces``, its own ``backend`` and
name, and the state access of every plant (``get_positions``, ``set_positions``, ...). The
time derivatives are

    qdot = N(q) v,    vdot = ABA(q, v, tau + tau_passive(q, v)),

with tau_passive the joint damping and spring forces (Featherstone 2008, ch. 7, for ABA),
from the same CasADi function as the tree block
(:func:`multibody.tree.tree_system.block_dynamics`), so both give bitwise the same numbers,
evaluated through :mod:`solvers.compiled` for numbers or called on symbols for the symbolic
conversion (linearization, trajectory optimization, compiled simulation).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from solvers import ops
from solvers.compiled import CompiledFunction
from ..tree import RigidBodyTree, block_dynamics
from .base import RigidBodySystemBase

__all__ = ["RigidBodyPlant"]


class RigidBodyPlant(RigidBodySystemBase):
    """A :class:`~multibody.tree.RigidBodyTree` as a continuous-time System (no actuator,
    sensor or constraint blocks: the generalized force comes in on one port; see
    :class:`RigidBodySystem` for blocks and constraints). The tree is itself this block
    without the options (``builder.add_system(tree)``); both evaluate the same function.

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
        self._f, self._qdot = block_dynamics(tree, include_passive_forces, self.name)
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

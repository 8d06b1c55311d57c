"""The rigid-body tree as a System block: :class:`TreeSystem`, the base class of
:class:`~multibody.tree.RigidBodyTree` (Drake's 2016 rigid-body design: "RigidBodyTree (isa
System). Input: generalized forces (tau). Output: generalized state (q, v)").

A tree is built incrementally (``add_body``, ``add_joint``), so its sizes are known only when
its topology is frozen by :meth:`~multibody.tree.RigidBodyTree.finalize`. The block's
declarations are made then, and anything that asks for them first (``add_system``, a port, a
context, the state size) freezes the topology:

* continuous state ``x = [q; v]`` (``num_q = nq``, ``num_v = nv``), by default the neutral
  configuration and zero velocity;
* input ``generalized_force`` (nv): ``tau`` on the joints (N m, N);
* output ``state`` (nq + nv): ``[q; v]`` (no direct feedthrough);
* time derivatives

  .. math:: \\dot q = N(q) v, \\qquad \\dot v = \\mathrm{ABA}(q, v, \\tau + \\tau_{passive}(q, v))

  with :math:`\\tau_{passive}` the joints' damping and spring forces (Featherstone 2008,
  ch. 7, for ABA). Both come from one CasADi function of ``(q, v, tau)``
  (:func:`block_dynamics`, shared with :class:`~multibody.plants.RigidBodyPlant`, so the two
  give bitwise the same numbers), evaluated through :mod:`solvers.compiled` for numbers and
  called on symbols for the diagram's CasADi conversion (linearization, trajectory
  optimization, ``Simulator(diagram, compiled=True)``).

The algorithms stay methods of the tree callable without a context
(``tree.forward_dynamics(q, v, tau)``, batched, symbolic); the block holds only declarations
and the functions built from the tree, never per-run values (those live in the Context).
"""
from __future__ import annotations

from typing import Any, Optional

import casadi as ca
import numpy as np

from solvers import ops
from systems.leaf_system import LeafSystem

__all__ = ["TreeSystem", "block_dynamics"]


def block_dynamics(tree, include_passive_forces: bool = True,
                   name: Optional[str] = None) -> tuple[ca.Function, ca.Function]:
    """The continuous-time dynamics of ``tree`` as two CasADi functions.

    Parameters
    ----------
    tree : RigidBodyTree
        Finalized here.
    include_passive_forces : bool
        Add the joints' damping and spring forces ``tau_passive(q, v)`` to ``tau``.
    name : str, optional
        Prefix of the functions' names (default: the tree's name).

    Returns
    -------
    dynamics : casadi.Function
        ``(q (nq), v (nv), tau (nv)) -> xdot (nq + nv)``,
        ``xdot = [N(q) v; ABA(q, v, tau + tau_passive)]`` (Featherstone 2008, ch. 7).
    qdot : casadi.Function
        ``(q, v) -> N(q) v`` (nq).
    """
    nm = tree.name if name is None else name
    nq, nv = tree.nq, tree.nv
    q, v, tau = ca.SX.sym("q", nq), ca.SX.sym("v", nv), ca.SX.sym("tau", nv)
    total = tau + tree.joint_passive_forces(q, v) if include_passive_forces else tau
    xdot = ca.vertcat(tree.qdot(q, v), tree.forward_dynamics(q, v, total))
    f = ca.Function(ops.function_name(nm, "dynamics"), [q, v, tau], [xdot],
                    ["q", "v", "tau"], ["xdot"])
    qd = ca.Function(ops.function_name(nm, "qdot"), [q, v], [tree.qdot(q, v)],
                     ["q", "v"], ["qdot"])
    return f, qd


def _system_name(name: Any) -> str:
    """A System name for a tree called ``name`` ('.' is the diagrams' path separator)."""
    return str(name).replace(".", "_") or "robot"


class TreeSystem(LeafSystem):
    """A :class:`~systems.LeafSystem` whose declarations come from a rigid-body tree when
    its topology is frozen (module docstring). Subclassed by
    :class:`~multibody.tree.RigidBodyTree`, which calls :meth:`_declare_block` at the end of
    ``finalize()``; not used on its own.

    Parameters
    ----------
    name : str
        The tree's name; its System name is the same with '.' replaced by '_'.

    Ports
    -----
    Input ``generalized_force`` (nv); output ``state`` (nq + nv).
    """

    def __init__(self, name: str) -> None:
        super().__init__(_system_name(name))
        self.model_name = str(name)
        self._block_functions = None
        self._block_declared = False

    def _rename(self, value: str) -> None:
        LeafSystem.name.fset(self, _system_name(value))
        self.model_name = str(value)

    name = property(LeafSystem.name.fget, _rename, doc=(
        "The System name: the model's name (:attr:`model_name`, as the model file spells "
        "it, used for export) with '.' replaced by '_'; setting it sets both."))

    # ------------------------------------------------------------ declarations at finalize
    def _freeze(self) -> None:
        """Finalize the tree (which declares the block) unless that is done or under way."""
        if not self.__dict__.get("_finalized", True):
            self.finalize()

    @property
    def input_ports(self) -> list:
        """Input ports (``generalized_force``); asking for them freezes the topology."""
        self._freeze()
        return self._input_ports

    @input_ports.setter
    def input_ports(self, ports: list) -> None:
        self._input_ports = ports

    @property
    def output_ports(self) -> list:
        """Output ports (``state``); asking for them freezes the topology."""
        self._freeze()
        return self._output_ports

    @output_ports.setter
    def output_ports(self, ports: list) -> None:
        self._output_ports = ports

    @property
    def in_builder(self):
        """The :class:`~systems.DiagramBuilder` holding this block, or None; being added to
        one freezes the topology (so the ports have their final sizes)."""
        return self._in_builder

    @in_builder.setter
    def in_builder(self, builder) -> None:
        if builder is not None:
            self._freeze()
        self._in_builder = builder

    def _declare_block(self) -> None:
        """Declare the state, ports and defaults from the frozen topology (once)."""
        if self._block_declared:
            return
        self._block_declared = True
        nq, nv = self.nq, self.nv
        x0 = np.concatenate([self.neutral_configuration(), np.zeros(nv)])
        self.declare_continuous_state(nq + nv, num_q=nq, num_v=nv, initial=x0)
        self._generalized_force = self.declare_input_port("generalized_force", nv)
        self.declare_output_port("state", nq + nv, self._calc_state, feedthrough=False,
                                 prerequisites=["continuous_state"])

    def allocate_context(self):
        self._freeze()
        return super().allocate_context()

    def num_continuous_states(self) -> int:
        self._freeze()
        return super().num_continuous_states()

    def default_continuous_state(self) -> np.ndarray:
        self._freeze()
        return super().default_continuous_state()

    def continuous_state_partition(self):
        self._freeze()
        return super().continuous_state_partition()

    # ------------------------------------------------------------ evaluation
    def _dynamics_functions(self) -> tuple:
        """``(dynamics, dynamics_numeric, qdot, qdot_numeric)``, built at the first use and
        dropped when gravity, armature or the topology change."""
        fns = self._block_functions
        if fns is None:
            from solvers.compiled import CompiledFunction
            f, qd = block_dynamics(self, True, self.name)
            fns = self._block_functions = (f, CompiledFunction(f, backend=self.backend), qd,
                                           CompiledFunction(qd, backend=self.backend))
        return fns

    def _calc_state(self, context):
        return context.continuous_state

    def time_derivatives(self, context):
        """``xdot = [N(q) v; ABA(q, v, tau + tau_passive)]`` (module docstring), numbers or
        CasADi symbols."""
        x = context.continuous_state
        q, v = x[:self._nq], x[self._nq:]
        tau = self._generalized_force.eval(context)
        f, f_num, _, _ = self._dynamics_functions()
        if ops.any_symbolic(x, tau):
            return f(q, v, tau)
        return f_num(q, v, tau)

    def map_velocity_to_qdot(self, context, v):
        """``qdot = N(q) v`` at the q in ``context``."""
        q = context.continuous_state[:self._nq]
        _, _, qd, qd_num = self._dynamics_functions()
        if ops.any_symbolic(q, v):
            return qd(q, v)
        return qd_num(q, v)

    # ------------------------------------------------------------ copies
    def __getstate__(self) -> dict:
        """Pickle and deepcopy without the built functions (CasADi and compiled C handles,
        rebuilt on first use); declarations and topology are kept."""
        state = dict(self.__dict__)
        state["_functions"] = None
        state["_block_functions"] = None
        return state

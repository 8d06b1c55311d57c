"""The :class:`Actuator` base block: state + command -> generalized force.

An actuator is a System with input ports ``state`` (nq + nv, the plant's [q; v]) and
``command`` (its own size), and output port ``generalized_force`` (nv), so that
tau_actuators = sum over actuators of their outputs. It may have internal state (a motor's
current, for instance). Subclasses implement :meth:`Actuator.generalized_force`, written
with :mod:`solvers.ops` so that it also evaluates on CasADi symbols.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from systems import LeafSystem

__all__ = ["Actuator", "per_actuator_vector"]


def per_actuator_vector(value, n: int, name: str, who: str, *, positive: bool = False,
                        nonneg: bool = False, allow_inf: bool = False) -> np.ndarray:
    """A parameter given as a scalar or one value per actuated coordinate, as a vector (n,);
    raises ValueError naming ``who``, ``name`` and what was expected (size, finite, ``> 0``
    with ``positive``, ``>= 0`` with ``nonneg``; ``inf`` allowed with ``allow_inf``)."""
    a = np.atleast_1d(np.asarray(value, dtype=float)).ravel()
    if a.shape[0] == 1:
        a = np.full(n, a[0])
    if a.shape[0] != n:
        raise ValueError(f"{who}: {name} has {a.shape[0]} entries but the joints give {n} "
                         "actuated coordinates")
    if np.any(np.isnan(a)) or (not allow_inf and not np.all(np.isfinite(a))):
        raise ValueError(f"{who}: {name} must be finite, got {a.tolist()}")
    if positive and np.any(a <= 0):
        raise ValueError(f"{who}: {name} must be > 0, got {a.tolist()}")
    if nonneg and np.any(a < 0):
        raise ValueError(f"{who}: {name} must be >= 0, got {a.tolist()}")
    return a


class Actuator(LeafSystem):
    """Base actuator block for a rigid-body tree.

    Parameters
    ----------
    tree : multibody.RigidBodyTree
        The tree the actuator acts on (finalized here; gives nq and nv).
    command_size : int
        Size of the ``command`` input.
    """

    def __init__(self, tree, command_size: int, name: Optional[str] = None):
        super().__init__(name)
        tree.finalize()
        self.tree = tree
        self.nq, self.nv = tree.nq, tree.nv
        self.state_port = self.declare_input_port("state", self.nq + self.nv)
        self.command_port = self.declare_input_port("command", command_size)
        # Declared (not inferred) so that numeric-only actuators need no symbolic evaluation.
        self.declare_output_port("generalized_force", self.nv, self._calc_force, feedthrough=True)

    def _calc_force(self, context):
        x = self.state_port.eval(context)
        return self.generalized_force(context, x[:self.nq], x[self.nq:], self.command_port.eval(context))

    def generalized_force(self, context, q, v, command):
        """Override: the generalized force tau (nv) for positions q, velocities v and a command."""
        raise NotImplementedError(f"actuator '{self.name}' must implement generalized_force")

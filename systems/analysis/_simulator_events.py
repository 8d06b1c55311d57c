"""Private parts of the Simulator: the status types, the errors, the check of its options,
the monitor's verdict and the fault reports (non-finite states and derivatives, located in
the leaf that owns them).

The events themselves (what is pending, the witness state, the statistics) live in one
object, :class:`~systems.analysis.event_schedule.EventSchedule`. See
:mod:`systems.analysis.simulator` for the semantics.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from ..errors import NonFiniteStateError, SimulationError
from .integrators import INTEGRATOR_NAMES, SCIPY_METHODS

__all__ = ["SimulationError", "NonFiniteStateError", "EventStatus", "SimulatorStatus",
           "monitor_verdict", "StateLocator", "check_options"]


@dataclass(frozen=True)
class EventStatus:
    """What a monitor returns: ``severity`` one of ``"did_nothing"``, ``"succeeded"``,
    ``"reached_termination"``, ``"failed"``, with an optional message."""

    severity: str
    message: str = ""

    @classmethod
    def did_nothing(cls) -> "EventStatus":
        """Continue."""
        return cls("did_nothing")

    @classmethod
    def succeeded(cls) -> "EventStatus":
        """Continue."""
        return cls("succeeded")

    @classmethod
    def reached_termination(cls, message: str = "") -> "EventStatus":
        """Stop the run; ``advance_to`` returns normally."""
        return cls("reached_termination", message)

    @classmethod
    def failed(cls, message: str = "") -> "EventStatus":
        """Stop the run with a :class:`SimulationError`."""
        return cls("failed", message)


@dataclass(frozen=True)
class SimulatorStatus:
    """Returned by :meth:`Simulator.advance_to`.

    Attributes
    ----------
    reason : str
        ``"reached_boundary_time"`` or ``"reached_termination"`` (the monitor stopped it).
    boundary_time : float
        The requested final time.
    return_time : float
        The time reached.
    message : str
    """

    reason: str
    boundary_time: float
    return_time: float
    message: str = ""

    def succeeded(self) -> bool:
        """True when the requested time was reached."""
        return self.reason == "reached_boundary_time"


def check_options(integrator: str, accuracy, atol, max_step, fixed_step: bool,
                  witness_tolerance):
    """The Simulator's numeric options checked: ``(accuracy, atol, max_step,
    witness_tolerance)`` as floats (``atol`` defaults to ``1e-3 * accuracy``), or a
    ValueError naming the option and what it must be."""
    for name, value in (("accuracy", accuracy), ("max_step", max_step),
                        ("witness_tolerance", witness_tolerance)):
        if not (isinstance(value, numbers.Real) and not isinstance(value, bool) and value > 0
                and not math.isnan(value)):
            raise ValueError(f"Simulator: {name} must be a number > 0, got {value!r}")
    fixed = integrator in ("explicit_euler", "semi_explicit_euler", "runge_kutta4") or fixed_step
    if fixed and not math.isfinite(max_step):
        raise ValueError(f"Simulator: integrator '{integrator}' takes fixed steps of size "
                         f"max_step, which must be finite (got {max_step!r})")
    if fixed_step and integrator in SCIPY_METHODS:
        raise ValueError(f"Simulator: integrator '{integrator}' (scipy) is always "
                         f"error-controlled; fixed_step=True applies to "
                         f"{', '.join(INTEGRATOR_NAMES[:5])}")
    accuracy = float(accuracy)
    atol = 1e-3 * accuracy if atol is None else float(atol)
    for what, val in (("accuracy", accuracy), ("atol", atol)):
        if not (math.isfinite(val) and val > 0):
            raise ValueError(f"Simulator: {what} must be finite and > 0, got {val!r}")
    return accuracy, atol, float(max_step), float(witness_tolerance)


def monitor_verdict(monitor: Callable, context, t: float, system_name: str) -> Optional[str]:
    """Call ``monitor(context)``: None to continue, else the termination message (a
    ``"failed"`` verdict raises :class:`SimulationError`; see the Simulator's docstring)."""
    result = monitor(context)
    if result is None:
        return None
    if isinstance(result, str):
        key = result.lower()
        if key in ("terminate", "reached_termination", "stop"):
            return f"monitor requested termination at t={t!r}"
        if key in ("fail", "failed"):
            raise SimulationError(f"monitor reported failure at t={t!r} while simulating "
                                  f"'{system_name}'")
        raise ValueError(f"Simulator monitor returned the string {result!r}; expected None, "
                         f"an EventStatus, 'terminate' or 'fail'")
    if isinstance(result, EventStatus):
        if result.severity in ("did_nothing", "succeeded"):
            return None
        if result.severity == "reached_termination":
            return result.message or f"monitor requested termination at t={t!r}"
        if result.severity == "failed":
            raise SimulationError(f"monitor reported failure at t={t!r} while simulating "
                                  f"'{system_name}': {result.message}")
    raise TypeError(f"Simulator monitor returned {result!r}; expected None, an EventStatus, "
                    f"'terminate' or 'fail'")


class StateLocator:
    """Names the leaf system owning an entry of a diagram's continuous state, for the
    reports of non-finite states and derivatives.

    Parameters
    ----------
    system : System
        The simulated system.
    slots : sequence of (LeafContext, int, int)
        Each leaf with continuous state and its ``[start, stop)`` in the state vector.
    """

    def __init__(self, system, slots: Sequence):
        self.system, self.slots = system, tuple(slots)

    def locate(self, index: int):
        """(leaf system, local index) of entry ``index`` of the continuous state."""
        for leaf, a, b in self.slots:
            if a <= index < b:
                return leaf.system, index - a
        return self.system, index  # pragma: no cover

    def check_state(self, t1: float, x: np.ndarray, t0: Optional[float]) -> None:
        """Raise :class:`NonFiniteStateError` when ``x`` (the state at ``t1``, reached from
        ``t0`` or set at ``t1`` when ``t0`` is None) has a non-finite entry."""
        if x.shape[0] and not math.isfinite(sum(x.tolist()) if x.shape[0] <= 32 else float(x.sum())):
            nonfinite = np.flatnonzero(~np.isfinite(x))
            if nonfinite.size == 0:
                return  # finite values whose sum overflowed
            bad = int(nonfinite[0])
            system, local = self.locate(bad)
            when = f"t={t1!r}" if t0 is None else f"the step from t={t0!r} to t={t1!r}"
            raise NonFiniteStateError(
                f"continuous state {local} of system '{system.name}' (index {bad} of the "
                f"state of '{self.system.name}') became {x[bad]} in {when}; the context "
                f"keeps the last finite state")

    def report_derivative(self, context, t: float, xdot: np.ndarray) -> None:
        """Raise :class:`NonFiniteStateError` for the first non-finite entry of ``xdot``,
        naming its leaf and the first non-finite cached output (the usual culprit)."""
        bad = int(np.flatnonzero(~np.isfinite(xdot))[0])
        system, local = self.locate(bad)
        culprit = ""
        for leaf in context.leaf_contexts():
            for j, value in leaf.cached_output_values():
                if isinstance(value, np.ndarray) and value.dtype.kind == "f" and \
                        not np.all(np.isfinite(value)):
                    port = leaf.system.output_ports[j]
                    culprit = (f"; output port '{port.name}' of system '{leaf.system.name}' "
                               f"is not finite")
                    break
            if culprit:
                break
        raise NonFiniteStateError(
            f"time derivative of continuous state {local} of system '{system.name}' is "
            f"{xdot[bad]} at t={t!r}{culprit}; the context keeps the last finite state")

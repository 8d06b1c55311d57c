"""Which step a :class:`~multibody.plants.TimeSteppingRigidBodySystem` takes, and the
:class:`~multibody.errors.StepMethodWarning` when it is not the compiled one (private).

The compiled step (:mod:`._ts_compiled`) is typically an order of magnitude faster than the
pivoting (Lemke) step (issue 21 measured 0.46-0.67x against 10-14x the time of Drake SAP per
step); a scene that leaves it does so with one warning per plant, never silently:

* at construction, when the scene is not covered by the compiled step: the warning names the
  plant and the culprit (``joint limit 'lim' on joint 'knee'``, ``ball closure 'loop'``, a
  ``Box-Box`` geometry pair, ...) and says why (``step_method_reason``);
* at the first step that falls back because the kernel did not converge (or a velocity
  block of ``H + h D`` is not positive definite): the plant, the time and the residual.
  Later fallbacks are not reported (``step.report.method`` tells which step each took).

No warning when ``contact_solver="lcp"`` asks for the pivoting step, nor for a plant without
constraint blocks (no constraint rows: nothing is pivoted).

Where the once-per-plant memory lives: a :class:`StepMethodNotice` held by the plant. It is
diagnostic, not simulation state: no computed number depends on it, so reruns stay bitwise
identical and one plant serves many contexts; it is per plant object on purpose (a Monte
Carlo run of 1000 contexts warns once, not 1000 times). Python's warnings registry alone is
not enough: under ``simplefilter("always")`` (pytest's ``-W always``, notebooks) it would
warn at every step.
"""
from __future__ import annotations

import threading
import warnings
from typing import Callable, Optional

from solvers.contact_step import ContactStepBuildError, load_kernel

from ..errors import StepMethodWarning
from ._time_stepping_solve import TimeSteppingWarning
from ._ts_compiled import CompiledContactStep, unsupported_reason

__all__ = ["select_step_method", "StepMethodNotice"]


def select_step_method(tree, constraints, contact_solver: str, label: str,
                       make_step: Callable) -> tuple:
    """The compiled step of a plant (or None) and why not (or None).

    Parameters
    ----------
    tree : RigidBodyTree
    constraints : list of ConstraintForce
    contact_solver : {"auto", "pgs", "lcp"}
    label : str
        How messages name the plant.
    make_step : callable
        ``make_step(kernel) -> CompiledContactStep`` with the plant's tables.

    Returns
    -------
    (CompiledContactStep or None, str or None)

    Raises
    ------
    ValueError
        ``contact_solver="pgs"`` where the compiled step does not apply.
    solvers.contact_step.ContactStepBuildError
        ``contact_solver="pgs"`` and the C compiler failed on the kernel.
    """
    if contact_solver == "lcp":
        return None, "contact_solver='lcp'"
    soft = [c for c in constraints if getattr(c, "mujoco", None) is not None]
    reason = (f"constraint '{soft[0].name}' has MuJoCo softening (solref/solimp), which the "
              "compiled step does not have") if soft else unsupported_reason(tree, constraints)
    compiled: Optional[CompiledContactStep] = None
    if reason is None:
        try:
            kernel = load_kernel()
        except ContactStepBuildError as exc:
            if contact_solver == "pgs":
                raise
            warnings.warn(f"{label}: the compiled contact step is not available ({exc}); "
                          "using the interpreted step", TimeSteppingWarning, stacklevel=3)
            kernel, reason = None, f"the contact kernel did not compile: {exc}"
        if kernel is not None:
            compiled = make_step(kernel)
    if reason is not None and contact_solver == "pgs":
        raise ValueError(f"{label}: contact_solver='pgs' is not available: {reason}")
    return compiled, reason


class StepMethodNotice:
    """The once-per-plant warnings of leaving the compiled step (module docstring).

    Parameters
    ----------
    label : str
        How the messages name the plant (``"TimeSteppingRigidBodySystem 'scene'"``).
    """

    def __init__(self, label: str) -> None:
        self.label = label
        self._fallback_warned = False
        self._lock = threading.Lock()

    def scene(self, reason: Optional[str], contact_solver: str, constraints,
              stacklevel: int = 3) -> bool:
        """Warn that every step of this plant is the pivoting step, naming ``reason``'s
        culprit; nothing when the compiled step runs, when ``contact_solver="lcp"`` chose
        the pivoting step, or without constraint blocks. Returns whether it warned."""
        if reason is None or contact_solver == "lcp" or not constraints:
            return False
        warnings.warn(f"{self.label} takes the pivoting (Lemke) step at every step, "
                      "typically an order of magnitude slower than the compiled step: "
                      f"{reason} (plant.step_method_reason; "
                      "pass contact_solver='lcp' to choose it without this warning)",
                      StepMethodWarning, stacklevel=stacklevel)
        return True

    def fallback(self, t: float, why: Optional[str]) -> bool:
        """Warn, the first time only, that the step at ``t`` fell back from the compiled
        step to the pivoting one because of ``why``. Returns whether it warned."""
        with self._lock:
            if self._fallback_warned:
                return False
            self._fallback_warned = True
        warnings.warn(f"{self.label}: the step at t={t:.6g} fell back from the compiled step "
                      f"to the pivoting (Lemke) step: {why or 'the kernel did not converge'}; "
                      "later fallbacks of this plant are not reported (step.report.method "
                      "tells which step each took; pgs_max_sweeps and lcp_tolerance set the "
                      "kernel's budget)", StepMethodWarning, stacklevel=2)
        return True

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_lock")
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

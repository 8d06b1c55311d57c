"""The step-method contract of :class:`~multibody.plants.TimeSteppingRigidBodySystem`, the
choice of a plant's method (made once, when the plant is built), and the
:class:`~multibody.errors.StepMethodWarning` when a scene leaves the compiled step (private).

The contract (in the spirit of scipy's ``OdeSolver``): a :class:`StepMethod` takes one time
step, ``step(context) -> StepSolution``. The base class owns the bookkeeping -- the step's
inputs (:class:`StepInputs`: time, discrete state, actuation plus applied forces, the
context's :class:`~multibody.plants.ContactWarmStart`), handing a step it cannot take to its
``fallback`` with the once-per-plant warning, and marking that step's
:class:`~multibody.plants.StepStatus` -- and a subclass fills in one method,
``_step_impl(context, inputs)``, returning the :class:`~multibody.plants.StepSolution` or a
:class:`StepFailure` naming why it cannot take this step. The two implementations:
``CompiledStep`` (the C kernel or its numpy twin, :mod:`._ts_compiled`; fallback: the
pivoting step) and ``PivotingStep`` (numpy and the pivoting LCP solvers,
:mod:`._pivoting_step`; ``contact_solver="lcp"``, no fallback).

The compiled step is typically an order of magnitude faster than the pivoting (Lemke) step
(issue 21 measured 0.46-0.67x against 10-14x the time of Drake SAP per step); a scene that
leaves it does so with one warning per plant, never silently:

* at construction, when the scene is not covered by the compiled step: the warning names the
  plant and the culprit (``joint limit 'lim' on joint 'knee'``, ``ball closure 'loop'``, a
  ``Box-Box`` geometry pair, ...) and says why (``step_method_reason``);
* at the first step that falls back because the kernel did not converge (or a velocity
  block of ``H + h D`` is not positive definite): the plant, the time and the residual.
  Later fallbacks are not reported (``step.status`` tells which method took each step).
* the last resort, at the first step where the method did not converge and its fallback
  failed too (raised :class:`~solvers.errors.LCPSolveError`): if the method handed over its
  own iterate (``StepFailure.candidate``, the compiled kernel's last PGS/polish iterate) and
  its residual is within ``NEAR_MISS`` (1e-5, the pivoting step's own near-miss bound:
  relative velocity error, 1e-8 m of drift in a 1 ms step), that iterate is the step:
  warned once per plant (plant, time, residual), its status ``converged=False`` with report
  status ``"near_miss"`` and ``fallback_reason`` naming both failures. Beyond the bound the
  fallback's error is raised. (Issue 21: a stack of pushed boxes, four contact points per
  face, where the kernel ends at 2e-7..3e-6 and Lemke breaks down.)

No warning when ``contact_solver="lcp"`` asks for the pivoting step, nor for a plant without
constraint blocks (no constraint rows: nothing is pivoted).

Where the once-per-plant memory lives: a :class:`StepMethodNotice` held by the plant's step
method (built once per plant). It is diagnostic, not simulation state: no computed number
depends on it, so reruns stay bitwise identical and one plant serves many contexts; it is
per plant object on purpose (a Monte Carlo run of 1000 contexts warns once, not 1000 times).
Python's warnings registry alone is not enough: under ``simplefilter("always")`` (pytest's
``-W always``, notebooks) it would warn at every step.
"""
from __future__ import annotations

import dataclasses
import threading
import warnings
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from solvers.contact_step import ContactStepBuildError, load_kernel
from solvers.errors import LCPSolveError

from ..errors import MultibodyError, StepMethodWarning
from ._time_stepping_solve import NEAR_MISS, TimeSteppingWarning
from .solutions import StepSolution

__all__ = ["StepMethod", "StepInputs", "StepFailure", "select_step_method", "StepMethodNotice",
           "velocity_blocks", "implicit_damping"]


class StepInputs:
    """What every step method starts from (built by :meth:`StepMethod.step`).

    Attributes
    ----------
    time : float
        ``t``, the start of the step.
    xd : ndarray, shape (nq + nv + block states,)
        The discrete state at ``t``.
    q, v : ndarray
        Its configuration (nq,) and velocity (nv,) (views of ``xd``).
    tau : ndarray, shape (nv,)
        Actuation plus the applied-force inputs, constant over the step.
    warm_start : ContactWarmStart or None
        The last committed step's impulses (the context's ``"warm_start"`` memory).
    memory : dict
        The context's per-run memory (a method keeps its buffers there, never on itself:
        one plant serves many contexts).
    """

    __slots__ = ("time", "xd", "q", "v", "tau", "warm_start", "memory")

    def __init__(self, time: float, xd: np.ndarray, q: np.ndarray, v: np.ndarray,
                 tau: np.ndarray, warm_start, memory: dict) -> None:
        self.time, self.xd, self.q, self.v, self.tau = time, xd, q, v, tau
        self.warm_start, self.memory = warm_start, memory


@dataclass(frozen=True)
class StepFailure:
    """A step method could not take this step (``reason`` says why: the kernel did not
    converge, a singular velocity block); the base class hands the step to the fallback.

    Attributes
    ----------
    reason : str
    candidate : StepSolution or None
        The method's own unconverged iterate as a complete step (the compiled kernel's
        last iterate), kept only as the last resort of :meth:`StepMethod.take`.
    residual : float
        ``candidate``'s residual (the method's own relative natural-map residual).
    """

    reason: str
    candidate: Optional[StepSolution] = None
    residual: float = float("nan")


class StepMethod:
    """One time step of a :class:`~multibody.plants.TimeSteppingRigidBodySystem` (module
    docstring): ``step(context) -> StepSolution``.

    Subclasses set :attr:`name` (and :attr:`description`) and fill in
    :meth:`_step_impl`; they may set :attr:`fallback` to the method that takes the steps
    they cannot. A subclass is plugged into a plant by passing the class as
    ``contact_solver``: the plant builds it once, ``cls(plant)``.

    Parameters
    ----------
    plant : TimeSteppingRigidBodySystem
        The plant whose steps it takes (read through its public interface:
        ``kinematics``, ``integrate``, ``block_context``, ``constraints``, ...).

    Attributes
    ----------
    fallback : StepMethod or None
        Takes a step this method returns a :class:`StepFailure` for (None: such a step
        raises :class:`~multibody.errors.MultibodyError`).
    notice : StepMethodNotice
        The once-per-plant warnings (the fallback warning is issued here).
    """

    name = "step"
    """How ``plant.step_method`` and ``StepStatus.method`` name the method."""
    description = "the step method"
    """How warnings name it (``"the compiled step"``)."""

    def __init__(self, plant) -> None:
        self.plant = plant
        self.fallback: Optional[StepMethod] = None
        self.notice = StepMethodNotice(plant.label)

    def step(self, context) -> StepSolution:
        """The solution of the step ``[t, t + h]`` from ``context`` (the plant's context):
        the inputs of the step, then :meth:`take`."""
        plant = self.plant
        xd = np.asarray(context.discrete_state)
        nq, nv = plant.nq, plant.nv
        q = xd[:nq]
        tau = plant.actuation(context, xd)
        tau = np.zeros(nv) if tau is None else np.asarray(tau, float)
        ext = plant.applied_forces(context, q)
        if ext is not None:
            tau = tau + np.asarray(ext, float).ravel()
        mem = context.get_memory()
        inputs = StepInputs(float(context.time), xd, q, xd[nq:nq + nv], tau,
                            mem.get("warm_start"), mem)
        return self.take(context, inputs)

    def take(self, context, inputs: StepInputs) -> StepSolution:
        """:meth:`_step_impl`, or the fallback's step when it returns a :class:`StepFailure`
        (warned once per plant; the solution's status names this method and the reason).

        Raises
        ------
        multibody.errors.MultibodyError
            The method could not take the step and has no fallback.
        """
        sol = self._step_impl(context, inputs)
        if isinstance(sol, StepFailure):
            fb = self.fallback
            if fb is None:
                raise MultibodyError(
                    f"{self.plant.label}: step method '{self.name}' could not take the step "
                    f"at t={inputs.time:.6g} ({sol.reason}) and has no fallback")
            self.notice.fallback(inputs.time, sol.reason, self.description, fb.description)
            try:
                return fb.take(context, inputs).fell_back(self.name, sol.reason)
            except LCPSolveError as exc:
                if sol.candidate is None or not sol.residual <= NEAR_MISS:
                    raise
                return self._near_miss(inputs.time, sol, fb, exc)
        return sol

    def _near_miss(self, t: float, failure: StepFailure, fb: "StepMethod",
                   exc: Exception) -> StepSolution:
        """The last resort (module docstring): ``failure.candidate`` accepted, warned once
        per plant, its status marked (``converged=False``, report status ``"near_miss"``,
        ``fallback_reason`` naming both failures)."""
        self.notice.near_miss(t, failure.residual, self.description, fb.description)
        why = (f"{failure.reason}; {fb.description} failed too ({type(exc).__name__}: "
               f"{str(exc)[:200]}); the iterate is kept within the near-miss bound "
               f"{NEAR_MISS:g}")
        inner = failure.candidate.make_status

        def make_status():
            st = inner()
            rep = st.report
            if dataclasses.is_dataclass(rep) and hasattr(rep, "status"):
                rep = dataclasses.replace(rep, status="near_miss")
            return dataclasses.replace(st, converged=False, residual=failure.residual,
                                       report=rep, fallback_reason=why)
        return dataclasses.replace(failure.candidate, make_status=make_status)

    def _step_impl(self, context, inputs: StepInputs):
        """Override: the :class:`StepSolution` of the step from ``inputs`` (with its
        ``warm_start`` record and ``make_status``), or a :class:`StepFailure`."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _step_impl")

    def __repr__(self) -> str:
        fb = f", fallback={self.fallback.name!r}" if self.fallback is not None else ""
        return f"{type(self).__name__}(name={self.name!r}{fb})"


def velocity_blocks(tree) -> list:
    """The decoupled velocity ranges ``[(a, b), ...]`` of ``tree``: one per subtree hanging
    from the world (DFS order makes each a contiguous range)."""
    nv = tree.nv
    starts = [j.v_start for j in tree.joints if j.parent == "world"] + [nv]
    return [(a, b) for a, b in zip(starts[:-1], starts[1:]) if b > a] or [(0, nv)]


def implicit_damping(tree, include_passive_forces: bool) -> np.ndarray:
    """The joint damping ``D`` (nv,) a step takes implicitly (zeros without passive
    forces)."""
    damping = np.zeros(tree.nv)
    if include_passive_forces:
        for j in tree.joints:
            if j.nv:
                damping[j.v_start:j.v_start + j.nv] = np.broadcast_to(
                    np.asarray(getattr(j, "damping", 0.0), float), (j.nv,))
    return damping


def select_step_method(plant, contact_solver, unsupported: Optional[str],
                       make_compiled: Callable, make_pivoting: Callable) -> tuple:
    """The plant's step method (built once) and why it is not the compiled one (or None).

    Parameters
    ----------
    plant : TimeSteppingRigidBodySystem
    contact_solver : {"auto", "pgs", "lcp"} or StepMethod subclass
        A subclass is built as ``contact_solver(plant)``.
    unsupported : str or None
        Why the compiled step does not cover the plant's scene (None: it does).
    make_compiled : callable
        ``make_compiled(kernel) -> StepMethod``: the compiled step with the plant's tables
        (its fallback set).
    make_pivoting : callable
        ``make_pivoting() -> StepMethod``: the pivoting step.

    Returns
    -------
    (StepMethod, str or None)

    Raises
    ------
    ValueError
        ``contact_solver="pgs"`` where the compiled step does not apply.
    solvers.contact_step.ContactStepBuildError
        ``contact_solver="pgs"`` and the C compiler failed on the kernel.
    """
    label = plant.label
    if isinstance(contact_solver, type):
        return contact_solver(plant), f"contact_solver={contact_solver.__name__}"
    if contact_solver == "lcp":
        return make_pivoting(), "contact_solver='lcp'"
    reason = unsupported
    method = None
    if reason is None:
        try:
            kernel = load_kernel()
        except ContactStepBuildError as exc:
            if contact_solver == "pgs":
                raise
            warnings.warn(f"{label}: the compiled contact step is not available ({exc}); "
                          "using the interpreted step", TimeSteppingWarning, stacklevel=4)
            kernel, reason = None, f"the contact kernel did not compile: {exc}"
        if kernel is not None:
            method = make_compiled(kernel)
    if reason is not None and contact_solver == "pgs":
        raise ValueError(f"{label}: contact_solver='pgs' is not available: {reason}")
    return (method if method is not None else make_pivoting()), reason


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
        self._near_miss_warned = False
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

    def fallback(self, t: float, why: Optional[str], method: str = "the compiled step",
                 fallback: str = "the pivoting (Lemke) step") -> bool:
        """Warn, the first time only, that the step at ``t`` fell back from ``method`` to
        ``fallback`` because of ``why``. Returns whether it warned."""
        if not self._first("_fallback_warned"):
            return False
        warnings.warn(f"{self.label}: the step at t={t:.6g} fell back from {method} "
                      f"to {fallback}: {why or 'the kernel did not converge'}; "
                      "later fallbacks of this plant are not reported (step.status "
                      "tells which method took each; pgs_max_sweeps and lcp_tolerance set the "
                      "kernel's budget)", StepMethodWarning, stacklevel=2)
        return True

    def near_miss(self, t: float, residual: float, method: str = "the compiled step",
                  fallback: str = "the pivoting (Lemke) step") -> bool:
        """Warn, the first time only, that the step at ``t`` kept ``method``'s unconverged
        iterate (``residual``) because ``fallback`` failed too. Returns whether it warned."""
        if not self._first("_near_miss_warned"):
            return False
        warnings.warn(f"{self.label}: at t={t:.6g} {method} did not converge and "
                      f"{fallback} failed too; the step keeps {method}'s iterate "
                      f"(residual {residual:.3g}, within the near-miss bound {NEAR_MISS:g}); "
                      "later such steps of this plant are not reported (step.status: "
                      "converged=False, report.status 'near_miss')", StepMethodWarning,
                      stacklevel=2)
        return True

    def _first(self, flag: str) -> bool:
        """Set the once-per-plant ``flag``; True the first time only (thread-safe)."""
        with self._lock:
            if getattr(self, flag):
                return False
            setattr(self, flag, True)
            return True

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_lock")
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

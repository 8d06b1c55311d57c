"""The compiled step of a :class:`~multibody.plants.TimeSteppingRigidBodySystem` as data,
for a whole run in compiled code (private; the public entry point is the plant's
``compiled_step_protocol()`` method).

The compiled whole-run simulator of :mod:`systems.analysis.compiled` (``Simulator(diagram,
compiled=True)``) must not import multibody (layering); it discovers a plant whose step can
run inside its C loop by a duck-typed method of the System, ``compiled_step_protocol()``,
which returns a :class:`CompiledStepProtocol`: everything a C driver needs to take the
plant's step without Python --

* the plant's dynamics function ``(q, v) -> (H, c, P, S)`` as a CasADi ``Function`` (the
  driver generates its C code, the same code the plant's own compiled call runs);
* the contact kernel's C entry point (``int dbk_contact_step(const int *it, const double
  *dt, const double *in, double *out, double *work, int *iwork)``, an address in the
  verified, already loaded kernel library), its int and double tables, and the offsets of
  the kernel's input and output sections by the names of the layout declared once in
  ``solvers.contact_step.layout`` (``INPUT``, ``OUTPUT``, ``STATUS``, ``SCALARS``);
* per context: the per-step scalars (``SCALARS``: h, margin, mu, erp, cfm, bias mode,
  tolerances, from the context's parameters), the warm start, and the actuation
  ``tau(context)`` (symbolic-capable: the actuators' forces plus the applied-force inputs,
  exactly as the step computes them);
* with loop closures (:attr:`CompiledStepProtocol.closures`, a :class:`ClosureFunctions`):
  the closures' elimination ``(q, H, d, v, h, tau, c, erp_h, cfm_h) -> [cproj; cpv; ...;
  bad]`` called before the kernel (its ``cproj``, ``cpv`` copied into the kernel's input
  sections of those names) and, when the plant post-stabilizes its closures, the
  projection ``(q_next, H, d, rigid) -> [q; bad]`` called after it on the kernel's
  ``q_next``, both CasADi Functions (the same the plant's own step calls compiled, in
  :func:`~multibody.plants._ts_compiled.run_kernel`'s order), with their per-context data
  (:meth:`ClosureFunctions.data`); a step whose ``bad`` flag is set (dependent closure
  rows: the plant's step takes its numpy path) is handed back to the plant's own step;
* :meth:`CompiledStepProtocol.commit_warm_start` to leave the context as the plant's own
  steps would (the last step's warm start), so a run continued by the interpreted Simulator
  is the same run.

A plant whose steps do not all run in the kernel says why in
:attr:`CompiledStepProtocol.refusal` (the scene takes the pivoting step, no C compiler,
block states, closures whose elimination or projection has no compiled form); the
simulator then refuses with that reason. A step the kernel rejects at
run time (no convergence) is handed back to the plant's own step, which falls back to the
pivoting step and warns (the simulator does this; see its docstring).
"""
from __future__ import annotations

import ctypes
from typing import Optional

import numpy as np

from solvers.contact_step import layout as L

from ..errors import MultibodyError
from . import solutions
from ._ts_compiled import PGS_SWEEP_TOL, CompiledStep

__all__ = ["CompiledStepProtocol", "ClosureFunctions", "whole_run_protocol"]

_METHOD_NAME = "compiled_pgs"
_KERNEL_SYMBOL = "dbk_contact_step"


class ClosureFunctions:
    """The loop closures' per-step functions of a plant's compiled step, for a whole run
    (module docstring).

    Attributes
    ----------
    m : int
        The closures' stacked rows.
    elimination : casadi.Function
        ``(q (nq), H (nv*nv, row-major), d (nv), v (nv), h, tau (nv), c (nv), erp_h (m),
        cfm_h (m)) -> out``: the kernel's affine map and the flag of dependent rows (the
        plant's :class:`~._ts_elimination.CompiledElimination`).
    cproj, cpv : tuple of int
        ``(start, stop)`` of the map's ``cproj`` (nv x nv, row-major) and ``cpv`` in ``out``.
    bad : int
        Index in ``out`` of the flag (nonzero: the plant's step takes its numpy path).
    n_out : int
        Length of ``out``.
    projection : casadi.Function or None
        ``(q_next (nq), H (nv*nv), d (nv), rigid (m)) -> [q (nq); bad]``, the rigid
        closures' post-stabilization on the kernel's ``q_next`` (None when the plant does
        not post-stabilize).
    data_sections : dict
        ``{name: (start, stop)}`` in :meth:`data`: ``"d"`` (``h D``, zeros with the Euler
        damping split), ``"h"``, ``"erp_h"``, ``"cfm_h"``, ``"rigid"`` (1.0 on rigid rows).
    n_data : int
    """

    def __init__(self, stepper) -> None:
        tab = stepper.tables
        self._stepper, self._tab = stepper, tab
        elim = tab.elimination
        lay = elim.layout
        self.m = lay.m
        self.elimination = elim.compiled.function
        self.cproj = (lay.cproj.start, lay.cproj.stop)
        self.cpv = (lay.cpv.start, lay.cpv.stop)
        self.bad = int(lay.bad)
        self.n_out = int(lay.size)
        self.projection = (tab.projection.function
                           if tab.project is not None and tab.projection is not None else None)
        nv, m = tab.nv, lay.m
        sizes = (("d", nv), ("h", 1), ("erp_h", m), ("cfm_h", m), ("rigid", m))
        self.data_sections, k = {}, 0
        for name, n in sizes:
            self.data_sections[name] = (k, k + n)
            k += n
        self.n_data = k

    def data(self, context) -> np.ndarray:
        """The per-step inputs of :attr:`elimination` and :attr:`projection` that are not
        the step's state, from the plant's ``context`` (its parameters), as the plant's
        step forms them (``data_sections``)."""
        tab, stepper = self._tab, self._stepper
        values = stepper.limit_values(context)
        euler = stepper.euler_damping != 0.0
        out = np.zeros(self.n_data)
        sec = self.data_sections
        if not euler:
            a, b = sec["d"]
            out[a:b] = tab.dt[tab.it[L.HEADER.DAMPING]:][:tab.nv]
        out[sec["h"][0]] = tab.h
        erp_h, cfm_h = tab.elimination.row_softening(
            values[len(tab.limits) + len(tab.frictions):], tab.h)
        out[slice(*sec["erp_h"])] = erp_h
        out[slice(*sec["cfm_h"])] = cfm_h
        out[slice(*sec["rigid"])] = tab.rigid_rows(values)
        return out


class CompiledStepProtocol:
    """A plant's compiled step as data (module docstring).

    Attributes
    ----------
    refusal : str or None
        Why the plant's steps cannot run in compiled code (None when they can).
    period : float
        The plant's time step h (its periodic discrete update, offset 0).
    nq, nv : int
        Sizes of ``q`` and ``v``; the plant's discrete state is ``[q; v]``.
    dynamics : casadi.Function
        ``(q, v) -> (H (nv x nv), c (nv), P (12 N), S (6 x nv))``; ``H`` and ``S`` without
        their constant-zero entries (which stay zero in the kernel's input), ``c`` and ``P``
        dense; the kernel takes them row-major (C order).
    kernel_address : int
        Address of the kernel's C entry point.
    it, dt : ndarray
        The kernel's int32 and float64 tables of this plant.
    n_in, n_out, n_work, n_iwork : int
        Lengths of the kernel's input, output, work and int-work buffers.
    input_sections, output_sections : dict
        ``{name: (start, stop)}`` of the layout's ``INPUT`` and ``OUTPUT`` sections
        (``"scal"``, ``"q"``, ``"v"``, ``"tau"``, ``"H"``, ``"c"``, ``"P"``, ``"S"``,
        ``"warm"``; ``"qn"``, ``"vn"``, ``"stat"``, ``"wout"``, ...).
    status_converged : int
        Offset in the ``stat`` section of the flag that is 1.0 when the step is accepted.
    method : str
        The step method's name (``"compiled_pgs"``).
    closures : ClosureFunctions or None
        The loop closures' elimination and projection (None without closures).
    """

    def __init__(self, plant, stepper, refusal: Optional[str] = None) -> None:
        self._plant = plant
        tables = getattr(stepper, "tables", None)
        self._tables = tables
        self.period = float(plant.time_step)
        self.nq, self.nv = plant.nq, plant.nv
        self.method = _METHOD_NAME
        self.refusal = refusal
        self.closures = None
        self._sweep_tol = float(PGS_SWEEP_TOL)
        if self.refusal is None and plant.num_discrete_states() != plant.nq + plant.nv:
            self.refusal = (f"plant '{plant.name}' has block states (actuators or sensors "
                            "with discrete state); the compiled whole run steps [q; v] only")
        if self.refusal is not None:
            return
        self.dynamics = stepper.dynamics_function
        kern = tables.kernel
        self.it, self.dt = tables.it, tables.dt
        self.n_in, self.n_out = tables.n_in, tables.n_out
        self.n_work, self.n_iwork = tables.n_work, tables.n_iwork
        dims = dict(nq=tables.nq, nv=tables.nv, nb=tables.N, nc=tables.nc)
        self.input_sections = L.INPUT.offsets(**dims)
        self.output_sections = L.OUTPUT.offsets(**dims)
        self.status_converged = L.STATUS.CONVERGED
        # The entry point of the loaded (verified) kernel library: opening the same path
        # again returns the library already loaded, whose symbol is the kernel.
        addr = getattr(kern, "entry_address", None)
        if addr is None:
            self._lib = ctypes.CDLL(str(kern.path))
            addr = ctypes.cast(getattr(self._lib, _KERNEL_SYMBOL), ctypes.c_void_p).value
        self.kernel_address = int(addr)
        self._params = tuple(stepper.params)           # indices of mu and the softening
        self._bias_mode = float(stepper.bias_mode)
        self.method = stepper.name
        if tables.closures:
            self.closures = ClosureFunctions(stepper)

    # ------------------------------------------------------------------ per context
    def scalars(self, context) -> np.ndarray:
        """The layout's ``SCALARS`` of a step from the plant's ``context`` (its parameters):
        h, margin, mu, erp, cfm, bias mode, tol, it_tol, euler_damping."""
        tab, stepper = self._tables, self._plant.stepper
        if stepper.limit_values(context) != tab.limit_default:
            raise MultibodyError(
                f"plant '{self._plant.name}': the compiled whole run takes the joint limits' "
                "default softening and joint friction's default friction "
                f"({', '.join(repr(b.name) for b in tab.limits + tab.frictions)}); this "
                "context changed their erp/cfm (or kp/kd, friction) parameters")
        out = np.zeros(L.SCALARS.size)
        out[:] = stepper.step_scalars(context)
        return out

    def warm_start(self, context) -> np.ndarray:
        """The warm start the next compiled step of the plant's ``context`` starts from
        (the layout's ``WARM`` per candidate; zeros where the last step did not write it)."""
        tab = self._tables
        warm = context.get_memory().get("warm_start")
        n = 4 * tab.nc
        if warm is None:
            return np.zeros(n)
        if isinstance(warm, tuple):                        # (tag, array) records
            arr = np.asarray(warm[1], float) if warm[0] == "pgs" else np.zeros(0)
            return arr.copy() if arr.shape == (n,) else np.zeros(n)
        keys = getattr(tab, "warm_keys", None)
        if keys is not None and hasattr(warm, "lookup"):
            if warm.keys is keys:
                return np.array(warm.impulses, float)
            return np.asarray(warm.lookup(keys)[0], float).copy()
        return np.zeros(n)

    def commit_warm_start(self, context, warm: np.ndarray) -> None:
        """Store ``warm`` (the last compiled step's warm start out) in the plant's
        ``context`` as the plant's own step would."""
        record = getattr(solutions, "ContactWarmStart", None)
        keys = getattr(self._tables, "warm_keys", None)
        warm = np.array(warm, float)
        if record is not None and keys is not None:
            context.get_memory()["warm_start"] = record(self.method, keys, warm)
        else:
            context.get_memory()["warm_start"] = ("pgs", warm)

    def generalized_force(self, context):
        """``tau`` of the step from the plant's ``context`` on CasADi symbols: the actuators'
        generalized forces plus the applied-force inputs (zeros without either), as the
        step computes them (``RigidBodySystemBase.actuation``; each actuator evaluated in a
        fresh context of its own holding the plant's time, the actuator's parameters
        ``"<actuator>.<name>"`` of ``context``, the state and its command)."""
        plant = self._plant
        xd = context.discrete_state
        x = xd[:plant.nq + plant.nv]
        tau = None
        for a, port in zip(plant.actuators, plant.command_ports):
            ctx = a.create_default_context()
            ctx.set_time(context.time)
            for pname in a.parameter_names():
                ctx.set_parameter(pname, context.get_parameter(f"{a.name}.{pname}"))
            a.get_input_port("state").fix_value(ctx, x)
            a.get_input_port("command").fix_value(
                ctx, port.eval(context) if port is not None else np.zeros(0))
            t = a.get_output_port("generalized_force").eval(ctx)
            tau = t if tau is None else tau + t
        ext = plant.applied_forces(context, xd[:plant.nq])
        if tau is None and ext is None:
            return np.zeros(plant.nv)
        if tau is None:
            return ext
        return tau if ext is None else tau + ext


def whole_run_protocol(plant) -> CompiledStepProtocol:
    """The :class:`CompiledStepProtocol` of ``plant`` (from its step method,
    ``plant.stepper``: the compiled step's tables, kernel and dynamics function)."""
    stepper = plant.stepper
    refusal = None
    if not isinstance(stepper, CompiledStep):
        refusal = (f"plant '{plant.name}' takes the {plant.step_method!r} step, not the compiled "
                   f"kernel: {plant.step_method_reason or 'contact_solver=' + repr(plant.contact_solver)}")
    elif not stepper.tables.kernel.compiled:
        refusal = (f"plant '{plant.name}' steps with the numpy twin of the contact kernel (no "
                   "C compiler found); the compiled whole run needs a C compiler")
    elif stepper.tables.closures:
        refusal = closure_refusal(plant, stepper.tables)
    return CompiledStepProtocol(plant, stepper, refusal)


def closure_refusal(plant, tab) -> Optional[str]:
    """Why the compiled whole run cannot take the loop closures of ``plant`` (tables
    ``tab``), or None: their elimination must be the compiled one (``nv <=
    PROJECTION_MAX_NV``, no free joints, whose rotating-frame term the plant adds in numpy)
    and their post-stabilization, if any, the compiled one (every joint moving as ``q + h
    v``)."""
    names = ", ".join(repr(b.name) for b in tab.closures)
    elim = tab.elimination
    if elim.compiled is None:
        return (f"plant '{plant.name}' has loop closures ({names}) on {tab.nv} velocities, "
                "more than the compiled elimination unrolls; the compiled whole run needs it")
    tree = plant.tree
    if elim.free_joints:
        free = next(j.name for j in tree.joints if j.type == "free")
        return (f"plant '{plant.name}' has loop closures ({names}) and free joints (joint "
                f"'{free}'), whose free velocity's rotating-frame term the closures' "
                "elimination adds in numpy (and, with project_positions, whose quaternions the "
                "post-stabilization corrects in numpy); it runs step by step")
    if tab.project is not None and tab.projection is None:
        moving = [j.name for j in tree.joints if j.nq and j.nq != j.nv]
        which = f" (joint '{moving[0]}' has nq != nv)" if moving else ""
        return (f"plant '{plant.name}' post-stabilizes its loop closures ({names}) in numpy: "
                f"a joint's positions do not move as q + h v{which}, or nv = {tab.nv} is "
                "beyond the unrolled projection; it runs step by step (or build the plant "
                "with project_positions=False)")
    return None

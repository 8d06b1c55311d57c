"""The compiled step of :class:`~multibody.plants.TimeSteppingRigidBodySystem` (private).

When the plant's constraint blocks are at most one :class:`~multibody.constraints.PointContactConstraint`
(the friction cone as the disc, or ``friction="box"``: ODE's box along the same tangents; any
per-geometry margins, each pair's sum in its candidate's ``pair_margin``), and any number of
:class:`~multibody.constraints.JointLimitConstraint` blocks (ERP/CFM or ``(kp, kd)``
softening; each side of a limit is a ``joint_limit`` candidate of the kernel: one
unilateral row, activated, biased and softened as the block's own time-stepping rows) and
:class:`~multibody.constraints.JointFrictionConstraint` blocks (each velocity coordinate a
``joint_friction`` candidate: one box row ``|p| <= h F`` with the block's cfm), and loop
closures, with or without contact (ball, weld, distance, point-on-line: eliminated exactly
before the contact problem by an affine map of the kernel's free velocity and contact
responses, their impulses recovered after it, post-stabilized as the pivoting step does;
:mod:`._ts_closures`), and every joint integrates as
``q + h v`` or by the exponential map of a quaternion (ball, free), a step is two calls: the
plant's compiled dynamics/kinematics function ``(q, v) -> (H, c, P, S)`` (one vector) and the C kernel of
:mod:`solvers.contact_step` (the narrow phase of every geometry pair: the same contact
points as ``multibody.geometry.contact_points`` gives the pivoting step; rows, Delassus
blocks, block PGS with the friction disc, integration). Every shape pair of
``multibody.geometry`` is covered (Mesh is not collidable).

The kernel's fixed tables are built once from the tree and the constraint blocks, and each
context's buffers kept, by :mod:`._ts_tables` (:class:`CompiledContactStep`,
:class:`Scratch`); the per-block rows of a step are read back by :mod:`._ts_results`. This
module decides whether the compiled step covers a plant (:func:`unsupported_reason`), runs
the kernel (:func:`run_kernel`: its output turned into a :class:`StepSolution`, or a
:class:`StepFailure` that hands the step to the pivoting step) and is the step method
(:class:`CompiledStep`).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from solvers.contact_step import layout as L

from ..constraints import (ContactResults, PointContactConstraint, PointContactResult,
                           softening_from_spring)
from ._time_stepping_kinematics import four_outputs
from ._time_stepping_solve import SolveReport
from ._ts_closures import (CLOSURE_BLOCKS, PROJECTION_MAX_NV, ClosureProjection,
                           linear_positions, project_closures)
from ._ts_results import LazyRows, block_rows
from ._ts_tables import (ONE_DOF_BLOCKS, CompiledContactStep, Scratch, friction_coordinates,
                         joint_type, shape_description)
from ._step_method import StepFailure, StepInputs, StepMethod
from .solutions import ContactWarmStart, StepSolution, StepStatus

__all__ = ["CompiledContactStep", "CompiledStep", "unsupported_reason", "describe_block",
           "run_kernel", "PGS_TAG", "PGS_SWEEP_TOL"]

PGS_TAG = "pgs"
"""``SolveReport.method`` of the compiled step's solver (block PGS and polish)."""

PGS_SWEEP_TOL = 1e-10
"""The compiled PGS stops when no impulse changes by more than this (velocity units,
relative to ``max(1, |J v_free + b|)``)."""

_SCALAR_ORDER = ("h", "margin", "mu", "erp", "cfm", "bias_mode", "tol", "it_tol",
                 "euler_damping")
"""The order in which :class:`CompiledStep` writes the scalars (checked against the layout)."""
if tuple(n for n, _ in L.SCALARS.fields) != _SCALAR_ORDER:
    raise ImportError("multibody.plants._ts_compiled writes the kernel's scalars in the order "
                      f"{_SCALAR_ORDER}, the layout declares {L.SCALARS.fields}")
_CO, _ST = L.CANDIDATE_OUT, L.STATUS


def describe_block(c) -> str:
    """How a reason names a constraint block: its kind, name and what it acts on (``joint
    limit 'lim' on joint 'knee'``, ``ball closure 'loop' between frames 'a' and 'b'``)."""
    joints = getattr(c, "joints", None)
    if joints is not None:
        kind = "joint limit" if "Limit" in type(c).__name__ else "joint friction"
        on = ", ".join(f"'{j}'" for j in joints)
        return f"{kind} '{c.name}' on joint{'s' if len(joints) > 1 else ''} {on}"
    if hasattr(c, "frame_a") and hasattr(c, "frame_b"):
        kind = getattr(c, "kind_name", "frame")
        return (f"{kind} closure '{c.name}' between frames '{c.frame_a}' and "
                f"'{c.frame_b}'")
    if isinstance(c, PointContactConstraint):
        return f"contact '{c.name}'"
    return f"constraint '{c.name}' ({type(c).__name__})"


def unsupported_reason(tree, constraints, damping_scheme: str = "implicit") -> Optional[str]:
    """Why the compiled step cannot run this plant (None when it can): names the constraint
    block, joint or geometry pair it does not cover (both ``damping_scheme`` values are
    covered: the kernel's ``euler_damping`` scalar)."""
    soft = [c for c in constraints if getattr(c, "mujoco", None) is not None]
    if soft:
        return (f"constraint '{soft[0].name}' has MuJoCo softening (solref/solimp), which the "
                "compiled step does not have")
    contacts = [c for c in constraints if isinstance(c, PointContactConstraint)]
    limits = [c for c in constraints if isinstance(c, ONE_DOF_BLOCKS)]
    closures = [c for c in constraints if isinstance(c, CLOSURE_BLOCKS)]
    others = [c for c in constraints
              if not isinstance(c, (PointContactConstraint,) + ONE_DOF_BLOCKS + CLOSURE_BLOCKS)]
    if others:
        return (", ".join(describe_block(c) for c in others) + ": the compiled step takes "
                "one PointContactConstraint block, JointLimitConstraint and "
                "JointFrictionConstraint blocks and closures (ball, weld, distance, "
                "point-on-line), no other constraint")
    if len(contacts) > 1 or not (contacts or limits or closures):
        return ("the compiled step needs one PointContactConstraint block (with any joint "
                "limits and joint friction) or joint limits and joint friction only, got "
                + (", ".join(describe_block(c) for c in contacts) or "none"))
    for j in tree.joints:
        if j.nq and joint_type(j) is None:
            return f"joint '{j.name}' ({j.type}) has nq != nv"
    if not contacts:
        return None
    c = contacts[0]
    bad = [(ga, gb) for ga, gb in c.site_pairs
           if shape_description(ga.shape)[0] is None or shape_description(gb.shape)[0] is None]
    if bad:
        ga, gb = bad[0]
        more = f" (and {len(bad) - 1} more pairs)" if len(bad) > 1 else ""
        return (f"geometry pair ('{ga.name}', '{gb.name}') is "
                f"{type(ga.shape).__name__}-{type(gb.shape).__name__} (a shape the compiled "
                f"narrow phase does not describe; contact '{c.name}'){more}")
    return None


def run_kernel(tab: CompiledContactStep, t: float, xd: np.ndarray, tau: np.ndarray, dyn: tuple,
               scalars: tuple, warm, scratch: Scratch, name: str):
    """One step of the kernel on the tables ``tab``: a :class:`StepSolution`, or a
    :class:`StepFailure` (the kernel did not converge or a velocity block of ``H + h D`` is
    not positive definite).

    ``xd`` the discrete state ``[q; v; ...]``, ``dyn`` the plant's compiled function's
    output (``H, c, P, S`` stacked as the kernel's input sections lie); ``scalars``: the layout's ``SCALARS`` (h, margin, mu, erp, cfm,
    bias mode, tol, it_tol, euler_damping); ``warm``: the context's
    :class:`ContactWarmStart` (or None); ``scratch`` the context's ``tab.scratch()``;
    ``name`` the step method's name (for the status and the warm start)."""
    nq, nv, nc = tab.nq, tab.nv, tab.nc
    sc = scratch
    if scalars != sc.scalars:          # (the kernel reads its input only)
        sc.in_s[:] = scalars
        sc.scalars = scalars
    sc.in_x[:] = xd[:nq + nv]
    sc.in_tau[:] = tau
    sc.in_dyn[:] = dyn
    H = sc.in_H
    closure = None
    if tab.closures:         # eliminated exactly: the kernel's affine map (_ts_closures)
        euler = scalars[L.SCALARS.EULER_DAMPING]
        closure = tab.elimination.prepare(
            xd[:nq], xd[nq:nq + nv], tau, H, sc.in_c,
            None if euler else tab.dt[tab.it[L.HEADER.DAMPING]:],
            sc.closure_values, tab.h, sc.in_cproj,
            sc.in_cpv)
        if closure is None:
            return StepFailure("a velocity block of H + h D is not positive definite")
    if warm is None:
        sc.in_w[:] = 0.0
    elif warm.keys is tab.warm_keys:    # this plant's kernel wrote it: same entries
        sc.in_w[:] = warm.impulses
    else:
        sc.in_w[:] = warm.lookup(tab.warm_keys)[0]
    out, out_p = sc.out()
    if tab.kernel.compiled:
        it_p, dt_p, in_p, w_p, iw_p = sc.ptrs
        code = tab.kernel.pointer_call((it_p, dt_p, in_p, out_p, w_p, iw_p))
    else:
        code = tab.kernel.step(tab.it, sc.dt, sc.inp, out, sc.work, sc.iwork)
    if code != 0:
        return StepFailure("a velocity block of H + h D is not positive definite")
    k = tab.o_stat
    stat = out[k:k + _ST.size].tolist()
    sweeps, na = int(stat[_ST.SWEEPS]), int(stat[_ST.ACTIVE_CONTACTS])
    residual = stat[_ST.RESIDUAL]
    if stat[_ST.FAILED_CANDIDATE] >= 0:
        return StepFailure(tab.narrow_phase_failure(int(stat[_ST.FAILED_CANDIDATE]),
                                                     int(stat[_ST.NARROW_PHASE])))
    converged = stat[_ST.CONVERGED] == 1.0
    # not converged: the kernel's iterate is still a complete step (state, impulses); it
    # goes with the StepFailure as the candidate of the step method's last resort
    # (StepMethod.take: kept only when the fallback fails too, within NEAR_MISS)
    if closure is not None:                        # the closures' impulses, force
        closure.finish(out[tab.o_tauc:tab.o_tauc + nv])
    if tab.closures and tab.project is not None:   # the pivoting step's projection
        euler = scalars[L.SCALARS.EULER_DAMPING]

        def mass() -> np.ndarray:
            return H if euler else H + np.diag(tab.dt[tab.it[L.HEADER.DAMPING]:])
        rigid = tab.rigid_rows(sc.limit_values)
        if tab.projection is not None:             # the same, one compiled call
            out[:nq] = tab.projection(out[:nq], H, tab.zero_damping if euler else
                                      tab.dt[tab.it[L.HEADER.DAMPING]:], rigid,
                                      tab.project, mass)
        else:
            q_int = out[:nq].copy()
            out[:nq] = project_closures(tab.closure_terms, rigid, tab.project, out[:nq],
                                        mass)
            tab.elimination.reframe(q_int, out[:nq], out[nq:nq + nv])
    if xd.shape[0] == nq + nv:         # no block states: the kernel's output is it
        xd_next = out[:nq + nv]
    else:
        xd_next = np.array(xd, dtype=float)
        xd_next[:nq + nv] = out[:nq + nv]
    a, b = tab.o_wout
    warm_next = ContactWarmStart(name, tab.warm_keys, out[a:b])
    a, b = tab.o_co
    co = out[a:b].reshape(nc, _CO.size)
    a = tab.o_jall
    Jall = out[a:].reshape(nc, 3, nv)
    npc = tab.num_pair_slots
    if not (tab.limits or tab.frictions or tab.closures):   # the contact block alone
        a = tab.o_imp
        impulses = [out[a:a + 3 * na]]
        n_points = na
    else:                      # built on first access (most steps never look at them)
        impulses = LazyRows(lambda: tab.block_impulses(co, closure), len(tab.blocks))
        n_points = 0
        if npc:
            n_points = int(np.count_nonzero(co[:npc, _CO.ACTIVE]))
    lv = sc.limit_values
    rows = LazyRows(lambda: [block_rows(tab, b, co, Jall, scalars, lv, closure)
                             for b in tab.blocks], len(tab.blocks))
    geoms, h = tab.geoms, tab.h
    m_rows = 3 * n_points + (na - n_points) + tab.closure_rows

    def make_contacts() -> ContactResults:
        res = []
        for k in np.flatnonzero(co[:npc, _CO.ACTIVE]).tolist():
            ga, gb = geoms[k]
            o = co[k]
            t1, t2 = o[_CO.slice("t1")], o[_CO.slice("t2")]
            p, slip = o[_CO.slice("impulse")], o[_CO.slice("slip")]
            res.append(PointContactResult(ga.body, gb.body, ga.name, gb.name,
                                          o[_CO.slice("point")].copy(),
                                          o[_CO.slice("normal")].copy(),
                                          float(o[_CO.DISTANCE]), float(p[0] / h),
                                          (p[1] * t1 + p[2] * t2) / h,
                                          slip[0] * t1 + slip[1] * t2))
        return ContactResults(t, tuple(res))

    def make_status() -> StepStatus:
        return StepStatus(name, converged, sweeps, n_points, residual, m_rows,
                          SolveReport("solved" if converged else "near_miss", PGS_TAG,
                                      residual, m_rows, sweeps))
    a, c = tab.o_tauc, tab.o_acc
    sol = StepSolution(t, xd_next[:nq], xd_next[nq:nq + nv], xd_next, tau, out[a:a + nv],
                       impulses, rows, out[c:c + nv], warm_next, make_contacts,
                       make_status)
    if converged:
        return sol
    return StepFailure(
        f"the kernel did not converge: residual {residual:.3g} > tolerance "
        f"{scalars[L.SCALARS.TOL]:.3g} after {sweeps} PGS sweeps and the polish, "
        f"{na} active contacts", candidate=sol, residual=float(residual))


class CompiledStep(StepMethod):
    """The compiled step method (module docstring): the plant's compiled dynamics function
    and the contact kernel (C, or its numpy twin without a compiler); fallback: the
    pivoting step.

    Parameters
    ----------
    plant : TimeSteppingRigidBodySystem
    tables : CompiledContactStep
        The kernel and the plant's tables.
    dynamics : callable
        ``(q, v) -> [H; c; P; S]`` (one vector, ``H`` and ``S`` row by row), the plant's
        compiled dynamics/kinematics function.
    fallback : StepMethod
        Takes the steps the kernel does not converge on.
    """

    description = "the compiled step"

    def __init__(self, plant, tables: "CompiledContactStep", dynamics, fallback) -> None:
        super().__init__(plant)
        self.tables = tables
        self.dynamics = dynamics
        self.fallback = fallback
        self.name = "compiled_pgs" if tables.kernel.compiled else "numpy_pgs"
        contact = tables.contact
        if contact is None:                # joint limits only: the contact scalars are unused
            self.params, self.bias_mode = (), 0.0
        else:
            soft = ("kp", "kd") if contact.spring else ("erp", "cfm")
            self.params = tuple(plant.parameter_index(f"{contact.name}.{n}")
                                for n in ("mu",) + soft)
            self.bias_mode = 1.0 if (contact.formulation == "stewart_trinkle"
                                     and not contact.spring) else 0.0
        self.limit_params = tuple(
            (blk.spring, tuple(plant.parameter_index(f"{blk.name}.{n}")
                               for n in (("kp", "kd") if blk.spring else ("erp", "cfm"))))
            for blk in tables.limits)
        tables.project = plant.integrate if plant.project_positions else None
        if (tables.project is not None and tables.closures and linear_positions(plant.tree)
                and plant.tree.nv <= PROJECTION_MAX_NV):
            tables.projection = ClosureProjection(tables.closure_terms, plant.tree.nq,
                                                  plant.tree.nv)
            tables.zero_damping = np.zeros(plant.tree.nv)
        self.euler_damping = 1.0 if getattr(plant, "damping_scheme", "implicit") == \
            "mujoco_euler" else 0.0
        self.closure_params = tuple(
            (blk.spring, tuple(plant.parameter_index(f"{blk.name}.{n}")
                               for n in (("kp", "kd") if blk.spring else ("erp", "cfm"))))
            for blk in tables.closures)
        self.friction_params = tuple(
            (len(friction_coordinates(blk.tree, blk)),
             plant.parameter_index(f"{blk.name}.friction"),
             plant.parameter_index(f"{blk.name}.cfm"))
            for blk in tables.frictions)

    @property
    def dynamics_function(self):
        """The dynamics as a CasADi function with four dense outputs ``(q, v) -> (H, c, P,
        S)`` (built once; the compiled whole run generates code from it)."""
        fun = self.__dict__.get("_dynamics4")
        if fun is None:
            base = getattr(self.dynamics, "function", self.dynamics)
            fun = self._dynamics4 = four_outputs(base, self.tables.nv)
        return fun

    def step_scalars(self, context) -> tuple:
        """The layout's ``SCALARS`` of a step of the plant's ``context``: h, the contact
        block's margin, mu, erp, cfm (zeros without a contact block), the bias mode, the
        tolerances and the Euler damping flag (the plant's ``damping_scheme``)."""
        tab = self.tables
        contact = tab.contact
        if contact is None:
            return (tab.h, 0.0, 0.0, 0.0, 0.0, 0.0, self.plant.lcp_tolerance, PGS_SWEEP_TOL,
                    self.euler_damping)
        i_mu, i_a, i_b = self.params
        a, b = float(context.get_parameter(i_a)[0]), float(context.get_parameter(i_b)[0])
        erp, cfm = softening_from_spring(a, b, tab.h) if contact.spring else (a, b)
        return (tab.h, contact.margin, float(context.get_parameter(i_mu)[0]), erp, cfm,
                self.bias_mode, self.plant.lcp_tolerance, PGS_SWEEP_TOL, self.euler_damping)

    def limit_values(self, context) -> tuple:
        """Each joint-limit block's ``(erp, cfm)``, then each joint-friction block's
        ``(bounds, cfm)`` (bounds ``h F`` per row) from the plant's ``context``."""
        out, h = [], self.tables.h
        for spring, (i_a, i_b) in self.limit_params:
            a, b = float(context.get_parameter(i_a)[0]), float(context.get_parameter(i_b)[0])
            out.append(softening_from_spring(a, b, h) if spring else (a, b))
        for n, i_f, i_c in self.friction_params:
            F = np.asarray(context.get_parameter(i_f), float)[:n]
            out.append((tuple(float(x) for x in h * F), float(context.get_parameter(i_c)[0])))
        for spring, (i_a, i_b) in self.closure_params:
            a, b = float(context.get_parameter(i_a)[0]), float(context.get_parameter(i_b)[0])
            out.append(softening_from_spring(a, b, h) if spring else (a, b))
        return tuple(out)

    def _step_impl(self, context, inputs: StepInputs):
        tab = self.tables
        scalars = self.step_scalars(context)
        mem = inputs.memory
        scratch = mem.get("compiled_step_scratch")
        if scratch is None:
            scratch = mem["compiled_step_scratch"] = tab.scratch()
        if self.limit_params or self.friction_params or self.closure_params:
            scratch.set_limit_softening(self.limit_values(context))
        return run_kernel(tab, inputs.time, inputs.xd, inputs.tau,
                          self.dynamics(inputs.q, inputs.v), scalars, inputs.warm_start, scratch,
                          self.name)

"""The compiled step's constraint rows (private): each constraint block's
:class:`ConstraintRows` of a step, read from the kernel's per-slot output and Jacobians, built
lazily (:class:`LazyRows`) when a caller looks at them.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

import numpy as np

from solvers.contact_step import layout as L

from ..constraints import (BILATERAL, BOUNDED, FRICTION_BOX, UNILATERAL, ConstraintRows,
                           JointFrictionConstraint)
from ._ts_closures import CLOSURE_BLOCKS
from ._ts_tables import CompiledContactStep

__all__ = ["LazyRows", "block_rows", "contact_rows"]

_CO = L.CANDIDATE_OUT


class LazyRows(Sequence):
    """A sequence of ``n`` per-block items (the step's :class:`ConstraintRows` or impulses,
    one per constraint block in the plant's block order) that ``build()`` gives as a list,
    called on first access (most steps never look at them)."""

    def __init__(self, build, n: int) -> None:
        self._build, self._n = build, n
        self._rows: Optional[list] = None

    def _get(self) -> list:
        if self._rows is None:
            self._rows = list(self._build())
        return self._rows

    def __getitem__(self, i):
        return self._get()[i]

    def __len__(self) -> int:
        return self._n


def block_rows(step: CompiledContactStep, blk, co: np.ndarray, Jall: np.ndarray,
                scalars: tuple, limit_values: tuple, closure=None):
    """The rows of constraint block ``blk`` in the step (the contact block's, a limit
    block's active sides, or a closure's rows); ``closure``: the step's closure elimination
    (:class:`~._ts_elimination.ClosureStep`: the closure terms at the step's start)."""
    if blk is step.contact:
        return contact_rows(step, co, Jall, scalars)
    if isinstance(blk, CLOSURE_BLOCKS):              # every row, bilateral, erp phi / h
        i = step.closures.index(blk)
        erp, cfm = limit_values[len(step.limits) + len(step.frictions) + i]
        J = step.closure_block_slice(closure.J, blk).copy()
        phi = step.closure_block_slice(closure.phi, blk).copy()
        return ConstraintRows.make(J, erp * phi / step.h, BILATERAL, cfm=cfm, phi=phi)
    a, b = step.one_dof_slots(blk)
    act = a + np.flatnonzero(co[a:b, _CO.ACTIVE])
    nv = step.nv
    if act.shape[0] == 0:
        return ConstraintRows.empty(nv)
    if isinstance(blk, JointFrictionConstraint):     # every row, |p| <= h F
        bound, cfm = limit_values[len(step.limits) + step.frictions.index(blk)]
        bound = np.asarray(bound)
        return ConstraintRows.make(Jall[act, 0, :].copy(), 0.0, BOUNDED, cfm=cfm, lo=-bound,
                                   hi=bound)
    i = step.limits.index(blk)
    J = Jall[act, 0, :].copy()
    phi = co[act, _CO.DISTANCE]
    erp, cfm = limit_values[i]
    bias = np.where(phi > 0, phi / step.h, erp * phi / step.h)
    return ConstraintRows.make(J, bias, UNILATERAL, cfm=cfm, lo=0.0, phi=phi,
                               info={"coordinates": step.slot_coordinate[act]})


def contact_rows(step: CompiledContactStep, co: np.ndarray, Jall: np.ndarray, scalars: tuple):
    """The contact rows of the step as :class:`ConstraintRows` (normals first, then the two
    tangent rows of each contact; ``FRICTION_BOX`` kind with bounds ``-+mu``, which the
    kernel applies to the pair as the disc ``|p_t| <= mu p_n``, or row by row for
    ``friction="box"``)."""
    act = np.flatnonzero(co[:step.num_pair_slots, _CO.ACTIVE])
    na, nv = act.shape[0], step.nv
    if na == 0:
        return ConstraintRows.empty(nv)
    J = np.concatenate([Jall[act, 0, :], Jall[act, 1:, :].reshape(2 * na, nv)])
    m = 3 * na
    kind = np.full(m, FRICTION_BOX, int)
    kind[:na] = UNILATERAL
    phi = np.zeros(m)
    phi[:na] = co[act, _CO.DISTANCE]
    normal = np.full(m, -1, int)
    normal[na:] = np.repeat(np.arange(na), 2)
    info = {"point": co[act, _CO.slice("point")], "normal": co[act, _CO.slice("normal")],
            "distance": co[act, _CO.DISTANCE], "t1": co[act, _CO.slice("t1")],
            "t2": co[act, _CO.slice("t2")],
            "geometries": [step.geoms[k] for k in act.tolist()]}
    sc = L.SCALARS
    mu, erp, cfm, mode = scalars[sc.MU], scalars[sc.ERP], scalars[sc.CFM], scalars[sc.BIAS_MODE]
    d = co[act, _CO.DISTANCE]
    bias = np.zeros(m)
    bias[:na] = np.where((d > 0) | (mode == 1.0), d, erp * d) / step.h
    lo = np.full(m, -mu)
    lo[:na] = 0.0
    hi = np.full(m, mu)
    hi[:na] = np.inf
    return ConstraintRows(J, bias, np.full(m, cfm), kind, lo, hi, normal, phi, info)

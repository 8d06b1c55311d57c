"""The compiled step of :class:`~multibody.plants.TimeSteppingRigidBodySystem` (private).

When the plant's constraint blocks are at most one :class:`~multibody.constraints.PointContactConstraint`
with the default friction cone and no per-geometry margins, and any number of
:class:`~multibody.constraints.JointLimitConstraint` blocks (ERP/CFM or ``(kp, kd)``
softening; each side of a limit is a ``joint_limit`` candidate of the kernel: one
unilateral row, activated, biased and softened as the block's own time-stepping rows) and
:class:`~multibody.constraints.JointFrictionConstraint` blocks (each velocity coordinate a
``joint_friction`` candidate: one box row ``|p| <= h F`` with the block's cfm), and,
without a contact block, loop closures (ball, weld, distance, point-on-line: ``closure``
candidates of up to three bilateral rows whose ``phi`` and ``J`` one compiled function of
``q`` gives each step, post-stabilized after the step as the pivoting step does;
:mod:`._ts_closures`), and every joint integrates as
``q + h v`` or by the exponential map of a quaternion (ball, free), a step is two calls: the
plant's compiled dynamics/kinematics function ``(q, v) -> (H, c, P, S)`` and the C kernel of
:mod:`solvers.contact_step` (the narrow phase of every geometry pair: the same contact
points as ``multibody.geometry.contact_points`` gives the pivoting step; rows, Delassus
blocks, block PGS with the friction disc, integration). Every shape pair of
``multibody.geometry`` is covered (Mesh is not collidable). This module builds the kernel's fixed tables from the tree and the
contact block once (:class:`CompiledContactStep`), and is the step method that runs it
(:class:`CompiledStep`: the kernel's output turned into a :class:`StepSolution`, or a
:class:`StepFailure` that hands the step to the pivoting step).

Tables (``it``, int32; offsets are absolute indices into ``it``), every field by the name
the layout (``solvers.contact_step.layout``) gives it:

* header (``HEADER``): counts, the offsets of the sub-tables in ``it`` and of the
  candidates' doubles, the reach radii and the damping ``h D`` in ``dt``;
* blocks (``BLOCK``): the decoupled velocity blocks (subtrees hanging from the world);
* joints (``JOINT``, types ``JOINT_TYPES``), free joints (``FREE``);
* candidates: the geometry pairs with a moving body, then the joint-limit sides (block by
  block, each block's sides in its site order: lower sides first), then the joint-friction
  coordinates (block by block, in row order; bound ``h F`` and cfm in ``dt``), then the
  closures (block by block, each block's rows three to a slot; erp and cfm in ``dt``; its
  columns those of both bodies' ancestors); ``CANDIDATE_INTS`` ints
  each (the common fields, then the kind's: the two shape kinds; a side's coordinate,
  velocity and sign), and ``CANDIDATE_DOUBLES`` doubles in ``dt`` (the shapes' poses in
  their bodies' frames and parameters; a side's bound, margin, erp and cfm: the defaults of
  the block's parameters here, a context's own values in its scratch copy of ``dt``); a
  candidate's column list
  (``COLUMN`` entries of ``mask[B] - mask[A]``) followed by the count and indices of the
  velocity blocks it touches; per contact slot its candidate (``contact_candidate``);
* reach bodies and, per body, its ancestor columns (``ANCESTORS``).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

import numpy as np

from solvers.collision import KIND_IDS
from solvers.contact_step import layout as L

from ..constraints import (BILATERAL, BOUNDED, FRICTION_BOX, UNILATERAL, ConstraintRows, ContactResults,
                           JointFrictionConstraint, JointLimitConstraint, PointContactConstraint,
                           PointContactResult, softening_from_spring)
from ..geometry import Box, Capsule, Cylinder, Ellipsoid, Halfspace, Mesh, Sphere
from ._time_stepping_solve import SolveReport
from ._ts_closures import (CLOSURE_BLOCKS, ClosureTerms, closure_bodies, project_closures,
                           write_closure_input)
from ._step_method import StepFailure, StepInputs, StepMethod
from .solutions import ContactWarmStart, StepSolution, StepStatus

__all__ = ["CompiledContactStep", "CompiledStep", "unsupported_reason", "describe_block",
           "PGS_TAG", "PGS_SWEEP_TOL"]

PGS_TAG = "pgs"
"""``SolveReport.method`` of the compiled step's solver (block PGS and polish)."""

PGS_SWEEP_TOL = 1e-10
"""The compiled PGS stops when no impulse changes by more than this (velocity units,
relative to ``max(1, |J v_free + b|)``)."""

_SCALAR_ORDER = ("h", "margin", "mu", "erp", "cfm", "bias_mode", "tol", "it_tol")
"""The order in which :class:`CompiledStep` writes the scalars (checked against the layout)."""
if tuple(n for n, _ in L.SCALARS.fields) != _SCALAR_ORDER:
    raise ImportError("multibody.plants._ts_compiled writes the kernel's scalars in the order "
                      f"{_SCALAR_ORDER}, the layout declares {L.SCALARS.fields}")
_CO, _ST, _WS = L.CANDIDATE_OUT, L.STATUS, L.WARM
_SP, _SPI, _SPD = L.KIND["shape_pair"].code, L.SP_INTS, L.SP_DOUBLES
_JL, _JLI, _JLD = L.KIND["joint_limit"].code, L.JL_INTS, L.JL_DOUBLES
_JF, _JFI, _JFD = L.KIND["joint_friction"].code, L.JF_INTS, L.JF_DOUBLES
_CL, _CLI, _CLD = L.KIND["closure"].code, L.CL_INTS, L.CL_DOUBLES
_WARM_PARTS = ("n", "fx", "fy", "fz")          # a contact slot's warm-start entries (WARM)
_NARROW_PHASE_STATUS = {-1: "the pair was refused (unsupported or malformed shape)",
                        -2: "EPA could not start (degenerate shape)",
                        -3: "a non-finite contact point (non-finite pose?)"}


def _joint_type(j) -> Optional[int]:
    if j.type == "free":
        return L.JOINT_TYPES.index("free")
    if j.type == "ball":
        return L.JOINT_TYPES.index("ball")
    return L.JOINT_TYPES.index("vector") if j.nq == j.nv else None


def shape_description(shape) -> tuple:
    """``(kind, parameters)`` of a collision shape for the kernel's narrow phase (the kinds
    of ``solvers.collision``), or ``(None, ())`` for a shape it has no description of."""
    for cls, kind in _SHAPE_KINDS:
        if isinstance(shape, cls):
            if cls is Sphere:
                return kind, (shape.radius,)
            if cls is Box:
                return kind, tuple(float(x) for x in shape.half)
            if cls is Capsule or cls is Cylinder:
                return kind, (shape.radius, shape.half_length)
            if cls is Ellipsoid:
                return kind, tuple(float(x) for x in shape.radii)
            return kind, ()
    return None, ()


_SHAPE_KINDS = ((Sphere, "sphere"), (Box, "box"), (Capsule, "capsule"), (Cylinder, "cylinder"),
                (Ellipsoid, "ellipsoid"), (Halfspace, "halfspace"))


def _pose12(X: np.ndarray) -> np.ndarray:
    """A 4 x 4 pose as the kernel's 12 numbers: rotation row-major, then the origin."""
    return np.concatenate([X[:3, :3].ravel(), X[:3, 3]])


def _limit_sides(tree, blk) -> list:
    """``(coordinate, velocity, sign, bound, label)`` of each side of the joint-limit block
    ``blk``, in its site order (lower sides first), from its public site interface:
    ``J = sign e_velocity`` and ``phi = gap(q) = sign (q[coordinate] - bound)``."""
    q0, v0 = np.zeros(tree.nq), np.zeros(tree.nv)
    out = []
    for i, label in enumerate(blk.site_names()):
        Jn = blk.site_points(q0, v0, i)[0].Jn
        vi = int(np.flatnonzero(Jn)[0])
        sign = int(Jn[vi])
        joint = next(j for j in tree.joints if j.v_start <= vi < j.v_start + j.nv)
        qi = joint.q_start + vi - joint.v_start
        out.append((qi, vi, sign, -sign * blk.gap(q0, i), label))
    return out


def limit_softening(blk, context, h: float) -> tuple:
    """``(erp, cfm)`` of a joint-limit block for the step ``h`` from the block's
    ``context`` (its ``erp``/``cfm``, or ``kp``/``kd`` mapped by ODE's rule), as its own
    time-stepping rows take them."""
    return tuple(float(x) for x in blk.softening(context, h))


def friction_values(blk, context, h: float) -> tuple:
    """``(bounds, cfm)`` of a joint-friction block for the step ``h`` from the block's
    ``context``: the impulse bounds ``h F`` of its rows (a tuple) and its cfm, as its own
    time-stepping rows take them."""
    n = len(_friction_coordinates(blk.tree, blk))
    F = np.asarray(context.get_parameter("friction"), float)[:n]
    return tuple(float(x) for x in h * F), float(blk.softening(context, h)[1])


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


_ONE_DOF_BLOCKS = (JointLimitConstraint, JointFrictionConstraint)
"""The blocks whose rows are one-dof kernel candidates (``joint_limit``, ``joint_friction``)."""


def _friction_coordinates(tree, blk) -> list:
    """The velocity coordinates of a joint-friction block's rows, in its row order (its
    joints' in order, each joint's coordinates in order)."""
    out = []
    for name in blk.joints:
        j = tree.get_joint(name)
        out.extend(range(j.v_start, j.v_start + j.nv))
    return out


def unsupported_reason(tree, constraints, damping_scheme: str = "implicit") -> Optional[str]:
    """Why the compiled step cannot run this plant (None when it can): names the constraint
    block, joint or geometry pair (or the plant's ``damping_scheme``) it does not cover."""
    if damping_scheme != "implicit":
        return (f"damping_scheme='{damping_scheme}' (MuJoCo's Euler split of the joint damping) "
                "is taken by the pivoting step only")
    soft = [c for c in constraints if getattr(c, "mujoco", None) is not None]
    if soft:
        return (f"constraint '{soft[0].name}' has MuJoCo softening (solref/solimp), which the "
                "compiled step does not have")
    contacts = [c for c in constraints if isinstance(c, PointContactConstraint)]
    limits = [c for c in constraints if isinstance(c, _ONE_DOF_BLOCKS)]
    closures = [c for c in constraints if isinstance(c, CLOSURE_BLOCKS)]
    others = [c for c in constraints
              if not isinstance(c, (PointContactConstraint,) + _ONE_DOF_BLOCKS + CLOSURE_BLOCKS)]
    if others:
        return (", ".join(describe_block(c) for c in others) + ": the compiled step takes "
                "one PointContactConstraint block, JointLimitConstraint and "
                "JointFrictionConstraint blocks and closures (ball, weld, distance, "
                "point-on-line), no other constraint")
    if len(contacts) > 1 or not (contacts or limits or closures):
        return ("the compiled step needs one PointContactConstraint block (with any joint "
                "limits and joint friction) or joint limits and joint friction only, got "
                + (", ".join(describe_block(c) for c in contacts) or "none"))
    if closures and contacts:
        return (", ".join(describe_block(c) for c in closures) + " with contact "
                f"'{contacts[0].name}': the compiled step takes closures without contacts (a "
                "contact's friction rows can repeat a closure's, which its polish does not "
                "solve; the pivoting step eliminates the closure rows)")
    for j in tree.joints:
        if j.nq and _joint_type(j) is None:
            return f"joint '{j.name}' ({j.type}) has nq != nv"
    if not contacts:
        return None
    c = contacts[0]
    if c.friction != "cone":
        return f"contact '{c.name}' uses friction='{c.friction}' (the compiled step has the disc)"
    if c.max_geometry_margin > 0:
        return (f"contact '{c.name}' has per-geometry contact margins (MuJoCo's margin; the "
                "compiled step has one margin for every pair)")
    bad = [(ga, gb) for ga, gb in c.site_pairs
           if shape_description(ga.shape)[0] is None or shape_description(gb.shape)[0] is None]
    if bad:
        ga, gb = bad[0]
        more = f" (and {len(bad) - 1} more pairs)" if len(bad) > 1 else ""
        return (f"geometry pair ('{ga.name}', '{gb.name}') is "
                f"{type(ga.shape).__name__}-{type(gb.shape).__name__} (a shape the compiled "
                f"narrow phase does not describe; contact '{c.name}'){more}")
    return None


class CompiledContactStep:
    """Tables and buffers of the compiled step for one plant (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    constraints : PointContactConstraint or sequence of constraint blocks
        The plant's constraint blocks (at most one PointContactConstraint, any number of
        JointLimitConstraint and JointFrictionConstraint, closures without a contact
        block; :func:`unsupported_reason` accepts them).
    kernel : solvers.contact_step.ContactStepKernel
    h : float
    damping_h : ndarray, shape (nv,)
        ``h D`` (implicit joint damping).
    blocks : list of (int, int)
        Decoupled velocity ranges ``[a, b)``.
    mask : ndarray, shape (N, nv)
        Ancestor mask of the bodies' velocity columns.
    max_sweeps : int
        PGS sweeps per step before the fallback.
    """

    def __init__(self, tree, constraints, kernel, h: float, damping_h: np.ndarray, blocks: list,
                 mask: np.ndarray, max_sweeps: int) -> None:
        self.kernel = kernel
        blocks_in = [constraints] if not isinstance(constraints, (list, tuple)) else \
            list(constraints)
        self.blocks = blocks_in
        contacts = [c for c in blocks_in if isinstance(c, PointContactConstraint)]
        self.contact = contact = contacts[0] if contacts else None
        self.limits = [c for c in blocks_in if isinstance(c, JointLimitConstraint)]
        self.frictions = [c for c in blocks_in if isinstance(c, JointFrictionConstraint)]
        self.closures = [c for c in blocks_in if isinstance(c, CLOSURE_BLOCKS)]
        self.project = None       # the plant's integrate when it post-stabilizes closures
        self.h = float(h)
        nq, nv, N = tree.nq, tree.nv, len(tree.bodies)
        self.nq, self.nv, self.N = nq, nv, N
        index = {b.name: b.index for b in tree.bodies}
        moving = mask.any(axis=1)
        cand_i, cand_d, self.geoms, slot_cand = [], [], [], []
        rec_i, rec_d, common = _SPI, _SPD, L.CANDIDATE_COMMON
        for ga, gb in (contact.site_pairs if contact is not None else ()):
            ia, ib = index[ga.body], index[gb.body]
            if not (moving[ia] or moving[ib]):
                continue              # two bodies fixed to the world: no row can act
            (ka, pa), (kb, pb) = shape_description(ga.shape), shape_description(gb.shape)
            slots = L.contact_slots(ka, kb)
            ci = np.zeros(L.CANDIDATE_INTS, int)
            ci[common.KIND], ci[common.BODY_A], ci[common.BODY_B] = _SP, ia, ib
            ci[common.FIRST_CONTACT], ci[common.NUM_CONTACTS] = len(slot_cand), slots
            ci[rec_i.SHAPE_A], ci[rec_i.SHAPE_B] = KIND_IDS[ka], KIND_IDS[kb]
            d = np.zeros(L.CANDIDATE_DOUBLES)
            d[rec_d.slice("pose_a")], d[rec_d.slice("pose_b")] = _pose12(ga.pose), _pose12(gb.pose)
            d[rec_d.PARAM_A:rec_d.PARAM_A + len(pa)] = pa
            d[rec_d.PARAM_B:rec_d.PARAM_B + len(pb)] = pb
            slot_cand.extend([len(cand_i)] * slots)
            cand_i.append(ci)
            cand_d.append(d)
            self.geoms.extend([(ga, gb)] * slots)
        self.num_pair_slots = len(slot_cand)
        self.pairs = [self.geoms[int(ci[common.FIRST_CONTACT])] for ci in cand_i]
        self.slots = [int(ci[common.NUM_CONTACTS]) for ci in cand_i]
        # the warm start's keys: four entries per contact slot (WARM), by (pair, point index)
        keys, count = [], {}
        for ga, gb in self.geoms:
            pair = (contact.name, ga.name, gb.name)
            i = count.get(pair, 0)
            count[pair] = i + 1
            keys.extend(pair + ("candidate", i, part) for part in _WARM_PARTS)
        # joint-limit sides: one slot each, after the pairs' (keys: block, coordinate, side)
        self.limit_slots, self.limit_soft = [], []
        for blk in self.limits:
            first, n0 = len(slot_cand), len(cand_i)
            for i, (qi, vi, sign, bound, label) in enumerate(_limit_sides(tree, blk)):
                ci = np.zeros(L.CANDIDATE_INTS, int)
                ci[common.KIND], ci[common.FIRST_CONTACT], ci[common.NUM_CONTACTS] = \
                    _JL, len(slot_cand), 1
                ci[_JLI.COORDINATE], ci[_JLI.VELOCITY], ci[_JLI.SIGN] = qi, vi, sign
                d = np.zeros(L.CANDIDATE_DOUBLES)
                d[_JLD.BOUND], d[_JLD.MARGIN] = bound, blk.margin
                slot_cand.append(len(cand_i))
                cand_i.append(ci)
                cand_d.append(d)
                keys.extend((blk.name, label, "limit", part) for part in _WARM_PARTS)
            self.limit_slots.append((first, len(slot_cand)))
            # where the block's (erp, cfm) go in dt (its candidates' doubles)
            rows = L.CANDIDATE_DOUBLES * np.arange(n0, len(cand_i))
            self.limit_soft.append((rows + _JLD.ERP, rows + _JLD.CFM))
        # joint-friction coordinates: one slot each, after the limits' (keys: block, row)
        self.friction_slots, self.friction_soft = [], []
        for blk in self.frictions:
            first, n0 = len(slot_cand), len(cand_i)
            for i, vi in enumerate(_friction_coordinates(tree, blk)):
                ci = np.zeros(L.CANDIDATE_INTS, int)
                ci[common.KIND], ci[common.FIRST_CONTACT], ci[common.NUM_CONTACTS] = \
                    _JF, len(slot_cand), 1
                ci[_JFI.VELOCITY] = vi
                slot_cand.append(len(cand_i))
                cand_i.append(ci)
                cand_d.append(np.zeros(L.CANDIDATE_DOUBLES))
                keys.extend((blk.name, i, "friction", part) for part in _WARM_PARTS)
            self.friction_slots.append((first, len(slot_cand)))
            rows = L.CANDIDATE_DOUBLES * np.arange(n0, len(cand_i))
            self.friction_soft.append((rows + _JFD.BOUND, rows + _JFD.CFM))
        # closures: ceil(m / 3) slots of up to three rows each, after the frictions' (keys:
        # block, slot); closure_slots: per block its (slot, first row, rows) in the stacked
        # rows of closure_terms
        self.closure_slots, self.closure_soft, r0 = [], [], 0
        self.closure_terms = ClosureTerms(tree, self.closures) if self.closures else None
        for blk, m in zip(self.closures, self.closure_terms.rows if self.closures else ()):
            n0, mine = len(cand_i), []
            ia, ib = closure_bodies(tree, blk)
            for i, a in enumerate(range(0, m, 3)):
                nr = min(3, m - a)
                ci = np.zeros(L.CANDIDATE_INTS, int)
                ci[common.KIND], ci[common.FIRST_CONTACT], ci[common.NUM_CONTACTS] = \
                    _CL, len(slot_cand), 1
                ci[common.BODY_A], ci[common.BODY_B], ci[_CLI.NUM_ROWS] = ia, ib, nr
                mine.append((len(slot_cand), r0 + a, nr))
                slot_cand.append(len(cand_i))
                cand_i.append(ci)
                cand_d.append(np.zeros(L.CANDIDATE_DOUBLES))
                keys.extend((blk.name, i, "closure", part) for part in _WARM_PARTS)
            r0 += m
            self.closure_slots.append(mine)
            rows = L.CANDIDATE_DOUBLES * np.arange(n0, len(cand_i))
            self.closure_soft.append((rows + _CLD.ERP, rows + _CLD.CFM))
        self.closure_rows = sum(m - len(sl) for m, sl in zip(
            self.closure_terms.rows if self.closures else (), self.closure_slots))
        self.warm_keys = tuple(keys)
        self.slot_coordinate = np.array(
            [-1] * self.num_pair_slots
            + [int(ci[_JLI.COORDINATE]) if ci[common.KIND] == _JL else -1
               for ci in cand_i[len(self.pairs):]], int)
        npairs, nc = len(cand_i), len(slot_cand)
        self.npairs, self.nc = npairs, nc
        # reach of the bodies carrying finite geometry (the speculative margin)
        reach: dict = {}
        for b in tree.bodies:
            for g in b.collision_geometries:
                if isinstance(g.shape, Mesh):
                    continue
                r = float(getattr(g.shape, "bounding_radius", np.inf))
                if np.isfinite(r):
                    i = index[g.body]
                    reach[i] = max(reach.get(i, 0.0), r + float(np.linalg.norm(g.pose[:3, 3])))
        reach_idx = sorted(reach)
        joints = [j for j in tree.joints if j.nq]
        frees = [j for j in tree.joints if j.type == "free"]
        hd = L.HEADER
        it: list = [0] * hd.size

        def put(values) -> int:
            off = len(it)
            it.extend(int(x) for x in values)
            return off

        def record(rec, **fields) -> list:
            row = [0] * rec.size
            for name, val in fields.items():
                row[rec.offsets[name]] = val
            return row
        it[hd.BLOCKS] = put([x for a, b in blocks
                             for x in record(L.BLOCK, start=a, length=b - a)])
        it[hd.JOINTS] = put([x for j in joints for x in record(
            L.JOINT, type=_joint_type(j), q_start=j.q_start, v_start=j.v_start, nq=j.nq)])
        it[hd.FREE] = put([x for j in frees
                           for x in record(L.FREE, q_start=j.q_start, v_start=j.v_start)])
        cand_off = len(it)
        it.extend([0] * (L.CANDIDATE_INTS * npairs))
        it[hd.CANDIDATES] = cand_off
        it[hd.CONTACT_CANDIDATE] = put(slot_cand)
        block_of = np.zeros(nv, int)
        for k, (a, b) in enumerate(blocks):
            block_of[a:b] = k
        common = L.CANDIDATE_COMMON
        for k, ci in enumerate(cand_i):
            if ci[common.KIND] == _JL:      # the side's one column, with its sign
                dm = np.zeros(nv, int)
                dm[ci[_JLI.VELOCITY]] = ci[_JLI.SIGN]
            elif ci[common.KIND] == _JF:    # the coordinate's one column
                dm = np.zeros(nv, int)
                dm[ci[_JFI.VELOCITY]] = 1
            elif ci[common.KIND] == _CL:    # both bodies' ancestor columns
                dm = ((mask[ci[common.BODY_A]] != 0) | (mask[ci[common.BODY_B]] != 0)).astype(int)
            else:
                dm = mask[ci[common.BODY_B]] - mask[ci[common.BODY_A]]
            cols = np.flatnonzero(dm)
            off = put([x for col in cols
                       for x in record(L.COLUMN, column=col, sign=int(dm[col]))])
            touched = sorted({int(block_of[col]) for col in cols})
            put([len(touched)] + touched)
            ci[common.COLUMNS], ci[common.NUM_COLUMNS] = off, len(cols)
            it[cand_off + L.CANDIDATE_INTS * k: cand_off + L.CANDIDATE_INTS * (k + 1)] = \
                [int(x) for x in ci]
        it[hd.REACH] = put(reach_idx)
        anc_off = len(it)
        it.extend([0] * (L.ANCESTORS.size * N))
        it[hd.ANCESTORS] = anc_off
        for b in range(N):
            cols = np.flatnonzero(mask[b])
            a0 = put(cols)
            it[anc_off + L.ANCESTORS.size * b: anc_off + L.ANCESTORS.size * (b + 1)] = \
                record(L.ANCESTORS, offset=a0, count=len(cols))
        counts = dict(nq=nq, nv=nv, num_bodies=N, num_candidates=npairs, num_contacts=nc,
                      num_blocks=len(blocks),
                      num_joints=len(joints), num_free=len(frees),
                      max_sweeps=int(max_sweeps), num_reach=len(reach_idx))
        for name, val in counts.items():
            it[hd.offsets[name]] = val
        dt = np.concatenate([np.array(cand_d).ravel() if npairs else np.zeros(0),
                             np.array([reach[i] for i in reach_idx]), damping_h])
        it[hd.CAND_DOUBLES], it[hd.REACH_RADII] = 0, L.CANDIDATE_DOUBLES * npairs
        it[hd.DAMPING] = L.CANDIDATE_DOUBLES * npairs + len(reach_idx)
        self.it = np.ascontiguousarray(it, dtype=np.int32)
        self.dt = np.ascontiguousarray(dt, dtype=float)
        # the limit blocks' default softening and the friction blocks' default bounds and
        # cfm in dt (a context's own values: its scratch)
        self.limit_default = tuple(
            [limit_softening(blk, blk.create_default_context(), self.h) for blk in self.limits]
            + [friction_values(blk, blk.create_default_context(), self.h)
               for blk in self.frictions]
            + [limit_softening(blk, blk.create_default_context(), self.h)
               for blk in self.closures])
        self.write_limit_softening(self.dt, self.limit_default)
        dims = dict(nq=nq, nv=nv, nb=N, nc=nc)
        sec = L.OUTPUT.offsets(**dims)
        if sec["qn"][0] != 0 or sec["vn"][0] != nq:
            raise ValueError("the kernel's output must start with q_next, v_next")
        self.o_tauc, self.o_acc, self.o_stat = sec["tauc"][0], sec["acc"][0], sec["stat"][0]
        self.o_imp, self.o_wout, self.o_co = sec["imp"][0], sec["wout"], sec["co"]
        self.o_jall = sec["Jall"][0]
        self.n_out = L.OUTPUT.total(**dims)
        self.n_in = L.INPUT.total(**dims)
        self.n_work = L.WORK.total(**dims)
        self.n_iwork = L.IWORK.total(**dims) + 1

    def block_impulses(self, co: np.ndarray) -> list:
        """Per constraint block (plant order) the impulses of its active rows: the contact
        block's normals, then its (t1, t2) pairs; a limit block's active sides in order."""
        out = []
        npc = self.num_pair_slots
        for blk in self.blocks:
            if blk is self.contact:
                act = np.flatnonzero(co[:npc, _CO.ACTIVE])
                p = co[act][:, _CO.slice("impulse")]
                out.append(np.concatenate([p[:, 0], p[:, 1:].ravel()]))
            elif isinstance(blk, CLOSURE_BLOCKS):
                sl = self.closure_slots[self.closures.index(blk)]
                out.append(np.concatenate([co[k, _CO.IMPULSE:_CO.IMPULSE + nr]
                                           for k, _, nr in sl]))
            else:
                a, b = self.one_dof_slots(blk)
                act = a + np.flatnonzero(co[a:b, _CO.ACTIVE])
                out.append(co[act, _CO.IMPULSE].copy())
        return out

    def one_dof_slots(self, blk) -> tuple:
        """The contact slots ``[a, b)`` of a joint-limit or joint-friction block."""
        for group, slots in ((self.limits, self.limit_slots),
                             (self.frictions, self.friction_slots)):
            for x, ab in zip(group, slots):
                if x is blk:
                    return ab
        raise KeyError(blk.name)

    def write_limit_softening(self, dt: np.ndarray, values: Sequence) -> None:
        """Write each limit block's ``(erp, cfm)``, then each joint-friction block's
        ``(bounds, cfm)`` (``values``, in :attr:`limits` then :attr:`frictions` order; a
        friction block's bounds ``h F`` per row) into their candidates' doubles of ``dt``."""
        for (ie, ic), (a, b) in zip(self.limit_soft + self.friction_soft + self.closure_soft,
                                    values):
            dt[ie] = a
            dt[ic] = b

    def rigid_rows(self, values: tuple) -> np.ndarray:
        """Which stacked closure rows are rigid (no spring, ``cfm = 0`` in ``values``, the
        :meth:`write_limit_softening` values), those the projection corrects."""
        vals = values[len(self.limits) + len(self.frictions):]
        return np.concatenate([np.full(m, (not blk.spring) and cfm == 0.0) for blk, m, (_, cfm)
                               in zip(self.closures, self.closure_terms.rows, vals)])

    def narrow_phase_failure(self, pair: int, result: int) -> str:
        """The reason of a step whose narrow phase failed on candidate ``pair`` with
        ``result`` (a negative status of ``solvers.collision``, or a point count)."""
        ga, gb = self.pairs[pair]
        what = _NARROW_PHASE_STATUS.get(result)
        if what is None:
            what = (f"it gave {result} contact points, more than the pair's "
                    f"{self.slots[pair]} slots")
        return (f"the narrow phase of geometry pair ('{ga.name}', '{gb.name}') "
                f"({type(ga.shape).__name__}-{type(gb.shape).__name__}, contact "
                f"'{self.contact.name}') failed: {what}")

    def scratch(self) -> "Scratch":
        """Buffers for one context (kept in its memory: the C call releases the GIL, so
        contexts stepped from several threads must not share them)."""
        return Scratch(self)

    # ------------------------------------------------------------------ the step
    def run(self, t: float, xd: np.ndarray, tau: np.ndarray, dyn: tuple, scalars: tuple,
            warm, scratch: "Scratch", name: str):
        """One step: a :class:`StepSolution`, or a :class:`StepFailure` (the kernel did not
        converge or a velocity block of ``H + h D`` is not positive definite).

        ``xd`` the discrete state ``[q; v; ...]``, ``dyn = (H, c, P, S)`` of the plant's
        compiled function; ``scalars``: the layout's ``SCALARS`` (h, margin, mu, erp, cfm,
        bias mode, tol, it_tol); ``warm``: the context's
        :class:`ContactWarmStart` (or None); ``scratch`` the context's :meth:`scratch`;
        ``name`` the step method's name (for the status and the warm start)."""
        nq, nv, nc = self.nq, self.nv, self.nc
        sc = scratch
        sc.in_s[:] = scalars
        sc.in_x[:] = xd[:nq + nv]
        sc.in_tau[:] = tau
        H, c, P, S = dyn
        sc.in_H[:], sc.in_c[:], sc.in_P[:] = H, c, P
        sc.in_S[:] = S if S.ndim == 2 else S.reshape(6, nv)     # (6,) when nv = 1
        closure_phi = None
        if self.closures:
            closure_phi, cJ = self.closure_terms(xd[:nq])
            write_closure_input([x for sl in self.closure_slots for x in sl], closure_phi, cJ,
                                sc.in_cphi, sc.in_cJ)
        if warm is None:
            sc.in_w[:] = 0.0
        elif warm.keys is self.warm_keys:    # this plant's kernel wrote it: same entries
            sc.in_w[:] = warm.impulses
        else:
            sc.in_w[:] = warm.lookup(self.warm_keys)[0]
        out, out_p = sc.out()
        if self.kernel.compiled:
            it_p, dt_p, in_p, w_p, iw_p = sc.ptrs
            code = self.kernel.pointer_call((it_p, dt_p, in_p, out_p, w_p, iw_p))
        else:
            code = self.kernel.step(self.it, sc.dt, sc.inp, out, sc.work, sc.iwork)
        if code != 0:
            return StepFailure("a velocity block of H + h D is not positive definite")
        k = self.o_stat
        stat = out[k:k + _ST.size].tolist()
        sweeps, na = int(stat[_ST.SWEEPS]), int(stat[_ST.ACTIVE_CONTACTS])
        residual = stat[_ST.RESIDUAL]
        if stat[_ST.FAILED_CANDIDATE] >= 0:
            return StepFailure(self.narrow_phase_failure(int(stat[_ST.FAILED_CANDIDATE]),
                                                         int(stat[_ST.NARROW_PHASE])))
        if stat[_ST.CONVERGED] != 1.0:
            return StepFailure(
                f"the kernel did not converge: residual {residual:.3g} > tolerance "
                f"{scalars[L.SCALARS.TOL]:.3g} after {sweeps} PGS sweeps and the polish, "
                f"{na} active contacts")
        if self.closures and self.project is not None:   # the pivoting step's projection
            out[:nq] = project_closures(self.closure_terms, self.rigid_rows(sc.limit_values),
                                        self.project, out[:nq],
                                        H + np.diag(self.dt[self.it[L.HEADER.DAMPING]:]))
        if xd.shape[0] == nq + nv:         # no block states: the kernel's output is it
            xd_next = out[:nq + nv]
        else:
            xd_next = np.array(xd, dtype=float)
            xd_next[:nq + nv] = out[:nq + nv]
        a, b = self.o_wout
        warm_next = ContactWarmStart(name, self.warm_keys, out[a:b])
        a, b = self.o_co
        co = out[a:b].reshape(nc, _CO.size)
        a = self.o_jall
        Jall = out[a:].reshape(nc, 3, nv)
        npc = self.num_pair_slots
        if not (self.limits or self.frictions or self.closures):   # the contact block alone
            a = self.o_imp
            impulses = [out[a:a + 3 * na]]
            n_points = na
        else:
            impulses, n_points = self.block_impulses(co), 0
            if npc:
                n_points = int(np.count_nonzero(co[:npc, _CO.ACTIVE]))
        rows = LazyRows([(lambda b=b, lv=sc.limit_values: _block_rows(self, b, co, Jall, scalars,
                                                                       lv, closure_phi))
                         for b in self.blocks])
        geoms, h = self.geoms, self.h
        m_rows = 3 * n_points + (na - n_points) + self.closure_rows

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
            return StepStatus(name, True, sweeps, n_points, residual, m_rows,
                              SolveReport("solved", PGS_TAG, residual, m_rows, sweeps))
        a, c = self.o_tauc, self.o_acc
        return StepSolution(t, xd_next[:nq], xd_next[nq:nq + nv], xd_next, tau, out[a:a + nv],
                            impulses, rows, out[c:c + nv], warm_next, make_contacts,
                            make_status)


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
        ``(q, v) -> (H, c, P, S)``, the plant's compiled dynamics/kinematics function.
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
        self.closure_params = tuple(
            (blk.spring, tuple(plant.parameter_index(f"{blk.name}.{n}")
                               for n in (("kp", "kd") if blk.spring else ("erp", "cfm"))))
            for blk in tables.closures)
        self.friction_params = tuple(
            (len(_friction_coordinates(blk.tree, blk)),
             plant.parameter_index(f"{blk.name}.friction"),
             plant.parameter_index(f"{blk.name}.cfm"))
            for blk in tables.frictions)

    def step_scalars(self, context) -> tuple:
        """The layout's ``SCALARS`` of a step of the plant's ``context``: h, the contact
        block's margin, mu, erp, cfm (zeros without a contact block), the bias mode and the
        tolerances."""
        tab = self.tables
        contact = tab.contact
        if contact is None:
            return (tab.h, 0.0, 0.0, 0.0, 0.0, 0.0, self.plant.lcp_tolerance, PGS_SWEEP_TOL)
        i_mu, i_a, i_b = self.params
        a, b = float(context.get_parameter(i_a)[0]), float(context.get_parameter(i_b)[0])
        erp, cfm = softening_from_spring(a, b, tab.h) if contact.spring else (a, b)
        return (tab.h, contact.margin, float(context.get_parameter(i_mu)[0]), erp, cfm,
                self.bias_mode, self.plant.lcp_tolerance, PGS_SWEEP_TOL)

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
        return tab.run(inputs.time, inputs.xd, inputs.tau,
                       self.dynamics(inputs.q, inputs.v), scalars, inputs.warm_start, scratch,
                       self.name)


class Scratch:
    """One context's buffers of the kernel: its input (the ``INPUT`` sections: scalars,
    ``[q; v]``, tau, H, c, P, S, warm start; fully overwritten every step), its copy of the
    double table (with the context's joint-limit softening), work arrays, and a pool of
    output arrays (a fresh slice per step, so that its address costs nothing)."""

    POOL = 16

    def __init__(self, step: CompiledContactStep) -> None:
        nq, nv, nc, N = step.nq, step.nv, step.nc, step.N
        sec = L.INPUT.offsets(nq=nq, nv=nv, nb=N, nc=nc)
        self.inp = np.zeros(L.INPUT.total(nq=nq, nv=nv, nb=N, nc=nc))
        view = {name: self.inp[a:b] for name, (a, b) in sec.items()}
        self.in_s, self.in_tau, self.in_c = view["scal"], view["tau"], view["c"]
        self.in_x = self.inp[sec["q"][0]:sec["v"][1]]          # [q; v], adjacent sections
        self.in_H = view["H"].reshape(nv, nv)
        self.in_P = view["P"]
        self.in_S = view["S"].reshape(6, nv)
        self.in_w = view["warm"]
        self.in_cphi = view["cphi"].reshape(nc, 3)
        self.in_cJ = view["cJ"].reshape(nc, 3, nv)
        self.work = np.zeros(step.n_work)
        self.iwork = np.zeros(step.n_iwork, dtype=np.int32)
        self.n_out = step.n_out
        self.step = step
        self.dt = step.dt.copy()           # this context's limit softening written in
        self.limit_values = step.limit_default
        self.ptrs = (step.it.ctypes.data, self.dt.ctypes.data, self.inp.ctypes.data,
                     self.work.ctypes.data, self.iwork.ctypes.data)
        self.pool, self.pool_addr, self.pool_i = None, 0, self.POOL

    def set_limit_softening(self, values: tuple) -> None:
        """Write the context's joint-limit softening ``((erp, cfm), ...)`` into this
        scratch's table when it changed."""
        if values != self.limit_values:
            self.step.write_limit_softening(self.dt, values)
            self.limit_values = values

    def out(self):
        """A fresh output array and its address."""
        if self.pool_i == self.POOL:
            self.pool = np.empty(self.POOL * self.n_out)
            self.pool_addr = self.pool.ctypes.data
            self.pool_i = 0
        i, n = self.pool_i, self.n_out
        self.pool_i += 1
        return self.pool[i * n:(i + 1) * n], self.pool_addr + 8 * i * n


class LazyRows(Sequence):
    """The step's :class:`ConstraintRows`, one per constraint block (in the plant's block
    order), built on first access (most steps never look at them)."""

    def __init__(self, builds: list) -> None:
        self._builds = builds
        self._rows: Optional[list] = None

    def _get(self) -> list:
        if self._rows is None:
            self._rows = [b() for b in self._builds]
        return self._rows

    def __getitem__(self, i):
        return self._get()[i]

    def __len__(self) -> int:
        return len(self._builds)


def _block_rows(step: CompiledContactStep, blk, co: np.ndarray, Jall: np.ndarray,
                scalars: tuple, limit_values: tuple, closure_phi=None):
    """The rows of constraint block ``blk`` in the step (the contact block's, or a limit
    block's active sides)."""
    if blk is step.contact:
        return _rows(step, co, Jall, scalars)
    if isinstance(blk, CLOSURE_BLOCKS):              # every row, bilateral, erp phi / h
        i = step.closures.index(blk)
        erp, cfm = limit_values[len(step.limits) + len(step.frictions) + i]
        J = np.concatenate([Jall[k, :nr, :] for k, _, nr in step.closure_slots[i]])
        r0 = sum(step.closure_terms.rows[:i])
        phi = closure_phi[r0:r0 + J.shape[0]].copy()
        return ConstraintRows.make(J.copy(), erp * phi / step.h, BILATERAL, cfm=cfm, phi=phi)
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


def _rows(step: CompiledContactStep, co: np.ndarray, Jall: np.ndarray, scalars: tuple):
    """The contact rows of the step as :class:`ConstraintRows` (normals first, then the two
    tangent rows of each contact; ``FRICTION_BOX`` kind with bounds ``-+mu``, which the
    kernel applies to the pair as the disc ``|p_t| <= mu p_n``)."""
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

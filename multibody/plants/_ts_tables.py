"""The compiled step's tables (private): the kernel's int and double tables of one plant,
written once from the tree and the constraint blocks (:class:`CompiledContactStep`, the
table writer), and one context's buffers and parameter copy of the double table
(:class:`Scratch`). The step itself (:mod:`._ts_compiled`) runs the kernel on them.

Tables (``it``, int32; offsets are absolute indices into ``it``), every field by the name
the layout (``solvers.contact_step.layout``) gives it:

* header (``HEADER``): counts, the offsets of the sub-tables in ``it`` and of the
  candidates' doubles, the reach radii and the damping ``h D`` in ``dt``, and
  ``closure_projection`` (1 with loop closures: they are no candidates but eliminated
  exactly before the contact problem by the per-step affine map of
  :class:`~._ts_elimination.ClosureElimination`);
* blocks (``BLOCK``): the decoupled velocity blocks (subtrees hanging from the world);
* joints (``JOINT``, types ``JOINT_TYPES``), free joints (``FREE``);
* candidates: the geometry pairs with a moving body, then the joint-limit sides (block by
  block, each block's sides in its site order: lower sides first), then the joint-friction
  coordinates (block by block, in row order; bound ``h F`` and cfm in ``dt``);
  ``CANDIDATE_INTS`` ints
  each (the common fields, then the kind's: the two shape kinds; a side's coordinate,
  velocity and sign), and ``CANDIDATE_DOUBLES`` doubles in ``dt`` (the shapes' poses in
  their bodies' frames and parameters; a side's bound, margin, erp and cfm: the defaults of
  the block's parameters here, a context's own values in its scratch copy of ``dt``); a
  candidate's column list
  (``COLUMN`` entries of ``mask[B] - mask[A]``) followed by the count and indices of the
  velocity blocks it touches (with closures: also every block a closure links to one of
  them, :func:`~._ts_closures.closure_block_groups`); per contact slot its candidate
  (``contact_candidate``);
* reach bodies and, per body, its ancestor columns (``ANCESTORS``).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

import numpy as np

from solvers.collision import KIND_IDS
from solvers.contact_step import layout as L

from ..constraints import JointFrictionConstraint, JointLimitConstraint, PointContactConstraint
from ..geometry import Box, Capsule, Cylinder, Ellipsoid, Halfspace, Mesh, Sphere
from ._ts_closures import CLOSURE_BLOCKS, ClosureTerms, closure_block_groups
from ._ts_elimination import ClosureElimination

__all__ = ["CompiledContactStep", "Scratch", "shape_description", "joint_type", "limit_softening",
           "friction_values", "friction_coordinates", "ONE_DOF_BLOCKS"]

_CO = L.CANDIDATE_OUT
_SP, _SPI, _SPD = L.KIND["shape_pair"].code, L.SP_INTS, L.SP_DOUBLES
_JL, _JLI, _JLD = L.KIND["joint_limit"].code, L.JL_INTS, L.JL_DOUBLES
_JF, _JFI, _JFD = L.KIND["joint_friction"].code, L.JF_INTS, L.JF_DOUBLES
_WARM_PARTS = ("n", "fx", "fy", "fz")          # a contact slot's warm-start entries (WARM)
_NARROW_PHASE_STATUS = {-1: "the pair was refused (unsupported or malformed shape)",
                        -2: "EPA could not start (degenerate shape)",
                        -3: "a non-finite contact point (non-finite pose?)"}


def joint_type(j) -> Optional[int]:
    """The kernel's ``JOINT_TYPES`` code of joint ``j`` (free, ball, or a vector joint with
    ``nq == nv``), or None for a joint it does not integrate."""
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
    n = len(friction_coordinates(blk.tree, blk))
    F = np.asarray(context.get_parameter("friction"), float)[:n]
    return tuple(float(x) for x in h * F), float(blk.softening(context, h)[1])


ONE_DOF_BLOCKS = (JointLimitConstraint, JointFrictionConstraint)
"""The blocks whose rows are one-dof kernel candidates (``joint_limit``, ``joint_friction``)."""


def friction_coordinates(tree, blk) -> list:
    """The velocity coordinates of a joint-friction block's rows, in its row order (its
    joints' in order, each joint's coordinates in order)."""
    out = []
    for name in blk.joints:
        j = tree.get_joint(name)
        out.extend(range(j.v_start, j.v_start + j.nv))
    return out


class CompiledContactStep:
    """Tables and buffers of the compiled step for one plant (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    constraints : PointContactConstraint or sequence of constraint blocks
        The plant's constraint blocks (at most one PointContactConstraint, any number of
        JointLimitConstraint and JointFrictionConstraint, and closures;
        :func:`unsupported_reason` accepts them).
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
        self.projection = None    # its compiled form (ClosureProjection) where it applies
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
            d[rec_d.PAIR_MARGIN] = contact.pair_margin(ga, gb)
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
            for i, vi in enumerate(friction_coordinates(tree, blk)):
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
        # closures: no candidates; eliminated exactly before the contact problem (the
        # kernel's affine map, written per step by ClosureElimination: _ts_elimination)
        self.closure_terms = ClosureTerms(tree, self.closures) if self.closures else None
        self.elimination = (ClosureElimination(self.closure_terms, tree, bool(cand_i))
                            if self.closures else None)
        self._rigid_memo: dict = {}         # rigid_rows by the softening values
        self._rigid_last = (None, None)     # (the last values object, its rows)
        self.closure_rows = sum(self.closure_terms.rows) if self.closures else 0
        self.closure_soft: list = []        # (their erp, cfm: per step, not in dt)
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
            L.JOINT, type=joint_type(j), q_start=j.q_start, v_start=j.v_start, nq=j.nq)])
        it[hd.FREE] = put([x for j in frees
                           for x in record(L.FREE, q_start=j.q_start, v_start=j.v_start)])
        cand_off = len(it)
        it.extend([0] * (L.CANDIDATE_INTS * npairs))
        it[hd.CANDIDATES] = cand_off
        it[hd.CONTACT_CANDIDATE] = put(slot_cand)
        block_of = np.zeros(nv, int)
        for k, (a, b) in enumerate(blocks):
            block_of[a:b] = k
        closure_group = closure_block_groups(tree, self.closures, mask, block_of)
        common = L.CANDIDATE_COMMON
        for k, ci in enumerate(cand_i):
            if ci[common.KIND] == _JL:      # the side's one column, with its sign
                dm = np.zeros(nv, int)
                dm[ci[_JLI.VELOCITY]] = ci[_JLI.SIGN]
            elif ci[common.KIND] == _JF:    # the coordinate's one column
                dm = np.zeros(nv, int)
                dm[ci[_JFI.VELOCITY]] = 1
            else:
                dm = mask[ci[common.BODY_B]] - mask[ci[common.BODY_A]]
            cols = np.flatnonzero(dm)
            off = put([x for col in cols
                       for x in record(L.COLUMN, column=col, sign=int(dm[col]))])
            touched = {int(block_of[col]) for col in cols}
            for blk_ in list(touched):      # the closures' map couples their blocks
                touched |= closure_group.get(blk_, set())
            touched = sorted(touched)
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
                      max_sweeps=int(max_sweeps), num_reach=len(reach_idx),
                      closure_projection=int(bool(self.closures)),
                      friction_box=int(contact is not None and contact.friction == "box"))
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

    def block_impulses(self, co: np.ndarray, closure=None) -> list:
        """Per constraint block (plant order) the impulses of its active rows: the contact
        block's normals, then its (t1, t2) pairs; a limit block's active sides in order; a
        closure block's rows (from ``closure``, the step's
        :class:`~._ts_elimination.ClosureStep`)."""
        out = []
        npc = self.num_pair_slots
        for blk in self.blocks:
            if blk is self.contact:
                act = np.flatnonzero(co[:npc, _CO.ACTIVE])
                p = co[act][:, _CO.slice("impulse")]
                out.append(np.concatenate([p[:, 0], p[:, 1:].ravel()]))
            elif isinstance(blk, CLOSURE_BLOCKS):
                out.append(self.closure_block_slice(closure.impulses, blk).copy())
            else:
                a, b = self.one_dof_slots(blk)
                act = a + np.flatnonzero(co[a:b, _CO.ACTIVE])
                out.append(co[act, _CO.IMPULSE].copy())
        return out

    def closure_block_slice(self, stacked: np.ndarray, blk) -> np.ndarray:
        """The rows of closure block ``blk`` in the closures' stacked rows ``stacked``."""
        i = self.closures.index(blk)
        r0 = sum(self.closure_terms.rows[:i])
        return stacked[r0:r0 + self.closure_terms.rows[i]]

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
        last, out = self._rigid_last
        if values is last:                  # (a context's values stay one tuple object)
            return out
        memo = self._rigid_memo
        out = memo.get(values)
        if out is None:
            if len(memo) > 64:
                memo.clear()
            vals = values[len(self.limits) + len(self.frictions):]
            out = memo[values] = self._rigid_rows(vals)
            out.flags.writeable = False
        self._rigid_last = (values, out)
        return out

    def _rigid_rows(self, vals: tuple) -> np.ndarray:
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
        self.in_dyn = self.inp[sec["H"][0]:sec["S"][1]]   # H, c, P, S: adjacent sections
        if not (sec["H"][1] == sec["c"][0] and sec["c"][1] == sec["P"][0]
                and sec["P"][1] == sec["S"][0]):
            raise ImportError("the kernel's input sections H, c, P, S are not adjacent")
        self.in_w = view["warm"]
        self.in_cproj = view["cproj"].reshape(nv, nv)   # the closures' elimination
        self.in_cpv = view["cpv"]
        self.scalars = None                # the SCALARS last written into in_s
        self.work = np.zeros(step.n_work)
        self.iwork = np.zeros(step.n_iwork, dtype=np.int32)
        self.n_out = step.n_out
        self.step = step
        self.dt = step.dt.copy()           # this context's limit softening written in
        self.limit_values = step.limit_default
        self._n_one_dof = len(step.limits) + len(step.frictions)
        self.closure_values = self.limit_values[self._n_one_dof:]   # the closures' part, kept
        self.ptrs = (step.it.ctypes.data, self.dt.ctypes.data, self.inp.ctypes.data,
                     self.work.ctypes.data, self.iwork.ctypes.data)
        self.pool, self.pool_addr, self.pool_i = None, 0, self.POOL

    def set_limit_softening(self, values: tuple) -> None:
        """Write the context's joint-limit softening ``((erp, cfm), ...)`` into this
        scratch's table when it changed."""
        if values != self.limit_values:
            self.step.write_limit_softening(self.dt, values)
            self.limit_values = values
            self.closure_values = values[self._n_one_dof:]

    def out(self):
        """A fresh output array and its address."""
        if self.pool_i == self.POOL:
            self.pool = np.empty(self.POOL * self.n_out)
            self.pool_addr = self.pool.ctypes.data
            self.pool_i = 0
        i, n = self.pool_i, self.n_out
        self.pool_i += 1
        return self.pool[i * n:(i + 1) * n], self.pool_addr + 8 * i * n

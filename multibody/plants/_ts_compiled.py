"""The compiled step of :class:`~multibody.plants.TimeSteppingRigidBodySystem` (private).

When the plant's only constraint block is a :class:`~multibody.constraints.PointContactConstraint`
with the default friction cone, whose geometry pairs all have closed-form contact points
(halfspace-sphere, halfspace-box, sphere-sphere), and every joint integrates as ``q + h v``
or by the exponential map of a quaternion (ball, free), a step is two calls: the plant's
compiled dynamics/kinematics function ``(q, v) -> (H, c, P, S)`` and the C kernel of
:mod:`solvers.contact_step` (candidates, rows, Delassus blocks, block PGS with the friction
disc, integration). This module builds the kernel's fixed tables from the tree and the
contact block once, and turns the kernel's output into a :class:`StepSolution`.

Tables (``it``, int32; offsets are absolute indices into ``it``):

* header (``HEADER_INTS``): nq, nv, bodies, candidates, blocks, joints, free joints,
  max sweeps, reach bodies, then the offsets of blocks, joints, free joints, candidates,
  reach bodies, ancestor lists; at 32.. the offsets into ``dt`` of the candidates' doubles,
  the reach radii and the damping ``h D``;
* blocks: (start, size) of the decoupled velocity blocks (subtrees hanging from the world);
* joints: (type 0 ``q + h v`` / 1 ball / 2 free, q_start, v_start, nq);
* free joints: (q_start, v_start);
* candidates: ``CANDIDATE_INTS`` each; a candidate's column list ``(column, sign)`` of
  ``mask[B] - mask[A]`` followed by the count and indices of the velocity blocks it touches;
* reach bodies and, per body, (offset, count) of its ancestor columns.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

import numpy as np

from solvers.contact_step import (CANDIDATE_DOUBLES, CANDIDATE_INTS, CANDIDATE_OUTPUTS,
                                  HEADER_INTS, NUM_SCALARS)

from ..constraints import (FRICTION_BOX, UNILATERAL, ConstraintRows, ContactResults,
                           PointContactConstraint, PointContactResult)
from ..geometry import Box, Halfspace, Mesh, Sphere
from ._time_stepping_solve import SolveReport
from .solutions import StepSolution

__all__ = ["CompiledContactStep", "unsupported_reason", "describe_block"]

PGS_TAG = "pgs"


def _joint_type(j) -> Optional[int]:
    if j.type == "free":
        return 2
    if j.type == "ball":
        return 1
    return 0 if j.nq == j.nv else None


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


def unsupported_reason(tree, constraints) -> Optional[str]:
    """Why the compiled step cannot run this plant (None when it can): names the constraint
    block, joint or geometry pair it does not cover."""
    contacts = [c for c in constraints if isinstance(c, PointContactConstraint)]
    others = [c for c in constraints if not isinstance(c, PointContactConstraint)]
    if others:
        return (", ".join(describe_block(c) for c in others) + ": the compiled step takes "
                "one PointContactConstraint block and no other constraint")
    if len(contacts) != 1:
        return ("the compiled step needs exactly one PointContactConstraint block, got "
                + (", ".join(describe_block(c) for c in contacts) or "none"))
    c = constraints[0]
    if c.friction != "cone":
        return f"contact '{c.name}' uses friction='{c.friction}' (the compiled step has the disc)"
    if c.max_geometry_margin > 0:
        return (f"contact '{c.name}' has per-geometry contact margins (MuJoCo's margin; the "
                "compiled step has one margin for every pair)")
    for j in tree.joints:
        if j.nq and _joint_type(j) is None:
            return f"joint '{j.name}' ({j.type}) has nq != nv"
    ok = {(Halfspace, Sphere), (Sphere, Halfspace), (Halfspace, Box), (Box, Halfspace),
          (Sphere, Sphere)}
    bad = [(ga, gb) for ga, gb in c.site_pairs if (type(ga.shape), type(gb.shape)) not in ok]
    if bad:
        ga, gb = bad[0]
        more = f" (and {len(bad) - 1} more pairs)" if len(bad) > 1 else ""
        return (f"geometry pair ('{ga.name}', '{gb.name}') is "
                f"{type(ga.shape).__name__}-{type(gb.shape).__name__} (no closed form in the "
                f"compiled step; contact '{c.name}'){more}")
    return None


class CompiledContactStep:
    """Tables and buffers of the compiled step for one plant (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    contact : PointContactConstraint
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

    def __init__(self, tree, contact, kernel, h: float, damping_h: np.ndarray, blocks: list,
                 mask: np.ndarray, max_sweeps: int) -> None:
        self.kernel = kernel
        self.contact = contact
        self.h = float(h)
        nq, nv, N = tree.nq, tree.nv, len(tree.bodies)
        self.nq, self.nv, self.N = nq, nv, N
        index = {b.name: b.index for b in tree.bodies}
        moving = mask.any(axis=1)
        cand_i, cand_d, extra, self.geoms = [], [], [], []
        for ga, gb in contact.site_pairs:
            ia, ib = index[ga.body], index[gb.body]
            if not (moving[ia] or moving[ib]):
                continue
            ta, tb = type(ga.shape), type(gb.shape)
            if ta is Sphere and tb is Sphere:
                d = np.zeros(CANDIDATE_DOUBLES)
                d[0:3], d[3:6] = ga.pose[:3, 3], gb.pose[:3, 3]
                d[9], d[10] = ga.shape.radius, gb.shape.radius
                cand_i.append([1, ia, ib, 0, 0, 0])
                cand_d.append(d)
                self.geoms.append((ga, gb))
                continue
            swap = ta is not Halfspace
            hs, other = (gb, ga) if swap else (ga, gb)
            ih, io = index[hs.body], index[other.body]
            if type(other.shape) is Sphere:
                points, radius = [other.pose[:3, 3]], other.shape.radius
            else:
                hx, hy, hz = other.shape.half
                points = [other.pose[:3, :3] @ np.array([sx * hx, sy * hy, sz * hz])
                          + other.pose[:3, 3]
                          for sx in (-1.0, 1.0) for sy in (-1.0, 1.0) for sz in (-1.0, 1.0)]
                radius = 0.0
            for p in points:
                d = np.zeros(CANDIDATE_DOUBLES)
                d[0:3], d[3:6], d[6:9], d[9] = p, hs.pose[:3, 3], hs.pose[:3, 2], radius
                cand_i.append([0, ia, ib, ih, io, int(swap)])
                cand_d.append(d)
                self.geoms.append((ga, gb))
        nc = len(cand_i)
        self.nc = nc
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
        it: list = [0] * HEADER_INTS

        def put(values) -> int:
            off = len(it)
            it.extend(int(x) for x in values)
            return off
        it[9] = put([x for a, b in blocks for x in (a, b - a)])
        it[10] = put([x for j in joints for x in (_joint_type(j), j.q_start, j.v_start, j.nq)])
        it[11] = put([x for j in frees for x in (j.q_start, j.v_start)])
        cand_off = len(it)
        it.extend([0] * (CANDIDATE_INTS * nc))
        it[12] = cand_off
        block_of = np.zeros(nv, int)
        for k, (a, b) in enumerate(blocks):
            block_of[a:b] = k
        for k, ci in enumerate(cand_i):
            dm = mask[ci[2]] - mask[ci[1]]
            cols = np.flatnonzero(dm)
            off = put([x for col in cols for x in (col, int(dm[col]))])
            touched = sorted({int(block_of[col]) for col in cols})
            put([len(touched)] + touched)
            it[cand_off + CANDIDATE_INTS * k: cand_off + CANDIDATE_INTS * (k + 1)] = \
                ci + [off, len(cols)]
        it[13] = put(reach_idx)
        anc_off = len(it)
        it.extend([0] * (2 * N))
        it[14] = anc_off
        for b in range(N):
            cols = np.flatnonzero(mask[b])
            it[anc_off + 2 * b] = put(cols)
            it[anc_off + 2 * b + 1] = len(cols)
        it[0:9] = [nq, nv, N, nc, len(blocks), len(joints), len(frees), int(max_sweeps),
                   len(reach_idx)]
        dt = np.concatenate([np.array(cand_d).ravel() if nc else np.zeros(0),
                             np.array([reach[i] for i in reach_idx]), damping_h])
        it[32], it[33], it[34] = 0, CANDIDATE_DOUBLES * nc, CANDIDATE_DOUBLES * nc + len(reach_idx)
        self.it = np.ascontiguousarray(it, dtype=np.int32)
        self.dt = np.ascontiguousarray(dt, dtype=float)
        self.n_out = nq + 3 * nv + 4 + 7 * nc + CANDIDATE_OUTPUTS * nc + 3 * nv * nc
        self.n_in = NUM_SCALARS + nq + 3 * nv + nv * nv + 12 * N + 6 * nv + 4 * nc
        self.n_work = nv * nv + 4 * nv + 3 * nc * nv + 9 * nc * nc + 18 * nc + 8
        self.n_iwork = 3 * nc + 1

    def scratch(self) -> "Scratch":
        """Buffers for one context (kept in its memory: the C call releases the GIL, so
        contexts stepped from several threads must not share them)."""
        return Scratch(self)

    # ------------------------------------------------------------------ the step
    def run(self, t: float, xd: np.ndarray, tau: np.ndarray, dyn: tuple, scalars: tuple,
            warm, scratch: "Scratch") -> Optional[StepSolution]:
        """One step (None: the kernel did not converge or the mass matrix is singular,
        ``scratch.failure`` says which: the caller takes the interpreted path). ``xd`` the discrete state ``[q; v; ...]``,
        ``dyn = (H, c, P, S)`` of the plant's compiled function; ``scalars``: margin, mu,
        erp, cfm, bias mode, tol, it_tol; ``warm``: the context's last ``(PGS_TAG, array)``
        or anything else (cold); ``scratch`` the context's :meth:`scratch`."""
        nq, nv, nc = self.nq, self.nv, self.nc
        sc = scratch
        sc.in_s[1:] = scalars
        sc.in_x[:] = xd[:nq + nv]
        sc.in_tau[:] = tau
        sc.in_H[:], sc.in_c[:], sc.in_P[:], sc.in_S[:] = dyn
        if isinstance(warm, tuple) and warm[0] == PGS_TAG and warm[1].shape[0] == 4 * nc:
            sc.in_w[:] = warm[1]
        else:
            sc.in_w[:] = 0.0
        out, out_p = sc.out()
        if self.kernel.compiled:
            it_p, dt_p, in_p, w_p, iw_p = sc.ptrs
            code = self.kernel.pointer_call((it_p, dt_p, in_p, out_p, w_p, iw_p))
        else:
            code = self.kernel.step(self.it, self.dt, sc.inp, out, sc.work, sc.iwork)
        if code != 0:
            sc.failure = "a velocity block of H + h D is not positive definite"
            return None
        k = nq + 3 * nv
        stat = out[k:k + 4].tolist()
        na, sweeps = divmod(int(stat[1]), 1000000)
        if stat[0] != 1.0:
            sc.failure = (f"the kernel did not converge: residual {stat[2]:.3g} > tolerance "
                          f"{scalars[5]:.3g} after {sweeps} PGS sweeps and the polish, "
                          f"{na} active contacts")
            return None
        k += 4
        if xd.shape[0] == nq + nv:         # no block states: the kernel's output is it
            xd_next = out[:nq + nv]
        else:
            xd_next = np.array(xd, dtype=float)
            xd_next[:nq + nv] = out[:nq + nv]
        report = SolveReport("solved", PGS_TAG, stat[2], 3 * na, sweeps)
        impulses = [out[k:k + 3 * na]]
        warm_next = (PGS_TAG, out[k + 3 * nc:k + 7 * nc])
        k += 7 * nc
        co = out[k:k + CANDIDATE_OUTPUTS * nc].reshape(nc, CANDIDATE_OUTPUTS)
        Jall = out[k + CANDIDATE_OUTPUTS * nc:].reshape(nc, 3, nv)
        rows = LazyRows(lambda: _rows(self, co, Jall, scalars))
        geoms, h = self.geoms, self.h

        def make_contacts() -> ContactResults:
            res = []
            for k in np.flatnonzero(co[:, 0]).tolist():
                ga, gb = geoms[k]
                o = co[k]
                t1, t2 = o[8:11], o[11:14]
                res.append(PointContactResult(ga.body, gb.body, ga.name, gb.name, o[2:5].copy(),
                                              o[5:8].copy(), float(o[1]), float(o[14] / h),
                                              (o[15] * t1 + o[16] * t2) / h,
                                              o[17] * t1 + o[18] * t2))
            return ContactResults(t, tuple(res))
        return StepSolution(t, xd_next[:nq], xd_next[nq:nq + nv], xd_next, tau,
                            out[nq + nv:nq + 2 * nv], impulses, rows, report,
                            out[nq + 2 * nv:nq + 3 * nv], warm_next, make_contacts)


class Scratch:
    """One context's buffers of the kernel: its input (scalars, ``[q; v]``, tau, H, c, P, S,
    warm start; fully overwritten every step), work arrays, and a pool of output arrays
    (a fresh slice per step, so that its address costs nothing)."""

    POOL = 16

    def __init__(self, step: CompiledContactStep) -> None:
        nq, nv, nc, N = step.nq, step.nv, step.nc, step.N
        sizes = [NUM_SCALARS, nq + nv, nv, nv * nv, nv, 12 * N, 6 * nv, 4 * nc]
        self.inp = np.zeros(sum(sizes))
        cuts = np.cumsum([0] + sizes)
        view = [self.inp[a:b] for a, b in zip(cuts[:-1], cuts[1:])]
        view[3] = view[3].reshape(nv, nv)
        view[6] = view[6].reshape(6, nv)
        self.in_s, self.in_x, self.in_tau, self.in_H, self.in_c, self.in_P, self.in_S, \
            self.in_w = view
        self.inp[0] = step.h
        self.work = np.zeros(step.n_work)
        self.iwork = np.zeros(step.n_iwork, dtype=np.int32)
        self.n_out = step.n_out
        self.ptrs = (step.it.ctypes.data, step.dt.ctypes.data, self.inp.ctypes.data,
                     self.work.ctypes.data, self.iwork.ctypes.data)
        self.pool, self.pool_addr, self.pool_i = None, 0, self.POOL
        self.failure: Optional[str] = None
        """Why the last step that returned None did (for the fallback warning)."""

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
    """The step's one :class:`ConstraintRows` (the contact block's), built on first access
    (most steps never look at them)."""

    def __init__(self, build) -> None:
        self._build = build
        self._rows: Optional[list] = None

    def _get(self) -> list:
        if self._rows is None:
            self._rows = [self._build()]
        return self._rows

    def __getitem__(self, i):
        return self._get()[i]

    def __len__(self) -> int:
        return 1


def _rows(step: CompiledContactStep, co: np.ndarray, Jall: np.ndarray, scalars: tuple):
    """The contact rows of the step as :class:`ConstraintRows` (normals first, then the two
    tangent rows of each contact; ``FRICTION_BOX`` kind with bounds ``-+mu``, which the
    kernel applies to the pair as the disc ``|p_t| <= mu p_n``)."""
    act = np.flatnonzero(co[:, 0])
    na, nv = act.shape[0], step.nv
    if na == 0:
        return ConstraintRows.empty(nv)
    J = np.concatenate([Jall[act, 0, :], Jall[act, 1:, :].reshape(2 * na, nv)])
    m = 3 * na
    kind = np.full(m, FRICTION_BOX, int)
    kind[:na] = UNILATERAL
    phi = np.zeros(m)
    phi[:na] = co[act, 1]
    normal = np.full(m, -1, int)
    normal[na:] = np.repeat(np.arange(na), 2)
    info = {"point": co[act, 2:5], "normal": co[act, 5:8], "distance": co[act, 1],
            "t1": co[act, 8:11], "t2": co[act, 11:14],
            "geometries": [step.geoms[k] for k in act.tolist()]}
    _, mu, erp, cfm, mode = scalars[:5]
    d = co[act, 1]
    bias = np.zeros(m)
    bias[:na] = np.where((d > 0) | (mode == 1.0), d, erp * d) / step.h
    lo = np.full(m, -mu)
    lo[:na] = 0.0
    hi = np.full(m, mu)
    hi[:na] = np.inf
    return ConstraintRows(J, bias, np.full(m, cfm), kind, lo, hi, normal, phi, info)

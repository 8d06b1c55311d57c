"""Public algorithm methods of :class:`~multibody.tree.RigidBodyTree`.

Each method traces its algorithm (:mod:`multibody.tree.kinematics`, :mod:`multibody.tree.dynamics`)
once per tree into a CasADi Function (``multibody.tree._functions``). Numeric arguments (numpy
arrays, lists, numbers) give numpy results (1-D for vectors, 2-D for matrices, float for
scalars); any CasADi ``SX``/``MX`` argument gives a CasADi expression.

Batched calls: numeric arguments with a leading batch axis (``q`` of shape ``(N, nq)``,
``v``/``vdot``/``tau`` of shape ``(N, nv)``) evaluate the same function on N states at once
(CasADi ``map`` over the compiled code, optionally split over threads; see
:mod:`multibody.tree._functions`) and give ``(N, n)`` vectors, ``(N, rows, cols)`` matrices
and ``(N,)`` scalars, equal to a loop of single calls. A 1-D argument in a batched call is
shared by all N rows. For a tree with ``nq = 1``, ``q`` of shape ``(N, 1)`` is a batch while
``(1,)`` is a single call; an ``(n, 1)`` column with ``n > 1`` stays a single call.
"""
from __future__ import annotations

import os
from typing import Any

import casadi as ca
import numpy as np

from solvers import ops

from . import dynamics as dyn
from . import kinematics as kin
from ._functions import BATCH_THREAD_MIN, BATCH_THREADS, FunctionCache
from ..errors import InputSizeError

__all__ = ["AlgorithmsMixin"]

_ND = np.ndarray
_F64 = np.dtype(np.float64)
_DIM_NAME = {"q": "nq", "q0": "nq", "q1": "nq", "v": "nv", "vdot": "nv", "tau": "nv"}


class AlgorithmsMixin:
    """Kinematics and dynamics methods (mixed into ``RigidBodyTree``).

    Attributes
    ----------
    batch_threads : int
        Threads a batched call of at least ``batch_thread_min`` states is split over
        (CasADi ``map(N, "thread", batch_threads)``); default 1 (serial), see
        ``benchmarks/bench_batched.py``.
    batch_thread_min : int
        Smallest batch that uses threads (default 512: starting threads costs tens of
        microseconds, see ``benchmarks/bench_batched.py``).
    """

    batch_threads: int = BATCH_THREADS
    batch_thread_min: int = BATCH_THREAD_MIN

    # ------------------------------------------------------------------ machinery
    def _fcache(self) -> FunctionCache:
        self.finalize()
        fc = self._functions
        if fc is None:
            self._inertias = [b.spatial_inertia() for b in self._body_order]
            fc = self._functions = FunctionCache(self, self.backend, self.compile_after)
            self._fentries = fc.entries
            if self._nv == 1:
                self._matrix = self._matrix_one_column
        return fc

    def _sym(self, name: str):
        n = {"q": self._nq, "q0": self._nq, "q1": self._nq, "v": self._nv,
             "vdot": self._nv, "tau": self._nv, "point": 3, "dt": 1,
             "wrenches": 6 * (len(self._body_order) - 1)}[name]
        return ca.SX.sym(name, n)

    def _expected(self, name: str, size: int) -> str:
        if name in _DIM_NAME:
            return f"tree '{self.name}' has {_DIM_NAME[name]} = {size}"
        return f"tree '{self.name}' expects size {size}"

    def _call(self, key: Any, build, names: tuple, *args: Any):
        # Fast path: numpy arguments go straight to the numeric evaluator, which checks
        # types and sizes itself; any failure (wrong size, symbolic or odd input) is
        # retried through the checked path below, which raises the descriptive errors.
        # (NaN inside a numpy array is not looked for here: it propagates to the result;
        # lists and other inputs take the checked path, which refuses NaN.)
        if self._functions is not None and type(args[0]) is _ND and args[0].ndim == 1:
            e = self._fentries.get(key)
            if e is not None:
                try:
                    return e.numeric(*args)
                except Exception:
                    pass
        return self._call_checked(key, build, names, args)

    def _call_checked(self, key: Any, build, names: tuple, args: tuple):
        e = self._fcache().get(key, build)
        for a, shape in zip(args, e.shapes):
            if type(a) is not _ND or a.shape != shape or a.dtype is not _F64:
                break
        else:
            return e.numeric(*args)
        sizes = e.sizes
        if any(type(a) is _ND and a.ndim >= 2 for a in args) and \
                not any(ops.is_symbolic(a) for a in args):
            batch = self._batch_args(args, sizes, names)
            if batch is not None:
                arrs, n_batch = batch
                if n_batch == 1:  # one state: the single call is cheaper than a map
                    single = e.numeric(*(a[0] for a in arrs))
                    if isinstance(single, tuple):
                        return tuple(np.asarray(o)[None] for o in single)
                    return np.asarray(single)[None]
                threads = self.batch_threads if n_batch >= self.batch_thread_min else 1
                outs = self._fcache().batched(e)(arrs, n_batch, threads)
                return outs[0] if len(outs) == 1 else tuple(outs)
        if any(ops.is_symbolic(a) for a in args):
            cargs = []
            for a, n, nm in zip(args, sizes, names):
                c = a if isinstance(a, (ca.SX, ca.MX)) else ops.vector(a)
                if not isinstance(c, (ca.SX, ca.MX)):
                    c = ca.DM(np.asarray(c, dtype=float).reshape(-1, 1))
                if c.numel() != n:
                    raise InputSizeError(f"{nm} has size {c.numel()} but "
                                         f"{self._expected(nm, n)}")
                if c.shape[1] != 1:
                    c = ca.reshape(c, n, 1)
                cargs.append(c)
            return e.fun(*cargs)
        arrs = []
        for a, n, nm in zip(args, sizes, names):
            try:
                arr = np.asarray(a, dtype=float).ravel()
            except (TypeError, ValueError):
                raise TypeError(f"{nm} must be numeric or a CasADi SX/MX value, got "
                                f"{type(a).__name__}") from None
            if arr.size != n:
                raise InputSizeError(f"{nm} has size {arr.size} but {self._expected(nm, n)}")
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{nm} passed to tree '{self.name}' contains NaN or inf")
            arrs.append(arr)
        return e.numeric(*arrs)

    def _batch_args(self, args: tuple, sizes: tuple, names: tuple):
        """``(arrays, N)`` for a batched call, or None when no argument has a leading batch
        axis. An argument of shape ``(N, n)`` is batched; a 1-D one (``(n,)``) is shared by
        the whole batch. A ``(n, 1)`` column for ``n > 1`` is not a batch (single call)."""
        n_batch, culprit = None, None
        for a, n, nm in zip(args, sizes, names):
            if type(a) is _ND and a.ndim >= 2:
                if a.ndim == 2 and a.shape[1] == 1 and n != 1:
                    continue  # a column vector: the single-call path takes it
                if a.ndim != 2 or a.shape[1] != n:
                    raise InputSizeError(
                        f"{nm} has shape {a.shape} but a batched call of tree '{self.name}' "
                        f"expects (N, {n}) ({self._expected(nm, n)})")
                if n_batch is None:
                    n_batch, culprit = a.shape[0], nm
                elif a.shape[0] != n_batch:
                    raise InputSizeError(
                        f"batched call of tree '{self.name}': {nm} has {a.shape[0]} rows but "
                        f"{culprit} has {n_batch} (every batched argument needs the same N)")
        if n_batch is None:
            return None
        if n_batch == 0:
            raise InputSizeError(f"batched call of tree '{self.name}': {culprit} has no rows "
                                 "(N must be at least 1)")
        arrs = []
        for a, n, nm in zip(args, sizes, names):
            try:
                arr = np.asarray(a, dtype=float)
            except (TypeError, ValueError):
                raise TypeError(f"{nm} must be numeric, got {type(a).__name__}") from None
            if arr.ndim != 2 or arr.shape[1] != n or (n == 1 and arr.shape[0] != n_batch):
                flat = arr.ravel()
                if flat.size != n:
                    raise InputSizeError(
                        f"{nm} has shape {arr.shape} but a batched call of tree "
                        f"'{self.name}' expects ({n_batch}, {n}) or ({n},) "
                        f"({self._expected(nm, n)})")
                arr = np.broadcast_to(flat, (n_batch, n))
            arr = np.ascontiguousarray(arr)
            if not np.isfinite(arr).all():
                row = int(np.nonzero(~np.isfinite(arr).all(axis=1))[0][0])
                raise ValueError(f"{nm} passed to tree '{self.name}' contains NaN or inf "
                                 f"(batch row {row})")
            arrs.append(arr)
        return arrs, n_batch

    def _matrix(self, out, rows: int):
        """A numeric matrix result as 2-D ``(rows, nv)`` also when ``nv == 1`` (the compiled
        call returns one-column outputs as vectors), ``(N, rows, nv)`` for a batched call
        (whose one-column outputs come as ``(N, rows)``); symbolic results pass through."""
        if isinstance(out, np.ndarray) and out.ndim == 1:
            return out.reshape(rows, -1)
        return out

    def _matrix_one_column(self, out, rows: int):
        """:meth:`_matrix` of a tree with ``nv == 1``, whose batched matrix results come
        back as ``(N, rows)`` (installed per tree by :meth:`_fcache`, so that trees with
        ``nv > 1`` keep the shorter single-call path)."""
        if isinstance(out, np.ndarray):
            if out.ndim == 1:
                return out.reshape(rows, -1)
            if out.ndim == 2:
                return out.reshape(out.shape[0], rows, 1)
        return out

    def _scalar(self, out):
        if isinstance(out, np.ndarray):
            return out[:, 0] if out.ndim == 2 else float(out.ravel()[0])
        return out

    def _frame_names(self, *names: Any) -> None:
        """Validate frame arguments once, when a function is built (FrameError names the
        tree and the frame)."""
        for name in names:
            if not isinstance(name, str):
                raise TypeError(f"tree '{self.name}': frame arguments are body or frame names "
                                f"(str), got {type(name).__name__}")
            self.get_frame(name)

    def casadi_function(self, name: str, *frame_args: str) -> ca.Function:
        """The ``casadi.Function`` behind a method, e.g. ``tree.casadi_function(
        "forward_dynamics")`` (inputs q, v, tau) or ``("jacobian", body, expressed_in)``."""
        key = name if not frame_args else (name,) + tuple(frame_args)
        fc = self._fcache()
        if key not in fc.entries:
            q = self.neutral_configuration()
            z = np.zeros(self._nv)
            calls = {"forward_dynamics": lambda: self.forward_dynamics(q, z, z),
                     "inverse_dynamics": lambda: self.inverse_dynamics(q, z, z),
                     "mass_matrix": lambda: self.mass_matrix(q),
                     "bias_forces": lambda: self.bias_forces(q, z),
                     "gravity_forces": lambda: self.gravity_forces(q),
                     "qdot": lambda: self.qdot(q, z),
                     "coriolis_matrix": lambda: self.coriolis_matrix(q, z)}
            if name not in calls:
                raise KeyError(f"tree '{self.name}': no prebuilt function {key!r}; call the "
                               f"method once first (built: {sorted(map(str, fc.entries))})")
            calls[name]()
        return fc.entries[key].fun

    def compile(self, names: Any = None, flags: Any = None, wait: bool = True) -> None:
        """Compile the built numeric functions (all, or those whose key or method name is in
        ``names``) to C now, several at once; ``flags``: e.g. ``("-O1",)`` (default: by code
        length); ``wait=False``: return once quick libraries serve (module doc of
        :mod:`multibody.tree._functions`). Nothing for ``backend="casadi"``."""
        from concurrent.futures import ThreadPoolExecutor
        todo = [e.evaluator for key, e in self._fcache().entries.items()
                if names is None or key in names or (isinstance(key, tuple) and key[0] in names)]
        with ThreadPoolExecutor(max_workers=max(1, min(len(todo), os.cpu_count() or 1))) as pool:
            for f in [pool.submit(ev.compile, flags, wait) for ev in todo]:
                f.result()

    # ------------------------------------------------------------------ kinematics
    def body_pose(self, body: str, q: Any):
        """World pose (4 x 4) of ``body`` (or of any frame)."""
        return self.relative_transform("world", body, q)

    def relative_transform(self, frame_a: str, frame_b: str, q: Any):
        """Pose ``T_AB`` (4 x 4) of frame B in frame A (bodies or frames)."""
        a, b = frame_a, frame_b

        def build():
            self._frame_names(a, b)
            qs = self._sym("q")
            return [qs], ["q"], [kin.relative_transform(self, qs, a, b)], ["T"]
        return self._call(("relative_transform", a, b), build, ("q",), q)

    def frame_velocity(self, frame: str, q: Any, v: Any, relative_to: str = "world",
                       expressed_in: str = "world"):
        """``[w; v]`` (6,) of ``frame`` relative to ``relative_to`` in ``expressed_in`` axes:
        angular velocity of A relative to B and the velocity of A's origin observed in B
        (DART-style semantics, see :mod:`multibody.tree.kinematics`)."""
        f, r, x = frame, relative_to, expressed_in

        def build():
            self._frame_names(f, r, x)
            qs, vs = self._sym("q"), self._sym("v")
            return [qs, vs], ["q", "v"], [kin.frame_velocity(self, qs, vs, f, r, x)], ["V"]
        return self._call(("frame_velocity", f, r, x), build, ("q", "v"), q, v)

    def frame_acceleration(self, frame: str, q: Any, v: Any, vdot: Any,
                           relative_to: str = "world", expressed_in: str = "world"):
        """Time derivative, observed in ``relative_to``, of :meth:`frame_velocity` (6,),
        in ``expressed_in`` axes (classical accelerations; gravity not included)."""
        f, r, x = frame, relative_to, expressed_in

        def build():
            self._frame_names(f, r, x)
            qs, vs, a = self._sym("q"), self._sym("v"), self._sym("vdot")
            return ([qs, vs, a], ["q", "v", "vdot"],
                    [kin.frame_acceleration(self, qs, vs, a, f, r, x)], ["A"])
        return self._call(("frame_acceleration", f, r, x), build, ("q", "v", "vdot"),
                          q, v, vdot)

    def jacobian(self, body: str, q: Any, point: Any = None, expressed_in: str = "world"):
        """Jacobian (6 x nv), rows ``[angular; linear]``, of the point ``point`` (given in the
        body/frame coordinates; default its origin) on ``body`` (a body or frame name).

        ``J v = [w; v_P]``: angular velocity of the body and velocity of the point, both in
        the axes of ``expressed_in``. ``"world"`` (default) is Pinocchio's
        LOCAL_WORLD_ALIGNED; passing the body's own name gives LOCAL.
        """
        f, x = body, expressed_in

        def build():
            self._frame_names(f, x)
            qs, ps = self._sym("q"), self._sym("point")
            return [qs, ps], ["q", "point"], [kin.point_jacobian(self, qs, f, ps, x)], ["J"]
        out = self._call(("jacobian", f, x), build, ("q", "point"), q,
                          np.zeros(3) if point is None else point)
        return self._matrix(out, 6)

    def jacobian_dot_times_v(self, body: str, q: Any, v: Any, point: Any = None):
        """``Jdot v`` (6,) of the world-aligned point Jacobian: ``[dw/dt; a_P]`` in world
        axes at ``vdot = 0`` (angular acceleration and classical acceleration of the point)."""
        f = body

        def build():
            self._frame_names(f)
            qs, vs, ps = self._sym("q"), self._sym("v"), self._sym("point")
            zero = np.zeros(self._nv)
            return ([qs, vs, ps], ["q", "v", "point"],
                    [kin.point_acceleration(self, qs, vs, zero, f, ps)], ["Jdot_v"])
        return self._call(("jacobian_dot_times_v", f), build, ("q", "v", "point"), q, v,
                          np.zeros(3) if point is None else point)

    def center_of_mass(self, q: Any):
        """World position (3,) of the center of mass."""
        def build():
            qs = self._sym("q")
            return [qs], ["q"], [kin.center_of_mass(self, qs)], ["com"]
        return self._call("center_of_mass", build, ("q",), q)

    def center_of_mass_jacobian(self, q: Any):
        """``J_com`` (3 x nv) with ``d com/dt = J_com v`` (world axes)."""
        def build():
            qs = self._sym("q")
            A = dyn.centroidal_momentum_matrix(self, qs)
            return [qs], ["q"], [A[3:6, :] / self.total_mass()], ["J_com"]
        out = self._call("center_of_mass_jacobian", build, ("q",), q)
        return self._matrix(out, 3)

    def momentum_matrix(self, q: Any):
        """Centroidal momentum matrix (6 x nv): ``[k_G; l] = A_G v`` (angular momentum about
        the COM, linear momentum; world axes). Compare ``pinocchio.computeCentroidalMap``
        (rows swapped)."""
        def build():
            qs = self._sym("q")
            return [qs], ["q"], [dyn.centroidal_momentum_matrix(self, qs)], ["A_G"]
        out = self._call("momentum_matrix", build, ("q",), q)
        return self._matrix(out, 6)

    def kinetic_energy(self, q: Any, v: Any):
        """``1/2 v^T H v`` (float, or a CasADi scalar)."""
        def build():
            qs, vs = self._sym("q"), self._sym("v")
            return [qs, vs], ["q", "v"], [dyn.kinetic_energy(self, qs, vs)], ["T"]
        return self._scalar(self._call("kinetic_energy", build, ("q", "v"), q, v))

    def potential_energy(self, q: Any):
        """Gravitational potential energy ``-sum m g . c`` (float or CasADi scalar)."""
        def build():
            qs = self._sym("q")
            return [qs], ["q"], [ca.SX(dyn.potential_energy(self, qs))], ["U"]
        return self._scalar(self._call("potential_energy", build, ("q",), q))

    # ------------------------------------------------------------------ dynamics
    def _wrench_vector(self, external_wrenches: dict):
        n = len(self._body_order) - 1
        parts: list = [np.zeros(6)] * n
        for name, w in external_wrenches.items():
            b = self.get_body(name)
            if b.index == 0:
                raise ValueError(f"tree '{self.name}': an external wrench on 'world' has no "
                                 "effect; apply it to a moving body")
            wv = w if isinstance(w, (ca.SX, ca.MX)) else np.asarray(w, dtype=float).ravel()
            if ops.numel(wv) != 6:
                raise InputSizeError(f"external wrench on body '{name}' has size "
                                     f"{ops.numel(wv)}, expected 6 ([torque; force])")
            parts[b.index - 1] = wv
        return ops.vertcat(*parts)

    def _wrench_list(self, F):
        n = len(self._body_order)
        return [None] + [F[6 * (i - 1):6 * i] for i in range(1, n)]

    def inverse_dynamics(self, q: Any, v: Any, vdot: Any,
                         external_wrenches: dict | None = None):
        """Inverse dynamics by the recursive Newton-Euler algorithm.

        ``tau = H(q) vdot + C(q, v) - sum_b J_b(q)^T w_b`` (Featherstone 2008, table 5.1),
        gravity included; joint damping/springs/friction are not (see
        :meth:`joint_passive_forces`).

        Parameters
        ----------
        q : (nq,) or (N, nq) array_like, or CasADi SX/MX
            Configuration (``(N, nq)``: a batch of N configurations).
        v, vdot : (nv,) or (N, nv) array_like, or CasADi SX/MX
            Velocity and acceleration.
        external_wrenches : dict, optional
            ``{body name: (6,) [torque; force]}``, world-aligned and applied at the body
            origin; ``J_b`` is then :meth:`jacobian` of the body origin (world axes).

        Returns
        -------
        tau : (nv,) ndarray ((N, nv) for a batch), or a CasADi column for symbolic input
        """
        if external_wrenches:
            self._fcache()
            F = self._wrench_vector(external_wrenches)

            def build_ext():
                qs, vs, a, Fs = (self._sym("q"), self._sym("v"), self._sym("vdot"),
                                 self._sym("wrenches"))
                return ([qs, vs, a, Fs], ["q", "v", "vdot", "wrenches"],
                        [dyn.inverse_dynamics(self, qs, vs, a, self._wrench_list(Fs))], ["tau"])
            return self._call("inverse_dynamics_ext", build_ext,
                              ("q", "v", "vdot", "wrenches"), q, v, vdot, F)

        def build():
            qs, vs, a = self._sym("q"), self._sym("v"), self._sym("vdot")
            return ([qs, vs, a], ["q", "v", "vdot"], [dyn.inverse_dynamics(self, qs, vs, a)],
                    ["tau"])
        return self._call("inverse_dynamics", build, ("q", "v", "vdot"), q, v, vdot)

    def mass_matrix(self, q: Any):
        """Joint-space inertia matrix by the composite-rigid-body algorithm.

        Parameters
        ----------
        q : (nq,) or (N, nq) array_like, or CasADi SX/MX

        Returns
        -------
        H : (nv, nv) ndarray (symmetric positive definite; (N, nv, nv) for a batch), or a
            CasADi matrix
            ``H_ki = S_k^T Ic_i S_i`` in world coordinates (Featherstone 2008, table 6.2).
        """
        if self._functions is not None and type(q) is _ND and q.ndim == 1 and self._nv > 1:
            e = self._fentries.get("mass_matrix")  # fast path (as in _call), no closure
            if e is not None:
                try:
                    return e.numeric(q)
                except Exception:
                    pass

        def build():
            qs = self._sym("q")
            return [qs], ["q"], [dyn.mass_matrix(self, qs)], ["H"]
        return self._matrix(self._call("mass_matrix", build, ("q",), q), self.nv)

    def bias_forces(self, q: Any, v: Any):
        """``C(q, v)`` (nv,): Coriolis, centrifugal and gravity terms (RNEA with vdot = 0)."""
        def build():
            qs, vs = self._sym("q"), self._sym("v")
            return ([qs, vs], ["q", "v"],
                    [dyn.inverse_dynamics(self, qs, vs, np.zeros(self._nv))], ["C"])
        return self._call("bias_forces", build, ("q", "v"), q, v)

    def joint_wrench(self, joint: str, q: Any, v: Any, vdot: Any):
        """``[torque; force]`` (6,) joint ``joint`` transmits to its child's subtree, in the
        child frame about its origin (:func:`multibody.tree.dynamics.joint_wrench`): what a
        six-axis force/torque sensor in the joint reads."""
        self.get_joint(joint)

        def build():
            qs, vs, accs = self._sym("q"), self._sym("v"), self._sym("vdot")
            return ([qs, vs, accs], ["q", "v", "vdot"],
                    [ca.SX(dyn.joint_wrench(self, joint, qs, vs, accs))], ["wrench"])
        return self._call(("joint_wrench", joint), build, ("q", "v", "vdot"), q, v, vdot)

    def gravity_forces(self, q: Any):
        """``g(q)`` (nv,): generalized gravity force (RNEA with v = vdot = 0); the torque
        needed to hold still is ``gravity_forces(q)``."""
        def build():
            qs = self._sym("q")
            z = np.zeros(self._nv)
            return [qs], ["q"], [dyn.inverse_dynamics(self, qs, z, z)], ["g"]
        return self._call("gravity_forces", build, ("q",), q)

    def coriolis_matrix(self, q: Any, v: Any):
        """Coriolis matrix ``C(q, v)`` (nv x nv) with ``C v = bias - gravity`` and
        ``dH/dt - 2 C`` skew-symmetric: ``C = sum_b J_b^T (I_b dJ_b/dt + B_b J_b)``, body
        coordinates, ``B = 1/2 (V x* I + I V x + (I V) xbar)`` (Echeandia & Wensing 2021;
        ``dJ_b/dt`` by forward-mode AD along ``qdot = N(q) v``)."""
        def build():
            qs, vs = self._sym("q"), self._sym("v")
            return [qs, vs], ["q", "v"], [dyn.coriolis_matrix(self, qs, vs)], ["C"]
        out = self._call("coriolis_matrix", build, ("q", "v"), q, v)
        return self._matrix(out, self.nv)

    def forward_dynamics(self, q: Any, v: Any, tau: Any,
                         external_wrenches: dict | None = None):
        """Forward dynamics by the articulated-body algorithm.

        Solves ``H(q) vdot + C(q, v) = tau + sum_b J_b^T w_b`` for ``vdot`` in O(n)
        (Featherstone 2008, table 7.1, eq. 7.39-7.48).

        Parameters
        ----------
        q : (nq,) or (N, nq) array_like, or CasADi SX/MX
            Configuration (unit quaternions for ball/free joints).
        v, tau : (nv,) or (N, nv) array_like, or CasADi SX/MX
            Velocity and generalized force.
        external_wrenches : dict, optional
            As in :meth:`inverse_dynamics`.

        Returns
        -------
        vdot : (nv,) ndarray ((N, nv) for a batch), or a CasADi column for symbolic input

        Raises
        ------
        SingularMassMatrixError
            (numeric input) The tree has joints that move no mass or inertia, so ``H`` is
            singular (e.g. a prismatic joint to a link of zero mass and inertia).
        """
        self._refuse_singular(q, v, tau)
        if external_wrenches:
            self._fcache()
            F = self._wrench_vector(external_wrenches)

            def build_ext():
                qs, vs, t, Fs = (self._sym("q"), self._sym("v"), self._sym("tau"),
                                 self._sym("wrenches"))
                return ([qs, vs, t, Fs], ["q", "v", "tau", "wrenches"],
                        [dyn.forward_dynamics(self, qs, vs, t, self._wrench_list(Fs))],
                        ["vdot"])
            return self._call("forward_dynamics_ext", build_ext, ("q", "v", "tau", "wrenches"),
                              q, v, tau, F)

        def build():
            qs, vs, t = self._sym("q"), self._sym("v"), self._sym("tau")
            return ([qs, vs, t], ["q", "v", "tau"], [dyn.forward_dynamics(self, qs, vs, t)],
                    ["vdot"])
        return self._call("forward_dynamics", build, ("q", "v", "tau"), q, v, tau)

    def qdot(self, q: Any, v: Any):
        """``qdot = N(q) v`` (nq,)."""
        def build():
            qs, vs = self._sym("q"), self._sym("v")
            return [qs, vs], ["q", "v"], [dyn.qdot(self, qs, vs)], ["qdot"]
        return self._call("qdot", build, ("q", "v"), q, v)

    def integrate(self, q: Any, v: Any, dt: Any):
        """Configuration (nq,) after moving with constant ``v`` for ``dt`` (exponential map
        on ball/free joints, so quaternions stay unit)."""
        def build():
            qs, vs, h = self._sym("q"), self._sym("v"), self._sym("dt")
            return [qs, vs, h], ["q", "v", "dt"], [dyn.integrate(self, qs, vs, h)], ["q_next"]
        return self._call("integrate", build, ("q", "v", "dt"), q, v,
                          np.array([float(dt)]) if isinstance(dt, (int, float)) else dt)

    def difference(self, q0: Any, q1: Any):
        """Velocity (nv,) with ``integrate(q0, v, 1) = q1`` (log map on ball/free joints)."""
        def build():
            a, b = self._sym("q0"), self._sym("q1")
            return [a, b], ["q0", "q1"], [dyn.difference(self, a, b)], ["v"]
        return self._call("difference", build, ("q0", "q1"), q0, q1)

    def joint_passive_forces(self, q: Any, v: Any):
        """``-damping * v - stiffness * (q - rest)`` (nv,), not included in the dynamics
        algorithms; add it to ``tau``. Coulomb friction is not included."""
        def build():
            qs, vs = self._sym("q"), self._sym("v")
            return [qs, vs], ["q", "v"], [ca.SX(dyn.joint_passive_forces(self, qs, vs))], ["tau"]
        return self._call("joint_passive_forces", build, ("q", "v"), q, v)

    def normalize_configuration(self, q: Any):
        """``q`` with unit quaternions (numeric or symbolic)."""
        self.finalize()
        parts = [j.normalize_configuration(q[j.q_start:j.q_start + j.nq])
                 for j in self._joint_order if j.nq]
        return ops.vertcat(*parts) if parts else np.zeros(0)

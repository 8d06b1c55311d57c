"""The forward pass's joint-space tracking controller (:class:`JointTrackingController`):
feedforward torques and an implicit PD on reference tables that are numeric parameters,
interpolated on CasADi symbols so a whole run compiles once
(:mod:`multibody.motion.forward_pass`)."""
from __future__ import annotations

import numpy as np

import casadi as ca

from solvers import ops
from systems import LeafSystem

__all__ = ["JointTrackingController"]


def _hat_interp(times: np.ndarray, table, t, n: int):
    """Linear interpolation of the rows of ``table`` (K, n) at ``t`` (clamped to the knots):
    ``np.interp`` on numbers, a sum of hat functions on CasADi symbols (``table`` may be
    symbolic, flattened row-major)."""
    if not ops.is_symbolic(t) and not ops.is_symbolic(table):
        tab = np.asarray(table, float).reshape(len(times), n)
        tc = min(max(float(t), times[0]), times[-1])
        k = int(np.clip(np.searchsorted(times, tc, side="right") - 1, 0, len(times) - 2))
        s = (tc - times[k]) / (times[k + 1] - times[k])
        return (1.0 - s) * tab[k] + s * tab[k + 1]
    tab = table if ops.is_symbolic(table) else ca.DM(np.asarray(table, float).ravel())
    tc = ca.fmin(ca.fmax(t, float(times[0])), float(times[-1]))
    out = ca.SX.zeros(n, 1)
    K = len(times)
    for k in range(K):
        lo = times[k - 1] if k > 0 else times[0] - 1.0
        hi = times[k + 1] if k < K - 1 else times[-1] + 1.0
        w = ca.fmax(0.0, ca.fmin((tc - lo) / (times[k] - lo), (hi - tc) / (hi - times[k])))
        out = out + w * tab[k * n:(k + 1) * n]
    return out


class JointTrackingController(LeafSystem):
    """Joint-space tracking with feedforward: ``command = u(t) - K_p q_j`` (module
    docstring); ``u`` (K frames x n joint coordinates, row-major) is the numeric parameter
    ``"u"``, interpolated linearly in time between ``times`` (held outside).

    Input ``state`` (nq + nv), output ``command`` (n). Symbolic-capable (CasADi), so a
    diagram with it runs in compiled code.

    Parameters
    ----------
    nx : int
        Size of the state input (nq + nv).
    q_indices : (n,) array_like of int
        The joint coordinates in the state.
    kp : (n,) array_like
        Stiffness per coordinate (N m / rad).
    times : (K,) array_like
        Frame times (s), increasing.
    u0 : (K, n) array_like
        The initial table.
    balance : casadi.Function, optional
        ``(q, v, ref) -> tau`` added to the command
        (:func:`~multibody.motion.balance.pelvis_balance_function`); ``ref`` is the
        numeric parameter ``"balance_ref"`` (rows per frame), interpolated like ``u``.
    balance_ref0 : (K, m) array_like, optional
        Its initial table.
    extra : casadi.Function, optional
        ``(q, v, ref) -> tau`` added to the command like ``balance`` (e.g.
        :class:`~multibody.motion.contact_allocation.WholeBodyBalance`), ``ref`` the numeric
        parameter ``"extra_ref"``.
    extra_ref0 : (K, m) array_like, optional
        Its initial table.
    limit : casadi.Function, optional
        ``(q, v, ref, command) -> command`` applied last to the whole command (e.g.
        :class:`~multibody.motion.support_limit.SupportLimit`: foot torques kept within the
        support); ``ref`` the numeric parameter ``"limit_ref"``, interpolated like ``u``.
    limit_ref0 : (K, m) array_like, optional
        Its initial table.
    feedback : casadi.Function, optional
        ``(t, q, v) -> tau`` added to the command before ``limit``, its tables inside (e.g.
        :func:`~multibody.motion.trajectory_lqr.lqr_feedback_function`: a time-varying
        LQR's gains, looked up by binary search rather than interpolated like ``u``).
    """

    def __init__(self, nx: int, q_indices, kp, times, u0, balance=None,
                 balance_ref0=None, name: str = "tracking", limit=None,
                 limit_ref0=None, extra=None, extra_ref0=None, feedback=None) -> None:
        super().__init__(name)
        self.q_indices = np.asarray(q_indices, int)
        self.kp = np.asarray(kp, float)
        self.times = np.asarray(times, float)
        self.n = len(self.q_indices)
        self.balance = balance
        self._state = self.declare_input_port("state", nx)
        self.declare_numeric_parameter("u", np.asarray(u0, float).ravel())
        if balance is not None:
            self.n_ref = balance.size1_in(2)
            self.declare_numeric_parameter("balance_ref", np.asarray(balance_ref0, float).ravel())
        self.limit, self.extra = limit, extra
        self.feedback = feedback
        self._nq = next((f.size1_in(0) for f in (balance, limit, extra) if f is not None),
                        feedback.size1_in(1) if feedback is not None else 0)
        if extra is not None:
            self.n_extra = extra.size1_in(2)
            self._extra_index = self.declare_numeric_parameter(
                "extra_ref", np.asarray(extra_ref0, float).ravel())
        if limit is not None:
            self.n_limit = limit.size1_in(2)
            self._limit_index = self.declare_numeric_parameter(
                "limit_ref", np.asarray(limit_ref0, float).ravel())
        self.declare_output_port("command", self.n, self._calc, feedthrough=True,
                                 prerequisites=("time", "parameters"))

    def _calc(self, context):
        x = self._state.eval(context)
        u = _hat_interp(self.times, context.get_parameter(0), context.time, self.n)
        symbolic = ops.is_symbolic(x) or ops.is_symbolic(u)
        if symbolic:
            xv = ops.vector(x)
            out = u - ca.DM(self.kp) * xv[self.q_indices.tolist()]
        else:
            xv = np.asarray(x, float)
            out = u - self.kp * xv[self.q_indices]
        nq = self._nq
        if self.balance is not None:
            ref = _hat_interp(self.times, context.get_parameter(1), context.time, self.n_ref)
            extra = self.balance(xv[:nq], xv[nq:], ref)
            out = out + extra if symbolic else out + np.asarray(extra, float).ravel()
        if self.extra is not None:
            ref = _hat_interp(self.times, context.get_parameter(self._extra_index),
                              context.time, self.n_extra)
            extra = self.extra(xv[:nq], xv[nq:], ref)
            out = out + extra if symbolic else out + np.asarray(extra, float).ravel()
        if self.feedback is not None:
            extra = self.feedback(context.time, xv[:nq], xv[nq:])
            out = out + extra if symbolic else out + np.asarray(extra, float).ravel()
        if self.limit is not None:
            ref = _hat_interp(self.times, context.get_parameter(self._limit_index),
                              context.time, self.n_limit)
            out = self.limit(xv[:nq], xv[nq:], ref, out)
            out = out if symbolic else np.asarray(out, float).ravel()
        return out

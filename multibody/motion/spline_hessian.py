"""Assembly of a sparse Hessian from per-frame blocks for a trajectory on a B-spline, and the
IPOPT callback that hands it over (used by :class:`~multibody.motion.ConsistentMotion` for
its Gauss-Newton Hessian).

The NLP variables are ``x = [vec(C); b_0; ...; b_{T-1}]``: the spline's control points ``C``
(K, n) stored row after row and frame-local variables ``b_k`` (nb each). Frame ``k`` sees
``z_k = [y_k; y'_k; y''_k; b_k]`` with ``y^{(d)}_k = sum_i B^{(d)}_i(t_k) c_i``, where only the
``k+1`` basis functions of degree ``k`` starting at ``i_0(k)`` are non-zero. A sum of
per-frame terms with local Hessians ``H_k`` (in ``z_k``) has the Hessian
``sum_k A_k^T H_k A_k`` (``A_k`` the constant map ``x -> z_k``); it is banded in the control
points (blocks ``(i, j)`` with ``|i - j| <= degree``), couples each frame's ``b_k`` only to its
``degree + 1`` control points, and is block-diagonal in the ``b_k``. :class:`SplineBlockHessian`
fixes that pattern (upper triangle, CasADi's compressed-column order) once and assembles the
values from the ``H_k`` with batched products.

References
----------
J. Nocedal, S. J. Wright, "Numerical Optimization", 2nd ed., Springer, 2006, section 10.3
(the Gauss-Newton Hessian ``J^T J``).
"""
from __future__ import annotations

from typing import Callable

import casadi as ca
import numpy as np

__all__ = ["SplineBlockHessian", "HessianCallback"]


class SplineBlockHessian:
    """Pattern and values of ``sum_k A_k^T H_k A_k`` (module docstring).

    Parameters
    ----------
    bases : sequence of three (T, K) ndarrays
        The basis values ``B^(0), B^(1), B^(2)`` at the frames.
    n : int
        Coordinates per control point.
    nb : int
        Frame-local variables per frame.
    degree : int
        Spline degree (``degree + 1`` basis functions per frame).

    Attributes
    ----------
    sparsity : casadi.Sparsity
        Upper triangle of the ``(K n + T nb)`` square Hessian.
    """

    def __init__(self, bases, n: int, nb: int, degree: int = 3) -> None:
        B = np.stack([np.asarray(b, float) for b in bases])            # (3, T, K)
        _, T, K = B.shape
        w = degree + 1
        support = np.abs(B).sum(axis=0) > 0
        first = np.where(support.any(axis=1), support.argmax(axis=1), 0)
        self.i0 = np.clip(first, 0, K - w)
        idx = self.i0[:, None] + np.arange(w)[None, :]                   # (T, w)
        self.Bk = np.take_along_axis(B, np.broadcast_to(idx, (3, T, w)), axis=2).transpose(1, 0, 2)
        self.T, self.K, self.n, self.nb, self.w = T, K, n, nb, w
        NC = K * n
        rows, cols = [], []
        a, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        up = a <= b
        self._cc = []                                    # (i, offset) blocks in order
        for i in range(K):
            for o in range(w):
                j = i + o
                if j >= K:
                    break
                m = up if o == 0 else np.ones_like(up)
                rows.append(i * n + a[m])
                cols.append(j * n + b[m])
                self._cc.append((i, o))
        ab, bb = np.meshgrid(np.arange(n), np.arange(nb), indexing="ij")
        for k in range(T):
            for s in range(w):
                rows.append((self.i0[k] + s) * n + ab.ravel())
                cols.append(NC + k * nb + bb.ravel())
        a2, b2 = np.meshgrid(np.arange(nb), np.arange(nb), indexing="ij")
        u2 = a2 <= b2
        for k in range(T):
            rows.append(NC + k * nb + a2[u2])
            cols.append(NC + k * nb + b2[u2])
        r, c = np.concatenate(rows), np.concatenate(cols)
        self._up, self._up2 = up, u2
        self.perm = np.lexsort((r, c))
        nx = NC + T * nb
        colind = np.searchsorted(c[self.perm], np.arange(nx + 1))
        self.sparsity = ca.Sparsity(nx, nx, colind.tolist(), r[self.perm].tolist())
        self._cc_i = np.array([i for i, _ in self._cc])
        self._cc_o = np.array([o for _, o in self._cc])

    def values(self, H: np.ndarray) -> np.ndarray:
        """Non-zeros (CasADi order) of the assembled Hessian from the local blocks ``H``
        (T, 3 n + nb, 3 n + nb)."""
        T, n, nb, w, Bk = self.T, self.n, self.nb, self.w, self.Bk
        Hyy = H[:, :3 * n, :3 * n].reshape(T, 3, n, 3, n)
        Hyb = H[:, :3 * n, 3 * n:].reshape(T, 3, n, nb)
        G = np.zeros((self.K, w, n, n))
        for s in range(w):
            for s2 in range(s, w):
                # block (i0 + s, i0 + s2) of the upper triangle; (s2, s) is its transpose
                blk = np.einsum("ka,kb,kanbm->knm", Bk[:, :, s], Bk[:, :, s2], Hyy)
                np.add.at(G, (self.i0 + s, s2 - s), blk)
        parts = [G[i, o][self._up] if o == 0 else G[i, o].ravel()
                 for i, o in zip(self._cc_i, self._cc_o)]
        cb = np.stack([np.einsum("ka,kanb->knb", Bk[:, :, s], Hyb) for s in range(w)], axis=1)
        parts.append(cb.reshape(-1))
        parts.append(H[:, 3 * n:, 3 * n:][:, self._up2].reshape(-1))
        return np.concatenate(parts)[self.perm]


class HessianCallback(ca.Callback):
    """An IPOPT ``hess_lag`` function ``(x, p, lam_f, lam_g) -> triu(H)`` evaluated in Python.

    Parameters
    ----------
    nx, ng, np_ : int
        Sizes of ``x``, ``g`` and ``p``.
    sparsity : casadi.Sparsity
        Upper-triangular pattern of the result.
    fun : callable
        ``fun(x, lam_f, lam_g) -> (nnz,) ndarray`` in the pattern's order.
    """

    def __init__(self, nx: int, ng: int, np_: int, sparsity: ca.Sparsity,
                 fun: Callable) -> None:
        ca.Callback.__init__(self)
        self.nx, self.ng, self.np_, self.sp, self.fun = nx, ng, np_, sparsity, fun
        self.construct("spline_block_hessian", {})

    def get_n_in(self):
        return 4

    def get_n_out(self):
        return 1

    def get_name_in(self, i):
        return ["x", "p", "lam_f", "lam_g"][i]

    def get_name_out(self, i):
        return "triu_hess_gamma_x_x"

    def get_sparsity_in(self, i):
        return [ca.Sparsity.dense(self.nx), ca.Sparsity.dense(self.np_),
                ca.Sparsity.scalar(), ca.Sparsity.dense(self.ng)][i]

    def get_sparsity_out(self, i):
        return self.sp

    def eval(self, arg):
        vals = self.fun(np.asarray(arg[0]).ravel(), float(arg[2]), np.asarray(arg[3]).ravel())
        return [ca.DM(self.sp, vals)]

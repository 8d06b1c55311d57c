"""Linear blocks: gains, integrators, linear and affine state-space systems, filters."""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..leaf_system import LeafSystem

__all__ = ["Gain", "MatrixGain", "Integrator", "LinearSystem", "AffineSystem",
           "FirstOrderLowPassFilter"]


_NDARRAY, _EMPTY = np.ndarray, np.empty


def _times(M: np.ndarray, v):
    """``M @ v``: ``ndarray.dot`` for a numpy vector (the same product, bit for bit, without
    the ``@`` operator's dispatch, about 0.4 us less per call on small systems), ``@`` for a
    CasADi column (symbolic evaluation)."""
    return M.dot(v) if type(v) is _NDARRAY else M @ v


# The most products (outputs x inputs) an output ``y = D u + y0`` computes on Python floats
# (written out, _small_gain_output); numpy's product is cheaper from about 12 on.
_SMALL_GAIN_PRODUCTS = 8

_GAIN_CODE: dict = {}   # (ny, nu, with offset) -> the code of the written-out output


def _small_gain_output(iu: int, D: np.ndarray, y0, general):
    """``calc(context)`` of an output ``y = D u + y0`` (no state term; ``y0`` None when it is
    zero) with at most ``_SMALL_GAIN_PRODUCTS`` entries in ``D``, for a numeric input: the
    input unpacked into Python floats and each row's sum written out in the order of the
    terms, ``d_i0 u_0 + d_i1 u_1 + ... + y0_i``, into a new float64 array. ``general`` (the
    vector form) serves a symbolic input.

    The same sums as ``D @ u + y0`` up to rounding: numpy's BLAS may fuse each product with
    its addition (OpenBLAS on Haswell and later does), which changes the last bit or two of
    about one sum in ten (random data); both are within
    ``gamma_(nu+1) (sum_j |d_ij u_j| + |y0_i|)`` of the exact value, with
    ``gamma_k = k eps / (1 - k eps)`` and ``eps = 2**-53`` (N. J. Higham, *Accuracy and Stability
    of Numerical Algorithms*, 2nd ed., SIAM, 2002, sec. 3.1).
    """
    ny, nu = D.shape
    key = (ny, nu, y0 is not None)
    code = _GAIN_CODE.get(key)
    if code is None:
        d = [[f"d{i}_{j}" for j in range(nu)] for i in range(ny)]
        rows = [" + ".join([f"{d[i][j]} * u{j}" for j in range(nu)]
                           + ([f"y0_{i}"] if y0 is not None else [])) for i in range(ny)]
        params = [name for row in d for name in row] + [f"y0_{i}" for i in range(ny)]
        lines = [f"def make(iu, ndarray, empty, general, {', '.join(params)}):",
                 "    def small_gain_output(context):",
                 "        u = context.eval_input(iu)",
                 "        if type(u) is not ndarray:",
                 "            return general(context)",
                 f"        {', '.join(f'u{j}' for j in range(nu))}, = u.tolist()",
                 f"        y = empty({ny})",
                 *[f"        y[{i}] = {row}" for i, row in enumerate(rows)],
                 "        return y",
                 "    return small_gain_output"]
        code = _GAIN_CODE[key] = compile("\n".join(lines), f"<gain output {ny}x{nu}>", "exec")
    scope: dict = {}
    exec(code, scope)   # noqa: S102 - our own generated source (above)
    offsets = [0.0] * ny if y0 is None else [float(v) for v in y0]
    return scope["make"](iu, _NDARRAY, _EMPTY, general, *D.ravel().tolist(), *offsets)


def _frozen(M: np.ndarray) -> np.ndarray:
    M = M.copy()
    M.flags.writeable = False
    return M


def _matrix(value, name, owner, shape=None) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        arr = arr.reshape(1, 1)
    if arr.ndim != 2:
        raise ValueError(f"{owner}: {name} must be a 2-D matrix, got shape {arr.shape}")
    if shape is not None and arr.size == 0:
        arr = np.zeros(shape)
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{owner}: {name} has shape {arr.shape}, expected {shape}")
    if not np.all(np.isfinite(arr)):
        i, j = (int(k) for k in np.argwhere(~np.isfinite(arr))[0])
        raise ValueError(f"{owner}: {name} must be finite; {name}[{i}, {j}] = {float(arr[i, j])}")
    return arr


class Gain(LeafSystem):
    """y = k * u (elementwise), input ``u`` and output ``y`` of ``size``.

    Parameters
    ----------
    k : float or array_like of shape (size,)
    size : int, optional
        Required when ``k`` is a scalar (default 1).
    """

    def __init__(self, k, size: Optional[int] = None, name: Optional[str] = None):
        super().__init__(name)
        k = np.atleast_1d(np.asarray(k, dtype=float)).ravel()
        n = size if size is not None else k.shape[0]
        if k.shape[0] not in (1, n):
            raise ValueError(f"Gain: k has size {k.shape[0]} but size is {n}")
        if not np.all(np.isfinite(k)):
            raise ValueError(f"Gain '{self.name}': k must be finite, got {k.tolist()}")
        self.k = k if k.shape[0] == n else np.full(n, k[0])
        u = self.declare_input_port("u", n)
        self.declare_output_port("y", n, lambda c: self.k * u.eval(c), feedthrough=True,
                                 prerequisites=())


class MatrixGain(LeafSystem):
    """y = D u for a matrix D of shape (ny, nu)."""

    def __init__(self, D, name: Optional[str] = None):
        super().__init__(name)
        self.D = _matrix(D, "D", "MatrixGain")
        u = self.declare_input_port("u", self.D.shape[1])
        self.declare_output_port("y", self.D.shape[0], lambda c: _times(self.D, u.eval(c)),
                                 feedthrough=True, prerequisites=())


class Integrator(LeafSystem):
    """xdot = u, y = x (vector of ``size``)."""

    def __init__(self, size: int = 1, initial_value=None, name: Optional[str] = None):
        super().__init__(name)
        self.declare_continuous_state(size, initial=initial_value)
        self._u = self.declare_input_port("u", size)
        self.declare_output_port("y", size, lambda c: c.continuous_state, feedthrough=False,
                                 prerequisites=["continuous_state"])

    def time_derivatives(self, context):
        return self._u.eval(context)

    def set_integral_value(self, context, value) -> None:
        """Set the integrator state in ``context``."""
        self.get_my_context_from_root(context).set_continuous_state(value)


class LinearSystem(LeafSystem):
    """A linear time-invariant system in state-space form.

    Continuous (``time_period == 0``): xdot = A x + B u, y = C x + D u.
    Discrete (``time_period > 0``): x[n+1] = A x[n] + B u[n], y[n] = C x[n] + D u[n],
    updated every ``time_period`` seconds. Ports ``u`` and ``y``, as in Drake: omitted or
    empty (zero-sized) matrices are zero matrices of the sizes the others give (a pure gain
    has only D), the input port ``u`` exists only when there are inputs (B or D has
    columns) and the output port ``y`` only when there are outputs (C or D has rows, or
    ``y0`` has entries).

    Attributes
    ----------
    A, B, C, D : ndarray
        Read-only copies of the matrices given (the system is fixed at construction; so
        are AffineSystem's ``f0`` and ``y0``).
    time_period : float
    """

    def __init__(self, A=None, B=None, C=None, D=None, time_period: float = 0.0,
                 name: Optional[str] = None):
        super().__init__(name)
        self._setup(A, B, C, D, None, None, time_period)

    def _setup(self, A, B, C, D, f0, y0, time_period):
        owner = type(self).__name__
        A, B, C, D = (None if M is None else _matrix(M, name, owner)
                      for M, name in ((A, "A"), (B, "B"), (C, "C"), (D, "D")))
        # Drake: empty matrices are zero matrices of the sizes the non-empty ones give.
        A, B, C, D = (None if M is None or M.size == 0 else M for M in (A, B, C, D))
        f0_size = np.atleast_1d(np.asarray(f0, float)).size if f0 is not None else 0
        y0_size = np.atleast_1d(np.asarray(y0, float)).size if y0 is not None else 0
        nx = (A.shape[0] if A is not None else B.shape[0] if B is not None
              else C.shape[1] if C is not None else f0_size)
        nu = B.shape[1] if B is not None else (D.shape[1] if D is not None else 0)
        ny = C.shape[0] if C is not None else D.shape[0] if D is not None else y0_size
        if A is not None and A.shape != (nx, nx):
            raise ValueError(f"{owner}: A must be square, got shape {A.shape}")
        A = np.zeros((nx, nx)) if A is None else A
        B = np.zeros((nx, nu)) if B is None else _matrix(B, "B", owner, (nx, nu))
        C = np.zeros((ny, nx)) if C is None else _matrix(C, "C", owner, (ny, nx))
        D = np.zeros((ny, nu)) if D is None else _matrix(D, "D", owner, (ny, nu))
        f0 = np.zeros(nx) if f0 is None else self._vector(f0, nx, "f0")
        y0 = np.zeros(ny) if y0 is None else self._vector(y0, ny, "y0")
        # Fixed at construction (the callbacks' shortcuts are decided from them): private
        # read-only copies, so a change in place raises instead of being half seen.
        self.A, self.B, self.C, self.D, self.f0, self.y0 = (_frozen(M) for M in (A, B, C, D, f0, y0))
        # The callbacks read these: attributes set later (``linearize`` records its operating
        # point's output as ``y0`` on a LinearSystem, whose output is in deviation variables)
        # do not leak into the output or the dynamics.
        self._f0_term, self._y0_term = self.f0, self.y0
        self.time_period = float(time_period)
        if self.time_period < 0:
            raise ValueError(f"{owner}: time_period must be >= 0, got {time_period}")
        # Like Drake's AffineSystem: an input port only when nu > 0, an output port only
        # when ny > 0.
        self._u = self.declare_input_port("u", nu) if nu else None
        self._iu = self._u.index if nu else None   # read by index (_small_gain_output)
        has_d = bool(np.any(D != 0))
        self._has_c, self._has_d = bool(C.size), has_d and nu > 0
        # zero offsets are not added (A x + 0 is A x, up to the sign of a zero entry)
        self._has_f0, self._has_y0 = bool(np.any(self.f0 != 0)), bool(np.any(self.y0 != 0))
        if self.time_period > 0:
            self.declare_discrete_state(nx)
            if nx:
                self.declare_periodic_discrete_update(self.time_period, 0.0, self._update)
        elif nx:
            self.declare_continuous_state(nx)
        if ny:
            # no state term and a small D (an LQR's u = y0 - K x): written out on floats
            small = not self._has_c and self._has_d and ny * nu <= _SMALL_GAIN_PRODUCTS
            calc = (_small_gain_output(self._iu, self.D, self.y0 if self._has_y0 else None,
                                       self._output) if small else self._output)
            self.declare_output_port("y", ny, calc, feedthrough=has_d and nu > 0)

    def _vector(self, v, n, name):
        v = np.atleast_1d(np.asarray(v, dtype=float)).ravel()
        if v.shape[0] != n:
            raise ValueError(f"{type(self).__name__}: {name} has size {v.shape[0]}, expected {n}")
        return v

    def _state(self, context):
        return context.discrete_state if self.time_period > 0 else context.continuous_state

    def _input(self, context):
        return self._u.eval(context) if self._u is not None else np.zeros(0)

    def _output(self, context):
        # y = C x + D u + y0, the terms that are not identically zero, in this order
        if not self._has_c:
            y = self._y0_term if not self._has_d else _times(self.D, self._u.eval(context))
            return y + self._y0_term if self._has_d and self._has_y0 else y
        y = _times(self.C, self._state(context))
        if self._has_y0:
            y = y + self._y0_term
        if self._has_d:
            y = y + _times(self.D, self._u.eval(context))
        return y

    def _step(self, x, context):
        """A x + f0 + B u (f0 and B u when they are not identically zero)."""
        xn = _times(self.A, x)
        if self._has_f0:
            xn = xn + self._f0_term
        if self._u is not None:
            xn = xn + _times(self.B, self._u.eval(context))
        return xn

    def time_derivatives(self, context):
        return self._step(context.continuous_state, context)

    def _update(self, context):
        return self._step(context.discrete_state, context)


class AffineSystem(LinearSystem):
    """xdot = A x + B u + f0, y = C x + D u + y0 (or the discrete analogue, as LinearSystem)."""

    def __init__(self, A=None, B=None, f0=None, C=None, D=None, y0=None,
                 time_period: float = 0.0, name: Optional[str] = None):
        LeafSystem.__init__(self, name)
        self._setup(A, B, C, D, f0, y0, time_period)


class FirstOrderLowPassFilter(LeafSystem):
    """xdot = (u - x) / tau, y = x: a first-order low-pass filter per element."""

    def __init__(self, time_constant, size: int = 1, name: Optional[str] = None):
        super().__init__(name)
        tau = np.atleast_1d(np.asarray(time_constant, dtype=float)).ravel()
        if tau.shape[0] == 1:
            tau = np.full(size, tau[0])
        if tau.shape[0] != size or np.any(tau <= 0) or not np.all(np.isfinite(tau)):
            raise ValueError(f"FirstOrderLowPassFilter: time_constant must be > 0 with size 1 or "
                             f"{size}, got {time_constant}")
        self.time_constant = tau
        self.declare_continuous_state(size)
        self._u = self.declare_input_port("u", size)
        self.declare_output_port("y", size, lambda c: c.continuous_state, feedthrough=False,
                                 prerequisites=["continuous_state"])

    def time_derivatives(self, context):
        return (self._u.eval(context) - context.continuous_state) / self.time_constant

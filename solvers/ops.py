"""Operations that work on numpy arrays and on CasADi ``SX``/``MX``/``DM`` alike.

Every model in dynablocks is written once, against these helpers plus plain
arithmetic, ``@`` and indexing, so that the same code evaluates numerically and
builds CasADi expressions (ARCHITECTURE.md, "The one rule").

Conventions
-----------
* A *vector* is a 1-D numpy array of shape ``(n,)`` or a CasADi column ``(n, 1)``.
* A function given any CasADi argument returns a CasADi value; given only numpy
  (or Python numbers) it returns numpy, except that the elementwise functions
  (``sin`` ... ``fabs``) give a Python ``float`` for a Python ``float`` (``math``'s result,
  the same value as numpy's up to the last bit of rounding; several times cheaper).
  Arithmetic on those floats follows Python's rules: ``1.0 / ops.sin(0.0)`` raises
  ``ZeroDivisionError`` (numpy would give ``inf`` with a warning); inside a block's callback
  that surfaces as a ``SystemCallbackError`` naming the block, never as a silent ``inf``.

Examples
--------
>>> import numpy as np, casadi as ca
>>> from solvers import ops
>>> ops.sin(np.array([0.0]))
array([0.])
>>> ops.is_symbolic(ops.sin(ca.SX.sym("x")))
True
"""
from __future__ import annotations

import math
import re
from typing import Any

import casadi as ca
import numpy as np

__all__ = [
    "CASADI_TYPES", "SYMBOLIC_TYPES", "is_casadi", "is_symbolic", "any_symbolic",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
    "exp", "log", "sqrt", "fabs", "floor", "sign", "fmin", "fmax", "clip", "if_else",
    "vertcat", "horzcat", "vector", "zeros", "eye", "dot", "cross", "norm_2",
    "solve", "inv", "transpose", "diag", "sum1", "sumsqr", "numel", "to_numpy",
    "function_name", "entries", "from_entries",
]

CASADI_TYPES = (ca.SX, ca.MX, ca.DM)
_SCALAR_TYPES = frozenset({float, int, np.float64, np.float32, np.int64})
SYMBOLIC_TYPES = (ca.SX, ca.MX)
_FLOAT64 = np.dtype(np.float64)
_NDARRAY, _ARRAY = np.ndarray, np.array


def is_casadi(x: Any) -> bool:
    """True when ``x`` is a CasADi matrix (``SX``, ``MX`` or ``DM``)."""
    return isinstance(x, CASADI_TYPES)


def is_symbolic(x: Any) -> bool:
    """True when ``x`` is a CasADi ``SX``/``MX`` value or a sequence holding one."""
    if type(x) is float:   # the numeric call (a time, a scalar): one test
        return False
    if isinstance(x, SYMBOLIC_TYPES):
        return True
    if isinstance(x, (list, tuple)):
        return any(is_symbolic(e) for e in x)
    if isinstance(x, np.ndarray) and x.dtype == object:
        return any(is_symbolic(e) for e in x.flat)
    return False


def any_symbolic(*args: Any) -> bool:
    """True when any argument is symbolic (see :func:`is_symbolic`)."""
    return any(is_symbolic(a) for a in args)


def _unary(np_fun, ca_fun, math_fun=None):
    # A plain Python float goes through ``math`` (a few times cheaper than a numpy ufunc on
    # a scalar; the same value up to the last bit of rounding) and stays a Python float;
    # where ``math`` refuses (a domain or range error, e.g. sin(inf), log(-1)) numpy's
    # answer (nan/inf, with numpy's warning) is returned as before. The float test comes
    # first and alone: it is the call a model's numeric evaluation makes.
    def general(x):
        if type(x) in _SCALAR_TYPES or type(x) is np.ndarray and x.dtype != object:
            return np_fun(x)
        if is_casadi(x) or is_symbolic(x):
            return ca_fun(_as_casadi(x))
        return np_fun(x)

    if math_fun is None:
        f = general
    else:
        def f(x):
            if type(x) is float:
                try:
                    return math_fun(x)
                except (ValueError, OverflowError):
                    return np_fun(x)
            return general(x)
    f.__name__ = np_fun.__name__
    f.__doc__ = f"Elementwise ``{np_fun.__name__}`` for numpy and CasADi values."
    return f


def _binary(np_fun, ca_fun, name):
    def f(a, b):
        if any_symbolic(a, b) or is_casadi(a) or is_casadi(b):
            return ca_fun(_as_casadi(a), _as_casadi(b))
        return np_fun(a, b)
    f.__name__ = name
    f.__doc__ = f"Elementwise ``{name}`` for numpy and CasADi values."
    return f


def _as_casadi(x: Any):
    """Convert ``x`` to a CasADi value (keeps SX/MX/DM, turns arrays into DM/SX)."""
    if is_casadi(x):
        return x
    if isinstance(x, (list, tuple)) or (isinstance(x, np.ndarray) and x.dtype == object):
        return vertcat(*list(np.asarray(x, dtype=object).ravel()))
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    return ca.DM(arr)


sin = _unary(np.sin, ca.sin, math.sin)
cos = _unary(np.cos, ca.cos, math.cos)
tan = _unary(np.tan, ca.tan, math.tan)
asin = _unary(np.arcsin, ca.asin, math.asin)
acos = _unary(np.arccos, ca.acos, math.acos)
atan = _unary(np.arctan, ca.atan, math.atan)
sinh = _unary(np.sinh, ca.sinh, math.sinh)
cosh = _unary(np.cosh, ca.cosh, math.cosh)
tanh = _unary(np.tanh, ca.tanh, math.tanh)
exp = _unary(np.exp, ca.exp, math.exp)
log = _unary(np.log, ca.log, math.log)
sqrt = _unary(np.sqrt, ca.sqrt, math.sqrt)
fabs = _unary(np.abs, ca.fabs, math.fabs)
floor = _unary(np.floor, ca.floor)
sign = _unary(np.sign, ca.sign)
atan2 = _binary(np.arctan2, ca.atan2, "atan2")
fmin = _binary(np.minimum, ca.fmin, "fmin")
fmax = _binary(np.maximum, ca.fmax, "fmax")


def clip(x, lo, hi):
    """Elementwise ``min(max(x, lo), hi)``; ``lo``/``hi`` may be scalars or vectors."""
    return fmin(fmax(x, lo), hi)


def if_else(cond, if_true, if_false):
    """``if_true`` where ``cond`` holds, else ``if_false`` (both branches evaluated)."""
    if any_symbolic(cond, if_true, if_false):
        return ca.if_else(_as_casadi(cond), _as_casadi(if_true), _as_casadi(if_false))
    return np.where(cond, if_true, if_false)


def vertcat(*parts: Any):
    """Stack scalars and vectors into one vector.

    Returns a 1-D numpy array of shape ``(sum n_i,)`` when every part is numeric,
    otherwise a CasADi column.
    """
    for p in parts:   # fast path: Python floats (a loop: cheaper than all() of a generator)
        if type(p) is not float:
            break
    else:
        if parts:
            return _ARRAY(parts)
    return _vertcat_general(parts)


def _vertcat_general(parts: tuple):
    if not parts:
        return np.zeros(0)
    for p in parts:   # numeric vectors only (a model's q and v, say): one concatenation
        if type(p) is not _NDARRAY or p.dtype is not _FLOAT64 or p.ndim != 1:
            break
    else:
        return np.concatenate(parts)
    if all(type(p) in _SCALAR_TYPES for p in parts):
        return np.array(parts, dtype=float)
    if any(is_symbolic(p) or isinstance(p, SYMBOLIC_TYPES) for p in parts):
        cols = []
        for p in parts:
            if isinstance(p, SYMBOLIC_TYPES):
                cols.append(p)
            elif isinstance(p, (list, tuple)) or (isinstance(p, np.ndarray) and p.dtype == object):
                cols.append(ca.vertcat(*[_as_casadi(e) if not isinstance(e, (int, float)) else e
                                         for e in np.asarray(p, dtype=object).ravel()]))
            elif is_casadi(p):
                cols.append(p)
            else:
                cols.append(ca.DM(np.atleast_1d(np.asarray(p, dtype=float)).reshape(-1, 1)))
        return ca.vertcat(*cols)
    return np.concatenate([np.atleast_1d(to_numpy(p)).ravel() for p in parts])


def entries(x: Any) -> list:
    """The entries of a vector as a list of scalars: Python floats for a numeric vector,
    CasADi scalars for a CasADi column.

    Lets a model unpack its state or parameters once (``q1, q2, v1, v2 = ops.entries(x)``)
    and then compute on Python floats, the cheapest numeric scalars, while the same code
    still traces into CasADi expressions.

    Parameters
    ----------
    x : ndarray of shape (n,), list, or CasADi column of shape (n, 1)

    Returns
    -------
    list of length n

    Examples
    --------
    >>> entries(np.array([1.0, 2.0]))
    [1.0, 2.0]
    """
    if type(x) is _NDARRAY and x.dtype is _FLOAT64 and x.ndim == 1:   # the numeric call
        return x.tolist()
    return _entries_general(x)


def _entries_general(x: Any) -> list:
    if type(x) is _NDARRAY:
        if x.dtype is _FLOAT64:
            return x.ravel().tolist()
        if x.dtype != object:
            return x.ravel().astype(float).tolist()
    if isinstance(x, CASADI_TYPES):
        if isinstance(x, ca.DM):
            return np.asarray(x.full(), dtype=float).ravel().tolist()
        return [x[i] for i in range(x.numel())]
    if isinstance(x, np.ndarray):
        return list(x.ravel())
    return list(x)


def from_entries(*entries: Any):
    """A vector from its entries: their tuple when every entry is a Python ``float``,
    otherwise ``vertcat(*entries)`` (a CasADi column for symbolic entries).

    The inverse of :func:`entries` for a block's result: a ``time_derivatives`` written on
    Python floats returns ``ops.from_entries(v1, v2, vdot1, vdot2)``, and on a numeric
    context the Simulator takes the floats as they are (no array made and unpacked again;
    see ``LeafSystem.time_derivatives``), while the same code still builds a CasADi column
    when traced.

    Parameters
    ----------
    *entries : float, CasADi scalar or vector
        The entries, in order (``n`` of them for a vector of size ``n``).

    Returns
    -------
    tuple of n float, or what :func:`vertcat` returns
        A tuple of floats when every entry's type is exactly ``float``; otherwise a 1-D numpy
        array (numeric entries, numpy scalars or vectors among them) or a CasADi column.

    Examples
    --------
    >>> from_entries(1.0, 2.0)
    (1.0, 2.0)
    >>> from_entries(1.0, np.float64(2.0))
    array([1., 2.])
    >>> import casadi as ca
    >>> from_entries(ca.SX.sym("a"), 2.0).shape
    (2, 1)
    """
    for e in entries:   # a loop: cheaper than all() of a generator
        if type(e) is not float:
            return vertcat(*entries)
    return entries


def horzcat(*parts: Any):
    """Place matrices side by side (numpy ``hstack`` of 2-D blocks or CasADi ``horzcat``)."""
    if any(is_symbolic(p) for p in parts):
        return ca.horzcat(*[_as_casadi(p) if not is_casadi(p) else p for p in parts])
    blocks = [to_numpy(p) for p in parts]
    return np.hstack([b.reshape(-1, 1) if b.ndim == 1 else b for b in blocks])


def vector(x: Any):
    """Normalize ``x`` into a vector: 1-D numpy array, or a CasADi column.

    Lists mixing numbers and CasADi scalars become a CasADi column.
    """
    if isinstance(x, SYMBOLIC_TYPES):
        return ca.reshape(x, x.numel(), 1) if x.shape[1] != 1 else x
    if isinstance(x, ca.DM):
        return np.asarray(x.full(), dtype=float).ravel()
    if is_symbolic(x):
        return vertcat(*list(x))
    return np.atleast_1d(np.asarray(x, dtype=float)).ravel()


def zeros(n: int, like: Any = None):
    """A zero vector of size ``n``; a CasADi ``SX``/``MX`` column when ``like`` is one."""
    if isinstance(like, ca.MX):
        return ca.MX.zeros(n, 1)
    if is_symbolic(like):
        return ca.SX.zeros(n, 1)
    return np.zeros(n)


def eye(n: int):
    """Identity matrix (numpy)."""
    return np.eye(n)


def dot(a, b):
    """Inner product of two vectors."""
    if any_symbolic(a, b):
        return ca.dot(_as_casadi(a), _as_casadi(b))
    return float(np.dot(a, b))


def cross(a, b):
    """Cross product of two 3-vectors."""
    if any_symbolic(a, b):
        return ca.cross(_as_casadi(a), _as_casadi(b))
    return np.cross(a, b)


def norm_2(x):
    """Euclidean norm of a vector."""
    if is_symbolic(x):
        return ca.norm_2(_as_casadi(x))
    return float(np.linalg.norm(x))


def solve(A, b):
    """Solve ``A x = b`` (``b`` a vector or matrix).

    Numeric values use ``numpy.linalg.solve``; symbolic ones CasADi's ``solve``
    (an exact, differentiable expression).
    """
    if any_symbolic(A, b):
        return ca.solve(_as_casadi(A), _as_casadi(b))
    return np.linalg.solve(A, b)


def inv(A):
    """Matrix inverse (prefer :func:`solve`)."""
    if is_symbolic(A):
        return ca.inv(A)
    return np.linalg.inv(A)


def transpose(A):
    """Matrix transpose for numpy and CasADi values."""
    if is_casadi(A):
        return A.T
    return np.asarray(A).T


def diag(x):
    """Diagonal matrix from a vector, or the diagonal of a matrix."""
    if is_symbolic(x):
        return ca.diag(_as_casadi(x))
    return np.diag(x)


def sum1(x):
    """Sum of the elements of a vector."""
    if is_symbolic(x):
        return ca.sum1(_as_casadi(x))
    return np.sum(x)


def sumsqr(x):
    """Sum of squares of the elements."""
    if is_symbolic(x):
        return ca.sumsqr(_as_casadi(x))
    return float(np.sum(np.square(x)))


def numel(x) -> int:
    """Number of elements of a numpy or CasADi value."""
    if is_casadi(x):
        return int(x.numel())
    return int(np.size(x))


def to_numpy(x: Any) -> np.ndarray:
    """Numeric value as numpy (``DM`` becomes a dense array; SX/MX raise TypeError)."""
    if isinstance(x, ca.DM):
        arr = np.asarray(x.full(), dtype=float)
        return arr.ravel() if arr.shape[1] == 1 else arr
    if isinstance(x, SYMBOLIC_TYPES):
        if x.is_constant():
            return to_numpy(ca.DM(ca.evalf(x)))
        raise TypeError(f"expected a numeric value, got a symbolic CasADi {type(x).__name__}")
    return np.asarray(x, dtype=float)



_NOT_NAME = re.compile(r"[^0-9A-Za-z]+")
_RESERVED = ("null", "jac", "hess")


def function_name(*parts: Any) -> str:
    """A valid CasADi ``Function`` (and C symbol) name made from ``parts`` joined by ``_``.

    Names in model files and user code (``"my-robot v1.2"``, ``"bras_é"``) become names
    generated code accepts: every run of characters other than ASCII letters and digits
    becomes one underscore (CasADi refuses consecutive underscores), leading and trailing
    underscores are dropped, and a name that would not start with a letter (or would be one
    of CasADi's keywords ``null``, ``jac``, ``hess``) gets the prefix ``f_``.

    Parameters
    ----------
    *parts : object
        Pieces of the name (converted with ``str``).

    Returns
    -------
    str
        Matches ``[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)*``.

    Examples
    --------
    >>> function_name("my-robot v1.2", "dynamics")
    'my_robot_v1_2_dynamics'
    >>> function_name("3dof")
    'f_3dof'
    """
    name = _NOT_NAME.sub("_", "_".join(str(p) for p in parts)).strip("_")
    if not name or not name[0].isalpha() or name in _RESERVED:
        name = "f_" + name if name else "f"
    return name

"""Input validation of the LCP solvers (private part of :mod:`solvers.lcp`).

Errors name the argument and the expected shape: ValueError for shapes,
values and bounds, TypeError for non-numeric or CasADi symbolic input (the
pivoting solvers are numeric only).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import ops

__all__: list[str] = []


def as_float(name: str, value: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    """Float copy of ``value`` with the given shape (a column ``(n, 1)`` is
    accepted for ``(n,)``)."""
    if ops.is_symbolic(value):
        raise TypeError(f"{name} is a CasADi symbolic value; the LCP solvers "
                        "(pivoting, projection) are numeric only")
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a real array of shape {what}; got "
                        f"{type(value).__name__}") from exc
    if arr.ndim == 2 and len(shape) == 1 and arr.shape == (shape[0], 1):
        arr = arr[:, 0]
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {what} = {shape}; got shape {arr.shape}")
    return arr


def check_finite(name: str, arr: np.ndarray) -> None:
    """ValueError naming the first non-finite entry."""
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} must be finite; {name}{list(bad)} = {arr[tuple(bad)]}")


def square_size(name: str, value: Any) -> int:
    """n for a square 2-D ``value`` (ValueError otherwise)."""
    if ops.is_symbolic(value):
        as_float(name, value, (0, 0), "(n, n)")      # raises TypeError
    shape = np.shape(value)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name} must be a square 2-D array of shape (n, n); "
                         f"got shape {tuple(shape)}")
    return int(shape[0])


def check_lcp(M: Any, q: Any) -> tuple[np.ndarray, np.ndarray]:
    """Float copies of a standard LCP's data, validated."""
    n = square_size("M", M)
    Mm = as_float("M", M, (n, n), "(n, n)")
    qv = as_float("q", q, (n,), "(n,) matching M")
    check_finite("M", Mm)
    check_finite("q", qv)
    return Mm, qv


def check_boxed(A: Any, b: Any, lo: Any, hi: Any, findex: Any
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                           np.ndarray | None]:
    """Float copies of a boxed LCP's data, validated; ``findex`` is None when
    it has no friction row."""
    n = square_size("A", A)
    Am = as_float("A", A, (n, n), "(n, n)")
    bv = as_float("b", b, (n,), "(n,) matching A")
    lov = as_float("lo", lo, (n,), "(n,) matching A")
    hiv = as_float("hi", hi, (n,), "(n,) matching A")
    check_finite("A", Am)
    check_finite("b", bv)
    for name, v in (("lo", lov), ("hi", hiv)):
        if np.any(np.isnan(v)):
            i = int(np.flatnonzero(np.isnan(v))[0])
            raise ValueError(f"{name} must not contain NaN; {name}[{i}] is NaN")
    if np.any(lov > hiv):
        i = int(np.flatnonzero(lov > hiv)[0])
        raise ValueError(f"lo must be <= hi; row {i} has lo={lov[i]:g} > hi={hiv[i]:g}")
    if np.any(lov == np.inf) or np.any(hiv == -np.inf):
        raise ValueError("lo must be < +inf and hi > -inf in every row")
    fi = None
    if findex is not None:
        raw = np.asarray(findex)
        if raw.shape != (n,) or not (np.issubdtype(raw.dtype, np.integer)
                                     or (np.issubdtype(raw.dtype, np.floating)
                                         and np.all(np.mod(raw, 1) == 0))):
            raise ValueError(f"findex must be an integer array of shape (n,) = ({n},); "
                             f"got shape {raw.shape}, dtype {raw.dtype}")
        fi = raw.astype(int)
        bad = (fi < -1) | (fi >= n) | (fi == np.arange(n))
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"findex[{i}] = {fi[i]} must be -1 or a row index in [0, {n}) "
                             f"other than {i}")
        fr = fi >= 0
        if not (np.all(np.isfinite(lov[fr])) and np.all(np.isfinite(hiv[fr]))):
            raise ValueError("lo and hi of friction rows (findex >= 0) hold friction "
                             "coefficients and must be finite")
        if not np.any(fr):
            fi = None
    return Am, bv, lov, hiv, fi


def check_start(name: str, value: Any, n: int) -> np.ndarray | None:
    """Validated warm start of shape ``(n,)``, or None."""
    if value is None:
        return None
    v = as_float(name, value, (n,), "(n,)")
    check_finite(name, v)
    return v

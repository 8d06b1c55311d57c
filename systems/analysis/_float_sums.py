"""Sums of Runge-Kutta stages on Python floats (private to
:mod:`systems.analysis.integrators`, its path for small states).

Each sum is written as the numpy expression ``x + c0 * k0 + c1 * k1 + ...`` evaluates it,
term by term from the left, so the float path and the numpy path give the same numbers.
"""
from __future__ import annotations

import struct
from typing import Callable, Dict

import numpy as np

__all__ = ["lincomb", "weighted", "frozen"]

def lincomb(x, cs, ks) -> list:
    """``x + c0 k0 + c1 k1 + ...`` elementwise on lists, summed left to right as the numpy
    expression ``x + c0 * k0 + c1 * k1 + ...`` is (``x`` None: start from ``c0 k0``)."""
    m = len(cs)
    if x is None:
        c0, k0 = cs[0], ks[0]
        out = [c0 * p for p in k0]
        cs, ks, m = cs[1:], ks[1:], m - 1
        if m == 0:
            return out
        x = out
    if m == 1:
        c0, k0 = cs[0], ks[0]
        return [a + c0 * p for a, p in zip(x, k0)]
    if m == 2:
        (c0, c1), (k0, k1) = cs, ks
        return [a + c0 * p + c1 * q for a, p, q in zip(x, k0, k1)]
    if m == 3:
        (c0, c1, c2), (k0, k1, k2) = cs, ks
        return [a + c0 * p + c1 * q + c2 * r for a, p, q, r in zip(x, k0, k1, k2)]
    if m == 4:
        (c0, c1, c2, c3), (k0, k1, k2, k3) = cs, ks
        return [a + c0 * p + c1 * q + c2 * r + c3 * u for a, p, q, r, u in zip(x, k0, k1, k2, k3)]
    out = list(x)   # more terms: one pass per term, same order
    for c, k in zip(cs, ks):
        out = [a + c * p for a, p in zip(out, k)]
    return out


def weighted(h: float, nonzero, ks):
    """``[h * w_j]`` and ``[k_j]`` over the nonzero weights ``(j, w_j)``."""
    return [h * w for _, w in nonzero], [ks[j] for j, _ in nonzero]


#: A struct packer of n doubles, by n.
PACKERS: Dict[int, Callable] = {}


def frozen(values: list) -> np.ndarray:
    """An immutable float64 array of ``values`` (read-only, over its own bytes object):
    cheaper than a copy made read-only, and safe to share."""
    n = len(values)
    pack = PACKERS.get(n)
    if pack is None:
        pack = PACKERS[n] = struct.Struct(f"{n}d").pack
    return np.frombuffer(pack(*values))

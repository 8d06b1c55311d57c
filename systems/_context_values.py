"""Value helpers of the contexts (private to :mod:`systems.context`): storing a state-like
vector, concatenating the leaves' vectors, copying abstract values."""
from __future__ import annotations

import copy
import math
from typing import Sequence

import numpy as np

from solvers import ops
from .errors import PortValueError
from .ports import normalize_vector

__all__ = ["EMPTY", "store", "concat", "copy_abstract"]

#: The empty read-only vector (a leaf without some kind of state).
EMPTY = np.zeros(0)
EMPTY.flags.writeable = False


def store(value, n: int, what: str):
    """Copy a state-like value of size ``n`` into storage (read-only numpy or CasADi column).
    A value that is already stored somewhere (a read-only float64 vector of size ``n``, which
    no one can change) is shared rather than copied."""
    if type(value) is np.ndarray and not value.flags.writeable and value.dtype == np.float64 \
            and value.shape == (n,) and value.base is None:
        return value
    vec = normalize_vector(value, n, what)
    if isinstance(vec, np.ndarray):   # (a few floats: a finite sum means all are finite)
        if not (n <= 32 and math.isfinite(sum(vec.tolist()))) and not np.all(np.isfinite(vec)):
            bad = int(np.flatnonzero(~np.isfinite(vec))[0])
            raise PortValueError(f"{what}: element {bad} is {vec[bad]}; values must be finite")
        vec = vec.copy()
        vec.flags.writeable = False
    return vec


def concat(parts: Sequence):
    """The parts concatenated (read-only numpy, or a CasADi column if any part is symbolic)."""
    if not parts:
        return EMPTY
    if len(parts) == 1:
        return parts[0]
    if any(ops.is_symbolic(p) for p in parts):
        return ops.vertcat(*parts)
    out = np.concatenate(parts)
    out.flags.writeable = False
    return out


def copy_abstract(value):
    """A deep copy of an abstract state value (contexts never share them)."""
    return copy.deepcopy(value)

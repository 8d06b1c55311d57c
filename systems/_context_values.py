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
    """Copy a state-like value of size ``n`` into storage: a read-only numpy vector over a
    ``bytes`` object (which numpy refuses to make writeable again, so no one can change it in
    place), or a CasADi column. A float64 vector of size ``n`` over a ``bytes`` object is
    already immutable and is shared once checked finite; any other value is copied (a
    read-only array owning its data is not safe: its owner can flip it writeable and change
    it, which a value kept by identity, such as a memo of a parameter vector, would miss).

    Raises
    ------
    PortValueError
        Naming ``what``: a value not convertible to ``n`` numbers, or a non-finite entry.
    """
    if type(value) is np.ndarray and type(value.base) is bytes and \
            value.dtype == np.float64 and value.shape == (n,):
        vec, shared = value, True
    else:
        vec, shared = normalize_vector(value, n, what), False
        if not isinstance(vec, np.ndarray):   # a CasADi column
            return vec
    # (a few floats: a finite sum means all are finite)
    if not (n <= 32 and math.isfinite(sum(vec.tolist()))) and not np.all(np.isfinite(vec)):
        bad = int(np.flatnonzero(~np.isfinite(vec))[0])
        raise PortValueError(f"{what}: element {bad} is {vec[bad]}; values must be finite")
    if shared:
        return vec
    return np.frombuffer(np.ascontiguousarray(vec, dtype=np.float64).tobytes())


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

"""What a context stores (systems/_context_values.py ``store``): its own immutable copy of a
state or parameter vector, which no one can change in place; an already immutable vector
(over a ``bytes`` object) shared once checked finite."""
import math

import numpy as np
import pytest

from systems import LeafSystem
from systems.errors import PortValueError


class _Leaf(LeafSystem):
    def __init__(self):
        super().__init__("leaf")
        self.declare_continuous_state(3)
        self.declare_numeric_parameter("k", [1.0, 2.0])

    def time_derivatives(self, context):
        return -context.continuous_state


def test_a_read_only_array_owning_its_data_is_copied():
    ctx = _Leaf().create_default_context()
    mine = np.array([4.0, 5.0])
    mine.flags.writeable = False
    ctx.set_parameter("k", mine)
    assert ctx.get_parameter("k") is not mine
    mine.flags.writeable = True   # its owner may do this ...
    mine[0] = -1.0                # ... and change it, unseen by the context
    assert ctx.get_parameter("k").tolist() == [4.0, 5.0]


@pytest.mark.parametrize("kind", ["state", "parameter"])
def test_stored_vectors_cannot_be_made_writeable(kind):
    ctx = _Leaf().create_default_context()
    ctx.set_continuous_state([1.0, 2.0, 3.0])
    v = ctx.continuous_state if kind == "state" else ctx.get_parameter("k")
    with pytest.raises(ValueError):
        v.flags.writeable = True
    with pytest.raises(ValueError):
        v[0] = 7.0


def test_an_immutable_vector_is_shared_and_still_checked():
    a, b = _Leaf().create_default_context(), _Leaf().create_default_context()
    a.set_continuous_state([0.5, -1.5, 2.5])
    b.set_continuous_state(a.continuous_state)
    assert b.continuous_state is a.continuous_state   # over bytes: nobody can change it
    over_bytes = np.frombuffer(np.array([1.0, math.nan, 0.0]).tobytes())
    with pytest.raises(PortValueError, match=r"continuous state.*element 1 is nan"):
        b.set_continuous_state(over_bytes)
    assert b.continuous_state.tolist() == [0.5, -1.5, 2.5]


def test_values_of_any_form_are_stored_as_float64_bits():
    ctx = _Leaf().create_default_context()
    big_endian = np.array([0.1, 1e300, -3.0], dtype=">f8")
    ctx.set_continuous_state(big_endian)
    assert ctx.continuous_state.dtype == np.float64
    assert ctx.continuous_state.tobytes() == np.array([0.1, 1e300, -3.0]).tobytes()
    ctx.set_continuous_state(np.arange(6.0)[::2])   # strided
    assert ctx.continuous_state.tolist() == [0.0, 2.0, 4.0]
    ctx.set_parameter("k", (3, 4))
    assert ctx.get_parameter("k").tolist() == [3.0, 4.0]
    with pytest.raises(PortValueError, match="size 2"):
        ctx.set_parameter("k", [1.0, 2.0, 3.0])

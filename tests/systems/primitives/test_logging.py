"""VectorLog storage (issue 13 C): preallocated blocks, a ring buffer, memory per sample.

Every storage path is checked against plain reference arrays built independently; memory is
measured with ``tracemalloc`` (numpy reports its allocations there): a sample of a 2-vector
holds 3 float64 values, 24 bytes.
"""
from __future__ import annotations

import copy
import tracemalloc

import numpy as np
import pytest

from systems import DiagramBuilder, Simulator
from systems.errors import PortValueError
from systems.primitives import ConstantVectorSource, Integrator, LogVectorOutput, VectorLog

RAW = 24  # bytes of one sample of a 2-vector: t, x0, x1


def reference(n: int, size: int = 2, seed: int = 0):
    rng = np.random.default_rng(seed)
    return np.cumsum(rng.uniform(0.001, 0.01, n)), rng.standard_normal((size, n))


@pytest.mark.parametrize("n", [0, 1, 255, 256, 257, 5000])
def test_add_across_block_boundaries_matches_reference(n):
    t, x = reference(n)
    log = VectorLog(2)
    for k in range(n):
        log.add(t[k], x[:, k])
    assert log.num_samples() == n
    np.testing.assert_array_equal(log.sample_times(), t)
    np.testing.assert_array_equal(log.data(), x)
    assert log.data().shape == (2, n) and log.data().flags.c_contiguous


def test_extend_in_random_pieces_and_add_agree():
    t, x = reference(70_000)
    rng = np.random.default_rng(1)
    a, b = VectorLog(2), VectorLog(2)
    k = 0
    while k < t.size:
        m = int(rng.integers(0, 3000))
        a.extend(t[k:k + m], x[:, k:k + m])
        k += m
    for j in range(t.size):
        b.add(t[j], x[:, j])
    for log in (a, b):
        np.testing.assert_array_equal(log.sample_times(), t)
        np.testing.assert_array_equal(log.data(), x)


def test_repeated_time_replaces_the_previous_sample():
    log = VectorLog(1)
    log.add(0.0, [1.0])
    log.add(0.5, [2.0])
    log.add(0.5, [3.0])                       # same time: replaces
    log.extend([0.5, 1.0], [[4.0, 5.0]])      # first one replaces again
    np.testing.assert_array_equal(log.sample_times(), [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(log.data(), [[1.0, 4.0, 5.0]])


@pytest.mark.parametrize("capacity", [1, 7, 100, 300, 1000])
def test_ring_buffer_keeps_the_latest_samples(capacity):
    t, x = reference(2345)
    log = VectorLog(2, capacity=capacity)
    for k in range(1000):
        log.add(t[k], x[:, k])
    log.extend(t[1000:2000], x[:, 1000:2000])   # in one piece, maybe larger than capacity
    for k in range(2000, 2345):
        log.add(t[k], x[:, k])
    keep = min(capacity, 2345)
    assert log.num_samples() == keep and log.num_dropped() == 2345 - keep
    np.testing.assert_array_equal(log.sample_times(), t[-keep:])
    np.testing.assert_array_equal(log.data(), x[:, -keep:])
    assert log.nbytes() == keep * RAW                   # one array of exactly capacity rows


def test_ring_buffer_before_it_is_full_and_after_clear():
    log = VectorLog(2, capacity=1000)
    t, x = reference(10)
    log.extend(t, x)
    np.testing.assert_array_equal(log.data(), x)
    assert log.nbytes() < 1000 * RAW                    # grows to the capacity
    log.clear()
    assert log.num_samples() == 0 and log.data().shape == (2, 0)


def test_copies_are_independent():
    log = VectorLog(2, capacity=5)
    t, x = reference(8)
    log.extend(t[:6], x[:, :6])
    twin = copy.deepcopy(log)
    log.add(t[6], x[:, 6])
    np.testing.assert_array_equal(twin.sample_times(), t[1:6])
    np.testing.assert_array_equal(log.sample_times(), t[2:7])


def test_bad_values_and_capacity_are_named_errors():
    log = VectorLog(2)
    with pytest.raises(PortValueError, match=r"VectorLog\(size=2\)\.add: the value has 3 "
                                             r"entries, expected 2"):
        log.add(0.0, [1.0, 2.0, 3.0])
    with pytest.raises(PortValueError, match=r"extend: values of shape \(2, 3\) for 2 times"):
        log.extend([0.0, 1.0], np.zeros((2, 3)))
    for bad in (0, -1, 2.5, True, "10"):
        with pytest.raises(PortValueError, match="capacity must be a positive integer"):
            VectorLog(2, capacity=bad)


def _traced_bytes_per_sample(n: int, record) -> float:
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        log = record(n)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert log.num_samples() == n
    return (after - before) / n


def test_memory_per_sample_is_close_to_the_raw_data():
    x = np.array([0.25, -1.5])

    def by_add(n):
        log = VectorLog(2)
        for k in range(n):
            log.add(0.001 * k, x)
        return log

    def by_extend(n):
        log = VectorLog(2)
        t = np.arange(n) * 1e-3
        for k in range(0, n, 10_000):
            log.extend(t[k:k + 10_000], np.zeros((2, min(10_000, n - k))))
        return log

    # blocks of 256, 512, ... : at most about twice the raw data for short logs, and within
    # 7 % (+ a few bytes of list overhead) for a million samples. Before: 624 bytes.
    assert _traced_bytes_per_sample(30_000, by_add) < 2.0 * RAW
    assert _traced_bytes_per_sample(1_000_000, by_extend) < 1.1 * RAW


def test_sink_with_capacity_in_a_simulation():
    """x' = 1 from x(0) = 0 logged every 0.1 s until t = 2 with capacity 5: the last five
    samples x = t at t = 1.6 ... 2.0."""
    builder = DiagramBuilder()
    src = builder.add_system(ConstantVectorSource([1.0]))
    integ = builder.add_system(Integrator(1))
    builder.connect(src.get_output_port(), integ.get_input_port())
    sink = LogVectorOutput(integ.get_output_port(), builder, publish_period=0.1, capacity=5)
    diagram = builder.build()
    sim = Simulator(diagram)
    sim.advance_to(2.0)
    log = sink.find_log(sim.get_context())
    assert log.capacity == 5 and log.num_samples() == 5 and log.num_dropped() == 16
    np.testing.assert_allclose(log.sample_times(), [1.6, 1.7, 1.8, 1.9, 2.0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(log.data()[0], log.sample_times(), rtol=0, atol=1e-12)

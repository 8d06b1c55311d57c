"""A diagram's time derivatives on N states (systems.analysis.batched): equal to the
diagram's own ``time_derivatives`` at each state (to 1e-12), for the pendulum's LQR loop (a
diagram with a controller block), with per-row inputs on the open-loop pendulum checked
against the closed-form vector field, serial and threaded alike; wrong shapes are named."""
import numpy as np
import pytest

from _concurrency import mismatches_under_threads
from _systems_models import B_DAMP, G, _closed_loop_lqr, _plant_context
from systems.analysis import BatchedDynamics, BatchShapeError, batched_time_derivatives


def _rows(n, seed=0):
    rng = np.random.default_rng(seed)
    return np.column_stack([np.pi + rng.uniform(-1, 1, n), rng.normal(size=n)])


def test_diagram_rows_equal_single_evaluations():
    diagram, _ = _closed_loop_lqr()
    ctx = diagram.create_default_context()
    X = _rows(7)
    out = batched_time_derivatives(diagram, ctx, X)
    assert out.shape == (7, 2)
    for x, row in zip(X, out):
        ctx.set_continuous_state(x)
        ref = np.asarray(diagram.time_derivatives(ctx), dtype=float)
        assert np.max(np.abs(row - ref)) <= 1e-12 * max(1.0, np.max(np.abs(ref)))


def test_inputs_per_row_against_closed_form_and_threads():
    plant, ctx = _plant_context(0.0, 0.0, tau=0.3)
    X = _rows(600, seed=1)
    U = np.random.default_rng(2).normal(size=(600, 1))
    expected = np.column_stack([X[:, 1], -G * np.sin(X[:, 0]) - B_DAMP * X[:, 1] + U[:, 0]])
    serial = BatchedDynamics(plant)
    np.testing.assert_allclose(serial.time_derivatives(ctx, X, U), expected, rtol=0,
                               atol=1e-12)
    # without U, the context's fixed input (0.3) is shared by every row
    shared = serial.time_derivatives(ctx, X)
    np.testing.assert_allclose(shared[:, 1], expected[:, 1] - U[:, 0] + 0.3, atol=1e-12)
    threaded = BatchedDynamics(plant, threads=2, thread_min=100)
    assert np.array_equal(threaded.time_derivatives(ctx, X, U),
                          serial.time_derivatives(ctx, X, U))
    one = serial.time_derivatives(ctx, X[:1], U[:1])
    assert one.shape == (1, 2) and np.array_equal(one[0], serial.time_derivatives(ctx, X, U)[0])


def test_bad_shapes_are_named():
    plant, ctx = _plant_context(0.0)
    dyn = BatchedDynamics(plant)
    with pytest.raises(BatchShapeError, match=r"'pendulum': X has shape \(4, 3\), expected "
                                              r"\(N, 2\)"):
        dyn.time_derivatives(ctx, np.zeros((4, 3)))
    with pytest.raises(BatchShapeError, match=r"U has shape \(3, 1\), expected \(4, 1\)"):
        dyn.time_derivatives(ctx, np.zeros((4, 2)), np.zeros((3, 1)))
    with pytest.raises(BatchShapeError, match="N >= 1"):
        dyn.time_derivatives(ctx, np.zeros((0, 2)))
    X = np.zeros((3, 2))
    X[1, 0] = np.inf
    with pytest.raises(ValueError, match=r"X contains NaN or inf \(batch row 1\)"):
        dyn.time_derivatives(ctx, X)


def test_concurrent_calls_from_threads_are_exact():
    """One BatchedDynamics used from four threads at once: every call equals, bitwise, the
    same call made before the threads started (the shared CasADi buffer is used in turn)."""
    plant, ctx = _plant_context(0.0, 0.0, tau=0.0)
    bd = BatchedDynamics(plant)
    calls, expected = [], []
    for k in range(4):
        X = _rows(300, seed=20 + k)
        U = np.random.default_rng(30 + k).normal(size=(300, 1))
        calls.append(lambda X=X, U=U: bd.time_derivatives(ctx, X, U))
        expected.append(calls[-1]().copy())
    assert mismatches_under_threads(calls, expected) == []

"""RandomSource: distributions, holding, seeds and reruns."""
import numpy as np
import pytest

from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.primitives import LogVectorOutput, RandomSource


def _samples(dist, seed, n=2, T=20.0, h=0.01):
    b = DiagramBuilder()
    src = b.add_system(RandomSource(dist, n, h, seed))
    log = LogVectorOutput(src.get_output_port("y"), b, publish_period=h)
    d = b.build()
    sim = Simulator(d)
    sim.advance_to(T)
    data = log.find_log(sim.get_context())
    return data.sample_times(), data.data()


def test_gaussian_and_uniform_statistics():
    _, g = _samples("gaussian", 3)
    m = g.shape[1]
    assert m > 1900
    # mean within 4 standard errors, variance within 4 standard errors of chi^2
    assert np.all(np.abs(g.mean(axis=1)) < 4 / np.sqrt(m))
    assert np.all(np.abs(g.var(axis=1) - 1.0) < 4 * np.sqrt(2 / m))
    _, u = _samples("uniform", 3)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert np.all(np.abs(u.mean(axis=1) - 0.5) < 4 * np.sqrt(1 / 12 / m))
    # independent channels
    assert abs(np.corrcoef(g)[0, 1]) < 4 / np.sqrt(m)


def test_same_seed_same_samples_other_seed_others():
    a, b, c = _samples("gaussian", 7, T=1.0), _samples("gaussian", 7, T=1.0), _samples("gaussian", 8, T=1.0)
    assert np.array_equal(a[1], b[1])
    assert not np.allclose(a[1], c[1])


def test_held_between_draws():
    t, y = _samples("uniform", 1, n=1, T=1.0, h=0.25)
    b = DiagramBuilder()
    src = b.add_system(RandomSource("uniform", 1, 0.25, 1))
    log = LogVectorOutput(src.get_output_port("y"), b, publish_period=0.05)
    d = b.build()
    sim = Simulator(d)
    sim.advance_to(1.0)
    fine = log.find_log(sim.get_context())
    vals = fine.data()[0]
    # five samples per draw interval, all equal within an interval
    assert len(np.unique(np.round(vals, 15))) <= 6


def test_bad_arguments():
    with pytest.raises(ValueError, match="distribution must be 'gaussian' or 'uniform'"):
        RandomSource("poisson", 1, 0.1)
    with pytest.raises(ValueError, match="sampling_interval must be finite and > 0"):
        RandomSource("gaussian", 1, 0.0)
    with pytest.raises(ValueError, match="num_outputs"):
        RandomSource("gaussian", 0, 0.1)
    with pytest.raises(ValueError, match="seed"):
        RandomSource("gaussian", 1, 0.1, seed=-1)

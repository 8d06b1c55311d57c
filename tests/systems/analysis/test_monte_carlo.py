"""Monte Carlo runs and parameter sweeps (systems.analysis.monte_carlo).

Checked: outputs against the analytic solution of a linear decay drawn from each sample's
seed; same seed gives bitwise identical results serially, on a ProcessPoolExecutor(2) (spawned
workers, so they load the compiled model from the disk cache: no new library appears) and on a
Dask LocalCluster (skipped without dask.distributed); re-running one sample from its seed
reproduces it bitwise; a failing sample is reported with its seed and error while the others
run; unpicklable functions are refused for a process pool with a named error; sweep order and
values against the analytic solution."""
import concurrent.futures as cf
import functools
import multiprocessing
import os

import numpy as np
import pytest

from multibody import Revolute, RigidBodyTree
from multibody.plants import RigidBodyPlant
from solvers.compiled import default_cache_dir
from systems.analysis import (MonteCarloResult, NotPicklableError, Simulator, monte_carlo,
                              sample_seeds, sweep)
from systems.primitives import LinearSystem

T_FINAL = 0.3


# ---- module-level builders (picklable for worker processes) ------------------------------
def make_decay(gen):
    """xdot = -x from x0 ~ U(1, 2): x(T) = x0 exp(-T)."""
    system = LinearSystem(A=[[-1.0]])
    ctx = system.create_default_context()
    ctx.set_continuous_state([gen.uniform(1.0, 2.0)])
    return Simulator(system, ctx, integrator="RK45", accuracy=1e-11)


def make_pendulum(gen):
    """A compiled one-link pendulum (RigidBodyPlant, backend "c") from a random state."""
    tree = RigidBodyTree("mc_test_pendulum", backend="c")
    tree.add_body("link", mass=1.0, com=(0, 0, -0.5), inertia=np.eye(3) * 0.01)
    tree.add_joint(Revolute("hinge", "world", "link", axis=(0, 1, 0)))
    plant = RigidBodyPlant(tree, backend="c")
    ctx = plant.create_default_context()
    ctx.set_continuous_state([gen.uniform(-1.0, 1.0), gen.normal()])
    plant.get_input_port().fix_value(ctx, [0.0])
    return Simulator(plant, ctx, integrator="runge_kutta3", accuracy=1e-6)


def make_unlucky(gen):
    """Fails for about a third of the seeds."""
    if gen.uniform() < 0.35:
        raise ValueError("unlucky draw")
    return make_decay(gen)


def final_state(sim):
    return sim.get_context().get_continuous_state_vector().copy()


def final_value(sim):
    return float(sim.get_context().get_continuous_state_vector()[0])


def make_scaled(params):
    system = LinearSystem(A=[[-params["a"]]])
    ctx = system.create_default_context()
    ctx.set_continuous_state([params["x0"]])
    return Simulator(system, ctx, integrator="RK45", accuracy=1e-11)


def _bits(results):
    return [(r.seed, None if r.output is None else np.asarray(r.output).tobytes(), r.error)
            for r in results]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    """A fresh compiled-code cache shared by this process and the spawned workers."""
    path = tmp_path_factory.mktemp("compiled_cache")
    old = os.environ.get("DYNABLOCKS_CACHE_DIR")
    os.environ["DYNABLOCKS_CACHE_DIR"] = str(path)
    yield path
    if old is None:
        del os.environ["DYNABLOCKS_CACHE_DIR"]
    else:
        os.environ["DYNABLOCKS_CACHE_DIR"] = old


@pytest.fixture(scope="module")
def pool(cache_dir):
    # spawned (not forked) workers start from nothing: they must find the compiled library
    # on disk
    with cf.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as ex:
        yield ex


# ---- tests ----------------------------------------------------------------------------------
def test_outputs_match_analytic_solution_per_seed():
    res = monte_carlo(make_decay, final_value, T_FINAL, num_samples=5, seed=11)
    assert [r.seed for r in res] == sample_seeds(11, 5)
    for r in res:
        assert isinstance(r, MonteCarloResult) and r.ok
        x0 = np.random.default_rng(r.seed).uniform(1.0, 2.0)
        assert r.output == pytest.approx(x0 * np.exp(-T_FINAL), rel=1e-8)
    # different seeds -> different draws; the same seed -> the same run
    assert len({r.output for r in res}) == 5
    assert _bits(res) == _bits(monte_carlo(make_decay, final_value, T_FINAL, 5, seed=11))
    assert sample_seeds(11, 3) == sample_seeds(11, 5)[:3]


def test_rerun_one_sample_from_its_seed_is_bitwise():
    res = monte_carlo(make_pendulum, final_state, T_FINAL, num_samples=3, seed=3)
    r = res[2]
    sim = make_pendulum(np.random.default_rng(r.seed))
    sim.advance_to(T_FINAL)
    assert final_state(sim).tobytes() == r.output.tobytes()


def test_process_pool_bitwise_and_loads_compiled_model_from_cache(cache_dir, pool):
    def model_files():  # the model's libraries and sources, with their modification times
        return {p.name: p.stat().st_mtime_ns for p in cache_dir.iterdir()
                if "mc_test_pendulum" in p.name}

    serial = monte_carlo(make_pendulum, final_state, T_FINAL, num_samples=6, seed=5)
    files = model_files()
    assert any(f.endswith(".so") for f in files)  # compiled once, in this process
    par = monte_carlo(make_pendulum, final_state, T_FINAL, num_samples=6, seed=5,
                      executor=pool, chunk_size=2)
    assert all(r.ok for r in par), [r.error for r in par if not r.ok]
    assert _bits(par) == _bits(serial)
    # both workers built the plant and loaded its library: none was compiled again
    assert model_files() == files
    assert pool.submit(default_cache_dir).result() == cache_dir  # the workers' cache


def test_failed_samples_are_reported_with_seed_and_others_kept(pool):
    res = monte_carlo(make_unlucky, final_value, T_FINAL, num_samples=12, seed=1)
    bad = [r for r in res if not r.ok]
    good = [r for r in res if r.ok]
    assert bad and good
    for r in bad:
        assert r.output is None and "ValueError: unlucky draw" in r.error
        with pytest.raises(ValueError, match="unlucky"):  # the seed re-creates the failure
            make_unlucky(np.random.default_rng(r.seed))
    for r in good:
        rng = np.random.default_rng(r.seed)
        rng.uniform()
        assert r.output == pytest.approx(rng.uniform(1.0, 2.0) * np.exp(-T_FINAL), rel=1e-8)
    par = monte_carlo(make_unlucky, final_value, T_FINAL, num_samples=12, seed=1,
                      executor=pool, chunk_size=5)
    assert [(r.seed, r.output) for r in par] == [(r.seed, r.output) for r in res]
    assert [r.ok for r in par] == [r.ok for r in res]


def test_unpicklable_function_is_a_named_error(pool):
    with pytest.raises(NotPicklableError, match="make_simulator.*lambda.*module level"):
        monte_carlo(lambda g: make_decay(g), final_value, T_FINAL, 2, seed=0, executor=pool)
    # threads need no pickling; a partial of a module-level function pickles
    with cf.ThreadPoolExecutor(2) as ex:
        res = monte_carlo(lambda g: make_decay(g), final_value, T_FINAL, 3, seed=0, executor=ex)
    assert _bits(res) == _bits(monte_carlo(make_decay, final_value, T_FINAL, 3, seed=0))
    part = functools.partial(make_scaled)
    assert sweep(part, [{"a": 1.0, "x0": 1.0}], final_value, T_FINAL, executor=pool)[0].ok


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="num_samples must be a non-negative integer"):
        monte_carlo(make_decay, final_value, 1.0, num_samples=-1, seed=0)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        monte_carlo(make_decay, final_value, 1.0, num_samples=1, seed=-3)
    with pytest.raises(TypeError, match="output must be callable"):
        monte_carlo(make_decay, 3, 1.0, num_samples=1, seed=0)
    with pytest.raises(TypeError, match="executor must be None"):
        monte_carlo(make_decay, final_value, 1.0, num_samples=1, seed=0, executor=object())
    res = monte_carlo(lambda g: 42, final_value, 1.0, num_samples=1, seed=0)
    assert "make_simulator must return a Simulator" in res[0].error
    with pytest.raises(ValueError, match="grid entry 'a' must be a non-empty"):
        sweep(make_scaled, {"a": []}, final_value, 1.0)


def test_sweep_grid_order_and_values():
    grid = {"a": [0.5, 1.0, 2.0], "x0": np.array([1.0, -2.0])}
    res = sweep(make_scaled, grid, final_value, T_FINAL)
    assert [(r.params["a"], r.params["x0"]) for r in res] == \
        [(a, x) for a in grid["a"] for x in grid["x0"]]
    for r in res:
        assert r.output == pytest.approx(r.params["x0"] * np.exp(-r.params["a"] * T_FINAL),
                                         rel=1e-8)
    points = [{"a": 3.0, "x0": 1.0}, {"a": 0.1, "x0": 4.0}]
    assert [r.params for r in sweep(make_scaled, points, final_value, T_FINAL)] == points


def test_dask_local_cluster_bitwise(cache_dir):
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (extra [cluster])")
    serial = monte_carlo(make_pendulum, final_state, T_FINAL, num_samples=6, seed=9)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        par = monte_carlo(make_pendulum, final_state, T_FINAL, num_samples=6, seed=9,
                          executor=client)
        swept = sweep(make_scaled, {"a": [1.0, 2.0], "x0": [1.0]}, final_value, T_FINAL,
                      executor=client)
    assert all(r.ok for r in par), [r.error for r in par if not r.ok]
    assert _bits(par) == _bits(serial)
    assert [r.output for r in swept] == \
        [r.output for r in sweep(make_scaled, {"a": [1.0, 2.0], "x0": [1.0]}, final_value,
                                 T_FINAL)]

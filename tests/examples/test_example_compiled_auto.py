"""``Simulator(..., compiled="auto")`` on the examples: the examples that compile give the
interpreted run's trajectory within the integration tolerance (final states, and log
samples taken at the same times), and one that cannot (a witness function) runs interpreted,
bitwise as before, after one note naming the block. The survey of every example is
``benchmarks/bench_compiled_simulator.py --examples``."""
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _bench():
    path = os.path.join(ROOT, "benchmarks", "bench_compiled_simulator.py")
    spec = importlib.util.spec_from_file_location("bench_compiled_simulator", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()


@pytest.mark.parametrize("name, args, tol", [
    ("mass_spring_damper_pid", ["--t-end", "2"], 1e-6),    # accuracy 1e-8
    ("quickstart", [], 1e-6),                             # accuracy 1e-8
    ("acrobot_lqr", ["--duration", "2"], 2e-5),           # accuracy 1e-6
    ("urdf_swing", ["--duration", "0.5"], 1e-6),          # accuracy 1e-10
])
def test_auto_gives_the_interpreted_trajectory(name, args, tol):
    plain = BENCH.run_example(name, args, False)
    with BENCH.reuse.empty_table():
        auto = BENCH.run_example(name, args, "auto")
    assert [r["kind"] for r in auto["runs"]] == ["CompiledSimulator"] and not auto["notes"]
    assert [r["kind"] for r in plain["runs"]] == ["Simulator"]
    diff = BENCH.compare_runs(plain, auto)
    assert diff["same_count"] and diff["samples"] >= 2  # at least the first and last samples
    assert diff["state"] <= tol and diff["log"] <= tol, diff
    assert auto["runs"][0]["t"] == plain["runs"][0]["t"]


def test_auto_falls_back_on_the_bouncing_ball_bitwise():
    plain = BENCH.run_example("bouncing_ball", ["--bounces", "3"], False)
    auto = BENCH.run_example("bouncing_ball", ["--bounces", "3"], "auto")
    assert [r["kind"] for r in auto["runs"]] == ["Simulator"]
    assert len(set(auto["notes"])) == 1 and "witness function 'ground'" in auto["notes"][0]
    diff = BENCH.compare_runs(plain, auto)
    assert diff["state"] == 0.0 and diff["log"] == 0.0 and diff["samples"] > 10

"""Monte Carlo wall time: serial vs a local process pool vs a Dask LocalCluster.

64 one-second simulations of a damped pendulum under PID control (a LeafSystem and
``systems.controllers.PidController`` in a diagram, simulated interpreted with RK3 at a fixed 1 ms step, about
0.1 s of CPU each) with random initial angles and gains, run by
``systems.analysis.monte_carlo`` serially, on ``ProcessPoolExecutor(2)`` and, when
``dask.distributed`` is installed (extra ``[cluster]``), on ``LocalCluster(n_workers=2,
threads_per_worker=1, processes=True)``. Pools are started and warmed up (workers import the
modules) before timing; the rounds are interleaved (serial, pool, dask, serial, ...) and the
table shows the median wall time per run, the speed-up over serial and whether the outputs are
bitwise identical to the serial run. BLAS is pinned to one thread in every process.

On a 2-core machine the ideal speed-up of 2 workers is 2; other load on the machine lowers it.
The last line measures what the machine offers at that moment: the speed-up of plain
pure-Python busy loops on the same process pool (an upper bound for the rows above).

Run: ``.venv/bin/python benchmarks/bench_monte_carlo.py [--quick] [--samples 64]
[--rounds 3] [--workers 2]``
"""
from __future__ import annotations

import concurrent.futures as cf
import os
import time
import sys  # noqa: E402
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from _cli import script_parser  # noqa: E402
from _cluster import OVERHEAD  # noqa: E402

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from solvers import ops  # noqa: E402
from systems import DiagramBuilder, LeafSystem  # noqa: E402
from systems.analysis import Simulator, monte_carlo  # noqa: E402
from systems.controllers import PidController  # noqa: E402

FINAL_TIME = 1.0


class DampedPendulum(LeafSystem):
    """theta'' = -g/l sin(theta) - b theta' + tau; state [theta, theta_dot]."""

    def __init__(self):
        super().__init__("pendulum")
        self.declare_continuous_state(2, num_q=1, num_v=1)
        self.tau = self.declare_input_port("tau", 1)
        self.declare_output_port("state", 2, lambda c: c.continuous_state, feedthrough=False)

    def time_derivatives(self, c):
        th, om = c.continuous_state[0], c.continuous_state[1]
        return ops.vertcat(om, -9.81 * ops.sin(th) - 0.1 * om + self.tau.eval(c)[0])


def make_simulator(gen: np.random.Generator) -> Simulator:
    """A PID-held pendulum with random gains and initial state (module level: picklable)."""
    b = DiagramBuilder("pid_pendulum")
    plant = b.add_system(DampedPendulum())
    pid = b.add_system(PidController(kp=[gen.uniform(20, 40)], ki=[1.0],
                                     kd=[gen.uniform(2, 6)]))
    b.connect(plant.get_output_port(), pid.get_input_port("estimated_state"))
    b.connect(pid.get_output_port("control"), plant.get_input_port())
    b.export_input(pid.get_input_port("desired_state"), "desired")
    diagram = b.build()
    ctx = diagram.create_default_context()
    ctx.set_continuous_state(np.concatenate([[gen.uniform(-1, 1), gen.normal()],
                                             np.zeros(ctx.continuous_state.shape[0] - 2)]))
    diagram.get_input_port("desired").fix_value(ctx, [0.5, 0.0])
    return Simulator(diagram, ctx, integrator="runge_kutta3", max_step=1e-3, fixed_step=True)


def final_angle_error(sim: Simulator) -> float:
    """|theta(T) - 0.5| from the final context."""
    return abs(float(sim.get_context().get_continuous_state_vector()[0]) - 0.5)


def busy_loop(n: int) -> int:
    """Pure-Python CPU work: the machine's available parallelism, measured alike."""
    s = 0
    for i in range(n):
        s += i * i
    return s


def _parallelism(pool, workers: int, rounds: int) -> float:
    """Speed-up of ``2 * workers`` busy loops on the pool over running them serially."""
    ratios = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        [busy_loop(2_000_000) for _ in range(2 * workers)]
        ts = time.perf_counter() - t0
        t0 = time.perf_counter()
        list(pool.map(busy_loop, [2_000_000] * (2 * workers)))
        ratios.append(ts / (time.perf_counter() - t0))
    return float(np.median(ratios))


def _timed(executor, n: int, seed: int):
    # the functions by module name, so workers import them (run as a script, they would
    # live in __main__, which Dask pickles by value: a new DampedPendulum class per task)
    import bench_monte_carlo as this
    t0 = time.perf_counter()
    res = monte_carlo(this.make_simulator, this.final_angle_error, FINAL_TIME, n, seed=seed,
                      executor=executor)
    return time.perf_counter() - t0, res


def main(argv=None) -> list:
    parser = script_parser(__doc__)
    parser.add_argument("--quick", action="store_true", help="16 samples, 1 round")
    parser.add_argument("--samples", type=int, default=64, help="simulations per Monte Carlo run")
    parser.add_argument("--rounds", type=int, default=3,
                        help="timed rounds (the median is reported)")
    parser.add_argument("--workers", type=int, default=2,
                        help="processes of the process pool and of the Dask LocalCluster; on 2 "
                             "cores or fewer expect a speed-up below 2, or below 1 for the Dask "
                             "row (process start and scheduling overhead)")
    args = parser.parse_args(argv)
    n, rounds = (16, 1) if args.quick else (args.samples, args.rounds)
    from threadpoolctl import threadpool_limits
    threadpool_limits(1)
    executors = {"serial": None}
    closers = []
    pool = cf.ProcessPoolExecutor(args.workers)
    executors[f"processes({args.workers})"] = pool
    closers.append(pool.shutdown)
    try:
        import distributed
    except ImportError:
        print("dask.distributed not installed (pip install 'dynablocks[cluster]'): no Dask row")
    else:
        cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                           processes=True, dashboard_address=None)
        client = distributed.Client(cluster)
        executors[f"dask LocalCluster({args.workers})"] = client
        closers += [client.close, cluster.close]
    try:
        for ex in executors.values():  # warm up: workers import and build once
            _timed(ex, 2 * args.workers, seed=1)
        times = {k: [] for k in executors}
        outputs = {}
        for r in range(rounds):
            for k, ex in executors.items():
                dt, res = _timed(ex, n, seed=2026)
                times[k].append(dt)
                outputs[k] = [(x.seed, x.output, x.error) for x in res]
                print(f"round {r + 1}/{rounds}: {k:<24} {dt:6.2f} s", flush=True)
        available = _parallelism(pool, args.workers, 3)
    finally:
        for close in closers:
            close()
    serial = float(np.median(times["serial"]))
    failed = sum(e is not None for _, _, e in outputs["serial"])
    print(f"\n{n} simulations of {FINAL_TIME} s (pendulum + PID, interpreted RK3, h = 1 ms), "
          f"{os.cpu_count()} cores, median of {rounds} interleaved round(s); "
          f"{failed} failed samples")
    head = f"{'executor':<26}{'wall [s]':>9}{'per sample [ms]':>17}{'speed-up':>10}  bitwise"
    print(head)
    print("-" * len(head))
    rows = []
    for k in executors:
        med = float(np.median(times[k]))
        same = outputs[k] == outputs["serial"]
        rows.append((k, med, serial / med, same))
        print(f"{k:<26}{med:9.2f}{1e3 * med / n:17.1f}{serial / med:10.2f}  {same}")
    print(f"machine check: pure-Python busy loops on processes({args.workers}) run "
          f"{available:.2f}x faster than serially right now (the most any row can show)")
    slower = [k for k, _, speedup, _ in rows if speedup < 1.0]
    if slower:
        print(f"note: {', '.join(slower)} ran slower than serial: on {os.cpu_count()} core(s) "
              f"{OVERHEAD} costs more than the parallel work saves")
    return rows


if __name__ == "__main__":
    main()

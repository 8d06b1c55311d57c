"""Monte Carlo: how often does the standing quadruped stay up under a random push?

Each sample builds the scene of ``quadruped_push_impedance.py`` (the 12-joint quadruped on
the ground, time stepping at 1 ms, joint impedance plus contact-aware gravity compensation)
with a horizontal shove on the trunk of random magnitude (uniform in ``--force-range`` N) and
heading (uniform in [0, 360) degrees) for 0.1 s, simulates ``--duration`` seconds and reads
the final trunk height and tilt: the sample is a success when the trunk is within 3 cm of
its standing height and tilted less than 0.2 rad. ``systems.analysis.monte_carlo`` runs the
samples serially (default) or on a Dask ``LocalCluster`` (``--cluster``, extra
``[cluster]``); each result keeps its seed, and the script re-runs one sample from its seed
to show that it is reproduced bitwise. The plot shows every push as a point (force vector,
N) coloured by the outcome.

Run: ``python examples/quadruped_push_monte_carlo.py [--samples 6] [--seed 0]
[--force-range 50 350] [--duration 0.8] [--cluster] [--workers 2] [--out DIR]``
"""
from __future__ import annotations

import os
import time

import numpy as np

from systems.analysis import Simulator, monte_carlo
from quadruped_standing import build_quadruped, stance_height
from _cluster import add_cluster_arguments, executor, executor_name
from _plotting import pyplot, save_figure
from _cli import script_parser

PUSH_START, PUSH_LENGTH = 0.2, 0.1
FORCE_RANGE = (50.0, 350.0)


def draw_push(gen: np.random.Generator, force_range=FORCE_RANGE) -> tuple[float, float]:
    """(magnitude in N, heading in rad) of one push, drawn from ``gen``."""
    return float(gen.uniform(*force_range)), float(gen.uniform(0.0, 2 * np.pi))


class PushedQuadruped:
    """``make_simulator`` for :func:`monte_carlo`: a picklable callable object holding the
    force range (module-level class, so worker processes can rebuild it)."""

    def __init__(self, force_range=FORCE_RANGE):
        self.force_range = tuple(float(f) for f in force_range)

    def __call__(self, gen: np.random.Generator) -> Simulator:
        magnitude, heading = draw_push(gen, self.force_range)
        force = magnitude * np.array([np.cos(heading), np.sin(heading), 0.0])
        sc = build_quadruped(push=(force, PUSH_START, PUSH_LENGTH), log_period=None)
        return Simulator(sc["diagram"], sc["context"])


def trunk_height_and_tilt(sim: Simulator) -> np.ndarray:
    """``[height (m), tilt (rad)]`` of the trunk in the final context (floating base
    q = [qw, qx, qy, qz, x, y, z]; tilt = angle between the trunk's z axis and the vertical)."""
    diagram = sim.get_system()
    plant = diagram.get_subsystem_by_name("quadruped")
    x = plant.get_output_port("state").eval(plant.get_my_context_from_root(sim.get_context()))
    qw, qx, qy, qz, _, _, z = np.asarray(x[:7], dtype=float)
    tilt = float(np.arccos(np.clip(1.0 - 2.0 * (qx * qx + qy * qy), -1.0, 1.0)))
    return np.array([z, tilt])


def stood(height_tilt: np.ndarray) -> bool:
    """Success: trunk within 3 cm of its standing height and tilted less than 0.2 rad."""
    return bool(abs(height_tilt[0] - stance_height()) < 0.03 and height_tilt[1] < 0.2)


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--samples", type=int, default=6, help="number of random pushes simulated")
    parser.add_argument("--seed", type=int, default=0,
                        help="random seed of the push magnitudes and headings")
    parser.add_argument("--force-range", type=float, nargs=2, default=FORCE_RANGE,
                        metavar=("MIN", "MAX"), help="push magnitude range (N)")
    parser.add_argument("--duration", type=float, default=0.8,
                        help="simulated time of each sample (s)")
    add_cluster_arguments(parser)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "output"),
                        help="folder for the plot (PNG) and other outputs")
    args = parser.parse_args(argv)
    # workers import these by module name (this file, found on the examples path)
    import quadruped_push_monte_carlo as this
    make = this.PushedQuadruped(args.force_range)
    t0 = time.perf_counter()
    with executor(args) as client:
        results = monte_carlo(make, this.trunk_height_and_tilt, args.duration, args.samples,
                              seed=args.seed, executor=client)
    wall = time.perf_counter() - t0
    pushes = np.array([draw_push(np.random.default_rng(r.seed), args.force_range)
                       for r in results]).reshape(-1, 2)
    success = np.array([r.ok and stood(r.output) for r in results], dtype=bool)
    failed = [r for r in results if not r.ok]
    print(f"{args.samples} pushes of {args.force_range[0]:.0f}-{args.force_range[1]:.0f} N for "
          f"{PUSH_LENGTH} s, {executor_name(args)} in {wall:.1f} s: "
          f"stood {success.sum()}/{len(results)} "
          f"({100 * success.mean() if len(results) else 0:.0f} %)")
    for r in failed:
        print(f"  sample with seed {r.seed} raised: {r.error.splitlines()[-1]}")
    rerun_ok = None
    if results and results[0].ok:  # any sample is reproduced from its seed alone
        sim = make(np.random.default_rng(results[0].seed))
        sim.advance_to(args.duration)
        rerun_ok = trunk_height_and_tilt(sim).tobytes() == results[0].output.tobytes()
        print(f"re-run of sample 0 from its seed {results[0].seed}: "
              f"{'bitwise identical' if rerun_ok else 'DIFFERENT'}")
    out = {"results": results, "pushes": pushes, "success": success,
           "success_rate": float(success.mean()) if len(results) else float("nan"),
           "rerun_identical": rerun_ok, "png": None}
    plt = pyplot()
    if plt is not None and len(results):
        os.makedirs(args.out, exist_ok=True)
        fig, ax = plt.subplots(figsize=(5.5, 5.5))
        fx, fy = pushes[:, 0] * np.cos(pushes[:, 1]), pushes[:, 0] * np.sin(pushes[:, 1])
        ax.scatter(fx[success], fy[success], c="tab:green", label="stood", s=40)
        ax.scatter(fx[~success], fy[~success], c="tab:red", marker="x", label="fell", s=40)
        for r_ in args.force_range:
            ax.add_patch(plt.Circle((0, 0), r_, fill=False, ls=":", color="0.6"))
        lim = 1.1 * args.force_range[1]
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_aspect("equal")
        ax.set_xlabel("push force x (N)")
        ax.set_ylabel("push force y (N)")
        ax.legend(loc="upper right")
        ax.set_title(f"quadruped under random {PUSH_LENGTH} s pushes: "
                     f"{success.sum()}/{len(results)} stood")
        out["png"] = save_figure(fig, os.path.join(args.out, "quadruped_push_monte_carlo.png"))
    return out


if __name__ == "__main__":
    main()

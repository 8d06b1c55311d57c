"""Region of attraction of the acrobot's LQR balance controller, estimated on a grid.

The closed loop of ``acrobot_lqr.py`` (Spong's acrobot, LQR designed from the exact
linearization at the upright equilibrium) is simulated from every point of an ``N x N`` grid
of initial joint angles around upright (zero initial velocity) with
``systems.analysis.sweep``, compiled (CVODES) so that each run takes a few hundredths of a
second. A run succeeds when the state ends within 0.01 of upright after ``--duration``
seconds. The runs go serially by default or on a Dask ``LocalCluster`` (``--cluster``, extra
``[cluster]``); the plot colours each grid cell by the final distance to upright (log scale)
and outlines the estimated region of attraction.

Run: ``python examples/acrobot_region_of_attraction.py [--grid 9] [--span1 0.35]
[--span2 0.7] [--duration 4] [--cluster] [--workers 2] [--out DIR]``
"""
from __future__ import annotations

import functools
import os
import time

import numpy as np

from systems.analysis import sweep
from systems.analysis.compiled import CompiledSimulator
from acrobot_lqr import build
from _cluster import add_cluster_arguments, executor, executor_name
from _plotting import pyplot, save_figure
from _cli import script_parser

UPRIGHT = np.array([np.pi, 0.0, 0.0, 0.0])
TOLERANCE = 1e-2


@functools.lru_cache(maxsize=1)
def closed_loop():
    """The acrobot + LQR diagram, built once per process (a diagram holds no run state:
    every run gets its own context)."""
    diagram, _, _, _ = build(log_period=None)
    return diagram


def make_simulator(params: dict) -> CompiledSimulator:
    """A compiled simulator of the closed loop from upright + (``dq1``, ``dq2``) at rest."""
    diagram = closed_loop()
    ctx = diagram.create_default_context()
    ctx.set_continuous_state(UPRIGHT + [params["dq1"], params["dq2"], 0.0, 0.0])
    return CompiledSimulator(diagram, ctx, integrator="cvodes", accuracy=1e-8)


def distance_to_upright(sim) -> float:
    """Largest deviation of the final state from upright (theta1 taken modulo 2 pi)."""
    x = np.array(sim.get_context().get_continuous_state_vector(), dtype=float)
    dx = x - UPRIGHT
    dx[0] = (dx[0] + np.pi) % (2 * np.pi) - np.pi
    return float(np.max(np.abs(dx)))


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--grid", type=int, default=9, help="grid points per axis")
    parser.add_argument("--span1", type=float, default=0.35, help="theta1 offsets +-span (rad)")
    parser.add_argument("--span2", type=float, default=0.7, help="theta2 offsets +-span (rad)")
    parser.add_argument("--duration", type=float, default=4.0,
                        help="simulated time of each run (s)")
    add_cluster_arguments(parser)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "output"),
                        help="folder for the plot (PNG) and other outputs")
    args = parser.parse_args(argv)
    if args.grid < 2:
        parser.error("--grid must be at least 2")
    dq1 = np.linspace(-args.span1, args.span1, args.grid)
    dq2 = np.linspace(-args.span2, args.span2, args.grid)
    # workers import the functions by module name (this file, found on the examples path)
    import acrobot_region_of_attraction as this
    t0 = time.perf_counter()
    with executor(args) as client:
        results = sweep(this.make_simulator, {"dq1": dq1, "dq2": dq2},
                        this.distance_to_upright, args.duration, executor=client,
                        chunk_size=max(1, args.grid))
    wall = time.perf_counter() - t0
    dist = np.array([r.output if r.ok else np.inf for r in results]).reshape(args.grid,
                                                                             args.grid)
    success = dist < TOLERANCE
    print(f"{args.grid}x{args.grid} initial states within +-{args.span1} rad (theta1) and "
          f"+-{args.span2} rad (theta2) of upright, {args.duration} s each, "
          f"{executor_name(args)} in {wall:.1f} s: {success.sum()}/{success.size} balanced "
          f"({100 * success.mean():.0f} %)")
    for r in results:
        if not r.ok:
            print(f"  run {r.params} raised: {r.error.splitlines()[-1]}")
    out = {"dq1": dq1, "dq2": dq2, "distance": dist, "success": success, "png": None}
    plt = pyplot()
    if plt is not None:
        os.makedirs(args.out, exist_ok=True)
        fig, ax = plt.subplots(figsize=(6.5, 5))
        shown = np.log10(np.clip(np.where(np.isfinite(dist), dist, 1e3), 1e-12, 1e3))
        mesh = ax.pcolormesh(dq2, dq1, shown, shading="nearest", cmap="viridis_r")
        fig.colorbar(mesh, ax=ax, label="log10 final distance to upright")
        ax.contour(dq2, dq1, success.astype(float), levels=[0.5], colors="white")
        ax.scatter(np.tile(dq2, args.grid)[success.ravel()],
                   np.repeat(dq1, args.grid)[success.ravel()], c="white", s=8,
                   label=f"balanced (< {TOLERANCE})")
        ax.set_xlabel("initial theta2 offset (rad)")
        ax.set_ylabel("initial theta1 - pi (rad)")
        ax.legend(loc="upper right", fontsize=8)
        ax.set_title("acrobot LQR: region of attraction (zero initial velocity)")
        out["png"] = save_figure(fig, os.path.join(args.out,
                                                   "acrobot_region_of_attraction.png"))
    return out


if __name__ == "__main__":
    main()

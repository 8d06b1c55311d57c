"""Continuous-time contact (``RigidBodySystem``): wall time, CPU time and integrator work
for one simulated second of a box on a slope and on flat ground.

Scenarios (a 0.2 m cube of 1 kg, mu = 0.5, RK45 at ``--accuracy``): released on a 35 degree
slope whose downhill direction is turned 30 degrees about z (it slides at
g (sin a - mu cos a)), released on a 25 degree slope (it sticks), launched at 1 m/s at a
45 degree heading on flat ground (it slides, stops at v0 / (mu g) and sticks). Rounds are
interleaved (one run of every scenario per round, each from a fresh context, the system
built once), BLAS is pinned to one thread, and the table gives medians: wall and process
CPU time per run, their ratio to the simulated second (below 1: faster than real time),
integrator steps, derivative evaluations, witness triggers, the final contact mode and the
error of the final velocity against the closed form.

Run: ``python benchmarks/bench_continuous_contact.py [--rounds 7] [--accuracy 1e-8]``
"""
from __future__ import annotations

import statistics
import time

import numpy as np
import os  # noqa: E402
import sys  # noqa: E402
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from _cli import script_parser  # noqa: E402

G, MU, SIZE, MASS, T_FINAL = 9.81, 0.5, 0.2, 1.0, 1.0


def _box(gravity):
    from multibody import Free, RigidBodyTree
    from multibody.constraints import PointContactConstraint
    from multibody.geometry import Box, Halfspace
    from multibody.plants import RigidBodySystem

    tree = RigidBodyTree("box", gravity=gravity)
    tree.add_body("box", MASS, inertia=np.eye(3) * MASS * SIZE ** 2 / 6.0)
    tree.add_joint(Free("float", "world", "box"))
    tree.add_collision_geometry("box", Box((SIZE,) * 3), name="box_geom")
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    return RigidBodySystem(tree, constraints=[PointContactConstraint(tree, MU)])


def _slope(angle_deg, azimuth_deg):
    a, z = np.deg2rad(angle_deg), np.deg2rad(azimuth_deg)
    down = np.array([np.cos(z), np.sin(z), 0.0])
    return a, down, G * (np.sin(a) * down - np.cos(a) * np.array([0.0, 0.0, 1.0]))


def scenarios():
    """``(name, system, initial velocity, expected final velocity)`` per scenario."""
    out = []
    a, down, g = _slope(35.0, 30.0)
    out.append(("slope 35 deg, azimuth 30: slides", _box(g), np.zeros(3),
                G * (np.sin(a) - MU * np.cos(a)) * T_FINAL * down))
    a, down, g = _slope(25.0, 30.0)
    out.append(("slope 25 deg, azimuth 30: sticks", _box(g), np.zeros(3), np.zeros(3)))
    d = np.array([np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0])
    out.append(("flat, 1 m/s at 45 deg: slides, stops", _box((0.0, 0.0, -G)), d, np.zeros(3)))
    return out


def run_once(system, v0, accuracy):
    """One simulated second from a fresh context: (wall s, CPU s, statistics, mode, v)."""
    from systems.analysis import Simulator

    ctx = system.create_default_context()
    system.set_positions(ctx, [1, 0, 0, 0, 0, 0, SIZE / 2])
    system.set_velocities(ctx, np.concatenate([np.zeros(3), v0]))
    w0, c0 = time.perf_counter(), time.process_time()
    sim = Simulator(system, ctx, integrator="RK45", accuracy=accuracy, max_step=0.1)
    sim.initialize()
    sim.advance_to(T_FINAL)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    mode = system.modes(ctx)[0]
    return wall, cpu, sim.get_statistics(), (mode[0] if mode else "separated"), \
        np.asarray(system.get_velocities(ctx))[3:6]


def main(argv=None):
    parser = script_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=7,
                        help="timed runs per scenario (the median is reported)")
    parser.add_argument("--accuracy", type=float, default=1e-8, help="integrator accuracy (RK45)")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        cases = scenarios()
        for _, s, v0, _ in cases:                     # warm up (compiled functions loaded)
            run_once(s, v0, args.accuracy)
        runs = {name: [] for name, *_ in cases}
        for r in range(args.rounds):                  # interleaved rounds
            for name, s, v0, _ in cases:
                runs[name].append(run_once(s, v0, args.accuracy))
            print(f"round {r + 1}/{args.rounds} done", flush=True)
    print(f"\nRigidBodySystem, box on a slope / on flat ground, {T_FINAL:g} s simulated, RK45 "
          f"accuracy {args.accuracy:g}, medians of {args.rounds} interleaved rounds, 1 BLAS thread")
    head = (f"{'scenario':40s} {'wall ms':>8s} {'CPU ms':>8s} {'wall/sim':>9s} {'steps':>6s} "
            f"{'f evals':>8s} {'witness':>8s} {'mode':>6s} {'|v - v_exact|':>14s}")
    print(head)
    print("-" * len(head))
    for name, _, _, v_exact in cases:
        rs = runs[name]
        wall = statistics.median(r[0] for r in rs)
        cpu = statistics.median(r[1] for r in rs)
        st = rs[-1][2]
        err = float(np.max(np.abs(rs[-1][4] - v_exact)))
        print(f"{name:40s} {wall * 1e3:8.1f} {cpu * 1e3:8.1f} {wall / T_FINAL:9.3f} "
              f"{st['steps']:6d} {st['derivative_evaluations']:8d} {st['witness_triggers']:8d} "
              f"{rs[-1][3]:>6s} {err:14.2e}")


if __name__ == "__main__":
    main()

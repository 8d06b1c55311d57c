"""Acrobot balanced by LQR for 10 s from a 0.05 rad perturbation: wall time per run.

Compares the interpreted Simulator (error-controlled RK3), compiled simulation (CVODES and a
compiled fixed-step RK3 loop) and, where installed, Drake's AcrobotPlant + LQR with Drake's
default RK3 integrator at the same accuracy. Each row: median wall time of repeated
``advance_to(10)`` runs from a fresh context (building and compiling excluded and reported
apart), the ratio to Drake's, and the final-state error against a tight reference.

Run: ``python benchmarks/bench_acrobot_lqr.py [--repeats 7] [--accuracy 1e-6]``
"""
from __future__ import annotations

import importlib.util
import os
import statistics
import time
import warnings

import numpy as np
from scipy.integrate import solve_ivp
import sys  # noqa: E402
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from _cli import script_parser  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
T_FINAL, PERTURBATION = 10.0, 0.05
Q, R = np.diag([10.0, 10.0, 1.0, 1.0]), 1.0


def _load_example():
    import sys
    sys.path.insert(0, os.path.join(HERE, "..", "examples"))  # for examples/_plotting.py
    spec = importlib.util.spec_from_file_location("acrobot_lqr", os.path.join(HERE, "..", "examples", "acrobot_lqr.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _x0():
    return [np.pi + PERTURBATION, -PERTURBATION, 0.0, 0.0]


def _time(run, repeats):
    times = []
    for _ in range(repeats):
        setup = run()
        t0 = time.perf_counter()
        final = setup()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), final


def dynablocks_rows(ex, accuracy, repeats):
    from systems.analysis import Simulator
    from systems.analysis.compiled import CompiledSimulator
    from systems.symbolic import to_casadi

    diagram, plant, ctrl, _ = ex.build(np.diag(Q).tolist(), R, log_period=None)  # no logging, as Drake
    cs = to_casadi(diagram)
    p = diagram.create_default_context().parameters
    # cs.f returns a casadi DM: convert it with np.asarray (np.ravel on a DM is casadi's
    # deprecated numpy-on-casadi path, a 20-line FutureWarning since casadi 3.8)
    ref = solve_ivp(lambda t, x: np.asarray(cs.f(t, x, [], [], p), float).ravel(), (0, T_FINAL),
                    _x0(), method="DOP853",
                    rtol=1e-13, atol=1e-13).y[:, -1]
    rows = []

    def make(kind, **kw):
        sims = {}

        def run():
            ctx = diagram.create_default_context()
            ctx.set_continuous_state(_x0())
            if kind == "interpreted":
                sim = Simulator(diagram, ctx, **kw)
            else:  # one simulator, its compiled code reused across runs (as a user would)
                sim = sims.get("sim")
                if sim is None:
                    sim = sims["sim"] = CompiledSimulator(diagram, ctx, **kw)
                sim.reset_context(ctx)
            sim.initialize()

            def go():
                sim.advance_to(T_FINAL)
                return np.array(ctx.continuous_state)
            return go
        return run

    t_build = time.perf_counter()
    make("compiled", integrator="runge_kutta3", max_step=1e-3)()
    build_rk3 = time.perf_counter() - t_build
    configs = [
        ("dynablocks interpreted RK3", "interpreted", dict(integrator="runge_kutta3", accuracy=accuracy)),
        ("dynablocks compiled CVODES", "compiled", dict(integrator="cvodes", accuracy=accuracy)),
        ("dynablocks compiled RK3 h=1e-3", "compiled", dict(integrator="runge_kutta3", max_step=1e-3)),
    ]
    for name, kind, kw in configs:
        med, final = _time(make(kind, **kw), repeats)
        rows.append((name, med, float(np.max(np.abs(final - ref)))))
    return rows, ref, build_rk3


def drake_rows(accuracy, repeats, ref):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from pydrake.all import DiagramBuilder, LinearQuadraticRegulator, Simulator
            from pydrake.examples import AcrobotPlant
    except ImportError:
        return []
    builder = DiagramBuilder()
    plant = builder.AddSystem(AcrobotPlant())
    pctx = plant.CreateDefaultContext()
    pctx.SetContinuousState([np.pi, 0.0, 0.0, 0.0])
    plant.GetInputPort("elbow_torque").FixValue(pctx, [0.0])
    ctrl = builder.AddSystem(LinearQuadraticRegulator(plant, pctx, Q, [[R]]))
    builder.Connect(plant.get_output_port(0), ctrl.get_input_port(0))
    builder.Connect(ctrl.get_output_port(0), plant.get_input_port(0))
    diagram = builder.Build()

    def run():
        sim = Simulator(diagram)
        sim.get_mutable_integrator().set_target_accuracy(accuracy)
        ctx = sim.get_mutable_context()
        ctx.SetContinuousState(_x0())
        sim.Initialize()

        def go():
            sim.AdvanceTo(T_FINAL)
            return np.array(ctx.get_continuous_state_vector().CopyToVector())
        return go

    med, final = _time(run, repeats)
    return [("Drake AcrobotPlant + LQR, RK3", med, float(np.max(np.abs(final - ref))))]


def main(argv=None):
    parser = script_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=7,
                        help="timed runs per row (the median is reported)")
    parser.add_argument("--accuracy", type=float, default=1e-6,
                        help="integrator accuracy of the error-controlled rows")
    args = parser.parse_args(argv)
    ex = _load_example()
    rows, ref, build_time = dynablocks_rows(ex, args.accuracy, args.repeats)
    drake = drake_rows(args.accuracy, args.repeats, ref)
    base = drake[0][1] if drake else None
    print(f"Acrobot + LQR, {T_FINAL:g} s, accuracy {args.accuracy:g}, median of {args.repeats} runs")
    print(f"{'simulator':38s} {'ms/run':>10s} {'vs Drake':>9s} {'final err':>10s}")
    for name, med, err in rows + drake:
        ratio = f"{med / base:8.2f}x" if base else "      n/a"
        print(f"{name:38s} {med * 1e3:10.3f} {ratio} {err:10.1e}")
    if not drake:
        print("(Drake not installed: pip install drake for the reference row)")
    print(f"build + compile of the compiled RK3 loop: {build_time:.2f} s (once; cached on disk)")


if __name__ == "__main__":
    main()

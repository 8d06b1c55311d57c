"""Acrobot balanced by LQR for 10 s from a 0.05 rad perturbation: wall time per run.

Compares the interpreted Simulator (error-controlled RK3: the blocks' Python callbacks; the
integrator's loop in C where a compiler is found, ``systems/analysis/_native_runs.py``, the
same numbers as its Python loop), compiled simulation (CVODES and a compiled fixed-step RK3
loop) and, where installed, Drake's AcrobotPlant + LQR with Drake's
default RK3 integrator at the same accuracy. Each row: median wall time of repeated
``advance_to(10)`` runs from a fresh context (building and compiling excluded and reported
apart), taken in interleaved rounds (one run of every row per round, so a change of the
machine's load affects all rows alike), the ratio to Drake's (of the medians, and the median
of the per-round ratios), and the final-state error against a tight reference. BLAS runs on
one thread. Below the table: where the interpreted run's time goes (the blocks' own
callbacks, timed alone, against the rest: framework, integrator, event loop).

Run: ``python benchmarks/bench_acrobot_lqr.py [--repeats 7] [--accuracy 1e-6] [--cpu-time]``
"""
from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import time
import warnings

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
sys.path.append(os.path.dirname(os.path.abspath(__file__)))
from _cli import script_parser  # noqa: E402
from _callback_time import callback_time  # noqa: E402

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


def _time_rounds(makers: dict, repeats: int, clock=time.perf_counter) -> dict:
    """``{name: (times, last final state)}``: ``repeats`` rounds, each timing one run of
    every row in turn (setup, e.g. context and simulator creation, excluded)."""
    out = {name: ([], None) for name in makers}
    for _ in range(repeats):
        for name, run in makers.items():
            go = run()
            t0 = clock()
            final = go()
            out[name] = (out[name][0] + [clock() - t0], final)
    return out


def dynablocks_makers(ex, accuracy, clock=time.perf_counter):
    """The rows' run makers, the reference final state, the compiled build time and the
    interpreted run's callback breakdown."""
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
    makers = {name: make(kind, **kw) for name, kind, kw in configs}

    def context_at():
        ctx = diagram.create_default_context()
        ctx.set_continuous_state(_x0())
        return ctx

    breakdown = callback_time(diagram, lambda: make("interpreted", **configs[0][2])()(), context_at,
                              clock=clock)
    return makers, ref, build_rk3, breakdown


def drake_maker(accuracy):
    """Drake's run maker, or None without pydrake."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from pydrake.all import DiagramBuilder, LinearQuadraticRegulator, Simulator
            from pydrake.examples import AcrobotPlant
    except ImportError:
        return None
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
    return run


def main(argv=None):
    parser = script_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=7,
                        help="timed runs per row (the median is reported)")
    parser.add_argument("--accuracy", type=float, default=1e-6,
                        help="integrator accuracy of the error-controlled rows")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time with process CPU time instead of wall time (steadier on a "
                             "loaded machine)")
    args = parser.parse_args(argv)
    clock = time.process_time if args.cpu_time else time.perf_counter
    ex = _load_example()
    makers, ref, build_time, (cb_time, nfev, per) = dynablocks_makers(ex, args.accuracy, clock)
    drake = drake_maker(args.accuracy)
    drake_name = "Drake AcrobotPlant + LQR, RK3"
    if drake is not None:
        makers[drake_name] = drake
    for run in makers.values():   # warm up (imports, caches)
        run()()
    timed = _time_rounds(makers, args.repeats, clock)
    base = statistics.median(timed[drake_name][0]) if drake else None
    print(f"Acrobot + LQR, {T_FINAL:g} s, accuracy {args.accuracy:g}, median of {args.repeats} "
          f"interleaved rounds ({'CPU' if args.cpu_time else 'wall'} time)")
    print(f"{'simulator':38s} {'ms/run':>10s} {'vs Drake':>9s} {'paired':>7s} {'final err':>10s}")
    for name, (times, final) in timed.items():
        med = statistics.median(times)
        ratio = f"{med / base:8.2f}x" if base else "      n/a"
        paired = (f"{statistics.median(t / d for t, d in zip(times, timed[drake_name][0])):6.2f}x"
                  if base else "    n/a")
        print(f"{name:38s} {med * 1e3:10.3f} {ratio} {paired} "
              f"{float(np.max(np.abs(final - ref))):10.1e}")
    if drake is None:
        print("(Drake not installed: pip install drake for the reference row)")
    interp = statistics.median(timed["dynablocks interpreted RK3"][0])
    print(f"where the interpreted run's time goes: {nfev} derivative evaluations; the blocks' "
          f"own callbacks {cb_time * 1e3:.2f} ms "
          f"({', '.join(f'{k} {n} x {dt * 1e6:.2f} us' for k, (n, dt) in per.items())}); "
          f"the rest (framework, integrator, event loop) {(interp - cb_time) * 1e3:.2f} ms "
          f"({(interp - cb_time) / nfev * 1e6:.2f} us per evaluation)")
    print(f"build + compile of the compiled RK3 loop: {build_time:.2f} s (once; cached on disk)")


if __name__ == "__main__":
    main()

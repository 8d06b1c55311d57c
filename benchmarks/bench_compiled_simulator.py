"""Compiled simulation from the first call: construction, cold start and ``compiled="auto"``.

Two scenes, 10 s each, every row timed *with construction* (context, Simulator, run):

* mass-spring-damper + PID (``benchmarks/bench_simulator.py``'s diagram), relative
  tolerance 1e-6 (absolute 1e-9);
* the acrobot balanced by LQR from a 0.05 rad perturbation (``examples/acrobot_lqr.py``),
  relative tolerance 1e-6.

Rows per scene: the interpreted Simulator (error-controlled RK3); ``compiled=True`` (CVODES)
built anew for each run, its conversion and functions reused from the structure table
(``systems/analysis/_compiled_reuse.py``); ``compiled="auto"`` with the interpreted row's
arguments (it picks CVODES at the same tolerances), warm and *cold* (an empty
structure table for each run: conversion and integrator built again); Drake's Simulator (RK3,
same accuracy, its Simulator built per run) where ``pydrake`` imports. Construction alone
(``Simulator(diagram, compiled=True, ...)`` on a converted structure, context given) is
reported in microseconds; ``--cold-c`` adds one fixed-step run whose loop is compiled to C
with an empty disk cache (the cold start of a compiled fixed-step scheme); ``--cpu-time``
times the rows with process CPU time (steadier on a shared machine).

Rounds are interleaved (every row once per round, in a seeded random order), times are medians,
BLAS is pinned to one thread. ``--examples`` adds the survey of ``compiled="auto"`` on the
examples: the mode it picks (or the fallback note), the first (cold) run's wall time against
the interpreted run's, and the largest difference of final states and of log samples taken
at the same times (relative to the logged values' scale).

Run: ``.venv/bin/python benchmarks/bench_compiled_simulator.py [--rounds 21] [--examples]
[--cold-c]``
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import importlib.util  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from typing import Callable, Dict, List, Optional  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
for _p in (HERE, os.path.join(HERE, "..", "examples")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from _cli import script_parser  # noqa: E402
from systems.analysis import Simulator  # noqa: E402
from systems.analysis import CompiledFallbackWarning  # noqa: E402
from systems.analysis import compiled as reuse  # noqa: E402  (empty_table, reuse_statistics)
from systems.primitives import VectorLogSink  # noqa: E402

T_END = 10.0
RTOL, ATOL = 1e-6, 1e-9
ACRO_Q, ACRO_R, ACRO_DX = (10.0, 10.0, 1.0, 1.0), 1.0, 0.05

#: Examples surveyed by ``--examples``: name -> quick arguments (``--out`` is added).
EXAMPLES = {
    "mass_spring_damper_pid": [],
    "quickstart": [],
    "acrobot_lqr": ["--duration", "4"],
    "bouncing_ball": ["--bounces", "10"],
    "muscle_elbow": [],
    "four_bar_continuous": ["--duration", "1.0"],
    "slider_crank": ["--duration", "0.5"],
    "sliding_box": ["--duration", "0.25"],
    "urdf_swing": ["--duration", "1.5"],
    "four_bar_time_stepping": ["--duration", "0.5"],
    "contact_spheres_boxes": ["--duration", "0.6"],
    "quadruped_standing": ["--duration", "0.6"],
}


# ---------------------------------------------------------------------- scenes
def load_example(name: str):
    """A fresh import of ``examples/<name>.py`` (its ``main`` not run)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}",
                                                  os.path.join(HERE, "..", "examples", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def msd_scene() -> dict:
    """Mass-spring-damper + PID: the diagram, a context factory, Drake's run (or None)."""
    import bench_simulator as bs
    diagram = bs.build_diagram(log=False)
    drake = bs.make_drake_run()  # returns (final state, steps)
    return {"name": "mass-spring-damper + PID", "diagram": diagram,
            "context": diagram.create_default_context,
            "drake": None if drake is None else (lambda: drake()[0]),
            "kw": dict(integrator="runge_kutta3", accuracy=RTOL, atol=ATOL, max_step=np.inf)}


def acrobot_scene() -> dict:
    """The acrobot balanced by LQR (examples/acrobot_lqr.py) and Drake's AcrobotPlant + LQR."""
    ex = load_example("acrobot_lqr")
    diagram = ex.build(ACRO_Q, ACRO_R, log_period=None)[0]
    x0 = [np.pi + ACRO_DX, -ACRO_DX, 0.0, 0.0]

    def context():
        ctx = diagram.create_default_context()
        ctx.set_continuous_state(x0)
        return ctx
    return {"name": "acrobot + LQR", "diagram": diagram, "context": context,
            "drake": drake_acrobot(x0), "kw": dict(integrator="runge_kutta3", accuracy=RTOL)}


def drake_acrobot(x0) -> Optional[Callable]:
    """Drake's AcrobotPlant + LQR, RK3 at RTOL, a Simulator per run (None without pydrake)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from pydrake.all import DiagramBuilder, LinearQuadraticRegulator
            from pydrake.all import Simulator as DrakeSimulator
            from pydrake.examples import AcrobotPlant
    except ImportError:
        return None
    b = DiagramBuilder()
    plant = b.AddSystem(AcrobotPlant())
    pctx = plant.CreateDefaultContext()
    pctx.SetContinuousState([np.pi, 0.0, 0.0, 0.0])
    plant.GetInputPort("elbow_torque").FixValue(pctx, [0.0])
    ctrl = b.AddSystem(LinearQuadraticRegulator(plant, pctx, np.diag(ACRO_Q), [[ACRO_R]]))
    b.Connect(plant.get_output_port(0), ctrl.get_input_port(0))
    b.Connect(ctrl.get_output_port(0), plant.get_input_port(0))
    diagram = b.Build()

    def run():
        sim = DrakeSimulator(diagram)
        sim.get_mutable_integrator().set_target_accuracy(RTOL)
        sim.get_mutable_context().SetContinuousState(x0)
        sim.AdvanceTo(T_END)
        return np.array(sim.get_context().get_continuous_state_vector().CopyToVector())
    return run


# ---------------------------------------------------------------------- rows
def scene_rows(scene: dict) -> Dict[str, Callable[[], object]]:
    """Row name -> a run (construction included) returning the final continuous state."""
    d, make_ctx, kw = scene["diagram"], scene["context"], scene["kw"]
    cvodes = dict(integrator="cvodes", accuracy=RTOL, atol=kw.get("atol"),
                  max_step=kw.get("max_step", 0.1))

    def run(**sim_kw):
        def go():
            ctx = make_ctx()
            Simulator(d, ctx, **sim_kw).advance_to(T_END)
            return np.array(ctx.continuous_state)
        return go

    def cold():
        with reuse.empty_table():
            return run(compiled="auto", **kw)()

    rows = {"interpreted RK3": run(**kw),
            "compiled=True CVODES (built per run)": run(compiled=True, **cvodes),
            'compiled="auto" (warm)': run(compiled="auto", **kw),
            'compiled="auto" (cold: new structure)': cold}
    if scene["drake"] is not None:
        rows["Drake Simulator RK3"] = scene["drake"]
    return rows


def construction_us(scene: dict, rounds: int) -> float:
    """Median microseconds of ``Simulator(diagram, ctx, compiled=True)`` on a converted
    structure (the context made beforehand)."""
    d, kw = scene["diagram"], dict(integrator="cvodes", accuracy=RTOL)
    Simulator(d, scene["context"](), compiled=True, **kw)
    times = []
    for _ in range(max(rounds, 20)):
        ctx = scene["context"]()
        t0 = time.perf_counter()
        Simulator(d, ctx, compiled=True, **kw)
        times.append(time.perf_counter() - t0)
    return 1e6 * statistics.median(times)


def cold_fixed_step_seconds(scene: dict) -> float:
    """Wall seconds of one ``compiled="auto"`` fixed-step RK3 run (h = 1e-3) with an empty
    structure table and an empty disk cache (a private temporary ``DYNABLOCKS_CACHE_DIR``):
    the C compilation of the unrolled loop included."""
    saved = os.environ.get("DYNABLOCKS_CACHE_DIR")
    with tempfile.TemporaryDirectory() as cache, reuse.empty_table():
        os.chmod(cache, 0o700)
        os.environ["DYNABLOCKS_CACHE_DIR"] = cache
        try:
            t0 = time.perf_counter()
            Simulator(scene["diagram"], scene["context"](), compiled="auto",
                      integrator="runge_kutta3", fixed_step=True, max_step=1e-3).advance_to(T_END)
            return time.perf_counter() - t0
        finally:
            if saved is None:
                os.environ.pop("DYNABLOCKS_CACHE_DIR", None)
            else:
                os.environ["DYNABLOCKS_CACHE_DIR"] = saved


def time_interleaved(rows: Dict[str, Callable], rounds: int,
                     clock=time.perf_counter) -> Dict[str, List[float]]:
    """Each row once per round, in a new (seeded) random order each round, so that no row
    always follows the same one (a long interpreted run leaves the CPU caches cold for the
    next row); returns the times."""
    names = list(rows)
    out: Dict[str, List[float]] = {n: [] for n in names}
    rng = np.random.default_rng(0)
    for _ in range(rounds):
        for n in [names[i] for i in rng.permutation(len(names))]:
            t0 = clock()
            rows[n]()
            out[n].append(clock() - t0)
    return out


# ---------------------------------------------------------------------- examples survey
class Recorder:
    """Stand-in for an example module's ``Simulator``: adds ``compiled=mode`` (unless the
    example chose) and keeps every simulator made."""

    def __init__(self, mode) -> None:
        self.mode, self.sims = mode, []

    def __call__(self, *args, **kwargs):
        kwargs.setdefault("compiled", self.mode)
        sim = Simulator(*args, **kwargs)
        self.sims.append(sim)
        return sim


def run_example(name: str, args: List[str], mode) -> dict:
    """Run ``examples/<name>.py``'s ``main(args)`` with its Simulators made with
    ``compiled=mode``; returns the simulators' final states and logs, the wall time and the
    fallback notes."""
    ex = load_example(name)
    rec = Recorder(mode)
    ex.Simulator = rec
    with tempfile.TemporaryDirectory() as out, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        ex.main(list(args) + ["--out", out])
        seconds = time.perf_counter() - t0
    notes = [str(w.message) for w in caught if issubclass(w.category, CompiledFallbackWarning)]
    runs = []
    for sim in rec.sims:
        ctx = sim.get_context()
        logs = {}
        for leaf in sim.get_system().leaf_systems() if hasattr(sim, "get_system") else []:
            if isinstance(leaf, VectorLogSink):
                log = leaf.find_log(ctx)
                logs[leaf.name] = (np.array(log.sample_times()), np.array(log.data()))
        runs.append({"kind": type(sim).__name__, "t": float(ctx.time),
                     "x": np.array(ctx.continuous_state, float),
                     "xd": np.array(ctx.discrete_state, float), "logs": logs})
    return {"seconds": seconds, "notes": notes, "runs": runs}


def compare_runs(a: dict, b: dict) -> dict:
    """Largest differences between two :func:`run_example` results: final states (absolute)
    and log samples at the times both logs hold (relative to each log's largest value)."""
    state, logged, samples = 0.0, 0.0, 0
    for ra, rb in zip(a["runs"], b["runs"]):
        for k in ("x", "xd"):
            if ra[k].size:
                state = max(state, float(np.max(np.abs(ra[k] - rb[k]))))
        for name, (ta, ya) in ra["logs"].items():
            tb, yb = rb["logs"][name]
            ia, ib = np.nonzero(np.abs(ta[:, None] - tb[None, :]) <= 1e-12 * max(1.0, T_END))
            if ia.size:
                scale = max(1.0, float(np.max(np.abs(ya))))
                logged = max(logged, float(np.max(np.abs(ya[:, ia] - yb[:, ib]))) / scale)
                samples += ia.size
    return {"state": state, "log": logged, "samples": samples,
            "same_count": len(a["runs"]) == len(b["runs"])}


def survey(names: List[str]) -> List[dict]:
    """``compiled="auto"`` against the interpreted run on the examples (module docstring)."""
    rows = []
    for name in names:
        plain = run_example(name, EXAMPLES[name], False)
        with reuse.empty_table():
            auto = run_example(name, EXAMPLES[name], "auto")
        kinds = sorted({r["kind"] for r in auto["runs"]}) or ["(no Simulator)"]
        rows.append(dict(name=name, kinds=kinds, notes=auto["notes"], plain=plain["seconds"],
                         auto=auto["seconds"], **compare_runs(plain, auto)))
    return rows


def main(argv=None) -> dict:
    """Print the tables; returns ``{"scenes": {...}, "examples": [...]}``."""
    parser = script_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=21, help="interleaved rounds (medians)")
    parser.add_argument("--examples", action="store_true", help="add the examples survey")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time the scene rows with process CPU time (steadier on a shared "
                             "machine: time-slicing with other processes is not counted)")
    parser.add_argument("--cold-c", action="store_true",
                        help="add one fixed-step run compiled to C with an empty disk cache")
    parser.add_argument("--scenes", default="msd,acrobot", help="comma-separated: msd, acrobot")
    args = parser.parse_args(argv)
    result: dict = {"scenes": {}, "examples": []}
    makers = {"msd": msd_scene, "acrobot": acrobot_scene}
    for key in [s for s in args.scenes.split(",") if s]:
        scene = makers[key]()
        rows = scene_rows(scene)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            finals = {n: np.asarray(fn()) for n, fn in rows.items()}  # warm up
            times = time_interleaved(rows, args.rounds,
                                     time.process_time if args.cpu_time else time.perf_counter)
        us = construction_us(scene, args.rounds)
        drake = statistics.median(times["Drake Simulator RK3"]) if scene["drake"] else None
        ref = finals["interpreted RK3"]
        print(f"\n{scene['name']}, {T_END:g} s, rtol {RTOL:g}: median of {args.rounds} "
              f"interleaved rounds ({'CPU' if args.cpu_time else 'wall'} time), construction "
              f"included (BLAS on one thread)")
        print(f"{'row':42s} {'median [ms]':>11s} {'vs Drake':>8s} {'paired':>7s} "
              f"{'|x - interpreted|':>17s}")
        table = {}
        for n, ts in times.items():
            med = statistics.median(ts)
            vs = f"{med / drake:8.2f}" if drake else "     n/a"
            paired = statistics.median(a / b for a, b in zip(ts, times["Drake Simulator RK3"])) \
                if drake else None
            pv = f"{paired:7.2f}" if drake else "    n/a"
            diff = float(np.max(np.abs(finals[n][:ref.size] - ref))) if finals[n].size >= ref.size else float("nan")
            print(f"{n:42s} {1e3 * med:11.3f} {vs} {pv} {diff:17.2e}")
            table[n] = {"seconds": med, "vs_drake": med / drake if drake else None,
                        "paired_vs_drake": paired}
        print(f"construction alone, compiled=True on a converted structure: {us:.1f} us")
        cold_c = cold_fixed_step_seconds(scene) if args.cold_c else None
        if cold_c is not None:
            print(f'compiled="auto" fixed-step RK3 h=1e-3, empty disk cache (C compiled), one '
                  f"run: {cold_c:.2f} s")
        if drake:
            print("vs Drake: ratio of the medians; paired: median over rounds of the ratio "
                  "to Drake's run in the same round")
        else:
            print("(pydrake not installed: no Drake row)")
        result["scenes"][key] = {"rows": table, "construction_us": us, "cold_c_seconds": cold_c}
    if args.examples:
        rows = survey(list(EXAMPLES))
        print('\ncompiled="auto" on the examples (first run: cold, structure table cleared)')
        print(f"{'example':24s} {'mode':28s} {'interp. [s]':>11s} {'auto [s]':>9s} "
              f"{'|dx| final':>10s} {'log rel.':>9s} {'samples':>7s}")
        for r in rows:
            print(f"{r['name']:24s} {','.join(r['kinds'])[:28]:28s} {r['plain']:11.3f} "
                  f"{r['auto']:9.3f} {r['state']:10.1e} {r['log']:9.1e} {r['samples']:7d}")
            for note in sorted(set(r["notes"])):
                print(f"    note: {note[:150]}")
        result["examples"] = rows
    return result


if __name__ == "__main__":
    main()

"""Mass-spring-damper under PID: this Simulator against a hand-written scipy loop,
python-control and Drake (where installed).

Plant m x'' + c x' + k x = u with m = 1, c = 0.5, k = 2; PidController(kp=10, ki=5, kd=2)
(Drake's convention, u = kp e + ki int(e) + kd edot) tracking a unit step from rest;
10 s; relative tolerance 1e-6 (absolute 1e-9). Rows:

* ``Simulator RK45``: the diagram (a MassSpringDamper LeafSystem, PidController,
  ConstantVectorSource) with scipy's RK45 stepped by the Simulator, without and with a
  per-step ``LogVectorOutput`` of the plant state (the hand-written loop also stores every
  step), and with ``systems.primitives.LinearSystem`` as the plant;
* ``Simulator runge_kutta3``: the same with the Bogacki-Shampine 3(2) error-controlled
  scheme;
* ``hand-written solve_ivp``: ``scipy.integrate.solve_ivp(f, (0, 10), x0, "RK45")`` with f
  written directly in numpy (the reference, ratio 1.0);
* ``python-control``: ``control.input_output_response`` of the same closed loop as an
  ``nlsys`` (RK45 with the same tolerances) and ``control.forced_response`` of the linear
  closed loop (exact discretization on a 1 ms grid; a different algorithm, listed for
  scale);
* Drake ``Simulator`` (RungeKutta3, same accuracy), when ``pydrake`` imports.

Each time is the median of ``--repeats`` runs, taken round-robin over the rows (diagram
construction excluded; Simulator and context creation included); ``--cpu-time`` uses
process CPU time, steadier on a shared machine. BLAS runs on one thread. Final states are
compared with the matrix-exponential solution. Below the table: where the interpreted runs'
time goes (the blocks' own callbacks, timed alone, against the rest: framework, integrator,
event loop). Run: ``.venv/bin/python benchmarks/bench_simulator.py`` (a few seconds).
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from typing import Callable, Dict, List, Optional, Tuple

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402
from scipy.linalg import expm  # noqa: E402

from systems import DiagramBuilder  # noqa: E402
from systems.analysis import Simulator  # noqa: E402
from systems.controllers import PidController  # noqa: E402
from systems.primitives import ConstantVectorSource, LinearSystem, LogVectorOutput  # noqa: E402

M, C, K = 1.0, 0.5, 2.0

# The plant of examples/mass_spring_damper_pid.py (one definition for both).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "examples"))
from mass_spring_damper_pid import MassSpringDamper  # noqa: E402
from _cli import script_parser  # noqa: E402
sys.path.append(os.path.dirname(os.path.abspath(__file__)))
from _callback_time import callback_time  # noqa: E402
KP, KI, KD = 10.0, 5.0, 2.0
T_END = 10.0
RTOL, ATOL = 1e-6, 1e-9


def build_diagram(log: bool, plant_kind: str = "leaf"):
    """The plant + PID + reference diagram (and the plant-state log sink if ``log``).

    ``plant_kind``: ``"leaf"`` (a MassSpringDamper LeafSystem) or ``"linear"``
    (``systems.primitives.LinearSystem``).
    """
    b = DiagramBuilder("msd_pid")
    if plant_kind == "linear":
        plant = b.add_system(LinearSystem([[0.0, 1.0], [-K / M, -C / M]], [[0.0], [1.0 / M]],
                                          np.eye(2), np.zeros((2, 1)), name="plant"))
    else:
        plant = b.add_system(MassSpringDamper(M, C, K))
    pid = b.add_system(PidController(KP, KI, KD, name="pid"))
    ref = b.add_system(ConstantVectorSource([1.0, 0.0], name="ref"))
    b.connect(plant.get_output_port(), pid.get_input_port_estimated_state())
    b.connect(ref.get_output_port(), pid.get_input_port_desired_state())
    b.connect(pid.get_output_port_control(), plant.get_input_port())
    if log:
        LogVectorOutput(plant.get_output_port(), b)
    return b.build()


def closed_loop_matrices() -> Tuple[np.ndarray, np.ndarray]:
    """xdot = A x + b for x = [position, velocity, integral of the error]."""
    A = np.array([[0.0, 1.0, 0.0],
                  [-(K + KP) / M, -(C + KD) / M, KI / M],
                  [-1.0, 0.0, 0.0]])
    return A, np.array([0.0, KP / M, 1.0])


def exact_final_state() -> np.ndarray:
    A, bvec = closed_loop_matrices()
    E = expm(np.block([[A, bvec[:, None]], [np.zeros((1, 4))]]) * T_END)
    return E[:3, 3]


def run_simulator(diagram, integrator: str) -> Tuple[np.ndarray, int]:
    sim = Simulator(diagram, integrator=integrator, accuracy=RTOL, atol=ATOL, max_step=np.inf)
    sim.advance_to(T_END)
    return np.array(sim.get_context().continuous_state), sim.get_num_steps_taken()


def make_compiled_run(diagram, integrator: str) -> Callable[[], Tuple[np.ndarray, int]]:
    """A compiled-mode run: the simulator (and its compiled code) is built once, each run
    starts from a fresh context (as a user re-running a simulation would)."""
    kw = dict(accuracy=RTOL) if integrator == "cvodes" else dict(max_step=1e-3)
    sim = Simulator(diagram, compiled=True, integrator=integrator, **kw)
    sim.initialize()

    def run():
        ctx = diagram.create_default_context()
        sim.reset_context(ctx)
        sim.advance_to(T_END)
        return np.array(ctx.continuous_state), sim.get_num_steps_taken()

    return run


def msd_pid_rhs(t, x):
    """The closed loop written by hand: x = [p, v, z]."""
    p, v, z = x
    u = KP * (1.0 - p) + KI * z + KD * (0.0 - v)
    return np.array([v, (u - C * v - K * p) / M, 1.0 - p])


def run_hand_written() -> Tuple[np.ndarray, int]:
    sol = solve_ivp(msd_pid_rhs, (0.0, T_END), np.zeros(3), method="RK45", rtol=RTOL, atol=ATOL)
    return sol.y[:, -1], len(sol.t) - 1


def make_control_runs() -> Dict[str, Callable[[], Tuple[np.ndarray, int]]]:
    try:
        import control as ct
    except ImportError:  # pragma: no cover - control is a dev dependency
        return {}

    def upd(t, x, u, params):
        return msd_pid_rhs(t, x)

    nl = ct.nlsys(upd, None, inputs=0, outputs=3, states=3, name="msd_pid")
    A, bvec = closed_loop_matrices()
    lin = ct.ss(A, bvec[:, None], np.eye(3), np.zeros((3, 1)))
    grid = np.linspace(0.0, T_END, 10_001)

    def nonlinear():
        r = ct.input_output_response(nl, [0.0, T_END], 0.0, np.zeros(3),
                                     solve_ivp_method="RK45",
                                     solve_ivp_kwargs={"rtol": RTOL, "atol": ATOL},
                                     evaluation_times=None)
        return np.asarray(r.states)[:, -1], len(r.time) - 1

    def linear():
        r = ct.forced_response(lin, grid, np.ones_like(grid), np.zeros(3), return_x=True)
        return np.asarray(r.states)[:, -1], len(grid) - 1

    return {"python-control input_output_response RK45": nonlinear,
            "python-control forced_response (linear, 1 ms)": linear}


def make_drake_run() -> Optional[Callable[[], Tuple[np.ndarray, int]]]:
    try:
        from pydrake.systems.analysis import Simulator as DrakeSimulator
        from pydrake.systems.controllers import PidController as DrakePid
        from pydrake.systems.framework import DiagramBuilder as DrakeBuilder
        from pydrake.systems.primitives import ConstantVectorSource as DrakeSource
        from pydrake.systems.primitives import LinearSystem as DrakeLinear
    except ImportError:
        return None
    b = DrakeBuilder()
    plant = b.AddSystem(DrakeLinear(np.array([[0.0, 1.0], [-K / M, -C / M]]),
                                    np.array([[0.0], [1.0 / M]]), np.eye(2), np.zeros((2, 1))))
    pid = b.AddSystem(DrakePid([KP], [KI], [KD]))
    ref = b.AddSystem(DrakeSource([1.0, 0.0]))
    b.Connect(plant.get_output_port(0), pid.get_input_port_estimated_state())
    b.Connect(ref.get_output_port(0), pid.get_input_port_desired_state())
    b.Connect(pid.get_output_port_control(), plant.get_input_port(0))
    diagram = b.Build()

    def run():
        sim = DrakeSimulator(diagram)
        sim.get_mutable_integrator().set_target_accuracy(RTOL)
        sim.AdvanceTo(T_END)
        x = sim.get_context().get_continuous_state_vector().CopyToVector()
        # Drake orders the states by subsystem: plant [p, v] then pid [z].
        return np.asarray(x), sim.get_num_steps_taken()

    return run


def time_rows(runs: Dict[str, Callable[[], Tuple[np.ndarray, int]]], repeats: int,
              clock=time.perf_counter) -> Dict[str, Tuple[List[float], Tuple[np.ndarray, int]]]:
    """Time every row ``repeats`` times, round-robin (so slow drifts of the machine's load
    affect all rows alike); returns each row's times and last result."""
    out: Dict[str, Tuple[List[float], Tuple[np.ndarray, int]]] = {k: ([], None) for k in runs}
    for _ in range(repeats):
        for name, fn in runs.items():
            t0 = clock()
            result = fn()
            out[name][0].append(clock() - t0)
            out[name] = (out[name][0], result)
    return out


def main(argv=None) -> List[dict]:
    """Run the comparison and print the table; returns one dict per row."""
    parser = script_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=7, help="runs per row (median reported)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time with process CPU time instead of wall time (steadier on a "
                             "loaded machine)")
    args = parser.parse_args(argv)
    clock = time.process_time if args.cpu_time else time.perf_counter

    plain, logged = build_diagram(log=False), build_diagram(log=True)
    linear = build_diagram(log=False, plant_kind="linear")
    runs: Dict[str, Callable[[], Tuple[np.ndarray, int]]] = {
        "hand-written solve_ivp (RK45)": run_hand_written,
        "Simulator RK45": lambda: run_simulator(plain, "RK45"),
        "Simulator RK45 + per-step log": lambda: run_simulator(logged, "RK45"),
        "Simulator RK45, LinearSystem plant": lambda: run_simulator(linear, "RK45"),
        "Simulator runge_kutta3": lambda: run_simulator(plain, "runge_kutta3"),
        "Simulator runge_kutta3, LinearSystem plant": lambda: run_simulator(linear, "runge_kutta3"),
    }
    runs["Simulator compiled (CVODES)"] = make_compiled_run(plain, "cvodes")
    runs["Simulator compiled (RK3, h = 1e-3)"] = make_compiled_run(plain, "runge_kutta3")
    runs.update(make_control_runs())
    drake = make_drake_run()
    if drake is not None:
        runs["Drake Simulator (RK3)"] = drake
    for fn in runs.values():  # warm up (imports, caches)
        fn()
    exact = exact_final_state()
    timed = time_rows(runs, args.repeats, clock)
    ref_times = timed["hand-written solve_ivp (RK45)"][0]
    rows = []
    for name, (times, (x, steps)) in timed.items():
        rows.append({"name": name, "seconds": statistics.median(times), "steps": steps,
                     "pair_ratio": statistics.median(t / r for t, r in zip(times, ref_times)),
                     "error": float(np.max(np.abs(np.asarray(x) - exact))), "final": x})
    ref = rows[0]["seconds"]
    print(f"mass-spring-damper + PID, {T_END:g} s, rtol {RTOL:g}, atol {ATOL:g}; "
          f"median of {args.repeats} runs ({'CPU' if args.cpu_time else 'wall'} time)")
    drake_s = next((r["seconds"] for r in rows if r["name"].startswith("Drake")), None)
    print(f"{'method':46s} {'median [ms]':>11s} {'ratio':>6s} {'paired':>7s} {'vs Drake':>8s} "
          f"{'steps':>6s} {'|x - exact|':>11s}")
    for r in rows:
        r["ratio"] = r["seconds"] / ref
        vs = f"{r['seconds'] / drake_s:8.2f}" if drake_s else "     n/a"
        print(f"{r['name']:46s} {1e3 * r['seconds']:11.2f} {r['ratio']:6.2f} "
              f"{r['pair_ratio']:7.2f} {vs} {r['steps']:6d} {r['error']:11.2e}")
    print("ratio: median time / median time of the hand-written loop; paired: median over "
          "repeats of the per-repeat ratio")
    if drake is None:
        print("(pydrake not installed: Drake row skipped)")
    print(f"exact final state [p, v, z] = {np.array2string(exact, precision=9)}")
    for name, integrator in (("Simulator RK45", "RK45"), ("Simulator runge_kutta3", "runge_kutta3")):
        cb, nfev, per = callback_time(plain, lambda: run_simulator(plain, integrator),
                                      plain.create_default_context, clock=clock)
        total = next(r["seconds"] for r in rows if r["name"] == name)
        print(f"where '{name}' spends its time: {nfev} derivative evaluations; the blocks' own "
              f"callbacks {cb * 1e3:.2f} ms ({', '.join(f'{k} {n} x {dt * 1e6:.2f} us' for k, (n, dt) in per.items())}); "
              f"the rest (framework, integrator, event loop) {(total - cb) * 1e3:.2f} ms "
              f"({(total - cb) / nfev * 1e6:.2f} us per evaluation)")
    return rows


if __name__ == "__main__":
    main()

"""Trajectory optimization: our DirectCollocation against Drake's, on the same problems.

Problems (the examples' swing-ups): the cart-pole (``cart_pole.urdf``, force within 100 N,
duration 1-3 s, minimum effort, 21 and 41 knots) and the acrobot (``acrobot.urdf``, elbow
torque within 20 N m, duration 2-8 s, minimum effort, 41 knots), from the same straight-line
initial guess, solved by IPOPT (tolerance 1e-8): ours with exact Hessians of the Lagrangian,
Drake's with the limited-memory (L-BFGS) approximation its ``IpoptSolver`` sets by default
(``hessian_approximation = limited-memory`` in IPOPT's option list). Our plant is
the ``RigidBodyPlant`` built from the URDF inside a Diagram; Drake's is a
``SymbolicVectorSystem`` of the textbook equations of the same model (the script checks the
two dynamics agree at random states). Drake's rows appear when ``pydrake`` is importable.
Rounds are interleaved; the table gives medians of the time of the ``solve`` call (problem
construction excluded on both sides), iterations and final cost. Our first solve of a problem
also builds its derivative functions (CasADi's expansion and exact Hessian); it is listed
separately ("first"), later solves reuse them. Then the cart-pole by our
three transcriptions, with the duration fixed to the collocation optimum.

Run: ``python benchmarks/bench_trajopt.py [--repeats 5]``
"""
from __future__ import annotations

import os
import re
import sys
import tempfile
import time

import numpy as np
from _cli import script_parser  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

try:
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover - optional
    threadpool_limits = None

import acrobot_swing_up as acro                                   # noqa: E402
import cart_pole_swing_up as cp                                   # noqa: E402
from systems.trajectory_optimization import (DirectCollocation, DirectShooting,  # noqa: E402
                                             DirectTranscription)

TOL = 1e-8


# ---------------------------------------------------------------- ours
def ours(problem: str, knots: int):
    """Build our problem; returns a callable that solves it and returns (time, iters, cost)."""
    if problem == "cart_pole":
        _, dc = cp.swing_up_problem(knots)
    else:
        _, dc = acro.swing_up_problem(knots)

    def run():
        r = dc.solve(options={"tol": TOL})
        if not r.is_success():
            raise RuntimeError(f"ours failed on {problem}: {r.status}")
        return r.solve_time, r.iterations, r.cost
    return run


# ---------------------------------------------------------------- Drake
def drake_system(problem: str):
    """Drake SymbolicVectorSystem of the textbook equations of the same model."""
    from pydrake.all import MakeVectorVariable, SymbolicVectorSystem, cos, sin
    x = MakeVectorVariable(4, "x")
    u = MakeVectorVariable(1, "u")
    g = 9.81
    if problem == "cart_pole":
        mc, mp, l = 10.0, 1.0, 0.5
        s, c, thd = sin(x[1]), cos(x[1]), x[3]
        den = mc + mp * s ** 2
        xdd = (u[0] + mp * s * (l * thd ** 2 + g * c)) / den
        thdd = (-u[0] * c - mp * l * thd ** 2 * c * s - (mc + mp) * g * s) / (l * den)
        return SymbolicVectorSystem(state=x, input=u, dynamics=[x[2], x[3], xdd, thdd])
    m1 = m2 = 1.0
    l1, lc1, lc2, Ic1, Ic2 = 1.0, 0.5, 1.0, 0.083, 0.33
    I1, I2 = Ic1 + m1 * lc1 ** 2, Ic2 + m2 * lc2 ** 2
    c2, s2 = cos(x[1]), sin(x[1])
    s1, s12 = sin(x[0]), sin(x[0] + x[1])
    q1d, q2d = x[2], x[3]
    M11 = I1 + I2 + m2 * l1 ** 2 + 2 * m2 * l1 * lc2 * c2
    M12 = I2 + m2 * l1 * lc2 * c2
    M22 = I2
    h = m2 * l1 * lc2 * s2
    r1 = 2 * h * q1d * q2d + h * q2d ** 2 - (m1 * lc1 + m2 * l1) * g * s1 - m2 * g * lc2 * s12
    r2 = -h * q1d ** 2 - m2 * g * lc2 * s12 + u[0]
    det = M11 * M22 - M12 * M12
    q1dd = (M22 * r1 - M12 * r2) / det
    q2dd = (-M12 * r1 + M11 * r2) / det
    return SymbolicVectorSystem(state=x, input=u, dynamics=[x[2], x[3], q1dd, q2dd])


def check_same_dynamics(problem: str, rng) -> float:
    """Max |f_ours - f_drake| over random states and inputs."""
    system = drake_system(problem)
    d = cp.cart_pole_diagram() if problem == "cart_pole" else acro.acrobot_diagram()
    from systems.symbolic import to_casadi
    cs = to_casadi(d)
    ctx = system.CreateDefaultContext()
    worst = 0.0
    for _ in range(20):
        xs, us = rng.normal(size=4), rng.normal(size=1) * 5
        ctx.SetContinuousState(xs)
        system.get_input_port(0).FixValue(ctx, us)
        fd = system.EvalTimeDerivatives(ctx).CopyToVector()
        fo = np.asarray(cs.f(0.0, xs, [], us, []), float).ravel()
        worst = max(worst, float(np.max(np.abs(fd - fo))))
    return worst


def drake(problem: str, knots: int):
    """Build Drake's DirectCollocation of the same problem; returns a solving callable."""
    from pydrake.all import IpoptSolver, PiecewisePolynomial
    try:
        from pydrake.planning import DirectCollocation as DrakeDC
    except ImportError:  # older Drake
        from pydrake.systems.trajectory_optimization import DirectCollocation as DrakeDC
    system = drake_system(problem)
    ctx = system.CreateDefaultContext()
    if problem == "cart_pole":
        goal, lim, dur, (hmin, hmax) = cp.GOAL, cp.FORCE_LIMIT, cp.DURATION, cp.TIME_STEP
    else:
        goal, lim, dur, (hmin, hmax) = acro.UPRIGHT, acro.TORQUE_LIMIT, acro.DURATION, acro.TIME_STEP
    dc = DrakeDC(system, ctx, knots, hmin, hmax)
    prog = dc.prog()
    u = dc.input()
    dc.AddConstraintToAllKnotPoints(u[0] <= lim)
    dc.AddConstraintToAllKnotPoints(-lim <= u[0])
    prog.AddBoundingBoxConstraint(np.zeros(4), np.zeros(4), dc.initial_state())
    prog.AddBoundingBoxConstraint(goal, goal, dc.final_state())
    dc.AddEqualTimeIntervalsConstraints()
    dc.AddDurationBounds(*dur)
    dc.AddRunningCost(u[0] ** 2)
    # the same straight-line guess over the same initial duration (knots x mean step bound)
    span = 0.5 * (hmin + hmax) * (knots - 1)
    xg = PiecewisePolynomial.FirstOrderHold([0.0, span], np.column_stack([np.zeros(4), goal]))
    dc.SetInitialTrajectory(PiecewisePolynomial(), xg)
    solver = IpoptSolver()
    log = os.path.join(tempfile.mkdtemp(), "ipopt.out")
    opts = {"tol": TOL, "print_level": 0, "output_file": log, "file_print_level": 3}

    def run():
        from pydrake.all import SolverOptions
        so = SolverOptions()
        for k, v in opts.items():
            so.SetOption(solver.solver_id(), k, v)
        t0 = time.perf_counter()
        r = solver.Solve(prog, None, so)
        t = time.perf_counter() - t0
        if not r.is_success():
            raise RuntimeError(f"Drake failed on {problem}: {r.get_solution_result()}")
        text = open(log).read() if os.path.exists(log) else ""
        m = re.findall(r"Number of Iterations\.*:\s*(\d+)", text)
        run.solution = (np.column_stack([r.GetSolution(dc.state(k)) for k in range(knots)]),
                        np.column_stack([r.GetSolution(dc.input(k)) for k in range(knots)]),
                        np.array([r.GetSolution(dc.time_step(k))[0] for k in range(knots - 1)]))
        return t, (int(m[-1]) if m else -1), r.get_optimal_cost()
    return run


def ours_from(problem: str, knots: int, solution):
    """Our problem started from Drake's solution (same NLP: it must stay there)."""
    _, dc = cp.swing_up_problem(knots) if problem == "cart_pole" else acro.swing_up_problem(knots)
    X, U, h = solution
    for k in range(knots):
        dc.opti.set_initial(dc.state(k), X[:, k])
        dc.opti.set_initial(dc.input(k), U[:, k])
    for k in range(knots - 1):
        dc.opti.set_initial(dc.time_step(k), h[k])
    r = dc.solve(options={"tol": TOL})
    return r


def table(rows, header):
    print(header)
    for r in rows:
        print(r)


def main(argv=None) -> None:
    ap = script_parser(__doc__)
    ap.add_argument("--repeats", type=int, default=5,
                    help="interleaved timing rounds (the median is reported)")
    args = ap.parse_args(argv)
    limit = threadpool_limits(1) if threadpool_limits else None
    try:
        import pydrake  # noqa: F401
        have_drake = True
    except ImportError:
        have_drake = False
        print("pydrake is not installed: Drake rows skipped (pip install drake)")
    cases = [("cart_pole", 21), ("cart_pole", 41), ("acrobot", 41)]
    rng = np.random.default_rng(0)
    if have_drake:
        for problem in ("cart_pole", "acrobot"):
            print(f"{problem}: max |f_ours - f_drake| over 20 random states = "
                  f"{check_same_dynamics(problem, rng):.2e}")
    print(f"\nDirectCollocation + IPOPT (tol {TOL:g}; ours exact Hessian, Drake L-BFGS), median "
          f"of {args.repeats} interleaved rounds, solve call only")
    print(f"{'problem':<14}{'N':>4} | {'first ms':>9}{'ours ms':>9}{'iters':>7}{'cost':>11} | "
          f"{'Drake ms':>9}{'iters':>7}{'cost':>11} | {'time ratio':>10}")
    for problem, knots in cases:
        runners = {"ours": ours(problem, knots)}
        if have_drake:
            runners["drake"] = drake(problem, knots)
        res = {k: [] for k in runners}
        for _ in range(args.repeats + 1):
            for k, run in runners.items():
                res[k].append(run())
        first = res["ours"].pop(0)[0] * 1e3          # builds the derivative functions
        res.get("drake", [None]).pop(0)              # the same number of rounds on both sides
        med = {k: (np.median([r[0] for r in v]) * 1e3, v[-1][1], v[-1][2]) for k, v in res.items()}
        o = med["ours"]
        line = f"{problem:<14}{knots:>4} | {first:>9.1f}{o[0]:>9.1f}{o[1]:>7d}{o[2]:>11.3f} | "
        if "drake" in med:
            d = med["drake"]
            line += f"{d[0]:>9.1f}{d[1]:>7d}{d[2]:>11.3f} | {o[0] / d[0]:>10.2f}"
        else:
            line += f"{'n/a':>9}{'':>7}{'':>11} | {'':>10}"
        print(line)
        if "drake" in runners and getattr(runners["drake"], "solution", None) is not None:
            r = ours_from(problem, knots, runners["drake"].solution)
            print(f"{'':<18}  ours started from Drake's solution: {r.status}, {r.iterations} "
                  f"iterations, cost {r.cost:.3f} (the same local optimum: the same problem)")
    # our three transcriptions on the cart-pole with the collocation's duration
    _, dc = cp.swing_up_problem(41)
    r = dc.solve(options={"tol": TOL})
    T = float(dc.sample_times(r)[-1])
    d = cp.cart_pole_diagram()
    print(f"\nour transcriptions, cart-pole, 41 knots, duration fixed to {T:.3f} s "
          f"(median of {args.repeats})")
    print(f"{'method':<34}{'ms':>9}{'iters':>7}{'cost':>11}")
    builders = {
        "DirectCollocation (Hermite-Simpson)": lambda: _fixed(DirectCollocation(
            d, d.create_default_context(), 41, T / 40, T / 40)),
        "DirectTranscription (Euler)": lambda: _fixed(DirectTranscription(
            d, d.create_default_context(), 41, T / 40)),
        "DirectShooting (RK4 x 4)": lambda: _fixed(DirectShooting(
            d, d.create_default_context(), 40, T / 40)),
    }
    for name, build in builders.items():
        prog = build()
        rs = [prog.solve(options={"tol": TOL}) for _ in range(args.repeats)]
        ok = all(x.is_success() for x in rs)
        print(f"{name:<34}{np.median([x.solve_time for x in rs]) * 1e3:>9.1f}"
              f"{rs[-1].iterations:>7d}{rs[-1].cost:>11.3f}{'' if ok else '  (failed)'}")
    if limit is not None:
        limit.unregister() if hasattr(limit, "unregister") else None


def _fixed(prog):
    prog.add_input_bounds(-cp.FORCE_LIMIT, cp.FORCE_LIMIT)
    prog.add_bounding_box_constraint(np.zeros(4), np.zeros(4), prog.initial_state())
    prog.add_bounding_box_constraint(cp.GOAL, cp.GOAL, prog.final_state())
    prog.add_running_cost(prog.input()[0] ** 2)
    prog.set_initial_trajectory(x_initial=np.zeros(4), x_final=cp.GOAL)
    return prog


if __name__ == "__main__":
    main()

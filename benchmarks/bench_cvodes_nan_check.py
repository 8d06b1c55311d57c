"""Cost of the NaN check in compiled CVODES simulation.

``Simulator(..., compiled=True, integrator="cvodes")`` builds its CVODES integrator with
CasADi's ``regularity_check`` (stop at the first non-finite right-hand side, so a NaN gives
one named ``NonFiniteStateError`` instead of a warning per retried step), plus
``show_eval_warnings=False`` and ``disable_internal_warnings=True``. This script times the
same CVODES integration (the options the compiled simulator uses, with and without those
three) on a chain of ``n`` coupled nonlinear oscillators converted with
``systems.symbolic.to_casadi``, integrated over [0, T] with 100 output times.

Each round times one integration of each variant in turn (interleaved), measuring process
CPU time; the table gives medians over the rounds and the ratio checked / unchecked, with
BLAS limited to one thread. Run: ``.venv/bin/python benchmarks/bench_cvodes_nan_check.py``
(about 10 s).
"""
from __future__ import annotations

import statistics
import time

import casadi as ca
import numpy as np
from threadpoolctl import threadpool_limits

from systems.primitives import SymbolicVectorSystem
from systems.symbolic import to_casadi
import os  # noqa: E402
import sys  # noqa: E402
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from _cli import script_parser  # noqa: E402


def oscillator_chain(n: int) -> SymbolicVectorSystem:
    """q_i'' = -sin(q_i) - 0.1 q_i' + 0.5 (q_{i+1} - 2 q_i + q_{i-1}) (fixed ends)."""
    q, v = ca.SX.sym("q", n), ca.SX.sym("v", n)
    acc = []
    for i in range(n):
        left = q[i - 1] if i > 0 else 0.0
        right = q[i + 1] if i < n - 1 else 0.0
        acc.append(-ca.sin(q[i]) - 0.1 * v[i] + 0.5 * (right - 2 * q[i] + left))
    return SymbolicVectorSystem(state=ca.vertcat(q, v), dynamics=ca.vertcat(v, *acc), name="chain")


def make_integrator(cs, t_final: float, checked: bool) -> ca.Function:
    """CVODES over [0, t_final] with 100 output times, options as the compiled simulator's."""
    s = cs.symbols
    tau, t_start = ca.SX.sym("tau"), ca.SX.sym("t_start")
    params = ca.vertcat(t_start, s["xd"], s["u"], s["p"])
    ode = cs.f(t_start + tau, s["x"], s["xd"], s["u"], s["p"])
    opts = {"abstol": 1e-10, "reltol": 1e-8, "max_step_size": 0.1}
    if checked:
        opts.update({"regularity_check": True, "show_eval_warnings": False,
                     "disable_internal_warnings": True})
    grid = list(np.linspace(t_final / 100, t_final, 100))
    return ca.integrator("seg", "cvodes", {"x": s["x"], "p": params, "t": tau, "ode": ode}, 0.0, grid, opts)


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--n", type=int, default=20, help="oscillators (state size 2n)")
    parser.add_argument("--t-final", type=float, default=20.0, help="simulated time per run (s)")
    parser.add_argument("--rounds", type=int, default=15,
                        help="interleaved timing rounds (the median is reported)")
    args = parser.parse_args(argv)
    cs = to_casadi(oscillator_chain(args.n))
    x0 = np.concatenate([np.linspace(0.5, -0.5, args.n), np.zeros(args.n)])
    p = np.zeros(cs.nxd + cs.nu + cs.np + 1)
    variants = {"unchecked": make_integrator(cs, args.t_final, False),
                "checked (compiled simulator)": make_integrator(cs, args.t_final, True)}
    results = {k: [] for k in variants}
    finals = {}
    with threadpool_limits(limits=1):
        for _ in range(args.rounds):
            for name, F in variants.items():
                t0 = time.process_time()
                out = F(x0=x0, p=p)
                results[name].append(time.process_time() - t0)
                finals[name] = np.asarray(out["xf"])[:, -1]
    med = {k: statistics.median(v) for k, v in results.items()}
    base = med["unchecked"]
    print(f"CVODES on {2 * args.n} states over [0, {args.t_final}] s, 100 outputs; "
          f"medians of {args.rounds} interleaved rounds (process CPU time)")
    print(f"{'variant':<32}{'median ms':>12}{'ratio':>8}")
    for k, v in med.items():
        print(f"{k:<32}{1e3 * v:>12.2f}{v / base:>8.2f}")
    same = bool(np.array_equal(finals["unchecked"], finals["checked (compiled simulator)"]))
    print(f"final states bitwise equal: {same}")
    return {"median_s": med, "ratio": med["checked (compiled simulator)"] / base, "bitwise_equal": same}


if __name__ == "__main__":
    main()

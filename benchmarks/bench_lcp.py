"""Median solve times of the LCP solvers of ``solvers.lcp``.

Problems (fixed seeds):

* standard LCP: ``M = J H^-1 J^T + 1e-3 I`` (a contact Delassus matrix with
  ``nv = n + 6`` freedoms), ``q`` with about half the rows active;
* boxed LCP with friction: contacts of one normal row and two friction rows
  (``findex``, ``mu = 0.5``), same kind of ``A``.

Times are CPU seconds of this process (``time.process_time``), which are
robust to other load on the machine; BLAS is limited to one thread (set
before numpy is imported) because multithreaded BLAS on these small matrices
is slower, and dramatically so on a busy machine.

Run ``python benchmarks/bench_lcp.py`` (about 10 s); ``--quick`` for a smoke run.
"""
from __future__ import annotations

import os
import time
import sys  # noqa: E402
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from _cli import script_parser  # noqa: E402

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from solvers.lcp import solve_boxed_lcp, solve_lcp  # noqa: E402


def delassus(rng: np.random.Generator, m: int, cfm: float = 1e-3) -> np.ndarray:
    nv = m + 6
    X = rng.standard_normal((nv, nv))
    H = X @ X.T + nv * np.eye(nv)
    J = rng.standard_normal((m, nv))
    return J @ np.linalg.solve(H, J.T) + cfm * np.eye(m)


def standard_problem(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return delassus(rng, n), rng.standard_normal(n)


def friction_problem(n: int, seed: int = 0, mu: float = 0.5):
    rng = np.random.default_rng(seed)
    nc = max(1, n // 3)
    m = 3 * nc
    A = delassus(rng, m)
    b = rng.standard_normal(m)
    lo, hi = np.zeros(m), np.full(m, np.inf)
    findex = -np.ones(m, dtype=int)
    for c in range(nc):
        r = 3 * c
        b[r] = -abs(b[r]) - 0.2
        lo[r + 1:r + 3], hi[r + 1:r + 3], findex[r + 1:r + 3] = -mu, mu, r
    return A, b, lo, hi, findex


def median_time(fn, repeats: int) -> tuple[float, object]:
    out = fn()
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return float(np.median(times)), out


def main(argv: list[str] | None = None) -> None:
    parser = script_parser(__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    args = parser.parse_args(argv)
    sizes = (10, 40) if args.quick else (10, 40, 120)
    rows = []
    for n in sizes:
        reps = 3 if args.quick else max(3, 200 // n)
        M, q = standard_problem(n)
        ref = solve_lcp(M, q)
        cases = [
            ("LCP", "lemke", lambda: solve_lcp(M, q)),
            ("LCP", "lemke warm", lambda: solve_lcp(M, q + 1e-3, z0=ref.z)),
            ("LCP", "pgs", lambda: solve_lcp(M, q, method="pgs", max_iter=5000, tol=1e-6)),
            ("LCP", "pgs warm", lambda: solve_lcp(M, q + 1e-3, method="pgs", z0=ref.z,
                                                  max_iter=5000, tol=1e-6)),
            ("LCP", "dantzig", lambda: solve_boxed_lcp(M, q, np.zeros(n), np.full(n, np.inf))),
        ]
        A, b, lo, hi, fi = friction_problem(n)
        refb = solve_boxed_lcp(A, b, lo, hi, fi)
        cases += [
            ("BLCP+friction", "dantzig", lambda: solve_boxed_lcp(A, b, lo, hi, fi)),
            ("BLCP+friction", "dantzig warm",
             lambda: solve_boxed_lcp(A, b + 1e-3, lo, hi, fi, x0=refb.x)),
            ("BLCP+friction", "lemke", lambda: solve_boxed_lcp(A, b, lo, hi, fi, method="lemke")),
            ("BLCP+friction", "pgs", lambda: solve_boxed_lcp(A, b, lo, hi, fi, method="pgs",
                                                             max_iter=5000, tol=1e-6)),
        ]
        for kind, name, fn in cases:
            t, res = median_time(fn, reps)
            rows.append((kind, len(res.z), name, t, res.status, res.iterations, res.residual))
    print(f"{'problem':<14} {'n':>4} {'method':<13} {'median CPU ms':>13} "
          f"{'status':<10} {'iters':>6} {'residual':>10}")
    for kind, n, name, t, st, it, res in rows:
        print(f"{kind:<14} {n:>4} {name:<13} {1e3 * t:>13.3f} {st:<10} {it:>6} {res:>10.2e}")


if __name__ == "__main__":
    main()

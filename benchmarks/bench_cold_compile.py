"""Cold and warm compile times of a tree's dynamics functions, and their call times.

For a 7-DOF arm (tests/models.py), the 12-DOF quadruped (``multibody.model_path
("quadruped")``), the 40-DOF humanoid (tests/models.py) and the 48-DOF human
model (``multibody.models.human_model`` on ``/work/shared/data/hdm/cooper-skeleton.txt``,
skipped when the file is absent), each measurement runs in a fresh Python process:

* ``trace``: building the CasADi Functions of ``forward_dynamics``, ``inverse_dynamics`` and
  ``mass_matrix`` (SX graph construction);
* ``staged``: empty cache, ``tree.compile(wait=False)``: wall time until compiled code
  serves all three (long functions: their quick libraries, cut into parts compiled at
  ``-O0`` in parallel), then ``optimised``: until the optimised libraries (whole functions,
  ``-Og``/``-O2``, compiled in the background at lower priority) have replaced them;
* ``direct``: empty cache, ``tree.compile()`` (waits for the optimised libraries, built
  directly, the three functions in parallel);
* ``warm``: ``tree.compile()`` in a new process on the cache the direct run filled
  (verified load: manifest, hash, owner checks, ``dlopen``).

An empty cache also compiles the small C extension that speeds up calls (once per machine),
as a user's first run does. Times are medians over ``--runs`` processes (cold and warm runs
alternate), wall time on the machine as it is (``os.getloadavg`` is printed: other load
stretches them). Call times (us of process CPU time) are medians of interleaved blocks of
calls with BLAS on one thread, for the quick and the optimised libraries.

``--breakdown`` adds, for the 40-DOF humanoid, where a cold compile's time goes: SX graph
construction, CasADi code generation, and the compiler on the whole generated file at each
optimisation level against the quick split build (wall seconds, one function at a time).

Run: ``.venv/bin/python benchmarks/bench_cold_compile.py [--runs 3] [--breakdown]``.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SKELETON = "/work/shared/data/hdm/cooper-skeleton.txt"
sys.path.append(os.path.join(ROOT, "examples"))
from _cli import script_parser  # noqa: E402

_CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, os.path.join(sys.argv[1], "tests")); sys.path.insert(0, sys.argv[1])
from threadpoolctl import threadpool_limits
import numpy as np
import models as M
model, mode = sys.argv[2], sys.argv[3]
FUNS = ("forward_dynamics", "inverse_dynamics", "mass_matrix")

def make():
    if model == "arm7":
        return M.arm7(backend="auto", compile_after=10**9)
    if model == "humanoid40":
        return M.humanoid(40, backend="auto", compile_after=10**9)
    if model == "quadruped12":
        import multibody
        t = multibody.RigidBodyTree.from_urdf(str(multibody.model_path("quadruped")))
    else:
        from multibody.models import human_model
        t = human_model(sys.argv[4]).tree
    t.backend, t.compile_after = "auto", 10**9
    return t

def call_times(tree, q, v, a):
    fs = [lambda: tree.forward_dynamics(q, v, a), lambda: tree.inverse_dynamics(q, v, a),
          lambda: tree.mass_matrix(q)]
    samples = [[] for _ in fs]
    with threadpool_limits(1):
        for _ in range(9):
            for k, f in enumerate(fs):
                t0 = time.process_time()
                for _ in range(200):
                    f()
                samples[k].append((time.process_time() - t0) / 200 * 1e6)
    return [float(np.median(s)) for s in samples]

tree = make()
tree.finalize()
rng = np.random.default_rng(0)
q = tree.neutral_configuration() + 0.0
v, a = rng.normal(size=tree.nv), rng.normal(size=tree.nv)
out = {"nv": tree.nv}
t0 = time.perf_counter()
ref = [tree.forward_dynamics(q, v, a), tree.inverse_dynamics(q, v, a), tree.mass_matrix(q)]
out["trace"] = time.perf_counter() - t0
out["statements"] = [tree.casadi_function(k).n_instructions() for k in FUNS]
def cpu():  # this process and its finished children (the compilers)
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime

t0, c0 = time.perf_counter(), cpu()
tree.compile(wait=(mode != "staged"))
out["serve"] = time.perf_counter() - t0
out["serve_cpu"] = cpu() - c0
got = [tree.forward_dynamics(q, v, a), tree.inverse_dynamics(q, v, a), tree.mass_matrix(q)]
out["max_diff_vs_vm"] = max(float(np.max(np.abs(x - y))) for x, y in zip(ref, got))
out["calls_first"] = call_times(tree, q, v, a)
if mode == "staged":
    tree.compile()  # waits for the optimised libraries
    out["optimised"] = time.perf_counter() - t0
    out["calls_optimised"] = call_times(tree, q, v, a)
print(json.dumps(out))
"""


def run_child(model: str, mode: str, cache_dir: str) -> dict:
    env = dict(os.environ, DYNABLOCKS_CACHE_DIR=cache_dir)
    res = subprocess.run([sys.executable, "-c", _CHILD, ROOT, model, mode, SKELETON],
                         capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"{model} {mode} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def measure(model: str, runs: int) -> dict:
    cells: dict[str, list[dict]] = {"staged": [], "direct": [], "warm": []}
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
            cells["staged"].append(run_child(model, "staged", d1))
            cells["direct"].append(run_child(model, "direct", d2))
            cells["warm"].append(run_child(model, "warm", d2))
    med = statistics.median
    s, d, w = cells["staged"], cells["direct"], cells["warm"]
    return {
        "nv": s[0]["nv"], "statements": s[0]["statements"],
        "trace": med(r["trace"] for r in s + d + w),
        "staged": med(r["serve"] for r in s), "optimised": med(r["optimised"] for r in s),
        "direct": med(r["serve"] for r in d), "warm": med(r["serve"] for r in w),
        "staged_cpu": med(r["serve_cpu"] for r in s), "direct_cpu": med(r["serve_cpu"] for r in d),
        "calls_quick": [med(r["calls_first"][k] for r in s) for k in range(3)],
        "calls_opt": [med(r["calls_optimised"][k] for r in s) for k in range(3)],
        "calls_direct": [med(r["calls_first"][k] for r in d) for k in range(3)],
        "max_diff": max(r["max_diff_vs_vm"] for r in s + d + w),
    }


def breakdown() -> None:
    """Where a cold compile of the 40-DOF humanoid's functions goes (one process, one
    function at a time, each build into its own empty cache)."""
    import time
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    sys.path.insert(0, ROOT)
    import models as M
    import numpy as np
    from solvers.compiled import CompiledFunction

    def build(fun, **kw) -> float:
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            cf = CompiledFunction(fun, cache_dir=d, **kw).build()
            t = time.perf_counter() - t0
            cf.wait_optimized()
            return t

    tree = M.humanoid(40, backend="casadi")
    tree.finalize()
    q = tree.neutral_configuration()
    z = np.zeros(tree.nv)
    calls = {"forward_dynamics": lambda: tree.forward_dynamics(q, z, z),
             "inverse_dynamics": lambda: tree.inverse_dynamics(q, z, z),
             "mass_matrix": lambda: tree.mass_matrix(q)}
    build(tree.casadi_function("qdot"), flags=("-O0",))  # the call extension, once
    print("\nwhere the time goes: 40-DOF humanoid, one function at a time (wall s; codegen: "
          "CasADi's C generation with a verified load from a warm cache)")
    print(f"{'function':<18}{'SX ops':>7}{'trace':>7}{'codegen':>8}"
          f"{'-O0':>6}{'-Og':>6}{'-O1':>6}{'-O2':>6}{'quick (split, -O0, 2 units)':>29}")
    for name, call in calls.items():
        t0 = time.perf_counter()
        call()
        t_trace = time.perf_counter() - t0
        fun = tree.casadi_function(name)
        with tempfile.TemporaryDirectory() as d:
            CompiledFunction(fun, cache_dir=d, flags=("-O0",), staged=False).build()
            t0 = time.perf_counter()
            CompiledFunction(fun, cache_dir=d, flags=("-O0",), staged=False).build()
            t_gen = time.perf_counter() - t0
        times = [build(fun, flags=(o,), staged=False) for o in ("-O0", "-Og", "-O1", "-O2")]
        t_quick = build(fun, flags=("-O0",), staged=True)
        print(f"{name:<18}{fun.n_instructions():>7}{t_trace:>7.2f}{t_gen:>8.2f}"
              + "".join(f"{t:>6.2f}" for t in times) + f"{t_quick:>29.2f}")


def main(argv: list[str] | None = None) -> list[dict]:
    p = script_parser(__doc__)
    p.add_argument("--runs", type=int, default=3, help="processes per cell (medians)")
    p.add_argument("--models", default="arm7,quadruped12,humanoid40,human48",
                   help="comma-separated subset of arm7, quadruped12, humanoid40, human48")
    p.add_argument("--breakdown", action="store_true",
                   help="also print where the 40-DOF humanoid's compile time goes")
    args = p.parse_args(argv)
    if hasattr(os, "getloadavg"):
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    rows = []
    for model in args.models.split(","):
        if model == "human48" and not os.path.exists(SKELETON):
            print(f"human48: skipped ({SKELETON} not found)")
            continue
        r = measure(model, args.runs)
        r["model"] = model
        rows.append(r)
        print(f"{model}: done", flush=True)
    print(f"\ncold/warm compile of forward_dynamics + inverse_dynamics + mass_matrix, wall s, "
          f"median of {args.runs} processes")
    print(f"{'model':<11}{'nv':>3}{'SX ops (fd/id/mm)':>20}{'trace':>7}{'staged':>8}"
          f"{'(CPU)':>7}{'optimised':>10}{'direct':>8}{'(CPU)':>7}{'warm':>7}")
    for r in rows:
        ops = "/".join(str(n) for n in r["statements"])
        print(f"{r['model']:<11}{r['nv']:>3}{ops:>20}{r['trace']:>7.2f}{r['staged']:>8.2f}"
              f"{r['staged_cpu']:>7.2f}{r['optimised']:>10.2f}{r['direct']:>8.2f}"
              f"{r['direct_cpu']:>7.2f}{r['warm']:>7.2f}")
    print("(CPU): CPU seconds of the process and its compilers until the functions serve; on "
          "an idle machine the wall time is about CPU / cores when the work splits evenly.")
    print("\ncall time (us, fd/id/mm): quick library, optimised (staged run), direct build")
    for r in rows:
        fmt = lambda xs: "/".join(f"{x:.1f}" for x in xs)  # noqa: E731
        print(f"{r['model']:<11}{fmt(r['calls_quick']):>20}{fmt(r['calls_opt']):>20}"
              f"{fmt(r['calls_direct']):>20}   max |compiled - VM| {r['max_diff']:.1e}")
    if args.breakdown:
        breakdown()
    return rows


if __name__ == "__main__":
    main()

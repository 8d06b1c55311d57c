"""Speed of the multibody algorithms next to Pinocchio's Python bindings.

For a 7-DOF arm and a ~40-DOF floating humanoid (tests/models.py), prints the median numeric
call time of ``forward_dynamics``, ``inverse_dynamics`` and ``mass_matrix`` (compiled C path)
next to Pinocchio's ``aba``, ``rnea`` and ``crba`` on the same model, the ratio, and the time
to build the CasADi Functions and to compile them. Targets (issue "Multibody core"):
forward_dynamics <= 1.0x Pinocchio, the others <= 1.5x.

Run: ``.venv/bin/python benchmarks/bench_multibody.py [--quick]``. Timings are medians of
interleaved blocks (ours, Pinocchio, ours, ...) so that load from other processes affects
both sides alike.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import models as M  # noqa: E402
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from _cli import script_parser  # noqa: E402


def _block_time(f, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t0) / n


def _interleaved(fa, fb, n: int, blocks: int) -> tuple[float, float]:
    ta, tb = [], []
    for _ in range(blocks):
        ta.append(_block_time(fa, n))
        tb.append(_block_time(fb, n))
    return float(np.median(ta)), float(np.median(tb))


def bench_model(name: str, make, n: int, blocks: int, flags=None) -> list[tuple]:
    import pinocchio as pin
    t0 = time.perf_counter()
    tree = make(backend="auto", compile_after=10**9)
    tree.finalize()
    t_model = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    q, v, a = M.random_state(tree, rng)
    t0 = time.perf_counter()  # trace the algorithms into CasADi Functions
    tree.forward_dynamics(q, v, a)
    tree.inverse_dynamics(q, v, a)
    tree.mass_matrix(q)
    t_build = time.perf_counter() - t0
    sizes = {k: e.fun.n_instructions() for k, e in tree._functions.entries.items()}
    t0 = time.perf_counter()  # generate C, compile (or load from the disk cache)
    tree.compile(flags=flags)
    t_compile = time.perf_counter() - t0
    P = M.to_pinocchio(tree)
    qp = P.q(q)
    T, _ = P.T(q)
    vp, ap = T @ v, T @ a
    tau = tree.inverse_dynamics(q, v, a)
    taup = np.linalg.solve(T.T, tau)
    model, data = P.model, P.data
    rows = []
    pairs = [
        ("forward_dynamics", lambda: tree.forward_dynamics(q, v, tau), "aba",
         lambda: pin.aba(model, data, qp, vp, taup), 1.0),
        ("inverse_dynamics", lambda: tree.inverse_dynamics(q, v, a), "rnea",
         lambda: pin.rnea(model, data, qp, vp, ap), 1.5),
        ("mass_matrix", lambda: tree.mass_matrix(q), "crba",
         lambda: pin.crba(model, data, qp), 1.5),
    ]
    for ours, fa, theirs, fb, target in pairs:
        fa(), fb()
        ta, tb = _interleaved(fa, fb, n, blocks)
        rows.append((name, tree.nv, ours, sizes[ours], ta * 1e6, theirs, tb * 1e6, ta / tb,
                     target))
    print(f"{name}: nq={tree.nq} nv={tree.nv}  model {t_model * 1e3:.0f} ms, build Functions "
          f"{t_build:.2f} s, compile (or load from the disk cache) {t_compile:.1f} s")
    return rows


def main(argv: list[str] | None = None) -> list[tuple]:
    p = script_parser(__doc__)
    p.add_argument("--quick", action="store_true", help="fewer repetitions")
    p.add_argument("--flags", default=None, help="compiler flags, e.g. '-O2'")
    p.add_argument("--fresh", action="store_true",
                   help="compile into an empty temporary cache (measures real compile time; "
                        "otherwise libraries cached on disk by earlier runs are loaded)")
    args = p.parse_args(argv)
    if args.fresh:
        import tempfile
        os.environ["DYNABLOCKS_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench_multibody_")
    n, blocks = (200, 5) if args.quick else (2000, 15)
    flags = tuple(args.flags.split()) if args.flags else None
    rows = []
    rows += bench_model("arm7", M.arm7, n, blocks, flags)
    rows += bench_model("humanoid40", lambda **k: M.humanoid(40, **k), n, blocks, flags)
    print(f"\n{'model':<11}{'nv':>4}  {'ours':<17}{'SX ops':>8}{'us':>9}  {'pinocchio':<6}"
          f"{'us':>9}{'ratio':>8}{'target':>8}")
    for name, nv, ours, ops, ta, theirs, tb, ratio, target in rows:
        ok = "ok" if ratio <= target else "MISS"
        print(f"{name:<11}{nv:>4}  {ours:<17}{ops:>8}{ta:>9.2f}  {theirs:<6}{tb:>9.2f}"
              f"{ratio:>8.2f}{target:>7.1f}x {ok}")
    return rows


if __name__ == "__main__":
    main()

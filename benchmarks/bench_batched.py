"""Batched evaluation of the tree's algorithms: cost per state against single calls and
Pinocchio.

For the 7-DOF arm and the ~30-DOF floating humanoid (tests/models.py, compiled C path), the
time per state of ``forward_dynamics``, ``inverse_dynamics`` and ``mass_matrix`` on N states
(N = 1, 10, 100, 1000) evaluated

* ``loop``: N single calls ``tree.f(q, v, ...)``,
* ``batch``: one batched call ``tree.f(Q, V, ...)`` (CasADi ``map``, serial),
* ``thread``: the batched call split over ``--threads`` threads (``map(N, "thread", k)``),
* ``pin``: N calls of Pinocchio's ``aba``/``rnea``/``crba`` on the same model.

Timings are medians over interleaved rounds (loop, batch, thread, pin, loop, ...), each
variant evaluating about ``--states`` states per round, with BLAS pinned to one thread
(threadpoolctl). The single-threaded variants are timed in process CPU time (steadier than
wall time on a machine shared with other jobs); the ``thread`` column is wall time (CPU time
would add up the threads): with other load on the cores its gain shrinks or turns into a
loss.

Run: ``.venv/bin/python benchmarks/bench_batched.py [--quick] [--rounds 9] [--threads 2]``
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


def _per_state(fn, n_states: int, reps: int, clock=time.process_time) -> float:
    t0 = clock()
    for _ in range(reps):
        fn()
    return (clock() - t0) / (reps * n_states)


def _states(tree, n: int, rng):
    S = [M.random_state(tree, rng) for _ in range(n)]
    return tuple(np.array([s[k] for s in S]) for k in range(3))


def bench_model(name: str, tree, sizes, rounds: int, states: int, threads: int) -> list:
    import pinocchio as pin
    P = M.to_pinocchio(tree)
    rng = np.random.default_rng(0)
    Q, V, A = _states(tree, max(sizes), rng)
    TAU = tree.inverse_dynamics(Q, V, A)
    # Pinocchio's coordinates (quaternion order, local free-flyer velocities)
    conv = []
    for q, v, a, tau in zip(Q, V, A, TAU):
        T, Td = P.T(q, v)
        conv.append((P.q(q), T @ v, T @ a + Td @ v, np.linalg.solve(T.T, tau)))
    model, data = P.model, P.data
    tree.compile()
    rows = []
    for fname, pname in (("forward_dynamics", "aba"), ("inverse_dynamics", "rnea"),
                         ("mass_matrix", "crba")):
        f = getattr(tree, fname)
        for n in sizes:
            q, v, a, tau = Q[:n], V[:n], A[:n], TAU[:n]
            third = tau if fname == "forward_dynamics" else a
            pc = conv[:n]
            if fname == "mass_matrix":
                single = lambda: [f(x) for x in q]  # noqa: E731
                batch = lambda: f(q)  # noqa: E731
                theirs = lambda: [pin.crba(model, data, c[0]) for c in pc]  # noqa: E731
            else:
                single = lambda: [f(x, y, z) for x, y, z in zip(q, v, third)]  # noqa: E731
                batch = lambda: f(q, v, third)  # noqa: E731
                if pname == "aba":
                    theirs = lambda: [pin.aba(model, data, c[0], c[1], c[3])  # noqa: E731
                                      for c in pc]
                else:
                    theirs = lambda: [pin.rnea(model, data, c[0], c[1], c[2])  # noqa: E731
                                      for c in pc]

            def serial_batch():
                tree.batch_thread_min = 10 ** 9
                return batch()

            def thread_batch():
                tree.batch_threads, tree.batch_thread_min = threads, 1
                return batch()

            variants = {"loop": single, "batch": serial_batch, "thread": thread_batch,
                        "pin": theirs}
            for fn in variants.values():  # warm up (builds the maps)
                fn()
            reps = max(1, states // n)
            times = {k: [] for k in variants}
            for _ in range(rounds):
                for k, fn in variants.items():
                    clock = time.perf_counter if k == "thread" else time.process_time
                    times[k].append(_per_state(fn, n, reps, clock))
            med = {k: float(np.median(t)) * 1e6 for k, t in times.items()}
            rows.append((name, tree.nv, fname, n, med["loop"], med["batch"], med["thread"],
                         pname, med["pin"]))
    tree.batch_threads, tree.batch_thread_min = type(tree).batch_threads, \
        type(tree).batch_thread_min
    return rows


def main(argv=None) -> list:
    parser = script_parser(__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer rounds and states")
    parser.add_argument("--rounds", type=int, default=9,
                        help="interleaved timing rounds (the median is reported)")
    parser.add_argument("--states", type=int, default=3000,
                        help="states per variant per round")
    parser.add_argument("--threads", type=int, default=2, help="threads of the 'thread' variant")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits
    rounds, states = (3, 500) if args.quick else (args.rounds, args.states)
    sizes = (1, 10, 100, 1000)
    rows = []
    with threadpool_limits(1):
        for name, make in (("arm7", lambda: M.arm7(backend="c")),
                           ("humanoid30", lambda: M.humanoid(30, backend="c"))):
            rows += bench_model(name, make(), sizes, rounds, states, args.threads)
    print(f"per-state time [us] (CPU time; thread column: wall time), median of {rounds} "
          f"interleaved rounds, BLAS 1 thread, {os.cpu_count()} cores, thread = "
          f"{args.threads} threads")
    head = (f"{'model':<11}{'nv':>3} {'function':<17}{'N':>5} {'loop':>7} {'batch':>7} "
            f"{'thread':>7} {'pin':>7} {'batch/loop':>10} {'batch/pin':>9} {'thread/batch':>12}")
    print(head)
    print("-" * len(head))
    for name, nv, fname, n, loop, batch, thread, pname, pin_t in rows:
        print(f"{name:<11}{nv:>3} {fname:<17}{n:>5} {loop:7.2f} {batch:7.2f} {thread:7.2f} "
              f"{pin_t:7.2f} {batch / loop:10.2f} {batch / pin_t:9.2f} {thread / batch:12.2f}")
    return rows


if __name__ == "__main__":
    main()

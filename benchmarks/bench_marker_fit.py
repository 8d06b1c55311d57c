"""Per-frame marker fitting: :class:`multibody.motion.MarkerFitter`'s Levenberg-Marquardt
against IPOPT on the same problem.

Both solve, frame after frame and warm-started from the previous frame's solution, the
problem of :mod:`multibody.motion.marker_fit` (weighted marker residuals plus the weak pull to
the preferred pose, joint limits) on the human model (48 DOF, 41 markers with
``cooper-skeleton.txt``):

* ``LM``: ``MarkerFitter.fit_frame`` (compiled residual and exact Jacobian, projected
  Levenberg-Marquardt on the configuration manifold), default stopping rule (relative cost
  decrease 1e-6);
* ``LM tight``: the same with a relative cost tolerance of 1e-12 and 100 iterations;
* ``IPOPT``: CasADi's ``nlpsol("ipopt")`` on the step ``dv`` from the previous frame
  (``q = integrate(q_prev, dv)``, exact Hessian by CasADi, bounds on the limited
  coordinates), built once and called per frame with the measured markers as parameters.

Timing: process CPU time per frame (the machine is shared), ``rounds`` interleaved rounds of
``frames`` frames each (each round runs both methods on the same frames), medians over the
rounds; BLAS limited to one thread. The table also gives the largest difference between the
two solutions (they must find the same minimum) and the marker RMS.

Run: ``.venv/bin/python benchmarks/bench_marker_fit.py [--skeleton S --marker-set M --c3d C]``
(default: the HDM files in ``/work/shared/data/hdm`` when present, else the small test
skeleton with a synthetic capture).
"""
from __future__ import annotations

import os
import statistics
import time

import casadi as ca
import numpy as np
from threadpoolctl import threadpool_limits

from multibody.models import human_model
from multibody.motion import MarkerFitter
from sensors import read_c3d
import sys  # noqa: E402
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from _cli import script_parser  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SMALL = os.path.join(os.path.dirname(HERE), "tests", "data")
HDM = "/work/shared/data/hdm"


def ipopt_solver(fitter: MarkerFitter):
    """IPOPT on the step dv from the previous frame; parameters: q_prev, markers, mask."""
    tree = fitter.tree
    M = len(fitter.marker_names)
    qp = ca.SX.sym("q_prev", tree.nq)
    dv = ca.SX.sym("dv", tree.nv)
    meas = ca.SX.sym("m", 3 * M)
    mask = ca.SX.sym("mask", 3 * M)
    q = tree.integrate(qp, dv, 1.0)
    cost = 0
    for i, (b, o) in enumerate(zip(fitter.marker_bodies, fitter.marker_offsets)):
        T = tree.body_pose(b, q)
        p = T[0:3, 3] + T[0:3, 0:3] @ ca.DM(o)
        r = (p - meas[3 * i:3 * i + 3]) * mask[3 * i:3 * i + 3] * fitter.marker_weights[i]
        cost += ca.sumsqr(r)
    pref = fitter.preferred_q
    d = tree.difference(ca.DM(pref), q)
    idx = [j.v_start + k for j in tree.joints if j.type != "free" for k in range(j.nv)]
    cost += fitter.prior_weight ** 2 * ca.sumsqr(d[idx])
    nlp = {"x": dv, "p": ca.vertcat(qp, meas, mask), "f": cost}
    solver = ca.nlpsol("fit", "ipopt", nlp, {"ipopt.print_level": 0, "print_time": False,
                                              "ipopt.sb": "yes", "ipopt.tol": 1e-10})
    step = ca.Function("step", [qp, dv], [q])
    return solver, step


def bounds(fitter: MarkerFitter, q: np.ndarray):
    tree = fitter.tree
    lo, hi = tree.position_limits()
    lbx, ubx = np.full(tree.nv, -np.inf), np.full(tree.nv, np.inf)
    for j in tree.joints:
        if j.type in ("free", "ball") or j.nq != j.nv:
            continue
        s, v = slice(j.q_start, j.q_start + j.nq), slice(j.v_start, j.v_start + j.nv)
        lbx[v], ubx[v] = lo[s] - q[s], hi[s] - q[s]
    return np.minimum(lbx, 0.0), np.maximum(ubx, 0.0)


def main(argv=None) -> None:
    ap = script_parser(__doc__)
    ap.add_argument("--skeleton",
                    help="HDM skeleton file (default: cooper-skeleton.txt in ../shared/data/hdm "
                         "when present, else the small test skeleton)")
    ap.add_argument("--marker-set", help="marker placement file matching --skeleton")
    ap.add_argument("--c3d",
                    help="motion capture to fit (default: the HDM trial when present, else "
                         "synthetic frames)")
    ap.add_argument("--frames", type=int, default=30, help="frames fitted per round")
    ap.add_argument("--rounds", type=int, default=5,
                    help="interleaved timing rounds (the median is reported)")
    args = ap.parse_args(argv)
    if args.skeleton is None and os.path.isfile(os.path.join(HDM, "cooper-skeleton.txt")):
        args.skeleton = os.path.join(HDM, "cooper-skeleton.txt")
        args.marker_set = os.path.join(HDM, "cooper-markers.txt")
        args.c3d = args.c3d or os.path.join(HDM, "cooper-motion.c3d")
    skeleton = args.skeleton or os.path.join(SMALL, "hdm_small_skeleton.txt")
    marker_set = args.marker_set or os.path.join(SMALL, "hdm_small_markers.txt")
    model = human_model(skeleton, marker_set)
    tree = model.tree
    fitter = MarkerFitter(tree, model.markers, preferred_q=model.reference_configuration())
    names = [n for n, _, _ in model.markers]
    if args.c3d:
        X = read_c3d(args.c3d).select(names).positions
    else:
        rng = np.random.default_rng(0)
        t = np.arange(args.frames * args.rounds + 1) / 120.0
        q0 = model.reference_configuration()
        Q = np.repeat(q0[None], len(t), axis=0)
        lo, hi = tree.position_limits()
        for j in tree.joints[1:]:
            for c in range(j.nq):
                i = j.q_start + c
                Q[:, i] = np.clip(q0[i] + 0.2 * np.sin(2 * np.pi * t + i), lo[i], hi[i])
        X = np.array([fitter.marker_positions(q) for q in Q])
        X += rng.normal(scale=0.002, size=X.shape)
    fitter = fitter.calibrate(X)
    tight = MarkerFitter(tree, model.markers, preferred_q=model.reference_configuration(),
                         cost_tolerance=1e-12, max_iterations=100
                         ).with_offsets(fitter.marker_offsets)
    solver, step = ipopt_solver(fitter)
    first = fitter.fit(X[:1])
    need = args.frames * args.rounds + 1
    if X.shape[0] < need:
        raise SystemExit(f"the capture has {X.shape[0]} frames, {need} needed")
    def ipopt_frame(x, q):
        m = np.nan_to_num(x.ravel())
        mask = np.repeat(np.all(np.isfinite(x), axis=1), 3).astype(float)
        lbx, ubx = bounds(fitter, q)
        sol = solver(x0=np.zeros(tree.nv), p=np.concatenate([q, m, mask]), lbx=lbx, ubx=ubx)
        return np.asarray(step(q, sol["x"])).ravel()

    methods = {"LM": lambda x, q: fitter.fit_frame(x, q)[0],
               "LM tight": lambda x, q: tight.fit_frame(x, q)[0],
               "IPOPT": ipopt_frame}
    with threadpool_limits(limits=1):
        per = {name: [] for name in methods}
        rms = {name: [] for name in methods}
        dq, dq_t = [], []
        q_warm = {name: first.q[0] for name in methods}   # each method warm-starts itself
        for r in range(args.rounds):
            frames = range(1 + r * args.frames, 1 + (r + 1) * args.frames)
            sol = {}
            for name, fit_frame in methods.items():        # interleaved within each round
                c0 = time.process_time()
                sol[name] = []
                for k in frames:
                    q_warm[name] = fit_frame(X[k], q_warm[name])
                    sol[name].append(q_warm[name])
                per[name].append((time.process_time() - c0) / args.frames)
            for i, k in enumerate(frames):
                ref = sol["IPOPT"][i]
                dq.append(np.abs(tree.difference(sol["LM"][i], ref)).max())
                dq_t.append(np.abs(tree.difference(sol["LM tight"][i], ref)).max())
                for name in methods:
                    e = fitter.marker_positions(sol[name][i]) - X[k]
                    rms[name].append(np.sqrt(np.nanmean(np.sum(e ** 2, axis=1))))
    med = {k: statistics.median(v) for k, v in per.items()}
    print(f"model {os.path.basename(skeleton)}: nv = {tree.nv}, {len(names)} markers; "
          f"{args.rounds} interleaved rounds of {args.frames} warm-started frames; CPU time")
    print(f"{'method':8s} {'ms/frame':>10s} {'frames/s':>10s} {'vs LM':>8s} {'marker RMS mm':>14s}")
    for k in ("LM", "LM tight", "IPOPT"):
        print(f"{k:8s} {1e3 * med[k]:10.3f} {1 / med[k]:10.0f} {med[k] / med['LM']:8.1f} "
              f"{1e3 * np.mean(rms[k]):14.3f}")
    print(f"largest difference from the IPOPT solution: LM {max(dq):.2e}, LM tight "
          f"{max(dq_t):.2e} (rad or m)")


if __name__ == "__main__":
    main()

"""Check: pybullet's widely used URDF files load and their dynamics equal Pinocchio's.

``kuka_iiwa/model.urdf`` and ``cartpole.urdf`` (shipped in the pybullet wheel's
``pybullet_data``) have a root link with zero mass and a nonzero inertia, welded to the world.
They load with one :class:`~multibody.parsing.URDFWarning` each; this script compares the mass
matrix, inverse dynamics (RNEA) and forward dynamics with Pinocchio's at random states and prints
the largest relative errors. Skips with a note when pybullet or Pinocchio is absent (both are
benchmark-only: ``pip install 'dynablocks[bench]'``).

Run: ``python benchmarks/check_pybullet_urdf.py [--states 20]``.
"""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from _cli import script_parser  # noqa: E402

from multibody.parsing import URDFWarning, parse_urdf  # noqa: E402

FILES = ["kuka_iiwa/model.urdf", "cartpole.urdf"]


def _pin_q(model, q):
    out = []
    for i in range(1, model.njoints):
        qi = q[model.joints[i].idx_v]
        out += [np.cos(qi), np.sin(qi)] if model.joints[i].nq == 2 else [qi]
    return np.array(out)


def _rel(a, b) -> float:
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def main(argv=None) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--states", type=int, default=20, help="random states per file")
    args = parser.parse_args(argv)
    try:
        import pybullet_data
        import pinocchio as pin
    except ImportError as exc:
        print(f"skipped: {exc.name} is not installed (pip install 'dynablocks[bench]')")
        return 0
    root = pybullet_data.getDataPath()
    print(f"{'file':24s} {'nv':>3s} {'warnings':>8s} {'M rel err':>10s} {'ID rel err':>10s} "
          f"{'FD rel err':>10s}")
    worst = 0.0
    for name in FILES:
        path = os.path.join(root, name)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tree = parse_urdf(path)
        n_warn = sum(issubclass(w.category, URDFWarning) for w in caught)
        tree.finalize()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = pin.buildModelFromUrdf(path)
        data = model.createData()
        rng = np.random.default_rng(0)
        errs = np.zeros(3)
        for _ in range(args.states):
            q, v, a = (rng.uniform(-1.5, 1.5, tree.nv) for _ in range(3))
            qp = _pin_q(model, q)
            H = pin.crba(model, data, qp)
            H = np.triu(H) + np.triu(H, 1).T
            tau = tree.inverse_dynamics(q, v, a)
            errs = np.maximum(errs, [_rel(tree.mass_matrix(q), H),
                                     _rel(tau, pin.rnea(model, data, qp, v, a)),
                                     _rel(tree.forward_dynamics(q, v, tau),
                                          pin.aba(model, data, qp, v, tau))])
        worst = max(worst, float(errs.max()))
        print(f"{name:24s} {tree.nv:3d} {n_warn:8d} {errs[0]:10.2e} {errs[1]:10.2e} {errs[2]:10.2e}")
    print("agree to 1e-9" if worst <= 1e-9 else f"DISAGREE: worst relative error {worst:.3e}")
    return 0 if worst <= 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())

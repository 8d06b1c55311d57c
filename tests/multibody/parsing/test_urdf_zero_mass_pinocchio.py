"""Links with zero mass and a nonzero inertia (pybullet's ``cartpole.urdf`` and
``kuka_iiwa/model.urdf`` have them, welded to the world) load with a warning, and the
dynamics equal Pinocchio's on the same file: mass matrix, inverse and forward dynamics at
random states, to 1e-9 relative. The fixtures are hand-written in the shape of those files
(``benchmarks/check_pybullet_urdf.py`` runs the real ones where pybullet is installed)."""
from __future__ import annotations

import pathlib
import warnings

import numpy as np
import pytest

from multibody.parsing import URDFWarning, parse_urdf

pin = pytest.importorskip("pinocchio", reason="Pinocchio (pin) is not installed")

DATA = pathlib.Path(__file__).parent / "data" / "urdf"
FILES = ["zero_mass_rail_cart_pole.urdf", "zero_mass_base_arm.urdf"]


def _close(a, b, rtol=1e-9):
    scale = max(1.0, float(np.max(np.abs(b))))
    assert float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) <= rtol * scale


def _pin_q(model, q):
    """Pinocchio's configuration of our angles: an unbounded (continuous) joint takes
    (cos q, sin q)."""
    out = []
    for i in range(1, model.njoints):
        qi = q[model.joints[i].idx_v]
        out += [np.cos(qi), np.sin(qi)] if model.joints[i].nq == 2 else [qi]
    return np.array(out)


@pytest.mark.parametrize("name", FILES)
def test_dynamics_equal_pinocchio(name):
    path = DATA / name
    with pytest.warns(URDFWarning, match="zero mass with a nonzero rotational inertia"):
        tree = parse_urdf(path)
    tree.finalize()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = pin.buildModelFromUrdf(str(path))
    data = model.createData()
    assert tree.nq == tree.nv == model.nv
    assert [model.names[i] for i in range(1, model.njoints)] == [j.name for j in tree.joints
                                                                  if j.nv > 0]
    rng = np.random.default_rng(7)
    for _ in range(5):
        q, v, a = (rng.uniform(-1.5, 1.5, tree.nv) for _ in range(3))
        qp = _pin_q(model, q)
        H = pin.crba(model, data, qp)
        H = np.triu(H) + np.triu(H, 1).T
        _close(tree.mass_matrix(q), H)
        tau = tree.inverse_dynamics(q, v, a)
        _close(tau, pin.rnea(model, data, qp, v, a))
        _close(tree.forward_dynamics(q, v, tau), pin.aba(model, data, qp, v, tau))

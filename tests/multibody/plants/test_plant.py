"""RigidBodyPlant: the tree as a System, against an independent closed-form model."""
import numpy as np
import pytest

from multibody import RigidBodyTree
from multibody.plants import RigidBodyPlant
from multibody.models import model_path
from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.analysis.linearize import linearize
from systems.primitives import ConstantVectorSource
from systems.symbolic import to_casadi
from _examples import load_example


@pytest.fixture(scope="module")
def acrobot_plant():
    return RigidBodyPlant(RigidBodyTree.from_urdf(str(model_path("acrobot"))))


def test_urdf_acrobot_plant_equals_spong_closed_form(acrobot_plant):
    spong = load_example("acrobot_lqr").Acrobot(b1=0.0, b2=0.0)
    rng = np.random.default_rng(1)
    c_tree, c_spong = acrobot_plant.create_default_context(), spong.create_default_context()
    for _ in range(5):
        x = rng.uniform(-2, 2, size=4)
        tau = rng.normal()
        c_tree.set_continuous_state(x)
        c_spong.set_continuous_state(x)
        acrobot_plant.get_input_port().fix_value(c_tree, [0.0, tau])
        spong.get_input_port().fix_value(c_spong, [tau])
        np.testing.assert_allclose(acrobot_plant.eval_time_derivatives(c_tree),
                                   spong.eval_time_derivatives(c_spong), rtol=1e-9, atol=1e-9)


def test_plant_symbolic_and_linearization(acrobot_plant):
    cs = to_casadi(acrobot_plant)
    assert (cs.nx, cs.nu, cs.ny) == (4, 2, 6)
    ctx = acrobot_plant.create_default_context()
    x = np.array([0.3, -0.4, 0.5, 0.1])
    ctx.set_continuous_state(x)
    acrobot_plant.get_input_port().fix_value(ctx, [0.0, 0.7])
    np.testing.assert_allclose(np.ravel(cs.f(0, x, [], [0.0, 0.7], [])),
                               acrobot_plant.eval_time_derivatives(ctx), rtol=1e-12)
    ctx.set_continuous_state([np.pi, 0.0, 0.0, 0.0])
    acrobot_plant.get_input_port().fix_value(ctx, [0.0, 0.0])
    lin = linearize(acrobot_plant, ctx)
    spong = load_example("acrobot_lqr").Acrobot(b1=0.0, b2=0.0)
    sctx = spong.create_default_context()
    sctx.set_continuous_state([np.pi, 0.0, 0.0, 0.0])
    spong.get_input_port().fix_value(sctx, [0.0])
    np.testing.assert_allclose(lin.A, linearize(spong, sctx).A, atol=1e-10)
    np.testing.assert_allclose(lin.B[:, 1], linearize(spong, sctx).B[:, 0], atol=1e-10)


def test_passive_swing_conserves_energy():
    plant = RigidBodyPlant(RigidBodyTree.from_urdf(str(model_path("acrobot"))))
    b = DiagramBuilder()
    b.add_system(plant)
    zero = b.add_system(ConstantVectorSource([0.0, 0.0]))
    b.connect(zero.get_output_port(), plant.get_input_port())
    d = b.build()
    ctx = d.create_default_context()
    plant.set_positions(ctx, [1.2, -0.5])
    e0 = plant.total_energy(ctx)
    Simulator(d, ctx, integrator="RK45", accuracy=1e-10).advance_to(2.0)
    assert abs(plant.total_energy(ctx) - e0) < 1e-7 * abs(e0)
    assert not np.allclose(d.get_subsystem_context(plant, ctx).continuous_state[:2], [1.2, -0.5])

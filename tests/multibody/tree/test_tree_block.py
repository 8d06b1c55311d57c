"""The rigid-body tree is itself a System block (issue 25): the brief's four kinds are Systems
added to a builder directly; a URDF arm as a tree block under a PID controller simulates
bitwise like the RigidBodyPlant diagram, linearizes to the same matrices and runs compiled;
the algorithms stay callable without a context; a used tree pickles and deep-copies."""
import copy
import pickle
import types

import casadi as ca
import numpy as np
import pytest

import multibody
from actuators import GeneralizedForceActuator
from multibody import Revolute, RigidBodyTree
from multibody.constraints import JointLimitConstraint
from multibody.errors import TreeError
from multibody.plants import RigidBodyPlant
from sensors import JointStateSensor
from systems import DiagramBuilder, System
from systems.analysis import Simulator, linearize
from systems.controllers import PidController
from systems.primitives import ConstantVectorSource, LogVectorOutput

def _acrobot():
    return RigidBodyTree.from_urdf(str(multibody.model_path("acrobot")))


def _arm7():
    """The shipped 7-DOF arm (joint damping: the passive forces are part of the dynamics)."""
    return RigidBodyTree.from_urdf(str(multibody.model_path("arm7")))


def _x_des(n):
    return np.r_[np.linspace(0.6, -0.4, n), np.zeros(n)]


def _pid_loop(block):
    """``block`` (a tree or a RigidBodyPlant) under a PID holding ``_x_des``; logs the state."""
    n = block.get_input_port("generalized_force").size
    b = DiagramBuilder()
    b.add_system(block)
    pid = b.add_system(PidController(kp=40.0 * np.ones(n), ki=np.ones(n), kd=8.0 * np.ones(n),
                                     name="pid"))
    ref = b.add_system(ConstantVectorSource(_x_des(n), name="ref"))
    b.connect(block.get_output_port("state"), pid.get_input_port_estimated_state())
    b.connect(ref.get_output_port(), pid.get_input_port_desired_state())
    b.connect(pid.get_output_port_control(), block.get_input_port("generalized_force"))
    log = LogVectorOutput(block.get_output_port("state"), b)
    return b.build(), log


def _run(diagram, t_final, **kw):
    ctx = diagram.create_default_context()
    sim = Simulator(diagram, ctx, **kw)
    sim.advance_to(t_final)
    return ctx


def test_the_four_kinds_are_systems_added_to_a_builder_directly():
    tree = _acrobot()
    blocks = [tree, GeneralizedForceActuator(tree, ["shoulder", "elbow"], name="motor"),
              JointStateSensor(tree, ["shoulder", "elbow"], name="encoder"),
              JointLimitConstraint(tree, "elbow", lower=-1.0, upper=1.0)]
    b = DiagramBuilder()
    for blk in blocks:
        assert isinstance(blk, System)
        assert b.add_system(blk) is blk
    assert [(p.name, p.size) for p in tree.input_ports] == [("generalized_force", 2)]
    assert [(p.name, p.size) for p in tree.output_ports] == [("state", 4)]
    q_idx, v_idx, z_idx = tree.continuous_state_partition()
    assert list(q_idx) == [0, 1] and list(v_idx) == [2, 3] and z_idx.size == 0
    np.testing.assert_array_equal(tree.default_continuous_state(), np.zeros(4))


def test_adding_to_a_builder_freezes_the_topology_and_a_broken_tree_is_named():
    tree = RigidBodyTree("two.links")
    tree.add_body("a", 1.0, inertia=np.eye(3) * 0.1)
    tree.add_joint(Revolute("j1", "world", "a", axis=(0, 1, 0)))
    assert tree.name == "two_links" and not tree.is_finalized
    DiagramBuilder().add_system(tree)
    assert tree.is_finalized and tree.get_input_port().size == 1
    with pytest.raises(TreeError, match="after the topology was frozen"):
        tree.add_body("b", 1.0)
    broken = RigidBodyTree("broken")
    broken.add_body("loose", 1.0, inertia=np.eye(3))
    with pytest.raises(TreeError, match="'loose' has no parent joint"):
        broken.get_output_port("state")
    builder = DiagramBuilder()
    with pytest.raises(TreeError, match="'loose' has no parent joint"):
        builder.add_system(broken)
    assert broken.in_builder is None  # not recorded: the builder still builds without it
    other = builder.add_system(PidController(kp=[1.0], ki=[0.0], kd=[0.0]))
    assert [s.name for s in builder.build().leaf_systems()] == [other.name]


def test_add_system_of_a_non_system_says_what_to_pass():
    tree = _acrobot()
    holder = types.SimpleNamespace(tree=tree)
    with pytest.raises(TypeError, match=r"expects a System .*types.SimpleNamespace.*"
                                        r"RigidBodyTree 'acrobot'\) is a block: add_system\(obj.tree\)"):
        DiagramBuilder().add_system(holder)
    with pytest.raises(TypeError, match=r"that is the class: pass an instance, RigidBodyTree"):
        DiagramBuilder().add_system(RigidBodyTree)


def test_tree_block_under_pid_is_bitwise_the_plant_diagram():
    tree = _arm7()
    assert np.any(tree.joint_passive_forces(np.zeros(7), np.ones(7)))
    d_tree, log_tree = _pid_loop(tree)
    d_plant, log_plant = _pid_loop(RigidBodyPlant(_arm7()))
    for kw in (dict(integrator="runge_kutta3", max_step=5e-3), dict(integrator="RK45")):
        c_tree, c_plant = _run(d_tree, 0.2, **kw), _run(d_plant, 0.2, **kw)
        np.testing.assert_array_equal(c_tree.continuous_state, c_plant.continuous_state)
        lt, lp = log_tree.find_log(c_tree), log_plant.find_log(c_plant)
        np.testing.assert_array_equal(lt.sample_times(), lp.sample_times())
        np.testing.assert_array_equal(lt.data(), lp.data())
        assert np.all(np.isfinite(lt.data())) and lt.data().shape[1] > 10
    # the same numbers are the tree's own algorithms: vdot = ABA(q, v, tau + tau_passive)
    ctx = tree.create_default_context()
    x = np.linspace(-0.5, 0.7, 14)
    tau = np.linspace(1.0, -2.0, 7)
    ctx.set_continuous_state(x)
    tree.get_input_port("generalized_force").fix_value(ctx, tau)
    q, v = x[:7], x[7:]
    vdot = tree.forward_dynamics(q, v, tau + tree.joint_passive_forces(q, v))
    np.testing.assert_allclose(tree.eval_time_derivatives(ctx), np.r_[v, vdot], atol=1e-12)
    # RNEA (an independent algorithm) gives back tau from that vdot
    np.testing.assert_allclose(tree.inverse_dynamics(q, v, vdot),
                               tau + tree.joint_passive_forces(q, v), atol=1e-10)


def test_linearization_is_the_plant_diagram_and_finite_differences():
    d_tree, _ = _pid_loop(_arm7())
    d_plant, _ = _pid_loop(RigidBodyPlant(_arm7()))
    x0 = np.r_[_x_des(7), np.linspace(0.01, -0.02, 7)]   # the arm's [q; v], the PID's integrals
    mats = []
    for d in (d_tree, d_plant):
        ctx = d.create_default_context()
        ctx.set_continuous_state(x0)
        lin = linearize(d, ctx, input_port_index="none", output_port_index="none",
                        equilibrium_check=False)
        mats.append(lin.A)
    np.testing.assert_array_equal(mats[0], mats[1])
    # the arm alone, about a moving state under a torque: A, B, C and D all the same
    lins = []
    for block in (_arm7(), RigidBodyPlant(_arm7())):
        ctx = block.create_default_context()
        ctx.set_continuous_state(x0[:14])
        block.get_input_port("generalized_force").fix_value(ctx, np.linspace(1.0, -2.0, 7))
        lins.append(linearize(block, ctx, equilibrium_check=False))
    for m in ("A", "B", "C", "D"):
        np.testing.assert_array_equal(getattr(lins[0], m), getattr(lins[1], m))
    assert np.abs(lins[0].B).max() > 0.1
    # the bare tree about a hanging rest: A = [[0, I], [d vdot/dq, d vdot/dv]]
    tree = _acrobot()
    ctx = tree.create_default_context()
    tree.get_input_port().fix_value(ctx, np.zeros(2))
    lin = linearize(tree, ctx)
    f = lambda x: np.r_[x[2:], tree.forward_dynamics(x[:2], x[2:], np.zeros(2)
                                                   + tree.joint_passive_forces(x[:2], x[2:]))]
    h, A_fd = 1e-6, np.zeros((4, 4))
    for k in range(4):
        e = np.zeros(4)
        e[k] = h
        A_fd[:, k] = (f(e) - f(-e)) / (2 * h)
    np.testing.assert_allclose(lin.A, A_fd, atol=1e-6)
    H = tree.mass_matrix(np.zeros(2))
    np.testing.assert_allclose(lin.B, np.r_[np.zeros((2, 2)), np.linalg.inv(H)], atol=1e-10)
    np.testing.assert_array_equal(lin.C, np.eye(4))


def test_tree_block_runs_compiled_to_the_interpreted_trajectory():
    d, _ = _pid_loop(_arm7())
    c_i = _run(d, 0.5, integrator="RK45", accuracy=1e-10)
    d2, _ = _pid_loop(_arm7())
    sim = Simulator(d2, d2.create_default_context(), compiled=True, integrator="cvodes",
                    accuracy=1e-10)
    assert type(sim).__name__ == "CompiledSimulator"
    sim.advance_to(0.5)
    c_c = sim.get_context()
    np.testing.assert_allclose(c_c.continuous_state, c_i.continuous_state, atol=1e-6)
    assert np.linalg.norm(c_i.continuous_state[:7]) > 0.1   # it moved from the neutral pose


def test_algorithms_need_no_context_and_hold_no_run_state():
    tree = _acrobot()
    tree.finalize()
    q, v, tau = np.array([0.2, 0.1]), np.array([0.0, 0.3]), np.array([0.1, 0.0])
    one = tree.forward_dynamics(q, v, tau)
    batch = tree.forward_dynamics(np.tile(q, (3, 1)), np.tile(v, (3, 1)), np.tile(tau, (3, 1)))
    assert batch.shape == (3, 2)
    np.testing.assert_allclose(batch, np.tile(one, (3, 1)), atol=1e-12)
    assert isinstance(tree.forward_dynamics(ca.SX.sym("q", 2), v, tau), ca.SX)
    # two contexts side by side; a rerun from a copy of one is bitwise the same
    c1, c2 = tree.create_default_context(), tree.create_default_context()
    for c, x in ((c1, [0.1, 0.2, 0, 0]), (c2, [-0.5, 0.4, 1.0, 0])):
        c.set_continuous_state(x)
        tree.get_input_port().fix_value(c, tau)
    d1 = tree.eval_time_derivatives(c1)
    tree.eval_time_derivatives(c2)
    np.testing.assert_array_equal(tree.eval_time_derivatives(c1), d1)


def test_a_used_tree_pickles_and_deep_copies():
    tree = _acrobot()
    ctx = tree.create_default_context()
    ctx.set_continuous_state([0.3, -0.2, 0.1, 0.4])
    tree.get_input_port().fix_value(ctx, [0.5, -0.5])
    xdot = tree.eval_time_derivatives(ctx)
    for other in (pickle.loads(pickle.dumps(tree)), copy.deepcopy(tree)):
        assert other is not tree and other.nq == 2
        c = other.create_default_context()
        c.set_continuous_state([0.3, -0.2, 0.1, 0.4])
        other.get_input_port().fix_value(c, [0.5, -0.5])
        np.testing.assert_array_equal(other.eval_time_derivatives(c), xdot)


def test_tree_names_do_not_shadow_the_system_api():
    from multibody.tree import TreeSystem
    from systems import LeafSystem
    tree = _acrobot()
    tree.create_default_context()
    system_api = set(dir(LeafSystem))
    tree_classes = [c for c in type(tree).__mro__ if c not in TreeSystem.__mro__]
    defined = {n for c in tree_classes for n in vars(c)} - {"__init__", "__module__", "__doc__",
                                                            "__repr__", "__dict__", "__weakref__",
                                                            "__annotations__", "__firstlineno__",
                                                            "__static_attributes__", "__qualname__"}
    assert defined & system_api == set()
    assert set(vars(tree)) & system_api == set()       # no instance attribute hides a method


def test_the_model_name_survives_as_the_file_spells_it():
    urdf = ('<robot name="acme.arm-v1.2"><link name="base"/><link name="l1"><inertial>'
            '<mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>'
            '</inertial></link><joint name="j" type="revolute"><parent link="base"/>'
            '<child link="l1"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" '
            'velocity="1"/></joint></robot>')
    tree = RigidBodyTree.from_urdf(urdf)
    assert (tree.name, tree.model_name) == ("acme_arm-v1_2", "acme.arm-v1.2")
    from multibody.parsing import write_urdf
    assert '<robot name="acme.arm-v1.2">' in write_urdf(tree)
    assert RigidBodyTree.from_urdf(write_urdf(tree)).model_name == "acme.arm-v1.2"
    tree.name = "other.name"                     # the System name stays a valid one
    assert (tree.name, tree.model_name) == ("other_name", "other.name")

"""Whole runs in compiled code (``Simulator(diagram, compiled=True)`` on a diagram holding a
``TimeSteppingRigidBodySystem``, and ``simulate_batch``): the same trajectory and logs as the
interpreted Simulator, bitwise reruns, batches equal to single runs, fallbacks reported,
refusals named."""
import warnings

import numpy as np
import pytest

from actuators import GeneralizedForceActuator
from multibody import RigidBodyTree
from multibody.constraints import PointContactConstraint
from multibody.geometry import Box, Halfspace, Sphere
from multibody.plants import TimeSteppingRigidBodySystem
from multibody.tree import Free
from solvers.compiled import find_compiler
from systems import DiagramBuilder, SymbolicEvaluationError
from systems.analysis import Simulator
from systems.analysis.compiled import WholeRunSimulator, simulate_batch
from systems.primitives import AffineSystem, Integrator, LinearSystem, LogVectorOutput

pytestmark = pytest.mark.skipif(find_compiler() is None, reason="needs a C compiler")

H = 1e-3


def _free(tree, name, mass, shape, inertia):
    tree.add_body(name, mass, inertia=inertia)
    tree.add_joint(Free(f"{name}_free", "world", name))
    tree.add_collision_geometry(name, shape, name=f"{name}_geom")


def _pd_on_x(tree, joint, x_target, kp, kd):
    """An affine state feedback (no state): force along world x on a free joint,
    ``kp (x_d - x) - kd v_x`` (the free joint's linear velocity is in the body frame: the
    box stays almost level, so this is a PD)."""
    j = tree.get_joint(joint)
    n = tree.nq + tree.nv
    D = np.zeros((6, n))
    D[3, j.q_start + 4] = -kp
    D[3, tree.nq + j.v_start + 3] = -kd
    y0 = np.zeros(6)
    y0[3] = kp * x_target
    return AffineSystem(D=D, y0=y0, name="pd")


def box_scene(mu=0.5, integrator=False, **plant_kw):
    """A box resting on the ground pushed by a PD along x (+ a discrete integrator of the
    state with the plant's period when asked), logged per step and periodically."""
    tree = RigidBodyTree("box")
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    _free(tree, "box", 1.0, Box((0.2, 0.2, 0.2)), 1.0 / 12 * 0.08 * np.eye(3))
    tree.finalize()
    act = GeneralizedForceActuator(tree, ["box_free"], name="push")
    contact = PointContactConstraint(tree, mu=mu, name="contact")
    plant = TimeSteppingRigidBodySystem(tree, H, actuators=[act], constraints=[contact],
                                        name="plant", **plant_kw)
    b = DiagramBuilder("box_pd")
    b.add_system(plant)
    pd = b.add_system(_pd_on_x(tree, "box_free", 0.3, 40.0, 8.0))
    b.connect(plant.get_output_port("state"), pd.get_input_port("u"))
    b.connect(pd.get_output_port("y"), plant.get_input_port("push"))
    LogVectorOutput(plant.get_output_port("state"), b)
    LogVectorOutput(pd.get_output_port("y"), b, publish_period=0.005)
    if integrator:   # a discrete block updated with the plant: x_i[n+1] = x_i[n] + h x_box
        j = tree.get_joint("box_free")
        C = np.zeros((1, tree.nq + tree.nv))
        C[0, j.q_start + 4] = H
        acc = b.add_system(LinearSystem(A=[[1.0]], B=C, C=[[1.0]], D=np.zeros((1, C.shape[1])),
                                        time_period=H, name="acc"))
        b.connect(plant.get_output_port("state"), acc.get_input_port("u"))
        LogVectorOutput(acc.get_output_port("y"), b, publish_period=0.0015)
    d = b.build()
    ctx = d.create_default_context()
    q = tree.neutral_configuration()
    q[tree.get_joint("box_free").q_start:][:7] = [1, 0, 0, 0, 0.0, 0.0, 0.1 + 2e-4]
    plant.set_positions(ctx, q)
    return d, plant, ctx


def pile_scene(n=4, controlled=True, **plant_kw):
    """Spheres in a row touching the ground and each other, the first pushed by a PD."""
    tree = RigidBodyTree("pile")
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    r, m = 0.05, 0.1
    for i in range(n):
        _free(tree, f"ball{i}", m, Sphere(r), 0.4 * m * r * r * np.eye(3))
    tree.finalize()
    act = [GeneralizedForceActuator(tree, ["ball0_free"], name="push")] if controlled else []
    contact = PointContactConstraint(tree, mu=0.5, name="contact")
    plant = TimeSteppingRigidBodySystem(tree, H, actuators=act, constraints=[contact],
                                        name="plant", **plant_kw)
    b = DiagramBuilder("pile_pd")
    b.add_system(plant)
    if controlled:
        pd = b.add_system(_pd_on_x(tree, "ball0_free", 0.2, 2.0, 0.5))
        b.connect(plant.get_output_port("state"), pd.get_input_port("u"))
        b.connect(pd.get_output_port("y"), plant.get_input_port("push"))
    LogVectorOutput(plant.get_output_port("state"), b)
    d = b.build()
    ctx = d.create_default_context()
    q = tree.neutral_configuration()
    for i in range(n):
        j = tree.get_joint(f"ball{i}_free")
        q[j.q_start:j.q_start + 7] = [1, 0, 0, 0, 0.1 * i + 1e-4 * i, 0.0, r + 1e-4]
    plant.set_positions(ctx, q)
    return d, plant, ctx


def _logs(d, ctx):
    return {s.name: (s.find_log(ctx).sample_times(), s.find_log(ctx).data())
            for s in d.leaf_systems() if hasattr(s, "find_log")}


def _run(d, ctx, times, compiled):
    sim = Simulator(d, ctx, compiled=compiled)
    for t in times:
        sim.advance_to(t)
    return sim


def _assert_same(d, c1, c2, tol):
    assert c1.time == c2.time
    np.testing.assert_allclose(np.asarray(c2.discrete_state), np.asarray(c1.discrete_state),
                               rtol=0, atol=tol)
    l1, l2 = _logs(d, c1), _logs(d, c2)
    assert l1.keys() == l2.keys()
    for k in l1:
        np.testing.assert_array_equal(l2[k][0], l1[k][0])       # the same sample times
        np.testing.assert_allclose(l2[k][1], l1[k][1], rtol=0, atol=tol)


@pytest.mark.parametrize("scene", ["box", "box_integrator", "pile"])
def test_whole_run_equals_interpreted(scene):
    d, plant, ctx = {"box": lambda: box_scene(), "box_integrator": lambda: box_scene(integrator=True),
                     "pile": lambda: pile_scene()}[scene]()
    c1, c2 = ctx.clone(), ctx.clone()
    s1 = _run(d, c1, [0.1234, 0.3], compiled=False)
    s2 = _run(d, c2, [0.1234, 0.3], compiled=True)
    assert isinstance(s2, WholeRunSimulator)
    assert s2.get_num_steps_taken() == s1.get_num_steps_taken()
    _assert_same(d, c1, c2, 1e-9)
    # the box moved toward the PD's target and stays on the ground
    q = plant.get_positions(plant.get_my_context_from_root(c2))
    assert q[4] > 2e-3 and abs(q[6] - (0.1 if scene != "pile" else 0.05)) < 1e-3


def test_rerun_is_bitwise_and_context_time_reset():
    d, _, ctx = box_scene(integrator=True)
    c1, c2 = ctx.clone(), ctx.clone()
    sim = _run(d, c1, [0.2], compiled=True)
    _run(d, c2, [0.2], compiled=True)
    x1 = np.array(c1.discrete_state)
    np.testing.assert_array_equal(np.asarray(c2.discrete_state), x1)
    # moving the time back reschedules the events from it (as the interpreted Simulator)
    c1.set_time(0.0)
    c1.set_discrete_state(np.asarray(ctx.discrete_state))
    c3 = ctx.clone()
    s3 = Simulator(d, c3)
    s3.advance_to(0.2)
    c3.set_time(0.0)
    c3.set_discrete_state(np.asarray(ctx.discrete_state))
    s3.advance_to(0.1)
    sim.advance_to(0.1)
    _assert_same(d, c3, c1, 1e-9)


def test_compiler_flags_change_the_library_not_the_run(monkeypatch):
    """``flags``: the run's library is built with them (a new one when a library with other
    flags served the diagram before; none when they are those of the library built), also
    under ``compiled="auto"`` and in batches, and the run is bitwise the same (no
    floating-point contraction at any optimisation level)."""
    import solvers.compiled as compiled
    built, load = [], compiled.load_c_library

    def spy(source, prefix, *args, **kw):
        built.append(tuple(kw.get("flags") or ()))
        return load(source, prefix, *args, **kw)
    monkeypatch.setattr(compiled, "load_c_library", spy)
    d, _, ctx = box_scene(integrator=True)
    c0, c1, c2, c3 = ctx.clone(), ctx.clone(), ctx.clone(), ctx.clone()
    s0 = Simulator(d, c0, compiled=True)
    s0.advance_to(0.2)
    other = ("-O2",) if s0.compiler_flags != ("-O2",) else ("-O1",)
    assert built[-1] == s0.compiler_flags
    s1 = Simulator(d, c1, compiled=True, flags=list(other))
    s1.advance_to(0.2)
    assert s1.compiler_flags == other and built[-1] == other
    np.testing.assert_array_equal(np.asarray(c1.discrete_state), np.asarray(c0.discrete_state))
    n = len(built)
    s2 = Simulator(d, c2, compiled=True)              # no flags asked: the library built serves
    s2.advance_to(0.2)
    s3 = Simulator(d, c3, compiled="auto", flags=other)
    s3.advance_to(0.2)
    assert s2.compiler_flags == s3.compiler_flags == other and len(built) == n
    np.testing.assert_array_equal(np.asarray(c3.discrete_state), np.asarray(c0.discrete_state))
    res = simulate_batch(d, [ctx.clone()], 0.2, flags=s0.compiler_flags)
    assert built[-1] == s0.compiler_flags
    np.testing.assert_array_equal(res.final_states[0], np.asarray(c0.discrete_state))
    # the interpreted Simulator takes the keyword and ignores it
    c4 = ctx.clone()
    Simulator(d, c4, flags=other).advance_to(0.2)
    np.testing.assert_allclose(np.asarray(c4.discrete_state), np.asarray(c0.discrete_state),
                               rtol=0, atol=1e-9)


def test_batch_equals_single_runs():
    d, plant, ctx = box_scene(integrator=True)
    x0 = np.asarray(ctx.discrete_state)
    states = np.tile(x0, (3, 1))
    j = plant.tree.get_joint("box_free")
    states[1, j.q_start + 4] = 0.05                  # another initial position
    states[2, plant.nq + j.v_start + 5] = -0.3       # dropping onto the ground
    params = np.tile(np.asarray(ctx.parameters), (3, 1))
    params[2, plant.parameter_index("contact.mu")] = 0.2
    res = simulate_batch(d, final_time=0.25, initial_states=states, parameters=params)
    assert res.final_states.shape == (3, d.num_discrete_states())
    for w in range(3):
        c = d.create_default_context()
        c.set_discrete_state(states[w])
        c.set_parameters(params[w])
        Simulator(d, c, compiled=True).advance_to(0.25)
        np.testing.assert_array_equal(res.final_states[w], np.asarray(c.discrete_state))
        for s in d.leaf_systems():
            if hasattr(s, "find_log"):
                np.testing.assert_array_equal(res.times[s.name], s.find_log(c).sample_times())
                np.testing.assert_array_equal(res.logs[s.name][w], s.find_log(c).data())
    # the worlds differ (the batch does not share state between worlds)
    assert not np.allclose(res.final_states[0], res.final_states[1])
    # and one world equals the interpreted run
    c = d.create_default_context()
    c.set_discrete_state(states[2])
    c.set_parameters(params[2])
    Simulator(d, c).advance_to(0.25)
    np.testing.assert_allclose(res.final_states[2], np.asarray(c.discrete_state), atol=1e-9, rtol=0)


def test_kernel_fallback_is_reported_and_equal():
    """A spinning box landing with few PGS sweeps: the kernel rejects some steps; the
    whole run hands them to the plant's own step (pivoting fallback, warned once) and
    still equals the interpreted run. (No controller here: on such degenerate contact the
    pivoting step amplifies a last-bit difference of the actuation, CasADi's sums against
    numpy's, beyond 1e-9.)"""
    tree = RigidBodyTree("box")
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    _free(tree, "box", 1.0, Box((0.2, 0.2, 0.2)), 1.0 / 12 * 0.08 * np.eye(3))
    tree.finalize()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plant = TimeSteppingRigidBodySystem(tree, H, constraints=[
            PointContactConstraint(tree, mu=0.5, name="contact")], name="plant",
            pgs_max_sweeps=20)
    b = DiagramBuilder("box_drop")
    b.add_system(plant)
    LogVectorOutput(plant.get_output_port("state"), b)
    d = b.build()
    ctx = d.create_default_context()
    q = tree.neutral_configuration()
    q[:7] = [1, 0, 0, 0, 0, 0, 0.15]
    v = np.zeros(6)
    v[0], v[3] = 1.0, 0.5
    plant.set_positions(ctx, q)
    plant.set_velocities(ctx, v)
    c1, c2 = ctx.clone(), ctx.clone()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _run(d, c1, [0.3], compiled=False)
        s2 = _run(d, c2, [0.3], compiled=True)
    assert len(s2.fallback_steps) > 0
    assert all(r == "the contact kernel did not converge" for _, r in s2.fallback_steps)
    _assert_same(d, c1, c2, 1e-9)


def test_refusals_name_the_culprit():
    d, plant, ctx = box_scene(contact_solver="lcp")
    with pytest.raises(SymbolicEvaluationError, match="plant 'plant' takes the 'lcp' step"):
        Simulator(d, ctx, compiled=True)
    # a continuous block
    tree = plant.tree
    b = DiagramBuilder("cont")
    p2 = b.add_system(TimeSteppingRigidBodySystem(tree, H, constraints=[
        PointContactConstraint(tree, mu=0.5, name="contact")], name="plant"))
    integ = b.add_system(Integrator(p2.nq + p2.nv, name="integ"))
    b.connect(p2.get_output_port("state"), integ.get_input_port(0))
    with pytest.raises(SymbolicEvaluationError, match="'integ' has continuous state"):
        Simulator(b.build(), compiled=True)


def test_non_symbolic_controller_is_named():
    from systems import LeafSystem

    class NumpyPd(LeafSystem):
        def __init__(self, n):
            super().__init__("numpy_pd")
            self._x = self.declare_input_port("state", n)
            self.declare_output_port("command", 6, self._calc, feedthrough=True)

        def _calc(self, context):
            x = np.asarray(self._x.eval(context), float)
            return np.full(6, -float(x[4]))
    tree = RigidBodyTree("box")
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    _free(tree, "box", 1.0, Box((0.2, 0.2, 0.2)), 0.01 * np.eye(3))
    tree.finalize()
    act = GeneralizedForceActuator(tree, ["box_free"], name="push")
    plant = TimeSteppingRigidBodySystem(tree, H, actuators=[act], constraints=[
        PointContactConstraint(tree, mu=0.5, name="contact")], name="plant")
    b = DiagramBuilder("np")
    b.add_system(plant)
    pd = b.add_system(NumpyPd(plant.nq + plant.nv))
    b.connect(plant.get_output_port("state"), pd.get_input_port("state"))
    b.connect(pd.get_output_port("command"), plant.get_input_port("push"))
    with pytest.raises(SymbolicEvaluationError, match="numpy_pd"):
        Simulator(b.build(), compiled=True)


def test_without_a_compiler_the_run_refuses(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d, plant, ctx = box_scene()
    assert plant.step_method == "numpy_pgs"
    with pytest.raises(SymbolicEvaluationError, match="needs a C compiler"):
        Simulator(d, ctx, compiled=True)

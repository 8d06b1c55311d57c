"""Per-run memory lives in the Context: the same diagram re-run from copies of one initial
context gives bitwise-identical logs, and two contexts of one diagram advanced interleaved
give exactly what each gives alone (a time-stepping contact scene with warm-started LCPs and
a continuous scene with contact modes and a memoized solve)."""
import numpy as np

from _time_stepping_models import free_boxes, quat_y
from multibody.constraints import PointContactConstraint
from multibody.models import ball_on_ground
from multibody.plants import RigidBodySystem, TimeSteppingRigidBodySystem
from systems import DiagramBuilder, Simulator
from systems.primitives import LogVectorOutput


def _time_stepping_scene():
    tree = free_boxes(2)
    plant = TimeSteppingRigidBodySystem(tree, 2e-3, constraints=[PointContactConstraint(tree, 0.6)])
    b = DiagramBuilder("boxes")
    b.add_system(plant)
    log = LogVectorOutput(plant.get_output_port("state"), b)
    d = b.build()
    ctx = d.create_default_context()
    # one box dropped tilted and spinning onto the ground, the other sliding: contacts open
    # and close, sticking and sliding
    q = np.concatenate([quat_y(0.3), [0.0, 0.0, 0.35], [1, 0, 0, 0], [1.0, 0.02, 0.1]])
    plant.set_positions(ctx, q)
    plant.set_velocities(ctx, [0.0, 2.0, 0.0, 0.5, 0.0, 0.0, 0, 0, 0, 1.0, 0.3, 0.0])
    return d, plant, log, ctx


def _continuous_scene():
    tree = ball_on_ground()
    plant = RigidBodySystem(tree, constraints=[PointContactConstraint(tree, 0.4, restitution=0.5)])
    b = DiagramBuilder("ball")
    b.add_system(plant)
    log = LogVectorOutput(plant.get_output_port("state"), b)
    d = b.build()
    ctx = d.create_default_context()
    plant.set_positions(ctx, [1, 0, 0, 0, 0, 0, 0.3])
    plant.set_velocities(ctx, [0.0, 3.0, 0.0, 1.0, 0.0, 0.0])
    return d, plant, log, ctx


def _run(d, log, ctx, t_final, **kw):
    sim = Simulator(d, ctx, **kw)
    sim.advance_to(t_final)
    data = log.find_log(sim.get_context())
    return data.sample_times().copy(), data.data().copy()


def _assert_bitwise(a, b):
    assert a[0].shape == b[0].shape and a[1].shape == b[1].shape
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_time_stepping_reruns_from_copies_are_bitwise_identical():
    d, plant, log, ctx = _time_stepping_scene()
    first = _run(d, log, ctx.clone(), 0.3)
    second = _run(d, log, ctx.clone(), 0.3)
    assert first[1].shape[1] > 100
    assert np.ptp(first[1][6]) > 0.05                      # something happened
    _assert_bitwise(first, second)


def _chunked(d, log, ctx, chunk, n, **kw):
    sim = Simulator(d, ctx, **kw)
    for k in range(1, n + 1):
        sim.advance_to(chunk * k)
    data = log.find_log(sim.get_context())
    return data.sample_times().copy(), data.data().copy()


def test_time_stepping_contexts_interleaved_match_each_alone():
    d, plant, log, ctx = _time_stepping_scene()
    alone = _chunked(d, log, ctx.clone(), 0.01, 20)
    s1, s2 = Simulator(d, ctx.clone()), Simulator(d, ctx.clone())
    plant.set_velocities(s2.get_context(), np.zeros(12))   # a different run in between
    for k in range(1, 21):
        s1.advance_to(0.01 * k)
        s2.advance_to(0.01 * k)
    data = log.find_log(s1.get_context())
    _assert_bitwise(alone, (data.sample_times(), data.data()))


def test_continuous_reruns_and_interleaving_are_bitwise_identical():
    d, plant, log, ctx = _continuous_scene()
    kw = dict(integrator="RK45", accuracy=1e-8)
    first = _run(d, log, ctx.clone(), 0.6, **kw)
    second = _run(d, log, ctx.clone(), 0.6, **kw)
    _assert_bitwise(first, second)
    assert np.min(first[1][6]) < 0.1 + 1e-6              # it bounced on the ground
    alone = _chunked(d, log, ctx.clone(), 0.05, 12, **kw)
    s1, s2 = Simulator(d, ctx.clone(), **kw), Simulator(d, ctx.clone(), **kw)
    plant.set_positions(s2.get_context(), [1, 0, 0, 0, 0.5, 0, 0.2])
    for k in range(1, 13):
        s1.advance_to(0.05 * k)
        s2.advance_to(0.05 * k)
    data = log.find_log(s1.get_context())
    _assert_bitwise(alone, (data.sample_times(), data.data()))

"""The step-method contract of TimeSteppingRigidBodySystem (issue 21): a custom StepMethod
plugs in, a step it cannot take goes to its fallback with one warning per plant, the warm
start is one ContactWarmStart record in the context (reruns bitwise, rows mapped by key,
methods switching mid-run), and every step reports a StepStatus record. h = 1e-3."""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

from _time_stepping_models import free_boxes, pendulum
from multibody.constraints import PointContactConstraint
from multibody.errors import MultibodyError, StepMethodWarning
from systems.errors import SystemCallbackError
from multibody.plants import (ContactWarmStart, PivotingStep, StepFailure, StepMethod,
                              StepSolution, StepStatus, TimeSteppingRigidBodySystem)

H = 1e-3
needs_compiler = pytest.mark.skipif(
    __import__("solvers.compiled", fromlist=["x"]).find_compiler() is None,
    reason="no C compiler: the compiled step is not built")


def _caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [x for x in w if issubclass(x.category, StepMethodWarning)]


def _box_run(plant, steps, z=0.1005, v=(0, 0, 2.0, 0.3, 0.0, -0.2)):
    """A spinning box landing on the ground; the step solution of every step."""
    ctx = plant.create_default_context()
    plant.set_positions(ctx, [1, 0, 0, 0, 0, 0, z])
    plant.set_velocities(ctx, list(v))
    sols = []
    for _ in range(steps):
        sols.append(plant.get_output_port("step").eval(ctx))
        plant.advance(ctx, 1)
    return ctx, sols


class ExplicitFreeFlight(StepMethod):
    """A step without constraints, written against the contract only:
    ``v_n = v + H^-1 h (tau - c)`` (no damping), ``q_n = q (+) h v_n``."""

    name = "free_flight"
    description = "the free-flight step"

    def _step_impl(self, context, inputs):
        plant, h = self.plant, self.plant.time_step
        H_, c, _ = plant.kinematics(inputs.q, inputs.v, inputs.time)
        nv = inputs.v.shape[0]
        vn = inputs.v + np.linalg.solve(np.reshape(H_, (nv, nv)), h * (inputs.tau - c))
        qn = plant.integrate(inputs.q, vn, h)
        xd = np.concatenate([qn, vn])
        status = StepStatus(self.name, True, 0, 0, 0.0, 0, None)
        return StepSolution(inputs.time, qn, vn, xd, inputs.tau, np.zeros_like(vn), [], [],
                            (vn - inputs.v) / h, None, lambda: None, lambda: status)


class EveryOtherStep(StepMethod):
    """Takes the even steps with the pivoting step and refuses the odd ones."""

    name = "every_other"

    def __init__(self, plant, fallback=True):
        super().__init__(plant)
        self.inner = PivotingStep(plant)
        self.fallback = PivotingStep(plant) if fallback else None

    def _step_impl(self, context, inputs):
        if round(inputs.time / self.plant.time_step) % 2:
            return StepFailure("odd step")
        return self.inner.take(context, inputs)


class NoFallback(EveryOtherStep):
    name = "no_fallback"

    def __init__(self, plant):
        super().__init__(plant, fallback=False)


# ---------------------------------------------------------------- the contract
def test_a_custom_step_method_is_built_once_and_takes_every_step():
    tree = pendulum()
    plant = TimeSteppingRigidBodySystem(tree, H, contact_solver=ExplicitFreeFlight,
                                        include_passive_forces=False)
    ref = TimeSteppingRigidBodySystem(tree, H, contact_solver="lcp",
                                      include_passive_forces=False)
    assert isinstance(plant.stepper, ExplicitFreeFlight) and plant.stepper.plant is plant
    assert plant.step_method == "free_flight"
    assert plant.step_method_reason == "contact_solver=ExplicitFreeFlight"
    out = []
    for p in (plant, ref):
        ctx = p.create_default_context()
        p.set_positions(ctx, [0.7])
        p.advance(ctx, 300)
        out.append(p.get_positions_and_velocities(ctx))
        assert p.get_output_port("step").eval(ctx).status.method == p.step_method
    # the same semi-implicit Euler as the pivoting step without rows (inv vs solve)
    np.testing.assert_allclose(out[0], out[1], rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match=r"contact_solver must be 'auto', 'pgs' or 'lcp' "
                                         r"\(or a StepMethod subclass\), got <class 'int'>"):
        TimeSteppingRigidBodySystem(tree, H, contact_solver=int)


def test_fallback_takes_the_refused_steps_and_warns_once_per_plant():
    """Odd steps refused and taken by the fallback: the run equals the pivoting step's,
    bitwise (the same computations with the same warm-start record)."""
    tree = free_boxes(1)
    plant = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(
        tree, mu=0.5)], contact_solver=EveryOtherStep, name="flaky")
    ref = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(
        tree, mu=0.5)], contact_solver="lcp")
    (ctx, sols), caught = _caught(lambda: _box_run(plant, 30))
    ctx_ref, _ = _box_run(ref, 30)
    assert np.array_equal(ctx.discrete_state, ctx_ref.discrete_state)
    assert len(caught) == 1
    msg = str(caught[0].message)
    assert "TimeSteppingRigidBodySystem 'flaky'" in msg and "t=0.001" in msg
    assert "fell back from the step method to the pivoting (Lemke) step: odd step" in msg
    odd, even = sols[1].status, sols[2].status
    assert (odd.method, odd.fallback_from, odd.fallback_reason) == ("lcp", "every_other",
                                                                   "odd step")
    assert (even.method, even.fallback_from, even.fallback_reason) == ("lcp", None, None)
    _, again = _caught(lambda: _box_run(plant, 5))            # another context: no warning
    assert again == []
    stuck = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(
        tree, mu=0.5)], contact_solver=NoFallback, name="stuck")
    with pytest.raises(SystemCallbackError, match=r"'stuck': step method 'no_fallback' could "
                                                  r"not take the step at t=0.001 \(odd step\) "
                                                  r"and has no fallback") as err:
        _box_run(stuck, 3)
    assert isinstance(err.value.__cause__, MultibodyError)


@needs_compiler
def test_kernel_fallback_is_the_contract_fallback_with_its_status():
    tree = free_boxes(1)
    plant = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(
        tree, mu=0.5)], pgs_max_sweeps=1)
    assert plant.stepper.name == "compiled_pgs" and plant.stepper.fallback.name == "lcp"
    (_, sols), caught = _caught(lambda: _box_run(plant, 10))
    assert len(caught) == 1
    st = sols[-1].status
    assert st.method == "lcp" and st.fallback_from == "compiled_pgs"
    assert st.fallback_reason.startswith("the kernel did not converge: residual ")
    assert "after 1 PGS sweeps" in st.fallback_reason and sols[-1].report is st.report


# ---------------------------------------------------------------- the status record
@needs_compiler
def test_status_of_a_resting_box_on_both_methods():
    """A resting box: four contacts, m g shared; the compiled step's disc rows (3 per
    contact) and the pivoting step's cone rows (1 + 4 per contact)."""
    tree = free_boxes(1)
    out = {}
    for solver in ("auto", "lcp"):
        plant = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(
            tree, mu=0.5)], contact_solver=solver)
        ctx, sols = _box_run(plant, 50, z=0.1, v=(0,) * 6)
        out[solver] = sols[-1].status
    c, p = out["auto"], out["lcp"]
    assert isinstance(c, StepStatus) and isinstance(p, StepStatus)
    assert (c.method, c.converged, c.active_contacts, c.rows) == ("compiled_pgs", True, 4, 12)
    assert 1 <= c.sweeps <= 500 and type(c.sweeps) is int and c.residual < 1e-10
    assert (c.report.method, c.report.size, c.report.iterations) == ("pgs", 12, c.sweeps)
    assert (p.method, p.converged, p.active_contacts, p.rows, p.sweeps) == ("lcp", True, 4,
                                                                            20, 0)
    assert p.report.method == "lemke" and c.fallback_from is None is p.fallback_from
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.sweeps = 0


# ---------------------------------------------------------------- the warm-start record
def test_warm_start_record_maps_entries_by_key():
    rec = ContactWarmStart("lcp", [("a", 0), ("b", 0), ("c", 0)], np.array([1.0, 2.0, 3.0]),
                           np.array([0.5, 0.0, 0.25]))
    p, lam = rec.lookup([("c", 0), ("new", 1), ("a", 0)])
    np.testing.assert_array_equal(p, [3.0, 0.0, 1.0])
    np.testing.assert_array_equal(lam, [0.25, 0.0, 0.5])
    p, lam = ContactWarmStart("pgs", (("a",),), np.array([4.0])).lookup([("a",), "b"])
    np.testing.assert_array_equal(p, [4.0, 0.0])
    np.testing.assert_array_equal(lam, [0.0, 0.0])


@pytest.mark.parametrize("solver", ["auto", "lcp"])
def test_reruns_from_copies_of_a_context_are_bitwise_and_the_record_is_typed(solver):
    """Two copies of a context taken mid-run rerun bitwise alike, and alike a fresh context
    set to the same state: a copy starts with an empty memory (a cold start), so its run
    does not depend on the run it was copied from."""
    tree = free_boxes(1)
    plant = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(
        tree, mu=0.5)], contact_solver=solver)
    ctx, _ = _box_run(plant, 40)
    rec = ctx.get_memory()["warm_start"]
    assert isinstance(rec, ContactWarmStart) and rec.method == plant.step_method
    assert len(rec.keys) == rec.impulses.shape[0] and np.any(rec.impulses > 0)
    b, c = ctx.clone(), ctx.clone()
    fresh = plant.create_default_context()
    plant.set_positions_and_velocities(fresh, plant.get_positions_and_velocities(ctx))
    fresh.set_time(ctx.time)
    assert "warm_start" not in b.get_memory()
    for x in (b, c, fresh):
        plant.advance(x, 60)
    assert np.array_equal(b.discrete_state, c.discrete_state)
    assert np.array_equal(b.discrete_state, fresh.discrete_state)
    # each rerun left its own record, the same (bitwise) for the same run
    records = [x.get_memory()["warm_start"] for x in (b, c, fresh)]
    assert all(isinstance(r, ContactWarmStart) and r.method == plant.step_method
               for r in records)
    assert records[0] is not records[1] and records[0] is not rec
    for r in records[1:]:
        assert list(r.keys) == list(records[0].keys)
        np.testing.assert_array_equal(r.impulses, records[0].impulses)


@needs_compiler
def test_a_record_from_another_plant_maps_by_key_bitwise():
    """The kernel reads its own record directly and another plant's (equal keys, other
    objects) by key: the same step, bitwise."""
    tree = free_boxes(1)

    def plant():
        return TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(
            tree, mu=0.5)])
    one, two = plant(), plant()
    ctx, _ = _box_run(one, 30)
    rec = ctx.get_memory()["warm_start"]
    other = two.create_default_context()
    two.set_positions_and_velocities(other, one.get_positions_and_velocities(ctx))
    other.get_memory()["warm_start"] = rec
    assert rec.keys is not two.stepper.tables.warm_keys and rec.keys == \
        two.stepper.tables.warm_keys
    a = one.get_output_port("step").eval(ctx)
    b = two.get_output_port("step").eval(other)
    assert np.array_equal(a.xd_next, b.xd_next)


@needs_compiler
def test_switching_methods_mid_run_keeps_a_valid_warm_start():
    """With a tight sweep budget and tolerance (1e-12: met by the kernel's polish, not by a
    step its sweeps end) the run switches between the kernel and its pivoting fallback (a
    box landing while sliding, no spin: disc and cone agree); each step leaves its method's
    record, the other method starts from the entries it finds, and the run agrees with the
    pivoting step's."""
    tree = free_boxes(1)
    mixed = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(
        tree, mu=0.5)], pgs_max_sweeps=20, lcp_tolerance=1e-12)
    ref = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(
        tree, mu=0.5)], contact_solver="lcp")
    ctx = mixed.create_default_context()
    mixed.set_positions(ctx, [1, 0, 0, 0, 0, 0, 0.1005])
    mixed.set_velocities(ctx, [0, 0, 0, 0.3, 0.0, -0.2])
    methods = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StepMethodWarning)
        for _ in range(80):
            st = mixed.get_output_port("step").eval(ctx).status
            methods.append(st.method)
            mixed.advance(ctx, 1)
            rec = ctx.get_memory()["warm_start"]
            assert isinstance(rec, ContactWarmStart) and rec.method == st.method
    switches = sum(a != b for a, b in zip(methods[:-1], methods[1:]))
    assert switches >= 2 and methods[-1] == "compiled_pgs"
    ctx_ref, _ = _box_run(ref, 80, v=(0, 0, 0, 0.3, 0.0, -0.2))
    np.testing.assert_allclose(ctx.discrete_state, ctx_ref.discrete_state, atol=1e-9)

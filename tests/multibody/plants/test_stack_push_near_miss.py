"""Issue 21: stacks of pushed boxes survive solver misses (the near-miss last resorts).

Three free boxes stacked 0.2 m apart (four contact points per face: the normal-force
distribution is indeterminate), the bottom one launched at 0.5 m/s, ``mu = 0.5`` friction
cone, h = 1 ms. The compiled kernel ends a few of these steps at a residual of 2e-7..3e-6
(above ``lcp_tolerance`` 1e-7; its polish cycles among the degenerate active sets); its
pivoting fallback's Lemke breaks down at t = 0.139 and the friction-pyramid PGS ends a hair
above the tolerance too: before, the simulation raised ``LCPSolveError`` there (and with
``contact_solver="lcp"`` at t = 0.044 when pushed at 45 deg).

What is guaranteed and asserted: no error; every step's residual within the step's
tolerance or, for a step marked ``"near_miss"``, within ``NEAR_MISS`` (1e-5); no
penetration beyond 1 mm (the boxes' size is 0.2 m); every contact force inside its friction
cone (the pyramid on steps the pivoting step's pyramid PGS took); the boxes stay stacked
(heights within 1 mm of 0.1, 0.3, 0.5 m); the bottom box slides out within analytic bounds
and stops, and the pivoting step throughout agrees to 0.1 mm. The step method's own last
resort (the kernel's iterate kept when the fallback raises) is tested on the contract.
"""
import warnings

import numpy as np
import pytest

from solvers.errors import LCPSolveError
from solvers.lcp import solve_lcp

from _time_stepping_models import free_boxes
from multibody.constraints import PointContactConstraint
from multibody.errors import StepMethodWarning
from multibody.plants import (PivotingStep, StepFailure, StepMethod,
                              TimeSteppingRigidBodySystem)

NEAR_MISS = 1e-5      # multibody.plants._time_stepping_solve.NEAR_MISS (documented there)
MU = 0.5


def _stack(n=3, mu=MU, solver="auto", heading=0.0):
    tree = free_boxes(n)
    p = TimeSteppingRigidBodySystem(tree, 1e-3, constraints=[PointContactConstraint(tree, mu=mu)],
                                    contact_solver=solver)
    ctx = p.create_default_context()
    q = tree.neutral_configuration()
    for i in range(n):
        q[7 * i:7 * i + 7] = [1, 0, 0, 0, 0.01 * i, 0, 0.1 + 0.2 * i]
    p.set_positions(ctx, q)
    v = np.zeros(6 * n)
    v[3], v[4] = 0.5 * np.cos(np.radians(heading)), 0.5 * np.sin(np.radians(heading))
    p.set_velocities(ctx, v)
    return p, ctx


def test_pushed_stack_survives_kernel_and_fallback_miss():
    p, ctx = _stack()
    if p.step_method != "compiled_pgs":
        pytest.skip(f"the compiled step is not available ({p.step_method_reason})")
    port = p.get_output_port("step")
    near, fell, max_pen = [], 0, 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(200):
            sol = port.eval(ctx)
            st = sol.status
            if st.report.status == "near_miss":
                assert st.residual <= NEAR_MISS
                near.append(round(sol.time, 6))
            else:
                assert st.converged and st.residual <= 1e-7 * (1 + 1e-9)
            fell += st.fallback_from is not None
            # the cone; a fallback step solved by the pivoting step's friction-pyramid PGS
            # (its own documented fallback) is inside the pyramid: |f| <= sqrt(2) mu N
            cone = MU * (np.sqrt(2.0) if st.report.method == "pgs" else 1.0)
            for c in sol.contact_results:
                max_pen = max(max_pen, -c.distance)
                ft = np.linalg.norm(c.friction_force)
                assert c.normal_force >= -1e-9
                assert ft <= cone * c.normal_force * (1 + 1e-6) + 1e-9
            p.advance(ctx, 1)
    assert 0.139 in near           # the step that raised LCPSolveError before
    assert fell >= 1
    assert max_pen <= 1e-3
    z = p.get_positions(ctx)[[6, 13, 20]]
    np.testing.assert_allclose(z, [0.1, 0.3, 0.5], atol=1e-3)
    # the bottom box slides out a little and stops: its deceleration lies between mu g (the
    # stack sliding as one) and 5 mu g (ground friction mu 3mg plus the box above, mu 2mg),
    # so its travel lies between v^2 / (10 mu g) = 5.1 mm (less half a step's travel,
    # v h / 2, for the discrete integration) and v^2 / (2 mu g) = 25.5 mm
    x = p.get_positions(ctx)[[4, 11, 18]] - [0.0, 0.01, 0.02]
    g = 9.81
    assert 0.25 / (10 * MU * g) - 0.5 * 1e-3 * 0.5 <= x[0] <= 0.25 / (2 * MU * g)
    assert np.all(x[1:] > 0.0) and np.all(x[1:] < x[0])   # dragged along, less far
    np.testing.assert_allclose(p.get_velocities(ctx), 0.0, atol=1e-6)   # at rest
    # the pivoting step throughout (an independent solver) lands on the same stack
    # (a different force distribution of the indeterminate contacts: 0.1 mm)
    p2, ctx2 = _stack(solver="lcp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p2.advance(ctx2, 200)
    np.testing.assert_allclose(p.get_positions(ctx), p2.get_positions(ctx2), atol=1e-4)


def test_pivoting_step_survives_the_pushed_stack_at_45_degrees():
    """contact_solver="lcp": Lemke breaks down at t = 0.044 and the pyramid PGS ends at a
    near miss; the step keeps it (status "near_miss") instead of raising."""
    p, ctx = _stack(solver="lcp", heading=45.0)
    port = p.get_output_port("step")
    near = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(60):
            st = port.eval(ctx).status
            if st.report.status == "near_miss":
                near.append(st.residual)
            p.advance(ctx, 1)
    assert near and max(near) <= NEAR_MISS
    np.testing.assert_allclose(p.get_positions(ctx)[[6, 13, 20]], [0.1, 0.3, 0.5], atol=1e-3)


class _Raising(StepMethod):
    """A fallback whose every step fails (as a Lemke breakdown does)."""

    name = "raising"

    def _step_impl(self, context, inputs):
        res = solve_lcp(np.array([[-1.0]]), np.array([-1.0]), "lemke")   # infeasible
        raise LCPSolveError(res, "test fallback")


class _MissingByResidual(StepMethod):
    """Never converges; hands over the pivoting step's solution as its own iterate with
    residual 5e-6 (within NEAR_MISS) on even steps, 5e-5 (beyond) from step 4 on."""

    name = "missing"
    description = "the missing step"

    def __init__(self, plant):
        super().__init__(plant)
        self.inner = PivotingStep(plant)
        self.fallback = _Raising(plant)

    def _step_impl(self, context, inputs):
        k = round(inputs.time / self.plant.time_step)
        return StepFailure("did not converge (test)", candidate=self.inner.take(context, inputs),
                           residual=5e-6 if k < 4 else 5e-5)


def test_step_method_keeps_its_iterate_within_the_near_miss_bound_when_the_fallback_fails():
    tree = free_boxes(1)
    p = TimeSteppingRigidBodySystem(tree, 1e-3, constraints=[PointContactConstraint(tree)],
                                    contact_solver=_MissingByResidual)
    ref = TimeSteppingRigidBodySystem(tree, 1e-3, constraints=[PointContactConstraint(tree)],
                                      contact_solver="lcp")
    ctxs = []
    for plant in (p, ref):
        ctx = plant.create_default_context()
        plant.set_positions(ctx, [1, 0, 0, 0, 0, 0, 0.1])
        ctxs.append(ctx)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(4):
            st = p.get_output_port("step").eval(ctxs[0]).status
            assert (st.method, st.converged, st.report.status) == ("lcp", False, "near_miss")
            assert st.residual <= NEAR_MISS and "test fallback" in st.fallback_reason
            p.advance(ctxs[0], 1)
            ref.advance(ctxs[1], 1)
    msgs = [str(x.message) for x in w if issubclass(x.category, StepMethodWarning)
            and "failed too" in str(x.message)]
    assert len(msgs) == 1 and "t=0 " in msgs[0] and "residual 5e-06" in msgs[0]
    assert "boxes_time_stepping" in msgs[0]
    np.testing.assert_array_equal(p.get_positions(ctxs[0]), ref.get_positions(ctxs[1]))
    with pytest.raises(Exception, match="test fallback"):     # beyond the bound: raised
        p.get_output_port("step").eval(ctxs[0])

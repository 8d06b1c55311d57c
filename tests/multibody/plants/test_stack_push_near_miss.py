"""Issue 21: a stack of pushed boxes on the compiled step survives a kernel miss whose
pivoting fallback breaks down too (the step method's last resort, ``_step_method``).

Three free boxes stacked 0.2 m apart (four contact points per face: the normal-force
distribution is indeterminate), the bottom one launched at 0.5 m/s, ``mu = 0.5`` friction
cone, h = 1 ms. The kernel ends a few of these steps at a residual of 2e-7..3e-6 (above
``lcp_tolerance`` 1e-7); its pivoting fallback breaks down at t = 0.139 and the pyramid PGS
fails too. Before the last resort the simulation raised ``LCPSolveError`` there.

What is guaranteed and asserted: no error; every step's residual within the step's
tolerance or, for a step marked ``converged=False`` / ``"near_miss"``, within ``NEAR_MISS``;
the near-miss is warned once, naming the plant; no penetration beyond 1 mm (the boxes'
size is 0.2 m); every contact force inside its friction cone (the pyramid on steps the pivoting
step's pyramid PGS took); the stack stays stacked
(heights within 1 mm of 0.1, 0.3, 0.5 m); the bottom box slides out
within analytic bounds and stops, and the pivoting step throughout agrees to 0.1 mm.
"""
import warnings

import numpy as np
import pytest

from _time_stepping_models import free_boxes
from multibody.constraints import PointContactConstraint
from multibody.errors import StepMethodWarning
from multibody.plants import TimeSteppingRigidBodySystem

NEAR_MISS = 1e-5      # multibody.plants._time_stepping_solve.NEAR_MISS (documented there)
MU = 0.5


def _stack(n=3, mu=MU, solver="auto"):
    tree = free_boxes(n)
    p = TimeSteppingRigidBodySystem(tree, 1e-3, constraints=[PointContactConstraint(tree, mu=mu)],
                                    contact_solver=solver)
    ctx = p.create_default_context()
    q = tree.neutral_configuration()
    for i in range(n):
        q[7 * i:7 * i + 7] = [1, 0, 0, 0, 0.01 * i, 0, 0.1 + 0.2 * i]
    p.set_positions(ctx, q)
    v = np.zeros(6 * n)
    v[3] = 0.5
    p.set_velocities(ctx, v)
    return p, ctx


def test_pushed_stack_survives_kernel_and_fallback_miss():
    p, ctx = _stack()
    if p.step_method != "compiled_pgs":
        pytest.skip(f"the compiled step is not available ({p.step_method_reason})")
    port = p.get_output_port("step")
    near, fell, max_pen = [], 0, 0.0
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(200):
            sol = port.eval(ctx)
            st = sol.status
            if st.converged:
                assert st.residual <= 1e-7 * 1.0001 or st.fallback_from is not None
            else:
                assert st.report.status == "near_miss" and st.method == "compiled_pgs"
                assert st.residual <= NEAR_MISS
                assert "failed too" in st.fallback_reason
                near.append((sol.time, st.residual))
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
    msgs = [str(x.message) for x in w if issubclass(x.category, StepMethodWarning)
            and "failed too" in str(x.message)]
    # the step at t = 0.138 (before the last resort it raised LCPSolveError)
    assert near and any(abs(t - 0.138) < 1.5e-3 for t, _ in near), near
    assert len(msgs) == 1 and "boxes_time_stepping" in msgs[0] and "residual" in msgs[0]
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

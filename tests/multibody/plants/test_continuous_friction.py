"""Coulomb friction is the same in every direction in the continuous plant
(``RigidBodySystem``: Baraff's acceleration-level LCP with stick/slide modes and witness
functions): a box launched at eight headings slides exactly v^2 / (2 mu g); on slopes turned
about the vertical a box released at rest slides straight downhill at g (sin a - mu cos a)
in mode 'slide' (in a handful of integrator steps) or sticks when tan a < mu; launched uphill
it stops at the closed-form time and slides back or stays; a push at any heading makes it
slip exactly when the push reaches mu m g; a box resting on redundant contact points (two
contact blocks on the same pair) is solved, never a bare LinAlgError."""
import warnings

import numpy as np
import pytest

from _time_stepping_models import free_boxes
from actuators import Actuator
from multibody.constraints import PointContactConstraint
from multibody.plants import PainleveError, RigidBodySystem
import scipy.linalg as sla

from solvers import lcp
from solvers.lcp import solve_boxed_lcp
from systems.analysis import Simulator

G, MU, M = 9.81, 0.5, 1.0
Q_FLAT = [1, 0, 0, 0, 0, 0, 0.1]


def _slope(angle, azimuth):
    """Gravity of a slope of ``angle`` whose downhill direction has ``azimuth`` about z."""
    down = np.array([np.cos(azimuth), np.sin(azimuth), 0.0])
    return G * (np.sin(angle) * down - np.cos(angle) * np.array([0, 0, 1.0])), down


def _system(gravity=(0, 0, -G), actuators=(), blocks=1):
    tree = free_boxes(1, mass=M, gravity=gravity)
    cons = [PointContactConstraint(tree, MU, name=f"contact{i}") for i in range(blocks)]
    return RigidBodySystem(tree, actuators=actuators, constraints=cons)


def _simulate(s, v=None, accuracy=1e-10, max_step=0.05):
    ctx = s.create_default_context()
    s.set_positions(ctx, Q_FLAT)
    if v is not None:
        s.set_velocities(ctx, np.concatenate([np.zeros(3), v]))
    sim = Simulator(s, ctx, integrator="RK45", accuracy=accuracy, max_step=max_step)
    sim.initialize()
    return sim, ctx


def _end_of_slide(heading, v0=1.0):
    s = _system()
    sim, ctx = _simulate(s, v0 * np.array([np.cos(heading), np.sin(heading), 0.0]))
    assert s.modes(ctx)[0][0] == "slide"
    sim.advance_to(1.2 * v0 / (MU * G))              # it stops at v0 / (mu g)
    assert s.modes(ctx)[0] == ("stick", None)
    assert np.max(np.abs(s.get_velocities(ctx))) < 1e-9
    return s.get_positions(ctx)[4:6]


def test_a_box_slides_the_coulomb_distance_at_every_heading():
    headings = np.arange(8) * np.pi / 4 + 0.1
    ends = [_end_of_slide(a) for a in headings]
    dist = np.array([np.linalg.norm(e) for e in ends])
    np.testing.assert_allclose(dist, dist[0], rtol=1e-6)
    assert dist[0] == pytest.approx(1.0 / (2 * MU * G), rel=1e-6)     # v^2 / (2 mu g)
    for e, a in zip(ends, headings):                                   # straight ahead
        np.testing.assert_allclose(e / np.linalg.norm(e), [np.cos(a), np.sin(a)], atol=1e-9)


@pytest.mark.parametrize("azimuth_deg", [0, 30, 45, 60, 90])
def test_released_on_a_slope_it_slides_downhill_at_the_closed_form_rate(azimuth_deg):
    # tan 35 = 0.70 > mu: slides. 0.70 < sqrt(2) mu, so per-axis friction bounds at 45
    # degrees would hold it (|f_t| up to 1.41 mu f_n): the friction circle must not
    angle = np.deg2rad(35.0)
    g, down = _slope(angle, np.deg2rad(azimuth_deg))
    s = _system(gravity=g)
    sim, ctx = _simulate(s)
    mode = s.modes(ctx)[0]
    assert mode[0] == "slide"
    np.testing.assert_allclose(mode[1], down, atol=1e-12)
    a = G * (np.sin(angle) - MU * np.cos(angle))
    sol = s.solve(ctx)
    np.testing.assert_allclose(sol.vdot[3:6], a * down, atol=1e-12)
    np.testing.assert_allclose(sol.vdot[:3], 0.0, atol=1e-12)       # no spin
    res = sol.contact_results
    assert res.normal_forces().sum() == pytest.approx(M * G * np.cos(angle), rel=1e-12)
    ft = res.total_force("box0") - res.normal_forces().sum() * np.array([0, 0, 1.0])
    np.testing.assert_allclose(ft, -MU * M * G * np.cos(angle) * down, atol=1e-10)
    sim.advance_to(1.0)
    assert s.modes(ctx)[0][0] == "slide"
    v = s.get_velocities(ctx)
    np.testing.assert_allclose(v[3:6], a * 1.0 * down, atol=1e-9)   # no sideways drift
    np.testing.assert_allclose(s.get_positions(ctx)[4:6], 0.5 * a * down[:2], atol=1e-9)
    # constant acceleration between events: a few large steps, no mode chatter
    st = sim.get_statistics()
    assert st["witness_triggers"] == 0
    assert st["steps"] <= 30 and st["derivative_evaluations"] <= 250


@pytest.mark.parametrize("azimuth_deg", [0, 30, 45, 60, 90])
def test_below_the_friction_angle_it_sticks_at_every_azimuth(azimuth_deg):
    angle = np.deg2rad(25.0)                         # tan 25 = 0.466 < mu: sticks
    g, down = _slope(angle, np.deg2rad(azimuth_deg))
    s = _system(gravity=g)
    sim, ctx = _simulate(s, max_step=0.25)
    assert s.modes(ctx)[0] == ("stick", None)
    res = s.solve(ctx).contact_results
    fn = res.normal_forces().sum()
    ft = res.total_force("box0") - fn * np.array([0, 0, 1.0])
    assert fn == pytest.approx(M * G * np.cos(angle), rel=1e-12)
    np.testing.assert_allclose(ft, -M * G * np.sin(angle) * down, atol=1e-10)
    sim.advance_to(1.0)
    assert s.modes(ctx)[0] == ("stick", None)
    np.testing.assert_allclose(s.get_positions(ctx), Q_FLAT, atol=1e-12)
    assert sim.get_statistics()["derivative_evaluations"] <= 100


@pytest.mark.parametrize("angle_deg,azimuth_deg", [(35.0, 30.0), (20.0, 60.0)])
def test_launched_uphill_it_stops_then_slides_back_or_stays(angle_deg, azimuth_deg):
    """Up the slope at v0 it decelerates at g (sin a + mu cos a) and stops at
    t1 = v0 / (g (sin a + mu cos a)); then it slides back at g (sin a - mu cos a) when
    tan a > mu (stop, then slide again at once: the sticking friction leaves the circle),
    else it stays."""
    angle, v0 = np.deg2rad(angle_deg), 1.0
    g, down = _slope(angle, np.deg2rad(azimuth_deg))
    s = _system(gravity=g)
    sim, ctx = _simulate(s, -v0 * down)
    assert s.modes(ctx)[0][0] == "slide"
    up_rate = G * (np.sin(angle) + MU * np.cos(angle))
    t1 = v0 / up_rate
    x1 = -0.5 * v0 * t1 * down[:2]
    T = t1 + 0.2
    sim.advance_to(T)
    q, v = s.get_positions(ctx), s.get_velocities(ctx)
    if np.tan(angle) > MU:
        a = G * (np.sin(angle) - MU * np.cos(angle))
        assert s.modes(ctx)[0][0] == "slide"
        np.testing.assert_allclose(s.modes(ctx)[0][1], down, atol=1e-9)
        np.testing.assert_allclose(v[3:6], a * (T - t1) * down, atol=1e-7)
        np.testing.assert_allclose(q[4:6], x1 + 0.5 * a * (T - t1) ** 2 * down[:2], atol=1e-7)
    else:
        assert s.modes(ctx)[0] == ("stick", None)
        assert np.max(np.abs(v)) < 1e-9
        np.testing.assert_allclose(q[4:6], x1, atol=1e-7)


class _LagPush(Actuator):
    """A horizontal force on the box along ``direction`` following its command with a
    first-order lag, f' = (command - f) / T (one continuous state); the box stays level, so
    its body axes are the world's."""

    def __init__(self, tree, direction, T):
        super().__init__(tree, 1, "push")
        self.direction, self.T = np.asarray(direction, float), T
        self.declare_continuous_state(1)

    def time_derivatives(self, context):
        return (self.command_port.eval(context) - context.continuous_state) / self.T

    def generalized_force(self, context, q, v, command):
        tau = np.zeros(self.nv)
        tau[3:6] = self.direction * context.continuous_state[0]
        return tau


@pytest.mark.parametrize("heading_deg", [0.0, 45.0, 120.0])
def test_stick_to_slide_when_a_push_at_any_heading_reaches_mu_m_g(heading_deg):
    """F(t) = 2 mu m g (1 - exp(-t/T)) along the heading: the slip guard mu f_n - |f_t|
    crosses zero at t = T ln 2, where F = mu m g, at every heading (per-axis bounds would
    hold the box up to 1.41 mu m g at 45 degrees); it then slides along the push."""
    T = 0.1
    d = np.array([np.cos(np.deg2rad(heading_deg)), np.sin(np.deg2rad(heading_deg)), 0.0])
    tree = free_boxes(1, mass=M)
    s = RigidBodySystem(tree, actuators=[_LagPush(tree, d, T)],
                        constraints=[PointContactConstraint(tree, MU)])
    ctx = s.create_default_context()
    s.set_positions(ctx, Q_FLAT)
    s.get_input_port("push").fix_value(ctx, [2 * MU * M * G])
    sim = Simulator(s, ctx, integrator="RK45", accuracy=1e-10, max_step=0.02)
    sim.initialize()
    assert s.modes(ctx)[0] == ("stick", None)
    seen, prev = [], [0.0]

    def monitor(c):  # the mode switches at the start of the step leaving the event time
        if not seen and s.modes(ctx)[0][0] != "stick":
            seen.append(prev[0])
        prev[0] = float(ctx.time)
    sim.set_monitor(monitor)
    sim.advance_to(0.075)
    assert seen and abs(seen[0] - T * np.log(2)) < 1e-8
    mode = s.modes(ctx)[0]
    assert mode[0] == "slide"
    np.testing.assert_allclose(mode[1], d, atol=1e-9)
    v = s.get_velocities(ctx)[3:6]
    assert v @ d > 0 and abs(np.cross(d, v)[2]) < 1e-9 * max(1.0, v @ d)


# ---------------------------------------------------------------------- redundant contacts
# A box resting flat on a slope steeper than the friction angle (tan 0.5675 = 0.64 > mu),
# downhill at azimuth 260 degrees, with two contact blocks on the same geometry pair: every
# corner twice, identical rows. With fixed per-axis friction bounds its sticking LCP sent
# Lemke's method into a singular basis and numpy's bare "LinAlgError: Singular matrix"
# escaped from the refactorization.
ANGLE, AZIMUTH = 0.5675312287364095, 4.544041791715598


def _redundant():
    g, down = _slope(ANGLE, AZIMUTH)
    tree = free_boxes(1, mass=M, gravity=g)
    blocks = [PointContactConstraint(tree, MU, name=f"contact{i}") for i in range(2)]
    s = RigidBodySystem(tree, constraints=blocks)
    ctx = s.create_default_context()
    s.set_positions(ctx, Q_FLAT)
    return s, ctx, blocks, down


def test_resting_on_redundant_contacts_the_box_slides_at_the_closed_form_rate():
    s, ctx, _, down = _redundant()
    modes = s.reset_modes(ctx)
    assert [m[0] for m in modes] == ["slide", "slide"]
    a = G * (np.sin(ANGLE) - MU * np.cos(ANGLE))
    sol = s.solve(ctx)
    np.testing.assert_allclose(sol.vdot[3:6], a * down, atol=1e-12)
    assert sol.contact_results.normal_forces().sum() == pytest.approx(M * G * np.cos(ANGLE),
                                                                      rel=1e-12)
    # held in 'stick' (as the old initialization did) the LCP path is taken: the friction
    # saturates on the circle along the impending slip, the same acceleration, no error
    ctx.set_abstract_state(s.mode_index, (("stick", None), ("stick", None)))
    np.testing.assert_allclose(s.solve(ctx).vdot[3:6], a * down, atol=1e-6)


def _redundant_sticking_lcp():
    """The sticking LCP of that state, built as the old plant built it (fixed tangent
    bases, per-axis bounds, diagonal 1e-10): 24 rows on 6 freedoms."""
    s, ctx, blocks, _ = _redundant()
    q, v = np.array(Q_FLAT, float), np.zeros(6)
    H, c = s.parts(q, v)[:2]
    rows, b, lo, hi, fi = [], [], [], [], []
    for blk in blocks:
        for p in blk.site_points(q, v, 0):
            n = len(b)
            rows.append(p.Jn), b.append(p.jdv_n + blk.alpha * p.vn + blk.beta * p.phi)
            lo.append(0.0), hi.append(np.inf), fi.append(-1)
            for r in range(2):
                rows.append(p.Jt[r]), b.append(p.jdv_t[r] + blk.alpha * p.vt[r])
                lo.append(-MU), hi.append(MU), fi.append(n)
    J = np.array(rows)
    assert J.shape == (24, 6) and np.linalg.matrix_rank(J) == 6
    Minv = sla.cho_solve(sla.cho_factor(H), np.eye(6))
    A = J @ Minv @ J.T
    A += 1e-10 * max(1.0, np.mean(np.abs(np.diag(A)))) * np.eye(24)
    bb = J @ Minv @ (-c) + np.array(b)
    return A, bb, np.array(lo), np.array(hi), np.array(fi)


def _inv_missing_singular_pivots(real):
    """``numpy.linalg.inv`` as a LAPACK build that does not flag an exactly singular pivot
    behaves: it returns a (meaningless) inverse of the nearest regular matrix."""
    def inv(a):
        try:
            return real(a)
        except np.linalg.LinAlgError:
            return real(a + 1e-15 * np.max(np.abs(a)) * np.eye(a.shape[0]))
    return inv


@pytest.mark.parametrize("lapack", ["this build", "one that misses singular pivots"])
def test_lemke_on_the_redundant_contact_lcp_gives_a_documented_status_not_linalgerror(
        lapack, monkeypatch):
    """On that LCP the pivoting meets a (numerically) singular basis.  What it then reports
    depends on the rounding of the LAPACK build ('singular' here; 'breakdown' with residual
    1e4 or 'inconclusive' elsewhere), so the test asserts what every build guarantees: no
    exception, a status from ``lcp.STATUSES``, a residual bound for a success, a residual
    bound for 'inaccurate', and never 'infeasible' (the problem has a solution: projected
    Gauss-Seidel finds one and its residual is checked here)."""
    A, bb, lo, hi, fi = _redundant_sticking_lcp()
    scale = max(1.0, np.max(np.abs(bb)))
    pgs = solve_boxed_lcp(A, bb, lo, hi, fi, method="pgs", max_iter=5000)
    assert pgs.success
    assert lcp.boxed_lcp_residual(pgs.x, A @ pgs.x + bb, lo, hi, fi) <= 1e-8 * scale
    if lapack != "this build":
        monkeypatch.setattr(np.linalg, "inv", _inv_missing_singular_pivots(np.linalg.inv))
    for method, fallback in [("dantzig", "lemke"), ("lemke", None)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", lcp.LCPFallbackWarning)
            r = solve_boxed_lcp(A, bb, lo, hi, fi, method=method, fallback=fallback)
        assert r.status in lcp.STATUSES and np.all(np.isfinite(r.x))
        res = lcp.boxed_lcp_residual(r.x, A @ r.x + bb, lo, hi, fi)
        assert res == pytest.approx(r.residual)
        if r.success:
            assert res <= 1e-8 * scale
        else:
            assert r.status not in ("infeasible", "solved", "fallback"), r.message
            assert r.certificate is None
            if r.status == "inaccurate":
                assert res <= 1e-6 * scale


def test_a_singular_pivoting_basis_is_retried_then_named(monkeypatch):
    """When the pivoting raises LinAlgError (or reports a singular basis), the plant
    retries with a stronger diagonal and solves; if that fails too, the error is the
    plant's PainleveError naming the system and the cause, not a bare LinAlgError."""
    s, ctx, _, down = _redundant()
    ctx.set_abstract_state(s.mode_index, (("stick", None), ("stick", None)))
    calls = []
    real = lcp.solve_boxed_lcp

    def flaky(A, b, lo, hi, fi, **kw):
        calls.append(A[-1, -1])
        if len(calls) == 1:
            raise np.linalg.LinAlgError("Singular matrix")
        return real(A, b, lo, hi, fi, **kw)

    monkeypatch.setattr(lcp, "solve_boxed_lcp", flaky)
    sol = s.solve(ctx)
    assert len(calls) >= 2 and calls[1] > calls[0]       # retried, more regularized
    a = G * (np.sin(ANGLE) - MU * np.cos(ANGLE))
    np.testing.assert_allclose(sol.vdot[3:6], a * down, atol=1e-6)

    def broken(*args, **kw):
        raise np.linalg.LinAlgError("Singular matrix")

    monkeypatch.setattr(lcp, "solve_boxed_lcp", broken)
    s.set_velocities(ctx, [0, 0, 0, 0, 0, -1e-6])          # a new state: solved afresh
    with pytest.raises(PainleveError, match=f"'{s.name}'.*singular basis"):
        s.solve(ctx)


# ---------------------------------------------------------------------- touchdown impulse
def test_an_oblique_touchdown_loses_the_same_speed_at_every_heading():
    """A ball (radius r, I = 0.4 m r^2) hits the ground at normal speed u with horizontal
    speed w; restitution e, mu small enough that the friction impulse saturates (sticking
    would need m w / 3.5 > mu (1 + e) m u): the impulse's friction is mu P_n = mu (1 + e) m u
    along -w in Coulomb's circle, so the ball leaves with horizontal speed w - mu (1 + e) u
    straight ahead, at every heading (per-axis bounds would take up to 1.41 times more at
    45 degrees)."""
    from _time_stepping_models import free_spheres
    e, mu, w, u0, r, h0 = 0.5, 0.1, 2.0, 2.0, 0.1, 1e-3
    u = np.sqrt(u0 ** 2 + 2 * G * h0)                     # normal speed at the touchdown
    assert mu * (1 + e) * u < w / 3.5
    tree = free_spheres(1, radius=r)
    s = RigidBodySystem(tree, constraints=[PointContactConstraint(tree, mu, restitution=e)])
    speeds = []
    for heading in np.arange(8) * np.pi / 4 + 0.1:
        d = np.array([np.cos(heading), np.sin(heading), 0.0])
        ctx = s.create_default_context()
        s.set_positions(ctx, [1, 0, 0, 0, 0, 0, r + h0])
        s.set_velocities(ctx, np.concatenate([np.zeros(3), w * d - [0, 0, u0]]))
        sim = Simulator(s, ctx, integrator="RK45", accuracy=1e-10, max_step=0.01)
        sim.initialize()
        sim.advance_to(0.05)                              # after the bounce, in flight
        assert s.modes(ctx)[0] is None
        R = np.asarray(tree.body_pose("ball0", s.get_positions(ctx)))[:3, :3]
        v = R @ s.get_velocities(ctx)[3:6]              # world axes (the ball spins)
        np.testing.assert_allclose(v[:2], (v[:2] @ d[:2]) * d[:2], atol=1e-12)
        speeds.append(v[:2] @ d[:2])
    np.testing.assert_allclose(speeds, w - mu * (1 + e) * u, rtol=1e-9)


def test_launched_across_a_steep_slope_its_slip_turns_downhill_as_the_planar_ode_says():
    """Across a slope steeper than the friction angle the slip direction turns: the box's
    horizontal velocity obeys v' = g sin a d - mu g cos a v / |v| (d downhill), integrated
    independently here by scipy; the plant stays in 'slide' (its slip never stops: no
    spurious stop from the turning direction) and agrees at every heading."""
    from scipy.integrate import solve_ivp
    angle = np.deg2rad(35.0)
    for azimuth in np.deg2rad([30.0, 135.0]):
        g, down = _slope(angle, azimuth)
        across = np.array([-down[1], down[0], 0.0])
        s = _system(gravity=g)
        sim, ctx = _simulate(s, 1.0 * across)
        sim.advance_to(0.5)
        assert s.modes(ctx)[0][0] == "slide"
        assert sim.get_statistics()["witness_triggers"] == 0
        ref = solve_ivp(lambda t, v: G * np.sin(angle) * down[:2]
                        - MU * G * np.cos(angle) * v / np.linalg.norm(v),
                        (0.0, 0.5), across[:2], rtol=1e-12, atol=1e-14).y[:, -1]
        np.testing.assert_allclose(s.get_velocities(ctx)[3:5], ref, atol=1e-7)
        np.testing.assert_allclose(s.get_velocities(ctx)[:3], 0.0, atol=1e-9)   # no spin


def test_redundant_contact_blocks_move_like_one_through_a_turning_stop():
    """Launched obliquely on a gentle slope (tan a < mu) the slip turns downhill and then
    stops (its component along the launch direction crosses zero first: the stop guard
    keeps it sliding along the turned slip). With the corners given twice (two contact
    blocks on one pair) both sites switch together and the box moves exactly as with one
    block: same end state, both sites 'stick', a few hundred steps (the sites' modes
    drifting apart left it hovering at 5e-5 m/s for thousands of steps)."""
    angle, azimuth = 0.30318885816553165, 3.0099680778637956    # 17.4 deg, tan = 0.31
    g, _ = _slope(angle, azimuth)
    v0 = np.array([-0.23193238, -0.86521308, 0.0])
    ends = []
    for blocks in (1, 2):
        s = _system(gravity=g, blocks=blocks)
        sim, ctx = _simulate(s, v0, accuracy=1e-8)
        sim.advance_to(0.5)
        assert s.modes(ctx) == (("stick", None),) * blocks
        assert sim.get_statistics()["steps"] < 300
        ends.append(np.concatenate([s.get_positions(ctx), s.get_velocities(ctx)]))
    np.testing.assert_allclose(ends[1], ends[0], atol=1e-9)
    assert np.max(np.abs(ends[0][7:])) < 1e-6

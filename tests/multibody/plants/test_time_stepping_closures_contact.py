"""Loop closures together with contact on the compiled step (issue 21, deliver 1): the
closures are eliminated exactly before the contact problem (the kernel's contacts see the
constrained Delassus operator, the closures' impulses are recovered after it), so a plant with
closures and a contact block takes the compiled step, with no warning and no fallback.

Scenes (h = 2e-3, from rest or a loop-consistent velocity): a planar four-bar whose coupler
knob falls onto a floor, a pendulum (free body) hung by a three-row ball closure swinging onto
a floor, a slider-crank whose connecting rod hits the floor, a ball on a tether (distance
closure) swinging onto a floor, and a rod pinned at one end dropped onto a support. Each runs
compiled and pivoting (``contact_solver="lcp"``): the states agree within 1e-7 at every step
(the velocity of the step is unique), so do the generalized constraint forces; the closures
hold to 1e-9. The contact impulses themselves are unique only where the contact rows are
independent of the closures' (the tethered ball: compared within 1e-7 N s); a body pinned by
a ball and touching at one point can turn about the line through the pin and the contact, so
its contact and pin impulses split indeterminately along that line (the pinned rod): there
the test asserts what is determined -- the closure, the friction cone, the moment balance
about the pin at rest, the generalized force, the energy not growing -- and not one split.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from _compiled_step import without_compiler
from _time_stepping_models import four_bar

from multibody import Free, RigidBodyTree
from multibody.constraints import BallConstraint, DistanceConstraint, PointContactConstraint
from multibody.errors import StepMethodWarning
from multibody.geometry import Halfspace, Sphere
from multibody.models import free_pendulum, free_pendulum_state, slider_crank, slider_crank_guess
from multibody.plants import TimeSteppingRigidBodySystem

H = 2e-3
G = 9.81
XZ = [[1, 0, 0], [0, 0, 1]]
pytestmark = pytest.mark.skipif(
    __import__("solvers.compiled", fromlist=["x"]).find_compiler() is None,
    reason="no C compiler: the compiled step is not built")


def _pose(p=(0.0, 0.0, 0.0)):
    X = np.eye(4)
    X[:3, 3] = p
    return X


def four_bar_on_floor(mu: float = 0.2):
    """The four-bar of the closure tests let go at rest; a knob (r 0.05) mid-coupler falls
    ~4 cm onto a floor (z 0.06; free, the knob's centre would sink to z 0.078) and slides to
    rest. mu 0.2: the knob's mobility is 2.4 times as tangential as normal, and from mu 0.3
    on (mu times that ratio above 0.7) the sliding impact's PGS converges too slowly for
    the kernel's 500 sweeps (:func:`test_a_slow_impact_falls_back_at_most_once_and_stays_exact`)."""
    tree, q0 = four_bar()
    tree.add_collision_geometry("coupler", Sphere(0.05), pose=_pose((0.5, 0, 0)), name="knob")
    tree.add_collision_geometry("world", Halfspace(), pose=_pose((0, 0, 0.06)), name="floor")

    def blocks(t):
        return [BallConstraint(t, "coupler_end", "rocker_end", axes=XZ, name="loop"),
                PointContactConstraint(t, mu=mu, name="touch")]
    return tree, blocks, q0, np.zeros(tree.nv)


def pendulum_on_floor():
    """A free bob (r 0.1) hung 0.7 m below a ball closure, let go at 1.3 rad; the floor
    stops it at 0.8 rad. (Stopped near the bottom, at 0.4 rad, the bob's motion is mostly
    tangential to the floor and mu 0.5 jams it: Painleve's regime, see the slider-crank.)"""
    tree = free_pendulum()
    tree.add_collision_geometry("bob", Sphere(0.1), name="bob_ball")
    tree.add_collision_geometry("world", Halfspace(),
                                pose=_pose((0, 0, -0.7 * np.cos(0.8) - 0.1)), name="floor")

    def blocks(t):
        return [BallConstraint(t, "world", "pivot", name="pivot"),
                PointContactConstraint(t, mu=0.5, name="touch")]
    return tree, blocks, np.asarray(free_pendulum_state(1.3))[:tree.nq], np.zeros(tree.nv)


def slider_crank_on_floor():
    """The slider-crank (crank 0.2 m, rod 0.6 m, in-plane ball closure) driven at 6 rad/s;
    a knob on the rod (r 0.03) hits a floor 0.2 m down. (mu 0.3: at mu 0.5 the first impact
    jams -- Painleve's regime, mu times the ratio of the knob's tangential to normal
    mobility above 1 -- and the kernel's PGS does not converge on it: that step falls back.)"""
    tree = slider_crank()
    tree.add_collision_geometry("rod", Sphere(0.03), pose=_pose((0.05, 0, 0)), name="knob")
    tree.add_collision_geometry("world", Halfspace(), pose=_pose((0, 0, -0.2)), name="floor")

    def blocks(t):
        return [BallConstraint(t, "slider", "rod_tip", axes=XZ, name="closure"),
                PointContactConstraint(t, mu=0.3, name="touch")]
    return tree, blocks, slider_crank_guess(0.3), np.array([6.0, 0.0, 0.0])


def tethered_ball():
    """A free ball (r 0.1) on a tether (distance closure, 0.54 m) to the origin, let go at
    (0.45, 0, -0.3); it swings onto a floor at z = -0.6 (contact rows independent of the
    tether's: unique impulses)."""
    t = RigidBodyTree("tethered_ball")
    t.add_body("ball", 1.0, inertia=0.004 * np.eye(3))
    t.add_joint(Free("float", "world", "ball"))
    t.add_collision_geometry("ball", Sphere(0.1), name="ball")
    t.add_collision_geometry("world", Halfspace(), pose=_pose((0, 0, -0.6)), name="floor")
    t.add_frame("anchor", "world", np.eye(4))
    q = t.neutral_configuration()
    q[4:7] = (0.45, 0.0, -0.3)

    def blocks(tr):
        return [DistanceConstraint(tr, "anchor", "ball", float(np.hypot(0.45, 0.3)),
                                   name="tether"),
                PointContactConstraint(tr, mu=0.5, name="touch")]
    return t, blocks, q, np.zeros(t.nv)


ROD_L, ROD_M, ROD_R = 0.8, 2.0, 0.02


def pinned_rod():
    """test_contact_physics' rod (0.8 m, 2 kg) pinned at one end by a ball closure, its tip
    sphere (r 0.02) dropped from 0.3 rad onto the support at the pin's height."""
    t = RigidBodyTree("rod")
    I = np.diag([1e-4, ROD_M * ROD_L ** 2 / 12, ROD_M * ROD_L ** 2 / 12])
    t.add_body("rod", ROD_M, com=(ROD_L / 2, 0, 0), inertia=I)
    t.add_joint(Free("float", "world", "rod"))
    t.add_collision_geometry("rod", Sphere(ROD_R), pose=_pose((ROD_L, 0, 0)), name="tip")
    t.add_collision_geometry("world", Halfspace(), pose=_pose((0, 0, -ROD_R)), name="ground")
    q = t.neutral_configuration()
    q[:4] = (np.cos(0.15), 0.0, -np.sin(0.15), 0.0)      # tip up by 0.3 rad (about -y)

    def blocks(tr):
        return [BallConstraint(tr, "world", "rod", name="pin"),
                PointContactConstraint(tr, mu=0.5, name="contact")]
    return t, blocks, q, np.zeros(t.nv)


def _run(scene, solver, steps, strict=True):
    """Per step: the state, tau_constraint, the impulses, the largest closure error, the
    energy, the contacts; plus the plant and the step methods taken. ``strict``: a
    StepMethodWarning (the scene's or a fallback's) is an error."""
    tree, blocks, q0, v0 = scene()
    with warnings.catch_warnings():
        if strict:
            warnings.simplefilter("error", StepMethodWarning)
        plant = TimeSteppingRigidBodySystem(tree, H, constraints=blocks(tree),
                                            contact_solver=solver)
        ctx = plant.create_default_context()
        plant.set_positions(ctx, q0)
        plant.set_velocities(ctx, v0)
        out = {k: [] for k in ("x", "tau", "imp", "err", "E", "contacts")}
        methods = set()
        closure = plant.constraints[0]
        for _ in range(steps):
            plant.advance(ctx, 1)
            step = plant.get_output_port("step").eval(ctx)
            methods.add(step.status.method)
            out["x"].append(np.array(ctx.discrete_state, dtype=float))
            out["tau"].append(np.array(step.tau_constraint))
            out["imp"].append([np.array(p) for p in step.impulses])
            q = plant.get_positions(ctx)
            out["err"].append(float(np.max(np.abs(closure.kinematic_terms(q, None)[0]))))
            out["E"].append(plant.total_energy(ctx))
            out["contacts"].append(plant.get_output_port("contact_results").eval(ctx))
    return plant, methods, out


SCENES = {"four_bar": (four_bar_on_floor, 400), "pendulum": (pendulum_on_floor, 300),
          "slider_crank": (slider_crank_on_floor, 300), "tethered_ball": (tethered_ball, 300),
          "pinned_rod": (pinned_rod, 500)}


@functools.lru_cache(maxsize=None)
def _scene_run(name: str, solver: str):
    """:func:`_run` of ``SCENES[name]`` (kept: several tests read the same runs)."""
    scene, steps = SCENES[name]
    return _run(scene, solver, steps)


@pytest.mark.parametrize("name", list(SCENES))
def test_compiled_agrees_with_the_pivoting_step(name):
    fast, fast_methods, a = _scene_run(name, "auto")
    slow, _, b = _scene_run(name, "lcp")
    assert fast.step_method == "compiled_pgs" and fast.step_method_reason is None
    assert fast_methods == {"compiled_pgs"}                    # no step fell back
    assert sum(len(c) > 0 for c in a["contacts"]) > 20         # the scene does touch
    np.testing.assert_allclose(a["x"], b["x"], atol=1e-7, rtol=0)
    np.testing.assert_allclose(a["tau"], b["tau"], atol=1e-5, rtol=0)
    assert max(a["err"]) < 1e-9


def test_tethered_ball_impulses_equal_the_pivoting_steps():
    """Contact rows independent of the tether's: the tether's impulse and the contact's
    normal and friction impulses equal the pivoting step's within 1e-7 N s at every step."""
    _, _, a = _scene_run("tethered_ball", "auto")
    _, _, b = _scene_run("tethered_ball", "lcp")
    touching = 0
    for ia, ib, ca, cb in zip(a["imp"], b["imp"], a["contacts"], b["contacts"]):
        np.testing.assert_allclose(ia[0], ib[0], atol=1e-7, rtol=0)        # tether
        assert len(ca) == len(cb)
        for x, y in zip(ca, cb):
            touching += 1
            assert x.normal_force * H == pytest.approx(y.normal_force * H, abs=1e-7)
            np.testing.assert_allclose(x.friction_force * H, y.friction_force * H, atol=1e-7)
    assert touching > 100


def test_pinned_rod_guaranteed_quantities():
    """The pinned rod dropped onto its support (an indeterminate split along the line from
    the pin to the contact): at every step the pin holds (1e-9 m) and the contact force lies
    in the cone; the energy never grows by more than the contact's ERP correction allows
    (1e-4 J) and ends below its start by the impact's loss; at rest the pin and the contact
    carry the weight (vertical sum m g) with the moment balance about the pin
    ``L N + r f_x = m g L / 2`` (the friction along the rod and the normal force trade
    through the tip's offset r below the rod's axis), and the generalized constraint force
    equals the pivoting step's."""
    plant, _, a = _scene_run("pinned_rod", "auto")
    _, _, b = _scene_run("pinned_rod", "lcp")
    assert max(a["err"]) < 1e-9
    for cs in a["contacts"]:
        for c in cs:
            assert c.normal_force >= 0.0
            assert np.linalg.norm(c.friction_force) <= 0.5 * c.normal_force * (1 + 1e-9) + 1e-12
    E = np.array(a["E"])
    assert np.max(np.diff(E)) < 1e-4
    assert E[-1] < E[0] - 0.1                                  # the impact's loss
    c = a["contacts"][-1][0]
    pin = a["imp"][-1][0] / H                                  # the pin's force on the rod
    assert pin[2] + c.normal_force == pytest.approx(ROD_M * G, rel=1e-7)
    moment = ROD_L * c.normal_force + ROD_R * c.friction_force[0]
    assert moment == pytest.approx(ROD_M * G * ROD_L / 2, rel=1e-7)
    np.testing.assert_allclose(a["tau"][-1], b["tau"][-1], atol=1e-6)
    np.testing.assert_allclose(a["x"][-1], b["x"][-1], atol=1e-7)


def test_numpy_twin_equals_the_c_kernel(monkeypatch):
    """The kernel's numpy twin takes the same elimination: the four-bar on the floor within
    1e-9 of the C kernel over 400 steps."""
    _, _, one = _scene_run("four_bar", "auto")
    without_compiler(monkeypatch)
    tree, blocks, q0, v0 = four_bar_on_floor()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plant = TimeSteppingRigidBodySystem(tree, H, constraints=blocks(tree))
        assert plant.step_method == "numpy_pgs"
        ctx = plant.create_default_context()
        plant.set_positions(ctx, q0)
        twin = []
        for _ in range(len(one["x"])):
            plant.advance(ctx, 1)
            twin.append(np.array(ctx.discrete_state, dtype=float))
    np.testing.assert_allclose(twin, one["x"], atol=1e-9, rtol=0)


def test_a_slow_impact_falls_back_at_most_once_and_stays_exact():
    """The four-bar with mu 0.5: the sliding impact's PGS (a one-DOF mechanism's contact:
    normal and friction rows of rank one) does not reach the tolerance in 500 sweeps (at the
    time of writing the polish starts from the stick solution, whose normal impulse is
    negative, and gives up); such a step is the pivoting step's, warned once per plant, and
    the run still equals the pivoting run within 1e-7."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        plant, methods, a = _run(lambda: four_bar_on_floor(0.5), "auto", 300, strict=False)
    notes = [w for w in rec if issubclass(w.category, StepMethodWarning)]
    assert plant.step_method == "compiled_pgs" and "compiled_pgs" in methods
    assert methods <= {"compiled_pgs", "lcp"}
    assert len(notes) == ("lcp" in methods)                   # once, only when it fell back
    assert all("fell back from the compiled step" in str(w.message) for w in notes)
    _, _, b = _run(lambda: four_bar_on_floor(0.5), "lcp", 300)
    np.testing.assert_allclose(a["x"], b["x"], atol=1e-7, rtol=0)
    assert max(a["err"]) < 1e-9


def test_redundant_closure_rows_take_the_rank_revealing_path():
    """The four-bar on the floor closed twice by the same in-plane ball (dependent rows: S
    is singular, its pseudo-inverse drops the repeated direction) moves as the four-bar closed
    once (within 1e-9), and the two closures carry half the loop's impulse each (the minimum-
    norm split, as the pivoting step's pseudo-inverse gives it)."""
    def twice():
        tree, blocks, q0, v0 = four_bar_on_floor()
        first = blocks(tree)
        again = BallConstraint(tree, "coupler_end", "rocker_end", axes=XZ, name="loop_again")
        return tree, lambda t: [first[0], again, first[1]], q0, v0
    plant, methods, a = _run(twice, "auto", 400)
    _, _, once = _scene_run("four_bar", "auto")
    assert methods == {"compiled_pgs"}
    np.testing.assert_allclose(a["x"], once["x"], atol=1e-9, rtol=0)
    for ia, io in zip(a["imp"], once["imp"]):
        np.testing.assert_allclose(ia[0], ia[1], atol=1e-9)
        np.testing.assert_allclose(ia[0] + ia[1], io[0], atol=1e-9)


@pytest.mark.parametrize("scheme", ["implicit", "mujoco_euler"])
def test_limits_joint_friction_and_damping_with_closures(scheme):
    """The four-bar on the floor with damped joints (0.3 N m s), a limit of +-0.02 rad on the
    rocker (which stops the linkage before the knob lands: the limit's one-dof row on the
    closures' constrained Delassus operator) and Coulomb friction on the crank: compiled vs
    pivoting within 1e-7 over 300 steps in both damping schemes, no fallback."""
    from multibody.constraints import JointFrictionConstraint, JointLimitConstraint

    def scene():
        tree, blocks, q0, v0 = four_bar_on_floor()
        for j in tree.joints:
            j.damping = 0.3

        def more(t):
            return blocks(t) + [
                JointLimitConstraint(t, ["j_rocker"], lower=q0[2] - 0.02, upper=q0[2] + 0.02,
                                     name="lim"),
                JointFrictionConstraint(t, ["j_crank"], friction=0.2, name="jf")]
        return tree, more, q0, v0
    runs = []
    for solver in ("auto", "lcp"):
        tree, blocks, q0, v0 = scene()
        with warnings.catch_warnings():
            warnings.simplefilter("error", StepMethodWarning)
            plant = TimeSteppingRigidBodySystem(tree, H, constraints=blocks(tree),
                                                contact_solver=solver, damping_scheme=scheme)
            ctx = plant.create_default_context()
            plant.set_positions(ctx, q0)
            xs, methods, limited = [], set(), 0
            for _ in range(300):
                plant.advance(ctx, 1)
                step = plant.get_output_port("step").eval(ctx)
                methods.add(step.status.method)
                limited += len(step.impulses[2]) > 0
                xs.append(np.array(ctx.discrete_state, dtype=float))
        assert methods == {plant.step_method} and limited > 100
        runs.append(np.array(xs))
    np.testing.assert_allclose(runs[0], runs[1], atol=1e-7, rtol=0)


@pytest.mark.parametrize("soft", [dict(kp=2000.0, kd=20.0), dict(erp=0.5, cfm=1e-4)],
                         ids=["spring", "erp_cfm"])
def test_soft_closure_with_contact(soft):
    """A soft tether ((kp, kd) or ERP/CFM: its cfm / h on the diagonal of S) on the ball
    swinging onto the floor: compiled vs pivoting within 1e-7 over 300 steps; the tether
    stretches (the error is the spring's, not a failure to hold it)."""
    def scene():
        t, blocks, q, v = tethered_ball()

        def soft_blocks(tr):
            out = blocks(tr)
            out[0] = DistanceConstraint(tr, "anchor", "ball", float(np.hypot(0.45, 0.3)),
                                        name="tether", **soft)
            return out
        return t, soft_blocks, q, v
    _, methods, a = _run(scene, "auto", 300)
    _, _, b = _run(scene, "lcp", 300)
    assert methods == {"compiled_pgs"}
    np.testing.assert_allclose(a["x"], b["x"], atol=1e-7, rtol=0)
    assert max(a["err"]) > 1e-4


@pytest.mark.parametrize("with_limit", [False, True], ids=["closure_alone", "idle_limit"])
def test_closure_force_and_impulses_equal_the_pivoting_steps(with_limit):
    """The four-bar swinging without a contact block (the kernel has no candidates: its
    contact force is zero and the step's force is the closures' alone), and with a limit
    far from the motion (a candidate that never acts: the general recovery of the force):
    compiled vs pivoting over 300 steps, states within 1e-7, the generalized constraint
    force within 1e-5 N m and the loop's impulses within 1e-7 N s at every step; the
    force holds the linkage (it is not zero)."""
    from multibody.constraints import JointLimitConstraint

    def scene():
        tree, blocks, q0, v0 = four_bar_on_floor()

        def closure_only(t):
            out = [blocks(t)[0]]
            if with_limit:
                out.append(JointLimitConstraint(t, ["j_rocker"], lower=q0[2] - 3.0,
                                                upper=q0[2] + 3.0, name="far"))
            return out
        return tree, closure_only, q0, v0
    _, methods, a = _run(scene, "auto", 300)
    _, _, b = _run(scene, "lcp", 300)
    assert methods == {"compiled_pgs"}
    np.testing.assert_allclose(a["x"], b["x"], atol=1e-7, rtol=0)
    np.testing.assert_allclose(a["tau"], b["tau"], atol=1e-5, rtol=0)
    for ia, ib in zip(a["imp"], b["imp"]):
        np.testing.assert_allclose(ia[0], ib[0], atol=1e-7, rtol=0)
    assert min(np.abs(t).max() for t in a["tau"]) > 1.0
    assert np.ptp(np.array(a["x"])[:, 0]) > 0.1           # the linkage swung

"""The forward pass: a fitted motion re-simulated from its inverse-dynamics torques.

After marker fitting and inverse dynamics, the HDM paper (Liu, Cooper and Ballard, Fig. 3c)
drives the body forward with the computed joint torques plus a tracking controller and judges
the result by how well the simulated body follows the capture. :class:`ForwardPass` does the
same in a :class:`~multibody.plants.TimeSteppingRigidBodySystem`:

* the tree gets a floor (a :class:`~multibody.geometry.Halfspace` on the fitted
  :class:`~multibody.motion.Floor`) and a small sphere at every foot contact point (the
  floor is lowered by the sphere radius, so a sphere touches it when its centre -- the
  contact point of the inverse dynamics -- is on the fitted plane); Coulomb friction ``mu``;
  the joint limits of the tree (:class:`~multibody.constraints.JointLimitConstraint`);
* one :class:`~actuators.GeneralizedForceActuator` on the joints below the root. **The root
  (pelvis) is not actuated**: no force or torque acts on it but gravity, the joints and the
  ground, so the body walks on its own feet (``ForwardPass.actuated_velocity_indices``
  excludes the root's six velocities; nothing is connected to the plant's applied-force
  inputs);
* a joint-space tracking controller (:class:`JointTrackingController`) with the
  inverse-dynamics torques as feedforward and an implicit PD:

  .. math::

      \\tau_j = \\tau_{ID}(t) + K_p\\,(q_d(t + h) - q_{n+1}) + K_d\\,(\\dot q_d(t + h) - v_{n+1}),

  taken at the end of the step (``q_{n+1} = q_n + h v_{n+1}``): the controller outputs
  ``u(t) - K_p q_n`` with ``u = tau_ID + K_p q_d(t + h) + K_d v_d(t + h)`` and the
  velocity terms ``(K_d + h K_p) v_{n+1}`` are the plant's implicit joint damping, so stiff
  gains stay stable at any step. The gains follow the diagonal of the mass matrix at a
  reference configuration: ``K_p = omega^2 M_ii + k_min``, ``K_d = 2 zeta sqrt(K_p M_ii)``
  (``k_min``: the stance legs carry the whole body, far more than their own inertia).

Given the reference motion (``contact_reference``, and its contact forces
``contact_forces``), the floor and the contact spheres follow the reference rather than the
inverse dynamics' fitted plane (:func:`~multibody.motion.balance.placed_contacts`): the floor
is refitted under the reference's resting feet, and each contact point is moved along the
floor normal to touch it at its lowest height (or the ``placement_quantile`` of its heights)
among the frames where the reference pushes on it with more than ``min_load``. The inverse
dynamics lets a point push anywhere within a few centimetres of the floor, the rigid floor
here only where it touches.

Optionally (``balance_gain > 0``) the pelvis is fed back through the stance legs
(:func:`~multibody.motion.balance.pelvis_balance_function`): a corrective pelvis wrench,
shared over the legs by their stance weights (the reference's shares of the ground force),
mapped to leg torques through the foot Jacobians' transpose, and optionally the swing foot
placed where the pelvis has drifted; still no force on the pelvis but from the legs and the
ground. It keeps a body on a passive ankle standing (the synthetic test); on the HDM walk it
delays the fall (below).

The references ``u`` are a numeric parameter of the controller (hat functions on CasADi
symbols between the capture frames), so a whole run compiles once and runs in C, and runs
with other references (:meth:`ForwardPass.run_batch`, the noise study, a learning) reuse it.

Options: ``support_margin`` bounds the stance feet's commands by their support
(:mod:`~multibody.motion.support_limit`); ``whole_body`` replaces the replayed torques by
floating-base inverse dynamics with the ground forces allocated inside the feet
(:mod:`~multibody.motion.contact_allocation`); ``lqr`` adds a time-varying LQR's correction
along the reference (:mod:`~multibody.motion.trajectory_lqr`).

Limits (``benchmarks/bench_forward_pass.py``, HDM trial): on a motion consistent with a
smoothed contact the rigid foot settles 3-5 deg off and the body drifts (markers 0.12 m). On
one optimised with rigid feet, with the swing feet lifted (:mod:`~multibody.motion.
swing_lift`), softer ankles and the LQR, alone or on the whole-body balance, it follows the
capture to 17-18 mm at 22x real time; which of the two does depends on the reference.

References
----------
J. Liu, L. Cooper, D. H. Ballard, the human dynamic model (HDM) for motion analysis: marker
fitting, inverse dynamics and a forward pass judged by its noise sensitivity (Fig. 3).
E. Todorov, T. Erez, Y. Tassa, "MuJoCo: a physics engine for model-based control", IROS
2012 (implicit position actuators: the PD's velocity terms in the step).
J. Pratt et al., "Virtual model control: an intuitive approach for bipedal locomotion", IJRR
20(2), 2001 (the pelvis wrench through the stance legs).
"""
from __future__ import annotations

import time
from typing import Mapping, Optional, Sequence

import numpy as np

from actuators import GeneralizedForceActuator
from multibody.constraints import JointLimitConstraint, PointContactConstraint
from multibody.geometry import Halfspace, Sphere
from multibody.plants import TimeSteppingRigidBodySystem
from systems import DiagramBuilder
from systems.analysis import Simulator, simulate_batch
from systems.errors import SimulationError, SystemCallbackError
from systems.primitives import LogVectorOutput

from .balance import (ROWS, BalanceGains, balance_reference_rows, leg_chains,
                      pelvis_balance_function, placed_contacts, stance_shares)
from .contact_allocation import WholeBodyBalance, WholeBodyGains
from .contact_inverse_dynamics import Floor
from .errors import MotionError
from .forward_pass_result import ForwardPassResult
from .support_limit import SupportLimit, support_activity
from .swing_lift import swing_lift
from .tracking_controller import JointTrackingController
from .trajectory_lqr import LQRWeights, forward_pass_feedback

__all__ = ["ForwardPass", "ForwardPassResult", "JointTrackingController", "RUN_FAILURES",
           "penetration_allowance"]

RUN_FAILURES = (SimulationError, SystemCallbackError)
"""What a run that blows up raises: a state that would stop being finite, or a plant step
that fails on a diverged state (:meth:`ForwardPass.run_batch` ``skip_failed``); not bad
references, which raise before the run."""


def penetration_allowance(tree, contact_points: Mapping, floor: Floor, q) -> dict:
    """How deep (m, >= 0) each body's contact points go below ``floor`` over the motion ``q``
    (K, nq): ``{body: max(0, -min height)}`` -- marker fits put feet and toes a few
    centimetres into the fitted floor, which a rigid floor would not allow."""
    out = {}
    for body, pts in contact_points.items():
        P = np.asarray(pts, float)
        low = np.inf
        for qi in np.asarray(q, float):
            T = np.asarray(tree.body_pose(body, qi), float)
            low = min(low, float(np.min(floor.height(P @ T[:3, :3].T + T[:3, 3]))))
        out[body] = max(0.0, -low)
    return out


class ForwardPass:
    """Re-simulate a motion on the floor from its inverse-dynamics torques (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
        The body; its first joint (``tree.joints[0]``) is the unactuated root when it is a
        ``free`` joint (else every joint is actuated). **Taken over**: the forward pass adds
        the floor and the contact spheres to it and sets its joints' damping to the PD's
        implicit ``K_d + h K_p``; build a tree for it alone (e.g. a second
        ``human_model(...)``), not the one of the marker fit or the inverse dynamics.
    times : (K,) array_like
        The frames of the references (s), increasing; the run goes from ``times[0]`` to
        ``times[-1]``.
    contact_points : dict, optional
        ``{body: [(3,) points in the body frame]}`` (e.g. ``HumanModel.foot_contact_points``);
        needs ``floor``.
    floor : Floor, optional
    time_step : float, optional
        h (s); default half the frame interval.
    omega, zeta : float
        Natural frequency (rad/s) and damping ratio of the joint PD.
    min_stiffness : float
        Added to every coordinate's ``K_p`` (N m / rad): the stance legs carry the body,
        far more than their own inertia.
    mu : float
        Friction coefficient of the feet on the floor.
    lcp_tolerance, pgs_max_sweeps
        The plant's contact-solver acceptance (velocity units; default 1 mm/s) and budget
        (:class:`~multibody.plants.TimeSteppingRigidBodySystem`); a step the kernel misses
        is taken by the slower pivoting step.
    sphere_radius : float
        Radius of the contact spheres (m).
    contact_allowance : dict, optional
        ``{body: metres}``: that body's spheres are larger by this much (the floor stays
        lowered by ``sphere_radius``), so a reference pose whose points sit that deep in the
        fitted floor touches it without penetrating (:func:`penetration_allowance`).
    joint_limits : bool
        Add the tree's joint limits as constraints.
    reference_q : (nq,) array_like, optional
        Configuration of the gains' mass-matrix diagonal (default the neutral one).
    contact_reference : (K, nq) array_like, optional
        The reference motion at ``times``: refit the floor under its resting feet and place
        the contact points on it (module docstring); default: the points as given on
        ``floor``.
    contact_forces : (K, points, 3) array_like, optional
        The reference's world contact forces at ``times``, the points in the order of
        ``contact_points`` (``ContactInverseDynamicsResult.contact_forces``): the points
        are placed by their loaded frames, and they give the default stance weights.
    min_load : float
        A point counts as loaded above this normal force (N).
    refit_floor : bool
        With ``contact_reference``: replace ``floor`` by
        :func:`~multibody.motion.balance.stance_floor`.
    placement_quantile : float
        With ``contact_reference``: each point placed at this quantile of its loaded heights
        rather than at its lowest (0; :func:`~multibody.motion.balance.place_contact_points`).
    balance_gain : float
        Factor on ``balance_gains`` of the pelvis feedback through the legs (module
        docstring); 0 (default): joint tracking alone. Needs a free root and contact points.
    balance_gains : BalanceGains
    stance_release : sequence of str
        Joints (e.g. the ankles) whose PD stiffness the pelvis feedback releases while their
        leg is in stance (:func:`~multibody.motion.balance.pelvis_balance_function`).
    stance_smoothing : float
        Seconds over which the default stance weights are averaged (0: none).
    joint_gain_scale : dict, optional
        ``{joint: f}``: that joint's ``K_p`` times ``f``, ``K_d`` times ``sqrt(f)`` (0: a
        passive joint driven by its feedforward torque alone); ``f`` a number or one factor
        per axis of the joint.
    swing_clearance, swing_clearance_speed : float
        ``c`` (m) and ``v_c`` (m/s) of the swing-foot lift of the controller's targets
        (:func:`~multibody.motion.swing_lift.swing_lift`: a foot point moving along the
        floor at ``v_c`` or faster is targeted at least ``c`` above it); 0 (default): off.
        Needs a free root and contact points.
    support_margin : float, optional
        Bound the stance feet's joint commands so their centre of pressure stays this far
        (m) inside the support (:class:`~multibody.motion.support_limit.SupportLimit`);
        None (default): off. Needs a free root, contact points and ``contact_forces``.
    support_joints : sequence or dict, optional
        The joints (or ``{joint: axes}``) so bounded; default the contact bodies' joints.
    support_activity : bool
        Their support: a loaded body's points near the floor (:func:`~multibody.motion.
        support_limit.support_activity`); false (default): the points loaded > 2 N.
    whole_body : WholeBodyGains, optional
        Replace the replayed torques by the whole-body balance's
        (:mod:`~multibody.motion.contact_allocation`); the joint PD stays. Needs a free
        root, contact points and ``contact_forces``.
    lqr : LQRWeights, optional
        Add a finite-horizon time-varying LQR's correction around ``lqr_reference``
        ``(q, v, tau)`` (:mod:`~multibody.motion.trajectory_lqr`: the step with this PD and
        the loaded points held, linearised once here; runs follow this reference's gains
        and states whatever reference they are given; the balance is not in its model).
    compiled : bool
        Run the whole simulation in C (``Simulator(diagram, compiled=True)``) where the
        plant takes the compiled step; else the interpreted Simulator.
    compile_flags : sequence of str, optional
        Compiler flags of that run's library (``flags`` of :class:`~systems.analysis.
        WholeRunSimulator`; e.g. ``("-O1",)``: slower to build, faster runs, the same
        results); default: the library already built for this diagram, else by length.

    Raises
    ------
    MotionError
        Fewer than two frames, times not increasing, contact points without a floor, a
        contact point on an unknown body, ``contact_forces`` of the wrong shape, a balance
        leg with an unactuated joint.
    """

    def __init__(self, tree, times, contact_points: Optional[Mapping] = None,
                 floor: Optional[Floor] = None, *, time_step: Optional[float] = None,
                 omega: float = 40.0, zeta: float = 1.0, min_stiffness: float = 3000.0,
                 mu: float = 1.0, lcp_tolerance: float = 1e-3, pgs_max_sweeps: int = 1000,
                 sphere_radius: float = 0.01, contact_allowance: Optional[Mapping] = None,
                 joint_limits: bool = True,
                 reference_q=None, contact_reference=None, contact_forces=None,
                 min_load: float = 50.0, refit_floor: bool = True,
                 placement_quantile: float = 0.0,
                 balance_gain: float = 0.0, balance_gains: BalanceGains = BalanceGains(),
                 joint_gain_scale: Optional[Mapping] = None, stance_release=(),
                 stance_smoothing: float = 0.0, swing_clearance: float = 0.0,
                 swing_clearance_speed: float = 0.5, support_margin: Optional[float] = None,
                 support_joints=None, whole_body: Optional[WholeBodyGains] = None,
                 support_activity: bool = False, lqr: Optional[LQRWeights] = None,
                 lqr_reference=None, compiled: bool = True, compile_flags=None) -> None:
        self.times = np.asarray(times, float).ravel()
        if self.times.size < 2 or np.any(np.diff(self.times) <= 0):
            raise MotionError(f"ForwardPass: times must hold at least two increasing frames, "
                              f"got {self.times.size} frames")
        if contact_points and floor is None:
            raise MotionError("ForwardPass: contact_points need a floor (Floor)")
        dt = float(np.min(np.diff(self.times)))
        self.time_step = float(time_step) if time_step else dt / 2.0
        self.tree = fwd = tree
        if contact_points and contact_reference is not None:
            contact_points, floor, loads = placed_contacts(
                tree, contact_points, floor, contact_reference, self.times, contact_forces,
                min_load=min_load, refit_floor=refit_floor, quantile=placement_quantile)
            self._loads = loads
        else:
            self._loads = None
        self.contact_points = {b: np.asarray(p, float).reshape(-1, 3)
                               for b, p in (contact_points or {}).items()}
        """The contact points of the spheres (``{body: (P, 3)}``, placed when given a
        ``contact_reference``)."""
        self.floor = floor
        """The floor of the simulation (refitted when given a ``contact_reference``)."""
        if any(g.name == "forward_floor" for g in tree.bodies[0].collision_geometries):
            raise MotionError(f"ForwardPass: tree '{tree.name}' already serves a forward pass "
                              "(it has the geometry 'forward_floor'); build a new tree")
        root = fwd.joints[0]
        self.floating = root.type == "free"
        joints = [j for j in (fwd.joints[1:] if self.floating else fwd.joints) if j.nv > 0]
        for j in joints:
            if j.nq != j.nv:
                raise MotionError(f"ForwardPass: joint '{j.name}' ({j.type}) has nq != nv; the "
                                  "tracking controller takes joints below the root with nq == nv")
        self.joint_names = [j.name for j in joints]
        self.q_indices = np.concatenate([np.arange(j.q_start, j.q_start + j.nq) for j in joints])
        self.actuated_velocity_indices = np.concatenate(
            [np.arange(j.v_start, j.v_start + j.nv) for j in joints])
        q_ref = fwd.neutral_configuration() if reference_q is None else np.asarray(reference_q, float)
        Mdiag = np.diag(np.asarray(fwd.mass_matrix(q_ref), float))[self.actuated_velocity_indices]
        self.kp = omega ** 2 * Mdiag + float(min_stiffness)
        self.kd = 2.0 * zeta * np.sqrt(self.kp * Mdiag)
        for name, f in (joint_gain_scale or {}).items():   # K_p times f, K_d times sqrt(f)
            j = fwd.get_joint(name)
            pos = np.searchsorted(self.actuated_velocity_indices,
                                  np.arange(j.v_start, j.v_start + j.nv))
            f = np.asarray(f, float).ravel()
            if f.size not in (1, j.nv):
                raise MotionError(f"ForwardPass: joint_gain_scale of joint '{name}' has "
                                  f"{f.size} factors, expected 1 or {j.nv} (its axes)")
            self.kp[pos] *= f
            self.kd[pos] *= np.sqrt(f)
        for j in joints:                        # implicit (K_d + h K_p) v_{n+1}
            sl = slice(j.v_start, j.v_start + j.nv)
            pos = np.searchsorted(self.actuated_velocity_indices, np.arange(sl.start, sl.stop))
            j.damping = np.asarray(j.damping, float) * 0 + self.kd[pos] + self.time_step * self.kp[pos]
        constraints = []
        if contact_points:
            n = np.asarray(floor.normal, float)
            n = n / np.linalg.norm(n)
            pose = np.eye(4)
            z = n
            x = np.cross([0.0, 1.0, 0.0], z)
            x = x / np.linalg.norm(x) if np.linalg.norm(x) > 1e-9 else np.array([1.0, 0, 0])
            pose[:3, :3] = np.c_[x, np.cross(z, x), z]
            pose[:3, 3] = np.asarray(floor.point, float) - sphere_radius * n
            fwd.add_collision_geometry("world", Halfspace(), pose, name="forward_floor")
            pairs = []
            for body, pts in contact_points.items():
                try:
                    fwd.get_body(body)
                except Exception:               # noqa: BLE001 - named below
                    raise MotionError(f"ForwardPass: contact point body '{body}' is not in "
                                      f"tree '{tree.name}'") from None
                for i, p in enumerate(pts):
                    T = np.eye(4)
                    T[:3, 3] = np.asarray(p, float)
                    r = sphere_radius + float((contact_allowance or {}).get(body, 0.0))
                    g = fwd.add_collision_geometry(body, Sphere(r), T,
                                                   name=f"{body}_forward_contact_{i}")
                    pairs.append(("forward_floor", g.name))
            constraints.append(PointContactConstraint(fwd, mu=mu, pairs=pairs, name="feet"))
        if joint_limits and any(np.any(np.isfinite(j.lower)) or np.any(np.isfinite(j.upper))
                                for j in joints):
            constraints.append(JointLimitConstraint(fwd, [j.name for j in joints
                                                          if np.any(np.isfinite(j.lower))
                                                          or np.any(np.isfinite(j.upper))],
                                                    name="limits"))
        act = GeneralizedForceActuator(fwd, self.joint_names, name="joints")
        self.plant = TimeSteppingRigidBodySystem(fwd, self.time_step, actuators=[act],
                                                 constraints=constraints, name="forward_pass",
                                                 lcp_tolerance=lcp_tolerance,
                                                 pgs_max_sweeps=pgs_max_sweeps)
        self.stance_smoothing = float(stance_smoothing)
        self.legs, self._release = [], []
        bal = None
        if balance_gain and self.floating and contact_points:
            pos = {int(v): i for i, v in enumerate(self.actuated_velocity_indices)}
            self.legs = leg_chains(fwd, contact_points, pos)
            names = set(stance_release or ())
            unknown = names - {j.name for j in joints}
            if unknown:
                raise MotionError(f"ForwardPass: stance_release names {sorted(unknown)}, not "
                                  f"joints below the root of tree '{tree.name}'")
            rel_v = {v for j in joints if j.name in names
                     for v in range(j.v_start, j.v_start + j.nv)}
            self._release = [[(pos[v], int(self.q_indices[pos[v]])) for v in vi if v in rel_v]
                             for _, _, vi in self.legs]
            bal = pelvis_balance_function(fwd, self.legs, len(self.q_indices),
                                          balance_gains.scaled(balance_gain), self.kp,
                                          self._release, self.kd)
        self.swing_clearance = (float(swing_clearance), float(swing_clearance_speed))
        self._lift_legs = (leg_chains(fwd, contact_points, {int(v): i for i, v in enumerate(
            self.actuated_velocity_indices)}) if swing_clearance and self.floating
            and contact_points else [])
        K = len(self.times)
        self.support_limit, lim, lim_ref = None, None, None
        self.whole_body, wb, wb_ref = None, None, None
        self.support_activity = bool(support_activity)
        if (support_margin is not None or whole_body is not None) and not (
                self.floating and self._loads is not None):
            raise MotionError("ForwardPass: support_margin and whole_body need a free root, "
                              "contact points, a contact_reference and its contact_forces")
        self._limit_forces = None if contact_forces is None else np.asarray(contact_forces, float)
        cmd = {int(v): i for i, v in enumerate(self.actuated_velocity_indices)}
        if support_margin is not None:
            self.support_limit = SupportLimit(fwd, self.contact_points, cmd, margin=support_margin,
                                              damping=self.kd + self.time_step * self.kp,
                                              joints=support_joints)
            lim = self.support_limit.function(len(self.q_indices))
            lim_ref = self.support_limit.reference(contact_forces, self.floor.normal)
        if whole_body is not None:
            self.whole_body = WholeBodyBalance(
                fwd, self.contact_points, leg_chains(fwd, self.contact_points, cmd),
                self.actuated_velocity_indices, self.floor.normal, whole_body)
            wb, wb_ref = self.whole_body.function(), np.zeros((K, self.whole_body.n_ref))
        fb = lqr and forward_pass_feedback(self, lqr, lqr_reference, contact_forces)
        self.controller = JointTrackingController(
            fwd.nq + fwd.nv, self.q_indices, self.kp, self.times,
            np.zeros((K, len(self.q_indices))), bal,
            np.zeros((K, ROWS * (1 + len(self.legs)) + len(self.legs)
                      + sum(len(r) for r in self._release))), limit=lim, limit_ref0=lim_ref,
            extra=wb, extra_ref0=wb_ref, feedback=fb)
        b = DiagramBuilder("forward_pass")
        b.add_system(self.plant)
        b.add_system(self.controller)
        b.connect(self.plant.get_output_port("state"), self.controller.get_input_port("state"))
        b.connect(self.controller.get_output_port("command"), self.plant.get_input_port("joints"))
        self.logger = LogVectorOutput(self.plant.get_output_port("state"), b, dt)
        self.diagram = b.build()
        self.compiled = bool(compiled) and self.plant.step_method == "compiled_pgs"
        """Whether runs are whole runs in C (the plant takes the compiled step; without any
        contact or limit it takes the interpreted one, and so do the runs)."""
        self._flags = None if compile_flags is None else tuple(compile_flags)
        self._sim = None

    def stance_weights(self, q) -> np.ndarray:
        """Default stance weights of the legs in the pelvis feedback (K, legs), shared to sum
        to 1 (:func:`~multibody.motion.balance.stance_shares`): each leg's share of the
        reference's normal contact forces when the forward pass was given them
        (``contact_forces``), else ``exp(-max(h - 5 mm, 0) / 1 cm)`` of its lowest contact
        point's height ``h`` above the floor in the reference ``q`` (K, nq)."""
        q = np.asarray(q, float)
        sides = [f.split("-")[0].split("_")[0] for f, _, _ in self.legs]
        side = (lambda b: b.split("-")[0].split("_")[0])
        if self._loads is not None and len(q) == len(self.times):
            return self._smoothed(stance_shares(np.array(
                [sum(self._loads[b].sum(axis=1) for b in self._loads if side(b) == s)
                 for s in sides]).T))
        H = np.zeros((len(q), len(self.legs)))
        for k, s in enumerate(sides):
            pts = [(b, np.asarray(ps, float)) for b, ps in self.contact_points.items()
                   if side(b) == s]
            for i, qi in enumerate(q):
                hs = []
                for b, P in pts:
                    T = np.asarray(self.tree.body_pose(b, qi), float)
                    hs.append(np.min(self.floor.height(P @ T[:3, :3].T + T[:3, 3])))
                H[i, k] = min(hs)
        return self._smoothed(stance_shares(np.exp(-np.clip(H - 0.005, 0.0, None) / 0.01)))

    def _smoothed(self, w) -> np.ndarray:
        """``w`` (K, legs) averaged over ``stance_smoothing`` seconds (a centred box, the
        ends repeated), so the stance weights and the ankle release ramp in and out."""
        n = int(round(self.stance_smoothing / float(np.mean(np.diff(self.times))))) // 2
        if n < 1 or len(w) < 2:
            return w
        pad = np.pad(w, ((n, n), (0, 0)), mode="edge")
        c = np.cumsum(np.vstack([np.zeros((1, w.shape[1])), pad]), axis=0)
        return (c[2 * n + 1:] - c[:-2 * n - 1]) / (2 * n + 1)

    def balance_reference(self, q, v, stance=None) -> np.ndarray:
        """The table (K, 18 + legs) of the pelvis feedback: the root body's reference rows
        (:func:`~multibody.motion.balance.balance_reference_rows`), then the legs' stance
        weights (``stance`` (K, legs), default :meth:`stance_weights`)."""
        rows = np.hstack([balance_reference_rows(self.tree, q, v)]
                         + [balance_reference_rows(self.tree, q, v, f) for f, _, _ in self.legs])
        w = self.stance_weights(q) if stance is None else np.asarray(stance, float)
        if w.shape != (len(rows), len(self.legs)):
            raise MotionError(f"ForwardPass: stance must be ({len(rows)}, {len(self.legs)}) "
                              f"(frames, legs {[f for f, _, _ in self.legs]}), got {w.shape}")
        qi = [qj for r in self._release for _, qj in r]
        ts = np.minimum(self.times + self.time_step, self.times[-1])
        qd = np.array([np.interp(ts, self.times, np.asarray(q, float)[:, i]) for i in qi]).T
        return np.c_[rows, w, qd.reshape(len(rows), len(qi))]

    # ------------------------------------------------------------------ references
    def lifted_reference(self, q, v) -> tuple:
        """``(q, v)`` (K, nq), (K, nv) with the swing feet lifted (``swing_clearance``;
        :func:`~multibody.motion.swing_lift.swing_lift` on the placed points and the
        reference's loads), the velocities corrected by the lift's finite differences; as
        given when the lift is off."""
        if not self._lift_legs:
            return q, v
        q, v = np.asarray(q, float), np.asarray(v, float).copy()
        c, vc = self.swing_clearance
        ql, _ = swing_lift(self.tree, q, self.times, self.contact_points, self.floor,
                           self._lift_legs, self._loads, clearance=c, speed=vc)
        qi, vi = self.q_indices, self.actuated_velocity_indices
        v[:, vi] += np.gradient(ql[:, qi] - q[:, qi], self.times, axis=0)
        return ql, v

    def feedforward(self, q, v, tau) -> np.ndarray:
        """The controller's table ``u`` (K, n): ``tau_j + K_p q_d(t + h) + K_d v_d(t + h)``
        from the references ``q`` (K, nq), ``v`` (K, nv), ``tau`` (K, nv) (tree order; the
        root's entries of ``tau`` are ignored), ``q_d`` and ``v_d`` interpolated linearly."""
        q, v, tau = (np.asarray(a, float) for a in (q, v, tau))
        K = len(self.times)
        if q.shape != (K, self.tree.nq) or v.shape != (K, self.tree.nv) or tau.shape != v.shape:
            raise MotionError(f"ForwardPass: references must be q ({K}, {self.tree.nq}), v and "
                              f"tau ({K}, {self.tree.nv}); got {q.shape}, {v.shape}, {tau.shape}")
        qi, vi = self.q_indices, self.actuated_velocity_indices
        ts = np.minimum(self.times + self.time_step, self.times[-1])
        qd = np.array([np.interp(ts, self.times, q[:, i]) for i in qi]).T
        vd = np.array([np.interp(ts, self.times, v[:, i]) for i in vi]).T
        return tau[:, vi] + self.kp * qd + self.kd * vd

    def _context(self, q, v, tau, stance=None):
        ctx = self.diagram.create_default_context()
        self.plant.set_positions(ctx, np.asarray(q, float)[0])
        self.plant.set_velocities(ctx, np.asarray(v, float)[0])
        cctx = self.controller.get_my_context_from_root(ctx)
        ql, vl = self.lifted_reference(q, v)            # (the root's rows as given)
        act = (support_activity(self.tree, self.contact_points, self.floor, ql,
                                self._limit_forces) if self.support_activity and
               (self.support_limit or self.whole_body) else None)
        if self.support_limit is not None:                # the feedforward always admitted
            cctx.set_parameter("limit_ref", self.support_limit.reference(
                self._limit_forces, self.floor.normal, tau, act).ravel())
        if self.whole_body is not None:                   # its torques replace tau
            cctx.set_parameter("extra_ref", self.whole_body.reference(
                self.times, ql, vl, self._limit_forces, act).ravel())
            tau = np.zeros_like(np.asarray(tau, float))
        cctx.set_parameter(0, self.feedforward(ql, vl, tau).ravel())
        if self.legs:
            cctx.set_parameter(1, self.balance_reference(ql, vl, stance).ravel())
        ctx.set_time(float(self.times[0]))
        return ctx

    def _result(self, log_t, log_x, q_ref, wall, cpu, fallback) -> ForwardPassResult:
        nq = self.tree.nq
        idx = [int(np.argmin(np.abs(log_t - t))) for t in self.times]
        Q, V = log_x[:nq, idx].T, log_x[nq:, idx].T
        d = np.array([self.tree.difference(a, b) for a, b in zip(q_ref, Q)])
        d = d[:, 6:] if self.floating else d
        span = float(self.times[-1] - self.times[0])
        return ForwardPassResult(self.times.copy(), Q, V,
                                 float(np.degrees(np.sqrt(np.mean(d ** 2)))), d, wall,
                                 span / max(cpu, 1e-12), span / max(wall, 1e-12),
                                 list(fallback))

    # ------------------------------------------------------------------ runs
    def run(self, q, v, tau, stance=None) -> ForwardPassResult:
        """Simulate from ``(q[0], v[0])`` at ``times[0]`` to ``times[-1]`` driven by the
        references ``q`` (K, nq), ``v`` (K, nv) and inverse-dynamics torques ``tau`` (K, nv)
        (tree order, the frames of ``times``); ``stance`` (K, legs) the legs' weights in the
        pose feedback (default :meth:`stance_weights`).

        Returns
        -------
        ForwardPassResult
        """
        ctx = self._context(q, v, tau, stance)
        sim = Simulator(self.diagram, ctx, compiled=self.compiled, flags=self._flags)
        sim.initialize()
        w0, c0 = time.perf_counter(), time.thread_time()
        sim.advance_to(float(self.times[-1]) + 1e-9)
        wall, cpu = time.perf_counter() - w0, time.thread_time() - c0
        log = self.logger.find_log(ctx)
        fb = getattr(sim, "fallback_steps", [])
        return self._result(log.sample_times(), log.data(), np.asarray(q, float), wall, cpu, fb)

    def run_batch(self, references: Sequence, skip_failed: bool = False) -> list:
        """Several forward passes in one compiled call (``simulate_batch``):
        ``references`` a sequence of ``(q, v, tau)`` or ``(q, v, tau, stance)`` as :meth:`run`
        takes. Returns a list of :class:`ForwardPassResult` (times: the batch's over the
        runs); with ``skip_failed`` a run that blows up (raises one of :data:`RUN_FAILURES`)
        is None in it instead of raising (the batch is then run one run at a time)."""
        if self.compiled:
            try:
                return self._batch(references)
            except RUN_FAILURES:
                if not skip_failed:
                    raise
        out = []
        for r in references:
            try:
                out.append(self.run(*r))
            except RUN_FAILURES:
                if not skip_failed:
                    raise
                out.append(None)
        return out

    def _batch(self, references: Sequence) -> list:
        ctxs = [self._context(*r) for r in references]
        w0, c0 = time.perf_counter(), time.thread_time()
        res = simulate_batch(self.diagram, ctxs, float(self.times[-1]) + 1e-9, flags=self._flags)
        wall = (time.perf_counter() - w0) / max(len(ctxs), 1)
        cpu = (time.thread_time() - c0) / max(len(ctxs), 1)
        out = []
        for i, (ctx, r) in enumerate(zip(res.contexts, references)):
            log = self.logger.find_log(ctx)
            fb = [(t, why) for w, t, why in res.fallback_steps if w == i]
            out.append(self._result(log.sample_times(), log.data(), np.asarray(r[0], float),
                                    wall, cpu, fb))
        return out

"""A 7-DOF arm driven by DC motors through gears follows a trajectory with inverse-dynamics
control, read by joint encoders and an IMU at the hand.

Blocks: ``RigidBodySystem`` of ``arm7.urdf`` with seven ``DcMotor`` actuators (gears 100..30;
their rotor inertias are reflected into the arm's mass matrix), an
``InverseDynamicsController`` built on the same tree (so it cancels the reflected inertia
too) whose joint torques become motor voltages through the motors' steady-state model
(``V = R tau / (N k_t) + k_e N v``), ``Encoder`` s (4096 counts per turn, 1 kHz) and an
``Imu`` at the hand. The diagram is simulated compiled (CVODES); the script also linearizes
the arm and its motors about a pose. Plots: tracking error, motor currents, encoder error,
IMU specific force.

Run: ``python examples/arm7_motor_tracking.py [--duration 2] [--out DIR]``
"""
from __future__ import annotations

import os

import numpy as np

from actuators import DcMotor
from multibody import models
from multibody.parsing import parse_urdf
from multibody.plants import RigidBodySystem
from sensors import Encoder, Imu
from solvers import ops
from systems import DiagramBuilder, LeafSystem
from systems.analysis import Simulator
from systems.controllers import InverseDynamicsController
from systems.primitives import LogVectorOutput
from _plotting import pyplot, save_figure
from _cli import script_parser

GEARS = np.array([100, 100, 80, 80, 50, 50, 30], float)
MOTOR = dict(resistance=0.6, inductance=2e-4, torque_constant=0.08, rotor_inertia=3e-5)
Q0 = np.array([0.0, 0.4, 0.0, -1.0, 0.0, 0.6, 0.0])
AMP = np.array([0.4, 0.3, 0.3, 0.4, 0.5, 0.4, 0.6])
FREQ = np.array([0.5, 0.4, 0.6, 0.5, 0.7, 0.6, 0.8])


class Reference(LeafSystem):
    """Desired ``[q; v]`` and acceleration of a sum of sines about ``Q0``."""

    def __init__(self):
        super().__init__("reference")
        self.declare_output_port("state", 14, lambda c: self._eval(c.time)[0], feedthrough=False,
                                 prerequisites=["time"])
        self.declare_output_port("acceleration", 7, lambda c: self._eval(c.time)[1],
                                 feedthrough=False, prerequisites=["time"])

    @staticmethod
    def _eval(t):
        w = 2 * np.pi * FREQ
        s, c = ops.sin(w * t), ops.cos(w * t)
        q = Q0 + AMP * (1 - c)
        v = AMP * w * s
        a = AMP * w * w * c
        return ops.vertcat(q, v), a


class TorqueToVoltage(LeafSystem):
    """Motor voltages for desired joint torques: ``V = R tau / (N k_t) + k_e N v``."""

    def __init__(self, motor: DcMotor):
        super().__init__("torque_to_voltage")
        self.m = motor
        tau = self.declare_input_port("torque", 7)
        x = self.declare_input_port("state", 14)
        self.declare_output_port("voltage", 7, lambda c: (
            motor.R * tau.eval(c) / (motor.N * motor.k_t * motor.eta)
            + motor.k_e * motor.N * x.eval(c)[7:]), feedthrough=True)


def build(duration_hint: float = 2.0):
    """The diagram and its parts: ``(diagram, plant, parts)``."""
    tree = parse_urdf(models.model_path("arm7"))
    names = [j.name for j in tree.joints if j.nv]
    motor = DcMotor(tree, names, gear_ratio=GEARS, name="motors", **MOTOR)
    plant = RigidBodySystem(tree, actuators=[motor], name="arm")
    b = DiagramBuilder("arm7_motor_tracking")
    b.add_system(plant)
    ref = b.add_system(Reference())
    idc = b.add_system(InverseDynamicsController(tree, kp=400.0, ki=0.0, kd=40.0,
                                                 has_reference_acceleration=True))
    t2v = b.add_system(TorqueToVoltage(motor))
    enc = b.add_system(Encoder(tree, names, 4096, 1e-3, name="encoders"))
    imu = b.add_system(Imu(tree, tree.bodies[-1].name, name="imu"))
    b.connect(plant.get_output_port("state"), idc.get_input_port("estimated_state"))
    b.connect(ref.get_output_port("state"), idc.get_input_port("desired_state"))
    b.connect(ref.get_output_port("acceleration"), idc.get_input_port("desired_acceleration"))
    b.connect(idc.get_output_port("generalized_force"), t2v.get_input_port("torque"))
    b.connect(plant.get_output_port("state"), t2v.get_input_port("state"))
    b.connect(t2v.get_output_port("voltage"), plant.get_input_port("motors"))
    b.connect(plant.get_output_port("state"), enc.get_input_port("state"))
    b.connect(plant.get_output_port("state"), imu.get_input_port("state"))
    b.connect(plant.get_output_port("generalized_acceleration"),
              imu.get_input_port("generalized_acceleration"))
    logs = {
        "state": LogVectorOutput(plant.get_output_port("state"), b, publish_period=1e-2),
        "ref": LogVectorOutput(ref.get_output_port("state"), b, publish_period=1e-2),
        "encoders": LogVectorOutput(enc.get_output_port("position"), b, publish_period=1e-2),
        "imu": LogVectorOutput(imu.get_output_port("acceleration"), b, publish_period=1e-2),
        "currents": LogVectorOutput(plant.get_output_port("actuator_state"), b,
                                    publish_period=1e-2),
    }
    d = b.build()
    return d, plant, dict(tree=tree, motor=motor, logs=logs)


def open_loop_linearization(q=Q0):
    """``(A, B)`` of the arm with its motors (voltages in) about rest at ``q``, holding the
    pose with the motors' stall currents; exact (CasADi) through the motor model."""
    from systems.analysis import linearize
    tree = parse_urdf(models.model_path("arm7"))
    names = [j.name for j in tree.joints if j.nv]
    motor = DcMotor(tree, names, gear_ratio=GEARS, name="motors", **MOTOR)
    plant = RigidBodySystem(tree, actuators=[motor], name="arm")
    ctx = plant.create_default_context()
    g = tree.gravity_forces(q)
    i0 = g / (motor.N * motor.k_t)                       # current that holds the pose
    plant.get_my_context_from_root(ctx).set_continuous_state(
        np.concatenate([q, np.zeros(7), i0]))
    plant.get_input_port("motors").fix_value(ctx, motor.R * i0)
    lin = linearize(plant, ctx)
    return lin.A, lin.B, plant, ctx


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--duration", type=float, default=2.0, help="simulated time (s)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "output"),
                        help="folder for the plot (PNG) and other outputs")
    args = parser.parse_args(argv)
    d, plant, parts = build()
    sim = Simulator(d, compiled=True, integrator="cvodes", accuracy=1e-8)
    plant.set_positions(sim.get_context(), Q0)
    sim.advance_to(args.duration)
    ctx = sim.get_context()
    logs = {k: v.find_log(ctx) for k, v in parts["logs"].items()}
    t = logs["state"].sample_times()
    err = logs["state"].data()[:7] - logs["ref"].data()[:7]
    currents = logs["currents"].data()
    enc_err = logs["encoders"].data() - logs["state"].data()[:7]
    A, B, *_ = open_loop_linearization()
    print(f"max tracking error {np.max(np.abs(err)):.2e} rad over {args.duration} s; peak motor "
          f"current {np.max(np.abs(currents)):.2f} A; encoder error <= "
          f"{np.max(np.abs(enc_err[:, 5:])):.2e} rad; open-loop linearization A {A.shape}, "
          f"B {B.shape}")
    out = {"max_error": float(np.max(np.abs(err))), "A": A, "B": B, "png": None,
           "currents": currents}
    plt = pyplot()
    if plt is not None:
        os.makedirs(args.out, exist_ok=True)
        fig, ax = plt.subplots(4, 1, figsize=(8, 10), sharex=True)
        ax[0].plot(t, err.T)
        ax[0].set_ylabel("tracking error (rad)")
        ax[1].plot(t, currents.T)
        ax[1].set_ylabel("motor current (A)")
        ax[2].plot(t, enc_err.T)
        ax[2].set_ylabel("encoder - true (rad)")
        ax[3].plot(t, logs["imu"].data().T)
        ax[3].set_ylabel("hand IMU (m/s^2)")
        ax[3].set_xlabel("time (s)")
        fig.suptitle("7-DOF arm on DC motors: inverse-dynamics tracking")
        out["png"] = save_figure(fig, os.path.join(args.out, "arm7_motor_tracking.png"))
    return out


if __name__ == "__main__":
    main()

"""A standing quadruped pushed sideways recovers under gravity compensation and joint impedance
(time stepping).

The scene of ``quadruped_standing.py``: the 12-joint quadruped on a ground halfspace, advanced
by a ``TimeSteppingRigidBodySystem`` (h = 1 ms), its joints held by an impedance (stiffness
``kp``, damping ``kd``) around the stance plus the contact-aware gravity compensation of the
stance. After it settles, a horizontal push (default 40 N for 0.1 s, heading 30 degrees) acts
on the trunk through the plant's ``applied_spatial_force`` input. The script prints the
largest trunk displacement and tilt and whether the robot comes back to standing, and plots
the trunk position, tilt and foot forces.

Run: ``python examples/quadruped_push_impedance.py [--force 40] [--duration 1.5] [--out DIR]``
"""
from __future__ import annotations

import os

import numpy as np

from systems.analysis import Simulator
from quadruped_standing import LEGS, build_quadruped, stance_height
from _plotting import pyplot, save_figure
from _cli import script_parser


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--force", type=float, default=40.0, help="push magnitude (N)")
    parser.add_argument("--heading", type=float, default=30.0, help="push heading (deg)")
    parser.add_argument("--duration", type=float, default=1.5, help="simulated time (s)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "output"),
                        help="folder for the plot (PNG) and other outputs")
    args = parser.parse_args(argv)
    a = np.radians(args.heading)
    force = args.force * np.array([np.cos(a), np.sin(a), 0.0])
    start, length = 0.4, 0.1
    sc = build_quadruped(push=(force, start, length))
    tree, context = sc["tree"], sc["context"]
    Simulator(sc["diagram"], context).advance_to(args.duration)
    slog, flog = sc["state_log"].find_log(context), sc["force_log"].find_log(context)
    t, x = slog.sample_times(), slog.data()
    base = tree.get_joint("floating_base")
    pos = x[base.q_start + 4:base.q_start + 7]
    quat = x[base.q_start:base.q_start + 4]
    tilt = np.arccos(np.clip(1 - 2 * (quat[1] ** 2 + quat[2] ** 2), -1, 1))
    before = t < start
    p0 = pos[:, before][:, -1]
    shift = np.linalg.norm(pos[:2] - p0[:2, None], axis=0)
    late = t > args.duration - 0.2
    recovered = bool(abs(pos[2, late].mean() - stance_height()) < 0.03 and tilt[late].max() < 0.1)
    direction = (pos[:2, -1] - p0[:2]) / max(np.linalg.norm(pos[:2, -1] - p0[:2]), 1e-12)
    print(f"push {args.force:.0f} N for {length} s at {args.heading:.0f} deg: largest trunk shift "
          f"{shift.max() * 100:.1f} cm, largest tilt {np.degrees(tilt.max()):.2f} deg, final "
          f"shift {shift[-1] * 100:.1f} cm along ({direction[0]:+.2f}, {direction[1]:+.2f}); "
          f"standing again: {'yes' if recovered else 'NO'}")
    k = int(np.argmax(shift))
    push_dir = (pos[:2, k] - p0[:2]) / max(shift[k], 1e-12)
    out = {"recovered": recovered, "max_shift": float(shift.max()), "push_direction": push_dir,
           "max_tilt": float(tilt.max()), "final_direction": direction, "png": None}
    plt = pyplot()
    if plt is not None:
        os.makedirs(args.out, exist_ok=True)
        fig, ax = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
        for k, lab in enumerate("xyz"):
            ax[0].plot(t, pos[k] - p0[k], label=lab)
        ax[0].axvspan(start, start + length, color="0.85")
        ax[0].set_ylabel("trunk displacement (m)")
        ax[0].legend()
        ax[1].plot(t, np.degrees(tilt))
        ax[1].set_ylabel("tilt (deg)")
        tf, f = flog.sample_times(), flog.data()
        for i, leg in enumerate(LEGS):
            ax[2].plot(tf, f[i], label=leg)
        ax[2].set_ylabel("foot normal force (N)")
        ax[2].legend(ncol=4, fontsize=8)
        ax[2].set_xlabel("time (s)")
        fig.suptitle("quadruped pushed on the trunk (grey: push)")
        out["png"] = save_figure(fig, os.path.join(args.out, "quadruped_push_impedance.png"))
    return out


if __name__ == "__main__":
    main()

"""The plots of ``human_walking.py``: leg angles, torques and ground forces with stance
shaded, absolute work per joint, stick figures, the noise study and the reduced marker set
(each saved as a PNG in the output folder; ``plt`` is matplotlib's pyplot)."""
from __future__ import annotations

import os

import numpy as np

from _plotting import save_figure


def _leg_joints(tree) -> list:
    js = [j for j in tree.joints[1:] if j.child.startswith("r")
          and any(w in j.child for w in ("leg", "foot", "toe", "thigh", "shank"))]
    return js or list(tree.joints[1:4])


def _shade(ax, t, active, groups):
    colors = {"r": "tab:red", "l": "tab:blue"}
    for side, idx in groups.items():
        on = active[:, idx].any(axis=1)
        edges = np.flatnonzero(np.diff(np.r_[0, on.astype(int), 0]))
        for a, b in zip(edges[::2], edges[1::2]):
            ax.axvspan(t[a], t[b - 1], color=colors.get(side, "gray"), alpha=0.08, lw=0)


def plot_motion(plt, out, model, traj, res, groups, window):
    tree = model.tree
    fig, axes = plt.subplots(3, 1, figsize=(9, 9), sharex=True)
    t = traj.t
    for j in _leg_joints(tree):
        for c in range(j.nv):
            lab = j.name if j.nv == 1 else f"{j.name}[{c}]"
            axes[0].plot(t, np.degrees(traj.q[:, j.q_start + c]), label=lab)
            axes[1].plot(t, res.tau[:, j.v_start + c], label=lab)
    axes[0].set_ylabel("joint angle (deg)")
    axes[1].set_ylabel("joint torque (N m)")
    axes[0].legend(fontsize=7, ncol=3)
    for side, idx in groups.items():
        axes[2].plot(t, res.contact_forces[:, idx, 2].sum(axis=1), label=f"{side} foot Fz")
    axes[2].plot(t, res.grf[:, 2], "k", label="total Fz")
    axes[2].axhline(res.weight, color="k", ls="--", lw=0.8, label="body weight")
    axes[2].plot(t, np.linalg.norm(res.residual[:, 3:], axis=1), color="gray",
                 label="pelvis residual |F|")
    axes[2].axvline(t[window[0]], color="g", lw=0.8)
    axes[2].axvline(t[min(window[1], len(t) - 1)], color="g", lw=0.8)
    axes[2].set_ylabel("force (N)")
    axes[2].set_xlabel("time (s)")
    axes[2].legend(fontsize=7, ncol=3)
    for ax in axes:
        _shade(ax, t, res.active, groups)
    axes[0].set_title("right leg: angles and torques; ground forces (stance shaded)")
    return save_figure(fig, os.path.join(out, "walking_motion.png"))


def plot_cost(plt, out, normal, locked):
    fig, ax = plt.subplots(figsize=(10, 4))
    x = np.arange(len(normal.joints))
    ax.bar(x - 0.2, normal.absolute, 0.4, label=f"normal ({normal.total_absolute:.0f} J)")
    lk = dict(zip(locked.joints, locked.absolute))
    ax.bar(x + 0.2, [lk.get(j, 0.0) for j in normal.joints], 0.4,
           label=f"arms held ({locked.total_absolute:.0f} J)")
    ax.set_xticks(x)
    ax.set_xticklabels(normal.joints, rotation=70, fontsize=7)
    ax.set_ylabel("absolute work over the strides (J)")
    ax.legend()
    fig.tight_layout()
    return save_figure(fig, os.path.join(out, "walking_cost.png"))


def plot_stick(plt, out, model, Q, floor, n=8):
    tree = model.tree
    frames = np.linspace(0, len(Q) - 1, n).astype(int)
    fig, ax = plt.subplots(figsize=(12, 3.5))
    P0 = np.array([tree.body_pose(tree.joints[0].child, q)[:3, 3] for q in Q])
    fwd = P0[-1] - P0[0]
    fwd = fwd / (np.linalg.norm(fwd[:2]) + 1e-12)
    ax_h = np.array([fwd[0], fwd[1], 0.0]) if np.linalg.norm(fwd[:2]) > 1e-6 else np.array([1.0, 0, 0])
    children = {j.parent for j in tree.joints}
    for k, f in enumerate(frames):
        q = Q[f]
        pose = {b.name: np.asarray(tree.body_pose(b.name, q)) for b in tree.bodies[1:]}
        # joint centres: the joint frame on the parent; a leaf segment ends at 2 c - joint
        centre = {j.child: (pose[j.parent] @ np.asarray(j.origin))[:3, 3]
                  for j in tree.joints[1:]}
        root = tree.joints[0].child
        centre[root] = pose[root][:3, 3]
        lines = [(centre[j.parent], centre[j.child]) for j in tree.joints[1:]]
        lines += [(centre[b], 2 * pose[b][:3, 3] - centre[b]) for b in centre
                  if b not in children and b != root]
        for a, b in lines:
            ax.plot([a @ ax_h, b @ ax_h], [a[2], b[2]], "-o", color=f"C{k % 10}", ms=2, lw=1.5)
    ax.axhline(floor.point[2], color="k", lw=0.8)
    ax.set_aspect("equal")
    ax.set_xlabel("along the walk (m)")
    ax.set_ylabel("height (m)")
    ax.set_title("stick figure through the joint centres, frames evenly spaced")
    return save_figure(fig, os.path.join(out, "walking_stick.png"))


def plot_noise(plt, out, rows):
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    mm = [r["noise_mm"] for r in rows]
    ax[0].loglog(mm, [r["joint_angle_error_deg"] for r in rows], "o-", label="per-frame fit")
    ax[0].loglog(mm, [r["joint_angle_error_filtered_deg"] for r in rows], "s-",
                 label="after the low-pass filter")
    ax[0].legend()
    ax[0].axhline(1.0, color="gray", ls="--", lw=0.8)
    ax[0].axvline(5.0, color="gray", ls=":", lw=0.8)
    ax[0].set_xlabel("marker noise (mm)")
    ax[0].set_ylabel("joint angle error (deg RMS)")
    ax[1].loglog(mm, [r["torque_error_nm"] for r in rows], "o-")
    ax[1].axhspan(5, 10, color="gray", alpha=0.2, label="HDM paper at 5 mm")
    ax[1].axvline(5.0, color="gray", ls=":", lw=0.8)
    ax[1].set_xlabel("marker noise (mm)")
    ax[1].set_ylabel("joint torque error (N m RMS)")
    ax[1].legend()
    fig.tight_layout()
    return save_figure(fig, os.path.join(out, "walking_noise.png"))


def plot_reduced(plt, out, tree, Qfull, Qred):
    d = np.degrees(np.array([tree.difference(a, b) for a, b in zip(Qfull, Qred)])[:, 6:])
    names = [f"{j.name}[{c}]" if j.nv > 1 else j.name for j in tree.joints[1:] for c in range(j.nv)]
    fig, ax = plt.subplots(figsize=(10, 4))
    ax.bar(np.arange(d.shape[1]), np.sqrt(np.mean(d ** 2, axis=0)))
    ax.set_xticks(np.arange(d.shape[1]))
    ax.set_xticklabels(names, rotation=80, fontsize=6)
    ax.set_ylabel("RMS angle difference (deg)")
    ax.set_title("reduced marker set (head, hands, feet) against the full set")
    fig.tight_layout()
    return save_figure(fig, os.path.join(out, "walking_reduced_markers.png"))

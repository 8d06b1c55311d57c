"""Build the human dynamic model from an HDM skeleton file, list it, export it to URDF and check
the export.

``multibody.models.human_model`` reads a skeleton description in the HDM / pagoda format
(segments as boxes and capsules with densities; ball, universal and hinge joints with anchors
and stops) and a marker-placement file, and builds a floating-base tree (ball joints as three
Euler angles, so ``nq = nv + 1``). The script prints the degrees of freedom, the total mass and
the segment table, writes ``model.urdf`` (multi-axis joints as revolute chains through
massless links) and checks that it loads back: through our URDF reader (forward kinematics at
random configurations) and, when Pinocchio is installed, through Pinocchio with a free-flyer
root (mass matrix and inverse dynamics at random states). With ``--c3d`` it also reads a
motion capture and reports which of the model's markers it records. It saves a picture of the
reference pose with the markers and the segment masses.

Run: ``python examples/human_model.py [--skeleton cooper-skeleton.txt --markers
cooper-markers.txt] [--c3d cooper-motion.c3d] [--height 1.7 --mass 70] [--out DIR]``
(default: the small 7-segment skeleton in ``tests/data``).
"""
from __future__ import annotations

import json
import os

import numpy as np

from multibody.models import human_model
from multibody.parsing import configuration_to_urdf_order, parse_urdf, velocity_to_urdf_order
from _plotting import pyplot, save_figure
from _cli import script_parser

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "tests", "data")


def _check_reload(model, path: str, rng) -> dict:
    """Reload the URDF with our reader: same sizes, masses and forward kinematics."""
    tree = model.tree
    tree2 = parse_urdf(path, floating_base=True)
    tree2.finalize()
    out = {"reload_nq_nv": [tree2.nq, tree2.nv],
           "reload_mass_error": abs(tree2.total_mass() - tree.total_mass())}
    names2 = [j.name for j in tree2.joints if j.type != "free"]
    fk = 0.0
    for _ in range(5):
        q = tree.random_configuration(rng)
        qp = configuration_to_urdf_order(tree, q)  # free flyer [x y z qx qy qz qw], joints
        q2 = np.zeros(tree2.nq)
        fb = tree2.get_joint("floating_base")
        q2[fb.q_start:fb.q_start + 7] = np.r_[qp[6], qp[3:6], qp[0:3]]
        order = model.urdf_joint_order()
        for k, n in enumerate(order):
            q2[tree2.get_joint(n).q_start] = qp[7 + k]
        for b in tree.bodies[1:]:
            fk = max(fk, float(np.abs(np.asarray(tree2.body_pose(b.name, q2))
                                      - np.asarray(tree.body_pose(b.name, q))).max()))
    out["reload_fk_error"] = fk
    out["reload_joint_count"] = len(names2)
    return out


def _check_pinocchio(model, path: str, rng) -> dict:
    try:
        import pinocchio as pin
    except ImportError:
        print("Pinocchio is not installed: no cross-check (pip install pin)")
        return {}
    tree = model.tree
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    data = pm.createData()
    P = velocity_to_urdf_order(tree, np.eye(tree.nv)).T  # v_pin = P v
    h_err = tau_err = 0.0
    for _ in range(5):
        q = tree.random_configuration(rng)
        v, a = rng.normal(size=tree.nv), rng.normal(size=tree.nv)
        qp = configuration_to_urdf_order(tree, q)
        Hp = pin.crba(pm, data, qp)
        Hp = np.triu(Hp) + np.triu(Hp, 1).T
        h_err = max(h_err, float(np.abs(P @ np.asarray(tree.mass_matrix(q)) @ P.T - Hp).max()))
        tau = np.ravel(tree.inverse_dynamics(q, v, a))
        taup = pin.rnea(pm, data, qp, P @ v, P @ a)
        tau_err = max(tau_err, float(np.abs(P @ tau - taup).max()))
    return {"pinocchio_nq_nv": [pm.nq, pm.nv], "pinocchio_mass_matrix_error": h_err,
            "pinocchio_rnea_error": tau_err}


def _draw(ax, model, q, view: int, markers=True):
    """Segments as outlines (box: rectangle; capsule: rounded) and markers, projected on the
    plane (view, z): view 0 = front (x-z), 1 = side (y-z)."""
    from matplotlib.patches import FancyBboxPatch
    tree, sk = model.tree, model.skeleton
    for name, seg in sk.segments.items():
        T = np.asarray(tree.body_pose(name, q))
        c = T[:3, :3] @ seg.center + T[:3, 3]
        w, h = 2 * seg.half_extents[view], 2 * seg.half_extents[2]
        r = seg.dims[1] if seg.shape == "capsule" else 0.0
        ax.add_patch(FancyBboxPatch((c[view] - w / 2, c[2] - h / 2), w, h,
                                    boxstyle=f"round,pad=0,rounding_size={r}",
                                    fc=(0.3, 0.6, 0.9, 0.35), ec="k", lw=0.8))
    if markers and model.markers:
        pts = []
        for _, body, p in model.markers:
            T = np.asarray(tree.body_pose(body, q))
            pts.append(T[:3, :3] @ p + T[:3, 3])
        pts = np.array(pts)
        ax.plot(pts[:, view], pts[:, 2], "r.", ms=5, label="markers")
    ax.set_aspect("equal")
    ax.autoscale_view()
    ax.set_xlabel("x [m] (right)" if view == 0 else "y [m] (forward)")
    ax.set_ylabel("z [m]")


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--skeleton", default=os.path.join(DATA, "hdm_small_skeleton.txt"),
                        help="HDM / pagoda skeleton file")
    parser.add_argument("--markers", default=os.path.join(DATA, "hdm_small_markers.txt"),
                        help="marker placement file")
    parser.add_argument("--c3d", default=None, help="a motion capture to check the markers of")
    parser.add_argument("--height", type=float, default=None, help="subject height (m)")
    parser.add_argument("--mass", type=float, default=None, help="subject mass (kg)")
    parser.add_argument("--out", default=os.path.join(HERE, "output"),
                        help="folder for the URDF and the plots")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    model = human_model(args.skeleton, args.markers, height=args.height, mass=args.mass)
    tree = model.tree
    joint_dof = tree.nv - 6
    print(f"{args.skeleton}: {len(model.segments)} segments, {joint_dof} joint DOF + 6 base = "
          f"{tree.nv} velocity DOF (nq = {tree.nq}: the base quaternion), "
          f"mass {model.mass:.3f} kg, height {model.height:.3f} m, {len(model.markers)} markers")
    print(model.segment_table())
    result = {"segments": len(model.segments), "joint_dof": joint_dof, "nv": tree.nv,
              "nq": tree.nq, "mass": model.mass, "height": model.height,
              "markers": len(model.markers),
              "segment_table": [{"name": s["name"], "mass": s["mass"],
                                 "inertia_diag": [float(x) for x in s["inertia_diag"]]}
                                for s in model.segments]}
    urdf = os.path.join(args.out, "model.urdf")
    model.write_urdf(urdf)
    print(f"wrote {urdf}")
    rng = np.random.default_rng(0)
    result.update(_check_reload(model, urdf, rng))
    result.update(_check_pinocchio(model, urdf, rng))
    print("URDF reloaded by our reader: nq, nv = {}, mass error {:.1e} kg, forward kinematics "
          "error {:.1e}".format(result["reload_nq_nv"], result["reload_mass_error"],
                                result["reload_fk_error"]))
    if "pinocchio_rnea_error" in result:
        print("URDF read by Pinocchio (free flyer): nq, nv = {}, mass matrix error {:.1e}, "
              "inverse dynamics error {:.1e}".format(result["pinocchio_nq_nv"],
                                                     result["pinocchio_mass_matrix_error"],
                                                     result["pinocchio_rnea_error"]))
    if args.c3d:
        from sensors import MotionCaptureError, read_c3d
        data = read_c3d(args.c3d)
        names = [m[0] for m in model.markers]
        have = set(data.names)
        missing = [n for n in names if n not in have]
        result["c3d"] = {"frames": int(data.times.size), "rate_hz": data.rate_hz,
                         "labels": len(data.labels), "missing_model_markers": missing,
                         "occluded_fraction": float(1 - data.visible().mean())}
        print(f"{args.c3d}: {data.times.size} frames at {data.rate_hz:g} Hz, "
              f"{len(data.labels)} markers, occluded {100 * result['c3d']['occluded_fraction']:.1f} %"
              f"; model markers missing from it: {missing or 'none'}")
        if not missing:
            try:
                data.select(names)
            except MotionCaptureError as exc:  # ambiguous names
                print(exc)
    with open(os.path.join(args.out, "human_model.json"), "w") as f:
        json.dump(result, f, indent=1)

    result["plot"] = None
    plt = pyplot()
    if plt is None:
        return result
    q = model.reference_configuration()
    fig, ax = plt.subplots(1, 3, figsize=(12, 5), gridspec_kw={"width_ratios": [1, 1, 1.4]})
    _draw(ax[0], model, q, 0)
    ax[0].set_title("front")
    _draw(ax[1], model, q, 1)
    ax[1].set_title("side")
    if model.markers:
        ax[0].legend(loc="upper right", fontsize=8)
    names = [s["name"] for s in model.segments]
    ax[2].barh(names, [s["mass"] for s in model.segments], color="tab:blue")
    ax[2].invert_yaxis()
    ax[2].set_xlabel("segment mass [kg]")
    ax[2].set_title(f"total {model.mass:.1f} kg, {joint_dof} joint DOF")
    fig.suptitle(f"Human model from {os.path.basename(args.skeleton)} (reference pose)")
    fig.tight_layout()
    result["plot"] = save_figure(fig, os.path.join(args.out, "human_model.png"))
    return result


if __name__ == "__main__":
    main()

"""Check the SDFormat reader against Drake's MultibodyPlant on real SDFormat files.

Loads every ``*.sdf`` shipped inside the pydrake wheel (``share/drake/...``), plus the files
or folders given on the command line (for example pybullet_data's ``kuka_iiwa``), with
:func:`multibody.parsing.parse_sdf` and with Drake's ``Parser`` into a continuous
``MultibodyPlant``, and compares at random states (seeded):

* the mass matrix ``M(q)`` (Drake: ``CalcMassMatrix``; reflected rotor inertia included in both),
* inverse dynamics ``tau = M vd + C v - tau_g`` (Drake: ``CalcMassMatrix``, ``CalcBiasTerm``,
  ``CalcGravityGeneralizedForces``; its ``CalcInverseDynamics`` leaves gravity out),
* forward dynamics with the joint damping as a passive force (Drake: ``CalcTimeDerivatives``
  with the generalized force input; ours: ``forward_dynamics(q, v, tau + joint_passive_forces)``),

as the largest relative error ``|ours - Drake|_max / max(1, |Drake|_max)`` over the states.

Coordinates are matched by joint name (Drake's floating joints by their body). Free bodies are
compared without welding them: Drake's floating joint has ``q = [quaternion of R_WB; p_WB]`` and
``v = [w_WB; v_WBo]`` in the world frame, ours (ARCHITECTURE.md) ``v = [w; v]`` in the body
frame B with ``q`` relative to the file's pose, so ``v_Drake = T v_ours`` with
``T = diag(R_WB, R_WB)``, ``M_Drake = T^-T M T^-1``, ``tau_Drake = T^-T tau`` and
``vd_Drake = T vd + [0; R_WB (w_B x v_B)]``. Ball joints (Drake's BallRpyJoint uses roll-pitch-yaw
coordinates) are not mapped: such files are reported and skipped.

Run: ``python benchmarks/check_sdf_models.py [extra .sdf files or folders]``. Skips with a note
when pydrake is not installed (it is a [bench] peer).
"""
from __future__ import annotations

import glob
import os
import sys
import warnings

import numpy as np

STATES = 5
SEED = 0


def _quat_from_R(R):
    """[w, x, y, z] of a rotation matrix (Shepperd's method)."""
    t = np.trace(R)
    if t > 0:
        s = 2.0 * np.sqrt(1.0 + t)
        return np.array([0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s,
                         (R[1, 0] - R[0, 1]) / s])
    i = int(np.argmax(np.diag(R)))
    j, k = (i + 1) % 3, (i + 2) % 3
    s = 2.0 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
    q = np.empty(4)
    q[0] = (R[k, j] - R[j, k]) / s
    q[1 + i] = 0.25 * s
    q[1 + j] = (R[j, i] + R[i, j]) / s
    q[1 + k] = (R[k, i] + R[i, k]) / s
    return q


def _files(extra):
    import pydrake
    root = os.path.join(os.path.dirname(pydrake.__file__), "share", "drake")
    out = sorted(glob.glob(os.path.join(root, "**", "*.sdf"), recursive=True))
    for e in extra:
        out += sorted(glob.glob(os.path.join(e, "**", "*.sdf"), recursive=True)) \
            if os.path.isdir(e) else [e]
    return out


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b))))) if np.size(b) else 0.0


def compare(path, rng):
    """(dof, err_M, err_ID, err_FD, note) for one file."""
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant
    from multibody.parsing import parse_sdf

    plant = MultibodyPlant(0.0)
    try:
        Parser(plant).AddModels(path)
        plant.Finalize()
    except Exception as exc:  # noqa: BLE001 - a file Drake refuses is reported, not compared
        return None, None, None, None, f"Drake refuses it: {str(exc).splitlines()[0][:70]}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = parse_sdf(path)
            tree.finalize()
        except Exception as exc:  # noqa: BLE001
            return plant.num_velocities(), None, None, None, f"ours refuses it: {str(exc)[:90]}"
    nv = tree.nv
    note = ""
    g = np.asarray(plant.gravity_field().gravity_vector())
    if not np.array_equal(tree.gravity, g):   # Drake ignores a <world>'s <gravity>
        note = f"gravity {tree.gravity.tolist()} of the <world> set to Drake's {g.tolist()}"
        tree.gravity = g
    if nv != plant.num_velocities() or tree.nq != plant.num_positions():
        return nv, None, None, None, (f"sizes differ: ours nq={tree.nq} nv={nv}, Drake "
                                      f"nq={plant.num_positions()} nv={plant.num_velocities()}")
    if nv == 0:
        return 0, 0.0, 0.0, 0.0, "no degrees of freedom"
    ctx = plant.CreateDefaultContext()
    # coordinate map: Drake joint -> our joint
    ours = {j.name: j for j in tree.joints if j.nv > 0}
    free_by_child = {j.child: j for j in tree.joints if j.type == "free"}
    pairs = []
    from pydrake.multibody.tree import JointIndex
    for idx in range(plant.num_joints()):
        dj = plant.get_joint(JointIndex(idx))
        if dj.num_velocities() == 0:
            continue
        if dj.type_name() == "quaternion_floating":
            oj = free_by_child.get(dj.child_body().name())
        else:
            oj = ours.get(dj.name())
        if oj is None or oj.nv != dj.num_velocities():
            return nv, None, None, None, f"no counterpart for Drake joint '{dj.name()}'"
        if dj.type_name() in ("ball_rpy",):
            return nv, None, None, None, "ball joint (Drake uses roll-pitch-yaw): not mapped"
        pairs.append((dj, oj))
    eM = eID = eFD = 0.0
    port = plant.get_applied_generalized_force_input_port()
    if plant.num_actuators():
        plant.get_actuation_input_port().FixValue(ctx, np.zeros(plant.num_actuated_dofs()))
    for _ in range(STATES):
        q = np.asarray(tree.random_configuration(rng), dtype=float)
        v = rng.normal(size=nv)
        vd = rng.normal(size=nv)
        tau = rng.normal(size=nv)
        qd, P, T = np.zeros(tree.nq), np.zeros((nv, nv)), np.eye(nv)
        bias = np.zeros(nv)
        for dj, oj in pairs:
            i, k = dj.velocity_start(), oj.v_start
            if oj.type == "free":
                X = np.asarray(tree.body_pose(oj.child, q))
                R = X[:3, :3]
                qd[dj.position_start():dj.position_start() + 7] = np.concatenate(
                    [_quat_from_R(R), X[:3, 3]])
                for b in range(6):
                    P[i + b, k + b] = 1.0
                T[k:k + 3, k:k + 3] = R
                T[k + 3:k + 6, k + 3:k + 6] = R
                w, vb = v[k:k + 3], v[k + 3:k + 6]
                bias[i + 3:i + 6] = R @ np.cross(w, vb)
            else:
                qd[dj.position_start():dj.position_start() + dj.num_positions()] = \
                    q[oj.q_start:oj.q_start + oj.nq]
                for b in range(oj.nv):
                    P[i + b, k + b] = 1.0
        A = P @ T                      # v_Drake = A v_ours
        plant.SetPositions(ctx, qd)
        plant.SetVelocities(ctx, A @ v)
        Ainv = np.linalg.inv(A)
        M_d = plant.CalcMassMatrix(ctx)
        eM = max(eM, _rel(Ainv.T @ np.asarray(tree.mass_matrix(q)) @ Ainv, M_d))
        vd_d = A @ vd + bias
        tau_d = M_d @ vd_d + plant.CalcBiasTerm(ctx) - plant.CalcGravityGeneralizedForces(ctx)
        eID = max(eID, _rel(Ainv.T @ np.asarray(tree.inverse_dynamics(q, v, vd)).ravel(), tau_d))
        port.FixValue(ctx, Ainv.T @ tau)
        deriv = plant.AllocateTimeDerivatives()
        plant.CalcTimeDerivatives(ctx, deriv)
        vdot_d = deriv.get_vector().CopyToVector()[plant.num_positions():]
        passive = np.asarray(tree.joint_passive_forces(q, v)).ravel()
        vd_o = np.asarray(tree.forward_dynamics(q, v, tau + passive)).ravel()
        eFD = max(eFD, _rel(A @ vd_o + bias, vdot_d))
    return nv, eM, eID, eFD, note


def main(argv):
    try:
        import pydrake  # noqa: F401
    except ImportError:
        print("check_sdf_models: pydrake is not installed (pip install '.[bench]'); skipped")
        return 0
    rng = np.random.default_rng(SEED)
    rows = []
    for path in _files(argv):
        rows.append((path,) + compare(path, rng))
    print(f"{'file':58s} {'DOF':>4s} {'M':>9s} {'ID':>9s} {'FD':>9s}  note")
    worst = 0.0
    for path, dof, eM, eID, eFD, note in rows:
        name = os.path.relpath(path, os.path.dirname(os.path.dirname(path)))
        fmt = lambda x: f"{x:9.1e}" if x is not None else f"{'-':>9s}"  # noqa: E731
        print(f"{name[-58:]:58s} {dof if dof is not None else '-':>4} {fmt(eM)} {fmt(eID)} "
              f"{fmt(eFD)}  {note}")
        worst = max([worst] + [e for e in (eM, eID, eFD) if e is not None])
    print(f"largest relative error: {worst:.1e} (target 1e-9)")
    return 0 if worst <= 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

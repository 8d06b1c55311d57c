"""Check the MJCF reader against MuJoCo on real MJCF files.

Loads the MuJoCo models that ship with gymnasium (``gymnasium/envs/mujoco/assets/*.xml``:
ant, half_cheetah, hopper, humanoid, humanoidstandup, inverted_pendulum,
inverted_double_pendulum, pusher, reacher, swimmer, walker2d, ...), the test models inside the
mujoco wheel (``mujoco/testdata``) and the files given on the command line, with
:func:`multibody.parsing.read_mjcf_model` and with ``mujoco.MjModel``, and compares at random
states (seeded): the mass matrix (``mj_fullM``, armature included), inverse dynamics
(``mj_inverse``: ``M qacc + bias - passive``; ours ``inverse_dynamics - joint_passive_forces``)
and forward dynamics (``mj_forward`` with ``qfrc_applied``), as the largest relative error
``|ours - MuJoCo|_max / max(1, |MuJoCo|_max)``. MuJoCo's constraints (contacts, limits, joint
friction), actuation and fluid drag (``option/density``, ``viscosity``) are switched off; the
coordinate conversion (free joints) is in ``tests/multibody/parsing/mjcf_reference.py``.

Run: ``python benchmarks/check_mjcf_models.py [extra .xml files]``. Skips with a note when
mujoco (a [bench] extra) is not installed. Exit status 1 when an error exceeds 1e-9.
"""
from __future__ import annotations

import glob
import os
import pathlib
import sys
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "multibody" / "parsing"))
TOL = 1e-9


def model_files(extra: list[str]) -> list[str]:
    """The gymnasium assets, the mujoco wheel's test models, and ``extra``."""
    files = []
    try:
        import gymnasium
        files += sorted(glob.glob(os.path.join(os.path.dirname(gymnasium.__file__), "envs",
                                               "mujoco", "assets", "*.xml")))
    except ImportError:
        print("note: gymnasium is not installed; its models are skipped")
    import mujoco
    files += sorted(glob.glob(os.path.join(os.path.dirname(mujoco.__file__), "testdata", "*.xml")))
    return files + list(extra)


def check(path: str, rng: np.random.Generator, states: int = 5) -> tuple[str, int, str]:
    """``(file, DOF, result)`` for one file."""
    import mujoco
    from multibody.parsing import MJCFError, read_mjcf_model
    import mjcf_reference as ref

    name = os.path.basename(path)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = read_mjcf_model(path)
    except MJCFError as exc:
        return name, -1, f"refused: {exc.reason}"
    try:
        m = ref.mujoco_model(mujoco, path)
    except Exception as exc:  # noqa: BLE001 - report MuJoCo's own refusal
        return name, model.tree.nv, f"MuJoCo cannot load it: {exc}"
    if m.nv != model.tree.nv:
        return name, model.tree.nv, f"DOF differ: MuJoCo {m.nv}"
    if m.nv == 0:
        return name, 0, "no degrees of freedom: nothing to compare"
    err = ref.compare(mujoco, model.tree, m, rng, states)
    notes = sorted({str(w.message).split(": ", 2)[-1][:60] for w in caught})
    flag = "ok" if np.all(err < TOL) else "FAIL"
    text = f"M {err[0]:.1e}  ID {err[1]:.1e}  FD {err[2]:.1e}  {flag}"
    return name, model.tree.nv, text + (f"  (warned: {'; '.join(notes)})" if notes else "")


def main(argv: list[str] | None = None) -> int:
    try:
        import mujoco  # noqa: F401
    except ImportError:
        print("skipped: mujoco is not installed (pip install .[bench])")
        return 0
    rng = np.random.default_rng(20240601)
    rows = [check(f, rng) for f in model_files(sys.argv[1:] if argv is None else argv)]
    width = max(len(r[0]) for r in rows)
    print(f"{'file':{width}s}  DOF  errors (relative, {5} random states)")
    for name, dof, text in rows:
        print(f"{name:{width}s}  {dof:3d}  {text}")
    return 1 if any("FAIL" in r[2] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

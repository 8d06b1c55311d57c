"""Time per step of the time-stepping rigid-body system on nine scenes, side by side with
Drake's discrete MultibodyPlant (SAP) and MuJoCo (where ``pydrake`` / ``mujoco`` import), at
h = 1e-3 s, with the step method each scene takes and the final heights.

Scenes (the same bodies, masses, shapes, friction, limits and initial states in every
engine; data and model texts in ``_ts_common.py``):

* ``box``: one 1 kg box (0.2 m cube) resting on the ground (mu = 0.5);
* ``pile``: 10 spheres (r = 0.05 m, 0.1 kg) in a tetrahedral pile (6 + 3 + 1) released at rest;
* ``quadruped``: ``multibody/models/quadruped.urdf`` standing under joint PD control
  (Kp = 150, Kd = 4, feedforward = static equilibrium torques), feet touching (mu = 1);
* ``stack``: three 1 kg boxes (0.2 m cubes) stacked on the ground (box-box contact);
* ``capsule``: one 1 kg capsule (r = 0.05 m, 0.3 m between the cap centres) lying on the
  ground;
* ``humanoid``: a 40-DOF humanoid (free pelvis, 34 hinges with ranges, 16 capsule limbs and a
  spherical head, mu = 0.8), released 0.2 m above the floor leaning 0.3 rad: it falls to the
  ground. Written once as MJCF text: MuJoCo reads it, dynablocks reads it with
  ``multibody.parsing.read_mjcf_model`` (contact and limits with the plant's ERP/CFM), Drake
  loads ``write_urdf`` of our tree plus the same collision capsules;
* ``human``: ``multibody.models.human_model`` (48 DOF with the shared HDM skeleton
  ``../shared/data/hdm/cooper-skeleton.txt``, else the 25-DOF walker of ``examples/data``; or
  ``--skeleton``) standing on its foot and toe boxes, joint stops as limits, joint PD holding
  the reference pose (gains from the floating body's effective inertia, 40 rad/s);
  Drake and MuJoCo load ``write_urdf`` of the tree;
* ``four_bar``: the parallelogram four-bar of ``multibody.models.parallelogram_four_bar``
  released at 0.3 rad, closed by a ball constraint (ours: ``BallConstraint``; Drake:
  ``AddBallConstraint``; MuJoCo: an equality ``connect``);
* ``four_bar_floor``: the same four-bar with its base raised, released at 1 rad: a knob
  (sphere, r = 0.05 m, massless, mu = 0.3) mid-coupler falls onto the floor, which it meets
  at 0.6 rad (closure and contact together).

Engines: ``dynablocks`` (``TimeSteppingRigidBodySystem``, default ``contact_solver="auto"``:
the compiled step where it applies, else the pivoting step), ``dynablocks_lcp``
(``contact_solver="lcp"``: always the pivoting (Lemke) step), ``drake`` (point contact,
compliant, SAP, Drake's ``Simulator``) and ``mujoco`` (soft contact, Newton solver, pyramidal
cone, friction ``(mu, 0.005, 1e-4)``).

Columns: *step method* (ours: ``plant.step_method`` and which method took the steps of one
untimed run, with fallbacks; why not the compiled step is printed under the table);
*ms/step*: the run of ``--steps`` steps divided by the steps -- dynablocks
``Simulator.advance_to`` (Python per step), Drake ``Simulator.AdvanceTo``, MuJoCo ``mj_step``
called from Python once per step; *vs Drake*, *vs mj_step*: ratios of ms/step; *whole
ms/step*: the whole run in compiled code, one call -- dynablocks
``Simulator(diagram, compiled=True)`` (n/a, with the reason, where it does not accept the
diagram), Drake ``AdvanceTo`` (already one C++ loop: the same number), MuJoCo
``mujoco.rollout.rollout``; *vs rollout*: whole ms/step over MuJoCo's; *height*: the
reported body's height (m) after the run (box, top box, mean sphere, trunk, capsule, pelvis,
coupler, coupler), so the physics is seen to agree.

Each time is the median over ``--repeats`` interleaved rounds (every round runs each engine
once, one after the other, so load from other processes hits them alike; one short warm-up
run each first); construction is excluded (Simulators and contexts reused, the state reset);
BLAS is limited to one thread (``OPENBLAS_NUM_THREADS=1`` before numpy loads, and
``threadpoolctl``). ``--cpu-time`` counts process CPU time instead of wall-clock time.
``--first-step`` also times building the dynablocks system and its first step in a fresh
process, with an empty (cold) and a filled (warm) compile cache. ``--quick``: 20 steps, one
round, no warm-up (a smoke run for the test suite).

Run: ``.venv/bin/python benchmarks/bench_time_stepping.py [--steps 500] [--repeats 5]
[--scenes box,stack,...] [--engines dynablocks,drake,...] [--skeleton FILE] [--quick]``
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")   # before numpy loads (when run as a script)

import argparse  # noqa: E402
import functools  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Optional  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
for _p in (os.path.join(os.path.dirname(HERE), "examples"), HERE):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import _ts_common as C  # noqa: E402
import _ts_scenes_dynablocks as DB  # noqa: E402
from _cli import script_parser  # noqa: E402
from _ts_common import BALL_R, BOX_SIZE, H, pile_positions  # noqa: E402,F401

SCENES = {
    "box": "one box on the ground",
    "pile": "10 spheres in a pile",
    "quadruped": "standing quadruped (PD)",
    "stack": "three stacked boxes",
    "capsule": "one capsule on the ground",
    "humanoid": "40-DOF humanoid falling (capsules, joint limits)",
    "human": "human model standing (PD, joint limits)",
    "four_bar": "four-bar closure",
    "four_bar_floor": "four-bar closure, knob falling onto the floor (closure + contact)",
}
ENGINES = {
    # name: (label, module with SCENES, requirement, contact_solver)
    "dynablocks": ("dynablocks (auto)", "_ts_scenes_dynablocks", None, "auto"),
    "dynablocks_lcp": ("dynablocks (lcp)", "_ts_scenes_dynablocks", None, "lcp"),
    "drake": ("Drake SAP", "_ts_scenes_drake", "pydrake.all", None),
    "mujoco": ("MuJoCo", "_ts_scenes_mujoco", "mujoco", None),
}


def make_run(engine: str, scene: str, skeleton: Optional[str] = None):
    """The run object of ``engine`` on ``scene`` (``run(steps)``, ``height()``, and
    ``run_whole(steps)`` where the engine has a whole-run mode)."""
    _, module, _, solver = ENGINES[engine]
    maker = __import__(module).SCENES[scene]
    kwargs = {"skeleton": skeleton} if scene == "human" else {}
    if solver is not None:
        kwargs["solver"] = solver
    return maker(**kwargs)


def _whole(run, steps: int) -> Optional[float]:
    if not hasattr(run, "run_whole"):            # Drake: AdvanceTo is the whole run
        return None
    return run.run_whole(steps)


def _guarded(errors: dict, name: str, fn, *args):
    """``fn(*args)``, or None with the error recorded under ``name`` (a run that raises is
    reported, the other engines go on)."""
    if name in errors:
        return None
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - reported in the table
        errors[name] = f"{type(exc).__name__}: {exc}"
        return None


def interleaved_medians(runs: dict, steps: int, repeats: int, warmup: bool = True,
                        errors: Optional[dict] = None) -> dict:
    """Median seconds per step of each run over ``repeats`` rounds, ``{engine: (per step,
    whole run or None)}``; every round runs each engine once, one after the other. An
    engine whose run raises is left out from then on, its error in ``errors``."""
    errors = {} if errors is None else errors
    if warmup:
        for k, r in runs.items():
            _guarded(errors, k, r.run, min(steps, 10))
            _guarded(errors, k, _whole, r, min(steps, 10))
    times: dict = {k: ([], []) for k in runs}
    for _ in range(repeats):
        for k, r in runs.items():
            t = _guarded(errors, k, r.run, steps)
            w = _guarded(errors, k, _whole, r, steps)
            if k not in errors:
                times[k][0].append(t / steps)
                if w is not None:
                    times[k][1].append(w / steps)
    return {k: (statistics.median(a), statistics.median(b) if b else None)
            for k, (a, b) in times.items() if k not in errors}


def _method(run, census) -> str:
    """The step-method cell: ours ``plant.step_method`` and how many steps of one run it took
    (the others: which method took them, e.g. ``lcp (fallback from compiled_pgs)``)."""
    if census is None:
        return run.method
    n = sum(census.values())
    own = census.get(run.method, 0)
    if own == n:
        return f"{run.method} ({n}/{n} steps)"
    others = ", ".join(f"{c} {m}" for m, c in census.most_common() if m != run.method)
    return f"{run.method} ({own}/{n} steps; {others})"


def _short(reason: Optional[str], width: int = 150) -> str:
    if not reason:
        return ""
    reason = " ".join(str(reason).split())
    return reason if len(reason) <= width else reason[:width - 3] + "..."


def first_step_times(scene: str) -> tuple[float, float]:
    """Seconds from building the dynablocks system of ``scene`` to the end of its first
    step, in fresh processes: with an empty compile cache (cold), then with it filled."""
    import subprocess
    import tempfile
    out = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, DYNABLOCKS_CACHE_DIR=cache)
        for _ in range(2):
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--first-step-child",
                                   scene], env=env, capture_output=True, text=True, check=True)
            out.append(float(proc.stdout.strip().splitlines()[-1]))
    return out[0], out[1]


def _first_step_child(scene: str) -> None:
    t0 = time.perf_counter()
    make_run("dynablocks", scene).run(1)
    print(time.perf_counter() - t0)


def _available(names: list, no_drake: bool) -> tuple[list, list]:
    engines, notes = [], []
    for name in names:
        if name not in ENGINES:
            raise SystemExit(f"bench_time_stepping: unknown engine {name!r}; expected one of "
                             f"{', '.join(ENGINES)}")
        if name == "drake" and no_drake:
            notes.append("Drake: skipped (--no-drake)")
            continue
        req = ENGINES[name][2]
        if req is not None:
            try:
                __import__(req)
            except ImportError as exc:
                notes.append(f"{ENGINES[name][0]}: n/a ({req} not importable: {exc})")
                continue
        engines.append(name)
    return engines, notes


HEAD = (f"{'engine':<18} {'step method':<44} {'ms/step':>8} {'vs Drake':>8} {'vs mj_step':>10} "
        f"{'whole ms/step':>13} {'vs rollout':>10} {'height (m)':>10}")


def _scene_table(key: str, engines: list, args) -> dict:
    """Build, time and print one scene; returns ``{engine: record}``."""
    runs, failed = {}, {}
    for name in engines:
        try:
            runs[name] = make_run(name, key, args.skeleton)
        except Exception as exc:  # noqa: BLE001 - report, keep the others
            failed[name] = f"{type(exc).__name__}: {exc}"
    med = interleaved_medians(runs, args.steps, args.repeats, warmup=not args.quick,
                              errors=failed)
    census = {n: _guarded(failed, n, r.census, args.steps) for n, r in runs.items()
              if hasattr(r, "census")}
    runs = {n: r for n, r in runs.items() if n not in failed}
    dof = f", nv = {runs['dynablocks'].tree.nv}" if "dynablocks" in runs else ""
    print(f"\n== {key}: {SCENES[key]}{dof}")
    print(HEAD)
    print("-" * len(HEAD))
    drake = med.get("drake", (None,))[0]
    mj, roll = med.get("mujoco", (None, None))
    rows, notes = {}, []
    for name, r in runs.items():
        step, whole = med[name]
        _guarded(failed, name, r.run, args.steps)   # final heights of one more run of each kind
        if whole is not None:
            _guarded(failed, name, _whole, r, args.steps)
        if name in failed:
            continue
        rec = dict(step=step, whole=whole, height=r.height(), method=r.method,
                   census=dict(census.get(name) or {}), reason=getattr(r, "reason", None))
        if whole is not None:
            rec["whole_height"] = r.whole_height()
        if name == "drake":
            rec["whole"] = whole = step       # AdvanceTo: the whole run in C++ already
        if name.startswith("dynablocks"):
            rec["whole_reason"] = r.compiled_reason
        rows[name] = rec
        height = rec["height"]
        if abs(rec.get("whole_height", height) - height) > 1e-9:
            notes.append(f"  {ENGINES[name][0]}: the whole run ends at height "
                         f"{rec['whole_height']:.9f}, the stepped run at {height:.9f}")
        ratio = (lambda t, ref: f"{t / ref:.2f}x" if t is not None and ref else "")
        wcell = f"{1e3 * whole:.4f}" if whole is not None else "n/a"
        print(f"{ENGINES[name][0]:<18} {_short(_method(r, census.get(name)), 44):<44} "
              f"{1e3 * step:>8.4f} {ratio(step, drake):>8} {ratio(step, mj):>10} {wcell:>13} "
              f"{ratio(whole, roll):>10} {height:>10.5f}")
        if rec["reason"] and name == "dynablocks":
            notes.append(f"  dynablocks: not the compiled step: {_short(rec['reason'], 200)}")
        if name == "dynablocks" and r.compiled_reason:
            notes.append("  dynablocks whole run: n/a, Simulator(diagram, compiled=True): "
                         + _short(r.compiled_reason, 240))
    for name, why in failed.items():
        print(f"{ENGINES[name][0]:<18} n/a: {_short(why, 400)}")
        rows[name] = dict(error=why)
    for n in notes:
        print(n)
    return rows


def main(argv: Optional[list] = None) -> dict:
    """Run the benchmark; returns ``{scene: {engine: record}}`` with records ``step`` and
    ``whole`` (seconds per step; ``whole`` None where n/a), ``height`` (m), ``method``,
    ``census`` (ours: steps per method in one run), ``reason`` (why not the compiled step),
    ``whole_reason`` (why no compiled whole run), or ``error`` (the scene could not be
    built)."""
    parser = script_parser(__doc__)
    parser.add_argument("--steps", type=int, default=200, help="time steps per timed run")
    parser.add_argument("--repeats", type=int, default=5,
                        help="interleaved timing rounds (the median is reported)")
    parser.add_argument("--scenes", default=",".join(SCENES),
                        help="comma-separated subset of " + ", ".join(SCENES))
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help="comma-separated subset of " + ", ".join(ENGINES))
    parser.add_argument("--skeleton", help="HDM skeleton file of the human scene (default: "
                        "the shared HDM skeleton, else examples/data/walker_skeleton.txt)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 20 steps, one round, no warm-up")
    parser.add_argument("--no-drake", action="store_true",
                        help="skip Drake even where pydrake is installed")
    parser.add_argument("--cpu-time", action="store_true",
                        help="process CPU time (all threads) instead of wall-clock time")
    parser.add_argument("--first-step", action="store_true",
                        help="also time building + first step, cold and warm compile cache")
    parser.add_argument("--first-step-child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.first_step_child:
        _first_step_child(args.first_step_child)
        return {}
    if args.quick:
        args.steps, args.repeats = min(args.steps, 20), 1
    C.CLOCK.now = time.process_time if args.cpu_time else time.perf_counter
    from threadpoolctl import threadpool_limits

    engines, notes = _available(args.engines.split(","), args.no_drake)
    scenes = args.scenes.split(",")
    for key in scenes:
        if key not in SCENES:
            raise SystemExit(f"bench_time_stepping: unknown scene {key!r}; expected one of "
                             f"{', '.join(SCENES)}")
    print(f"h = {H} s, {args.steps} steps per run, median of {args.repeats} interleaved "
          f"rounds, {'process CPU' if args.cpu_time else 'wall-clock'} time, BLAS 1 thread")
    if "drake" in engines:
        print(__import__("_ts_scenes_drake").INFO)
    if "human" in scenes:
        print(f"human skeleton: {C.human_skeleton(args.skeleton)}")
    for n in notes:
        print(n)
    results = {}
    with threadpool_limits(1):
        for key in scenes:
            results[key] = _scene_table(key, engines, args)
            if args.first_step and "dynablocks" in engines:
                cold, warm = first_step_times(key)
                results[key]["first_step"] = dict(cold=cold, warm=warm)
                print(f"  first step (build + 1 step, fresh process): cold {cold:.2f} s, "
                      f"warm {warm:.2f} s")
    print("\nms/step: dynablocks Simulator.advance_to, Drake AdvanceTo, MuJoCo mj_step from "
          "Python per step; whole: compiled Simulator / AdvanceTo / mujoco.rollout (module "
          "docstring)")
    return results


if __name__ == "__main__":
    main()

"""``python -m solvers.compiled precompile model.urdf``: ahead-of-time builds that a later
process loads from the cache without compiling (issue 13 C)."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from solvers import compiled

ROOT = pathlib.Path(__file__).resolve().parents[2]
ACROBOT = ROOT / "multibody" / "models" / "acrobot.urdf"
needs_cc = pytest.mark.skipif(compiled.find_compiler() is None, reason="no C compiler")

LATER_RUN = r'''
import json, pathlib, sys
import numpy as np
from solvers import _compiled_build as B
built = []
real = B._run_compiler
B._run_compiler = lambda argv: built.append(argv[argv.index("-o") + 1]) or real(argv)
from multibody import RigidBodyTree
tree = RigidBodyTree.from_urdf(sys.argv[1])
q, v, tau = np.array([0.3, -0.7]), np.array([0.2, 0.1]), np.array([1.0, -0.5])
tree.mass_matrix(q)
tree.forward_dynamics(q, v, tau)
tree.compile(["mass_matrix", "forward_dynamics"])
H = tree.mass_matrix(q)
vdot = tree.forward_dynamics(q, v, tau)
H_vm = np.array(tree.casadi_function("mass_matrix")(q))           # CasADi's own evaluation
vdot_vm = np.array(tree.casadi_function("forward_dynamics")(q, v, tau)).ravel()
print(json.dumps({"built": built, "dH": float(np.abs(H - H_vm).max()),
                  "dvdot": float(np.abs(vdot - vdot_vm).max()), "H": H.tolist()}))
'''


def run(args, env_extra=None, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    env.pop("DYNABLOCKS_CACHE_DIR", None)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=300, **kw)


@needs_cc
def test_precompiled_functions_are_loaded_without_compiling(tmp_path):
    cache = tmp_path / "cache"
    out = run(["-m", "solvers.compiled", "precompile", str(ACROBOT), "--cache-dir", str(cache),
               "--functions", "mass_matrix,forward_dynamics"])
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"cache directory: {cache}"
    assert lines[1].startswith("[1/2] acrobot.urdf: mass_matrix ... done")
    assert lines[2].startswith("[2/2] acrobot.urdf: forward_dynamics ... done")
    libs = sorted(p.name for p in cache.glob("dbk_acrobot_*.so"))
    assert len(libs) == 2 and all(p.with_name(p.name + ".sha256").exists()
                                  for p in cache.glob("dbk_acrobot_*.so"))
    # a later process with the cache from the environment: loads, compiles nothing
    script = tmp_path / "later.py"
    script.write_text(LATER_RUN)
    later = run([str(script), str(ACROBOT)], {"DYNABLOCKS_CACHE_DIR": str(cache)})
    assert later.returncode == 0, later.stderr
    res = json.loads(later.stdout.strip().splitlines()[-1])
    assert res["built"] == []
    # compiled C (loaded from the cache) against CasADi's virtual machine
    assert res["dH"] < 1e-12 and res["dvdot"] < 1e-12


def test_precompile_without_compiler_says_how_to_get_one(tmp_path):
    out = run(["-m", "solvers.compiled", "precompile", str(ACROBOT), "--cache-dir",
               str(tmp_path)], {"CC": str(tmp_path / "no-such-cc")})
    assert out.returncode == 2
    assert "no-such-cc" in out.stderr and "is not found" in out.stderr
    assert "install gcc" in out.stderr or "xcode-select" in out.stderr or "MinGW" in out.stderr
    assert not list(tmp_path.glob("dbk_*"))


def test_precompile_reports_bad_models_and_names(tmp_path):
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="r"><link name="a"><inertial><mass value="1_0"/>'
                   '</inertial></link></robot>')
    out = run(["-m", "solvers.compiled", "precompile", str(bad), "--cache-dir", str(tmp_path)],
              {"CC": sys.executable})          # any existing program: no compile is reached
    assert out.returncode == 1
    assert f"error: {bad}: {bad}, line 1: link 'a'" in out.stderr and "1_0" in out.stderr
    out = run(["-m", "solvers.compiled", "precompile", str(ACROBOT), "--functions", "jacobian",
               "--cache-dir", str(tmp_path)], {"CC": sys.executable})
    assert out.returncode == 1 and "unknown functions ['jacobian']" in out.stderr
    out = run(["-m", "solvers.compiled", "precompile", str(tmp_path / "model.sdf"),
               "--cache-dir", str(tmp_path)], {"CC": sys.executable})
    assert out.returncode == 1 and "no model reader for '.sdf' files" in out.stderr


def test_precompile_reports_a_failing_compiler(tmp_path):
    out = run(["-m", "solvers.compiled", "precompile", str(ACROBOT), "--functions", "mass_matrix",
               "--cache-dir", str(tmp_path)], {"CC": "false"})
    assert out.returncode == 1
    assert "[1/1] acrobot.urdf: mass_matrix ... FAILED" in out.stdout
    assert "compiling CasADi function 'acrobot_mass_matrix' failed" in out.stderr
    assert not list(tmp_path.glob("dbk_*")) and not list(tmp_path.glob(".dbk-tmp-*"))

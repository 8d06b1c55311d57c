"""Fault injection into the cached contact-kernel library (issue 20, reliability).

Before, ``solvers.contact_step`` loaded ``dbk_contact_step_<key>.so`` whenever the file
existed: truncated to 25 % every later run died with SIGBUS, flipped bits gave SIGSEGV,
SIGILL, a hang or silently different steps. It now goes through the verified loader of every
compiled library (``solvers._compiled_build.cached_library``). Every corruption is made on
disk between two runs, and each run is a SUBPROCESS (a damaged library loaded into the test
process would kill pytest): it must exit normally, rebuild exactly the damaged kernel, and
step the scene to the bitwise same state as the clean run. When the kernel cannot be
rebuilt, ``load_kernel`` raises ``ContactStepBuildError`` naming the cause.
"""
from __future__ import annotations

import pathlib
import shutil
import sys

import pytest

from solvers import _compiled_cache as store
from solvers import compiled

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import _cache_helpers as H  # noqa: E402

CHILD = H.COUNT_BUILDS + r'''
sys.path.insert(0, str(pathlib.Path.cwd() / "tests"))

import numpy as np
import solvers.contact_step as cs
mode = sys.argv[1]
if mode == "kernel":        # only load the kernel (a failing compiler: the error is named)
    try:
        k = cs.load_kernel()
    except cs.ContactStepBuildError as exc:
        print(json.dumps({"error": type(exc).__name__, "message": str(exc), "built": built}))
    else:
        print(json.dumps({"kernel": str(k.path), "built": built}))
    sys.exit(0)
from _time_stepping_models import free_spheres
from multibody.constraints import PointContactConstraint
from multibody.plants import TimeSteppingRigidBodySystem
tree = free_spheres(2, radius=0.05, mass=0.1)
q = tree.neutral_configuration()
q[0:7] = [1, 0, 0, 0, 0, 0, 0.05]
q[7:14] = [1, 0, 0, 0, 0.02, 0.0, 0.16]
v = np.zeros(12)
v[3] = 0.3
plant = TimeSteppingRigidBodySystem(tree, 1e-3, constraints=[PointContactConstraint(tree)])
ctx = plant.create_default_context()
plant.set_positions(ctx, q)
plant.set_velocities(ctx, v)
plant.advance(ctx, 150)
print(json.dumps({"method": plant.step_method, "kernel": str(cs.load_kernel().path),
                  "q": plant.get_positions(ctx).tolist(),
                  "v": plant.get_velocities(ctx).tolist(), "built": built}))
'''


def run_child(tmp_path, cache_dir, mode="run", env_extra=None) -> dict:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = H.child_env(DYNABLOCKS_CACHE_DIR=str(cache_dir), HOME=str(home), **(env_extra or {}))
    return H.run_script(tmp_path, CHILD, mode, env=env, timeout=600)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A cache holding the kernel and the plant's dynamics library, and the clean run."""
    if compiled.find_compiler() is None:
        pytest.skip("no C compiler: the contact kernel is not compiled")
    d = tmp_path_factory.mktemp("pristine")
    cache = d / "cache"
    out = run_child(d, cache)
    assert out["method"] == "compiled_pgs"
    kernel = pathlib.Path(out["kernel"])
    assert kernel.parent == cache and kernel.name in out["built"]
    assert store.verify_library(kernel, H.key_of(kernel))        # built with its manifest
    return cache, kernel.name, out


@pytest.fixture
def cache(pristine, tmp_path):
    """A private copy of the pristine cache: (directory, kernel library, clean run)."""
    src, kernel_name, clean = pristine
    dst = tmp_path / "cache"
    shutil.copytree(src, dst)
    return dst, dst / kernel_name, clean


def assert_rebuilt_and_same_step(tmp_path, cache_dir, kernel, clean):
    out = run_child(tmp_path, cache_dir)
    assert out["built"] == [kernel.name], out["built"]      # the kernel alone, again
    assert out["method"] == "compiled_pgs" and out["kernel"] == str(kernel)
    assert out["q"] == clean["q"] and out["v"] == clean["v"]   # bitwise the clean step
    assert store.verify_library(kernel, H.key_of(kernel))
    again = run_child(tmp_path, cache_dir)                  # and now it is healthy
    assert again["built"] == [] and again["q"] == clean["q"]


def test_intact_kernel_is_loaded_without_compiling(cache, tmp_path):
    d, kernel, clean = cache
    out = run_child(tmp_path, d)
    assert out["built"] == [] and out["method"] == "compiled_pgs"
    assert out["q"] == clean["q"] and out["v"] == clean["v"]
    assert clean["q"][13] < 0.16 - 0.005                   # the upper sphere fell: a real run


def test_kernel_truncated_to_a_quarter_is_rebuilt(cache, tmp_path):
    d, kernel, clean = cache
    data = H.truncate(kernel, 4)
    assert_rebuilt_and_same_step(tmp_path, d, kernel, clean)


def test_kernel_with_flipped_bits_is_rebuilt(cache, tmp_path):
    d, kernel, clean = cache
    H.flip_code_bits(kernel)
    assert_rebuilt_and_same_step(tmp_path, d, kernel, clean)


def test_foreign_library_with_a_forged_manifest_is_rebuilt(cache, tmp_path):
    """Another library of the cache (the plant's dynamics) under the kernel's name with a
    manifest naming the kernel's key and the foreign library's hash: the hash check passes,
    the key compiled into the library does not."""
    d, kernel, clean = cache
    key = H.key_of(kernel)
    foreign = next(p for p in d.glob("dbk_*.so") if not p.name.startswith(
        ("dbk_contact_step_", "dbk_fastcall_")))
    shutil.copyfile(foreign, kernel)
    H.forge_manifest(kernel, key)
    assert store.verify_library(kernel, key)
    assert_rebuilt_and_same_step(tmp_path, d, kernel, clean)


def test_kernel_without_manifest_from_the_earlier_layout_is_rebuilt(cache, tmp_path):
    """Earlier versions wrote the kernel without a manifest: it is never trusted."""
    d, kernel, clean = cache
    store.manifest_path(kernel).unlink()
    assert_rebuilt_and_same_step(tmp_path, d, kernel, clean)


def test_damaged_kernel_that_cannot_be_rebuilt_is_refused_with_a_named_error(cache, tmp_path):
    d, kernel, _ = cache
    data = H.truncate(kernel, 4)
    out = run_child(tmp_path, d, mode="kernel", env_extra={"FAIL_COMPILER": "1"})
    assert out["error"] == "ContactStepBuildError"
    assert "contact-step kernel" in out["message"] and "exited with status 1" in out["message"]
    assert "cc: internal error" in out["message"]
    assert out["built"] == [kernel.name]                    # tried to rebuild, never loaded
    assert len(kernel.read_bytes()) == len(data) // 4       # the damaged file is untouched

"""Fault injection into the compiled-function disk cache (issue 13 C).

Every corruption is made on disk between two runs and the second run happens in a fresh
SUBPROCESS (a damaged library loaded into the test process could kill pytest itself): it
must exit normally, give the right numbers and compile the damaged entry again. Covered: a
truncated library, a flipped bit, another function's library (and manifest) under the key,
a forged manifest, a half-written library without manifest, stale temporary directories of
dead processes, the temporary files of a process that exits while its background compile
runs, and several processes compiling the same fresh function into an empty cache at once.
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import casadi as ca
import numpy as np
import pytest

from solvers import _compiled_build as build
from solvers import _compiled_cache as store
from solvers import compiled
from solvers.compiled import CompilationWarning, CompiledFunction

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import _cache_helpers as H  # noqa: E402

needs_cc = pytest.mark.skipif(compiled.find_compiler() is None, reason="no C compiler")
X = [0.3, -1.2, 2.5]

CHILD = H.COUNT_BUILDS + r'''
import threading, time
import casadi as ca, numpy as np
from solvers import _compiled_cache as C
from solvers.compiled import CompiledFunction

def make(name):
    x = ca.SX.sym("x", 3)
    out = ca.sin(x) * x[0] + 1 if name == "f" else ca.cos(x) * x[1] - 2
    return ca.Function(name, [x], [out], ["x"], ["y"])

mode, cache = sys.argv[1], sys.argv[2]
if mode == "orphan":           # start a slow background compile, then exit at once
    slow = sys.argv[3]
    cf = CompiledFunction(make("f"), compiler=slow, cache_dir=cache)
    threading.Thread(target=cf.build, daemon=True).start()
    while not C.active_processes:
        time.sleep(0.01)
    print(json.dumps({"temps": [str(p) for p in C.active_temporaries]}))
    sys.exit(0)
if mode == "race":             # wait for the others, then compile the same function
    go = pathlib.Path(sys.argv[3])
    pathlib.Path(sys.argv[4]).touch()
    while not go.exists():
        time.sleep(0.005)
names = ["f"] if mode == "race" else ["f", "g"]
out = {}
for name in names:
    cf = CompiledFunction(make(name), cache_dir=cache, lazy=False)
    out[name] = cf(np.array([0.3, -1.2, 2.5])).tolist()
    out[name + "_backend"] = cf.backend
    out[name + "_path"] = str(cf.library_path)
out["built"] = [b for b in built if not b.startswith("dbk_fastcall")]
print(json.dumps(out))
'''


def expected(name: str) -> list[float]:
    x = np.array(X)
    return (np.sin(x) * x[0] + 1 if name == "f" else np.cos(x) * x[1] - 2).tolist()


def _env() -> dict:
    env = H.child_env()
    env.pop("DYNABLOCKS_CACHE_DIR", None)
    return env


def run_child(tmp_path, *args) -> dict:
    return H.run_script(tmp_path, CHILD, *args, env=_env())


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A cache holding the libraries of f and g, built once by a child process."""
    if compiled.find_compiler() is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("pristine")
    cache = d / "cache"
    out = run_child(d, "run", cache)
    assert out["f"] == pytest.approx(expected("f"), abs=1e-15)
    assert sorted(out["built"])[0].startswith("dbk_f_") and len(out["built"]) == 2
    return cache, pathlib.Path(out["f_path"]).name, pathlib.Path(out["g_path"]).name


@pytest.fixture
def cache(pristine, tmp_path):
    """A private copy of the pristine cache: (directory, f's library, g's library)."""
    src, f_name, g_name = pristine
    dst = tmp_path / "cache"
    shutil.copytree(src, dst)
    return dst, dst / f_name, dst / g_name


def assert_recompiled_and_right(tmp_path, cache_dir, lib: pathlib.Path):
    out = run_child(tmp_path, "run", cache_dir)
    assert out["f"] == pytest.approx(expected("f"), abs=1e-15)
    assert out["g"] == pytest.approx(expected("g"), abs=1e-15)
    assert out["f_backend"] == "c"
    assert out["built"] == [lib.name], out["built"]              # f compiled again, g reused
    assert store.verify_library(lib, H.key_of(lib))
    again = run_child(tmp_path, "run", cache_dir)                 # and now it is healthy
    assert again["built"] == [] and again["f"] == out["f"]


# ---------------------------------------------------------------- corruption
@needs_cc
def test_intact_cache_is_reused_without_compiling(cache, tmp_path):
    d, f_lib, _ = cache
    out = run_child(tmp_path, "run", d)
    assert out["built"] == [] and out["f"] == pytest.approx(expected("f"), abs=1e-15)


@needs_cc
def test_truncated_library_is_recompiled(cache, tmp_path):
    d, f_lib, _ = cache
    H.truncate(f_lib, 2)
    assert_recompiled_and_right(tmp_path, d, f_lib)


@needs_cc
def test_bit_flipped_library_is_recompiled(cache, tmp_path):
    d, f_lib, _ = cache
    H.flip_code_bits(f_lib)
    assert_recompiled_and_right(tmp_path, d, f_lib)


@needs_cc
def test_another_functions_library_under_the_key_is_recompiled(cache, tmp_path):
    d, f_lib, g_lib = cache
    shutil.copyfile(g_lib, f_lib)            # g's library where f's should be
    assert_recompiled_and_right(tmp_path, d, f_lib)


@needs_cc
def test_another_functions_library_and_manifest_are_recompiled(cache, tmp_path):
    d, f_lib, g_lib = cache
    shutil.copyfile(g_lib, f_lib)
    shutil.copyfile(store.manifest_path(g_lib), store.manifest_path(f_lib))
    assert_recompiled_and_right(tmp_path, d, f_lib)


@needs_cc
def test_forged_manifest_is_caught_by_the_key_inside_the_library(cache, tmp_path):
    """The manifest names f's key and the hash of g's library: the hash check passes, the
    key compiled into the library does not."""
    d, f_lib, g_lib = cache
    key = H.key_of(f_lib)
    shutil.copyfile(g_lib, f_lib)
    H.forge_manifest(f_lib, key)
    assert store.verify_library(f_lib, key)
    assert_recompiled_and_right(tmp_path, d, f_lib)


@needs_cc
def test_half_written_library_without_manifest_is_recompiled(cache, tmp_path):
    d, f_lib, _ = cache
    store.manifest_path(f_lib).unlink()
    f_lib.write_bytes(f_lib.read_bytes()[:1000])
    assert_recompiled_and_right(tmp_path, d, f_lib)


@needs_cc
def test_stale_temporaries_of_dead_processes_are_removed(cache, tmp_path):
    d, f_lib, _ = cache
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = d / f".dbk-tmp-{store.HOST}-{dead.pid}-abc123"
    stale.mkdir()
    (stale / f_lib.name).write_bytes(b"\x7fELF half written")
    live = d / f".dbk-tmp-{store.HOST}-{os.getpid()}-def456"     # this process: kept
    live.mkdir()
    f_lib.unlink()                                                # forces a compilation
    out = run_child(tmp_path, "run", d)
    assert out["built"] == [f_lib.name] and out["f"] == pytest.approx(expected("f"), abs=1e-15)
    assert not stale.exists() and live.exists()
    assert compiled.clear_cache(d) >= 3 and live.exists()        # live owner: still kept


def test_temporaries_of_the_earlier_layout_are_removed_when_old(tmp_path):
    """Before, a compilation wrote dbk_<name>_<key>.<random>.c/.so next to the library; a
    process killed meanwhile left them forever."""
    old_c = tmp_path / "dbk_f_0123456789abcdef0123456789abcdef.k3x_9abq.c"
    old_so = tmp_path / "dbk_f_0123456789abcdef0123456789abcdef.k3x_9abq.so"
    recent = tmp_path / "dbk_g_0123456789abcdef0123456789abcdef.zz1y2x3w.so"
    keep = [tmp_path / "dbk_f_0123456789abcdef0123456789abcdef.so",
            tmp_path / "dbk_f_0123456789abcdef0123456789abcdef.so.sha256",
            tmp_path / "dbk_f_0123456789abcdef0123456789abcdef.c",
            tmp_path / "dbk_fastcall_0123456789abcdef.cpython-311-x86_64-linux-gnu.so"]
    for p in [old_c, old_so, recent, *keep]:
        p.write_bytes(b"x")
    hour_ago = time.time() - 2 * store.STALE_AGE_S
    for p in [old_c, old_so, *keep]:
        os.utime(p, (hour_ago, hour_ago))
    assert store.sweep_stale_temporaries(tmp_path) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in [recent, *keep])


@needs_cc
def test_process_exiting_during_a_background_compile_leaves_no_temporaries(tmp_path):
    pidfile = tmp_path / "cc.pid"
    slow = tmp_path / "slowcc"
    slow.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 60\n")
    slow.chmod(0o755)
    d = tmp_path / "cache"
    out = run_child(tmp_path, "orphan", d, slow)
    assert out["temps"] and all(pathlib.Path(t).parent == d for t in out["temps"])
    assert [p.name for p in d.iterdir()] == []                    # removed at exit
    assert "Warning" not in out["stderr"]          # no "compilation failed" noise at exit
    pid = int(pidfile.read_text())
    for _ in range(500):                                          # the compiler was killed
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.02)
    else:
        pytest.fail(f"compiler process {pid} still runs after its parent exited")


@needs_cc
def test_concurrent_processes_compile_the_same_function_into_an_empty_cache(tmp_path):
    d = tmp_path / "cache"
    go = tmp_path / "go"
    script = H.write_child(tmp_path, CHILD)
    env = H.child_env()
    n = 4
    procs = [subprocess.Popen([sys.executable, str(script), "race", str(d), str(go),
                               str(tmp_path / f"ready{i}")], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=H.ROOT, env=env)
             for i in range(n)]
    try:
        for _ in range(6000):
            if all((tmp_path / f"ready{i}").exists() for i in range(n)):
                break
            time.sleep(0.01)
        go.touch()
        results = [p.communicate(timeout=300) for p in procs]
    finally:
        for p in procs:
            p.kill() if p.poll() is None else None
    for p, (stdout, stderr) in zip(procs, results):
        assert p.returncode == 0, stderr[-3000:]
        out = json.loads(stdout.strip().splitlines()[-1])
        assert out["f_backend"] == "c"
        assert out["f"] == pytest.approx(expected("f"), abs=1e-15)
    libs = sorted(d.glob("dbk_f_*.so"))
    assert len(libs) == 1 and store.verify_library(libs[0], H.key_of(libs[0]))
    assert not list(d.glob(".dbk-tmp-*"))                         # nothing left behind


# ---------------------------------------------------------------- in-process checks
def test_verify_library_refuses_missing_and_damaged_entries(tmp_path):
    lib = tmp_path / "dbk_x_0.so"
    key = "k" * 64
    assert not store.verify_library(lib, key)                     # nothing there
    lib.write_bytes(b"library bytes")
    assert not store.verify_library(lib, key)                     # no manifest
    store.manifest_path(lib).write_text(store.manifest_text(key, store.sha256_file(lib)))
    assert store.verify_library(lib, key)
    assert not store.verify_library(lib, "j" * 64)                # another key
    lib.write_bytes(b"library bytez")
    assert not store.verify_library(lib, key)                     # changed bytes
    store.manifest_path(lib).write_bytes(b"\xff\xfe garbage")
    assert not store.verify_library(lib, key)                     # damaged manifest


def test_no_compiler_warning_says_how_to_get_one(monkeypatch, tmp_path):
    monkeypatch.setattr(build, "find_compiler", lambda compiler=None: None)
    monkeypatch.setattr(compiled, "_WARNED", set())
    x = ca.SX.sym("x")
    with pytest.warns(CompilationWarning) as rec:
        CompiledFunction(ca.Function("nocc", [x], [2 * x]), cache_dir=tmp_path, lazy=False)
    msg = str(rec[0].message)
    assert "no C compiler found" in msg and "'nocc'" in msg
    assert build.compiler_install_hint() in msg
    assert "install" in msg and "CC" in msg and "precompile" in msg
    assert "backend='casadi'" in msg

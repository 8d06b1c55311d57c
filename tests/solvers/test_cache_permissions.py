"""Permissions of the compile cache (issue 20, reliability): a library planted where others can
write is never loaded.

A library runs as whoever loads it, and its manifest is only a hash: before, pointed at a
world-writable directory (``DYNABLOCKS_CACHE_DIR=/tmp/...``), the cache loaded any library
whose manifest matched, so another local user could run code as you. The planted library
here writes a marker file from a constructor (``__attribute__((constructor))``), which runs
at ``dlopen`` before any check: the marker's absence proves it was never loaded, and
``test_the_marker_shows_a_loaded_library`` shows that the marker does appear when a planted
library is loaded. Loads happen in subprocesses with ``HOME`` in the test's directory (the
per-user fallback cache is then ``HOME/.cache/dynablocks/compiled``).
"""
from __future__ import annotations

import os
import pathlib
import stat
import subprocess
import sys

import casadi as ca
import pytest

from solvers import _compiled_build as build
from solvers import _compiled_cache as store
from solvers import compiled
from solvers.compiled import CacheSecurityWarning, CompilationWarning, CompiledFunction

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import _cache_helpers as H  # noqa: E402
needs_cc = pytest.mark.skipif(compiled.find_compiler() is None, reason="no C compiler")
posix_only = pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX permissions")
X = [0.3, -1.2, 2.5]

CHILD = H.COUNT_BUILDS + r'''
import warnings
import casadi as ca, numpy as np
from solvers.compiled import CompiledFunction

if len(sys.argv) > 2:
    os.umask(int(sys.argv[2], 8))
x = ca.SX.sym("x", 3)
f = ca.Function("f", [x], [ca.sin(x) * x[0] + 1], ["x"], ["y"])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    cf = CompiledFunction(f, lazy=False)
print(json.dumps({"y": cf(np.array([0.3, -1.2, 2.5])).tolist(), "backend": cf.backend,
                  "path": str(cf.library_path),
                  "built": [b for b in built if not b.startswith("dbk_fastcall")],
                  "warnings": [(w.category.__name__, str(w.message)) for w in caught]}))
'''

PLANTED_C = r'''
#include <stdio.h>
__attribute__((constructor)) static void planted(void) {
    FILE *fh = fopen("%s", "w");
    if (fh) { fputs("the planted library ran\n", fh); fclose(fh); }
}
const char *dynablocks_rt_key(void) { return "planted"; }
int dynablocks_rt_version(void) { return 2; }
'''


def expected() -> list[float]:
    import numpy as np
    x = np.array(X)
    return (np.sin(x) * x[0] + 1).tolist()


def run_child(tmp_path, cache_dir, umask: str | None = None) -> dict:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = H.child_env(HOME=str(home), DYNABLOCKS_CACHE_DIR=str(cache_dir))
    out = H.run_script(tmp_path, CHILD, "run", *([umask] if umask else []), env=env)
    assert out["y"] == pytest.approx(expected(), abs=1e-15)
    return out


@pytest.fixture(scope="module")
def built_cache(tmp_path_factory):
    """A cache holding f's library (built by a child process): (directory, library)."""
    if compiled.find_compiler() is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("built")
    out = run_child(d, d / "cache")
    assert out["backend"] == "c" and out["built"]
    return d / "cache", pathlib.Path(out["path"]).name


@pytest.fixture
def planted(built_cache, tmp_path):
    """A copy of the cache where f's library is replaced by a planted one whose manifest is
    forged (f's key, the planted library's hash): (directory, library, marker file)."""
    src, name = built_cache
    d = tmp_path / "shared"
    d.mkdir(mode=0o700)
    for p in src.iterdir():
        if p.is_file():
            (d / p.name).write_bytes(p.read_bytes())
    lib = d / name
    key = H.key_of(lib)
    marker = tmp_path / "PLANTED_LIBRARY_RAN"
    c_file = tmp_path / "planted.c"
    c_file.write_text(PLANTED_C % marker)
    cc = compiled.find_compiler()
    subprocess.run([*cc, "-shared", "-fPIC", "-o", str(lib), str(c_file)], check=True)
    lib.chmod(0o755)
    H.forge_manifest(lib, key)
    assert store.verify_library(lib, key)            # the hash check alone would pass
    return d, lib, marker


def _fallback(tmp_path) -> pathlib.Path:
    return tmp_path / "home" / ".cache" / "dynablocks" / "compiled"


def run_set_aside(tmp_path, cache_dir, marker, warning: str) -> dict:
    """Run f with ``cache_dir`` unsafe: the planted library never runs (no marker), f goes to
    the private fallback cache, and a warning says ``warning``."""
    out = run_child(tmp_path, cache_dir)
    assert not marker.exists()                       # the planted library never ran
    assert pathlib.Path(out["path"]).parent == _fallback(tmp_path)
    assert any(warning in m for _, m in out["warnings"]), out["warnings"]
    return out


# ---------------------------------------------------------------- planted libraries
@needs_cc
@posix_only
def test_the_marker_shows_a_loaded_library(planted, tmp_path):
    """Control: in a private directory (only you could have planted it) the forged manifest
    passes, the library is loaded (the marker appears), the key compiled into it does not
    match, and f is compiled again. So an absent marker below means: never loaded."""
    d, lib, marker = planted
    out = run_child(tmp_path, d)
    assert marker.exists()
    assert out["built"] == [lib.name] and out["path"] == str(lib)


@needs_cc
@posix_only
def test_world_writable_cache_directory_is_set_aside_with_a_warning(planted, tmp_path):
    d, lib, marker = planted
    d.chmod(0o777)
    out = run_set_aside(tmp_path, d, marker, f"{d} is writable by all users (mode 0777)")
    assert out["backend"] == "c"
    assert out["built"] == [lib.name]                # compiled into the private cache
    warned = [m for c, m in out["warnings"] if c == "CacheSecurityWarning"]
    assert len(warned) == 1
    assert f"{d} is writable by all users (mode 0777)" in warned[0]
    assert str(_fallback(tmp_path)) in warned[0]
    assert stat.S_IMODE(_fallback(tmp_path).stat().st_mode) == 0o700


@needs_cc
@posix_only
def test_group_writable_cache_directory_is_set_aside(planted, tmp_path):
    d, lib, marker = planted
    d.chmod(0o770)
    out = run_set_aside(tmp_path, d, marker, "is writable by its group (mode 0770)")
    assert out["built"], "the function is compiled again in the private fallback cache"


@needs_cc
@posix_only
def test_private_directory_under_a_world_writable_parent_is_set_aside(planted, tmp_path):
    """Whoever can write the parent can rename the private directory away and put theirs in
    its place: the parents are checked too (up to a sticky directory such as /tmp)."""
    d, lib, marker = planted
    parent = tmp_path / "open"
    parent.mkdir()
    parent.chmod(0o777)
    inner = parent / "cache"
    d.rename(inner)
    run_set_aside(tmp_path, inner, marker, f"{parent} is writable by all users")


@needs_cc
@posix_only
def test_group_writable_library_is_not_loaded_but_compiled_again(planted, tmp_path):
    d, lib, marker = planted
    lib.chmod(0o775)
    out = run_child(tmp_path, d)
    assert not marker.exists()
    assert out["path"] == str(lib) and out["built"] == [lib.name]   # same (private) cache
    assert not [m for c, m in out["warnings"] if c == "CacheSecurityWarning"]
    assert stat.S_IMODE(lib.stat().st_mode) & 0o022 == 0             # the rebuilt one
    again = run_child(tmp_path, d)
    assert again["built"] == []


@needs_cc
@posix_only
def test_group_writable_manifest_makes_the_library_compiled_again(planted, tmp_path):
    d, lib, marker = planted
    store.manifest_path(lib).chmod(0o664)
    out = run_child(tmp_path, d)
    assert not marker.exists() and out["built"] == [lib.name]


@needs_cc
@posix_only
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="needs root to give the directory to another user")
def test_cache_directory_owned_by_another_user_is_not_used(planted, tmp_path):
    d, lib, marker = planted
    d.chmod(0o755)
    for p in [d, *d.iterdir()]:
        os.chown(p, 65534, 65534)
    out = run_set_aside(tmp_path, d, marker, f"{d} is owned by uid 65534")
    assert out["built"], "the function is compiled again in the private fallback cache"


# ---------------------------------------------------------------- creation
@needs_cc
@posix_only
def test_fresh_cache_directory_is_created_private_and_its_libraries_not_group_writable(
        tmp_path):
    """Missing directories are created 0700 whatever the umask; with umask 002 (user
    private groups) the compiler writes a group-writable library, which is made
    non-writable before it is renamed into place, so the next run loads it as it is."""
    d = tmp_path / "a" / "b" / "cache"
    out = run_child(tmp_path, d, umask="002")
    assert out["built"] and not out["warnings"]
    for p in (tmp_path / "a", tmp_path / "a" / "b", d):
        assert stat.S_IMODE(p.stat().st_mode) == 0o700, p
    for p in d.iterdir():
        assert stat.S_IMODE(p.stat().st_mode) & 0o022 == 0, p
    again = run_child(tmp_path, d, umask="002")
    assert again["built"] == []


# ---------------------------------------------------------------- in-process checks
@posix_only
def test_directory_checks_stop_at_a_sticky_parent(tmp_path):
    sticky = tmp_path / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)                              # like /tmp
    mine = sticky / "mine"
    mine.mkdir(mode=0o700)
    assert store.unsafe_directory_reason(mine) is None
    assert store.unsafe_directory_reason(sticky) == \
        f"{sticky} is writable by all users (mode 1777)"
    link = tmp_path / "link"
    link.symlink_to(mine)                             # resolved, as ssh does
    assert store.unsafe_directory_reason(link) is None
    assert store.unsafe_directory_reason(tmp_path / "missing").endswith(
        "No such file or directory")


@posix_only
def test_file_checks_refuse_symlinks_and_shared_write(tmp_path):
    f = tmp_path / "lib.so"
    f.write_bytes(b"x")
    f.chmod(0o644)
    assert store.unsafe_file_reason(f) is None
    f.chmod(0o646)
    assert store.unsafe_file_reason(f) == f"{f} is writable by all users (mode 0646)"
    f.chmod(0o644)
    link = tmp_path / "link.so"
    link.symlink_to(f)
    assert store.unsafe_file_reason(link) == f"{link} is not a regular file"


@posix_only
def test_no_private_directory_at_all_is_a_named_error_and_casadi_evaluates(
        monkeypatch, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    bad.chmod(0o777)
    monkeypatch.setattr(store, "fallback_cache_dirs", lambda: [bad])
    with pytest.raises(build.UnsafeCacheError, match=r"writable by all users \(mode 0777\)"):
        build.private_cache_dir(bad)
    monkeypatch.setattr(compiled, "_WARNED", set())
    monkeypatch.setattr(compiled, "_FAILED", {})
    x = ca.SX.sym("x")
    fun = ca.Function("unsafe_cache_fn", [x], [3 * x])
    if compiled.find_compiler() is not None:
        with pytest.warns(CompilationWarning, match="no private compile cache directory"):
            cf = CompiledFunction(fun, cache_dir=bad, lazy=False)
        assert cf.backend == "casadi" and cf(2.0).tolist() == [6.0]
        with pytest.raises(RuntimeError, match="no private compile cache directory"):
            CompiledFunction(ca.Function("unsafe_cache_fn2", [x], [x]), cache_dir=bad,
                             backend="c", lazy=False)
    assert not list(bad.iterdir())                    # nothing was written there


@posix_only
def test_contact_kernel_without_a_private_directory_raises_its_named_error(
        monkeypatch, tmp_path):
    import solvers.contact_step as cs
    if compiled.find_compiler() is None:
        pytest.skip("no C compiler")
    bad = tmp_path / "bad"
    bad.mkdir()
    bad.chmod(0o777)
    monkeypatch.setattr(store, "fallback_cache_dirs", lambda: [])
    monkeypatch.setattr(cs, "_LOADED", {})
    with pytest.raises(cs.ContactStepBuildError, match=r"no private compile cache directory: "
                                                       r".*bad is writable by all users"):
        cs.load_kernel(cache_dir=bad)


def test_cache_security_warning_is_public():
    assert "CacheSecurityWarning" in compiled.__all__
    assert issubclass(CacheSecurityWarning, UserWarning)
